package binancefake

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"
)

// The order lifecycle: LIMIT and LIMIT_MAKER orders on POST /api/v3/order
// (and /api/v3/order/test), DELETE /api/v3/order, GET /api/v3/openOrders
// and GET /api/v3/allOrders. Source: binance-spot-api-docs rest-api.md
// ("New order", "Test new order", "Cancel order", "Current open orders",
// "All orders") and enums.md ("Order status", "Time in force").
//
// The matching model is simple: a limit order trades against the static
// book's levels its price crosses (levels are not consumed); what is left
// of a GTC order rests, holding its funds (locked), until FillOrder fills
// it or it is canceled. IOC expires what did not fill, FOK expires
// unfilled unless it fills completely, LIMIT_MAKER is refused when it
// would trade at once.

// makerFee is the commission of a resting order's fill.
var makerFee = decimal.New(1, -3)

// lifecycleRoutes lists the lifecycle endpoints with their weights and
// parameters (rest-api.md).
func (s *Server) lifecycleRoutes() []*route {
	fixed := func(n int) func(url.Values) int { return func(url.Values) int { return n } }
	orderParams := []string{"symbol", "side", "type", "timeInForce", "quantity", "quoteOrderQty", "price", "newClientOrderId",
		"strategyId", "strategyType", "stopPrice", "trailingDelta", "icebergQty", "newOrderRespType", "selfTradePreventionMode",
		"pegPriceType", "pegOffsetValue", "pegOffsetType"}
	return []*route{
		{method: http.MethodPost, path: "/api/v3/order/test", signed: true, weight: func(p url.Values) int {
			if p.Get("computeCommissionRates") == "true" {
				return 20
			}
			return 1
		}, allowed: append(slices.Clip(orderParams), "computeCommissionRates"), required: []string{"symbol", "side", "type"}, handle: s.handleTestOrder},
		{method: http.MethodDelete, path: "/api/v3/order", signed: true, weight: fixed(1),
			allowed:  []string{"symbol", "orderId", "origClientOrderId", "newClientOrderId", "cancelRestrictions"},
			required: []string{"symbol"}, handle: s.handleCancelOrder},
		{method: http.MethodGet, path: "/api/v3/openOrders", signed: true, weight: func(p url.Values) int {
			if p.Get("symbol") != "" {
				return 6
			}
			return 80
		}, allowed: []string{"symbol"}, handle: s.handleOpenOrders},
		{method: http.MethodGet, path: "/api/v3/allOrders", signed: true, weight: fixed(20),
			allowed: []string{"symbol", "orderId", "startTime", "endTime", "limit"}, required: []string{"symbol"}, handle: s.handleAllOrders},
	}
}

var timesInForce = []string{"GTC", "IOC", "FOK"}

// newLimitOrder checks a LIMIT or LIMIT_MAKER order as Binance does and,
// unless test, executes it.
func (s *Server) newLimitOrder(c *call, m *market, side, typ string, test bool) response {
	a := c.account
	tif := c.get("timeInForce")
	switch {
	case typ == "LIMIT" && tif == "":
		return apiErr(http.StatusBadRequest, -1102, "Mandatory parameter 'timeInForce' was not sent, was empty/null, or malformed.")
	case typ == "LIMIT" && !slices.Contains(timesInForce, tif):
		return apiErr(http.StatusBadRequest, -1115, "Invalid timeInForce.")
	case typ == "LIMIT_MAKER" && tif != "":
		return apiErr(http.StatusBadRequest, -1106, "Parameter 'timeInForce' sent when not required.")
	}
	if typ == "LIMIT_MAKER" {
		tif = "GTC"
	}
	for _, name := range []string{"quoteOrderQty", "stopPrice", "trailingDelta", "pegPriceType", "pegOffsetValue", "pegOffsetType"} {
		if c.get(name) != "" {
			return apiErr(http.StatusBadRequest, -1106, "Parameter '"+name+"' sent when not required.")
		}
	}
	for _, name := range []string{"quantity", "price"} {
		if c.get(name) == "" {
			return apiErr(http.StatusBadRequest, -1102, "Mandatory parameter '"+name+"' was not sent, was empty/null, or malformed.")
		}
	}
	respType := c.get("newOrderRespType")
	if respType == "" {
		respType = "FULL"
		if typ == "LIMIT_MAKER" {
			respType = "ACK" // rest-api.md: FULL is the default of MARKET and LIMIT only
		}
	}
	if respType != "ACK" && respType != "RESULT" && respType != "FULL" {
		return illegal("newOrderRespType", "ACK, RESULT, FULL")
	}
	clientID := c.get("newClientOrderId")
	if clientID != "" && !clientIDPattern.MatchString(clientID) {
		return illegal("newClientOrderId", "^[a-zA-Z0-9-_]{1,36}$")
	}
	if m.status != "TRADING" {
		return apiErr(http.StatusBadRequest, -2010, "Market is closed.")
	}
	price, bad, good := parseAmount("price", c.get("price"), 8)
	if !good {
		return bad
	}
	qty, bad, good := parseAmount("quantity", c.get("quantity"), m.basePrec)
	if !good {
		return bad
	}
	// filters.md: PRICE_FILTER, LOT_SIZE, then the notional filter.
	if tick := decimal.New(1, -m.tickExp); !price.Mod(tick).IsZero() || price.GreaterThan(dec("1000000")) {
		return apiErr(http.StatusBadRequest, -1013, "Filter failure: PRICE_FILTER")
	}
	if qty.LessThan(m.lotMin) || qty.GreaterThan(m.lotMax) || !qty.Mod(m.lotStep).IsZero() {
		return apiErr(http.StatusBadRequest, -1013, "Filter failure: LOT_SIZE")
	}
	if qty.Mul(price).LessThan(m.minNotional) {
		return apiErr(http.StatusBadRequest, -1013, "Filter failure: "+m.notionalFilter)
	}
	if test {
		return ok([]byte("{}"))
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if clientID != "" {
		for _, o := range a.byClientID[clientID] {
			if o.open() {
				return apiErr(http.StatusBadRequest, -2010, "Duplicate order sent.")
			}
		}
	} else {
		clientID = s.generatedClientID()
	}
	fills, executed, cost := m.crossing(side, qty, price)
	if typ == "LIMIT_MAKER" && executed.IsPositive() {
		return apiErr(http.StatusBadRequest, -2010, "Order would immediately match and take.")
	}
	status := "FILLED"
	switch {
	case executed.Equal(qty):
	case tif == "FOK":
		fills, executed, cost, status = nil, decimal.Zero, decimal.Zero, "EXPIRED"
	case tif == "IOC":
		status = "EXPIRED"
	case executed.IsPositive():
		status = "PARTIALLY_FILLED"
	default:
		status = "NEW"
	}
	rest := qty.Sub(executed)
	if status == "EXPIRED" {
		rest = decimal.Zero
	}
	spendAsset, spend, hold := m.quote, cost, rest.Mul(price)
	if side == "SELL" {
		spendAsset, spend, hold = m.base, executed, rest
	}
	if a.free[spendAsset].LessThan(spend.Add(hold)) {
		return apiErr(http.StatusBadRequest, -2010, "Account has insufficient balance for requested action.")
	}
	now := c.now.UnixMilli()
	o := &order{symbol: m.symbol, side: side, clientID: clientID, id: s.nextOrderID, typ: typ, tif: tif, price: price,
		origQty: qty, time: now, updateTime: now, status: status}
	s.nextOrderID++
	a.free[spendAsset] = a.free[spendAsset].Sub(spend).Sub(hold)
	a.locked[spendAsset] = a.locked[spendAsset].Add(hold)
	for _, f := range fills {
		s.applyFill(a, m, o, f.price, f.qty, false, now)
	}
	a.orders = append(a.orders, o)
	a.byClientID[clientID] = append(a.byClientID[clientID], o)
	a.touch(c.now)
	s.reportPlaced(a, o)
	resp := ok(encodeOrderAnswer(o, respType))
	resp.header = a.countOrder(c.now)
	return resp
}

// open reports whether the order is on the book.
func (o *order) open() bool { return o.status == "NEW" || o.status == "PARTIALLY_FILLED" }

// crossing walks the levels a limit price crosses, best first, for at
// most qty.
func (m *market) crossing(side string, qty, price decimal.Decimal) (fills []fill, executed, cost decimal.Decimal) {
	levels := m.asks
	if side == "SELL" {
		levels = m.bids
	}
	left := qty
	for _, lv := range levels {
		p := m.levelPrice(lv)
		if (side == "BUY" && p.GreaterThan(price)) || (side == "SELL" && p.LessThan(price)) || !left.IsPositive() {
			break
		}
		take := decimal.Min(left, levelQty(lv))
		fills = append(fills, fill{price: p, qty: take})
		executed, cost, left = executed.Add(take), cost.Add(take.Mul(p)), left.Sub(take)
	}
	return fills, executed, cost
}

// applyFill records one trade of o (whose funds are already taken) and
// credits what it bought, less the commission.
func (s *Server) applyFill(a *account, m *market, o *order, price, qty decimal.Decimal, maker bool, now int64) {
	fee := takerFee
	if maker {
		fee = makerFee
	}
	f := fill{price: price, qty: qty, tradeID: s.nextTradeID, time: now, maker: maker}
	s.nextTradeID++
	if o.side == "BUY" {
		f.commission, f.commissionAsset = qty.Mul(fee).Truncate(m.basePrec), m.base
		a.free[m.base] = a.free[m.base].Add(qty).Sub(f.commission)
	} else {
		f.commission, f.commissionAsset = qty.Mul(price).Mul(fee).Truncate(m.quotePrec), m.quote
		a.free[m.quote] = a.free[m.quote].Add(qty.Mul(price)).Sub(f.commission)
	}
	o.fills = append(o.fills, f)
	o.executed = o.executed.Add(qty)
	o.quote = o.quote.Add(qty.Mul(price))
	o.updateTime = now
}

// release gives back the funds a resting order still holds.
func (a *account) release(m *market, o *order) {
	rest := o.origQty.Sub(o.executed)
	asset, amount := m.quote, rest.Mul(o.price)
	if o.side == "SELL" {
		asset, amount = m.base, rest
	}
	a.locked[asset] = a.locked[asset].Sub(amount)
	a.free[asset] = a.free[asset].Add(amount)
}

// ErrNoOpenOrder is FillOrder's error for an order that is not resting.
var ErrNoOpenOrder = errors.New("binancefake: no open order with that client order id")

// FillOrder fills what is left of a resting order at its own price, as a
// maker: the market came to it. The test hook for fills of resting
// orders.
func (s *Server) FillOrder(apiKey, clientID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.accounts[apiKey]
	if a == nil {
		return ErrNoOpenOrder
	}
	for _, o := range slices.Backward(a.byClientID[clientID]) {
		if !o.open() {
			continue
		}
		m := s.markets[o.symbol]
		now := s.serverTime()
		rest := o.origQty.Sub(o.executed)
		a.release(m, o)
		asset, amount := m.quote, rest.Mul(o.price)
		if o.side == "SELL" {
			asset, amount = m.base, rest
		}
		a.free[asset] = a.free[asset].Sub(amount)
		s.applyFill(a, m, o, o.price, rest, true, now.UnixMilli())
		o.status = "FILLED"
		a.touch(now)
		s.report(a, o, "TRADE", &o.fills[len(o.fills)-1], o.executed, o.quote, o.status, o.clientID, "")
		return nil
	}
	return ErrNoOpenOrder
}

// PlaceOutside rests a GTC LIMIT order on the account as if it had been
// placed on Binance's website: with a client order id Binance made up,
// not the gateway's. It returns the order's id and client order id. The
// price must not cross the book and the account must hold the funds.
func (s *Server) PlaceOutside(apiKey, symbol, side, quantity, price string) (orderID int64, clientID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.accounts[apiKey]
	m := s.markets[symbol]
	if a == nil || m == nil {
		panic("binancefake: PlaceOutside on an unknown account or symbol")
	}
	qty, p := dec(quantity), dec(price)
	now := s.serverTime()
	clientID = "web_" + s.generatedClientID()
	o := &order{symbol: symbol, side: side, clientID: clientID, id: s.nextOrderID, typ: "LIMIT", tif: "GTC", price: p,
		origQty: qty, time: now.UnixMilli(), updateTime: now.UnixMilli(), status: "NEW"}
	s.nextOrderID++
	asset, amount := m.quote, qty.Mul(p)
	if side == "SELL" {
		asset, amount = m.base, qty
	}
	a.free[asset] = a.free[asset].Sub(amount)
	a.locked[asset] = a.locked[asset].Add(amount)
	a.orders = append(a.orders, o)
	a.byClientID[clientID] = append(a.byClientID[clientID], o)
	a.touch(now)
	s.reportPlaced(a, o)
	return o.id, clientID
}

// OpenOrderCount counts the account's resting orders.
func (s *Server) OpenOrderCount(apiKey string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	if a := s.accounts[apiKey]; a != nil {
		for _, o := range a.orders {
			if o.open() {
				n++
			}
		}
	}
	return n
}

// OrderCount counts the orders the account placed (test orders are not
// placed).
func (s *Server) OrderCount(apiKey string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.accounts[apiKey]; a != nil {
		return len(a.orders)
	}
	return 0
}

// CancelsOf counts the DELETE /api/v3/order calls that canceled an order
// with that client order id.
func (s *Server) CancelsOf(clientID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cancels[clientID]
}

// handleCancelOrder is DELETE /api/v3/order: an open order, by orderId or
// origClientOrderId, is CANCELED and its funds released; anything else is
// -2011 "Unknown order sent." (errors.md), also for an order already
// final.
func (s *Server) handleCancelOrder(c *call) response {
	if c.account.noTrade {
		return apiErr(http.StatusUnauthorized, -2015, "Invalid API-key, IP, or permissions for action.")
	}
	m := s.markets[c.get("symbol")]
	if m == nil {
		return apiErr(http.StatusBadRequest, -1121, "Invalid symbol.")
	}
	idText, clientID := c.get("orderId"), c.get("origClientOrderId")
	if idText == "" && clientID == "" {
		return apiErr(http.StatusBadRequest, -1102, "Param 'origClientOrderId' or 'orderId' must be sent, but both were empty/null!")
	}
	if v := c.get("newClientOrderId"); v != "" && !clientIDPattern.MatchString(v) {
		return illegal("newClientOrderId", "^[a-zA-Z0-9-_]{1,36}$")
	}
	if v := c.get("cancelRestrictions"); v != "" && v != "ONLY_NEW" && v != "ONLY_PARTIALLY_FILLED" {
		return illegal("cancelRestrictions", "ONLY_NEW, ONLY_PARTIALLY_FILLED")
	}
	var id int64
	if idText != "" {
		n, err := strconv.ParseInt(idText, 10, 64)
		if err != nil {
			return illegal("orderId", "^[0-9]{1,20}$")
		}
		id = n
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a := c.account
	var found *order
	for _, o := range slices.Backward(a.orders) {
		if o.symbol == m.symbol && o.open() && (id == 0 || o.id == id) && (clientID == "" || o.clientID == clientID) {
			found = o
			break
		}
	}
	if found == nil {
		return apiErr(http.StatusBadRequest, -2011, "Unknown order sent.")
	}
	switch c.get("cancelRestrictions") {
	case "ONLY_NEW":
		if found.status != "NEW" {
			return apiErr(http.StatusBadRequest, -2011, "Order was not canceled due to cancel restrictions.")
		}
	case "ONLY_PARTIALLY_FILLED":
		if found.status != "PARTIALLY_FILLED" {
			return apiErr(http.StatusBadRequest, -2011, "Order was not canceled due to cancel restrictions.")
		}
	}
	a.release(m, found)
	found.status = "CANCELED"
	found.updateTime = c.now.UnixMilli()
	a.touch(c.now)
	if s.cancels == nil {
		s.cancels = map[string]int{}
	}
	s.cancels[found.clientID]++
	cancelID := c.get("newClientOrderId")
	if cancelID == "" {
		cancelID = s.generatedClientID()
	}
	o := found
	// user-data-stream.md: on a cancel, c is the cancel request's client
	// order id and C the canceled order's.
	s.report(a, o, "CANCELED", nil, o.executed, o.quote, "CANCELED", cancelID, o.clientID)
	return ok([]byte(`{"symbol":"` + o.symbol + `","origClientOrderId":"` + o.clientID + `","orderId":` + strconv.FormatInt(o.id, 10) +
		`,"orderListId":-1,"clientOrderId":"` + cancelID + `","transactTime":` + strconv.FormatInt(o.updateTime, 10) +
		`,"price":"` + fixed(o.price) + `","origQty":"` + fixed(o.origQty) + `","executedQty":"` + fixed(o.executed) +
		`","origQuoteOrderQty":"` + fixed(o.origQuote) + `","cummulativeQuoteQty":"` + fixed(o.quote) + `","status":"CANCELED","timeInForce":"` + o.tif +
		`","type":"` + o.typ + `","side":"` + o.side + `","selfTradePreventionMode":"EXPIRE_MAKER"}`))
}

// encodeOrder writes an order as GET /api/v3/order, openOrders and
// allOrders answer it.
func encodeOrder(o *order) []byte {
	t := strconv.FormatInt(o.time, 10)
	return []byte(`{"symbol":"` + o.symbol + `","orderId":` + strconv.FormatInt(o.id, 10) + `,"orderListId":-1,"clientOrderId":"` + o.clientID +
		`","price":"` + fixed(o.price) + `","origQty":"` + fixed(o.origQty) + `","executedQty":"` + fixed(o.executed) + `","cummulativeQuoteQty":"` + fixed(o.quote) +
		`","status":"` + o.status + `","timeInForce":"` + o.tif + `","type":"` + o.typ + `","side":"` + o.side + `","stopPrice":"0.00000000","icebergQty":"0.00000000","time":` + t +
		`,"updateTime":` + strconv.FormatInt(o.updateTime, 10) + `,"isWorking":true,"workingTime":` + t + `,"origQuoteOrderQty":"` + fixed(o.origQuote) + `","selfTradePreventionMode":"EXPIRE_MAKER"}`)
}

func encodeOrders(os []*order) []byte {
	var b strings.Builder
	b.WriteByte('[')
	for i, o := range os {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(encodeOrder(o))
	}
	b.WriteByte(']')
	return []byte(b.String())
}

// handleOpenOrders is GET /api/v3/openOrders, of one symbol or all.
func (s *Server) handleOpenOrders(c *call) response {
	symbol := c.get("symbol")
	if symbol != "" && s.markets[symbol] == nil {
		return apiErr(http.StatusBadRequest, -1121, "Invalid symbol.")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*order
	for _, o := range c.account.orders {
		if o.open() && (symbol == "" || o.symbol == symbol) {
			out = append(out, o)
		}
	}
	return ok(encodeOrders(out))
}

// handleAllOrders is GET /api/v3/allOrders: the symbol's orders from
// orderId on, or the most recent limit (default 500, at most 1000),
// oldest first.
func (s *Server) handleAllOrders(c *call) response {
	m := s.markets[c.get("symbol")]
	if m == nil {
		return apiErr(http.StatusBadRequest, -1121, "Invalid symbol.")
	}
	limit := 500
	if v := c.get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return illegal("limit", "^[0-9]{1,20}$")
		}
		limit = min(n, 1000)
	}
	var from int64
	if v := c.get("orderId"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return illegal("orderId", "^[0-9]{1,20}$")
		}
		from = n
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*order
	for _, o := range c.account.orders {
		if o.symbol == m.symbol && o.id >= from {
			out = append(out, o)
		}
	}
	if len(out) > limit {
		if from != 0 {
			out = out[:limit]
		} else {
			out = out[len(out)-limit:]
		}
	}
	return ok(encodeOrders(out))
}
