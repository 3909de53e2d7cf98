package gateiofake

import (
	"context"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate/exchange/internal/fakews"
)

// The fake's Spot WebSocket v4 at /ws/v4/ (Gate API v4 docs, "Spot
// WebSocket v4"): requests {time, id, channel, event, payload, auth},
// answers {time, time_ms, id, channel, event, error, result} with
// result {"status":"success"} or an error {code, message} (1 invalid
// request body, 2 invalid argument, 4 authentication fail), spot.ping
// answered with spot.pong, and the channels
//
//	spot.order_book_update  [pair, "20ms"|"100ms"]: a push with U/u ids
//	                        per book change (ChangeBook; SkipBookUpdate
//	                        changes the book without a push)
//	spot.candlesticks       [interval, pair]: the current candle at once,
//	                        then one push per TradeCandle
//	spot.orders             [pairs…] or ["!all"], signed: a push per
//	                        order placed, canceled or filled
//
// A request's time must be within 60 s of the server's clock (code 2
// otherwise; Gate's code for that is not documented). spot.orders needs
// auth {method "api_key", KEY, SIGN}, SIGN the hex HMAC-SHA512 of
// "channel=<channel>&event=<event>&time=<time>" with the key's secret;
// a missing or wrong one is refused with code 4.

// wsUID is the user id written into order pushes.
const wsUID = 3497082

// wsClient is one stream connection and its subscriptions. Its fields
// are guarded by Server.mu; out is written by one goroutine.
type wsClient struct {
	conn      *fakews.Conn
	ordersKey string
	orders    map[string]bool // pairs, or "!all"
	books     map[string]bool // pairs
	candles   map[string]bool // "<interval>_<pair>"
	silent    *bool           // the server's wsSilent
}

// liveCandle is the current candle of one subscription name after trades
// moved it away from the pure function of time (candleOf).
type liveCandle struct {
	open time.Time
	Candle
}

// WSURL is the stream endpoint to give the adapter.
func (s *Server) WSURL() string {
	return "ws" + strings.TrimPrefix(s.URL, "http") + "/ws/v4/"
}

// PauseStreams drops every stream connection and refuses new ones (HTTP
// 503) until resume is called; REST stays up.
func (s *Server) PauseStreams() (resume func()) { return s.ws.Pause() }

// DropStreams closes every stream connection abruptly and returns how
// many there were.
func (s *Server) DropStreams() int { return s.ws.Drop() }

// WaitStreams waits until exactly n stream connections are open.
func (s *Server) WaitStreams(ctx context.Context, n int) error { return s.ws.WaitConns(ctx, n) }

// SilenceStreams makes the stream side stop answering and pushing while
// its connections stay open (a connection gone dead without a close);
// false brings it back.
func (s *Server) SilenceStreams(silent bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wsSilent = silent
}

// StreamConnections counts the stream connections accepted so far.
func (s *Server) StreamConnections() int { return s.ws.Accepted() }

// StreamAuthFailures counts the private subscriptions refused with code 4.
func (s *Server) StreamAuthFailures() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.wsAuthFailures
}

// wsRequest is a client request.
type wsRequest struct {
	Time    int64           `json:"time"`
	ID      *int64          `json:"id"`
	Channel string          `json:"channel"`
	Event   string          `json:"event"`
	Payload json.RawMessage `json:"payload"`
	Auth    *struct {
		Method string `json:"method"`
		KEY    string `json:"KEY"`
		SIGN   string `json:"SIGN"`
	} `json:"auth"`
}

// serveWS runs one stream connection: a writer for the queued pushes and
// the request loop.
func (s *Server) serveWS(ctx context.Context, conn *fakews.Conn) {
	cl := &wsClient{conn: conn, orders: map[string]bool{}, books: map[string]bool{}, candles: map[string]bool{},
		silent: &s.wsSilent}
	s.mu.Lock()
	s.wsClients[cl] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.wsClients, cl)
		s.mu.Unlock()
	}()
	for {
		b, err := conn.Read(ctx)
		if err != nil {
			return
		}
		s.mu.Lock()
		s.wsRequest(cl, b)
		s.mu.Unlock()
	}
}

// enqueue queues a message for cl; a client that lets 4096 messages pile
// up is dropped, as Gate drops slow consumers. The caller holds s.mu.
func (cl *wsClient) enqueue(v any) {
	if cl.silent != nil && *cl.silent {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // the fake's own values
	}
	cl.conn.Push(b)
}

// answer is the server's answer to a request.
func (s *Server) answer(r wsRequest, errCode int, msg string) map[string]any {
	now := s.serverTime()
	out := map[string]any{"time": now.Unix(), "time_ms": now.UnixMilli(), "channel": r.Channel, "event": r.Event,
		"error": nil, "result": map[string]string{"status": "success"}}
	if r.ID != nil {
		out["id"] = *r.ID
	}
	if errCode != 0 {
		out["error"] = map[string]any{"code": errCode, "message": msg}
		out["result"] = nil
	}
	return out
}

// wsRequest handles one request. The caller holds s.mu.
func (s *Server) wsRequest(cl *wsClient, b []byte) {
	var r wsRequest
	if err := json.Unmarshal(b, &r); err != nil {
		cl.enqueue(s.answer(r, 1, "Invalid request body format"))
		return
	}
	now := s.serverTime()
	if r.Channel == "spot.ping" {
		cl.enqueue(map[string]any{"time": now.Unix(), "time_ms": now.UnixMilli(), "channel": "spot.pong", "event": "", "error": nil, "result": nil})
		return
	}
	if gap := now.Unix() - r.Time; gap > int64(timestampWindow/time.Second) || gap < -int64(timestampWindow/time.Second) {
		cl.enqueue(s.answer(r, 2, fmt.Sprintf("Invalid argument provided: time %d is more than 60 s from server time", r.Time)))
		return
	}
	if r.Event != "subscribe" && r.Event != "unsubscribe" {
		cl.enqueue(s.answer(r, 2, "Invalid argument provided: event "+r.Event))
		return
	}
	var payload []string
	if len(r.Payload) > 0 {
		if err := json.Unmarshal(r.Payload, &payload); err != nil {
			cl.enqueue(s.answer(r, 1, "Invalid request body format"))
			return
		}
	}
	on := r.Event == "subscribe"
	set := func(m map[string]bool, k string) {
		if on {
			m[k] = true
		} else {
			delete(m, k)
		}
	}
	switch r.Channel {
	case "spot.order_book_update":
		if len(payload) != 2 || (payload[1] != "20ms" && payload[1] != "100ms") || s.pairs[payload[0]] == nil {
			cl.enqueue(s.answer(r, 2, fmt.Sprintf("Invalid argument provided: %q", payload)))
			return
		}
		set(cl.books, payload[0])
		cl.enqueue(s.answer(r, 0, ""))
	case "spot.candlesticks":
		if len(payload) != 2 || payload[0] == "30d" || s.pairs[payload[1]] == nil {
			cl.enqueue(s.answer(r, 2, fmt.Sprintf("Invalid argument provided: %q", payload)))
			return
		}
		if _, ok := candleIntervals[payload[0]]; !ok {
			cl.enqueue(s.answer(r, 2, fmt.Sprintf("Invalid argument provided: interval %q", payload[0])))
			return
		}
		name := payload[0] + "_" + payload[1]
		set(cl.candles, name)
		cl.enqueue(s.answer(r, 0, ""))
		if on {
			cl.enqueue(s.candlePush(name, s.candle(name, now)))
		}
	case "spot.orders":
		acc, msg := s.wsAuth(r)
		if acc == nil {
			s.wsAuthFailures++
			cl.enqueue(s.answer(r, 4, msg))
			return
		}
		if len(payload) == 0 {
			cl.enqueue(s.answer(r, 2, "Invalid argument provided: no currency pair"))
			return
		}
		for _, p := range payload {
			if p != "!all" && s.pairs[p] == nil {
				cl.enqueue(s.answer(r, 2, "Invalid argument provided: unknown currency pair "+p))
				return
			}
		}
		cl.ordersKey = acc.APIKey
		for _, p := range payload {
			set(cl.orders, p)
		}
		cl.enqueue(s.answer(r, 0, ""))
	default:
		cl.enqueue(s.answer(r, 2, "Invalid argument provided: unknown channel "+r.Channel))
	}
}

// WSSign is the SIGN of a stream request the fake checks: hex
// HMAC-SHA512 of "channel=<channel>&event=<event>&time=<time>".
func WSSign(secret, channel, event string, t int64) string {
	mac := hmac.New(sha512.New, []byte(secret))
	mac.Write([]byte("channel=" + channel + "&event=" + event + "&time=" + strconv.FormatInt(t, 10)))
	return hex.EncodeToString(mac.Sum(nil))
}

// wsAuth checks a private request's auth. The caller holds s.mu.
func (s *Server) wsAuth(r wsRequest) (*account, string) {
	if r.Auth == nil || r.Auth.Method != "api_key" || r.Auth.KEY == "" || r.Auth.SIGN == "" {
		return nil, "Authentication fail: auth {method api_key, KEY, SIGN} required"
	}
	acc := s.accounts[r.Auth.KEY]
	if acc == nil {
		return nil, "Authentication fail: invalid key"
	}
	got, err := hex.DecodeString(strings.ToLower(r.Auth.SIGN))
	want, _ := hex.DecodeString(WSSign(acc.Secret, r.Channel, r.Event, r.Time))
	if err != nil || !hmac.Equal(got, want) {
		return nil, "Authentication fail: signature mismatch"
	}
	return acc, ""
}

// update is a server push. The caller holds s.mu.
func (s *Server) update(channel string, result any) map[string]any {
	now := s.serverTime()
	return map[string]any{"time": now.Unix(), "time_ms": now.UnixMilli(), "channel": channel, "event": "update", "result": result}
}

// pushOrder sends an order change to the account's order subscribers:
// Gate's order object with its event (put, update, finish) and no status.
// The caller holds s.mu.
func (s *Server) pushOrder(a *account, o *order, event string) {
	var msg map[string]any
	for cl := range s.wsClients {
		if cl.ordersKey != a.APIKey || (!cl.orders["!all"] && !cl.orders[o.pair.ID]) {
			continue
		}
		if msg == nil {
			j := o.json("FULL")
			delete(j, "status")
			j["event"], j["user"] = event, wsUID
			msg = s.update("spot.orders", []any{j})
		}
		cl.enqueue(msg)
	}
}

// pushPlaced sends a new order: put while it rests, finish when it ended
// at once. The caller holds s.mu.
func (s *Server) pushPlaced(a *account, o *order) {
	if o.status == "open" {
		s.pushOrder(a, o, "put")
		return
	}
	s.pushOrder(a, o, "finish")
}

// BookLevels returns the first depth levels of each side of a pair's
// book, best first.
func (s *Server) BookLevels(pairID string, depth int) (bids, asks []Level) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.books[pairID]
	if b == nil {
		return nil, nil
	}
	conv := func(ls []bookLevel) []Level {
		out := []Level{}
		for _, l := range ls[:min(len(ls), depth)] {
			out = append(out, Level{Price: decimalText(l.price), Amount: decimalText(l.amount)})
		}
		return out
	}
	return conv(b.bids), conv(b.asks)
}

// ChangeBook changes one level of a pair's book (a bid, then an ask, in
// turn, among the first five) and pushes it with the next update id.
func (s *Server) ChangeBook(pairID string) error { return s.changeBook(pairID, true) }

// SkipBookUpdate changes the book as ChangeBook does but pushes nothing:
// the next push's U skips the update id this change took.
func (s *Server) SkipBookUpdate(pairID string) error { return s.changeBook(pairID, false) }

func (s *Server) changeBook(pairID string, push bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, p := s.books[pairID], s.pairs[pairID]
	if b == nil || p == nil {
		return fmt.Errorf("gateiofake: no pair %s", pairID)
	}
	b.changes++
	side := b.bids
	if b.changes%2 == 0 {
		side = b.asks
	}
	if len(side) == 0 {
		return fmt.Errorf("gateiofake: %s book side empty", pairID)
	}
	l := &side[(b.changes/2)%min(5, len(side))]
	l.amount = l.amount.Add(p.unit).RoundDown(p.AmountPrecision)
	b.id++
	if !push {
		return nil
	}
	level := [][]string{{decimalText(l.price), decimalText(l.amount)}}
	bids, asks := level, [][]string{}
	if b.changes%2 == 0 {
		bids, asks = asks, bids
	}
	now := s.serverTime()
	msg := s.update("spot.order_book_update", map[string]any{
		"t": now.UnixMilli(), "e": "depthUpdate", "E": now.Unix(), "s": pairID, "U": b.id, "u": b.id, "b": bids, "a": asks,
	})
	for cl := range s.wsClients {
		if cl.books[pairID] {
			cl.enqueue(msg)
		}
	}
	return nil
}

// candle returns the current candle of a subscription name. The caller
// holds s.mu.
func (s *Server) candle(name string, now time.Time) liveCandle {
	if lc := s.candles[name]; lc != nil {
		return *lc
	}
	interval, pairID, _ := strings.Cut(name, "_")
	open := bucketStart(interval, now)
	return liveCandle{open: open, Candle: candleOf(s.pairs[pairID], interval, open)}
}

// candlePush is the push of a candle (no window-closed flag: the adapter
// learns of the close from the next candle).
func (s *Server) candlePush(name string, c liveCandle) map[string]any {
	return s.update("spot.candlesticks", map[string]any{
		"t": strconv.FormatInt(c.open.Unix(), 10), "v": c.QuoteVolume, "c": c.Close, "h": c.High, "l": c.Low, "o": c.Open,
		"n": name, "a": c.BaseVolume,
	})
}

// TradeCandle moves the current candle of a pair and Gate interval by a
// trade one tick above its close and pushes it; with next, the trade
// opens the following candle instead (the current one has ended). GET
// /spot/candlesticks answers with the moved candle too.
func (s *Server) TradeCandle(pairID, interval string, next bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pairs[pairID]
	if p == nil {
		return fmt.Errorf("gateiofake: no pair %s", pairID)
	}
	if _, ok := candleIntervals[interval]; !ok {
		return fmt.Errorf("gateiofake: no interval %s", interval)
	}
	name := interval + "_" + pairID
	c := s.candle(name, s.serverTime())
	price := decimal.RequireFromString(c.Close).Add(p.tick)
	amount := p.unit.Div(decimal.NewFromInt(10)).RoundDown(p.AmountPrecision)
	if next {
		c = liveCandle{open: bucketNext(interval, c.open), Candle: Candle{Open: decimalText(price), High: decimalText(price),
			Low: decimalText(price), Close: decimalText(price), BaseVolume: decimalText(amount), QuoteVolume: decimalText(amount.Mul(price))}}
	} else {
		c.Close = decimalText(price)
		c.High = decimalText(decimal.Max(price, decimal.RequireFromString(c.High)))
		c.BaseVolume = decimalText(decimal.RequireFromString(c.BaseVolume).Add(amount))
		c.QuoteVolume = decimalText(decimal.RequireFromString(c.QuoteVolume).Add(amount.Mul(price)))
	}
	s.candles[name] = &c
	msg := s.candlePush(name, c)
	for _, cl := range slices.Collect(maps.Keys(s.wsClients)) {
		if cl.candles[name] {
			cl.enqueue(msg)
		}
	}
	return nil
}
