package console

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/httpapi"
	"github.com/exgate/exgate/stream"
)

// LiveFeed pushes market data as the exchange streams it: the stream hub
// (package stream), whose upstream subscription the market page shares
// with the API's WebSocket clients of the same pair.
type LiveFeed interface {
	// Watch delivers the stream's book or klines messages (their JSON of
	// docs/contract.md 2.5) until ctx ends (nil) or the subscription
	// ends (its error).
	Watch(ctx context.Context, exchange string, req stream.Request, deliver func(msg []byte)) error
}

// Timings of the live endpoint.
const (
	// liveKeepAlive is how often an idle event stream gets a comment
	// (so that proxies keep it open) and the session is checked again
	// (Options.LiveKeepAlive).
	liveKeepAlive = 15 * time.Second
	// liveWriteTimeout bounds one event's write to a browser.
	liveWriteTimeout = 10 * time.Second
	// liveBookDepth is the depth the page draws, as the polled book.
	liveBookDepth = 50
)

// live answers GET /api/market/live with Server-Sent Events (the browser's
// EventSource; no WebSocket and no signing in the page): "book" and
// "kline" events carry the stream's messages for the page's pair, a
// "problem" event (an RFC 9457 body) ends the stream when the exchange
// refuses the subscription. A session logged out or expired ends it at
// the next keep-alive. Without a LiveFeed it is 501 and the page polls.
func (h *Handler) live(w http.ResponseWriter, r *http.Request, s session) {
	m := readMarketQuery(r, h.o.Exchanges)
	if m.Err != "" {
		writeProblem(w, http.StatusBadRequest, string(exgate.CodeInvalidParameter), m.Err)
		return
	}
	if h.o.Live == nil {
		writeProblem(w, http.StatusNotImplemented, string(exgate.CodeNotImplemented), "live market data needs the stream hub; the page polls instead")
		return
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no") // nginx: pass events on at once
	w.WriteHeader(http.StatusOK)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	ev := &eventWriter{w: w, rc: rc, cancel: cancel}
	if !ev.send("", nil) { // the headers, and a retry hint
		return
	}
	var wg sync.WaitGroup
	for _, sub := range []struct {
		event string
		req   stream.Request
	}{
		{"book", stream.Request{Channel: stream.ChannelBook, Symbol: m.Symbol, Depth: liveBookDepth}},
		{"kline", stream.Request{Channel: stream.ChannelKlines, Symbol: m.Symbol, Interval: m.Interval}},
	} {
		wg.Go(func() {
			err := h.o.Live.Watch(ctx, m.Exchange, sub.req, func(msg []byte) { ev.send(sub.event, msg) })
			if err != nil && ctx.Err() == nil {
				ev.problem(err, h.o.Logger)
			}
			cancel()
		})
	}
	t := time.NewTicker(h.o.LiveKeepAlive)
	defer t.Stop()
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-t.C:
			// Only a definite answer ends the stream: a session gone
			// (logged out, expired) or another one.
			if cur, err := h.session(r); err == nil && (cur == nil || cur.idHash != s.idHash) {
				cancel()
				continue
			}
			ev.comment()
		}
	}
	wg.Wait()
}

// eventWriter writes Server-Sent Events from several goroutines, each
// within liveWriteTimeout (which replaces the server's WriteTimeout, so
// that the events outlive it); a failed write ends the stream.
type eventWriter struct {
	w      http.ResponseWriter
	rc     *http.ResponseController
	cancel context.CancelFunc

	mu     sync.Mutex
	failed bool
}

// send writes one event (an empty name: the opening retry hint).
func (e *eventWriter) send(event string, data []byte) bool {
	var b []byte
	if event == "" {
		b = []byte("retry: 5000\n\n")
	} else {
		b = make([]byte, 0, len(event)+len(data)+16)
		b = append(b, "event: "...)
		b = append(b, event...)
		b = append(b, "\ndata: "...)
		b = append(b, data...) // compact JSON: one line
		b = append(b, "\n\n"...)
	}
	return e.write(b)
}

func (e *eventWriter) comment() { e.write([]byte(": keep-alive\n\n")) }

// problem sends the error that ended a subscription as a "problem"
// event: the code of an *exgate.Error, or EXCHANGE_UNAVAILABLE.
func (e *eventWriter) problem(err error, log *slog.Logger) {
	code, status, detail := exgate.CodeExchangeUnavailable, http.StatusBadGateway, "the live feed ended; the page polls instead"
	if ex, ok := errors.AsType[*exgate.Error](err); ok {
		code, status, detail = ex.Code, httpapi.Status(ex.Code), ex.Detail
	} else if !errors.Is(err, stream.ErrSlow) {
		log.Error("console: live market data", "err", err)
	}
	body, _ := json.Marshal(map[string]any{
		"type": "about:blank", "title": http.StatusText(status), "status": status, "code": code, "detail": detail,
	})
	e.send("problem", body)
}

func (e *eventWriter) write(b []byte) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.failed {
		return false
	}
	_ = e.rc.SetWriteDeadline(time.Now().Add(liveWriteTimeout))
	_, err := e.w.Write(b)
	if err == nil {
		err = e.rc.Flush()
	}
	if err != nil {
		e.failed = true
		e.cancel()
		return false
	}
	return true
}
