package fakehttp

import (
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"
)

func TestFaults(t *testing.T) {
	var f Faults
	var processed atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fault, done := f.Before(w, r, "application/json")
		if done {
			return
		}
		processed.Add(1)
		if fault.DropAfter {
			Drop(w)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	defer srv.Close()
	get := func(path string) (int, string, error) {
		resp, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), nil
	}
	tests := []struct {
		name      string
		fault     Fault
		status    int
		body      string
		dropped   bool
		processed int32
	}{
		{"none", Fault{}, 200, "ok", false, 1},
		{"canned answer", Fault{Status: 503, Body: `{"e":1}`, Header: map[string]string{"Retry-After": "1"}}, 503, `{"e":1}`, false, 0},
		{"drop before", Fault{Drop: true}, 0, "", true, 0},
		{"drop after", Fault{DropAfter: true}, 0, "", true, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			processed.Store(0)
			f.SetHook(func(r *http.Request) Fault {
				if r.URL.Path == "/faulty" {
					return tc.fault
				}
				return Fault{}
			})
			status, body, err := get("/faulty")
			if n := processed.Load(); tc.dropped != (err != nil) || status != tc.status || body != tc.body || n != tc.processed {
				t.Errorf("got %d %q, err %v, processed %d; want %d %q, dropped %v, processed %d",
					status, body, err, n, tc.status, tc.body, tc.dropped, tc.processed)
			}
		})
	}
	f.SetHook(nil)
	if status, _, err := get("/faulty"); err != nil || status != 200 {
		t.Errorf("without a hook: %d, %v", status, err)
	}
	// Requests counts every request to the path, faulted ones too (a
	// client retries a dropped idempotent GET once, so dropped ones may
	// count twice).
	if n := f.Requests("/faulty"); n < len(tests)+1 {
		t.Errorf("Requests = %d, want at least %d", n, len(tests)+1)
	}
	f.ResetCounters()
	if n := f.Requests("/faulty"); n != 0 {
		t.Errorf("after ResetCounters: %d", n)
	}
}

// TestBusy: a request is counted while its handler runs, even after its
// client gave up on it, and no longer once the handler returned.
func TestBusy(t *testing.T) {
	var f Faults
	entered, release := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(f.Track(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
	})))
	defer srv.Close()
	if n := f.Busy(); n != 0 {
		t.Fatalf("Busy before any request: %d", n)
	}
	failed := make(chan error, 1)
	go func() {
		resp, err := srv.Client().Get(srv.URL + "/held")
		if err == nil {
			resp.Body.Close()
		}
		failed <- err
	}()
	<-entered
	if n := f.Busy(); n != 1 {
		t.Fatalf("Busy while the handler runs: %d, want 1", n)
	}
	srv.CloseClientConnections()
	<-failed
	if n := f.Busy(); n != 1 {
		t.Fatalf("Busy after the client went away, the handler still running: %d, want 1", n)
	}
	close(release)
	for f.Busy() != 0 {
		runtime.Gosched()
	}
}
