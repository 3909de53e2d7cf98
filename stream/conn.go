package stream

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/exgate/exgate"
)

// conn is one client's WebSocket: a reader handling requests, a writer
// draining the outbound queue, a pinger.
type conn struct {
	hub  *Hub
	ws   wsConn
	cred exgate.Credential

	mu    sync.Mutex
	queue [][]byte
	spare [][]byte
	// closeCode and closeReason are set when the connection must close
	// (a client too far behind); the writer closes it.
	closeCode   websocket.StatusCode
	closeReason string
	wake        chan struct{}
	subs        map[subKey]*subscription
	ended       bool
	// check, when set, runs every CheckInterval (Hub.ServeChecked).
	check func(ctx context.Context) error
	// The client's frame budget: tokens left at last, refused frames in
	// a row.
	tokens  float64
	last    time.Time
	refused int
}

func newConn(h *Hub, ws wsConn, cred exgate.Credential) *conn {
	return &conn{hub: h, ws: ws, cred: cred, wake: make(chan struct{}, 1), subs: map[subKey]*subscription{}}
}

// enqueue queues msg for the writer; a client with QueueLimit messages
// pending is closed with 1008 instead.
func (c *conn) enqueue(msg []byte) {
	c.mu.Lock()
	if c.ended || c.closeReason != "" {
		c.mu.Unlock()
		return
	}
	if len(c.queue) >= c.hub.opts.QueueLimit {
		c.mu.Unlock()
		c.hub.slowClosed.Add(1)
		c.closeWith(websocket.StatusPolicyViolation, fmt.Sprintf("more than %d messages pending: the client reads too slowly", c.hub.opts.QueueLimit))
		return
	}
	c.queue = append(c.queue, msg)
	c.mu.Unlock()
	c.wakeWriter()
}

// closeWith has the writer drop what is queued and close the connection
// with code and reason once its current write is done.
func (c *conn) closeWith(code websocket.StatusCode, reason string) {
	c.mu.Lock()
	if c.closeReason == "" {
		c.closeCode, c.closeReason = code, reason
		c.queue = nil
	}
	c.mu.Unlock()
	c.wakeWriter()
}

func (c *conn) wakeWriter() { wake(c.wake) }

// wake signals ch (a channel of capacity one) without waiting: a signal
// already pending is enough.
func wake(ch chan<- struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func (c *conn) run(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); defer cancel(); c.write(ctx) }()
	go func() { defer wg.Done(); c.ping(ctx) }() // it ends the connection through the socket or the writer
	if c.check != nil {
		wg.Add(1)
		go func() { defer wg.Done(); c.checkLoop(ctx) }()
	}
	c.read(ctx)
	cancel()
	c.mu.Lock()
	c.ended = true
	subs := make([]*subscription, 0, len(c.subs))
	for _, s := range c.subs {
		subs = append(subs, s)
	}
	clear(c.subs)
	c.mu.Unlock()
	for _, s := range subs {
		c.hub.leave(s)
	}
	_ = c.ws.CloseNow()
	wg.Wait()
}

func (c *conn) write(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.wake:
		}
		c.mu.Lock()
		batch := c.queue
		c.queue = c.spare[:0]
		code, reason := c.closeCode, c.closeReason
		c.mu.Unlock()
		// One deadline for the batch: a timer per frame costs more
		// than the frame's write at 1000 clients.
		wctx, cancel := context.WithTimeout(ctx, c.hub.opts.WriteTimeout)
		for i, msg := range batch {
			err := c.ws.Write(wctx, websocket.MessageText, msg)
			batch[i] = nil
			if err != nil {
				cancel()
				_ = c.ws.CloseNow()
				return
			}
		}
		cancel()
		c.mu.Lock()
		if cap(batch) <= 4*c.hub.opts.QueueLimit {
			c.spare = batch[:0]
		}
		c.mu.Unlock()
		if reason != "" {
			c.hub.log.InfoContext(ctx, "stream: closing a slow client", "apiKey", c.cred.ClientAPIKey, "reason", reason)
			_ = c.ws.Close(code, reason)
			return
		}
	}
}

// ping pings every PingInterval and drops a peer that has not answered
// within PongTimeout.
func (c *conn) ping(ctx context.Context) {
	t := time.NewTicker(c.hub.opts.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if check := c.hub.opts.Revalidate; check != nil {
			if err := check(ctx, c.cred); err != nil {
				c.hub.log.InfoContext(ctx, "stream: closing a connection whose key no longer stands", "apiKey", c.cred.ClientAPIKey, "err", err)
				c.closeWith(websocket.StatusPolicyViolation, "the API key or the exchange key was revoked or removed")
				return
			}
		}
		pctx, cancel := context.WithTimeout(ctx, c.hub.opts.PongTimeout)
		err := c.ws.Ping(pctx)
		cancel()
		if err != nil {
			_ = c.ws.CloseNow()
			return
		}
	}
}

// checkLoop runs the connection's check every CheckInterval and closes
// the connection with 1008 when it fails.
func (c *conn) checkLoop(ctx context.Context) {
	t := time.NewTicker(c.hub.opts.CheckInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := c.check(ctx); err != nil {
			c.hub.log.InfoContext(ctx, "stream: closing a connection no longer allowed", "apiKey", c.cred.ClientAPIKey, "err", err)
			c.closeWith(websocket.StatusPolicyViolation, exgate.Clip(err.Error(), 100))
			return
		}
	}
}

// allowFrame takes one frame from the client's budget (FrameRate a
// second, FrameBurst at once).
func (c *conn) allowFrame() bool {
	now := c.hub.clock.Now()
	o := c.hub.opts
	if c.last.IsZero() {
		c.tokens = float64(o.FrameBurst)
	} else {
		c.tokens = min(float64(o.FrameBurst), c.tokens+now.Sub(c.last).Seconds()*float64(o.FrameRate))
	}
	c.last = now
	if c.tokens < 1 {
		return false
	}
	c.tokens--
	return true
}

func (c *conn) read(ctx context.Context) {
	for {
		typ, frame, err := c.ws.Read(ctx)
		if err != nil {
			return
		}
		if !c.allowFrame() {
			// Over the frame budget: refused, and a client that keeps on
			// is closed, so that no client can drive subscribe churn.
			c.refused++
			if c.refused > maxRefusedFrames {
				// The writer closes the connection; what is read until
				// then is dropped.
				c.closeWith(websocket.StatusPolicyViolation, "too many frames: send at most "+fmt.Sprint(c.hub.opts.FrameRate)+" a second")
				continue
			}
			c.send(errorOf(Request{}, exgate.Errorf(exgate.CodeRateLimited, "a connection may send at most %d frames a second (bursts of %d); this one was ignored", c.hub.opts.FrameRate, c.hub.opts.FrameBurst)))
			continue
		}
		c.refused = 0
		if typ != websocket.MessageText {
			c.send(errorOf(Request{}, exgate.Errorf(exgate.CodeInvalidParameter, "frames must be JSON text frames, not binary")))
			continue
		}
		c.handle(ctx, frame)
	}
}

func (c *conn) send(a ack) { c.enqueue(encodeAck(a)) }

// handle answers one client frame.
func (c *conn) handle(ctx context.Context, frame []byte) {
	req, perr := ParseRequest(frame)
	if perr != nil {
		c.send(errorOf(req, perr))
		return
	}
	key := req.key()
	if req.Op == OpUnsubscribe {
		c.mu.Lock()
		sub, ok := c.subs[key]
		delete(c.subs, key)
		c.mu.Unlock()
		if !ok {
			c.send(errorOf(req, exgate.ParamError("channel", "not subscribed to this %s channel", req.Channel)))
			return
		}
		c.hub.leave(sub)
		c.send(ackOf(OpUnsubscribed, req))
		return
	}
	c.mu.Lock()
	_, dup := c.subs[key]
	n := len(c.subs)
	c.mu.Unlock()
	switch {
	case dup:
		c.send(errorOf(req, exgate.ParamError("channel", "already subscribed to this %s channel; unsubscribe first to change it", req.Channel)))
		return
	case n >= c.hub.opts.MaxSubscriptions:
		c.send(errorOf(req, exgate.Errorf(exgate.CodeRateLimited, "a connection holds at most %d subscriptions", c.hub.opts.MaxSubscriptions)))
		return
	}
	ex, ok := c.hub.opts.Exchanges[c.cred.Exchange]
	if !ok {
		c.send(errorOf(req, exgate.Errorf(exgate.CodeExchangeUnavailable, "exchange %q is not enabled on this gateway", c.cred.Exchange)))
		return
	}
	st, ok := exgate.Ability[exgate.Streamer](ex)
	if !ok {
		c.send(errorOf(req, exgate.Errorf(exgate.CodeNotImplemented, "streams are not available on %s through this gateway yet", c.cred.Exchange)))
		return
	}
	if req.Channel != ChannelOrders {
		if err := c.hub.checkSymbol(ctx, ex, c.cred, req.Symbol); err != nil {
			c.send(errorOf(req, err))
			return
		}
	}
	sub := &subscription{to: c, cred: c.cred, req: req}
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		return
	}
	c.subs[key] = sub
	c.mu.Unlock()
	c.send(ackOf(OpSubscribed, req))
	c.hub.join(sub, st)
}

// checkSymbol refuses a pair the exchange does not list, naming the
// inverse pair when that one is listed (docs/contract.md 2.3), when the
// adapter can list its markets; otherwise the Watch refuses it.
func (h *Hub) checkSymbol(ctx context.Context, ex exgate.Exchange, cred exgate.Credential, sym exgate.Symbol) *exgate.Error {
	om, ok := exgate.Ability[exgate.OrderManager](ex)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, h.opts.SymbolTimeout)
	defer cancel()
	_, err := exgate.ListedSymbol(ctx, om, cred, sym)
	if e, ok := errors.AsType[*exgate.Error](err); ok && e.Code == exgate.CodeUnknownSymbol {
		return e
	}
	return nil // listed, or the Watch will tell
}

// dropped ends sub after its upstream failed for good, telling the client.
func (c *conn) dropped(sub *subscription, e *exgate.Error) {
	c.mu.Lock()
	if c.subs[sub.req.key()] == sub {
		delete(c.subs, sub.req.key())
	}
	c.mu.Unlock()
	c.send(errorOf(sub.req, e))
}
