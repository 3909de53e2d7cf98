package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/httpapi"
)

// TestStatus: every code has its own status; only INTERNAL is 500, so a
// code added to exgate.Codes without its line in Status fails here.
func TestStatus(t *testing.T) {
	for _, c := range exgate.Codes() {
		s := httpapi.Status(c)
		if (s == http.StatusInternalServerError) != (c == exgate.CodeInternal) || http.StatusText(s) == "" {
			t.Errorf("Status(%s) = %d", c, s)
		}
	}
	if s := httpapi.Status("NO_SUCH_CODE"); s != http.StatusInternalServerError {
		t.Errorf("an unknown code = %d, want 500", s)
	}
}
