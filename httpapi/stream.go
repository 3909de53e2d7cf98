package httpapi

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/exgate/exgate"
)

// GET /v1/stream (docs/contract.md 2.5): the handshake is a signed GET with
// a timestamp and no other parameters, authenticated, limited and
// allowlisted like every signed route before the connection is upgraded;
// a refusal is the usual problem answer. Clients that cannot set headers
// sign apiKey and exchangeKey as query parameters instead.

// streamHub serves an authenticated stream connection (package stream).
type streamHub interface {
	Serve(w http.ResponseWriter, r *http.Request, cred exgate.Credential)
}

// The query parameters that stand for the two headers on the handshake.
const (
	streamKeyParam      = "apiKey"
	streamExchangeParam = "exchangeKey"
)

// handleStream hands an authenticated handshake to the hub.
func (s *Server) handleStream(w http.ResponseWriter, r *http.Request, c *call) error {
	if _, err := newParams(c.params, streamKeyParam, streamExchangeParam); err != nil {
		return err
	}
	if s.cfg.Stream == nil {
		return exgate.Errorf(exgate.CodeNotImplemented, "streams are not enabled on this gateway")
	}
	s.cfg.Stream.Serve(w, r, c.cred)
	return nil
}

// streamKeys checks the handshake's key parameters against the headers
// and returns the exchange key's name: a key is given either as its
// header or as its signed parameter, not both.
func streamKeys(r *http.Request, ps []param) (string, error) {
	var apiKey, name string
	var haveKey, haveName bool
	for _, p := range ps {
		switch p.name {
		case streamKeyParam:
			apiKey, haveKey = p.value, true
		case streamExchangeParam:
			name, haveName = p.value, true
		}
	}
	if haveKey && r.Header.Get("X-API-KEY") != "" {
		return "", exgate.ParamError(streamKeyParam, "give the API key either as the X-API-KEY header or as the apiKey parameter, not both")
	}
	if haveKey && apiKey == "" {
		return "", exgate.ParamError(streamKeyParam, "apiKey must not be empty")
	}
	if h := r.Header.Get("X-API-EXCHANGE-KEY"); h != "" {
		if haveName {
			return "", exgate.ParamError(streamExchangeParam, "give the exchange key either as the X-API-EXCHANGE-KEY header or as the exchangeKey parameter, not both")
		}
		return h, nil
	}
	return name, nil
}

// queryValue returns the first value of name in a raw query, "" when it
// is absent or not valid percent-encoding (the signature check then
// refuses the request).
func queryValue(rawQuery, name string) string {
	for seg := range strings.SplitSeq(rawQuery, "&") {
		k, v, _ := strings.Cut(seg, "=")
		if k != name {
			continue
		}
		if d, err := url.QueryUnescape(v); err == nil {
			return d
		}
		return ""
	}
	return ""
}
