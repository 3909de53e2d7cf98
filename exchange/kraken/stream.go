package kraken

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
	"github.com/exgate/exgate/exchange/internal/wsstream"
)

// Live streams (exgate.Streamer, docs/contract.md 2.5) over Kraken's
// WebSocket API v2 (docs.kraken.com "Spot WebSocket API v2"): the public
// endpoint for the book and ohlc channels, the authenticated one for the
// executions channel with a token from GetWebSocketsToken.
// docs/exchanges/kraken.md, section Streams, describes the checks and the
// catch-up.

// Kraken's WebSocket v2 endpoints (docs.kraken.com "Spot WebSocket API":
// Endpoints).
const (
	DefaultWSURL     = "wss://ws.kraken.com/v2"
	DefaultWSAuthURL = "wss://ws-auth.kraken.com/v2"
)

// Stream timings. Kraken sends a heartbeat about once a second on a
// connection with a subscription (docs.kraken.com "Heartbeat (v2)"), so a
// connection silent for defaultWSReadTimeout is dead.
const (
	defaultWSReadTimeout  = 5 * time.Second
	defaultWSPingInterval = 30 * time.Second
	wsHandshakeTimeout    = 10 * time.Second
	wsWriteTimeout        = 5 * time.Second
	// wsReadLimit bounds one message (a depth-100 book snapshot is about
	// 10 kB; an executions snapshot of many open orders is larger).
	wsReadLimit = 4 << 20
)

var _ exgate.Streamer = (*Exchange)(nil)

// streamOptions are the resolved stream options of an Exchange.
type streamOptions struct {
	url, authURL string
	readTimeout  time.Duration
	pingInterval time.Duration
	backoff      wsstream.Backoff
	sleep        func(ctx context.Context, d time.Duration) error
}

func newStreamOptions(o Options) streamOptions {
	return streamOptions{
		url:          cmp.Or(o.WSURL, DefaultWSURL),
		authURL:      cmp.Or(o.WSAuthURL, DefaultWSAuthURL),
		readTimeout:  rest.PositiveOr(o.WSReadTimeout, defaultWSReadTimeout),
		pingInterval: rest.PositiveOr(o.WSPingInterval, defaultWSPingInterval),
		backoff:      wsstream.Backoff{Min: o.WSBackoffMin, Max: o.WSBackoffMax},
	}
}

// run is wsstream.Run with the adapter's backoff and logger.
func (e *Exchange) run(ctx context.Context, name string, session func(ctx context.Context, s *wsstream.Session) error) error {
	return wsstream.Run(ctx, wsstream.Config{Backoff: e.ws.backoff, Sleep: e.ws.sleep, Logger: e.log, Name: "kraken " + name}, session)
}

// wsMessage is the envelope of every Kraken v2 message: a method answer
// (subscribe, unsubscribe, pong) with success and error, or channel data
// (book, ohlc, executions, heartbeat, status) with type and data.
type wsMessage struct {
	Method  string          `json:"method"`
	Success *bool           `json:"success"`
	Error   string          `json:"error"`
	Channel string          `json:"channel"`
	Type    string          `json:"type"`
	Data    json.RawMessage `json:"data"`
	ReqID   int64           `json:"req_id"`
	Result  struct {
		Channel string `json:"channel"`
		Symbol  string `json:"symbol"`
	} `json:"result"`
}

// parseMessage parses one message's envelope.
func parseMessage(b []byte) (wsMessage, error) {
	var m wsMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return wsMessage{}, fmt.Errorf("kraken ws: unparseable message: %w", err)
	}
	if m.Method == "" && m.Channel == "" {
		return wsMessage{}, errors.New("kraken ws: a message with neither method nor channel")
	}
	return m, nil
}

// subscribeRequest is a v2 subscribe or unsubscribe request.
type subscribeRequest struct {
	Method string          `json:"method"`
	Params subscribeParams `json:"params"`
	ReqID  int64           `json:"req_id,omitempty"`
}

type subscribeParams struct {
	Channel    string   `json:"channel"`
	Symbol     []string `json:"symbol,omitempty"`
	Depth      int      `json:"depth,omitempty"`
	Interval   int      `json:"interval,omitempty"`
	Snapshot   *bool    `json:"snapshot,omitempty"`
	Token      string   `json:"token,omitempty"`
	SnapOrders *bool    `json:"snap_orders,omitempty"`
	SnapTrades *bool    `json:"snap_trades,omitempty"`
}

func ptr[T any](v T) *T { return &v }

// wsConn is one connection to a Kraken v2 endpoint: a reader goroutine
// hands its messages to in, a pinger sends Kraken's ping.
type wsConn struct {
	ws   *websocket.Conn
	in   chan wsRead
	stop func()
}

// wsRead is what the reader got: a message or the error that ended the
// connection (then the last value).
type wsRead struct {
	msg wsMessage
	err error
}

// dial connects to url; the connection lives until close or ctx ends.
// dialPair looks sym up among the markets and connects to the public
// WebSocket, for a market channel of that pair.
func (e *Exchange) dialPair(ctx context.Context, sym exgate.Symbol) (*market, *wsConn, error) {
	m, err := e.loadMarkets(ctx)
	if err != nil {
		return nil, nil, err
	}
	mk, err := m.market(sym)
	if err != nil {
		return nil, nil, err
	}
	c, err := e.dial(ctx, e.ws.url)
	return mk, c, err
}

func (e *Exchange) dial(ctx context.Context, url string) (*wsConn, error) {
	hctx, cancel := context.WithTimeout(ctx, wsHandshakeTimeout)
	defer cancel()
	ws, resp, err := websocket.Dial(hctx, url, &websocket.DialOptions{HTTPHeader: map[string][]string{"User-Agent": {userAgent}}})
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("kraken ws: connect %s: HTTP %d: %w", url, resp.StatusCode, err)
		}
		return nil, fmt.Errorf("kraken ws: connect %s: %w", url, err)
	}
	ws.SetReadLimit(wsReadLimit)
	cctx, stop := context.WithCancel(ctx)
	c := &wsConn{ws: ws, in: make(chan wsRead, 64)}
	var wg sync.WaitGroup
	wg.Go(func() { c.read(cctx, e.ws.readTimeout) })
	wg.Go(func() {
		t := time.NewTicker(e.ws.pingInterval)
		defer t.Stop()
		for {
			select {
			case <-cctx.Done():
				return
			case <-t.C:
				// Kraken's application-level ping (docs.kraken.com
				// "Ping (v2)"); its pong also counts as traffic.
				if c.send(cctx, map[string]string{"method": "ping"}) != nil {
					return
				}
			}
		}
	})
	c.stop = func() {
		stop()
		ws.CloseNow()
		wg.Wait()
	}
	return c, nil
}

func (c *wsConn) close() { c.stop() }

func (c *wsConn) send(ctx context.Context, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, wsWriteTimeout)
	defer cancel()
	if err := c.ws.Write(wctx, websocket.MessageText, b); err != nil {
		return fmt.Errorf("kraken ws: write: %w", err)
	}
	return nil
}

// read hands every message other than a heartbeat, a status or a pong to
// c.in, until an error: a connection silent for timeout is dead, a
// refused request is a subscribeError.
func (c *wsConn) read(ctx context.Context, timeout time.Duration) {
	for {
		rctx, cancel := context.WithTimeout(ctx, timeout)
		_, b, err := c.ws.Read(rctx)
		timedOut := rctx.Err() != nil && ctx.Err() == nil
		cancel()
		var r wsRead
		switch {
		case err != nil && timedOut:
			r.err = fmt.Errorf("kraken ws: nothing received for %v: %w", timeout, err)
		case err != nil:
			r.err = fmt.Errorf("kraken ws: read: %w", err)
		default:
			r.msg, r.err = parseMessage(b)
		}
		switch {
		case r.err != nil:
		case r.msg.Channel == "heartbeat", r.msg.Channel == "status", r.msg.Method == "pong":
			continue
		case r.msg.Success != nil && !*r.msg.Success:
			r.err = subscribeError(r.msg)
		}
		select {
		case c.in <- r:
		case <-ctx.Done():
			return
		}
		if r.err != nil {
			return
		}
	}
}

// next returns the next message, or the error that ended the connection.
func (c *wsConn) next(ctx context.Context) (wsMessage, error) {
	select {
	case r := <-c.in:
		return r.msg, r.err
	case <-ctx.Done():
		return wsMessage{}, ctx.Err()
	}
}

// subscribeError turns a refused request into an error: a refused token
// or key is EXCHANGE_AUTH_FAILED, missing permissions PERMISSION_DENIED,
// an unknown pair UNKNOWN_SYMBOL (all permanent, wsstream.Permanent);
// anything else is retried. Kraken's error strings: docs.kraken.com
// "Spot WebSocket API: Errors" and "API error messages" (ESession,
// EAccount, EAPI prefixes as on REST).
func subscribeError(m wsMessage) error {
	msg := m.Error
	switch {
	case strings.HasPrefix(msg, "ESession:"), strings.HasPrefix(msg, "EAPI:Invalid key"), strings.Contains(msg, "Invalid token"), strings.Contains(msg, "Token(s) not found"):
		return &exgate.Error{Code: exgate.CodeExchangeAuthFailed, Detail: "Kraken refused the WebSocket token of this key (" + msg + ")"}
	case strings.HasPrefix(msg, "EAccount:Invalid permissions"), strings.HasPrefix(msg, "EGeneral:Permission denied"):
		return &exgate.Error{Code: exgate.CodePermissionDenied, Detail: "the Kraken key lacks the permission for this stream (" + msg + ")"}
	case strings.Contains(msg, "Currency pair not supported"), strings.HasPrefix(msg, "EQuery:Unknown asset pair"):
		return &exgate.Error{Code: exgate.CodeUnknownSymbol, Detail: "Kraken does not stream this pair (" + msg + ")"}
	}
	return fmt.Errorf("kraken ws: %s refused: %s", m.Method, msg)
}

// v2Symbol is the pair's name on WebSocket v2: BASE/QUOTE in common codes
// (BTC/USD where v1 and the REST wsname say XBT/USD). Source:
// docs.kraken.com "Spot WebSocket API": v2 vs v1, symbol format.
func (mk *market) v2Symbol() string { return mk.symbol.Base + "/" + mk.symbol.Quote }

// bySymbolV2 finds the market of a v2 symbol.
func (m *markets) bySymbolV2(s string) (*market, bool) {
	base, quote, ok := strings.Cut(s, "/")
	if !ok {
		return nil, false
	}
	mk, ok := m.bySymbol[exgate.Symbol{Base: base, Quote: quote}]
	return mk, ok
}

// wsTime parses an RFC 3339 timestamp of a v2 message.
func wsTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("kraken ws: timestamp %q: %w", s, err)
	}
	return t.UTC(), nil
}
