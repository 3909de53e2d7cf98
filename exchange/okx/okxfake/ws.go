package okxfake

import (
	"context"
	"crypto/hmac"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/coder/websocket"
	"github.com/shopspring/decimal"

	"github.com/exgate/exgate/exchange/internal/fakews"
)

// The WebSocket API v5 (OKX API v5 docs, "WebSocket"): /ws/v5/public
// serves books, /ws/v5/business candle<bar>, /ws/v5/private orders after
// a login. Text "ping" is answered "pong". A subscription is answered
// {"event":"subscribe","arg":...} or {"event":"error","code":...}.

// WSURL is the base of the WebSocket endpoints to give the adapter (it
// appends /public, /private and /business).
func (s *Server) WSURL() string {
	return "ws" + strings.TrimPrefix(s.URL, "http") + "/ws/v5"
}

// PauseStreams drops every stream connection and refuses new ones until
// resume is called; REST stays up.
func (s *Server) PauseStreams() (resume func()) { return s.ws.Pause() }

// DropStreams closes every stream connection abruptly.
func (s *Server) DropStreams() int { return s.ws.Drop() }

// WaitStreams waits until exactly n stream connections are open.
func (s *Server) WaitStreams(ctx context.Context, n int) error { return s.ws.WaitConns(ctx, n) }

// StreamLoginFailures counts the refused logins.
func (s *Server) StreamLoginFailures() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.wsLoginFailures
}

// wsClient is one connection and what it subscribed to.
type wsClient struct {
	conn   *fakews.Conn
	path   string // public, private or business
	apiKey string // after a login
	subs   map[string]bool
}

func (c *wsClient) push(v any) {
	b, err := json.Marshal(v)
	if err == nil {
		c.conn.Push(b)
	}
}

// wsArg is a subscription's argument.
type wsArg struct {
	Channel  string `json:"channel"`
	InstID   string `json:"instId,omitempty"`
	InstType string `json:"instType,omitempty"`
}

func (a wsArg) key() string { return a.Channel + "|" + a.InstID }

type wsOp struct {
	Op   string            `json:"op"`
	Args []json.RawMessage `json:"args"`
}

// serveWS speaks the protocol on one connection.
func (s *Server) serveWS(ctx context.Context, conn *fakews.Conn) {
	path := strings.TrimPrefix(conn.Request.URL.Path, wsPrefix)
	if path != "public" && path != "private" && path != "business" {
		conn.Close(websocket.StatusPolicyViolation, "bad path")
		return
	}
	cl := &wsClient{conn: conn, path: path, subs: map[string]bool{}}
	s.mu.Lock()
	s.wsClients[cl] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.wsClients, cl)
		s.mu.Unlock()
	}()
	connID := fmt.Sprintf("%x", time.Now().UnixNano()%0xffffff)
	for {
		b, err := conn.Read(ctx)
		if err != nil {
			return
		}
		if string(b) == "ping" {
			conn.Push([]byte("pong"))
			continue
		}
		var op wsOp
		if json.Unmarshal(b, &op) != nil {
			cl.push(map[string]string{"event": "error", "code": "60012", "msg": "Invalid request: " + string(b), "connId": connID})
			continue
		}
		switch op.Op {
		case "login":
			s.login(cl, op.Args, connID)
		case "subscribe", "unsubscribe":
			for _, raw := range op.Args {
				var a wsArg
				if json.Unmarshal(raw, &a) != nil {
					cl.push(map[string]string{"event": "error", "code": "60012", "msg": "Invalid request", "connId": connID})
					continue
				}
				s.subscribe(cl, op.Op, a, connID)
			}
		default:
			cl.push(map[string]string{"event": "error", "code": "60012", "msg": "Invalid request: " + string(b), "connId": connID})
		}
	}
}

// login checks {"apiKey","passphrase","timestamp","sign"} as OKX does
// (OKX API v5 docs, "WebSocket Login"): timestamp in Unix seconds within
// 30 s, sign = Base64(HMAC-SHA256(secret, timestamp+"GET"+"/users/self/verify")).
func (s *Server) login(cl *wsClient, args []json.RawMessage, connID string) bool {
	refuse := func(code, msg string) bool {
		s.mu.Lock()
		s.wsLoginFailures++
		s.mu.Unlock()
		cl.push(map[string]string{"event": "error", "code": code, "msg": msg, "connId": connID})
		return false
	}
	var a struct {
		APIKey     string `json:"apiKey"`
		Passphrase string `json:"passphrase"`
		Timestamp  string `json:"timestamp"`
		Sign       string `json:"sign"`
	}
	if len(args) != 1 || json.Unmarshal(args[0], &a) != nil {
		return refuse("60009", "Login failed.")
	}
	sec, err := strconv.ParseInt(a.Timestamp, 10, 64)
	if err != nil {
		return refuse("60004", "Invalid timestamp")
	}
	if d := s.serverTime().Sub(time.Unix(sec, 0)); d > timestampWindow || d < -timestampWindow {
		return refuse("60006", "Timestamp request expired")
	}
	s.mu.Lock()
	acc := s.accounts[a.APIKey]
	s.mu.Unlock()
	switch {
	case acc == nil:
		return refuse("60005", "Invalid apiKey")
	case a.Passphrase != acc.Passphrase:
		return refuse("60024", "Wrong passphrase")
	case !hmac.Equal([]byte(a.Sign), []byte(Sign(acc.Secret, a.Timestamp, "GET", "/users/self/verify", nil))):
		return refuse("60007", "Invalid sign")
	}
	s.mu.Lock()
	cl.apiKey = a.APIKey
	s.mu.Unlock()
	cl.push(map[string]string{"event": "login", "code": "0", "msg": "", "connId": connID})
	return true
}

// subscribe answers one subscribe or unsubscribe and, for a subscribe,
// pushes the channel's first message (the book's snapshot).
func (s *Server) subscribe(cl *wsClient, op string, a wsArg, connID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	wrong := func() {
		cl.push(map[string]string{"event": "error", "code": "60018", "msg": "Wrong URL or channel:" + a.Channel + ",instId:" + a.InstID + " doesn't exist. Please use the correct URL, channel and parameters referring to API document.", "connId": connID})
	}
	switch {
	case a.Channel == "books" && cl.path == "public":
		if s.insts[a.InstID] == nil {
			wrong()
			return
		}
	case strings.HasPrefix(a.Channel, "candle") && cl.path == "business":
		if _, ok := bars[strings.TrimPrefix(a.Channel, "candle")]; !ok || s.insts[a.InstID] == nil {
			wrong()
			return
		}
	case a.Channel == "orders" && cl.path == "private":
		if cl.apiKey == "" {
			cl.push(map[string]string{"event": "error", "code": "60011", "msg": "Please log in", "connId": connID})
			return
		}
	default:
		wrong()
		return
	}
	cl.push(map[string]any{"event": op, "arg": a, "connId": connID})
	if op == "unsubscribe" {
		delete(cl.subs, a.key())
		return
	}
	cl.subs[a.key()] = true
	if a.Channel == "books" {
		b := s.books[a.InstID]
		cl.push(bookPush(a.InstID, "snapshot", levelRows(b.asks, bookDepth), levelRows(b.bids, bookDepth), checksum(b), -1, b.seq, s.serverTime()))
	}
}

// bookPush is one message of the books channel.
func bookPush(instID, action string, asks, bids [][]string, sum int32, prev, seq int64, now time.Time) map[string]any {
	return map[string]any{
		"arg": wsArg{Channel: "books", InstID: instID}, "action": action,
		"data": []map[string]any{{"asks": asks, "bids": bids, "ts": ms(now), "checksum": sum, "prevSeqId": prev, "seqId": seq}},
	}
}

// checksum is the books channel's checksum of a book (OKX API v5 docs,
// "Order book channel", checksum): the best 25 bids and asks interleaved
// as bidPx:bidSz:askPx:askSz:..., a side that runs out skipped, CRC32 as
// a signed 32-bit integer.
func checksum(b *book) int32 {
	var parts []string
	for i := range 25 {
		if i < len(b.bids) {
			parts = append(parts, b.bids[i].price.String(), b.bids[i].size.String())
		}
		if i < len(b.asks) {
			parts = append(parts, b.asks[i].price.String(), b.asks[i].size.String())
		}
	}
	return int32(crc32.ChecksumIEEE([]byte(strings.Join(parts, ":"))))
}

// BookLevels returns the best n levels of each side of the book.
func (s *Server) BookLevels(instID string, n int) (bids, asks []Level) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.books[instID]
	conv := func(ls []bookLevel) []Level {
		out := []Level{}
		for _, l := range ls[:min(len(ls), n)] {
			out = append(out, Level{Price: l.price.String(), Size: l.size.String()})
		}
		return out
	}
	return conv(b.bids), conv(b.asks)
}

// changeBook changes the best bid's or the best ask's size (alternately)
// by one unit and returns the changed level. Call with s.mu held.
func (s *Server) changeBook(instID string) (side string, l bookLevel, err error) {
	b, in := s.books[instID], s.insts[instID]
	if b == nil {
		return "", bookLevel{}, fmt.Errorf("okxfake: no instrument %s", instID)
	}
	b.changes++
	levels, side := b.bids, "bids"
	if b.changes%2 == 0 {
		levels, side = b.asks, "asks"
	}
	levels[0].size = levels[0].size.Add(in.unit)
	b.seq++
	return side, levels[0], nil
}

// ChangeBook changes the book of an instrument (one level's size) and
// pushes the update to its subscribers.
func (s *Server) ChangeBook(instID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.books[instID]
	prev := b.seq
	side, l, err := s.changeBook(instID)
	if err != nil {
		return err
	}
	size := l.size
	if s.corrupt[instID] {
		delete(s.corrupt, instID)
		size = size.Add(decimal.NewFromInt(1))
	}
	row := [][]string{{l.price.String(), size.String(), "0", "1"}}
	asks, bids := [][]string{}, [][]string{}
	if side == "bids" {
		bids = row
	} else {
		asks = row
	}
	msg := bookPush(instID, "update", asks, bids, checksum(b), prev, b.seq, s.serverTime())
	for _, cl := range slices.Collect(maps.Keys(s.wsClients)) {
		if cl.subs["books|"+instID] {
			cl.push(msg)
		}
	}
	return nil
}

// SkipBookUpdate changes the book without pushing the update, so the next
// update's prevSeqId is not the seqId its subscribers saw last.
func (s *Server) SkipBookUpdate(instID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _, err := s.changeBook(instID)
	return err
}

// CorruptNextBookUpdate makes the next ChangeBook push a size differing
// from the change applied to the book, with the true book's checksum.
func (s *Server) CorruptNextBookUpdate(instID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.corrupt == nil {
		s.corrupt = map[string]bool{}
	}
	s.corrupt[instID] = true
}

// liveCandle is the current bar of an instrument after trades moved it
// away from the pure function of time.
type liveCandle struct {
	start                  time.Time
	o, h, l, c, vol, quote decimal.Decimal
	closed                 bool
}

func (lc *liveCandle) row(current bool) []string {
	confirm := "0"
	if lc.closed || !current {
		confirm = "1"
	}
	return []string{ms(lc.start), lc.o.String(), lc.h.String(), lc.l.String(), lc.c.String(), lc.vol.String(),
		lc.quote.String(), lc.quote.String(), confirm}
}

// TradeCandle moves the current bar of an instrument by a trade one tick
// above its close and pushes it on candle<bar>; with next, the current
// bar is pushed closed (confirm 1) and the trade opens the next bar.
func (s *Server) TradeCandle(instID, bar string, next bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.insts[instID]
	if in == nil {
		return fmt.Errorf("okxfake: no instrument %s", instID)
	}
	if _, ok := bars[bar]; !ok {
		return fmt.Errorf("okxfake: no bar %s", bar)
	}
	key := instID + "|" + bar
	lc := s.candles[key]
	if lc == nil {
		start := barStart(bar, s.serverTime())
		row := syntheticRow(in, bar, start, true)
		d := func(i int) decimal.Decimal { return decimal.RequireFromString(row[i]) }
		lc = &liveCandle{start: start, o: d(1), h: d(2), l: d(3), c: d(4), vol: d(5), quote: d(6)}
	}
	price := lc.c.Add(in.tick)
	amount := in.unit.Div(decimal.NewFromInt(10))
	var msgs []map[string]any
	if next {
		closed := *lc
		closed.closed = true
		msgs = append(msgs, candlePush(instID, bar, closed.row(false)))
		lc = &liveCandle{start: barNext(bar, lc.start), o: price, h: price, l: price, c: price, vol: amount, quote: amount.Mul(price)}
	} else {
		lc.c, lc.h = price, decimal.Max(lc.h, price)
		lc.vol, lc.quote = lc.vol.Add(amount), lc.quote.Add(amount.Mul(price))
	}
	s.candles[key] = lc
	msgs = append(msgs, candlePush(instID, bar, lc.row(true)))
	for _, cl := range slices.Collect(maps.Keys(s.wsClients)) {
		if cl.subs["candle"+bar+"|"+instID] {
			for _, m := range msgs {
				cl.push(m)
			}
		}
	}
	return nil
}

func barNext(name string, start time.Time) time.Time {
	b := bars[name]
	if b.months > 0 {
		return start.AddDate(0, b.months, 0)
	}
	if b.d == 7*24*time.Hour {
		return start.AddDate(0, 0, 7)
	}
	return start.Add(b.d)
}

func candlePush(instID, bar string, row []string) map[string]any {
	return map[string]any{"arg": wsArg{Channel: "candle" + bar, InstID: instID}, "data": [][]string{row}}
}

// pushOrder pushes an order's state to the account's orders subscribers.
// Call with s.mu held.
func (s *Server) pushOrder(a *account, o *order) {
	msg := map[string]any{"arg": map[string]string{"channel": "orders", "instType": "SPOT", "uid": "44705892343619584"},
		"data": []map[string]any{o.json()}}
	for _, cl := range slices.Collect(maps.Keys(s.wsClients)) {
		if cl.apiKey == a.APIKey && cl.subs["orders|"] {
			cl.push(msg)
		}
	}
}
