package stream

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/exgate/exgate"
)

// ErrSlow ends a Watch whose deliver fell more than Options.QueueLimit
// messages behind, as a WebSocket client that far behind is closed.
var ErrSlow = errors.New("stream: the watcher fell too far behind")

// Watch subscribes deliver, in process, to a market channel of an
// exchange (req.Channel book or klines, with req.Symbol; req.Depth and
// req.Interval default as on the socket), sharing the upstream
// subscription with the WebSocket clients of the same pair: the web
// console's market page is live without a second subscription to the
// exchange. deliver gets the stream's data messages (their JSON of
// docs/contract.md 2.5, the latest state first), one at a time on the
// caller's goroutine, in order; it may block, up to QueueLimit messages
// queued behind it.
//
// Watch returns nil when ctx ends; an *exgate.Error when the
// subscription is refused or the upstream refuses it (an unknown pair, an
// exchange without streams); ErrSlow when deliver falls behind. Market
// data is public: no credential is needed.
func (h *Hub) Watch(ctx context.Context, exchange string, req Request, deliver func(msg []byte)) error {
	switch req.Channel {
	case ChannelBook:
		if req.Depth == 0 {
			req.Depth = exgate.DefaultStreamDepth
		}
		if req.Depth < 1 || req.Depth > exgate.MaxStreamDepth {
			return exgate.ParamError("depth", "depth must be an integer from 1 to %d, not %d", exgate.MaxStreamDepth, req.Depth)
		}
		req.Interval = ""
	case ChannelKlines:
		if req.Interval == "" {
			req.Interval = exgate.Interval1m
		}
		req.Depth = 0
	default:
		return exgate.ParamError("channel", "an in-process watch takes the book or klines channel, not %q", req.Channel)
	}
	req.Op = OpSubscribe
	ex, ok := h.opts.Exchanges[exchange]
	if !ok {
		return exgate.Errorf(exgate.CodeExchangeUnavailable, "exchange %q is not enabled on this gateway", exchange)
	}
	st, ok := exgate.Ability[exgate.Streamer](ex)
	if !ok {
		return exgate.Errorf(exgate.CodeNotImplemented, "streams are not available on %s through this gateway yet", exchange)
	}
	cred := exgate.Credential{Exchange: exchange}
	if err := h.checkSymbol(ctx, ex, cred, req.Symbol); err != nil {
		return err
	}
	w := &watcher{hub: h, limit: h.opts.QueueLimit, wake: make(chan struct{}, 1)}
	sub := &subscription{to: w, cred: cred, req: req}
	h.count(&h.watchers, 1)
	defer h.count(&h.watchers, -1)
	h.join(sub, st)
	defer h.leave(sub)
	var batch [][]byte
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-w.wake:
		}
		w.mu.Lock()
		batch, w.queue = w.queue, batch[:0]
		end := w.end
		w.mu.Unlock()
		if end != nil {
			return end
		}
		for i, msg := range batch {
			if ctx.Err() != nil {
				return nil
			}
			deliver(msg)
			batch[i] = nil
		}
	}
}

// watcher is the sink of an in-process Watch: a bounded queue drained by
// the Watch's own goroutine, so that the topic never waits on deliver.
type watcher struct {
	hub   *Hub
	limit int
	wake  chan struct{}

	mu    sync.Mutex
	queue [][]byte
	end   error
}

func (w *watcher) enqueue(msg []byte) {
	w.mu.Lock()
	switch {
	case w.end != nil:
	case len(w.queue) >= w.limit:
		w.queue, w.end = nil, fmt.Errorf("%w: more than %d messages pending", ErrSlow, w.limit)
		w.hub.slowClosed.Add(1)
	default:
		w.queue = append(w.queue, msg)
	}
	w.mu.Unlock()
	w.signal()
}

func (w *watcher) dropped(_ *subscription, e *exgate.Error) {
	w.mu.Lock()
	if w.end == nil {
		w.queue, w.end = nil, e
	}
	w.mu.Unlock()
	w.signal()
}

func (w *watcher) signal() { wake(w.wake) }
