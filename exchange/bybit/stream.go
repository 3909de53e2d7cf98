package bybit

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
	"github.com/exgate/exgate/exchange/internal/wsstream"
)

// The live streams (exgate.Streamer, docs/contract.md 2.5) over Bybit's
// WebSocket v5 (https://bybit-exchange.github.io/docs/v5/ws/connect): the
// public spot stream's orderbook and kline topics (stream_book.go,
// stream_klines.go) and the private stream's order topic after auth
// (stream_orders.go), one connection per Watch call.
// docs/exchanges/bybit.md "Streams" describes them.

// Bybit's WebSocket v5 endpoints. Source:
// https://bybit-exchange.github.io/docs/v5/ws/connect.
const (
	DefaultWSURL        = "wss://stream.bybit.com/v5/public/spot"
	DefaultWSPrivateURL = "wss://stream.bybit.com/v5/private"
)

var _ exgate.Streamer = (*Exchange)(nil)

// streamOptions are the adapter's stream settings with defaults applied.
type streamOptions struct {
	url, privateURL string
	ping            time.Duration
	backoff         wsstream.Backoff
}

func newStreamOptions(o Options) streamOptions {
	return streamOptions{
		url:        cmp.Or(o.WSURL, DefaultWSURL),
		privateURL: cmp.Or(o.WSPrivateURL, DefaultWSPrivateURL),
		ping:       rest.PositiveOr(o.WSPingInterval, 20*time.Second),
		backoff:    wsstream.Backoff{Min: o.WSBackoffMin, Max: o.WSBackoffMax},
	}
}

// runConfig is the reconnect loop's configuration for one stream.
func (e *Exchange) runConfig(name string) wsstream.Config {
	return wsstream.Config{Backoff: e.stream.backoff, Logger: e.log, Name: "bybit " + name}
}

// wsRequest is a client request: {"req_id", "op", "args"}.
type wsRequest struct {
	ReqID string `json:"req_id,omitempty"`
	Op    string `json:"op"`
	Args  []any  `json:"args,omitempty"`
}

// wsMessage is one server frame: the answer to a request (op, success,
// ret_msg) or a topic's push (topic, type, data).
type wsMessage struct {
	Op      string          `json:"op"`
	Success *bool           `json:"success"`
	RetMsg  string          `json:"ret_msg"`
	Topic   string          `json:"topic"`
	Type    string          `json:"type"`
	TS      int64           `json:"ts"`
	Data    json.RawMessage `json:"data"`
}

// parseWSMessage reads one server frame; it must be an answer or a push.
func parseWSMessage(b []byte) (wsMessage, error) {
	var m wsMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return wsMessage{}, fmt.Errorf("bybit stream message: %w", err)
	}
	if m.Topic == "" && m.Op == "" {
		return wsMessage{}, fmt.Errorf("bybit stream message without a topic or op: %q", rest.Truncate(b))
	}
	return m, nil
}

// wsSign is the private stream's auth signature: the lowercase hex
// HMAC-SHA256 of "GET/realtime" + expires (ms). Source:
// https://bybit-exchange.github.io/docs/v5/ws/connect ("Authentication").
func wsSign(secret string, expires int64) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("GET/realtime" + strconv.FormatInt(expires, 10)))
	return hex.EncodeToString(mac.Sum(nil))
}

// wsConn is one WebSocket connection to Bybit: a reader goroutine hands
// the frames (pongs left out) to msgs and ends the connection when nothing
// at all arrives for twice the ping interval; a pinger sends {"op":"ping"}
// every interval (Bybit asks for one every 20 s).
type wsConn struct {
	ws     *websocket.Conn
	e      *Exchange
	msgs   chan wsMessage
	cancel context.CancelFunc
	wg     sync.WaitGroup
	nextID atomic.Int64
	// err is why the reader stopped; read it after msgs is closed.
	err error
}

// dial opens a connection to url and starts its reader and pinger.
func (e *Exchange) dial(ctx context.Context, url string) (*wsConn, error) {
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(dctx, url, nil)
	if err != nil {
		return nil, fmt.Errorf("bybit stream dial %s: %w", url, err)
	}
	ws.SetReadLimit(16 << 20)
	ctx, stop := context.WithCancel(ctx)
	c := &wsConn{ws: ws, e: e, msgs: make(chan wsMessage, 256), cancel: stop}
	c.wg.Add(2)
	go c.read(ctx)
	go c.ping(ctx)
	return c, nil
}

// close ends the connection and waits for its goroutines.
func (c *wsConn) close() {
	c.cancel()
	c.ws.CloseNow()
	c.wg.Wait()
}

func (c *wsConn) read(ctx context.Context) {
	defer c.wg.Done()
	defer close(c.msgs)
	silent := 2 * c.e.stream.ping
	for {
		rctx, cancel := context.WithTimeout(ctx, silent)
		typ, b, err := c.ws.Read(rctx)
		timedOut := rctx.Err() != nil && ctx.Err() == nil
		cancel()
		switch {
		case timedOut:
			c.err = fmt.Errorf("bybit stream silent for %v", silent)
			return
		case err != nil:
			c.err = fmt.Errorf("bybit stream read: %w", err)
			return
		case typ != websocket.MessageText:
			continue
		}
		m, err := parseWSMessage(b)
		if err != nil {
			c.e.log.WarnContext(ctx, "bybit stream message unreadable; ignored", "err", err)
			continue
		}
		if m.Op == "ping" || m.Op == "pong" {
			continue
		}
		select {
		case c.msgs <- m:
		case <-ctx.Done():
			return
		}
	}
}

func (c *wsConn) ping(ctx context.Context) {
	defer c.wg.Done()
	t := time.NewTicker(c.e.stream.ping)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := c.send(ctx, wsRequest{Op: "ping"}); err != nil {
				return
			}
		}
	}
}

// send writes one request.
func (c *wsConn) send(ctx context.Context, r wsRequest) error {
	if r.Op != "ping" {
		r.ReqID = strconv.FormatInt(c.nextID.Add(1), 10)
	}
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("bybit stream request: %w", err)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := c.ws.Write(wctx, websocket.MessageText, b); err != nil {
		return fmt.Errorf("bybit stream write: %w", err)
	}
	return nil
}

// next returns the next frame, or the reason the connection ended.
func (c *wsConn) next(ctx context.Context) (wsMessage, error) {
	select {
	case <-ctx.Done():
		return wsMessage{}, ctx.Err()
	case m, ok := <-c.msgs:
		if !ok {
			return wsMessage{}, c.err
		}
		return m, nil
	}
}

// request sends op with args and waits (at most twice the ping interval)
// for its answer; pushes that arrive meanwhile are kept in early. A
// refused auth is EXCHANGE_AUTH_FAILED (permanent); any other refusal is
// transient.
func (c *wsConn) request(ctx context.Context, op string, args []any, early *[]wsMessage) error {
	if err := c.send(ctx, wsRequest{Op: op, Args: args}); err != nil {
		return err
	}
	wait, cancel := context.WithTimeout(ctx, 2*c.e.stream.ping)
	defer cancel()
	for {
		m, err := c.next(wait)
		if err != nil {
			if wait.Err() != nil && ctx.Err() == nil {
				return fmt.Errorf("bybit stream: no answer to %s within %v", op, 2*c.e.stream.ping)
			}
			return err
		}
		if m.Op != op {
			if m.Topic != "" && early != nil {
				*early = append(*early, m)
			}
			continue
		}
		if m.Success != nil && *m.Success {
			return nil
		}
		if op == "auth" {
			return &exgate.Error{Code: exgate.CodeExchangeAuthFailed, Detail: "bybit refused the stream's authentication: " + m.RetMsg}
		}
		return fmt.Errorf("bybit refused the %s %v: %s", op, args, m.RetMsg)
	}
}

// authenticate signs the private connection in: expires 10 s ahead on
// Bybit's clock.
func (c *wsConn) authenticate(ctx context.Context, cred exgate.Credential) error {
	expires := c.e.c.serverNow().Add(10 * time.Second).UnixMilli()
	return c.request(ctx, "auth", []any{cred.Key, expires, wsSign(cred.Secret, expires)}, nil)
}
