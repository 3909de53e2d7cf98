package bybitfake

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate/exchange/internal/fakews"
)

// The fake's WebSocket v5 (https://bybit-exchange.github.io/docs/v5/ws/connect):
// /v5/public/spot serves orderbook.{1,50,200,1000}.{symbol} (a snapshot,
// then a delta per change with u one more than the last) and
// kline.{interval}.{symbol} (the current candle at once, then one push per
// TradeKline); /v5/private takes {"op":"auth","args":[key, expires,
// signature]} with expires in the future and signature the hex
// HMAC-SHA256 of "GET/realtime" + expires, then serves the order (or
// order.spot) topic. Both answer {"op":"ping"} with a pong.

// wsConn is one stream connection and its topics; guarded by Server.mu.
type wsConn struct {
	conn    *fakews.Conn
	private bool
	authKey string
	topics  map[string]bool
}

// liveCandle is the current 1m candle of a symbol after trades moved it.
type liveCandle struct {
	start                  time.Time
	open, high, low, close decimal.Decimal
	volume                 decimal.Decimal
}

// WSURL is the public spot stream to give the adapter; WSPrivateURL the
// private one.
func (s *Server) WSURL() string { return "ws" + strings.TrimPrefix(s.URL, "http") + wsPublicPath }

// WSPrivateURL is the private stream to give the adapter.
func (s *Server) WSPrivateURL() string {
	return "ws" + strings.TrimPrefix(s.URL, "http") + wsPrivatePath
}

// PauseStreams drops every stream connection and refuses new ones until
// resume is called; REST stays up.
func (s *Server) PauseStreams() (resume func()) {
	r1, r2 := s.ws.Pause(), s.wsPriv.Pause()
	return func() { r1(); r2() }
}

// DropStreams closes every stream connection abruptly.
func (s *Server) DropStreams() int { return s.ws.Drop() + s.wsPriv.Drop() }

// WaitStreams waits until exactly n public and m private connections are
// open.
func (s *Server) WaitStreams(ctx context.Context, public, private int) error {
	if err := s.ws.WaitConns(ctx, public); err != nil {
		return err
	}
	return s.wsPriv.WaitConns(ctx, private)
}

// SilenceStreams makes the stream side stop answering and pushing while
// its connections stay open; false brings it back.
func (s *Server) SilenceStreams(silent bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wsSilent = silent
}

type wsRequest struct {
	ReqID string          `json:"req_id"`
	Op    string          `json:"op"`
	Args  json.RawMessage `json:"args"`
}

func (s *Server) servePublicWS(ctx context.Context, conn *fakews.Conn) {
	s.serveWS(ctx, conn, false)
}

func (s *Server) servePrivateWS(ctx context.Context, conn *fakews.Conn) {
	s.serveWS(ctx, conn, true)
}

// serveWS runs one connection's request loop.
func (s *Server) serveWS(ctx context.Context, conn *fakews.Conn, private bool) {
	wc := &wsConn{conn: conn, private: private, topics: map[string]bool{}}
	s.mu.Lock()
	s.wsSubs[wc] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.wsSubs, wc)
		s.mu.Unlock()
	}()
	for {
		b, err := conn.Read(ctx)
		if err != nil {
			return
		}
		s.mu.Lock()
		silent := s.wsSilent
		s.mu.Unlock()
		if silent {
			continue
		}
		var req wsRequest
		if json.Unmarshal(b, &req) != nil {
			conn.Push(mustJSON(map[string]any{"success": false, "ret_msg": "Invalid request", "op": ""}))
			continue
		}
		answer := func(ok bool, msg string) {
			conn.Push(mustJSON(map[string]any{"success": ok, "ret_msg": msg, "conn_id": "fake-conn", "req_id": req.ReqID, "op": req.Op}))
		}
		switch req.Op {
		case "ping":
			answer(true, "pong")
		case "auth":
			var args []json.RawMessage
			if !private || json.Unmarshal(req.Args, &args) != nil || len(args) != 3 {
				answer(false, "Params Error")
				continue
			}
			var key, sig string
			var expires int64
			_ = json.Unmarshal(args[0], &key)
			_ = json.Unmarshal(args[2], &sig)
			if json.Unmarshal(args[1], &expires) != nil {
				var t string
				_ = json.Unmarshal(args[1], &t)
				expires, _ = strconv.ParseInt(t, 10, 64)
			}
			s.mu.Lock()
			acc := s.accounts[key]
			s.mu.Unlock()
			if acc == nil || expires <= s.serverTime().UnixMilli() || !hmac.Equal([]byte(sig), []byte(wsSign(acc.Secret, expires))) {
				answer(false, "Request not authorized")
				continue
			}
			s.mu.Lock()
			wc.authKey = key
			s.mu.Unlock()
			answer(true, "")
		case "subscribe":
			var topics []string
			if json.Unmarshal(req.Args, &topics) != nil || len(topics) == 0 || len(topics) > 10 {
				answer(false, "Invalid args")
				continue
			}
			s.mu.Lock()
			bad := ""
			for _, t := range topics {
				if !s.validTopicLocked(wc, t) {
					bad = t
					break
				}
			}
			if bad != "" {
				s.mu.Unlock()
				answer(false, "Invalid topic :["+bad+"]")
				continue
			}
			for _, t := range topics {
				wc.topics[t] = true
			}
			answer(true, "subscribe")
			for _, t := range topics {
				s.firstPushLocked(wc, t)
			}
			s.mu.Unlock()
		case "unsubscribe":
			var topics []string
			_ = json.Unmarshal(req.Args, &topics)
			s.mu.Lock()
			for _, t := range topics {
				delete(wc.topics, t)
			}
			s.mu.Unlock()
			answer(true, "unsubscribe")
		default:
			answer(false, "Invalid op")
		}
	}
}

// wsSign is the private stream's auth signature.
func wsSign(secret string, expires int64) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("GET/realtime" + strconv.FormatInt(expires, 10)))
	return hex.EncodeToString(mac.Sum(nil))
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// validTopicLocked checks a topic for the connection.
func (s *Server) validTopicLocked(wc *wsConn, t string) bool {
	if wc.private {
		return wc.authKey != "" && (t == "order" || t == "order.spot")
	}
	parts := strings.Split(t, ".")
	if len(parts) != 3 || s.pairs[parts[2]] == nil {
		return false
	}
	switch parts[0] {
	case "orderbook":
		return parts[1] == "1" || parts[1] == "50" || parts[1] == "200" || parts[1] == "1000"
	case "kline":
		_, ok := intervals[parts[1]]
		return ok
	}
	return false
}

// firstPushLocked sends a topic's first message: the book snapshot or the
// current candle.
func (s *Server) firstPushLocked(wc *wsConn, t string) {
	parts := strings.Split(t, ".")
	switch parts[0] {
	case "orderbook":
		depth, _ := strconv.Atoi(parts[1])
		wc.conn.Push(s.bookMessageLocked(parts[2], depth, "snapshot", nil, nil))
	case "kline":
		wc.conn.Push(s.klineMessageLocked(parts[2], parts[1], false))
	}
}

// bookMessageLocked writes an orderbook message: a snapshot of depth
// levels, or a delta of the given levels.
func (s *Server) bookMessageLocked(symbol string, depth int, typ string, bids, asks [][]string) []byte {
	b := s.books[symbol]
	if typ == "snapshot" {
		bids, asks = rows(b.bids, depth), rows(b.asks, depth)
	}
	now := s.serverTime().UnixMilli()
	return mustJSON(map[string]any{"topic": "orderbook." + strconv.Itoa(depth) + "." + symbol, "ts": now, "type": typ,
		"data": map[string]any{"s": symbol, "b": bids, "a": asks, "u": b.u, "seq": b.seq}, "cts": now})
}

// currentCandleLocked is the symbol's current candle of interval iv: the
// live one for 1m after trades, else the pure function of time.
func (s *Server) currentCandleLocked(symbol, iv string) []string {
	p := s.pairs[symbol]
	now := s.serverTime()
	if lc := s.candles[symbol]; lc != nil && iv == "1" && !lc.start.Before(candleStart(iv, now)) {
		return []string{ms(lc.start), lc.open.String(), lc.high.String(), lc.low.String(), lc.close.String(), lc.volume.String(), lc.volume.Mul(lc.close).String()}
	}
	return candleRow(p, iv, candleStart(iv, now))
}

// klineMessageLocked writes a kline message of the current candle.
func (s *Server) klineMessageLocked(symbol, iv string, confirm bool) []byte {
	row := s.currentCandleLocked(symbol, iv)
	return klineMessage(symbol, iv, row, confirm, s.serverTime())
}

func klineMessage(symbol, iv string, row []string, confirm bool, now time.Time) []byte {
	start, _ := strconv.ParseInt(row[0], 10, 64)
	end := nextStart(iv, time.UnixMilli(start).UTC()).UnixMilli() - 1
	return mustJSON(map[string]any{"topic": "kline." + iv + "." + symbol, "type": "snapshot", "ts": now.UnixMilli(),
		"data": []map[string]any{{"start": start, "end": end, "interval": iv, "open": row[1], "close": row[4], "high": row[2], "low": row[3],
			"volume": row[5], "turnover": row[6], "confirm": confirm, "timestamp": now.UnixMilli()}}})
}

// pushLocked sends b to every connection subscribed to topic.
func (s *Server) pushLocked(topic string, b []byte) {
	if s.wsSilent {
		return
	}
	for wc := range s.wsSubs {
		if wc.topics[topic] {
			wc.conn.Push(b)
		}
	}
}

// pushBookSnapshotLocked sends a fresh snapshot to every book subscriber
// of symbol (Bybit sends one at any time to reset the local book).
func (s *Server) pushBookSnapshotLocked(symbol string) {
	for _, d := range []int{1, 50, 200, 1000} {
		topic := "orderbook." + strconv.Itoa(d) + "." + symbol
		s.pushLocked(topic, s.bookMessageLocked(symbol, d, "snapshot", nil, nil))
	}
}

// changeBookLocked adds one unit to the best ask's size and returns the
// changed level as a delta row.
func (s *Server) changeBookLocked(symbol string) [][]string {
	b := s.books[symbol]
	p := s.pairs[symbol]
	b.asks[0].qty = b.asks[0].qty.Add(p.Unit)
	b.u++
	b.seq++
	return [][]string{{b.asks[0].price.String(), b.asks[0].qty.String()}}
}

// ChangeBook changes the symbol's book (the best ask grows by one unit)
// and pushes the delta to its subscribers.
func (s *Server) ChangeBook(symbol string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	asks := s.changeBookLocked(symbol)
	for _, d := range []int{1, 50, 200, 1000} {
		topic := "orderbook." + strconv.Itoa(d) + "." + symbol
		typ := "delta"
		if d == 1 {
			s.pushLocked(topic, s.bookMessageLocked(symbol, d, "snapshot", nil, nil))
			continue
		}
		s.pushLocked(topic, s.bookMessageLocked(symbol, d, typ, [][]string{}, asks))
	}
}

// SkipBookUpdate changes the symbol's book without pushing the delta, so
// the next delta's u skips one.
func (s *Server) SkipBookUpdate(symbol string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.changeBookLocked(symbol)
}

// BookLevels returns the symbol's book, at most depth levels per side,
// best first, as [price, size] decimal strings.
func (s *Server) BookLevels(symbol string, depth int) (bids, asks [][]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.books[symbol]
	return rows(b.bids, depth), rows(b.asks, depth)
}

// TradeKline moves the symbol's current 1m candle (a trade one tick up)
// and pushes it; with next, the current candle is pushed closed
// (confirm true) first and the trade opens the next minute's candle.
func (s *Server) TradeKline(symbol string, next bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pairs[symbol]
	now := s.serverTime()
	lc := s.candles[symbol]
	if lc == nil || lc.start.Before(candleStart("1", now)) {
		row := candleRow(p, "1", candleStart("1", now))
		d := decimal.RequireFromString
		lc = &liveCandle{start: candleStart("1", now), open: d(row[1]), high: d(row[2]), low: d(row[3]), close: d(row[4]), volume: d(row[5])}
		s.candles[symbol] = lc
	}
	if next {
		s.pushLocked("kline.1."+symbol, klineMessage(symbol, "1", s.currentCandleLocked(symbol, "1"), true, now))
		price := lc.close
		lc = &liveCandle{start: lc.start.Add(time.Minute), open: price, high: price, low: price, close: price}
		s.candles[symbol] = lc
	}
	lc.close = lc.close.Add(p.TickSize)
	lc.high = decimal.Max(lc.high, lc.close)
	lc.volume = lc.volume.Add(p.Unit)
	s.pushLocked("kline.1."+symbol, klineMessage(symbol, "1", []string{ms(lc.start), lc.open.String(), lc.high.String(), lc.low.String(), lc.close.String(), lc.volume.String(), lc.volume.Mul(lc.close).String()}, false, now))
}

// pushOrderLocked sends an order change to the account's private streams.
func (s *Server) pushOrderLocked(a *account, o *order) {
	if s.wsSilent {
		return
	}
	data := o.json()
	data["category"] = "spot"
	data["feeCurrency"] = o.feeCoin
	b := mustJSON(map[string]any{"id": fmt.Sprintf("fake-%s-%d", o.id, time.Now().UnixNano()), "topic": "order",
		"creationTime": s.serverTime().UnixMilli(), "data": []map[string]any{data}})
	for wc := range s.wsSubs {
		if wc.private && wc.authKey == a.APIKey && (wc.topics["order"] || wc.topics["order.spot"]) {
			wc.conn.Push(b)
		}
	}
}
