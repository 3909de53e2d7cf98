package binancefake

import (
	"crypto/sha256"
	"encoding/binary"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// account is the fake's state of one API key. It is guarded by Server.mu.
type account struct {
	key, secret        string
	uid                int64
	noTrade            bool
	noWithdraw         bool
	pendingWithdrawals bool
	free, locked       map[string]decimal.Decimal
	updateTime         int64
	encoded            [2][]byte // account answer without / with omitZeroBalances; nil when stale

	orders      []*order
	byClientID  map[string][]*order
	deposits    []*deposit
	withdrawals []*withdrawal
	// funding is the funding wallet (transfer.go); noTransfer takes the
	// key's universal transfer permission away.
	funding    map[string]decimal.Decimal
	transfers  []*transfer
	noTransfer bool
	ordersWin  [2]struct{ start, count int64 } // 10 s and 1 day order counts
}

// order is one order the fake took: a MARKET order, final at once, or a
// LIMIT / LIMIT_MAKER order (limit.go), which may rest on the book.
type order struct {
	symbol, side, clientID, status string
	// typ is MARKET, LIMIT or LIMIT_MAKER; tif the timeInForce (GTC for
	// MARKET and LIMIT_MAKER, as Binance reports them).
	typ, tif           string
	price              decimal.Decimal // zero for MARKET
	id                 int64
	origQty, origQuote decimal.Decimal
	executed, quote    decimal.Decimal
	time, updateTime   int64
	fills              []fill
}

type fill struct {
	price, qty, commission decimal.Decimal
	commissionAsset        string
	tradeID                int64
	time                   int64
	maker                  bool
}

// AddAccount registers an API key with its balances and a seeded deposit
// history (completed and pending entries). Adding a key again replaces it.
func (s *Server) AddAccount(a Account) {
	sum := sha256.Sum256([]byte(a.APIKey))
	acct := &account{
		key: a.APIKey, secret: a.Secret,
		uid:                int64(binary.BigEndian.Uint32(sum[:4])),
		noTrade:            a.NoTrade,
		noWithdraw:         a.NoWithdraw,
		pendingWithdrawals: a.PendingWithdrawals,
		free:               map[string]decimal.Decimal{},
		locked:             map[string]decimal.Decimal{},
		byClientID:         map[string][]*order{},
		funding:            map[string]decimal.Decimal{},
		noTransfer:         a.NoTransfer,
	}
	for asset, amount := range a.Balances {
		acct.free[strings.ToUpper(asset)] = decimal.RequireFromString(amount)
	}
	for asset, amount := range a.Funding {
		acct.funding[strings.ToUpper(asset)] = decimal.RequireFromString(amount)
	}
	now := s.serverTime()
	acct.updateTime = now.UnixMilli()
	acct.deposits = seedDeposits(acct, now)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.accounts[a.APIKey] = acct
}

// Balance returns the free and locked amounts of asset on the account
// (zero for an unknown key or asset).
func (s *Server) Balance(apiKey, asset string) (free, locked decimal.Decimal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.accounts[apiKey]
	if a == nil {
		return decimal.Zero, decimal.Zero
	}
	return a.free[asset], a.locked[asset]
}

// SetBalance sets the free amount of asset on the account.
func (s *Server) SetBalance(apiKey, asset, free string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.accounts[apiKey]; a != nil {
		a.free[asset] = decimal.RequireFromString(free)
		a.touch(s.serverTime())
	}
}

// OrdersWithClientID counts the orders the fake executed with that client
// order id, on every account.
func (s *Server) OrdersWithClientID(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, a := range s.accounts {
		n += len(a.byClientID[id])
	}
	return n
}

// touch marks the balances changed.
func (a *account) touch(now time.Time) {
	a.updateTime = now.UnixMilli()
	a.encoded = [2][]byte{}
}

func (s *Server) handleAccount(c *call) response {
	omit := 0
	if v := c.get("omitZeroBalances"); v != "" {
		switch v {
		case "true":
			omit = 1
		case "false":
		default:
			return apiErr(http.StatusBadRequest, -1100, "Illegal characters found in parameter 'omitZeroBalances'; legal range is 'true, false'.")
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a := c.account
	if b := a.encoded[omit]; b != nil {
		return ok(b)
	}
	assets := make([]string, 0, len(a.free))
	for k := range a.free {
		assets = append(assets, k)
	}
	for k := range a.locked {
		if _, dup := a.free[k]; !dup {
			assets = append(assets, k)
		}
	}
	slices.Sort(assets)
	var b strings.Builder
	b.WriteString(`{"makerCommission":10,"takerCommission":10,"buyerCommission":0,"sellerCommission":0,`)
	b.WriteString(`"commissionRates":{"maker":"0.00100000","taker":"0.00100000","buyer":"0.00000000","seller":"0.00000000"},`)
	b.WriteString(`"canTrade":` + strconv.FormatBool(!a.noTrade) + `,"canWithdraw":` + strconv.FormatBool(!a.noWithdraw) + `,"canDeposit":true,`)
	b.WriteString(`"brokered":false,"requireSelfTradePrevention":false,"preventSor":false,"updateTime":`)
	b.WriteString(strconv.FormatInt(a.updateTime, 10))
	b.WriteString(`,"accountType":"SPOT","balances":[`)
	first := true
	for _, asset := range assets {
		f, l := a.free[asset], a.locked[asset]
		if omit == 1 && f.IsZero() && l.IsZero() {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.WriteString(`{"asset":"` + asset + `","free":"` + f.StringFixed(8) + `","locked":"` + l.StringFixed(8) + `"}`)
	}
	b.WriteString(`],"permissions":["SPOT"],"uid":` + strconv.FormatInt(a.uid, 10) + `}`)
	body := []byte(b.String())
	a.encoded[omit] = body
	return ok(body)
}

var (
	// Source: errors.md -1100 messages quoting Binance's patterns.
	decimalPattern  = regexp.MustCompile(`^([0-9]{1,20})(\.[0-9]{1,20})?$`)
	clientIDPattern = regexp.MustCompile(`^[a-zA-Z0-9-_]{1,36}$`)
	orderTypes      = []string{"LIMIT", "MARKET", "STOP_LOSS", "STOP_LOSS_LIMIT", "TAKE_PROFIT", "TAKE_PROFIT_LIMIT", "LIMIT_MAKER"}
	takerFee        = decimal.New(1, -3)
)

func illegal(name, legal string) response {
	return apiErr(http.StatusBadRequest, -1100, "Illegal characters found in parameter '"+name+"'; legal range is '"+legal+"'.")
}

// parseAmount checks a decimal parameter's form and precision.
func parseAmount(name, v string, precision int32) (decimal.Decimal, response, bool) {
	if !decimalPattern.MatchString(v) {
		return decimal.Zero, illegal(name, `^([0-9]{1,20})(\.[0-9]{1,20})?$`), false
	}
	q := decimal.RequireFromString(v)
	if !q.Equal(q.Truncate(precision)) {
		return decimal.Zero, apiErr(http.StatusBadRequest, -1111, "Parameter '"+name+"' has too much precision."), false
	}
	if !q.IsPositive() {
		return decimal.Zero, apiErr(http.StatusBadRequest, -1013, "Invalid quantity."), false
	}
	return q, response{}, true
}

// step returns the base step an executed quantity is rounded to.
func (m *market) step() decimal.Decimal {
	st := m.lotStep
	if m.mktStep.GreaterThan(st) {
		st = m.mktStep
	}
	if !st.IsPositive() {
		st = decimal.New(1, -m.basePrec)
	}
	return st
}

func floorStep(q, step decimal.Decimal) decimal.Decimal {
	n, _ := q.QuoRem(step, 0)
	return n.Mul(step)
}

// lotFailure names the lot filter q breaks, or "".
func (m *market) lotFailure(q decimal.Decimal) string {
	if q.LessThan(m.lotMin) || q.GreaterThan(m.lotMax) || !q.Mod(m.lotStep).IsZero() {
		return "LOT_SIZE"
	}
	if q.LessThan(m.mktMin) || (m.mktMax.IsPositive() && q.GreaterThan(m.mktMax)) || (m.mktStep.IsPositive() && !q.Mod(m.mktStep).IsZero()) {
		return "MARKET_LOT_SIZE"
	}
	return ""
}

func (s *Server) handleNewOrder(c *call) response { return s.newOrder(c, false) }

// handleTestOrder is POST /api/v3/order/test: the order is checked as
// POST /api/v3/order checks it and answered with {}; nothing reaches the
// matching engine, so balances are not checked (rest-api.md, "Test new
// order").
func (s *Server) handleTestOrder(c *call) response {
	if v := c.get("computeCommissionRates"); v != "" && v != "true" && v != "false" {
		return illegal("computeCommissionRates", "true, false")
	}
	delete(c.params, "computeCommissionRates")
	return s.newOrder(c, true)
}

// newOrder checks an order and, unless test, executes it.
func (s *Server) newOrder(c *call, test bool) response {
	a := c.account
	if a.noTrade {
		return apiErr(http.StatusUnauthorized, -2015, "Invalid API-key, IP, or permissions for action.")
	}
	m := s.markets[c.get("symbol")]
	if m == nil {
		return apiErr(http.StatusBadRequest, -1121, "Invalid symbol.")
	}
	side := c.get("side")
	if side != "BUY" && side != "SELL" {
		return apiErr(http.StatusBadRequest, -1117, "Invalid side.")
	}
	typ := c.get("type")
	if !slices.Contains(orderTypes, typ) {
		return apiErr(http.StatusBadRequest, -1116, "Invalid orderType.")
	}
	if typ == "LIMIT" || typ == "LIMIT_MAKER" {
		return s.newLimitOrder(c, m, side, typ, test)
	}
	if typ != "MARKET" {
		return apiErr(http.StatusBadRequest, -1014, "Unsupported order combination.")
	}
	for _, name := range []string{"timeInForce", "price", "stopPrice", "trailingDelta", "icebergQty", "pegPriceType", "pegOffsetValue", "pegOffsetType"} {
		if c.get(name) != "" {
			return apiErr(http.StatusBadRequest, -1106, "Parameter '"+name+"' sent when not required.")
		}
	}
	respType := c.get("newOrderRespType")
	if respType == "" {
		respType = "FULL"
	}
	if respType != "ACK" && respType != "RESULT" && respType != "FULL" {
		return illegal("newOrderRespType", "ACK, RESULT, FULL")
	}
	qtyText, quoteText := c.get("quantity"), c.get("quoteOrderQty")
	switch {
	case qtyText != "" && quoteText != "":
		return apiErr(http.StatusBadRequest, -1106, "Parameter 'quoteOrderQty' sent when not required.")
	case qtyText == "" && quoteText == "":
		return apiErr(http.StatusBadRequest, -1102, "Param 'quantity' or 'quoteOrderQty' must be sent, but both were empty/null!")
	}
	clientID := c.get("newClientOrderId")
	if clientID != "" && !clientIDPattern.MatchString(clientID) {
		return illegal("newClientOrderId", "^[a-zA-Z0-9-_]{1,36}$")
	}
	if m.status != "TRADING" {
		return apiErr(http.StatusBadRequest, -2010, "Market is closed.")
	}
	var qty, quoteQty decimal.Decimal
	if qtyText != "" {
		q, bad, good := parseAmount("quantity", qtyText, m.basePrec)
		if !good {
			return bad
		}
		if f := m.lotFailure(q); f != "" {
			return apiErr(http.StatusBadRequest, -1013, "Filter failure: "+f)
		}
		if q.Mul(m.avgPrice).LessThan(m.minNotional) {
			return apiErr(http.StatusBadRequest, -1013, "Filter failure: "+m.notionalFilter)
		}
		qty = q
	} else {
		if !m.quoteOrderAllowed {
			return apiErr(http.StatusBadRequest, -2010, "Quote order qty market orders are not support for this symbol.")
		}
		q, bad, good := parseAmount("quoteOrderQty", quoteText, m.quotePrec)
		if !good {
			return bad
		}
		if q.LessThan(m.minNotional) {
			return apiErr(http.StatusBadRequest, -1013, "Filter failure: "+m.notionalFilter)
		}
		quoteQty = q
	}
	if test {
		return ok([]byte("{}"))
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if clientID != "" {
		for _, o := range a.byClientID[clientID] {
			if o.status == "NEW" || o.status == "PARTIALLY_FILLED" {
				return apiErr(http.StatusBadRequest, -2010, "Duplicate order sent.")
			}
		}
	} else {
		clientID = s.generatedClientID()
	}
	fills, executed, cost, expired := m.match(side, qty, quoteQty)
	if !executed.IsPositive() {
		return apiErr(http.StatusBadRequest, -1013, "Filter failure: LOT_SIZE")
	}
	spend, spendAsset := cost, m.quote
	if side == "SELL" {
		spend, spendAsset = executed, m.base
	}
	if a.free[spendAsset].LessThan(spend) {
		return apiErr(http.StatusBadRequest, -2010, "Account has insufficient balance for requested action.")
	}
	o := &order{symbol: m.symbol, side: side, clientID: clientID, id: s.nextOrderID, origQty: qty, origQuote: quoteQty,
		executed: executed, quote: cost, time: c.now.UnixMilli(), updateTime: c.now.UnixMilli(), status: "FILLED", typ: "MARKET", tif: "GTC"}
	s.nextOrderID++
	if expired {
		o.status = "EXPIRED"
	}
	if o.origQty.IsZero() {
		o.origQty = executed
	}
	for i := range fills {
		f := &fills[i]
		f.tradeID = s.nextTradeID
		f.time = c.now.UnixMilli()
		s.nextTradeID++
		if side == "BUY" {
			f.commission, f.commissionAsset = f.qty.Mul(takerFee).Truncate(m.basePrec), m.base
			a.free[m.base] = a.free[m.base].Add(f.qty).Sub(f.commission)
		} else {
			f.commission, f.commissionAsset = f.qty.Mul(f.price).Mul(takerFee).Truncate(m.quotePrec), m.quote
			a.free[m.quote] = a.free[m.quote].Add(f.qty.Mul(f.price)).Sub(f.commission)
		}
	}
	a.free[spendAsset] = a.free[spendAsset].Sub(spend)
	o.fills = fills
	a.orders = append(a.orders, o)
	a.byClientID[clientID] = append(a.byClientID[clientID], o)
	a.touch(c.now)
	s.reportPlaced(a, o)
	resp := ok(encodeOrderAnswer(o, respType))
	resp.header = a.countOrder(c.now)
	return resp
}

// countOrder counts a placed order in the 10 s and 1 day windows and
// returns the X-MBX-ORDER-COUNT headers.
func (a *account) countOrder(now time.Time) map[string]string {
	windows := [2]int64{10_000, 86_400_000}
	ms := now.UnixMilli()
	for i, w := range windows {
		start := ms - ms%w
		if a.ordersWin[i].start != start {
			a.ordersWin[i].start, a.ordersWin[i].count = start, 0
		}
		a.ordersWin[i].count++
	}
	return map[string]string{
		"X-MBX-ORDER-COUNT-10S": strconv.FormatInt(a.ordersWin[0].count, 10),
		"X-MBX-ORDER-COUNT-1D":  strconv.FormatInt(a.ordersWin[1].count, 10),
	}
}

// generatedClientID makes a 22-character id like Binance's own.
func (s *Server) generatedClientID() string {
	s.nextID++
	sum := sha256.Sum256(strconv.AppendInt([]byte("cid"), s.nextID, 10))
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	out := make([]byte, 22)
	for i := range out {
		out[i] = alphabet[int(sum[i])%len(alphabet)]
	}
	return string(out)
}

// match walks the static book. A base quantity takes levels until it is
// filled; a quote quantity buys (or sells to receive) as much as it
// allows, in whole steps. expired reports the book running out first.
func (m *market) match(side string, qty, quoteQty decimal.Decimal) (fills []fill, executed, cost decimal.Decimal, expired bool) {
	levels := m.asks
	if side == "SELL" {
		levels = m.bids
	}
	step := m.step()
	left := qty
	if qty.IsZero() {
		left = quoteQty
	}
	for _, lv := range levels {
		price, lqty := m.levelPrice(lv), levelQty(lv)
		var take decimal.Decimal
		if qty.IsPositive() {
			take = decimal.Min(left, lqty)
		} else {
			take = decimal.Min(floorStep(left.Div(price), step), lqty)
			if !take.IsPositive() {
				return fills, executed, cost, false
			}
		}
		fills = append(fills, fill{price: price, qty: take})
		executed = executed.Add(take)
		cost = cost.Add(take.Mul(price))
		if qty.IsPositive() {
			left = left.Sub(take)
		} else {
			left = left.Sub(take.Mul(price))
		}
		if !left.IsPositive() {
			return fills, executed, cost, false
		}
	}
	return fills, executed, cost, true
}

func fixed(v decimal.Decimal) string { return v.StringFixed(8) }

// encodeOrderAnswer writes POST /api/v3/order's answer in the asked shape
// (rest-api.md, "Response ACK / RESULT / FULL").
func encodeOrderAnswer(o *order, respType string) []byte {
	var b strings.Builder
	b.WriteString(`{"symbol":"` + o.symbol + `","orderId":` + strconv.FormatInt(o.id, 10) + `,"orderListId":-1,"clientOrderId":"` + o.clientID +
		`","transactTime":` + strconv.FormatInt(o.time, 10))
	if respType != "ACK" {
		b.WriteString(`,"price":"` + fixed(o.price) + `","origQty":"` + fixed(o.origQty) + `","executedQty":"` + fixed(o.executed) +
			`","origQuoteOrderQty":"` + fixed(o.origQuote) + `","cummulativeQuoteQty":"` + fixed(o.quote) + `","status":"` + o.status +
			`","timeInForce":"` + o.tif + `","type":"` + o.typ + `","side":"` + o.side + `","workingTime":` + strconv.FormatInt(o.time, 10) +
			`,"selfTradePreventionMode":"EXPIRE_MAKER"`)
	}
	if respType == "FULL" {
		b.WriteString(`,"fills":[`)
		for i, f := range o.fills {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"price":"` + fixed(f.price) + `","qty":"` + fixed(f.qty) + `","commission":"` + fixed(f.commission) +
				`","commissionAsset":"` + f.commissionAsset + `","tradeId":` + strconv.FormatInt(f.tradeID, 10) + `}`)
		}
		b.WriteByte(']')
	}
	b.WriteByte('}')
	return []byte(b.String())
}

func (s *Server) handleQueryOrder(c *call) response {
	m := s.markets[c.get("symbol")]
	if m == nil {
		return apiErr(http.StatusBadRequest, -1121, "Invalid symbol.")
	}
	idText, clientID := c.get("orderId"), c.get("origClientOrderId")
	if idText == "" && clientID == "" {
		return apiErr(http.StatusBadRequest, -1102, "Param 'origClientOrderId' or 'orderId' must be sent, but both were empty/null!")
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
	var found *order
	for _, o := range slices.Backward(c.account.orders) {
		if o.symbol == m.symbol && (id == 0 || o.id == id) && (clientID == "" || o.clientID == clientID) {
			found = o
			break
		}
	}
	if found == nil {
		if id != 0 && clientID != "" {
			for _, o := range c.account.orders {
				if o.id == id {
					return apiErr(http.StatusBadRequest, -2039, "Client order ID is not correct for this order ID.")
				}
			}
		}
		return apiErr(http.StatusBadRequest, -2013, "Order does not exist.")
	}
	return ok(encodeOrder(found))
}

func (s *Server) handleMyTrades(c *call) response {
	m := s.markets[c.get("symbol")]
	if m == nil {
		return apiErr(http.StatusBadRequest, -1121, "Invalid symbol.")
	}
	var orderID int64
	if v := c.get("orderId"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return illegal("orderId", "^[0-9]{1,20}$")
		}
		orderID = n
	}
	limit := 500
	if v := c.get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return illegal("limit", "^[0-9]{1,20}$")
		}
		limit = min(n, 1000)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	type trade struct {
		o *order
		f fill
	}
	var trades []trade
	for _, o := range c.account.orders {
		if o.symbol != m.symbol || (orderID != 0 && o.id != orderID) {
			continue
		}
		for _, f := range o.fills {
			trades = append(trades, trade{o, f})
		}
	}
	// Without fromId Binance answers the most recent trades, oldest
	// first (rest-api.md, "Account trade list").
	slices.SortStableFunc(trades, func(x, y trade) int { return int(x.f.tradeID - y.f.tradeID) })
	if len(trades) > limit {
		trades = trades[len(trades)-limit:]
	}
	var b strings.Builder
	b.WriteByte('[')
	for n, t := range trades {
		o, f := t.o, t.f
		if n > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"symbol":"` + o.symbol + `","id":` + strconv.FormatInt(f.tradeID, 10) + `,"orderId":` + strconv.FormatInt(o.id, 10) +
			`,"orderListId":-1,"price":"` + fixed(f.price) + `","qty":"` + fixed(f.qty) + `","quoteQty":"` + fixed(f.qty.Mul(f.price)) +
			`","commission":"` + fixed(f.commission) + `","commissionAsset":"` + f.commissionAsset + `","time":` + strconv.FormatInt(f.time, 10) +
			`,"isBuyer":` + strconv.FormatBool(o.side == "BUY") + `,"isMaker":` + strconv.FormatBool(f.maker) + `,"isBestMatch":true}`)
	}
	b.WriteByte(']')
	return ok([]byte(b.String()))
}
