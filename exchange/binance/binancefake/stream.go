package binancefake

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/fakews"
)

// The fake's WebSocket side, on the same server as its REST API:
//
//   - market streams at /ws/<stream>[/<stream>…] (raw events) and
//     /stream?streams=<stream>/… (each event wrapped as
//     {"stream":…,"data":…}), with SUBSCRIBE / UNSUBSCRIBE requests
//     (web-socket-streams.md): <symbol>@depth and <symbol>@depth@100ms
//     diff depth with U/u update ids that GET /api/v3/depth's
//     lastUpdateId matches, and <symbol>@kline_<interval>;
//   - the WebSocket API at /ws-api/v3 (web-socket-api.md) with
//     userDataStream.subscribe.signature, checked like a signed REST
//     call (key, timestamp window, HMAC over the sorted parameters), and
//     executionReport events for every change of the account's orders.
//
// Events are queued per connection in the order the fake's state
// changed; a connection whose queue overflows is dropped, as Binance
// drops a consumer that falls behind.

// sub is one WebSocket connection's subscriptions and outgoing queue.
type sub struct {
	conn *fakews.Conn
	// combined wraps market events as /stream does.
	combined bool
	streams  map[string]bool
	// account receives the executionReports of the WebSocket API
	// subscription; subID is its subscriptionId.
	account *account
	subID   int64
}

func (u *sub) push(b []byte) { u.conn.Push(b) }

// firstBookID is the lastUpdateId of every book before its first change.
const firstBookID = 1027024

// klineLive is the streamed state of one symbol's current kline of one
// interval: its open time and the trades added to it (TradeKline).
type klineLive struct {
	open  time.Time
	extra int64
}

type klineLiveKey struct{ symbol, interval string }

// WSURL returns the base of the fake's WebSocket endpoints (ws://…): the
// market streams' base URL, and with /ws-api/v3 the WebSocket API's.
func (s *Server) WSURL() string { return "ws" + strings.TrimPrefix(s.URL, "http") }

// isWebSocket reports whether the request is for the WebSocket side.
func isWebSocket(path string) bool {
	return strings.HasPrefix(path, "/ws/") || path == "/stream" || path == "/ws-api/v3"
}

// serveWebSocket checks the stream names of a market stream connection
// (an unknown one is answered 400 without an upgrade) and hands the
// request to the WebSocket server.
func (s *Server) serveWebSocket(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/ws-api/v3" {
		names := streamNames(r)
		if len(names) == 0 {
			http.Error(w, `{"code":-1121,"msg":"Invalid request: no stream."}`, http.StatusBadRequest)
			return
		}
		for _, n := range names {
			if !s.validStream(n) {
				http.Error(w, `{"code":-1121,"msg":"Invalid symbol or stream."}`, http.StatusBadRequest)
				return
			}
		}
	}
	s.ws.ServeHTTP(w, r)
}

func streamNames(r *http.Request) []string {
	raw := strings.TrimPrefix(r.URL.Path, "/ws/")
	if r.URL.Path == "/stream" {
		raw = r.URL.Query().Get("streams")
	}
	var out []string
	for n := range strings.SplitSeq(raw, "/") {
		if n != "" {
			out = append(out, n)
		}
	}
	return out
}

// parseStream splits a stream name into its market and kind: "depth" or
// the kline interval's name.
func (s *Server) parseStream(name string) (m *market, kind string, ok bool) {
	sym, rest, found := strings.Cut(name, "@")
	if !found || sym != strings.ToLower(sym) {
		return nil, "", false
	}
	m = s.markets[strings.ToUpper(sym)]
	if m == nil {
		return nil, "", false
	}
	switch {
	case rest == "depth" || rest == "depth@100ms":
		return m, "depth", true
	case strings.HasPrefix(rest, "kline_"):
		iv := strings.TrimPrefix(rest, "kline_")
		if _, known := klineIntervals[iv]; known {
			return m, iv, true
		}
	}
	return nil, "", false
}

func (s *Server) validStream(name string) bool {
	_, _, ok := s.parseStream(name)
	return ok
}

// handleWS serves one WebSocket connection until it ends.
func (s *Server) handleWS(ctx context.Context, c *fakews.Conn) {
	u := &sub{conn: c, streams: map[string]bool{}, combined: c.Request.URL.Path == "/stream"}
	api := c.Request.URL.Path == "/ws-api/v3"
	s.mu.Lock()
	s.subs[u] = struct{}{}
	if !api {
		for _, n := range streamNames(c.Request) {
			u.streams[n] = true
			s.greet(u, n)
		}
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.subs, u)
		s.mu.Unlock()
	}()
	for {
		b, err := c.Read(ctx)
		if err != nil {
			return
		}
		if api {
			s.apiRequest(u, b)
		} else {
			s.streamRequest(u, b)
		}
	}
}

// greet sends what Binance sends soon after a subscription: the current
// kline of a kline stream (depth streams send only changes). Called with
// s.mu held.
func (s *Server) greet(u *sub, name string) {
	m, kind, _ := s.parseStream(name)
	if kind != "depth" {
		u.push(s.wrap(u, name, s.klineEvent(m, kind, s.kline(m.symbol, kind), false)))
	}
}

// wrap writes a market event as the connection reads it.
func (s *Server) wrap(u *sub, name string, event []byte) []byte {
	if !u.combined {
		return event
	}
	return append(append(append([]byte(`{"stream":"`), name...), `","data":`...), append(event, '}')...)
}

// streamRequest handles a SUBSCRIBE / UNSUBSCRIBE request on a market
// stream connection (web-socket-streams.md, "Live Subscribing/Unsubscribing
// to streams").
func (s *Server) streamRequest(u *sub, b []byte) {
	var req struct {
		Method string          `json:"method"`
		Params []string        `json:"params"`
		ID     json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(b, &req); err != nil || req.ID == nil {
		u.push([]byte(`{"error":{"code":3,"msg":"Invalid JSON: malformed request"}}`))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range req.Params {
		if !s.validStream(n) {
			u.push([]byte(`{"error":{"code":2,"msg":"Invalid request: unknown stream ` + strconv.Quote(n)[1:] + `,"id":` + string(req.ID) + `}`))
			return
		}
	}
	switch req.Method {
	case "SUBSCRIBE":
		for _, n := range req.Params {
			u.streams[n] = true
		}
	case "UNSUBSCRIBE":
		for _, n := range req.Params {
			delete(u.streams, n)
		}
	default:
		u.push([]byte(`{"error":{"code":2,"msg":"Invalid request: unknown method"},"id":` + string(req.ID) + `}`))
		return
	}
	u.push([]byte(`{"result":null,"id":` + string(req.ID) + `}`))
	if req.Method == "SUBSCRIBE" {
		for _, n := range req.Params {
			s.greet(u, n)
		}
	}
}

// apiAnswer writes a WebSocket API answer.
func apiAnswer(id json.RawMessage, status int, result string, code int, msg string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	if status == http.StatusOK {
		return []byte(`{"id":` + string(id) + `,"status":200,"result":` + result + `}`)
	}
	return []byte(`{"id":` + string(id) + `,"status":` + strconv.Itoa(status) + `,"error":{"code":` + strconv.Itoa(code) + `,"msg":` + strconv.Quote(msg) + `}}`)
}

// apiRequest handles one WebSocket API request. Only what the adapter
// uses is served: ping, and userDataStream.subscribe.signature.
func (s *Server) apiRequest(u *sub, b []byte) {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params map[string]any  `json:"params"`
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&req); err != nil || req.Method == "" {
		u.push(apiAnswer(req.ID, http.StatusBadRequest, "", -1102, "Mandatory parameter 'method' was not sent, was empty/null, or malformed."))
		return
	}
	switch req.Method {
	case "ping":
		u.push(apiAnswer(req.ID, http.StatusOK, "{}", 0, ""))
	case "userDataStream.subscribe.signature":
		s.subscribeUser(u, req.ID, req.Params)
	default:
		u.push(apiAnswer(req.ID, http.StatusBadRequest, "", -1020, "This operation is not supported."))
	}
}

// subscribeUser checks a signed subscription as Binance checks a signed
// request: the key, the parameters, the timestamp window and the HMAC of
// the parameters but signature sorted by name (web-socket-api.md,
// "SIGNED request security").
func (s *Server) subscribeUser(u *sub, id json.RawMessage, params map[string]any) {
	text := map[string]string{}
	for k, v := range params {
		switch v := v.(type) {
		case string:
			text[k] = v
		case json.Number:
			text[k] = v.String()
		default:
			u.push(apiAnswer(id, http.StatusBadRequest, "", -1100, "Illegal characters found in parameter '"+k+"'."))
			return
		}
	}
	for _, k := range []string{"apiKey", "timestamp", "signature"} {
		if text[k] == "" {
			u.push(apiAnswer(id, http.StatusBadRequest, "", -1102, "Mandatory parameter '"+k+"' was not sent, was empty/null, or malformed."))
			return
		}
	}
	for k := range text {
		if k != "apiKey" && k != "timestamp" && k != "signature" && k != "recvWindow" {
			u.push(apiAnswer(id, http.StatusBadRequest, "", -1104, "Not all sent parameters were read."))
			return
		}
	}
	s.mu.Lock()
	a := s.accounts[text["apiKey"]]
	s.mu.Unlock()
	if a == nil {
		u.push(apiAnswer(id, http.StatusUnauthorized, "", -2015, "Invalid API-key, IP, or permissions for action."))
		return
	}
	window := url.Values{"timestamp": {text["timestamp"]}}
	if rw := text["recvWindow"]; rw != "" {
		window.Set("recvWindow", rw)
	}
	if resp, bad := checkWindow(window, s.serverTime()); bad {
		var e struct {
			Code int    `json:"code"`
			Msg  string `json:"msg"`
		}
		_ = json.Unmarshal(resp.body, &e)
		u.push(apiAnswer(id, resp.status, "", e.Code, e.Msg))
		return
	}
	keys := make([]string, 0, len(text))
	for k := range text {
		if k != "signature" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var payload strings.Builder
	for i, k := range keys {
		if i > 0 {
			payload.WriteByte('&')
		}
		payload.WriteString(k + "=" + text[k])
	}
	mac := hmac.New(sha256.New, []byte(a.secret))
	mac.Write([]byte(payload.String()))
	if !hmac.Equal([]byte(strings.ToLower(text["signature"])), []byte(hex.EncodeToString(mac.Sum(nil)))) {
		u.push(apiAnswer(id, http.StatusBadRequest, "", -1022, "Signature for this request is not valid."))
		return
	}
	s.mu.Lock()
	s.nextSubID++
	u.account, u.subID = a, s.nextSubID
	s.mu.Unlock()
	u.push(apiAnswer(id, http.StatusOK, `{"subscriptionId":`+strconv.FormatInt(u.subID, 10)+`}`, 0, ""))
}

// report pushes an executionReport of o to the account's subscribers:
// exec is the execution type, f the trade (for TRADE), cum and cumQuote
// the quantities executed so far, status the order's status after it.
// Called with s.mu held.
func (s *Server) report(a *account, o *order, exec string, f *fill, cum, cumQuote decimal.Decimal, status, clientID, origClientID string) {
	if len(s.subs) == 0 {
		return
	}
	now := s.serverTime().UnixMilli()
	ev := map[string]any{
		"e": "executionReport", "E": now, "s": o.symbol, "c": clientID, "S": o.side, "o": o.typ, "f": o.tif,
		"q": fixed(o.origQty), "p": fixed(o.price), "P": "0.00000000", "F": "0.00000000", "g": -1, "C": origClientID,
		"x": exec, "X": status, "r": "NONE", "i": o.id, "l": "0.00000000", "z": fixed(cum), "L": "0.00000000",
		"n": "0", "N": nil, "T": now, "t": -1, "I": o.id * 2, "w": status == "NEW" || status == "PARTIALLY_FILLED",
		"m": false, "M": false, "O": o.time, "Z": fixed(cumQuote), "Y": "0.00000000", "Q": fixed(o.origQuote), "V": "EXPIRE_MAKER",
	}
	if o.typ != "MARKET" {
		ev["W"] = o.time
	}
	if f != nil {
		ev["l"], ev["L"], ev["n"], ev["N"] = fixed(f.qty), fixed(f.price), fixed(f.commission), f.commissionAsset
		ev["t"], ev["m"], ev["Y"], ev["T"] = f.tradeID, f.maker, fixed(f.qty.Mul(f.price)), f.time
	}
	event, err := json.Marshal(ev)
	if err != nil {
		panic(err) // plain values
	}
	for u := range s.subs {
		if u.account == a {
			u.push([]byte(`{"subscriptionId":` + strconv.FormatInt(u.subID, 10) + `,"event":` + string(event) + `}`))
		}
	}
}

// reportPlaced pushes the events of a new order: NEW, one TRADE per
// fill, and EXPIRED when it did not rest. Called with s.mu held.
func (s *Server) reportPlaced(a *account, o *order) {
	s.report(a, o, "NEW", nil, decimal.Zero, decimal.Zero, "NEW", o.clientID, "")
	var cum, quote decimal.Decimal
	for i := range o.fills {
		f := &o.fills[i]
		cum, quote = cum.Add(f.qty), quote.Add(f.qty.Mul(f.price))
		st := "PARTIALLY_FILLED"
		if i == len(o.fills)-1 && o.status == "FILLED" {
			st = "FILLED"
		}
		s.report(a, o, "TRADE", f, cum, quote, st, o.clientID, "")
	}
	if o.status == "EXPIRED" {
		s.report(a, o, "EXPIRED", nil, o.executed, o.quote, "EXPIRED", o.clientID, "")
	}
}

// Book returns the fake's book of symbol (BTCUSDT), best first, at most
// depth levels a side, as the stream cases compare it.
func (s *Server) Book(symbol string, depth int) exgate.OrderBook {
	s.mu.Lock()
	m := s.markets[symbol]
	bids, asks := m.bids, m.asks
	s.mu.Unlock()
	out := exgate.OrderBook{}
	for _, side := range []struct {
		from []level
		to   *[]exgate.Level
	}{{bids, &out.Bids}, {asks, &out.Asks}} {
		for _, l := range side.from[:min(depth, len(side.from))] {
			*side.to = append(*side.to, exgate.Level{Price: fixed8(l.ticks, m.tickExp), Quantity: fixed8(l.tenths, 1)})
		}
	}
	return out
}

// ChangeBook changes symbol's book (the best bid's and the second ask's
// quantities grow by one unit, a new bid level appears between the best
// two when there is room, or an existing one goes) and pushes the update,
// which spans two update ids.
func (s *Server) ChangeBook(symbol string) { s.changeBook(symbol, true) }

// SkipBookUpdate changes symbol's book without pushing the update: the
// next update's U is past the last one's u + 1, a gap.
func (s *Server) SkipBookUpdate(symbol string) { s.changeBook(symbol, false) }

func (s *Server) changeBook(symbol string, push bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.markets[symbol]
	bids, asks := slices.Clone(m.bids), slices.Clone(m.asks)
	var changedBids, changedAsks []level
	bids[0].tenths += m.unit
	asks[1].tenths += m.unit
	changedBids = append(changedBids, bids[0])
	changedAsks = append(changedAsks, asks[1])
	s.bookChanges++
	if mid := bids[0].ticks - m.spacing/2; m.spacing > 1 && mid > bids[1].ticks && s.bookChanges%2 == 1 {
		l := level{ticks: mid, tenths: m.unit}
		bids = slices.Insert(bids, 1, l)
		changedBids = append(changedBids, l)
	} else if len(bids) > 2 && bids[1].ticks != bids[0].ticks-m.spacing {
		gone := bids[1]
		bids = slices.Delete(bids, 1, 2)
		gone.tenths = 0
		changedBids = append(changedBids, gone)
	}
	m.bids, m.asks = bids, asks
	first := m.bookID + 1
	m.bookID += 2
	s.depthCache.Clear()
	if !push {
		return
	}
	levels := func(ls []level) []any {
		out := make([]any, 0, len(ls))
		for _, l := range ls {
			out = append(out, []string{fixed8(l.ticks, m.tickExp), fixed8(l.tenths, 1)})
		}
		return out
	}
	event, err := json.Marshal(map[string]any{"e": "depthUpdate", "E": s.serverTime().UnixMilli(), "s": m.symbol,
		"U": first, "u": m.bookID, "b": levels(changedBids), "a": levels(changedAsks)})
	if err != nil {
		panic(err)
	}
	lower := strings.ToLower(m.symbol)
	for u := range s.subs {
		for _, name := range []string{lower + "@depth@100ms", lower + "@depth"} {
			if u.streams[name] {
				u.push(s.wrap(u, name, event))
			}
		}
	}
}

// kline returns the streamed state of a symbol's current kline of
// interval, starting it at the current interval. Called with s.mu held.
func (s *Server) kline(symbol, interval string) *klineLive {
	k := klineLiveKey{symbol, interval}
	st := s.klinesLive[k]
	if st == nil {
		st = &klineLive{open: klineIntervals[interval].Start(s.serverTime())}
		s.klinesLive[k] = st
	}
	return st
}

// liveExtra returns the trades TradeKline added to the kline of symbol
// and interval opening at open.
func (s *Server) liveExtra(symbol, interval string, open time.Time) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.klinesLive[klineLiveKey{symbol, interval}]; st != nil && st.open.Equal(open) {
		return st.extra
	}
	return 0
}

// klineEvent writes the kline message of st.
func (s *Server) klineEvent(m *market, interval string, st *klineLive, closed bool) []byte {
	iv := klineIntervals[interval]
	v := klineValues(m, interval, st.open, st.extra)
	event, err := json.Marshal(map[string]any{"e": "kline", "E": s.serverTime().UnixMilli(), "s": m.symbol, "k": map[string]any{
		"t": st.open.UnixMilli(), "T": iv.Next(st.open).UnixMilli() - 1, "s": m.symbol, "i": interval, "f": 100, "L": 100 + v.trades,
		"o": v.open, "c": v.close, "h": v.high, "l": v.low, "v": v.volume, "n": v.trades, "x": closed,
		"q": v.quoteVolume, "V": v.takerBase, "Q": v.takerQuote, "B": "0",
	}})
	if err != nil {
		panic(err)
	}
	return event
}

// TradeKline adds a trade to symbol's current 1m kline and pushes it;
// with next, the current kline is pushed closed first and the trade
// opens the next one.
func (s *Server) TradeKline(symbol string, next bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.markets[symbol]
	st := s.kline(symbol, "1m")
	name := strings.ToLower(symbol) + "@kline_1m"
	send := func(closed bool) {
		ev := s.klineEvent(m, "1m", st, closed)
		for u := range s.subs {
			if u.streams[name] {
				u.push(s.wrap(u, name, ev))
			}
		}
	}
	if next {
		send(true)
		st.open, st.extra = st.open.Add(time.Minute), 0
	}
	st.extra++
	send(false)
}

// PauseStreams drops every WebSocket connection and refuses new ones
// until resume is called; the REST API stays up.
func (s *Server) PauseStreams() (resume func()) { return s.ws.Pause() }

// DropStreams closes every WebSocket connection abruptly and returns how
// many there were.
func (s *Server) DropStreams() int { return s.ws.Drop() }

// StreamsAccepted counts the WebSocket connections accepted so far.
func (s *Server) StreamsAccepted() int { return s.ws.Accepted() }

// WaitStreams waits until n WebSocket connections are open.
func (s *Server) WaitStreams(ctx context.Context, n int) error { return s.ws.WaitConns(ctx, n) }

// SetBook replaces symbol's book with the levels given, best first, as
// [price, quantity] decimal strings (a price on the market's tick, a
// quantity in tenths), without pushing an update: a scripted book for a
// test that reads it over REST.
func (s *Server) SetBook(symbol string, bids, asks [][2]string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.markets[symbol]
	if m == nil {
		return fmt.Errorf("binancefake: no market %s", symbol)
	}
	parse := func(side [][2]string) ([]level, error) {
		out := make([]level, 0, len(side))
		for _, l := range side {
			p, err := decimal.NewFromString(l[0])
			if err != nil {
				return nil, err
			}
			q, err := decimal.NewFromString(l[1])
			if err != nil {
				return nil, err
			}
			ticks, tenths := p.Shift(m.tickExp), q.Shift(1)
			if !ticks.IsInteger() || !tenths.IsInteger() {
				return nil, fmt.Errorf("binancefake: level %v is off %s's tick or a tenth", l, symbol)
			}
			out = append(out, level{ticks: ticks.IntPart(), tenths: tenths.IntPart()})
		}
		return out, nil
	}
	b, err := parse(bids)
	if err != nil {
		return err
	}
	a, err := parse(asks)
	if err != nil {
		return err
	}
	m.bids, m.asks = b, a
	m.bookID += 2
	s.depthCache.Clear()
	return nil
}
