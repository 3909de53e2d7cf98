package gateio

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha512"
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

// The live streams (exgate.Streamer, docs/contract.md 2.5) over Gate's
// Spot WebSocket v4 (Gate API v4 docs, "Spot WebSocket v4",
// https://www.gate.io/docs/developers/apiv4/ws/en/): spot.order_book_update
// (stream_book.go), spot.candlesticks (stream_klines.go) and spot.orders
// (stream_orders.go), one connection per Watch call. docs/exchanges/gateio.md
// "Streams" describes them.

// DefaultWSURL is Gate's production Spot WebSocket v4 endpoint.
const DefaultWSURL = "wss://api.gateio.ws/ws/v4/"

var _ exgate.Streamer = (*Exchange)(nil)

// streamOptions are the stream settings of Options with defaults applied.
type streamOptions struct {
	url        string
	ping       time.Duration
	backoff    wsstream.Backoff
	klineGrace time.Duration
}

func newStreamOptions(o Options) streamOptions {
	return streamOptions{
		url:        cmp.Or(o.WSURL, DefaultWSURL),
		ping:       rest.PositiveOr(o.WSPingInterval, 10*time.Second),
		klineGrace: rest.PositiveOr(o.KlineCloseGrace, 10*time.Second),
		backoff:    wsstream.Backoff{Min: o.WSBackoffMin, Max: o.WSBackoffMax},
	}
}

// runConfig is the reconnect loop's configuration for one stream.
func (e *Exchange) runConfig(name string) wsstream.Config {
	return wsstream.Config{Backoff: e.stream.backoff, Logger: e.log, Name: "gateio " + name}
}

// wsRequest is a client request (Gate WS docs, "Client Request"): time in
// seconds (within 60 s of Gate's clock), the channel, the event
// (subscribe, unsubscribe; none for spot.ping), the channel's payload and,
// for private channels, auth.
type wsRequest struct {
	Time    int64    `json:"time"`
	ID      int64    `json:"id,omitempty"`
	Channel string   `json:"channel"`
	Event   string   `json:"event,omitempty"`
	Payload []string `json:"payload,omitempty"`
	Auth    *wsAuth  `json:"auth,omitempty"`
}

// wsAuth authenticates a request to a private channel.
type wsAuth struct {
	Method string `json:"method"`
	KEY    string `json:"KEY"`
	SIGN   string `json:"SIGN"`
}

// wsSign is the SIGN of a private channel request: the lowercase hex
// HMAC-SHA512, keyed by the secret, of
// "channel=<channel>&event=<event>&time=<time>" (Gate WS docs,
// "Authentication").
func wsSign(secret, channel, event string, t int64) string {
	mac := hmac.New(sha512.New, []byte(secret))
	mac.Write([]byte("channel=" + channel + "&event=" + event + "&time=" + strconv.FormatInt(t, 10)))
	return hex.EncodeToString(mac.Sum(nil))
}

// wsMessage is one server message (Gate WS docs, "Server Response"):
// the answer to a request (error, or result {"status":"success"}) or an
// update (event "update", result channel-specific).
type wsMessage struct {
	Time    int64           `json:"time"`
	ID      int64           `json:"id"`
	Channel string          `json:"channel"`
	Event   string          `json:"event"`
	Error   *wsError        `json:"error"`
	Result  json.RawMessage `json:"result"`
}

// wsError is Gate's error object: code 1 invalid request body, 2 invalid
// argument, 3 server side error, 4 authentication fail.
type wsError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// wsAuthFailed is the error code of a refused key or signature.
const wsAuthFailed = 4

// parseWSMessage reads one server frame.
func parseWSMessage(b []byte) (wsMessage, error) {
	var m wsMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return wsMessage{}, fmt.Errorf("gateio stream message: %w", err)
	}
	if m.Channel == "" {
		return wsMessage{}, fmt.Errorf("gateio stream message without a channel: %q", rest.Truncate(b))
	}
	return m, nil
}

// refused turns the error answer to a subscription into the Watch error:
// a refused key is EXCHANGE_AUTH_FAILED (permanent); anything else is
// transient and retried.
func refused(channel string, e *wsError) error {
	if e.Code == wsAuthFailed {
		return &exgate.Error{Code: exgate.CodeExchangeAuthFailed,
			Detail: fmt.Sprintf("gateio refused the %s subscription: %s (code %d)", channel, e.Message, e.Code)}
	}
	return fmt.Errorf("gateio refused the %s subscription: %s (code %d)", channel, e.Message, e.Code)
}

// wsConn is one WebSocket connection to Gate: a reader goroutine hands the
// messages (spot.pong left out) to msgs and ends the connection when
// nothing at all arrives for twice the ping interval; a pinger sends
// spot.ping every interval (Gate WS docs, "Application ping pong"), whose
// spot.pong answer keeps a quiet but healthy connection reading.
type wsConn struct {
	ws     *websocket.Conn
	e      *Exchange
	msgs   chan wsMessage
	cancel context.CancelFunc
	wg     sync.WaitGroup
	nextID atomic.Int64
	// err is why the reader stopped; read it after msgs is closed.
	err error
	// unanswered is set when a subscription got no answer in time;
	// ackTimer is its deadline.
	unanswered atomic.Bool
	ackTimer   *time.Timer
}

// dial opens a connection and starts its reader and pinger.
func (e *Exchange) dial(ctx context.Context) (*wsConn, error) {
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(dctx, e.stream.url, nil)
	if err != nil {
		return nil, fmt.Errorf("gateio stream dial %s: %w", e.stream.url, err)
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
			c.err = fmt.Errorf("gateio stream silent for %v", silent)
			return
		case c.unanswered.Load():
			c.err = fmt.Errorf("gateio stream: no answer to the subscription within %v", silent)
			return
		case err != nil:
			c.err = fmt.Errorf("gateio stream read: %w", err)
			return
		case typ != websocket.MessageText:
			continue
		}
		m, err := parseWSMessage(b)
		if err != nil {
			c.e.log.WarnContext(ctx, "gateio stream message unreadable; ignored", "err", err)
			continue
		}
		if m.Channel == "spot.pong" {
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
			if err := c.send(ctx, wsRequest{Channel: "spot.ping"}); err != nil {
				return
			}
		}
	}
}

// send writes one request, stamped with Gate's time (the clock offset the
// REST client learned) and a request id.
func (c *wsConn) send(ctx context.Context, r wsRequest) error {
	if r.Time == 0 {
		r.Time = c.e.c.serverNow().Unix()
	}
	r.ID = c.nextID.Add(1)
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("gateio stream request: %w", err)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := c.ws.Write(wctx, websocket.MessageText, b); err != nil {
		return fmt.Errorf("gateio stream write: %w", err)
	}
	return nil
}

// subscribe sends a subscribe request, signed with cred when it is not
// nil. Unanswered for twice the ping interval (answered is not called),
// the connection is closed: the request was lost.
func (c *wsConn) subscribe(ctx context.Context, channel string, payload []string, cred *exgate.Credential) error {
	r := wsRequest{Time: c.e.c.serverNow().Unix(), Channel: channel, Event: "subscribe", Payload: payload}
	if cred != nil {
		r.Auth = &wsAuth{Method: "api_key", KEY: cred.Key, SIGN: wsSign(cred.Secret, channel, r.Event, r.Time)}
	}
	c.ackTimer = time.AfterFunc(2*c.e.stream.ping, func() {
		c.unanswered.Store(true)
		c.ws.CloseNow()
	})
	return c.send(ctx, r)
}

// answered reads m as the answer to the subscription on channel (see
// ack) and, when it is, lifts the answer deadline.
func (c *wsConn) answered(m wsMessage, channel string) (bool, error) {
	done, err := ack(m, channel)
	if done && c.ackTimer != nil {
		c.ackTimer.Stop()
	}
	return done, err
}

// next returns the next message, or the reason the connection ended.
func (c *wsConn) next(ctx context.Context, timer <-chan time.Time) (wsMessage, bool, error) {
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

// ack reads a subscription's answer: nil when accepted, the refusal, or
// nothing when m is not the answer to a subscribe on channel.
func ack(m wsMessage, channel string) (done bool, err error) {
	if m.Channel != channel || m.Event != "subscribe" {
		return false, nil
	}
	if m.Error != nil {
		return true, refused(channel, m.Error)
	}
	return true, nil
}
