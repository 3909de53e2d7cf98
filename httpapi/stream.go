package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/exgate/exgate"
)

// GET /v1/stream (docs/contract.md 2.5): the handshake is a signed GET with
// a timestamp and no other parameters, authenticated, limited and
// allowlisted like every signed route before the connection is upgraded;
// a refusal is the usual problem answer. Clients that cannot set headers
// sign apiKey and exchangeKey as query parameters instead.

// streamHub serves an authenticated stream connection (package stream),
// running check every second or so: an error closes the connection.
type streamHub interface {
	ServeChecked(w http.ResponseWriter, r *http.Request, cred exgate.Credential, check func(ctx context.Context) error)
}

// streamSlots counts the stream connections open per client key, shared
// by the instances (Redis when configured): Acquire takes one of limit
// slots for id until until, Renew keeps it, Release gives it back. A slot
// not renewed (an instance gone) frees itself at until.
type streamSlots interface {
	Acquire(ctx context.Context, key, id string, limit int, until time.Time) (bool, error)
	Renew(ctx context.Context, key, id string, until time.Time) error
	Release(ctx context.Context, key, id string) error
}

// DefaultStreamConnectionsPerKey is how many stream connections one client
// key may hold open, across instances.
const DefaultStreamConnectionsPerKey = 20

// streamSlotTTL is how long a connection's slot lasts unless renewed; it
// is renewed at a third of it.
const streamSlotTTL = 30 * time.Second

// The query parameters that stand for the two headers on the handshake.
const (
	streamKeyParam      = "apiKey"
	streamExchangeParam = "exchangeKey"
)

// handleStream hands an authenticated handshake to the hub.
func (s *Server) handleStream(w http.ResponseWriter, r *http.Request, c *call) error {
	if _, err := newParams(c.params, streamKeyParam, streamExchangeParam); err != nil {
		return err
	}
	if s.cfg.Stream == nil {
		return exgate.Errorf(exgate.CodeNotImplemented, "streams are not enabled on this gateway")
	}
	ctx := r.Context()
	if slots := s.cfg.StreamSlots; slots != nil {
		limit := s.cfg.StreamConnectionsPerKey
		if limit <= 0 {
			limit = DefaultStreamConnectionsPerKey
		}
		key, id := "stream-conns:"+c.apiKey, newRequestID()
		ok, err := slots.Acquire(ctx, key, id, limit, s.now().Add(streamSlotTTL))
		if err != nil {
			return &exgate.Error{Code: exgate.CodeExchangeUnavailable, Detail: "the stream connection count is unreachable", RetryAfter: time.Second, Err: err}
		}
		if !ok {
			return &exgate.Error{Code: exgate.CodeRateLimited, RetryAfter: time.Second,
				Detail: fmt.Sprintf("this API key has %d stream connections open, its most (--stream-connections-per-key); close one first", limit)}
		}
		done := make(chan struct{})
		defer func() {
			close(done)
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := slots.Release(rctx, key, id); err != nil {
				s.log.WarnContext(rctx, "stream slot release", "err", clipLog(err))
			}
		}()
		go s.renewSlot(context.WithoutCancel(ctx), slots, key, id, done)
	}
	s.cfg.Stream.ServeChecked(w, r, c.cred, s.streamCheck(r, c))
	return nil
}

// renewSlot keeps a stream connection's slot until done is closed.
func (s *Server) renewSlot(ctx context.Context, slots streamSlots, key, id string, done <-chan struct{}) {
	t := time.NewTicker(streamSlotTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		rctx, cancel := context.WithTimeout(ctx, streamSlotTTL/3)
		if err := slots.Renew(rctx, key, id, s.now().Add(streamSlotTTL)); err != nil {
			s.log.WarnContext(rctx, "stream slot renewal", "err", clipLog(err))
		}
		cancel()
	}
}

// streamCheck is what an open stream checks every second, so that a change
// applies to open streams as to requests, within the caches' second: the
// client's address still on its key's IP allowlist, the client key
// active, the exchange key the same credential and still holding read.
func (s *Server) streamCheck(r *http.Request, c *call) func(ctx context.Context) error {
	// The handshake's request, without its context (ended with the
	// handler), for the client's address.
	req := &http.Request{RemoteAddr: r.RemoteAddr, Header: r.Header.Clone()}
	return func(ctx context.Context) error {
		if err := s.checkClientIP(ctx, req, c.apiKey); err != nil {
			if e, ok := errors.AsType[*exgate.Error](err); ok && e.Code == exgate.CodeIPNotAllowed {
				return errors.New("the client's address is no longer on the API key's IP allowlist")
			}
			return nil // the store unreachable: checked again next time
		}
		key, _, err := s.keys.clientKey(ctx, c.apiKey)
		if errors.Is(err, exgate.ErrNotFound) || (err == nil && !key.Active()) {
			return errors.New("the API key was revoked")
		}
		cred, err := s.keys.credential(ctx, c.apiKey, c.cred.Name)
		switch {
		case errors.Is(err, exgate.ErrNotFound) || (err == nil && cred.ID != c.cred.ID):
			return errors.New("the exchange key was removed or replaced")
		case err == nil && !cred.Allows(exgate.PermissionRead):
			return errors.New("the exchange key no longer has the read permission")
		}
		return nil
	}
}

// streamKeys checks the handshake's key parameters against the headers
// and returns the exchange key's name: a key is given either as its
// header or as its signed parameter, not both.
func streamKeys(r *http.Request, ps []param) (string, error) {
	var apiKey, name string
	var haveKey, haveName bool
	for _, p := range ps {
		switch p.name {
		case streamKeyParam:
			apiKey, haveKey = p.value, true
		case streamExchangeParam:
			name, haveName = p.value, true
		}
	}
	if haveKey && r.Header.Get("X-API-KEY") != "" {
		return "", exgate.ParamError(streamKeyParam, "give the API key either as the X-API-KEY header or as the apiKey parameter, not both")
	}
	if haveKey && apiKey == "" {
		return "", exgate.ParamError(streamKeyParam, "apiKey must not be empty")
	}
	if h := r.Header.Get("X-API-EXCHANGE-KEY"); h != "" {
		if haveName {
			return "", exgate.ParamError(streamExchangeParam, "give the exchange key either as the X-API-EXCHANGE-KEY header or as the exchangeKey parameter, not both")
		}
		return h, nil
	}
	return name, nil
}

// queryValue returns the first value of name in a raw query, "" when it
// is absent or not valid percent-encoding (the signature check then
// refuses the request).
func queryValue(rawQuery, name string) string {
	for seg := range strings.SplitSeq(rawQuery, "&") {
		k, v, _ := strings.Cut(seg, "=")
		if k != name {
			continue
		}
		if d, err := url.QueryUnescape(v); err == nil {
			return d
		}
		return ""
	}
	return ""
}
