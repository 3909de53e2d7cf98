package exgate

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestReadAnswer(t *testing.T) {
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
			resp := &http.Response{Body: io.NopCloser(strings.NewReader(tt.body)), ContentLength: tt.contentLength}
			got, err := ReadAnswer(resp, tt.limit)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err %v; want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
