// Package binance is the exgate adapter for Binance Spot: market orders,
// klines, order books, balances, deposits and withdrawals over Binance's
// REST API (api.binance.com /api/v3 and /sapi/v1), with HMAC-SHA256
// signing, request-weight pacing and the clock-offset correction Binance's
// timestamp window needs.
//
// Facts about the API come from Binance's public documentation; each table
// in convert.go names its source. docs/exchanges/binance.md describes the
// mapping and what differs from the other exchanges.
package binance

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
	"github.com/exgate/exgate/localstate"
)

// DefaultBaseURL is Binance's production REST endpoint.
const DefaultBaseURL = "https://api.binance.com"

// Options configure the adapter. Every field is optional.
type Options struct {
	// BaseURL is the REST endpoint; default DefaultBaseURL. The gateway
	// sets it from EXGATE_BINANCE_URL.
	BaseURL string
	// HTTPClient sends the requests; default a client with a 30 s timeout.
	HTTPClient *http.Client
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Logger receives warnings and errors; default discards them.
	Logger *slog.Logger
	// Limiter paces calls; default localstate.NewLimiter(Now), which
	// keeps the budgets in this process only.
	Limiter exgate.Limiter
	// RecvWindow is sent with signed calls; default 5 s, at most 60 s.
	RecvWindow time.Duration
	// MarketsTTL is how old exchangeInfo may get before a background
	// refresh; default 10 minutes. CoinsTTL is the same for the coin and
	// network configuration (withdrawal fees, minimums); default 10
	// minutes.
	MarketsTTL time.Duration
	CoinsTTL   time.Duration
	// MetadataCache, when set, shares the exchangeInfo answer between the
	// instances that use it (the redis package's Cache), so that one fetch
	// per MarketsTTL serves them all: exchangeInfo costs 20 of the IP's
	// request weight. Without it each process fetches its own.
	MetadataCache MetadataCache
	// KlineMemory bounds the memory that keeps the last klines answer to
	// each request, so that AppendRecentKlinesJSON converts only the rows
	// that changed (klinejson.go); default 32 MiB, negative keeps none.
	KlineMemory int
	// MaxWait is the longest the adapter waits for its request budget
	// when the ctx has no deadline; default 10 s.
	MaxWait time.Duration
	// RetryBackoff is the first pause before a read is retried (doubled,
	// with jitter, each time); default 200 ms.
	RetryBackoff time.Duration
}

// Exchange is the Binance Spot adapter. It is safe for concurrent use; one
// Exchange serves every credential.
type Exchange struct {
	c       *client
	log     *slog.Logger
	markets *markets
	coins   *coins
	// klines keeps the last klines answer per request and its encoding,
	// for AppendRecentKlinesJSON.
	klines *klineMemo
}

var _ exgate.Exchange = (*Exchange)(nil)

// New returns an adapter configured by opts.
func New(opts Options) *Exchange {
	if opts.BaseURL == "" {
		opts.BaseURL = DefaultBaseURL
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Limiter == nil {
		opts.Limiter = localstate.NewLimiter(opts.Now)
	}
	if opts.RecvWindow <= 0 {
		opts.RecvWindow = 5 * time.Second
	}
	opts.RecvWindow = min(opts.RecvWindow, 60*time.Second)
	if opts.MarketsTTL <= 0 {
		opts.MarketsTTL = 10 * time.Minute
	}
	if opts.CoinsTTL <= 0 {
		opts.CoinsTTL = 10 * time.Minute
	}
	if opts.MaxWait <= 0 {
		opts.MaxWait = 10 * time.Second
	}
	if opts.RetryBackoff <= 0 {
		opts.RetryBackoff = 200 * time.Millisecond
	}
	c := &client{
		baseURL:    trimSlash(opts.BaseURL),
		http:       opts.HTTPClient,
		now:        opts.Now,
		log:        opts.Logger,
		limiter:    opts.Limiter,
		recvWindow: opts.RecvWindow.Milliseconds(),
		maxWait:    opts.MaxWait,
		backoff:    opts.RetryBackoff,
	}
	return &Exchange{
		c:       c,
		log:     opts.Logger,
		markets: &markets{c: c, ttl: opts.MarketsTTL, cache: opts.MetadataCache, cacheKey: "binance:exchangeInfo:" + opts.BaseURL},
		coins:   &coins{c: c, ttl: opts.CoinsTTL},
		klines:  newKlineMemo(cmp.Or(opts.KlineMemory, klineMemoBytes)),
	}
}

func trimSlash(s string) string {
	for len(s) > 0 && s[len(s)-1] == '/' {
		s = s[:len(s)-1]
	}
	return s
}

// Name returns "binance".
func (e *Exchange) Name() string { return exgate.ExchangeBinance }

// clientIDPattern is what Binance accepts as newClientOrderId
// (errors.md, -1100 message for newClientOrderId).
var clientIDPattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,36}$`)

// orderPlan is what PlaceMarketOrder sends: one quantity parameter, and
// the quantity it reports (the same, except for a quote quantity converted
// to a base one, which is reported as the quote quantity asked).
type orderPlan struct {
	param    string // quantity or quoteOrderQty
	qty      decimal.Decimal
	report   decimal.Decimal
	reportIn exgate.QuantityIn
}

// PlaceMarketOrder sends one MARKET order with newClientOrderId =
// req.ClientOrderID and newOrderRespType=FULL. Quantities in the base
// asset are sent as quantity, in the quote asset as quoteOrderQty (or, on
// a symbol that does not take quoteOrderQty, converted to a base quantity
// against the order book). The quantity is rounded down first, and refused
// locally (nothing sent) when under the symbol's minimums.
func (e *Exchange) PlaceMarketOrder(ctx context.Context, cred exgate.Credential, req exgate.OrderRequest) (exgate.Order, error) {
	if !clientIDPattern.MatchString(req.ClientOrderID) {
		return exgate.Order{}, exgate.ParamError("clientOrderId", "binance takes 1 to 36 characters of [a-zA-Z0-9_-] as a client order id")
	}
	if req.Side != exgate.SideBuy && req.Side != exgate.SideSell {
		return exgate.Order{}, exgate.ParamError("side", "side must be BUY or SELL")
	}
	mk, err := e.markets.lookup(ctx, req.Symbol)
	if err != nil {
		return exgate.Order{}, err
	}
	if mk.status != "TRADING" {
		return exgate.Order{}, exgate.Errorf(exgate.CodeOrderRejected, "%s is not trading on binance (status %s)", mk.pair, mk.status)
	}
	if !mk.marketAllowed {
		return exgate.Order{}, exgate.Errorf(exgate.CodeOrderRejected, "binance takes no MARKET orders on %s", mk.pair)
	}
	plan, err := e.plan(ctx, cred, mk, req)
	if err != nil {
		return exgate.Order{}, err
	}
	var p rest.Params
	p.Add("symbol", mk.symbol)
	p.Add("side", string(req.Side))
	p.Add("type", "MARKET")
	p.Add(plan.param, plan.qty.String())
	p.Add("newClientOrderId", req.ClientOrderID)
	p.Add("newOrderRespType", "FULL")
	body, err := e.c.do(ctx, request{ep: epNewOrder, params: p, cred: &cred})
	if err != nil {
		e.log.WarnContext(ctx, "binance order not placed", "clientOrderId", req.ClientOrderID, "symbol", mk.symbol, "err", err)
		return exgate.Order{}, err
	}
	o, err := parseOrder(body)
	if err != nil {
		e.log.ErrorContext(ctx, "binance order answer unreadable", "clientOrderId", req.ClientOrderID, "err", err)
		return exgate.Order{}, badAnswer(epNewOrder, err)
	}
	if o.ClientOrderID != req.ClientOrderID {
		e.log.WarnContext(ctx, "binance answered with another client order id", "sent", req.ClientOrderID, "got", o.ClientOrderID)
	}
	out := e.normalizeOrder(ctx, mk, o, req.ClientOrderID, plan.report, plan.reportIn)
	out.OpenAt = o.TransactTime
	if out.OpenAt == 0 {
		out.OpenAt = o.WorkingTime
	}
	out.CloseAt = out.OpenAt
	e.log.InfoContext(ctx, "binance order placed", "clientOrderId", req.ClientOrderID, "orderId", o.OrderID, "status", o.Status)
	return out, nil
}

// plan rounds the quantity and checks it against the symbol's minimums,
// reading the order book where the rules are in the other asset.
func (e *Exchange) plan(ctx context.Context, cred exgate.Credential, mk *market, req exgate.OrderRequest) (orderPlan, error) {
	switch {
	case req.QuantityIn == exgate.InBase:
		q := mk.roundBase(req.Quantity)
		if err := e.checkBase(ctx, cred, mk, req.Side, req.Quantity, q, ""); err != nil {
			return orderPlan{}, err
		}
		return orderPlan{param: "quantity", qty: q, report: q, reportIn: exgate.InBase}, nil

	case mk.quoteOrderAllowed:
		q := req.Quantity.RoundDown(mk.quotePrecision)
		if !q.IsPositive() {
			return orderPlan{}, exgate.Errorf(exgate.CodeQuantityTooSmall,
				"quantity %s %s rounds down to 0 at binance's %d decimals for %s", req.Quantity, mk.pair.Quote, mk.quotePrecision, mk.pair.Quote)
		}
		if mk.applyMin && q.LessThan(mk.minNotional) {
			return orderPlan{}, exgate.Errorf(exgate.CodeQuantityTooSmall,
				"quantity %s %s is under binance's minimum order value %s %s for %s (%s minNotional)", q, mk.pair.Quote, mk.minNotional, mk.pair.Quote, mk.pair, mk.notionalBy)
		}
		if mk.minQty.IsPositive() {
			book, err := e.book(ctx, cred, mk, 100)
			if err != nil {
				return orderPlan{}, err
			}
			if base, ok := walkQuote(book.side(req.Side), q); ok {
				if rb := mk.roundBase(base); rb.LessThan(mk.minQty) {
					return orderPlan{}, exgate.Errorf(exgate.CodeQuantityTooSmall,
						"quantity %s %s is about %s %s at the order book, under binance's minimum %s %s for %s (LOT_SIZE minQty)", q, mk.pair.Quote, rb, mk.pair.Base, mk.minQty, mk.pair.Base, mk.pair)
				}
			}
		}
		return orderPlan{param: "quoteOrderQty", qty: q, report: q, reportIn: exgate.InQuote}, nil

	default:
		// The symbol does not take quoteOrderQty: convert against the
		// book (BUY: what the quote amount buys at the asks; SELL: what
		// must be sold at the bids to receive it) and send quantity.
		book, err := e.book(ctx, cred, mk, 100)
		if err != nil {
			return orderPlan{}, err
		}
		base, ok := walkQuote(book.side(req.Side), req.Quantity)
		if !ok {
			return orderPlan{}, exgate.Errorf(exgate.CodeOrderRejected, "binance's %s order book is empty on the %s side; cannot convert %s %s", mk.pair, bookSideName(req.Side), req.Quantity, mk.pair.Quote)
		}
		q := mk.roundBase(base)
		detail := fmt.Sprintf(" (%s %s converted at the order book)", req.Quantity, mk.pair.Quote)
		if err := e.checkBase(ctx, cred, mk, req.Side, base, q, detail); err != nil {
			return orderPlan{}, err
		}
		return orderPlan{param: "quantity", qty: q, report: req.Quantity.RoundDown(mk.quotePrecision), reportIn: exgate.InQuote}, nil
	}
}

// checkBase refuses a rounded base quantity q (from the client's asked)
// under the lot minimum, over the lot maximum, or whose value estimated
// at the order book is under the notional minimum.
func (e *Exchange) checkBase(ctx context.Context, cred exgate.Credential, mk *market, side exgate.Side, asked, q decimal.Decimal, note string) error {
	step := mk.lotStep
	if mk.mktStep.GreaterThan(step) {
		step = mk.mktStep
	}
	if !q.IsPositive() || q.LessThan(mk.minQty) {
		return exgate.Errorf(exgate.CodeQuantityTooSmall,
			"quantity %s %s%s rounds down to %s at step %s, under binance's minimum %s %s for %s (LOT_SIZE minQty)",
			asked, mk.pair.Base, note, q, step, mk.minQty, mk.pair.Base, mk.pair)
	}
	if mk.maxQty.IsPositive() && q.GreaterThan(mk.maxQty) {
		return exgate.Errorf(exgate.CodeOrderRejected, "quantity %s %s is over binance's maximum %s %s for a MARKET order on %s", q, mk.pair.Base, mk.maxQty, mk.pair.Base, mk.pair)
	}
	if !mk.applyMin {
		return nil
	}
	book, err := e.book(ctx, cred, mk, 100)
	if err != nil {
		return err
	}
	value, ok := walkBase(book.side(side), q)
	if ok && value.LessThan(mk.minNotional) {
		return exgate.Errorf(exgate.CodeQuantityTooSmall,
			"quantity %s %s is worth about %s %s at the order book, under binance's minimum order value %s %s for %s (%s minNotional)",
			q, mk.pair.Base, value.Round(int32(mk.quotePrecision)), mk.pair.Quote, mk.minNotional, mk.pair.Quote, mk.pair, mk.notionalBy)
	}
	return nil
}

func bookSideName(s exgate.Side) string {
	if s == exgate.SideBuy {
		return "ask"
	}
	return "bid"
}

// QueryOrder reads an order back by its client order id with
// GET /api/v3/order?origClientOrderId= (or by orderId when only the
// exchange id is known), and its fees from GET /api/v3/myTrades when it
// has fills. -2013 (and -2026, archived) is an error wrapping
// exgate.ErrNotFound.
func (e *Exchange) QueryOrder(ctx context.Context, cred exgate.Credential, q exgate.OrderQuery) (exgate.Order, error) {
	mk, err := e.markets.lookup(ctx, q.Symbol)
	if err != nil {
		return exgate.Order{}, err
	}
	var p rest.Params
	p.Add("symbol", mk.symbol)
	switch {
	case q.ClientOrderID != "":
		p.Add("origClientOrderId", q.ClientOrderID)
	case q.ExchangeOrderID != "":
		p.Add("orderId", q.ExchangeOrderID)
	default:
		return exgate.Order{}, exgate.ParamError("clientOrderId", "an order is looked up by its client order id")
	}
	body, err := e.c.do(ctx, request{ep: epQueryOrder, params: p, cred: &cred})
	if err != nil {
		if ae, ok := errors.AsType[*apiError](err); ok && (ae.code == codeNoSuchOrder || ae.code == codeOrderArchived) {
			return exgate.Order{}, &exgate.Error{Code: exgate.CodeNotFound,
				Detail: fmt.Sprintf("binance has no order %s on %s: %s", orderName(q), mk.pair, ae.msg),
				Err:    fmt.Errorf("%w: %w", exgate.ErrNotFound, ae)}
		}
		return exgate.Order{}, err
	}
	o, err := parseOrder(body)
	if err != nil {
		return exgate.Order{}, badAnswer(epQueryOrder, err)
	}
	qty, in := o.OrigQty.Decimal, exgate.InBase
	if o.OrigQuoteOrderQty.IsPositive() {
		qty, in = o.OrigQuoteOrderQty.Decimal, exgate.InQuote
	}
	id := q.ClientOrderID
	if id == "" {
		id = o.ClientOrderID
	}
	if o.ExecutedQty.IsPositive() && len(o.Fills) == 0 {
		o.Fills = e.tradeFills(ctx, cred, mk, o.OrderID)
	}
	out := e.normalizeOrder(ctx, mk, o, id, qty, in)
	out.OpenAt = o.Time
	if out.OpenAt == 0 {
		out.OpenAt = o.WorkingTime
	}
	out.CloseAt = out.OpenAt
	if out.Status.Final() && o.UpdateTime >= out.OpenAt {
		out.CloseAt = o.UpdateTime
	}
	return out, nil
}

func orderName(q exgate.OrderQuery) string {
	if q.ClientOrderID != "" {
		return "with client order id " + q.ClientOrderID
	}
	return "with order id " + q.ExchangeOrderID
}

// tradeFills reads an order's trades for their commissions. It is best
// effort: without them the order is reported with fees null.
func (e *Exchange) tradeFills(ctx context.Context, cred exgate.Credential, mk *market, orderID int64) []fillJSON {
	var p rest.Params
	p.Add("symbol", mk.symbol)
	p.Add("orderId", strconv.FormatInt(orderID, 10))
	body, err := e.c.do(ctx, request{ep: epMyTrades, params: p, cred: &cred})
	if err != nil {
		e.log.WarnContext(ctx, "binance trades of an order not read; fees unknown", "orderId", orderID, "err", err)
		return nil
	}
	fills, err := parseTrades(body, orderID)
	if err != nil {
		e.log.WarnContext(ctx, "binance trades answer unreadable; fees unknown", "orderId", orderID, "err", err)
		return nil
	}
	return fills
}

// normalizeOrder builds the gateway's order from Binance's. OpenAt and
// CloseAt are set by the caller.
func (e *Exchange) normalizeOrder(ctx context.Context, mk *market, o orderJSON, id string, qty decimal.Decimal, in exgate.QuantityIn) exgate.Order {
	out := exgate.Order{
		ID:               id,
		Asset1:           mk.pair.Base,
		Asset2:           mk.pair.Quote,
		Status:           orderStatus(o.Status),
		RawStatus:        o.Status,
		Type:             exgate.OrderTypeMarket,
		Side:             exgate.Side(o.Side),
		Quantity:         exgate.NewNumber(qty),
		QuantityIn:       in.Asset(mk.pair),
		Exchange:         exgate.ExchangeBinance,
		ClientOrderID:    id,
		ExchangeOrderID:  strconv.FormatInt(o.OrderID, 10),
		ExecutedQuantity: exgate.NumberPtr(o.ExecutedQty.Decimal),
	}
	if !o.CummulativeQuoteQty.IsNegative() {
		out.QuoteQuantity = exgate.NumberPtr(o.CummulativeQuoteQty.Decimal)
		if o.ExecutedQty.IsPositive() {
			out.AveragePrice = exgate.NumberPtr(o.CummulativeQuoteQty.DivRound(o.ExecutedQty.Decimal, 16))
		}
	}
	if fee, ok := fees(mk, o.Fills); ok {
		out.Fees = exgate.NumberPtr(fee.amount)
		out.FeesIn = fee.asset
		if len(fee.dropped) > 0 {
			e.log.WarnContext(ctx, "binance commissions in several assets; reporting the majority asset only",
				"orderId", o.OrderID, "feesIn", fee.asset, "notIncluded", fee.dropped)
		}
	}
	return out
}

// feeTotal is an order's commission in one asset; dropped lists
// commissions in assets that could not be converted to it.
type feeTotal struct {
	amount  decimal.Decimal
	asset   string
	dropped []string
}

// fees sums the fills' commissions. When they come in several assets, the
// asset most fills were charged in is reported, and commissions in the
// symbol's other asset are converted at their fill's price; a commission
// in a third asset (BNB) cannot be converted with the fill prices and is
// left out (and logged).
func fees(mk *market, fills []fillJSON) (feeTotal, bool) {
	if len(fills) == 0 {
		return feeTotal{}, false
	}
	count := map[string]int{}
	var order []string
	for _, f := range fills {
		a := exgate.NormalizeAsset(f.CommissionAsset)
		if count[a] == 0 {
			order = append(order, a)
		}
		count[a]++
	}
	target := order[0]
	for _, a := range order[1:] {
		if count[a] > count[target] {
			target = a
		}
	}
	out := feeTotal{asset: target}
	for _, f := range fills {
		a := exgate.NormalizeAsset(f.CommissionAsset)
		switch {
		case a == target:
			out.amount = out.amount.Add(f.Commission.Decimal)
		case a == mk.pair.Base && target == mk.pair.Quote:
			out.amount = out.amount.Add(f.Commission.Mul(f.Price.Decimal))
		case a == mk.pair.Quote && target == mk.pair.Base && f.Price.IsPositive():
			out.amount = out.amount.Add(f.Commission.DivRound(f.Price.Decimal, max(mk.basePrecision, 8)))
		default:
			out.dropped = append(out.dropped, f.Commission.String()+" "+a)
		}
	}
	return out, true
}

// orderJSON is an order answer: POST /api/v3/order (FULL) and
// GET /api/v3/order share these fields. Quantities are decimal strings.
type orderJSON struct {
	Symbol              string       `json:"symbol"`
	OrderID             int64        `json:"orderId"`
	ClientOrderID       string       `json:"clientOrderId"`
	TransactTime        int64        `json:"transactTime"`
	Time                int64        `json:"time"`
	UpdateTime          int64        `json:"updateTime"`
	WorkingTime         int64        `json:"workingTime"`
	OrigQty             rest.Decimal `json:"origQty"`
	ExecutedQty         rest.Decimal `json:"executedQty"`
	OrigQuoteOrderQty   rest.Decimal `json:"origQuoteOrderQty"`
	CummulativeQuoteQty rest.Decimal `json:"cummulativeQuoteQty"`
	Status              string       `json:"status"`
	Type                string       `json:"type"`
	Side                string       `json:"side"`
	Fills               []fillJSON   `json:"fills"`
}

// fillJSON is one fill of a FULL answer (or one trade of myTrades).
type fillJSON struct {
	Price           rest.Decimal `json:"price"`
	Qty             rest.Decimal `json:"qty"`
	Commission      rest.Decimal `json:"commission"`
	CommissionAsset string       `json:"commissionAsset"`
}

// parseOrder reads an order answer and checks what the adapter relies on.
func parseOrder(body []byte) (orderJSON, error) {
	var o orderJSON
	if err := json.Unmarshal(body, &o); err != nil {
		return orderJSON{}, fmt.Errorf("order answer: %w", err)
	}
	if o.OrderID == 0 || o.Status == "" {
		return orderJSON{}, fmt.Errorf("order answer without orderId or status: %s", rest.Truncate(body))
	}
	if o.Side != string(exgate.SideBuy) && o.Side != string(exgate.SideSell) {
		return orderJSON{}, fmt.Errorf("order answer with side %q", o.Side)
	}
	if o.OrigQty.IsNegative() || o.ExecutedQty.IsNegative() || o.OrigQuoteOrderQty.IsNegative() {
		return orderJSON{}, fmt.Errorf("order answer with a negative quantity")
	}
	for _, f := range o.Fills {
		if f.Price.IsNegative() || f.Qty.IsNegative() || f.Commission.IsNegative() {
			return orderJSON{}, fmt.Errorf("order answer with a negative fill")
		}
	}
	return o, nil
}

// parseTrades reads GET /api/v3/myTrades, keeping the trades of orderID.
func parseTrades(body []byte, orderID int64) ([]fillJSON, error) {
	var trades []struct {
		OrderID int64 `json:"orderId"`
		fillJSON
	}
	if err := json.Unmarshal(body, &trades); err != nil {
		return nil, fmt.Errorf("trades answer: %w", err)
	}
	var out []fillJSON
	for _, t := range trades {
		if t.OrderID == orderID {
			if t.Commission.IsNegative() || t.Price.IsNegative() {
				return nil, fmt.Errorf("trades answer with a negative value")
			}
			out = append(out, t.fillJSON)
		}
	}
	return out, nil
}

// RecentKlines returns the last req.Limit klines with GET /api/v3/klines.
// Binance serves every normalized interval and caps limit at 1000, the
// gateway's own maximum.
func (e *Exchange) RecentKlines(ctx context.Context, cred exgate.Credential, req exgate.KlineRequest) ([]exgate.Kline, error) {
	call, err := e.klineCall(ctx, req)
	if err != nil {
		return nil, err
	}
	body, err := e.c.doText(ctx, call.request)
	if err != nil {
		return nil, err
	}
	ks, err := parseKlines(body, call.iv)
	if err != nil {
		return nil, badAnswer(epKlines, err)
	}
	if len(ks) > call.limit {
		ks = ks[len(ks)-call.limit:]
	}
	return ks, nil
}

// klineCall is the GET /api/v3/klines call that answers a KlineRequest.
type klineCall struct {
	request
	iv    exgate.Interval
	limit int
}

func (e *Exchange) klineCall(ctx context.Context, req exgate.KlineRequest) (klineCall, error) {
	iv := req.Interval
	if iv == "" {
		iv = exgate.Interval1m
	}
	name, ok := klineIntervals[iv]
	if !ok {
		return klineCall{}, exgate.ParamError("interval", "unknown interval %q", req.Interval)
	}
	limit := req.Limit
	if limit <= 0 {
		limit = exgate.DefaultKlineLimit
	}
	limit = min(limit, exgate.MaxKlineLimit)
	mk, err := e.markets.lookup(ctx, req.Symbol)
	if err != nil {
		return klineCall{}, err
	}
	var p rest.Params
	p.Add("symbol", mk.symbol)
	p.Add("interval", name)
	p.Add("limit", strconv.Itoa(limit))
	// A kline row is about 175 bytes of JSON.
	return klineCall{request: request{ep: epKlines, params: p, sizeHint: 180 * limit}, iv: iv, limit: limit}, nil
}

// parseKlines reads GET /api/v3/klines rows: [openTime, open, high, low,
// close, volume, closeTime, quoteVolume, trades, ...]. CloseTime is
// recomputed as OpenTime + interval - 1 ms (Binance's own value is the
// same). The answer is scanned directly; encoding/json reads what the
// scanner does not take (escaped strings).
func parseKlines(body string, iv exgate.Interval) ([]exgate.Kline, error) {
	c := klineConverter{rows: newKlineRows(iv)}
	err := scanKlines(body, c.add)
	if errors.Is(err, errShape) {
		c = klineConverter{rows: c.rows}
		var rows []rawKline
		if rows, err = decodeKlines([]byte(body)); err == nil {
			for i := range rows {
				if err = c.add(len(rows), &rows[i], 0); err != nil {
					break
				}
			}
		}
	}
	if err != nil {
		return nil, err
	}
	if c.out == nil {
		c.out = []exgate.Kline{}
	}
	return c.out, nil
}

// klineRows converts the raw rows of one interval's klines.
type klineRows struct {
	iv   exgate.Interval
	step int64 // milliseconds; 0 for 1M, whose length varies
}

func newKlineRows(iv exgate.Interval) klineRows {
	return klineRows{iv: iv, step: iv.Duration().Milliseconds()}
}

// convert reads row i into k, whose trade count points to trades; prev is
// the open time of the row before it, or -1 for the first.
func (c klineRows) convert(i int, r *rawKline, prev int64, k *exgate.Kline, trades *uint64) error {
	var err error
	if k.OpenTime, err = parseCount(r.open); err != nil {
		return fmt.Errorf("kline %d open time %.40q", i, r.open)
	}
	for j := range r.values {
		if !r.plain[j] {
			v, err := plainDecimal(r.values[j])
			if err != nil {
				return fmt.Errorf("kline %d field %d: %w", i, j+1, err)
			}
			r.values[j] = v
		}
	}
	k.OpenPrice, k.HighPrice, k.LowPrice, k.ClosePrice, k.Volume = r.values[0], r.values[1], r.values[2], r.values[3], r.values[4]
	n, err := parseCount(r.trades)
	if err != nil {
		return fmt.Errorf("kline %d trade count %.40q", i, r.trades)
	}
	*trades = uint64(n)
	k.NumberOfTrades = trades
	if k.OpenTime <= prev {
		return fmt.Errorf("klines not ascending at %d", i)
	}
	if c.step > 0 {
		k.CloseTime = k.OpenTime + c.step - 1
	} else {
		k.CloseTime = c.iv.Next(time.UnixMilli(k.OpenTime).UTC()).UnixMilli() - 1
	}
	return nil
}

// parseCount reads a JSON number that should be a count or a time in
// milliseconds: digits only (no sign, fraction or exponent), so never
// negative, and at most what an int64 holds.
func parseCount(s string) (int64, error) {
	if len(s) == 0 || len(s) > 19 {
		return 0, errNotCount
	}
	var n int64
	for i := 0; i < len(s); i++ {
		d := s[i] - '0'
		if d > 9 {
			return 0, errNotCount
		}
		n = n*10 + int64(d)
	}
	if len(s) == 19 { // may have overflowed
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, errNotCount
		}
		return v, nil
	}
	return n, nil
}

var errNotCount = errors.New("not a count")

// klineConverter turns raw kline rows into normalized klines, one at a
// time as they are read.
type klineConverter struct {
	rows klineRows
	out  []exgate.Kline
	// counts holds the trade counts the klines point to: one allocation
	// for many klines rather than one per kline. When it is full a new one
	// is started; the klines keep pointing into the old one.
	counts []uint64
}

// add converts r and appends it; n estimates how many rows there are.
func (c *klineConverter) add(n int, r *rawKline, _ int) error {
	i := len(c.out)
	if c.out == nil {
		c.out = make([]exgate.Kline, 0, n)
	}
	if len(c.counts) == cap(c.counts) {
		c.counts = make([]uint64, 0, max(n-i, 16))
	}
	prev := int64(-1)
	if i > 0 {
		prev = c.out[i-1].OpenTime
	}
	c.counts = c.counts[:len(c.counts)+1]
	var k exgate.Kline
	if err := c.rows.convert(i, r, prev, &k, &c.counts[len(c.counts)-1]); err != nil {
		return err
	}
	c.out = append(c.out, k)
	return nil
}

// decodeKlines reads kline rows with encoding/json.
func decodeKlines(body []byte) ([]rawKline, error) {
	var rows [][]json.RawMessage
	if err := json.Unmarshal(body, &rows); err != nil {
		return nil, fmt.Errorf("klines answer: %w", err)
	}
	out := make([]rawKline, 0, len(rows))
	for i, row := range rows {
		if len(row) < 9 {
			return nil, fmt.Errorf("kline %d has %d fields", i, len(row))
		}
		r := rawKline{open: string(row[0]), trades: string(row[8])}
		for j := range r.values {
			if err := json.Unmarshal(row[j+1], &r.values[j]); err != nil {
				return nil, fmt.Errorf("kline %d field %d is not a string: %s", i, j+1, rest.Truncate(row[j+1]))
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// plainDecimal checks a non-negative decimal and returns it in plain
// notation (exponent forms are rewritten).
func plainDecimal(s string) (string, error) {
	if exgate.IsPlainDecimal(s) {
		return s, nil
	}
	d, err := exgate.ParseDecimal(s)
	if err != nil || d.IsNegative() {
		return "", fmt.Errorf("not a non-negative decimal: %q", s)
	}
	return d.String(), nil
}

// OrderBook returns at most req.Limit levels per side with
// GET /api/v3/depth, asking for the next depth Binance lists and trimming.
func (e *Exchange) OrderBook(ctx context.Context, cred exgate.Credential, req exgate.OrderBookRequest) (exgate.OrderBook, error) {
	limit := req.Limit
	if limit <= 0 {
		limit = exgate.DefaultOrderBookLimit
	}
	limit = min(limit, exgate.MaxOrderBookLimit)
	mk, err := e.markets.lookup(ctx, req.Symbol)
	if err != nil {
		return exgate.OrderBook{}, err
	}
	b, err := e.book(ctx, cred, mk, limit)
	if err != nil {
		return exgate.OrderBook{}, err
	}
	return exgate.OrderBook{Bids: b.bids.levels(limit), Asks: b.asks.levels(limit)}, nil
}

// book reads the order book at the listed depth at or above limit.
func (e *Exchange) book(ctx context.Context, cred exgate.Credential, mk *market, limit int) (*orderBook, error) {
	depth := depthLimit(limit)
	var p rest.Params
	p.Add("symbol", mk.symbol)
	p.Add("limit", strconv.Itoa(depth))
	// A level is about 35 bytes of JSON.
	body, err := e.c.doText(ctx, request{ep: epDepth, params: p, weight: depthWeight(depth), sizeHint: 64 + 70*depth})
	if err != nil {
		return nil, err
	}
	b, err := parseBook(body)
	if err != nil {
		return nil, badAnswer(epDepth, err)
	}
	return b, nil
}

// bookSide is one side of a book, best price first, as Binance wrote it.
// Prices and quantities are parsed to decimals only by the walks, which
// read the first few levels.
type bookSide []exgate.Level

func (s bookSide) levels(limit int) []exgate.Level {
	out := []exgate.Level(s)
	if len(out) > limit {
		out = out[:limit]
	}
	if out == nil {
		out = []exgate.Level{}
	}
	return out
}

// level returns level i as decimals.
func (s bookSide) level(i int) (price, amount decimal.Decimal) {
	price, _ = decimal.NewFromString(s[i].Price)
	amount, _ = decimal.NewFromString(s[i].Quantity)
	return price, amount
}

type orderBook struct{ bids, asks bookSide }

// side returns the levels an order of that side takes: asks for BUY, bids
// for SELL.
func (b *orderBook) side(s exgate.Side) bookSide {
	if s == exgate.SideBuy {
		return b.asks
	}
	return b.bids
}

// parseBook reads GET /api/v3/depth; bids must be descending and asks
// ascending, as Binance sends them.
func parseBook(body string) (*orderBook, error) {
	bids, asks, err := scanBook(body)
	if err != nil {
		var raw struct {
			Bids [][2]string `json:"bids"`
			Asks [][2]string `json:"asks"`
		}
		if err := json.Unmarshal([]byte(body), &raw); err != nil {
			return nil, fmt.Errorf("depth answer: %w", err)
		}
		bids, asks = raw.Bids, raw.Asks
	}
	b := &orderBook{}
	if b.bids, err = parseSide(bids, true); err != nil {
		return nil, fmt.Errorf("bids: %w", err)
	}
	if b.asks, err = parseSide(asks, false); err != nil {
		return nil, fmt.Errorf("asks: %w", err)
	}
	return b, nil
}

func parseSide(rows [][2]string, descending bool) (bookSide, error) {
	s := make(bookSide, 0, len(rows))
	for i, r := range rows {
		p, err := plainDecimal(r[0])
		if err != nil {
			return nil, fmt.Errorf("level %d price: %w", i, err)
		}
		q, err := plainDecimal(r[1])
		if err != nil {
			return nil, fmt.Errorf("level %d quantity: %w", i, err)
		}
		if i > 0 {
			c := comparePlain(p, s[i-1].Price)
			if (descending && c >= 0) || (!descending && c <= 0) {
				return nil, fmt.Errorf("levels out of order at %d", i)
			}
		}
		s = append(s, exgate.Level{Price: p, Quantity: q})
	}
	return s, nil
}

// walkBase estimates the quote value of base quantity q taken from the
// side, best price first; past the book's depth the last price is used.
// ok is false on an empty side.
func walkBase(s bookSide, q decimal.Decimal) (value decimal.Decimal, ok bool) {
	if len(s) == 0 {
		return decimal.Zero, false
	}
	left := q
	var price decimal.Decimal
	for i := range s {
		var amount decimal.Decimal
		price, amount = s.level(i)
		take := decimal.Min(left, amount)
		value = value.Add(take.Mul(price))
		left = left.Sub(take)
		if !left.IsPositive() {
			return value, true
		}
	}
	return value.Add(left.Mul(price)), true
}

// walkQuote estimates how much base quote amount v trades against the
// side, best price first; past the book's depth the last price is used.
// ok is false on an empty side.
func walkQuote(s bookSide, v decimal.Decimal) (base decimal.Decimal, ok bool) {
	if len(s) == 0 {
		return decimal.Zero, false
	}
	left := v
	var price decimal.Decimal
	for i := range s {
		var amount decimal.Decimal
		price, amount = s.level(i)
		if !price.IsPositive() {
			continue
		}
		cost := amount.Mul(price)
		if cost.GreaterThanOrEqual(left) {
			return base.Add(left.DivRound(price, 18)), true
		}
		base = base.Add(amount)
		left = left.Sub(cost)
	}
	if !price.IsPositive() {
		return base, true
	}
	return base.Add(left.DivRound(price, 18)), true
}
