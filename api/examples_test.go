package api_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/exgate/exgate/api"
)

// exampleSecret is the secret key of the document's signing example (the
// test vector of the interface specification); every signed example in the
// document is signed with it.
const exampleSecret = "ru8nVoVLNuNZ4qASWdmoBSsxzqZmXZFgnj2C5IWPZo0"

func sign(params string) string {
	m := hmac.New(sha256.New, []byte(exampleSecret))
	m.Write([]byte(params))
	return hex.EncodeToString(m.Sum(nil))
}

// member is one member of an example body as the document writes it.
type member struct{ name, text string }

// yamlExamples reads the `examples:` lists of the request schemas from the
// document's text, members in the order written (the order a client sends
// them, which the signature covers; a parsed document has lost it).
func yamlExamples(t *testing.T) map[string][][]member {
	t.Helper()
	out := map[string][][]member{}
	var schema string
	var in bool
	var cur []member
	flush := func() {
		if cur != nil {
			out[schema] = append(out[schema], cur)
			cur = nil
		}
	}
	inComponents := false
	for line := range strings.SplitSeq(string(api.Spec()), "\n") {
		if line == "components:" {
			inComponents = true
			continue
		}
		if !inComponents {
			continue
		}
		switch {
		case strings.HasPrefix(line, "    ") && !strings.HasPrefix(line, "     ") && strings.HasSuffix(line, ":"):
			flush()
			schema, in = strings.TrimSuffix(strings.TrimSpace(line), ":"), false
		case line == "      examples:":
			in = true
		case in && strings.HasPrefix(line, "        - "):
			flush()
			cur = append(cur, parseMember(t, line[len("        - "):]))
		case in && strings.HasPrefix(line, "          ") && !strings.HasPrefix(line, "           "):
			cur = append(cur, parseMember(t, line[len("          "):]))
		default:
			flush()
			in = false
		}
	}
	flush()
	return out
}

// text writes a parsed example value as the document wrote it.
func text(v any) string {
	if f, ok := v.(float64); ok {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

func parseMember(t *testing.T, s string) member {
	t.Helper()
	name, text, ok := strings.Cut(s, ": ")
	if !ok {
		t.Fatalf("example line %q is not name: value", s)
	}
	// A quoted YAML scalar is a JSON string; the parameter string holds its
	// content. A plain one is a number or a boolean, written as is (the
	// examples' strings need no quotes in YAML and hold no escapes).
	return member{name, strings.Trim(text, `"`)}
}

// TestExamplesVerify signs every request example in the document with the
// example secret, building the parameter string as the gateway verifies a
// POST body (members in order, `signature` left out), and compares the
// example's own signature; and it checks the signing example of the
// document's description the same way.
func TestExamplesVerify(t *testing.T) {
	doc := load(t)
	found := yamlExamples(t)
	for name, ref := range doc.Components.Schemas {
		if len(ref.Value.Examples) == 0 {
			continue
		}
		if len(found[name]) != len(ref.Value.Examples) {
			t.Errorf("%s: %d examples in the document, %d read from its text", name, len(ref.Value.Examples), len(found[name]))
			continue
		}
		for i, ex := range found[name] {
			t.Run(fmt.Sprintf("%s/%d", name, i), func(t *testing.T) {
				parsed := ref.Value.Examples[i].(map[string]any)
				if len(parsed) != len(ex) {
					t.Fatalf("the example has %d members, %d read from the text", len(parsed), len(ex))
				}
				var params []string
				var sig string
				for _, m := range ex {
					if got := text(parsed[m.name]); got != m.text {
						t.Errorf("member %s: parsed %q, read %q", m.name, got, m.text)
					}
					if m.name == "signature" {
						sig = m.text
						continue
					}
					params = append(params, m.name+"="+m.text)
				}
				if len(ex) == 0 || ex[len(ex)-1].name != "signature" {
					t.Errorf("signature is not the example's last member")
				}
				if ps := strings.Join(params, "&"); sign(ps) != sig {
					t.Errorf("signature %s does not verify; %q signs to %s", sig, ps, sign(ps))
				}
				if _, ok := parsed["timestamp"]; !ok && strings.HasSuffix(name, "Request") {
					t.Errorf("a POST example without timestamp would be refused (MISSING_TIMESTAMP)")
				}
			})
		}
	}
	for _, want := range []string{"MarketOrderRequest", "LimitOrderRequest", "CancelRequest", "CancelAllRequest", "WithdrawRequest"} {
		if len(found[want]) == 0 {
			t.Errorf("%s has no example", want)
		}
	}

	desc := strings.Join(strings.Fields(doc.Info.Description), " ")
	m := regexp.MustCompile("with the secret `([^`]+)`, `([^`]*)` signs to `([0-9a-f]{64})`").FindStringSubmatch(desc)
	if m == nil {
		t.Fatal("the description's signing example is missing")
	}
	if m[1] != exampleSecret {
		t.Errorf("the description signs with %q, the examples with %q", m[1], exampleSecret)
	}
	if sign(m[2]) != m[3] {
		t.Errorf("the description's example: %q signs to %s, not %s", m[2], sign(m[2]), m[3])
	}
}
