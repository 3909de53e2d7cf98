package okx

import (
	"context"
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

// The live streams (exgate.Streamer, docs/contract.md 2.5) over OKX's
// WebSocket API v5 (OKX API v5 docs, "WebSocket",
// https://www.okx.com/docs-v5/en/#overview-websocket): the books channel
// on /ws/v5/public (stream_book.go), candle<bar> on /ws/v5/business
// (stream_klines.go) and orders on /ws/v5/private after a login
// (stream_orders.go), one connection per Watch call. docs/exchanges/okx.md
// "Streams" describes them.

var _ exgate.Streamer = (*Exchange)(nil)

// runConfig is the reconnect loop's configuration for one stream.
func (e *Exchange) runConfig(name string) wsstream.Config {
	return wsstream.Config{Backoff: wsstream.Backoff{Min: e.stream.backoff[0], Max: e.stream.backoff[1]}, Logger: e.log, Name: "okx " + name}
}

// wsArg is a channel's argument in requests and pushes.
type wsArg struct {
	Channel  string `json:"channel"`
	InstID   string `json:"instId,omitempty"`
	InstType string `json:"instType,omitempty"`
}

// wsMessage is one server message: an event (login, subscribe,
// unsubscribe, error) or a push (arg and data; action for books).
type wsMessage struct {
	Event  string          `json:"event"`
	Code   string          `json:"code"`
	Msg    string          `json:"msg"`
	Arg    wsArg           `json:"arg"`
	Action string          `json:"action"`
	Data   json.RawMessage `json:"data"`
}

// parseWSMessage reads one server frame (other than "pong").
func parseWSMessage(b []byte) (wsMessage, error) {
	var m wsMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return wsMessage{}, fmt.Errorf("okx stream message: %w", err)
	}
	if m.Event == "" && m.Arg.Channel == "" {
		return wsMessage{}, fmt.Errorf("okx stream message without an event or channel: %q", rest.Truncate(b))
	}
	return m, nil
}

// Login error codes that retrying cannot mend: invalid apiKey (60005),
// invalid sign (60007), login failure (60009), wrong passphrase (60024).
// Source: OKX API v5 docs, "Error Code", WebSocket.
var loginRefusals = map[string]bool{"60005": true, "60007": true, "60009": true, "60024": true}

// wsConn is one WebSocket connection: a reader goroutine hands the
// messages ("pong" left out) to msgs and ends the connection when nothing
// at all arrives for twice the ping interval; a pinger sends "ping" every
// interval (OKX closes a connection idle for 30 s: "ping"/"pong", OKX API
// v5 docs, "WebSocket", connection).
type wsConn struct {
	ws     *websocket.Conn
	e      *Exchange
	msgs   chan wsMessage
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// err is why the reader stopped; read it after msgs is closed.
	err error
	// unanswered is set when a request got no answer in time.
	unanswered atomic.Bool
	ackTimer   *time.Timer
}

// dial opens a connection to the endpoint path (public, private or
// business) and starts its reader and pinger.
func (e *Exchange) dial(ctx context.Context, path string) (*wsConn, error) {
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	u := e.stream.url + "/" + path
	ws, _, err := websocket.Dial(dctx, u, nil)
	if err != nil {
		return nil, fmt.Errorf("okx stream dial %s: %w", u, err)
	}
	ws.SetReadLimit(16 << 20)
	ctx, stop := context.WithCancel(ctx)
	c := &wsConn{ws: ws, e: e, msgs: make(chan wsMessage, 64), cancel: stop}
	c.wg.Add(2)
	go c.read(ctx)
	go c.ping(ctx)
	return c, nil
}

// close ends the connection and waits for its goroutines.
func (c *wsConn) close() {
	if c.ackTimer != nil {
		c.ackTimer.Stop()
	}
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
			c.err = fmt.Errorf("okx stream silent for %v", silent)
			return
		case c.unanswered.Load():
			c.err = fmt.Errorf("okx stream: no answer to a request within %v", silent)
			return
		case err != nil:
			c.err = fmt.Errorf("okx stream read: %w", err)
			return
		case typ != websocket.MessageText || string(b) == "pong":
			continue
		}
		m, err := parseWSMessage(b)
		if err != nil {
			c.e.log.WarnContext(ctx, "okx stream message unreadable; ignored", "err", err)
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
			if c.write(ctx, []byte("ping")) != nil {
				return
			}
		}
	}
}

func (c *wsConn) write(ctx context.Context, b []byte) error {
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := c.ws.Write(wctx, websocket.MessageText, b); err != nil {
		return fmt.Errorf("okx stream write: %w", err)
	}
	return nil
}

// send writes one request {"op":op,"args":[arg]}; unanswered (answered
// not called) for twice the ping interval, the connection is closed: the
// request was lost.
func (c *wsConn) send(ctx context.Context, op string, arg any) error {
	b, err := json.Marshal(map[string]any{"op": op, "args": []any{arg}})
	if err != nil {
		return fmt.Errorf("okx stream request: %w", err)
	}
	if c.ackTimer != nil {
		c.ackTimer.Stop()
	}
	c.ackTimer = time.AfterFunc(2*c.e.stream.ping, func() {
		c.unanswered.Store(true)
		c.ws.CloseNow()
	})
	return c.write(ctx, b)
}

// answered lifts the answer deadline of the last request.
func (c *wsConn) answered() {
	if c.ackTimer != nil {
		c.ackTimer.Stop()
	}
}

// next returns the next message, or the reason the connection ended; or
// fired when timer fires first.
func (c *wsConn) next(ctx context.Context, timer <-chan time.Time) (m wsMessage, fired bool, err error) {
	select {
	case <-ctx.Done():
		return wsMessage{}, false, ctx.Err()
	case <-timer:
		return wsMessage{}, true, nil
	case m, ok := <-c.msgs:
		if !ok {
			return wsMessage{}, false, c.err
		}
		return m, false, nil
	}
}

// login logs the connection in with cred (OKX API v5 docs, "WebSocket
// Login": timestamp in Unix seconds, sign over timestamp + "GET" +
// "/users/self/verify") and waits for the answer. A refused key is
// EXCHANGE_AUTH_FAILED (permanent); anything else is retried.
func (c *wsConn) login(ctx context.Context, cred exgate.Credential) error {
	ts := strconv.FormatInt(c.e.c.serverNow().Unix(), 10)
	err := c.send(ctx, "login", map[string]string{"apiKey": cred.Key, "passphrase": cred.Passphrase, "timestamp": ts,
		"sign": sign(cred.Secret, ts, "GET", "/users/self/verify", nil)})
	if err != nil {
		return err
	}
	for {
		m, _, err := c.next(ctx, nil)
		if err != nil {
			return err
		}
		switch m.Event {
		case "login":
			c.answered()
			if m.Code != "" && m.Code != "0" {
				return fmt.Errorf("okx stream login answered code %s: %s", m.Code, m.Msg)
			}
			return nil
		case "error":
			c.answered()
			if loginRefusals[m.Code] {
				return &exgate.Error{Code: exgate.CodeExchangeAuthFailed, Detail: fmt.Sprintf("okx refused the stream login: %s (code %s)", m.Msg, m.Code)}
			}
			c.e.c.learned.Store(false) // 60004/60006: a clock off by more than 30 s
			return fmt.Errorf("okx stream login refused: %s (code %s)", m.Msg, m.Code)
		}
	}
}

// ack reads m as the answer to a subscribe or unsubscribe of arg's
// channel: done when it is, with the refusal as err.
func (c *wsConn) ack(m wsMessage, op string, arg wsArg) (done bool, err error) {
	switch {
	case m.Event == "error":
		c.answered()
		return true, fmt.Errorf("okx refused the %s subscription: %s (code %s)", arg.Channel, m.Msg, m.Code)
	case m.Event == op && m.Arg.Channel == arg.Channel && m.Arg.InstID == arg.InstID:
		c.answered()
		return true, nil
	}
	return false, nil
}
