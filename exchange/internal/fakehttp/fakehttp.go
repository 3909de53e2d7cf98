// Package fakehttp is the HTTP side the exchange fakes (binancefake,
// gateiofake, krakenfake) share: a fault hook a test installs to delay a
// request, answer it with a canned status, or drop the connection before
// or after the request is processed, and a count of the requests each
// path received, faulted ones included. Each fake routes, authenticates
// and answers in its exchange's own way after Before lets a request
// through.
package fakehttp

import (
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Fault is what the fault hook does with one request. The zero Fault
// processes the request normally.
type Fault struct {
	// Delay holds the request this long before anything else (the
	// request's context ending cuts it short).
	Delay time.Duration
	// Status, when not zero, answers with this status, Header and Body
	// instead of processing the request.
	Status int
	Header map[string]string
	Body   string
	// Drop closes the connection without processing the request.
	Drop bool
	// DropAfter processes the request (an order is placed, a withdrawal
	// made) and then closes the connection without answering.
	DropAfter bool
}

// Faults holds a fake's fault hook and request counts. The zero value is
// ready to use and safe for concurrent use.
type Faults struct {
	hook     atomic.Pointer[func(*http.Request) Fault]
	mu       sync.Mutex
	requests map[string]int
	busy     atomic.Int64
}

// Track wraps a fake's handler so that Busy counts the requests it is
// handling.
func (f *Faults) Track(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.busy.Add(1)
		defer f.busy.Add(-1)
		next.ServeHTTP(w, r)
	})
}

// Busy returns how many requests the handler wrapped by Track is handling
// now, a WebSocket connection while it is open: a test waits for none
// before it reads what the fake holds, as a request the client gave up on
// may still be held (Fault.Delay) and processed after.
func (f *Faults) Busy() int { return int(f.busy.Load()) }

// SetHook installs the hook consulted for every request (nil removes it).
func (f *Faults) SetHook(hook func(*http.Request) Fault) {
	if hook == nil {
		f.hook.Store(nil)
		return
	}
	f.hook.Store(&hook)
}

// Requests returns how many requests reached path, faulted ones included.
func (f *Faults) Requests(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[path]
}

// ResetCounters forgets the request counts.
func (f *Faults) ResetCounters() {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.requests)
}

// Count counts r without applying a fault (for the requests a fake
// serves apart, such as WebSocket upgrades).
func (f *Faults) Count(r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.requests == nil {
		f.requests = map[string]int{}
	}
	f.requests[r.URL.Path]++
}

// Before counts r and applies its fault as far as it goes before the
// request is processed: the delay, then a drop or a canned answer (with
// Content-Type contentType). It returns the fault and whether the request
// is done with; when it is not, the fake processes it, and when
// fault.DropAfter is set, calls Drop instead of answering.
func (f *Faults) Before(w http.ResponseWriter, r *http.Request, contentType string) (Fault, bool) {
	f.Count(r)

	var fault Fault
	if hook := f.hook.Load(); hook != nil {
		fault = (*hook)(r)
	}
	if fault.Delay > 0 {
		t := time.NewTimer(fault.Delay)
		select {
		case <-r.Context().Done():
			t.Stop()
			return fault, true
		case <-t.C:
		}
	}
	switch {
	case fault.Drop:
		Drop(w)
		return fault, true
	case fault.Status != 0:
		for k, v := range fault.Header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(fault.Status)
		_, _ = io.WriteString(w, fault.Body)
		return fault, true
	}
	return fault, false
}

// Drop closes the client's connection without an answer.
func Drop(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}
