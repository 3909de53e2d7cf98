package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"testing"
	"unicode/utf8"
)

// referenceParams decodes a flat object with encoding/json, the reference
// the hand-written scanner must agree with.
func referenceParams(body []byte) ([]param, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errNotScalarObject
	}
	var out []param
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, err
		}
		v, err := dec.Token()
		if err != nil {
			return nil, err
		}
		p := param{name: k.(string)}
		switch x := v.(type) {
		case string:
			p.value, p.isString = x, true
		case json.Number:
			p.value = string(x)
		case bool:
			p.value = "false"
			if x {
				p.value = "true"
			}
		case nil:
			p.value = "null"
		default:
			return nil, errNotScalarObject
		}
		out = append(out, p)
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errNotScalarObject
	}
	return out, nil
}

func scanParams(body []byte) ([]param, error) {
	var out []param
	err := flatJSON(string(body), func(name, value string, isString bool) error {
		out = append(out, param{name: name, value: value, isString: isString})
		return nil
	})
	return out, err
}

func TestFlatJSONAgreesWithEncodingJSON(t *testing.T) {
	for _, body := range []string{
		`{}`, ` { "a" : "1" , "b":2 } `, `{"a":-0.5e+10}`, `{"a":"\u00e9\ud83d\ude00\n\"\\\/"}`,
		`{"a":"\ud800"}`, `{"a":"\ud800\u0041"}`, `{"a":true,"b":false,"c":null}`, `{"a":01}`,
		`{"a":1.}`, `{"a":.5}`, `{"a":"x","a":"y"}`, `{"a":[]}`, `{"a":{}}`, `{"a":1,}`, `{"a" 1}`,
		`{"a":"` + "\x01" + `"}`, `{"a":tru}`, `{"a":"\x"}`, `{}x`, `[]`, `"s"`,
	} {
		got, gotErr := scanParams([]byte(body))
		want, wantErr := referenceParams([]byte(body))
		if (gotErr != nil) != (wantErr != nil) || (gotErr == nil && !slices.Equal(got, want)) {
			t.Errorf("%s: scanner %v %v, encoding/json %v %v", body, got, gotErr, want, wantErr)
		}
	}
}

// FuzzFlatJSON checks the scanner against encoding/json on any input: it
// must accept exactly what encoding/json accepts (except invalid UTF-8,
// which it refuses where encoding/json substitutes U+FFFD) and decode it to
// the same members.
func FuzzFlatJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":"1","b":2.5e-3}`, `{"a":"\u00e9\ud83d\ude00"}`, `{"a":{"b":1}}`, `{"a":null,"b":true}`, `{"a":"\ud800\u0041"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, gotErr := scanParams(body)
		want, wantErr := referenceParams(body)
		if gotErr == nil {
			if wantErr != nil {
				t.Fatalf("scanner accepted %q that encoding/json refuses: %v", body, wantErr)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%q: scanner %v, encoding/json %v", body, got, want)
			}
			return
		}
		if wantErr == nil && utf8.Valid(body) {
			t.Fatalf("scanner refused %q (%v) that encoding/json accepts as %v", body, gotErr, want)
		}
	})
}
