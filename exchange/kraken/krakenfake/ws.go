package krakenfake

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate/exchange/internal/fakews"
)

// Kraken's WebSocket API v2 (docs.kraken.com "Spot WebSocket API v2") on
// the fake's server: the public endpoint (Options.WSPath) with the book
// and ohlc channels, the authenticated one (Options.WSAuthPath) with the
// executions channel, whose token comes from the private REST call
// GetWebSocketsToken and is checked on subscribe (an unknown token is
// refused with ESession:Invalid session). Numbers are JSON numbers, as
// Kraken v2 sends them; book messages carry Kraken's CRC32 of the top ten
// levels; every message of a connection is serialized through one queue,
// a heartbeat is sent every Options.Heartbeat.

// Default paths of the WebSocket endpoints on the fake's server.
const (
	DefaultWSPath     = "/v2"
	DefaultWSAuthPath = "/ws-auth/v2"
)

// bookDepths are the depths Kraken's book channel accepts (default 10).
var bookDepths = []int{10, 25, 100, 500, 1000}

// wsClient is one WebSocket connection of the fake.
type wsClient struct {
	conn  *fakews.Conn
	auth  bool
	out   chan []byte
	books map[string]int // pair key → depth
	ohlc  map[string]int // pair key → interval (minutes)
	exec  string         // account key of an executions subscription
}

// push queues one message; a client too slow to take it is dropped (as
// Kraken drops a consumer that does not keep up). s.mu is held.
func (c *wsClient) push(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	select {
	case c.out <- b:
	default:
		c.conn.Drop()
	}
}

// pushState is what the executions stream has said of an order.
type pushState struct {
	seen    bool
	status  string
	volExec decimal.Decimal
	fee     decimal.Decimal
	cost    decimal.Decimal
}

// liveCandle is the current 1-minute candle of a pair on the stream.
type liveCandle struct {
	begin                       int64
	open, high, low, close, vol decimal.Decimal
	trades                      int64
	tick                        int
}

func (s *Server) serveWS(auth bool) func(ctx context.Context, c *fakews.Conn) {
	return func(ctx context.Context, conn *fakews.Conn) {
		c := &wsClient{conn: conn, auth: auth, out: make(chan []byte, 1024), books: map[string]int{}, ohlc: map[string]int{}}
		s.mu.Lock()
		s.clients[c] = struct{}{}
		s.seqConn++
		c.push(map[string]any{"channel": "status", "type": "update", "data": []any{map[string]any{
			"api_version": "v2", "connection_id": s.seqConn, "system": "online", "version": "2.0.10"}}})
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			delete(s.clients, c)
			s.mu.Unlock()
		}()
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case b := <-c.out:
					if conn.SendRaw(ctx, b) != nil {
						conn.Drop()
						return
					}
				}
			}
		}()
		if s.heartbeat > 0 {
			go func() {
				t := time.NewTicker(s.heartbeat)
				defer t.Stop()
				for {
					select {
					case <-ctx.Done():
						return
					case <-t.C:
						s.mu.Lock()
						c.push(map[string]string{"channel": "heartbeat"})
						s.mu.Unlock()
					}
				}
			}()
		}
		for {
			b, err := conn.Read(ctx)
			if err != nil {
				return
			}
			s.mu.Lock()
			s.handleWS(c, b)
			s.mu.Unlock()
		}
	}
}

// wsRequest is a v2 request.
type wsRequest struct {
	Method string `json:"method"`
	Params struct {
		Channel    string   `json:"channel"`
		Symbol     []string `json:"symbol"`
		Depth      *int     `json:"depth"`
		Interval   *int     `json:"interval"`
		Snapshot   *bool    `json:"snapshot"`
		Token      string   `json:"token"`
		SnapOrders *bool    `json:"snap_orders"`
	} `json:"params"`
	ReqID *int64 `json:"req_id"`
}

// handleWS answers one request. s.mu is held.
func (s *Server) handleWS(c *wsClient, b []byte) {
	now := s.now().UTC().Format(time.RFC3339Nano)
	var req wsRequest
	if err := json.Unmarshal(b, &req); err != nil {
		c.push(map[string]any{"error": "Malformed request", "success": false, "time_in": now, "time_out": now})
		return
	}
	answer := func(result map[string]any, errMsg, symbol string) {
		m := map[string]any{"method": req.Method, "success": errMsg == "", "time_in": now, "time_out": now}
		if req.ReqID != nil {
			m["req_id"] = *req.ReqID
		}
		if errMsg != "" {
			m["error"] = errMsg
			if symbol != "" {
				m["symbol"] = symbol
			}
		} else {
			m["result"] = result
		}
		c.push(m)
	}
	switch req.Method {
	case "ping":
		m := map[string]any{"method": "pong", "time_in": now, "time_out": now}
		if req.ReqID != nil {
			m["req_id"] = *req.ReqID
		}
		c.push(m)
		return
	case "subscribe", "unsubscribe":
	default:
		answer(nil, "Method not found", "")
		return
	}
	sub := req.Method == "subscribe"
	p := req.Params
	switch p.Channel {
	case "book", "ohlc":
		if len(p.Symbol) == 0 {
			answer(nil, "EGeneral:Invalid arguments:symbol", "")
			return
		}
		depth, interval := 10, 1
		if p.Depth != nil {
			depth = *p.Depth
		}
		if p.Interval != nil {
			interval = *p.Interval
		}
		if p.Channel == "book" && !slices.Contains(bookDepths, depth) {
			answer(nil, "EGeneral:Invalid arguments:depth", "")
			return
		}
		if p.Channel == "ohlc" && !slices.Contains(ohlcIntervals, interval) {
			answer(nil, "EGeneral:Invalid arguments:interval", "")
			return
		}
		for _, name := range p.Symbol {
			pair := s.pairByV2(name)
			if pair == nil {
				answer(nil, "Currency pair not supported "+name, name)
				continue
			}
			result := map[string]any{"channel": p.Channel, "symbol": name, "snapshot": p.Snapshot == nil || *p.Snapshot}
			if p.Channel == "book" {
				result["depth"] = depth
			} else {
				result["interval"] = interval
			}
			answer(result, "", "")
			switch {
			case p.Channel == "book" && sub:
				c.books[pair.Key] = depth
				if p.Snapshot == nil || *p.Snapshot {
					c.push(s.bookSnapshot(pair, depth))
				}
			case p.Channel == "book":
				delete(c.books, pair.Key)
			case sub:
				c.ohlc[pair.Key] = interval
				if p.Snapshot == nil || *p.Snapshot {
					c.push(map[string]any{"channel": "ohlc", "type": "snapshot", "timestamp": now,
						"data": []any{s.candleJSON(pair, interval)}})
				}
			default:
				delete(c.ohlc, pair.Key)
			}
		}
	case "executions":
		key, ok := s.tokens[p.Token]
		a := s.accounts[key]
		if !c.auth || !ok || a == nil {
			answer(nil, "ESession:Invalid session", "")
			return
		}
		if !sub {
			c.exec = ""
			answer(map[string]any{"channel": "executions"}, "", "")
			return
		}
		c.exec = key
		answer(map[string]any{"channel": "executions", "snap_orders": p.SnapOrders == nil || *p.SnapOrders, "snap_trades": false}, "", "")
		data := []any{}
		if p.SnapOrders == nil || *p.SnapOrders {
			for _, o := range a.orders {
				if o.Status == "open" || o.Status == "pending" {
					data = append(data, s.executionJSON(o, "", true))
				}
			}
		}
		s.execSeq++
		c.push(map[string]any{"channel": "executions", "type": "snapshot", "data": data, "sequence": s.execSeq})
	default:
		answer(nil, "EGeneral:Invalid arguments:channel", "")
	}
}

// v2Name is a pair's v2 symbol: its wsname with Kraken's XBT and XDG
// written BTC and DOGE (docs.kraken.com "Spot WebSocket API": v2 vs v1).
func v2Name(p *Pair) string {
	base, quote, _ := strings.Cut(p.Wsname, "/")
	common := func(s string) string {
		switch s {
		case "XBT":
			return "BTC"
		case "XDG":
			return "DOGE"
		}
		return s
	}
	return common(base) + "/" + common(quote)
}

func (s *Server) pairByV2(name string) *Pair {
	for _, p := range s.pairs {
		if v2Name(p) == name {
			return p
		}
	}
	return nil
}

func num(d decimal.Decimal, places int32) json.Number {
	return json.Number(d.StringFixed(places))
}

func levelsJSON(p *Pair, ls []Level) []any {
	out := make([]any, len(ls))
	for i, l := range ls {
		out[i] = map[string]any{"price": num(l.Price, p.PairDecimals), "qty": num(l.Volume, p.LotDecimals)}
	}
	return out
}

// top returns the best n levels.
func top(ls []Level, n int) []Level { return ls[:min(len(ls), n)] }

// bookChecksum is Kraken's CRC32 over the top ten asks then bids, each
// price and quantity written with the pair's precision without the point
// and leading zeros (docs.kraken.com "Book checksum (WebSocket v2)").
func bookChecksum(p *Pair, b *book) uint32 {
	var sb strings.Builder
	for _, side := range [][]Level{top(b.asks, 10), top(b.bids, 10)} {
		for _, l := range side {
			for _, v := range []string{l.Price.StringFixed(p.PairDecimals), l.Volume.StringFixed(p.LotDecimals)} {
				sb.WriteString(strings.TrimLeft(strings.ReplaceAll(v, ".", ""), "0"))
			}
		}
	}
	return crc32.ChecksumIEEE([]byte(sb.String()))
}

func (s *Server) bookSnapshot(p *Pair, depth int) map[string]any {
	b := s.books[p.Key]
	return map[string]any{"channel": "book", "type": "snapshot", "data": []any{map[string]any{
		"symbol": v2Name(p), "bids": levelsJSON(p, top(b.bids, depth)), "asks": levelsJSON(p, top(b.asks, depth)),
		"checksum": bookChecksum(p, b), "timestamp": s.now().UTC().Format(time.RFC3339Nano),
	}}}
}

// bookDiff is what a subscriber of depth n is sent when a side changes
// from old to cur: the levels of its top n that are new or changed, and
// qty 0 for those that left the book (not for those only pushed below
// the depth: the subscriber truncates).
func bookDiff(old, cur []Level, n int) []Level {
	var out []Level
	for _, l := range top(cur, n) {
		i := slices.IndexFunc(top(old, n), func(o Level) bool { return o.Price.Equal(l.Price) })
		if i < 0 || !old[i].Volume.Equal(l.Volume) {
			out = append(out, l)
		}
	}
	for _, o := range top(old, n) {
		if !slices.ContainsFunc(cur, func(l Level) bool { return l.Price.Equal(o.Price) }) {
			out = append(out, Level{Price: o.Price})
		}
	}
	return out
}

// pushBook sends the change of p's book from old to its subscribers.
// s.mu is held.
func (s *Server) pushBook(p *Pair, old *book) {
	cur := s.books[p.Key]
	sum := bookChecksum(p, cur)
	bad := s.badChecksum
	s.badChecksum = false
	for c := range s.clients {
		depth, ok := c.books[p.Key]
		if !ok {
			continue
		}
		bids, asks := bookDiff(old.bids, cur.bids, depth), bookDiff(old.asks, cur.asks, depth)
		if len(bids) == 0 && len(asks) == 0 {
			continue
		}
		if bad {
			// A quantity other than the one applied, under the checksum
			// of the true book.
			wrong := slices.Clone(bids)
			if len(wrong) == 0 {
				wrong = slices.Clone(asks)
			}
			wrong[0].Volume = wrong[0].Volume.Add(decimal.New(1, -p.LotDecimals))
			if len(bids) > 0 {
				bids = wrong
			} else {
				asks = wrong
			}
		}
		c.push(map[string]any{"channel": "book", "type": "update", "data": []any{map[string]any{
			"symbol": v2Name(p), "bids": levelsJSON(p, bids), "asks": levelsJSON(p, asks),
			"checksum": sum, "timestamp": s.now().UTC().Format(time.RFC3339Nano),
		}}})
	}
}

func cloneBook(b *book) *book {
	return &book{bids: slices.Clone(b.bids), asks: slices.Clone(b.asks)}
}

// ChangeBook changes pair's book (the best bid's quantity grows by a
// lot step and a new best ask appears one tick inside the spread, or
// leaves again) and pushes the update to the book subscribers.
func (s *Server) ChangeBook(pairKey string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pairByName(pairKey)
	if p == nil {
		return fmt.Errorf("krakenfake: no pair %s", pairKey)
	}
	b := s.books[p.Key]
	old := cloneBook(b)
	step := decimal.New(1, -min(p.LotDecimals, 4))
	if len(b.bids) > 0 {
		b.bids[0].Volume = b.bids[0].Volume.Add(step)
	}
	if len(b.asks) > 1 && len(b.bids) > 0 {
		tick := decimal.New(1, -p.PairDecimals)
		inside := b.asks[0].Price.Sub(tick)
		if s.changes%2 == 1 {
			b.asks = b.asks[1:] // the level added last time leaves
		} else if inside.GreaterThan(b.bids[0].Price) {
			b.asks = slices.Insert(b.asks, 0, Level{Price: inside, Volume: step.Mul(decimal.NewFromInt(3))})
		}
	}
	s.changes++
	s.pushBook(p, old)
	return nil
}

// BadChecksum makes the next book update wrong: one quantity differs
// from the change applied, while the checksum is that of the true book.
func (s *Server) BadChecksum() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.badChecksum = true
}

// Book returns the best n levels per side of a pair's book.
func (s *Server) Book(pairKey string, n int) (bids, asks []Level) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pairByName(pairKey)
	if p == nil {
		return nil, nil
	}
	b := s.books[p.Key]
	return slices.Clone(top(b.bids, n)), slices.Clone(top(b.asks, n))
}

// live returns the pair's current 1-minute stream candle, starting it
// from the REST candle of the minute of the fake's clock.
func (s *Server) live(p *Pair) *liveCandle {
	if lc, ok := s.candles[p.Key]; ok {
		return lc
	}
	now := s.now().Unix()
	begin := now - now%60
	row := s.candle(p, 1, begin)
	d := func(v any) decimal.Decimal { return decimal.RequireFromString(v.(string)) }
	lc := &liveCandle{begin: begin, open: d(row[1]), high: d(row[2]), low: d(row[3]), close: d(row[4]), vol: d(row[6]), trades: row[7].(int64)}
	s.candles[p.Key] = lc
	return lc
}

// candleJSON is the ohlc item of p for interval minutes: the live candle
// for 1, the REST candle of the current interval for the others.
func (s *Server) candleJSON(p *Pair, minutes int) map[string]any {
	var lc *liveCandle
	if minutes == 1 {
		lc = s.live(p)
	} else {
		step := int64(minutes) * 60
		now := s.now().Unix()
		row := s.candle(p, minutes, now-now%step)
		d := func(v any) decimal.Decimal { return decimal.RequireFromString(v.(string)) }
		lc = &liveCandle{begin: now - now%step, open: d(row[1]), high: d(row[2]), low: d(row[3]), close: d(row[4]), vol: d(row[6]), trades: row[7].(int64)}
	}
	vwap := lc.close
	if lc.trades > 0 {
		vwap = lc.high.Add(lc.low).Div(decimal.NewFromInt(2)).Round(p.PairDecimals)
	}
	begin := time.Unix(lc.begin, 0).UTC()
	return map[string]any{
		"symbol": v2Name(p), "open": num(lc.open, p.PairDecimals), "high": num(lc.high, p.PairDecimals),
		"low": num(lc.low, p.PairDecimals), "close": num(lc.close, p.PairDecimals), "vwap": num(vwap, p.PairDecimals),
		"trades": lc.trades, "volume": num(lc.vol, p.LotDecimals), "interval_begin": begin.Format(time.RFC3339Nano),
		"interval": minutes, "timestamp": begin.Add(time.Duration(minutes) * time.Minute).Format(time.RFC3339Nano),
	}
}

// TradeKline trades on pair's current 1-minute stream candle (a price a
// tick away from the last close, a lot step of volume) and pushes it to
// the ohlc subscribers of interval 1; with next, the trade opens the next
// minute's candle instead (Kraken's stream then just moves to the later
// interval_begin: it has no closed flag).
func (s *Server) TradeKline(pairKey string, next bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pairByName(pairKey)
	if p == nil {
		return fmt.Errorf("krakenfake: no pair %s", pairKey)
	}
	lc := s.live(p)
	lc.tick++
	price := lc.close.Add(decimal.New(int64(1-2*(lc.tick%2)), -p.PairDecimals))
	qty := decimal.New(1, -min(p.LotDecimals, 3))
	if next {
		*lc = liveCandle{begin: lc.begin + 60, open: price, high: price, low: price, close: price, vol: qty, trades: 1, tick: lc.tick}
	} else {
		lc.close, lc.high, lc.low = price, decimal.Max(lc.high, price), decimal.Min(lc.low, price)
		lc.vol, lc.trades = lc.vol.Add(qty), lc.trades+1
	}
	item := s.candleJSON(p, 1)
	for c := range s.clients {
		if c.ohlc[p.Key] == 1 {
			c.push(map[string]any{"channel": "ohlc", "type": "update", "timestamp": s.now().UTC().Format(time.RFC3339Nano), "data": []any{item}})
		}
	}
	return nil
}

// getWebSocketsToken hands out a token for the WebSocket executions
// channel (docs.kraken.com "Get Websockets Token"). With RefuseTokens the
// token is one the WebSocket refuses.
func (s *Server) getWebSocketsToken(a *account, _ url.Values) (any, error) {
	s.tokenSeq++
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(s.tokenSeq))
	sum := sha256.Sum256(append([]byte(a.Key), n[:]...))
	tok := base64.RawStdEncoding.EncodeToString(sum[:])
	if !s.refuseTokens {
		s.tokens[tok] = a.Key
	}
	return map[string]any{"token": tok, "expires": 900}, nil
}

// RefuseTokens makes the tokens handed out from now on unknown to the
// WebSocket (ESession:Invalid session on subscribe).
func (s *Server) RefuseTokens(refuse bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuseTokens = refuse
}

// PauseStreams drops every WebSocket connection and refuses new ones
// until resume is called; the REST API stays up.
func (s *Server) PauseStreams() (resume func()) {
	r1, r2 := s.pubWS.Pause(), s.authWS.Pause()
	return func() { r1(); r2() }
}

// DropStreams closes every WebSocket connection abruptly and returns how
// many there were.
func (s *Server) DropStreams() int { return s.pubWS.Drop() + s.authWS.Drop() }

// StreamConns counts the WebSocket connections accepted so far on the
// public (auth false) or authenticated endpoint.
func (s *Server) StreamConns(auth bool) int {
	if auth {
		return s.authWS.Accepted()
	}
	return s.pubWS.Accepted()
}

// WaitStreams waits until n WebSocket connections are open on the public
// (auth false) or authenticated endpoint.
func (s *Server) WaitStreams(ctx context.Context, auth bool, n int) error {
	if auth {
		return s.authWS.WaitConns(ctx, n)
	}
	return s.pubWS.WaitConns(ctx, n)
}

func rfc3339(unix decimal.Decimal) string {
	ns := unix.Shift(9).IntPart()
	return time.Unix(0, ns).UTC().Format(time.RFC3339Nano)
}

var wsStatuses = map[string]string{"pending": "pending_new", "open": "new", "closed": "filled", "canceled": "canceled", "expired": "expired"}

// executionJSON is an executions item of o: full (a snapshot or the
// first event of the order) or the fields an event of execType carries.
func (s *Server) executionJSON(o *order, execType string, full bool) map[string]any {
	p := o.Pair
	st := wsStatuses[o.Status]
	if st == "new" && o.VolExec.Sign() > 0 {
		st = "partially_filled"
	}
	x := map[string]any{
		"order_id": o.Txid, "order_status": st, "order_userref": 0,
		"cum_qty": num(o.VolExec, p.LotDecimals), "cum_cost": num(o.Cost, p.CostDecimals),
		"avg_price": num(o.AvgPrice, p.PairDecimals), "fee_usd_equiv": num(o.Fee, p.CostDecimals),
		"timestamp": rfc3339(o.OpenTm),
	}
	if execType != "" {
		x["exec_type"] = execType
	} else {
		x["exec_type"] = "new"
	}
	if o.Status != "open" && o.Status != "pending" {
		x["timestamp"] = rfc3339(o.CloseTm)
	}
	if full {
		x["symbol"], x["side"], x["order_type"] = v2Name(p), o.Type, o.OrderType
		x["order_qty"] = num(o.Volume, p.LotDecimals)
		x["time_in_force"] = o.TimeInForce
		x["post_only"] = slices.Contains(o.Oflags, "post")
		if o.OrderType == "limit" {
			x["limit_price"] = num(o.Price, p.PairDecimals)
		} else {
			x["time_in_force"] = "IOC"
		}
		if o.ClOrdID != "" {
			x["cl_ord_id"] = o.ClOrdID
		}
	}
	if o.Reason != "" && (o.Status == "canceled" || o.Status == "expired") {
		x["reason"] = o.Reason
	}
	return x
}

// syncExecutions pushes to a's executions subscribers every change of
// its orders since the last push: pending_new (and new) for a new order,
// a trade for each increase of the executed volume, then filled,
// canceled or expired, in Kraken's order. Changes made while nobody is
// subscribed are lost to the stream, as on Kraken. s.mu is held.
func (s *Server) syncExecutions(a *account) {
	var data []any
	for _, o := range a.orders {
		ps := s.pushed[o]
		if ps.seen && ps.status == o.Status && ps.volExec.Equal(o.VolExec) {
			continue
		}
		if !ps.seen {
			first := s.executionJSON(o, "pending_new", true)
			first["order_status"], first["cum_qty"], first["cum_cost"], first["avg_price"] = "pending_new", json.Number("0"), json.Number("0"), json.Number("0")
			first["timestamp"] = rfc3339(o.OpenTm)
			delete(first, "reason")
			data = append(data, first)
			if o.Status != "pending" && (o.Status == "open" || o.VolExec.Sign() > 0) {
				data = append(data, map[string]any{"order_id": o.Txid, "exec_type": "new", "order_status": "new", "timestamp": rfc3339(o.OpenTm), "order_userref": 0})
			}
		}
		if o.VolExec.GreaterThan(ps.volExec) {
			// One trade event for the volume executed since the last
			// push, at the order's average price of that volume.
			p := o.Pair
			last := o.VolExec.Sub(ps.volExec)
			var trades []*trade
			for _, t := range a.trades {
				if t.Order == o {
					trades = append(trades, t)
				}
			}
			execID := fmt.Sprintf("%s-%d", o.Txid, len(trades))
			if len(trades) > 0 {
				execID = trades[len(trades)-1].ID
			}
			cost := o.Cost.Sub(ps.cost)
			x := s.executionJSON(o, "trade", false)
			x["order_status"] = "partially_filled"
			x["exec_id"], x["last_qty"] = execID, num(last, p.LotDecimals)
			x["last_price"] = num(o.AvgPrice, p.PairDecimals)
			x["cost"] = num(cost, p.CostDecimals)
			x["liquidity_ind"] = "m"
			x["fees"] = []any{map[string]any{"asset": quoteName(p), "qty": num(o.Fee.Sub(ps.fee), p.CostDecimals)}}
			data = append(data, x)
		}
		if o.Status != "open" && o.Status != "pending" {
			data = append(data, s.executionJSON(o, wsStatuses[o.Status], false))
		}
		s.pushed[o] = pushState{seen: true, status: o.Status, volExec: o.VolExec, fee: o.Fee, cost: o.Cost}
	}
	if len(data) == 0 {
		return
	}
	s.execSeq++
	for c := range s.clients {
		if c.exec == a.Key {
			c.push(map[string]any{"channel": "executions", "type": "update", "data": data, "sequence": s.execSeq})
		}
	}
}

// quoteName is the common code of p's quote (the fees' asset on v2).
func quoteName(p *Pair) string {
	_, q, _ := strings.Cut(v2Name(p), "/")
	return q
}
