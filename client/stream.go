package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/coder/websocket"

	"github.com/exgate/exgate"
)

// Stream is a connection to GET /v1/stream (docs/contract.md 2.5): order
// updates, order books and klines over one WebSocket. Subscribe and
// Unsubscribe send requests; Read returns the answers and the data in the
// order the gateway sent them. Keep calling Read: the gateway pings every
// 15 s and the answer to a ping is sent while a Read is in progress; a
// client that reads nothing for 45 s, or falls more than 1000 messages
// behind, is disconnected. Read may be called from one goroutine at a
// time; Subscribe and Unsubscribe from any.
type Stream struct {
	ws *websocket.Conn
}

// maxStreamMessage bounds one message read: a book of 100 levels a side
// is about 10 KiB.
const maxStreamMessage = 1 << 20

// Dial opens a stream. The handshake is signed with a timestamp (the
// gateway requires one here, even for a WithLegacySigning client) and the
// two key headers. A refused handshake returns the gateway's *Error (401
// for a bad signature, 400 for a parameter, 501 when the gateway serves no
// streams).
func (c *Client) Dial(ctx context.Context) (*Stream, error) {
	params := []Param{{"timestamp", strconv.FormatInt(c.nextTimestamp(), 10)}}
	if c.recvWindow > 0 {
		params = append(params, Param{"recvWindow", strconv.FormatInt(max(c.recvWindow.Milliseconds(), 1), 10)})
	}
	var q, signed strings.Builder
	for i, p := range params {
		if i > 0 {
			signed.WriteByte('&')
		}
		signed.WriteString(p.Name + "=" + p.Value)
		q.WriteString(url.QueryEscape(p.Name) + "=" + url.QueryEscape(p.Value) + "&")
	}
	q.WriteString("signature=" + Sign(c.secret, signed.String()))
	target := c.baseURL + "/v1/stream?" + q.String()
	switch {
	case strings.HasPrefix(target, "https://"):
		target = "wss://" + strings.TrimPrefix(target, "https://")
	case strings.HasPrefix(target, "http://"):
		target = "ws://" + strings.TrimPrefix(target, "http://")
	}
	h := http.Header{"X-API-KEY": {c.apiKey}}
	if c.exchangeKey != "" {
		h.Set("X-API-EXCHANGE-KEY", c.exchangeKey)
	}
	ws, resp, err := websocket.Dial(ctx, target, &websocket.DialOptions{HTTPClient: c.dialClient(), HTTPHeader: h})
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			var body []byte
			if resp.Body != nil {
				body, _ = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
				resp.Body.Close()
			}
			return nil, parseError(resp.StatusCode, resp.Header, body, c.now())
		}
		return nil, fmt.Errorf("exgate: GET /v1/stream: %w", err)
	}
	ws.SetReadLimit(maxStreamMessage)
	return &Stream{ws: ws}, nil
}

// dialClient is the client's HTTP client without its overall timeout,
// which would end the stream; ctx bounds the handshake.
func (c *Client) dialClient() *http.Client {
	hc := *c.httpClient
	hc.Timeout = 0
	return &hc
}

// Channels of a stream.
const (
	ChannelOrders = "orders"
	ChannelBook   = "book"
	ChannelKlines = "klines"
)

// Subscription names what to receive: Channel "orders" alone; "book" with
// the pair and Depth (1 to 100, 0 for the default 20); "klines" with the
// pair and Interval ("" for 1m).
type Subscription struct {
	Channel  string
	Asset1   string
	Asset2   string
	Depth    int
	Interval string
}

// frame is a request as sent.
type frame struct {
	Op       string `json:"op"`
	Channel  string `json:"channel"`
	Asset1   string `json:"asset1,omitempty"`
	Asset2   string `json:"asset2,omitempty"`
	Depth    int    `json:"depth,omitempty"`
	Interval string `json:"interval,omitempty"`
}

// Subscribe asks for a subscription; the answer (op "subscribed" or
// "error") comes through Read.
func (s *Stream) Subscribe(ctx context.Context, sub Subscription) error {
	return s.send(ctx, "subscribe", sub)
}

// Unsubscribe ends a subscription; the answer comes through Read.
func (s *Stream) Unsubscribe(ctx context.Context, sub Subscription) error {
	return s.send(ctx, "unsubscribe", sub)
}

func (s *Stream) send(ctx context.Context, op string, sub Subscription) error {
	b, err := json.Marshal(frame{Op: op, Channel: sub.Channel, Asset1: sub.Asset1, Asset2: sub.Asset2, Depth: sub.Depth, Interval: sub.Interval})
	if err != nil {
		return fmt.Errorf("exgate: stream %s: %w", op, err)
	}
	if err := s.ws.Write(ctx, websocket.MessageText, b); err != nil {
		return fmt.Errorf("exgate: stream %s: %w", op, err)
	}
	return nil
}

// Message is one message of the gateway. Op is "subscribed",
// "unsubscribed" or "error" for an answer (Code, Detail and Param set for
// an error) and empty for data, which is in Order, Book (with Time, the
// snapshot's time in milliseconds) or Kline (with Closed true on the one
// message of a kline that has closed). Channel and the pair name the
// subscription. Raw is the message as received.
type Message struct {
	Op       string
	Channel  string
	Asset1   string
	Asset2   string
	Depth    int
	Interval string
	Code     string
	Detail   string
	Param    string
	Order    *exgate.Order
	Book     *exgate.OrderBook
	Kline    *exgate.Kline
	Closed   bool
	Time     int64
	Raw      []byte
}

// Read returns the next message. After an error the stream is closed;
// websocket.CloseStatus tells the status the gateway closed it with (1008
// for a client too far behind).
func (s *Stream) Read(ctx context.Context) (Message, error) {
	_, b, err := s.ws.Read(ctx)
	if err != nil {
		return Message{}, fmt.Errorf("exgate: stream: %w", err)
	}
	return ParseMessage(b)
}

// Close ends the stream.
func (s *Stream) Close() error {
	return s.ws.Close(websocket.StatusNormalClosure, "")
}

// wireMessage is a message as the gateway writes it.
type wireMessage struct {
	Op       string          `json:"op"`
	Channel  string          `json:"channel"`
	Asset1   string          `json:"asset1"`
	Asset2   string          `json:"asset2"`
	Depth    int             `json:"depth"`
	Interval string          `json:"interval"`
	Code     string          `json:"code"`
	Detail   string          `json:"detail"`
	Param    string          `json:"param"`
	Data     json.RawMessage `json:"data"`
	Closed   bool            `json:"closed"`
	Time     int64           `json:"time"`
}

// errMessage is the error of a message that cannot be read.
var errMessage = errors.New("exgate: stream: unreadable message")

// ParseMessage decodes one message of the gateway.
func ParseMessage(b []byte) (Message, error) {
	var w wireMessage
	if err := json.Unmarshal(b, &w); err != nil {
		return Message{Raw: b}, fmt.Errorf("%w: %w", errMessage, err)
	}
	m := Message{Op: w.Op, Channel: w.Channel, Asset1: w.Asset1, Asset2: w.Asset2, Depth: w.Depth, Interval: w.Interval,
		Code: w.Code, Detail: w.Detail, Param: w.Param, Closed: w.Closed, Time: w.Time, Raw: b}
	if m.Op != "" {
		return m, nil
	}
	if len(w.Data) == 0 || string(w.Data) == "null" {
		return m, fmt.Errorf("%w: a %q message without data", errMessage, w.Channel)
	}
	var err error
	switch w.Channel {
	case ChannelOrders:
		m.Order = new(exgate.Order)
		err = json.Unmarshal(w.Data, m.Order)
	case ChannelBook:
		m.Book = new(exgate.OrderBook)
		err = json.Unmarshal(w.Data, m.Book)
	case ChannelKlines:
		m.Kline = new(exgate.Kline)
		err = json.Unmarshal(w.Data, m.Kline)
	default:
		err = fmt.Errorf("unknown channel %q", w.Channel)
	}
	if err != nil {
		return Message{Raw: b}, fmt.Errorf("%w: %w", errMessage, err)
	}
	return m, nil
}
