package rest

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestReadAnswers(t *testing.T) {
	tests := []struct {
		name          string
		body          string
		contentLength int64
		limit         int64
		want          string
		wantErr       error
	}{
		{"announced length", `[1,2,3]`, 7, 100, `[1,2,3]`, nil},
		{"unknown length", `[1,2,3]`, -1, 100, `[1,2,3]`, nil},
		{"empty", ``, 0, 100, ``, nil},
		{"exactly the limit", `12345`, -1, 5, `12345`, nil},
		{"unknown length over the limit", `123456`, -1, 5, ``, ErrAnswerTooLarge},
		{"announced length over the limit", `123456`, 6, 5, ``, ErrAnswerTooLarge},
		{"shorter than announced", `123`, 6, 100, ``, io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, read := range []struct {
				name string
				f    func(*http.Response) (string, error)
			}{
				{"ReadAnswer", func(r *http.Response) (string, error) { b, err := ReadAnswer(r, tt.limit); return string(b), err }},
				{"ReadAnswerText", func(r *http.Response) (string, error) { return ReadAnswerText(r, tt.limit, 2) }},
				{"AppendAnswer", func(r *http.Response) (string, error) {
					b, err := AppendAnswer([]byte("kept"), r, tt.limit, 1)
					if string(b[:4]) != "kept" {
						t.Fatalf("AppendAnswer changed what dst held: %q", b)
					}
					return string(b[4:]), err
				}},
			} {
				resp := &http.Response{Body: io.NopCloser(strings.NewReader(tt.body)), ContentLength: tt.contentLength}
				got, err := read.f(resp)
				if tt.wantErr != nil {
					if !errors.Is(err, tt.wantErr) {
						t.Fatalf("%s: err %v; want %v", read.name, err, tt.wantErr)
					}
					continue
				}
				if err != nil || got != tt.want {
					t.Fatalf("%s: got %q, %v; want %q", read.name, got, err, tt.want)
				}
			}
		})
	}
}
