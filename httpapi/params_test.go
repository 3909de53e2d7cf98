package httpapi

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// The two test vectors of DESIGN.md 2.1.
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
		{name: "percent encoded", query: "address=a%2Bb&tag=x%20y&signature=ab", wantRaw: "address=a%2Bb&tag=x%20y", wantDec: "address=a+b&tag=x y", wantSig: "ab", wantParams: 2, wantSignatures: 1},
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
		{name: "escaped string", body: `{"a":"x\u0026y","b":"\"q\""}`, wantRaw: `a=x&y&b="q"`},
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
