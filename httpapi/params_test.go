package httpapi

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/exgate/exgate"
)

// The two test vectors of docs/contract.md 2.1.
const vectorSecret = "ru8nVoVLNuNZ4qASWdmoBSsxzqZmXZFgnj2C5IWPZo0"

func hmacHex(secret, msg string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(msg))
	return hex.EncodeToString(m.Sum(nil))
}

func TestSignatureVectors(t *testing.T) {
	tests := []struct {
		name, params, want string
	}{
		{"order", "asset1=BTC&asset2=ETH&side=BUY&quantity=0.1&quantityIn=ETH", "8978e017b68e2e1ddf5cca2545d6eb987c5f1093c00f52a118b8b7f605b522e5"},
		{"empty", "", "49b1556d777c30a907611960e9300ad406f09cefdd820a453306d715c926c2cc"},
	}
	pool := newMACPool([]byte(vectorSecret))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := hmacHex(vectorSecret, tc.params); got != tc.want {
				t.Fatalf("HMAC = %s, want %s", got, tc.want)
			}
			for _, sigText := range []string{tc.want, strings.ToUpper(tc.want)} {
				var sig [32]byte
				if !decodeSignature(sigText, &sig) || !pool.verify(tc.params, &sig) {
					t.Errorf("verify(%q, %s) = false, want true", tc.params, sigText)
				}
			}
		})
	}
	t.Run("query canonical form", func(t *testing.T) {
		sr, err := parseQuery("asset1=BTC&asset2=ETH&side=BUY&quantity=0.1&quantityIn=ETH&signature=" + tests[0].want)
		if err != nil || sr.raw != tests[0].params || sr.signature != tests[0].want {
			t.Fatalf("parseQuery = %+v, %v", sr, err)
		}
	})
	t.Run("body canonical form", func(t *testing.T) {
		sr, err := parseBody([]byte(`{"asset1":"BTC","asset2":"ETH","side":"BUY","quantity":0.1,"quantityIn":"ETH","signature":"` + tests[0].want + `"}`))
		if err != nil || sr.raw != tests[0].params || sr.signature != tests[0].want {
			t.Fatalf("parseBody = %+v, %v", sr, err)
		}
	})
}

func TestParseQuery(t *testing.T) {
	tests := []struct {
		name, query      string
		wantRaw, wantDec string
		wantSig          string
		wantParams       int
		wantSignatures   int
		wantErr          bool
	}{
		{name: "empty", query: ""},
		{name: "signature only", query: "signature=ab", wantSig: "ab", wantSignatures: 1},
		{name: "signature first", query: "signature=ab&a=1&b=2", wantRaw: "a=1&b=2", wantSig: "ab", wantParams: 2, wantSignatures: 1},
		{name: "signature middle", query: "a=1&signature=ab&b=2", wantRaw: "a=1&b=2", wantSig: "ab", wantParams: 2, wantSignatures: 1},
		{name: "percent encoded", query: "address=a%41b&tag=x%20y&signature=ab", wantRaw: "address=a%41b&tag=x%20y", wantDec: "address=aAb&tag=x y", wantSig: "ab", wantParams: 2, wantSignatures: 1},
		{name: "plus is space", query: "a=x+y", wantRaw: "a=x+y", wantDec: "a=x y", wantParams: 1},
		{name: "two signatures", query: "signature=ab&signature=cd", wantSig: "cd", wantSignatures: 2},
		{name: "no value", query: "a&b=", wantRaw: "a&b=", wantParams: 2},
		{name: "bad escape", query: "a=%zz", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sr, err := parseQuery(tc.query)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			if sr.raw != tc.wantRaw || sr.decoded != tc.wantDec || sr.signature != tc.wantSig ||
				len(sr.params) != tc.wantParams || sr.signatures != tc.wantSignatures {
				t.Errorf("got raw %q decoded %q sig %q params %d signatures %d", sr.raw, sr.decoded, sr.signature, len(sr.params), sr.signatures)
			}
		})
	}
}

func TestParseBody(t *testing.T) {
	tests := []struct {
		name, body string
		wantRaw    string
		wantErr    bool
	}{
		{name: "empty body", body: "", wantRaw: ""},
		{name: "empty object", body: "{}", wantRaw: ""},
		{name: "literal numbers", body: `{"a":0.1,"b":1e-1,"c":10.50,"d":-0}`, wantRaw: "a=0.1&b=1e-1&c=10.50&d=-0"},
		{name: "literals", body: `{"a":true,"b":false,"c":null}`, wantRaw: "a=true&b=false&c=null"},
		{name: "escaped string", body: `{"a":"x\u0041y","b":"\"q\""}`, wantRaw: `a=xAy&b="q"`},
		{name: "document order", body: `{"z":"1","a":"2"}`, wantRaw: "z=1&a=2"},
		{name: "signature excluded", body: `{"a":"1","signature":"ab","b":"2"}`, wantRaw: "a=1&b=2"},
		{name: "nested object", body: `{"a":{"b":1}}`, wantErr: true},
		{name: "array member", body: `{"a":[1]}`, wantErr: true},
		{name: "top-level array", body: `[1]`, wantErr: true},
		{name: "trailing data", body: `{"a":"1"} {}`, wantErr: true},
		{name: "invalid json", body: `{"a":}`, wantErr: true},
		{name: "truncated", body: `{"a":"1"`, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sr, err := parseBody([]byte(tc.body))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if err == nil && sr.raw != tc.wantRaw {
				t.Errorf("raw = %q, want %q", sr.raw, tc.wantRaw)
			}
		})
	}
}

func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{"", "a=1&signature=ab", "a=%41&b=+", "signature=&signature=x", "a&&b=%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		sr, err := parseQuery(q)
		if err != nil {
			return
		}
		// The raw form is a sub-sequence of the query without the
		// signature pairs, so it can never be longer.
		if len(sr.raw) > len(q) {
			t.Fatalf("raw %q longer than query %q", sr.raw, q)
		}
		if strings.Contains("&"+sr.raw+"&", "&signature=") {
			t.Fatalf("raw %q still holds a signature", sr.raw)
		}
	})
}

func FuzzParseBody(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1,"signature":"x"}`, `{"a":{"b":1}}`, `{"a":"\u00e9","b":1e5}`, `[]`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		sr, err := parseBody(body)
		if err != nil {
			return
		}
		names := 0
		for _, p := range sr.params {
			if p.name == "signature" {
				t.Fatal("signature kept among the parameters")
			}
			names++
		}
		if names > 0 && sr.raw == "" {
			t.Fatalf("params %v but empty canonical string", sr.params)
		}
	})
}

// A name or value holding '&' or '=' once decoded would let two different
// requests share a signed string (docs/contract.md 2.1); in a query, so would a
// decoded '%' or '+', since the raw and the decoded forms are both
// accepted. Each is refused naming the parameter.
func TestAmbiguousParametersRefused(t *testing.T) {
	tests := []struct {
		name, input string
		body        bool
		wantParam   string
	}{
		{name: "body value re-split into members", input: `{"asset1":"BTC&asset2=USDT","side":"BUY"}`, body: true, wantParam: "asset1"},
		{name: "body timestamp folded into a member", input: `{"tag":"1&timestamp=1700000000000"}`, body: true, wantParam: "tag"},
		{name: "body escaped ampersand", input: `{"a":"x\u0026y"}`, body: true, wantParam: "a"},
		{name: "body escaped equals", input: `{"a":"x\u003dy"}`, body: true, wantParam: "a"},
		{name: "body name with equals", input: `{"a=b":"1"}`, body: true, wantParam: "a=b"},
		{name: "query encoded ampersand", input: "asset=BTC%26x%3D1", wantParam: "asset"},
		{name: "query extra equals", input: "asset=BTC=1", wantParam: "asset"},
		{name: "query name with encoded equals", input: "a%3Db=1", wantParam: "a=b"},
		{name: "query encoded percent", input: "asset=%2541", wantParam: "asset"},
		{name: "query encoded plus", input: "asset=a%2Bb", wantParam: "asset"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.body {
				_, err = parseBody([]byte(tc.input))
			} else {
				_, err = parseQuery(tc.input)
			}
			e, ok := errors.AsType[*exgate.Error](err)
			if !ok || e.Code != exgate.CodeInvalidParameter || e.Param != tc.wantParam {
				t.Fatalf("err = %v; want INVALID_PARAMETER for %q", err, tc.wantParam)
			}
		})
	}
}

// splitSigned decomposes a signed parameter string into name and value
// pairs, unescaping each part when unescape is set (a raw query).
func splitSigned(t *testing.T, s string, unescape bool) [][2]string {
	var out [][2]string
	if s == "" {
		return out
	}
	for seg := range strings.SplitSeq(s, "&") {
		if seg == "" {
			continue
		}
		name, value, _ := strings.Cut(seg, "=")
		if unescape {
			var err1, err2 error
			name, err1 = url.QueryUnescape(name)
			value, err2 = url.QueryUnescape(value)
			if err1 != nil || err2 != nil {
				t.Fatalf("signed string %q does not unescape", s)
			}
		}
		out = append(out, [2]string{name, value})
	}
	return out
}

func pairsOf(ps []param) [][2]string {
	var out [][2]string
	for _, p := range ps {
		out = append(out, [2]string{p.name, p.value})
	}
	return out
}

// FuzzSignedStringUnambiguous checks that every parameter string the
// gateway accepts a signature over determines the parameters: splitting it
// at '&' and the first '=' gives back exactly the parameters the request
// carried. So two requests with different parameters never share a signed
// string, and one signature can never be reused for another request. Pairs
// of inputs are also compared directly.
func FuzzSignedStringUnambiguous(f *testing.F) {
	for _, s := range [][2]string{
		{"a=1&b=2", "a=1%26b%3D2"},
		{`{"asset1":"BTC","asset2":"USDT"}`, `{"asset1":"BTC\u0026asset2=USDT"}`},
		{"a=%2541", "a=%41"},
		{"a=%2B", "a=+"},
		{"a&&b=", `{"a":"","b":""}`},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		type signed struct {
			params  [][2]string
			strings []string
		}
		parse := func(in string) []signed {
			var out []signed
			if sr, err := parseQuery(in); err == nil && sr.signatures <= 1 {
				got := pairsOf(sr.params)
				if split := splitSigned(t, sr.raw, true); !slices.Equal(split, got) {
					t.Fatalf("query %q: raw string %q splits into %q, the request carried %q", in, sr.raw, split, got)
				}
				strs := []string{sr.raw}
				if sr.decoded != "" {
					if split := splitSigned(t, sr.decoded, false); !slices.Equal(split, got) {
						t.Fatalf("query %q: decoded string %q splits into %q, the request carried %q", in, sr.decoded, split, got)
					}
					strs = append(strs, sr.decoded)
				}
				out = append(out, signed{got, strs})
			}
			if sr, err := parseBody([]byte(in)); err == nil {
				got := pairsOf(sr.params)
				if split := splitSigned(t, sr.raw, false); !slices.Equal(split, got) {
					t.Fatalf("body %q: string %q splits into %q, the request carried %q", in, sr.raw, split, got)
				}
				out = append(out, signed{got, []string{sr.raw}})
			}
			return out
		}
		for _, x := range parse(a) {
			for _, y := range parse(b) {
				for _, sx := range x.strings {
					if slices.Contains(y.strings, sx) && !slices.Equal(x.params, y.params) {
						t.Fatalf("%q and %q share the signed string %q with parameters %q and %q", a, b, sx, x.params, y.params)
					}
				}
			}
		}
	})
}
