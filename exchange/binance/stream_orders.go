package binance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/coder/websocket"
	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
	"github.com/exgate/exgate/exchange/internal/wsstream"
)

// epUserStream names the WebSocket API subscription in errors (it is no
// REST call: the client's tables classify its refusals the same way).
var epUserStream = endpoint{name: "userDataStream.subscribe.signature"}

// subscribeWithin bounds the wait for the subscription's answer.
const subscribeWithin = 10 * time.Second

// catchUpMargin widens the window of the REST catch-up after a
// reconnect: orders that ended from this long before the last message
// seen are read again.
const catchUpMargin = 5 * time.Second

// maxTracked bounds the orders a stream remembers (their last emitted
// state); past it, the ended ones are forgotten.
const maxTracked = 10000

// wsAPIMessage is what the WebSocket API sends (web-socket-api.md,
// "Response format" and "Event format"): an answer to a request (id,
// status, result or error) or a User Data Stream event.
type wsAPIMessage struct {
	ID     json.RawMessage `json:"id"`
	Status int             `json:"status"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code int    `json:"code"`
		Msg  string `json:"msg"`
	} `json:"error"`
	SubscriptionID *int64          `json:"subscriptionId"`
	Event          json.RawMessage `json:"event"`
}

// executionReport is the User Data Stream's order update
// (user-data-stream.md, "Order Update"). Every member whose name differs
// from another only in case is declared, as encoding/json matches names
// case-insensitively.
type executionReport struct {
	Type              string          `json:"e"`
	EventTime         int64           `json:"E"`
	Symbol            string          `json:"s"`
	Side              string          `json:"S"`
	ClientOrderID     string          `json:"c"`
	OrigClientOrderID string          `json:"C"`
	OrderType         string          `json:"o"`
	CreationTime      int64           `json:"O"`
	TimeInForce       string          `json:"f"`
	IcebergQty        json.RawMessage `json:"F"`
	Quantity          rest.Decimal    `json:"q"`
	QuoteOrderQty     rest.Decimal    `json:"Q"`
	Price             rest.Decimal    `json:"p"`
	StopPrice         json.RawMessage `json:"P"`
	ExecutionType     string          `json:"x"`
	Status            string          `json:"X"`
	LastQty           rest.Decimal    `json:"l"`
	LastPrice         rest.Decimal    `json:"L"`
	CumulativeQty     rest.Decimal    `json:"z"`
	CumulativeQuote   rest.Decimal    `json:"Z"`
	Commission        rest.Decimal    `json:"n"`
	CommissionAsset   *string         `json:"N"`
	TradeID           int64           `json:"t"`
	TransactTime      int64           `json:"T"`
	OrderID           int64           `json:"i"`
	Ignore            json.RawMessage `json:"I"`
	OnBook            bool            `json:"w"`
	WorkingTime       int64           `json:"W"`
	Maker             bool            `json:"m"`
	IgnoreM           json.RawMessage `json:"M"`
}

// userEvent is one parsed message of the order stream.
type userEvent struct {
	// answer is set for an answer to a request; event for an event.
	answer *wsAPIMessage
	kind   string
	report executionReport
}

// parseUserMessage reads a WebSocket API message: an answer, an
// executionReport (checked as parseOrder checks REST orders), or another
// event (kind only).
func parseUserMessage(b []byte) (userEvent, error) {
	var m wsAPIMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return userEvent{}, fmt.Errorf("websocket API message: %w", err)
	}
	if m.Event == nil {
		if m.Status == 0 {
			return userEvent{}, fmt.Errorf("websocket API message without status or event: %s", rest.Truncate(b))
		}
		return userEvent{answer: &m}, nil
	}
	var head struct {
		Type string          `json:"e"`
		Time json.RawMessage `json:"E"` // declared so that "E" is not read into Type
	}
	if err := json.Unmarshal(m.Event, &head); err != nil {
		return userEvent{}, fmt.Errorf("user data event: %w", err)
	}
	if head.Type != "executionReport" {
		return userEvent{kind: head.Type}, nil
	}
	var r executionReport
	if err := json.Unmarshal(m.Event, &r); err != nil {
		return userEvent{}, fmt.Errorf("executionReport: %w", err)
	}
	switch {
	case r.OrderID <= 0 || r.Status == "" || r.Symbol == "":
		return userEvent{}, fmt.Errorf("executionReport without order id, status or symbol: %s", rest.Truncate(b))
	case r.Side != string(exgate.SideBuy) && r.Side != string(exgate.SideSell):
		return userEvent{}, fmt.Errorf("executionReport with side %q", r.Side)
	case r.Quantity.IsNegative() || r.QuoteOrderQty.IsNegative() || r.CumulativeQty.IsNegative() || r.LastQty.IsNegative() ||
		r.LastPrice.IsNegative() || r.Commission.IsNegative() || r.Price.IsNegative():
		return userEvent{}, fmt.Errorf("executionReport with a negative value")
	}
	return userEvent{kind: head.Type, report: r}, nil
}

// orderJSON returns the report as the REST order answers have it, so
// that orderOf normalizes both alike. The client order id is the
// order's own: on a cancel, C (the canceled order's) rather than c (the
// cancel request's).
func (r *executionReport) orderJSON() orderJSON {
	id := r.ClientOrderID
	if r.OrigClientOrderID != "" {
		id = r.OrigClientOrderID
	}
	return orderJSON{
		Symbol: r.Symbol, OrderID: r.OrderID, ClientOrderID: id,
		Time: r.CreationTime, TransactTime: r.TransactTime, UpdateTime: r.TransactTime, WorkingTime: r.WorkingTime,
		OrigQty: r.Quantity, ExecutedQty: r.CumulativeQty, OrigQuoteOrderQty: r.QuoteOrderQty, CummulativeQuoteQty: r.CumulativeQuote,
		Status: r.Status, Type: r.OrderType, Side: r.Side, Price: r.Price, TimeInForce: r.TimeInForce,
	}
}

// subscribeRequest is userDataStream.subscribe.signature signed with the
// credential's HMAC key: the parameters sorted by name, joined as
// name=value pairs with &, HMAC-SHA256 in hex (web-socket-api.md,
// "SIGNED request example (HMAC)"). session.logon, the other way in,
// takes Ed25519 keys only, and exgate's keys are HMAC.
func subscribeRequest(id int, cred exgate.Credential, recvWindow, timestamp int64) ([]byte, error) {
	payload := "apiKey=" + cred.Key + "&recvWindow=" + strconv.FormatInt(recvWindow, 10) + "&timestamp=" + strconv.FormatInt(timestamp, 10)
	return json.Marshal(map[string]any{
		"id":     id,
		"method": "userDataStream.subscribe.signature",
		"params": map[string]any{
			"apiKey":     cred.Key,
			"recvWindow": recvWindow,
			"timestamp":  timestamp,
			"signature":  sign(cred.Secret, payload, ""),
		},
	})
}

// tracked is the last state of an order the stream emitted.
type tracked struct {
	symbol          exgate.Symbol
	clientOrderID   string
	exchangeOrderID string
	executed        decimal.Decimal
	status          exgate.OrderStatus
	final           bool
	// fills are the trades the stream reported, for the fees; nil once
	// the order ended.
	fills []fillJSON
}

// orderWatch is the state of one WatchOrders call across its sessions.
type orderWatch struct {
	e    *Exchange
	cred exgate.Credential
	emit func(exgate.Order)
	// orders are the orders seen, by exchange order id.
	orders map[string]*tracked
	// symbols are the pairs the stream saw orders on.
	symbols map[exgate.Symbol]bool
	// lastSeen is the exchange's time of the last message of a live
	// session: the catch-up reads what ended from then on.
	lastSeen time.Time
}

// WatchOrders streams the credential's orders from the User Data Stream
// of the WebSocket API (userDataStream.subscribe.signature). Each
// executionReport is normalized as the REST lookups are (orderOf), fees
// from the trades the stream reported, or from GET /api/v3/myTrades when
// some were missed. Each session starts with the open orders
// (GET /api/v3/openOrders); after a reconnect, it also reads back every
// order it knew open that no longer is (GET /api/v3/order) and the recent
// orders of every pair it saw (GET /api/v3/allOrders) that ended while
// it was down, before it goes live again. Events held meanwhile are then
// applied; an event older than what was emitted for its order (less
// executed, or after the order ended) is dropped, so an order never goes
// back. A key Binance refuses ends the call with EXCHANGE_AUTH_FAILED.
func (e *Exchange) WatchOrders(ctx context.Context, cred exgate.Credential, emit func(exgate.Order)) error {
	w := &orderWatch{e: e, cred: cred, emit: emit, orders: map[string]*tracked{}, symbols: map[exgate.Symbol]bool{}}
	return e.run(ctx, "orders "+cred.Name, w.session)
}

func (w *orderWatch) session(ctx context.Context, s *wsstream.Session) error {
	e := w.e
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	conn, err := e.dial(ctx, e.stream.apiURL)
	if err != nil {
		return err
	}
	frames := conn.frames(ctx, e.stream.idle)
	if err := w.subscribe(ctx, conn, frames); err != nil {
		return err
	}
	if err := w.catchUp(ctx, s.Reconnect); err != nil {
		return err
	}
	s.Live()
	for {
		b, err := next(ctx, frames)
		if err != nil {
			return err
		}
		w.lastSeen = e.c.serverNow()
		ev, err := parseUserMessage(b)
		if err != nil {
			return err
		}
		switch ev.kind {
		case "executionReport":
			w.report(ctx, &ev.report)
		case "eventStreamTerminated":
			return errors.New("binance ended the user data stream (eventStreamTerminated)")
		}
	}
}

// subscribe sends the signed subscription and waits for its answer.
func (w *orderWatch) subscribe(ctx context.Context, conn *wsConn, frames <-chan frame) error {
	e := w.e
	req, err := subscribeRequest(1, w.cred, e.c.recvWindow, e.c.serverNow().UnixMilli())
	if err != nil {
		return err
	}
	if err := conn.ws.Write(ctx, websocket.MessageText, req); err != nil {
		return fmt.Errorf("binance user data subscription not sent: %w", err)
	}
	wait, cancel := context.WithTimeout(ctx, subscribeWithin)
	defer cancel()
	for {
		b, err := next(wait, frames)
		if err != nil {
			return fmt.Errorf("binance user data subscription unanswered: %w", err)
		}
		m, err := parseUserMessage(b)
		if err != nil {
			return err
		}
		if m.answer == nil || string(m.answer.ID) != "1" {
			continue
		}
		if m.answer.Status == 200 {
			return nil
		}
		ae := &apiError{status: m.answer.Status}
		if m.answer.Error != nil {
			ae.code, ae.msg = m.answer.Error.Code, m.answer.Error.Msg
		}
		if ae.code == codeInvalidTime {
			if serr := e.c.syncTime(ctx); serr != nil {
				e.log.WarnContext(ctx, "binance clock not resynchronized", "err", serr)
			}
		}
		err = e.c.classify(epUserStream, ae)
		e.log.WarnContext(ctx, "binance user data subscription refused", "key", w.cred.Name, "err", err)
		return err
	}
}

// catchUp emits the open orders and, after a reconnect, what changed
// while the stream was down.
func (w *orderWatch) catchUp(ctx context.Context, reconnect bool) error {
	e := w.e
	open, err := e.OpenOrders(ctx, w.cred, exgate.OrderFilter{})
	if err != nil {
		return err
	}
	if reconnect {
		isOpen := make(map[string]bool, len(open))
		for _, o := range open {
			isOpen[o.ExchangeOrderID] = true
		}
		for id, t := range w.orders {
			if t.final || isOpen[id] {
				continue
			}
			o, err := e.QueryOrder(ctx, w.cred, exgate.OrderQuery{Symbol: t.symbol, ClientOrderID: t.clientOrderID, ExchangeOrderID: t.exchangeOrderID})
			if err != nil {
				return err
			}
			w.put(o, nil)
		}
		since := w.lastSeen.Add(-catchUpMargin).UnixMilli()
		for sym := range w.symbols {
			recent, err := e.RecentOrders(ctx, w.cred, exgate.OrderFilter{Symbol: sym, Limit: exgate.DefaultRecentLimit})
			if err != nil {
				return err
			}
			for _, o := range recent {
				if o.Status.Final() && o.CloseAt >= since {
					w.put(o, nil)
				}
			}
		}
	}
	for _, o := range open {
		w.put(o, nil)
	}
	return nil
}

// report emits the order an executionReport describes.
func (w *orderWatch) report(ctx context.Context, r *executionReport) {
	e := w.e
	set, err := e.markets.get(ctx)
	if err != nil {
		e.log.WarnContext(ctx, "binance order update not normalized: markets unknown", "orderId", r.OrderID, "err", err)
		return
	}
	mk := set.bySymbol[r.Symbol]
	if mk == nil {
		e.log.WarnContext(ctx, "binance order update on a symbol not in exchangeInfo; left out", "symbol", r.Symbol, "orderId", r.OrderID)
		return
	}
	oj := r.orderJSON()
	t := w.orders[strconv.FormatInt(r.OrderID, 10)]
	if t.stale(oj.ExecutedQty.Decimal, orderStatus(oj.Status)) {
		return
	}
	var fills []fillJSON
	if t != nil {
		fills = t.fills
	}
	if r.ExecutionType == "TRADE" && r.LastQty.IsPositive() {
		f := fillJSON{Price: r.LastPrice, Qty: r.LastQty, Commission: r.Commission}
		if r.CommissionAsset != nil {
			f.CommissionAsset = *r.CommissionAsset
		}
		fills = append(fills[:len(fills):len(fills)], f)
	}
	if sum := fillSum(fills); oj.ExecutedQty.IsPositive() && !sum.Equal(oj.ExecutedQty.Decimal) {
		// Some trades were not seen on the stream (it started or
		// came back after them): read them all.
		fills = e.tradeFills(ctx, w.cred, mk, r.OrderID)
	}
	oj.Fills = fills
	w.put(e.orderOf(ctx, mk, oj, oj.ClientOrderID), fills)
}

func fillSum(fills []fillJSON) decimal.Decimal {
	var s decimal.Decimal
	for _, f := range fills {
		s = s.Add(f.Qty.Decimal)
	}
	return s
}

// put emits o unless it would take its order back: an order that ended
// is not emitted again, nor one with less executed than emitted before,
// nor one unchanged.
func (w *orderWatch) put(o exgate.Order, fills []fillJSON) {
	executed := decimal.Zero
	if o.ExecutedQuantity != nil {
		executed = o.ExecutedQuantity.Decimal
	}
	t := w.orders[o.ExchangeOrderID]
	if t.stale(executed, o.Status) {
		return
	}
	if t == nil {
		w.prune()
		t = &tracked{}
		w.orders[o.ExchangeOrderID] = t
	}
	sym := exgate.Symbol{Base: o.Asset1, Quote: o.Asset2}
	*t = tracked{symbol: sym, clientOrderID: o.ClientOrderID, exchangeOrderID: o.ExchangeOrderID,
		executed: executed, status: o.Status, final: o.Status.Final(), fills: fills}
	if t.final {
		t.fills = nil
	}
	w.symbols[sym] = true
	w.emit(o)
}

// stale reports whether an order state is no news after t (nil: no
// state emitted yet): the order ended, or has as much executed in the
// same status, or more.
func (t *tracked) stale(executed decimal.Decimal, status exgate.OrderStatus) bool {
	return t != nil && (t.final || executed.LessThan(t.executed) || (executed.Equal(t.executed) && status == t.status))
}

// prune forgets the ended orders once too many are remembered.
func (w *orderWatch) prune() {
	if len(w.orders) < maxTracked {
		return
	}
	for id, t := range w.orders {
		if t.final {
			delete(w.orders, id)
		}
	}
}
