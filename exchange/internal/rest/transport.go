package rest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"time"

	"github.com/exgate/exgate"
)

// TransportError is a call that got no complete answer. Sent is false when
// nothing of the request reached the connection (it failed before its
// headers were written, or while dialling), so the exchange cannot have
// acted on it.
type TransportError struct {
	Exchange string
	Err      error
	Sent     bool
}

func (e *TransportError) Error() string { return e.Exchange + ": " + e.Err.Error() }
func (e *TransportError) Unwrap() error { return e.Err }

// Send sends req with c. A failure is a *TransportError that records
// whether the request may have been sent.
func Send(c *http.Client, exchange string, req *http.Request) (*http.Response, error) {
	var wrote atomic.Bool
	trace := &httptrace.ClientTrace{WroteHeaders: func() { wrote.Store(true) }}
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
	resp, err := c.Do(req)
	if err != nil {
		return nil, &TransportError{Exchange: exchange, Err: err, Sent: wrote.Load() && !IsDialError(err)}
	}
	return resp, nil
}

// IsDialError reports whether err happened while connecting, before any
// byte of the request was written.
func IsDialError(err error) bool {
	if oe, ok := errors.AsType[*net.OpError](err); ok {
		return oe.Op == "dial"
	}
	return false
}

// IsTimeout reports whether err is a deadline or network timeout.
func IsTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	if ne, ok := errors.AsType[net.Error](err); ok {
		return ne.Timeout()
	}
	return false
}

// Truncate is at most the first 200 bytes of an answer, for details and
// logs.
func Truncate[T ~string | ~[]byte](b T) string { return string(b[:min(len(b), 200)]) }

// BadAnswer is the error for a 2xx answer the adapter cannot read. After
// a write it means the outcome is unknown (EXCHANGE_TIMEOUT: the gateway
// reconciles); after a read it is EXCHANGE_ERROR.
func BadAnswer(exchange, call string, write bool, err error) *exgate.Error {
	if write {
		return &exgate.Error{Code: exgate.CodeExchangeTimeout, Detail: exchange + " answered the " + call + " request unreadably; its outcome is unknown", Err: err}
	}
	return &exgate.Error{Code: exgate.CodeExchangeError, Detail: exchange + " answered the " + call + " request unreadably", Err: err}
}

// ReadError is the *TransportError for an answer whose body could not be
// read: the request was sent, so the exchange may have acted on it.
func ReadError(exchange, call string, err error) *TransportError {
	return &TransportError{Exchange: exchange, Err: fmt.Errorf("reading %s answer: %w", call, err), Sent: true}
}

// Problem is the answer for a call that got no complete answer. A write
// that may have been sent has an unknown outcome (EXCHANGE_TIMEOUT: the
// gateway reconciles); a read that was sent and timed out is
// EXCHANGE_TIMEOUT; anything that was never sent (the connection could not
// be made, or the request's deadline had passed before it left the
// gateway) is EXCHANGE_UNAVAILABLE with Retry-After.
func (e *TransportError) Problem(call string, write bool) *exgate.Error {
	switch {
	case write && e.Sent:
		return &exgate.Error{Code: exgate.CodeExchangeTimeout, Detail: e.Exchange + " did not answer the " + call + " request; its outcome is unknown", Err: e}
	case e.Sent && IsTimeout(e.Err):
		return &exgate.Error{Code: exgate.CodeExchangeTimeout, Detail: e.Exchange + " did not answer the " + call + " request in time", Err: e}
	case e.Sent:
		return &exgate.Error{Code: exgate.CodeExchangeUnavailable, Detail: e.Exchange + " did not answer the " + call + " request", RetryAfter: time.Second, Err: e}
	}
	return &exgate.Error{Code: exgate.CodeExchangeUnavailable, Detail: e.Exchange + " is unreachable; the " + call + " request was not sent", RetryAfter: time.Second, Err: e}
}

// Classify is where every adapter's error mapping starts: an *exgate.Error
// is the answer already, a *TransportError is TransportError.Problem.
// Anything else (ok false) is the exchange's own answer, for the adapter's
// tables.
func Classify(err error, call string, write bool) (e *exgate.Error, ok bool) {
	if e, ok := errors.AsType[*exgate.Error](err); ok {
		return e, true
	}
	if te, ok := errors.AsType[*TransportError](err); ok {
		return te.Problem(call, write), true
	}
	return nil, false
}

// ClassifyAs is Classify for an adapter whose exchange answers with
// errors of type A (its apiError). settled is the answer when Classify has
// one, or EXCHANGE_ERROR "<exchange> call failed" for an error that is
// no A either; otherwise settled is nil and answer is the exchange's
// error, for the adapter's own tables.
func ClassifyAs[A error](err error, exchange, call string, write bool) (settled *exgate.Error, answer A) {
	if e, ok := Classify(err, call, write); ok {
		return e, answer
	}
	answer, ok := errors.AsType[A](err)
	if !ok {
		return &exgate.Error{Code: exgate.CodeExchangeError, Detail: exchange + " call failed", Err: err}, answer
	}
	return nil, answer
}
