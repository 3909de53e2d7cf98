package stream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/exgate/exgate"
)

// The frames of docs/contract.md 2.5. A client sends requests; the server
// answers each with an ack or an error, and sends data messages.

// Channels.
const (
	ChannelOrders = "orders"
	ChannelBook   = "book"
	ChannelKlines = "klines"
)

// Ops of requests and of the server's answers to them.
const (
	OpSubscribe    = "subscribe"
	OpUnsubscribe  = "unsubscribe"
	OpSubscribed   = "subscribed"
	OpUnsubscribed = "unsubscribed"
	OpError        = "error"
)

// Request is one client frame, validated.
type Request struct {
	Op      string
	Channel string
	// Symbol is set for book and klines.
	Symbol exgate.Symbol
	// Depth is set for book (DefaultStreamDepth when absent).
	Depth int
	// Interval is set for klines (1m when absent).
	Interval exgate.Interval
}

// key is what names a subscription on a connection: a second book
// subscription of the same pair is a duplicate whatever its depth.
func (r Request) key() subKey {
	return subKey{channel: r.Channel, sym: r.Symbol, iv: r.Interval}
}

type subKey struct {
	channel string
	sym     exgate.Symbol
	iv      exgate.Interval
}

// rawRequest is a client frame as sent. Every member is optional here and
// checked by ParseRequest; a member of another type or an unknown member
// makes the frame INVALID_PARAMETER.
type rawRequest struct {
	Op       *string          `json:"op"`
	Channel  *string          `json:"channel"`
	Asset1   *string          `json:"asset1"`
	Asset2   *string          `json:"asset2"`
	Depth    *json.RawMessage `json:"depth"`
	Interval *string          `json:"interval"`
}

// maxFrame bounds a client frame; the WebSocket read limit is a little
// above it, so that a larger frame closes the connection (1009) while a
// frame up to it gets an error message.
const maxFrame = 1024

// ParseRequest reads one client frame (docs/contract.md 2.5). The error,
// always an *exgate.Error with a code of docs/contract.md 2.2, is what the
// client is answered; r keeps what could be read of the frame so the
// answer can name the subscription.
func ParseRequest(frame []byte) (r Request, err *exgate.Error) {
	if len(frame) > maxFrame {
		return r, exgate.Errorf(exgate.CodeInvalidParameter, "a frame must be at most %d bytes", maxFrame)
	}
	if !utf8.Valid(frame) {
		return r, exgate.Errorf(exgate.CodeInvalidParameter, "a frame must be UTF-8 JSON text")
	}
	var raw rawRequest
	dec := json.NewDecoder(bytes.NewReader(frame))
	dec.DisallowUnknownFields()
	if derr := dec.Decode(&raw); derr != nil || dec.More() || trailing(dec) {
		detail := `a frame must be one JSON object such as {"op":"subscribe","channel":"book","asset1":"BTC","asset2":"USDT"}`
		if ue, ok := errors.AsType[*json.UnmarshalTypeError](derr); ok && ue.Field != "" {
			return r, exgate.ParamError(ue.Field, "%s must be a %s", ue.Field, kindOf(ue.Field))
		}
		if derr != nil && bytes.HasPrefix(bytes.TrimSpace(frame), []byte("{")) {
			if name, ok := unknownField(derr); ok {
				return r, exgate.ParamError(clip(name), "unknown member %q: a request has op, channel, asset1, asset2, depth and interval", clip(name))
			}
		}
		return r, exgate.Errorf(exgate.CodeInvalidParameter, "%s", detail)
	}
	if raw.Op == nil {
		return r, exgate.ParamError("op", "op is required: subscribe or unsubscribe")
	}
	r.Op = *raw.Op
	if r.Op != OpSubscribe && r.Op != OpUnsubscribe {
		return r, exgate.ParamError("op", "op must be subscribe or unsubscribe, not %q", clip(r.Op))
	}
	if raw.Channel == nil {
		return r, exgate.ParamError("channel", "channel is required: orders, book or klines")
	}
	switch ch := *raw.Channel; ch {
	case ChannelOrders, ChannelBook, ChannelKlines:
		r.Channel = ch
	default:
		return r, exgate.ParamError("channel", "unknown channel %q: orders, book or klines", clip(ch))
	}
	if r.Channel == ChannelOrders {
		for _, m := range []struct {
			name string
			set  bool
		}{{"asset1", raw.Asset1 != nil}, {"asset2", raw.Asset2 != nil}, {"depth", raw.Depth != nil}, {"interval", raw.Interval != nil}} {
			if m.set {
				return r, exgate.ParamError(m.name, "the orders channel takes no %s: it carries every order of the exchange key", m.name)
			}
		}
		return r, nil
	}
	sym, perr := symbol(raw.Asset1, raw.Asset2)
	if perr != nil {
		return r, perr
	}
	r.Symbol = sym
	if r.Channel == ChannelBook {
		if raw.Interval != nil {
			return r, exgate.ParamError("interval", "the book channel takes no interval")
		}
		r.Depth = exgate.DefaultStreamDepth
		if raw.Depth != nil {
			n, cerr := strconv.Atoi(string(*raw.Depth))
			if cerr != nil || n < 1 || n > exgate.MaxStreamDepth {
				return r, exgate.ParamError("depth", "depth must be an integer from 1 to %d, not %s", exgate.MaxStreamDepth, clip(string(*raw.Depth)))
			}
			r.Depth = n
		}
		return r, nil
	}
	if raw.Depth != nil {
		return r, exgate.ParamError("depth", "the klines channel takes no depth")
	}
	r.Interval = exgate.Interval1m
	if raw.Interval != nil {
		iv, ierr := exgate.ParseInterval(*raw.Interval)
		if ierr != nil {
			return r, exgate.ParamError("interval", "interval must be one of 1m 3m 5m 15m 30m 1h 2h 4h 6h 8h 12h 1d 3d 1w 1M, not %q", clip(*raw.Interval))
		}
		r.Interval = iv
	}
	return r, nil
}

// trailing reports whether anything but white space follows the object.
func trailing(dec *json.Decoder) bool {
	_, err := dec.Token()
	return err == nil
}

// unknownField reads the member name of encoding/json's unknown-field
// error.
func unknownField(err error) (string, bool) {
	const prefix = "json: unknown field "
	s := err.Error()
	if len(s) <= len(prefix) || s[:len(prefix)] != prefix {
		return "", false
	}
	name, uerr := strconv.Unquote(s[len(prefix):])
	return name, uerr == nil
}

func kindOf(field string) string {
	if field == "depth" {
		return "number"
	}
	return "string"
}

// symbol reads asset1 and asset2 as the HTTP routes do (docs/contract.md 2.3).
func symbol(a1, a2 *string) (exgate.Symbol, *exgate.Error) {
	base, err := asset("asset1", a1)
	if err != nil {
		return exgate.Symbol{}, err
	}
	quote, err := asset("asset2", a2)
	if err != nil {
		return exgate.Symbol{}, err
	}
	if base == quote {
		return exgate.Symbol{}, exgate.ParamError("asset2", "asset1 and asset2 must differ")
	}
	return exgate.Symbol{Base: base, Quote: quote}, nil
}

func asset(name string, v *string) (string, *exgate.Error) {
	if v == nil || *v == "" {
		return "", exgate.ParamError(name, "%s is required", name)
	}
	s := *v
	ok := len(s) <= 20
	for i := 0; ok && i < len(s); i++ {
		c := s[i]
		ok = c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
	}
	if !ok {
		return "", exgate.ParamError(name, "%s must be an asset code of 1 to 20 letters and digits, not %q", name, clip(s))
	}
	return exgate.NormalizeAsset(s), nil
}

// clip shortens client input echoed in a detail.
func clip(s string) string { return exgate.Clip(s, 64) }

// Server messages.

// ack is the answer to a request: subscribed, unsubscribed or error; it
// names the subscription as far as the request could be read.
type ack struct {
	Op       string `json:"op"`
	Code     string `json:"code,omitempty"`
	Detail   string `json:"detail,omitempty"`
	Param    string `json:"param,omitempty"`
	Channel  string `json:"channel,omitempty"`
	Asset1   string `json:"asset1,omitempty"`
	Asset2   string `json:"asset2,omitempty"`
	Depth    int    `json:"depth,omitempty"`
	Interval string `json:"interval,omitempty"`
}

func ackOf(op string, r Request) ack {
	a := ack{Op: op, Channel: r.Channel, Asset1: r.Symbol.Base, Asset2: r.Symbol.Quote, Interval: string(r.Interval)}
	if r.Channel == ChannelBook && op == OpSubscribed {
		a.Depth = r.Depth
	}
	return a
}

func errorOf(r Request, e *exgate.Error) ack {
	a := ackOf(OpError, r)
	a.Depth = 0
	if r.Channel == ChannelBook {
		a.Depth = r.Depth
	}
	a.Code, a.Detail, a.Param = string(e.Code), e.Detail, e.Param
	return a
}

func encodeAck(a ack) []byte {
	b, err := json.Marshal(a)
	if err != nil {
		panic(fmt.Sprintf("stream: encode ack: %v", err)) // strings and ints only
	}
	return b
}

type ordersMessage struct {
	Channel string       `json:"channel"`
	Data    exgate.Order `json:"data"`
}

type bookMessage struct {
	Channel string           `json:"channel"`
	Asset1  string           `json:"asset1"`
	Asset2  string           `json:"asset2"`
	Data    exgate.OrderBook `json:"data"`
	Time    int64            `json:"time"`
}

type klinesMessage struct {
	Channel  string       `json:"channel"`
	Asset1   string       `json:"asset1"`
	Asset2   string       `json:"asset2"`
	Interval string       `json:"interval"`
	Data     exgate.Kline `json:"data"`
	// Closed marks the one message of a kline that has closed (an
	// exgate addition to docs/contract.md 2.5); absent otherwise.
	Closed bool `json:"closed,omitempty"`
}

// cut returns the book with at most depth levels a side; it shares the
// levels with b, which is never changed.
func cut(b exgate.OrderBook, depth int) exgate.OrderBook {
	out := exgate.OrderBook{Bids: b.Bids[:min(depth, len(b.Bids))], Asks: b.Asks[:min(depth, len(b.Asks))]}
	if out.Bids == nil {
		out.Bids = []exgate.Level{}
	}
	if out.Asks == nil {
		out.Asks = []exgate.Level{}
	}
	return out
}
