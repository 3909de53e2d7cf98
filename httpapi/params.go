package httpapi

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/exgate/exgate"
)

// param is one request parameter as the client sent it: the decoded name
// and value, and whether a JSON body gave the value as a string (as opposed
// to a number, true, false or null).
type param struct {
	name     string
	value    string
	isString bool
}

// signedRequest is what canonicalization extracts from a request: the
// parameters in the order sent, the signature, and the parameter strings a
// valid signature may cover.
type signedRequest struct {
	params    []param
	signature string
	// raw is the parameter string exactly as sent; decoded is the
	// percent-decoded form (queries only; empty when identical to raw).
	raw     string
	decoded string
	// signatures counts signature parameters; more than one is refused.
	signatures int
}

// errNotScalarObject is returned for a body that is not one JSON object
// with scalar members.
var errNotScalarObject = errors.New("body must be one JSON object whose members are strings, numbers, true, false or null")

// parseQuery canonicalizes a raw query string (docs/contract.md 2.1): the pairs in
// the order sent with the signature pair removed, both as sent and
// percent-decoded. It is on every GET's path, so it slices the query rather
// than rebuilding it, and decodes only when there is something to decode.
func parseQuery(rawQuery string) (signedRequest, error) {
	var sr signedRequest
	if rawQuery == "" {
		return sr, nil
	}
	sr.params = make([]param, 0, strings.Count(rawQuery, "&")+1)
	sigStart, sigEnd := -1, -1
	for pos := 0; pos <= len(rawQuery); {
		end := strings.IndexByte(rawQuery[pos:], '&')
		if end < 0 {
			end = len(rawQuery)
		} else {
			end += pos
		}
		seg := rawQuery[pos:end]
		rawName, rawValue, _ := strings.Cut(seg, "=")
		name, err := url.QueryUnescape(rawName)
		if err != nil {
			return sr, fmt.Errorf("query parameter name %q is not valid percent-encoding", rawName)
		}
		value, err := url.QueryUnescape(rawValue)
		if err != nil {
			return sr, fmt.Errorf("value of query parameter %q is not valid percent-encoding", name)
		}
		if name == "signature" {
			sr.signatures++
			sr.signature = value
			sigStart, sigEnd = pos, end
		} else if seg != "" {
			if err := checkQueryParam(name, value); err != nil {
				return sr, err
			}
			sr.params = append(sr.params, param{name: name, value: value, isString: true})
		}
		pos = end + 1
	}
	switch {
	case sr.signatures == 0:
		sr.raw = rawQuery
	case sr.signatures > 1:
		// Refused later; the canonical form does not matter.
	case sigStart == 0:
		sr.raw = rawQuery[min(sigEnd+1, len(rawQuery)):]
	case sigEnd == len(rawQuery):
		sr.raw = rawQuery[:sigStart-1]
	default:
		sr.raw = rawQuery[:sigStart] + rawQuery[sigEnd+1:]
	}
	if strings.ContainsAny(sr.raw, "%+") {
		var b strings.Builder
		b.Grow(len(sr.raw))
		for i, seg := range strings.Split(sr.raw, "&") {
			if i > 0 {
				b.WriteByte('&')
			}
			rawName, rawValue, hasEq := strings.Cut(seg, "=")
			name, _ := url.QueryUnescape(rawName) // checked above
			value, _ := url.QueryUnescape(rawValue)
			b.WriteString(name)
			if hasEq {
				b.WriteByte('=')
			}
			b.WriteString(value)
		}
		if d := b.String(); d != sr.raw {
			sr.decoded = d
		}
	}
	return sr, nil
}

// parseBody canonicalizes a JSON body (docs/contract.md 2.1): members in document
// order become name=value, strings decoded, numbers as their literal text,
// true/false/null literally. Nested objects and arrays are refused.
func parseBody(body []byte) (signedRequest, error) {
	var sr signedRequest
	if len(bytes.TrimSpace(body)) == 0 {
		return sr, nil
	}
	// The canonical string is built in a strings.Builder so that it
	// becomes sr.raw without a copy.
	var b strings.Builder
	b.Grow(len(body))
	sr.params = make([]param, 0, 8)
	err := flatJSON(string(body), func(name, value string, isString bool) error {
		if name == "signature" {
			sr.signatures++
			sr.signature = value
			return nil
		}
		if err := checkUnambiguous(name, value); err != nil {
			return err
		}
		if len(sr.params) > 0 {
			b.WriteByte('&')
		}
		b.WriteString(name)
		b.WriteByte('=')
		b.WriteString(value)
		sr.params = append(sr.params, param{name: name, value: value, isString: isString})
		return nil
	})
	if err != nil {
		return sr, err
	}
	sr.raw = b.String()
	return sr, nil
}

// checkUnambiguous refuses a parameter whose decoded name or value holds
// '&' or '=' (docs/contract.md 2.1): with them, two different requests could
// share a parameter string, so one signature would cover both (a JSON
// value "BTC&asset2=USDT" signs like two members).
func checkUnambiguous(name, value string) error {
	if strings.ContainsAny(name, "&=") {
		return exgate.ParamError(clip(name), "parameter name %q holds '&' or '=', which the signed parameter string cannot tell apart from a separator", clip(name))
	}
	if strings.ContainsAny(value, "&=") {
		return exgate.ParamError(clip(name), "the value of %s holds '&' or '=', which the signed parameter string cannot tell apart from a separator", clip(name))
	}
	return nil
}

// checkQueryParam is checkUnambiguous for a query, which also refuses a
// decoded '%' or '+': the gateway accepts a signature over the raw query or
// its percent-decoded form, so a decoded "%41" or "+" would sign like the
// raw text of another value ("A", " ").
func checkQueryParam(name, value string) error {
	if err := checkUnambiguous(name, value); err != nil {
		return err
	}
	if strings.ContainsAny(name, "%+") {
		return exgate.ParamError(clip(name), "query parameter name %q decodes to '%%' or '+', which the signed parameter string cannot tell apart from an encoding", clip(name))
	}
	if strings.ContainsAny(value, "%+") {
		return exgate.ParamError(clip(name), "the value of %s decodes to '%%' or '+', which the signed parameter string cannot tell apart from an encoding", clip(name))
	}
	return nil
}

// maxEchoed bounds client input echoed in a problem's detail or a log line.
const maxEchoed = 256

// clip shortens s to at most maxEchoed bytes (on a rune boundary), marking
// the cut, so that a huge value is never echoed whole.
func clip(s string) string {
	if len(s) <= maxEchoed {
		return s
	}
	return exgate.Clip(s, maxEchoed) + fmt.Sprintf("(%d bytes in all)", len(s))
}
