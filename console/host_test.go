package console_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/exgate/exgate/console"
)

// Issue 23: the console took its own origin from the request's Host when
// --console-url was unset, so a page that rebinds a name to the console's
// address was a same-origin caller. The console answers only requests
// naming its configured address.
func TestHostChecked(t *testing.T) {
	var h http.Handler
	newEnvWith(t, func(o *console.Options) {
		o.PublicURL = "http://127.0.0.1:8090"
		built, err := console.New(*o)
		if err != nil {
			t.Fatal(err)
		}
		h = built
	})
	for _, tc := range []struct {
		host      string
		misdirect bool
	}{
		{"127.0.0.1:8090", false},
		{"localhost:8090", false},
		{"evil.example:8090", true},
		{"127.0.0.1:9999", true},
		{"evil.example", true},
	} {
		rec := httptest.NewRecorder()
		r := httptest.NewRequest("GET", "/login", nil)
		r.Host = tc.host
		h.ServeHTTP(rec, r)
		if got := rec.Code == http.StatusMisdirectedRequest; got != tc.misdirect {
			t.Errorf("Host %s: %d; want refused: %v", tc.host, rec.Code, tc.misdirect)
		}
	}
}
