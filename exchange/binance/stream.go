package binance

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
	"github.com/exgate/exgate/exchange/internal/wsstream"
)

// The live streams (exgate.Streamer, docs/contract.md 2.5) use Binance's
// WebSocket market streams for books and klines and its WebSocket API for
// the account's order updates; docs/exchanges/binance.md "Streams" tells
// how each is kept right.
const (
	// DefaultStreamURL is Binance's WebSocket market streams endpoint;
	// a stream is read at /ws/<stream name> (web-socket-streams.md,
	// "General WSS information").
	DefaultStreamURL = "wss://stream.binance.com:9443"
	// DefaultWSAPIURL is Binance's WebSocket API endpoint (web-socket-api.md,
	// "General API Information"), which carries the User Data Stream.
	DefaultWSAPIURL = "wss://ws-api.binance.com:443/ws-api/v3"
	// DefaultStreamIdle is how long a stream connection may stay silent
	// before it is taken for dead: both endpoints send a ping frame every
	// 20 seconds, so two missed pings.
	DefaultStreamIdle = 40 * time.Second
)

var _ exgate.Streamer = (*Exchange)(nil)

// streamConfig is the streams' part of Options, defaults applied.
type streamConfig struct {
	url, apiURL string
	idle        time.Duration
	backoff     wsstream.Backoff
}

func newStreamConfig(opts Options) streamConfig {
	return streamConfig{
		url:     cmp.Or(strings.TrimRight(opts.StreamURL, "/"), DefaultStreamURL),
		apiURL:  cmp.Or(opts.WSAPIURL, DefaultWSAPIURL),
		idle:    rest.PositiveOr(opts.StreamIdle, DefaultStreamIdle),
		backoff: wsstream.Backoff{Min: opts.StreamBackoffMin, Max: opts.StreamBackoffMax},
	}
}

// run is wsstream.Run with the adapter's backoff and logger.
func (e *Exchange) run(ctx context.Context, name string, session func(ctx context.Context, s *wsstream.Session) error) error {
	return wsstream.Run(ctx, wsstream.Config{Backoff: e.stream.backoff, Logger: e.log, Name: "binance " + name}, session)
}

// wsConn is one stream connection. Every frame (a message, a ping)
// proves it alive; one silent for longer than the idle time is closed,
// which ends its reader with an error.
type wsConn struct {
	ws    *websocket.Conn
	alive chan struct{}
}

// errIdle ends a session whose connection stayed silent too long.
var errIdle = errors.New("binance stream silent for too long")

// dial opens url. The connection lives until ctx ends or it fails; a
// watchdog closes it after the idle time without a frame.
func (e *Exchange) dial(ctx context.Context, url string) (*wsConn, error) {
	c := &wsConn{alive: make(chan struct{}, 1)}
	ws, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{
		HTTPClient: e.c.HTTP,
		OnPingReceived: func(context.Context, []byte) bool {
			c.seen()
			return true
		},
	})
	if err != nil {
		return nil, exgate.Errorf(exgate.CodeExchangeUnavailable, "binance stream %s: %v", url, err)
	}
	ws.SetReadLimit(16 << 20)
	c.ws = ws
	go c.watch(ctx, e.stream.idle)
	return c, nil
}

func (c *wsConn) seen() {
	select {
	case c.alive <- struct{}{}:
	default:
	}
}

// watch closes the connection after idle without a frame, or when ctx
// ends.
func (c *wsConn) watch(ctx context.Context, idle time.Duration) {
	t := time.NewTimer(idle)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			c.ws.CloseNow()
			return
		case <-c.alive:
			t.Reset(idle)
		case <-t.C:
			c.ws.CloseNow()
			return
		}
	}
}

// read returns the next text message.
func (c *wsConn) read(ctx context.Context) ([]byte, error) {
	typ, b, err := c.ws.Read(ctx)
	if err != nil {
		return nil, err
	}
	c.seen()
	if typ != websocket.MessageText {
		return nil, errors.New("binance stream sent a binary message")
	}
	return b, nil
}

// frames reads messages into a channel until the connection fails; the
// last value carries the error. Reading never waits for the consumer to
// catch up beyond the channel's room, so a slow REST call (a snapshot,
// the catch-up) holds the events in order without losing any.
type frame struct {
	b   []byte
	err error
}

func (c *wsConn) frames(ctx context.Context, idle time.Duration) <-chan frame {
	out := make(chan frame, 4096)
	go func() {
		defer close(out)
		for {
			b, err := c.read(ctx)
			if err != nil {
				err = fmt.Errorf("binance stream read (silent limit %v): %w", idle, err)
			}
			select {
			case out <- frame{b, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return out
}

// next waits for the next frame of ch.
func next(ctx context.Context, ch <-chan frame) ([]byte, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case f, ok := <-ch:
		if !ok {
			return nil, errIdle
		}
		return f.b, f.err
	}
}
