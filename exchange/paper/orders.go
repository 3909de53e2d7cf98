package paper

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// Operation kinds of a limit order's chain, and the record of a step: the
// sim ledger's own (package sim, lifecycle.go), so that the sim wallet
// counts what a paper order holds exactly as it counts its own.
const (
	kindFill   exgate.IntentKind = "fill"
	kindCancel exgate.IntentKind = "cancel"
	kindExpire exgate.IntentKind = "expire"
)

// Raw statuses of paper orders, after Binance's.
const (
	rawNew             = "NEW"
	rawPartiallyFilled = "PARTIALLY_FILLED"
	rawFilled          = "FILLED"
	rawCanceled        = "CANCELED"
	rawExpired         = "EXPIRED"
)

// step is one operation of a limit order's chain after its placement.
type step struct {
	Kind exgate.IntentKind `json:"kind"`
	Fill *exgate.Fill      `json:"fill,omitempty"`
	At   int64             `json:"at"`
}

// chain is a limit order read from the ledger.
type chain struct {
	placed exgate.Order
	steps  []step
}

func stepID(cid string, n int) string { return cid + "." + strconv.Itoa(n) }

func (c chain) executed() decimal.Decimal {
	sum := decimal.Zero
	for _, st := range c.steps {
		if st.Fill != nil {
			sum = sum.Add(st.Fill.Quantity.Decimal)
		}
	}
	return sum
}

func (c chain) closed() bool {
	if len(c.steps) == 0 {
		return false
	}
	return c.steps[len(c.steps)-1].Kind != kindFill || c.executed().Equal(c.placed.Quantity.Decimal)
}

// order is the chain as an Order.
func (c chain) order() exgate.Order {
	o := c.placed
	base, quote, fees := decimal.Zero, decimal.Zero, decimal.Zero
	for _, st := range c.steps {
		if st.Fill != nil {
			base = base.Add(st.Fill.Quantity.Decimal)
			quote = quote.Add(st.Fill.QuoteQuantity.Decimal)
			fees = fees.Add(st.Fill.Fee.Decimal)
		}
	}
	o.ExecutedQuantity, o.QuoteQuantity, o.Fees = exgate.NumberPtr(base), exgate.NumberPtr(quote), exgate.NumberPtr(fees)
	if base.IsPositive() {
		o.AveragePrice = exgate.AveragePrice(quote, base)
		o.Status, o.RawStatus = exgate.OrderPartiallyFilled, rawPartiallyFilled
	}
	if c.closed() {
		last := c.steps[len(c.steps)-1]
		o.CloseAt = last.At
		switch last.Kind {
		case kindFill:
			o.Status, o.RawStatus = exgate.OrderFilled, rawFilled
		case kindCancel:
			o.Status, o.RawStatus = exgate.OrderCanceled, rawCanceled
		case kindExpire:
			o.Status, o.RawStatus = exgate.OrderExpired, rawExpired
		}
	}
	return o
}

// PlaceMarketOrder fills a paper key's market order by walking the live
// book at this moment; what the book cannot fill expires. The taker fee
// is paid in the asset received.
func (e *Exchange) PlaceMarketOrder(ctx context.Context, cred exgate.Credential, req exgate.OrderRequest) (exgate.Order, error) {
	if !cred.Paper {
		return e.live.PlaceMarketOrder(ctx, cred, req)
	}
	if req.ClientOrderID == "" {
		return exgate.Order{}, exgate.ParamError("clientOrderId", "a paper order needs a client order id")
	}
	o, op, need, err := e.marketOrder(ctx, cred, req)
	if err != nil {
		return exgate.Order{}, err
	}
	if err := e.checkFunds(ctx, cred, need); err != nil {
		return exgate.Order{}, err
	}
	if err := e.apply(ctx, cred, op, o.ID); err != nil {
		return exgate.Order{}, err
	}
	e.notify(cred.ID, o)
	return o, nil
}

// marketOrder computes a market order and its ledger operation (for a
// test order, without a client order id).
//
// need is what the account must hold to place it, which may exceed what
// the fill takes: a market sell of a base quantity, or a buy of a quote
// amount, needs the whole quantity, as on the real exchanges, even when
// the book fills less of it.
func (e *Exchange) marketOrder(ctx context.Context, cred exgate.Credential, req exgate.OrderRequest) (o exgate.Order, op exgate.SimOperation, need exgate.BalanceChange, err error) {
	switch {
	case req.Side != exgate.SideBuy && req.Side != exgate.SideSell:
		return o, op, need, exgate.ParamError("side", "side must be BUY or SELL, not %q", req.Side)
	case !req.Quantity.IsPositive():
		return o, op, need, exgate.ParamError("quantity", "quantity must be positive, not %s", req.Quantity)
	}
	m, err := e.market(ctx, cred, req.Symbol)
	if err != nil {
		return o, op, need, err
	}
	book, err := e.book(ctx, cred, req.Symbol, bookDepth)
	if err != nil {
		return o, op, need, err
	}
	levels, err := side(book, req.Side)
	if err != nil {
		return o, op, need, exgate.Errorf(exgate.CodeExchangeError, "%s's book of %s: %v", e.live.Name(), req.Symbol, err)
	}
	inQuote := req.QuantityIn == exgate.InQuote
	qty := req.Quantity
	if !inQuote {
		qty = roundDown(qty, m.step)
	}
	takes, complete := walk(levels, m, req.Side, qty, inQuote, nil)
	base, quote := sum(takes)
	in := req.QuantityIn.Asset(req.Symbol)
	switch {
	case !inQuote && qty.LessThan(m.minQty):
		return o, op, need, exgate.Errorf(exgate.CodeQuantityTooSmall,
			"quantity %s %s is below the minimum %s %s of %s (step %s, rounded down to %s)",
			req.Quantity, in, m.minQty, m.sym.Base, m.sym, m.step, qty)
	case len(takes) == 0:
		return o, op, need, exgate.Errorf(exgate.CodeQuantityTooSmall,
			"%s %s takes nothing from %s's book of %s (less than one step %s %s at its best price, or an empty side)",
			req.Quantity, in, e.live.Name(), m.sym, m.step, m.sym.Base)
	case base.LessThan(m.minQty):
		return o, op, need, exgate.Errorf(exgate.CodeQuantityTooSmall,
			"%s %s buys %s %s after rounding to the step %s, below the minimum quantity %s %s of %s",
			req.Quantity, in, base, m.sym.Base, m.step, m.minQty, m.sym.Base, m.sym)
	case quote.LessThan(m.minNotional):
		return o, op, need, exgate.Errorf(exgate.CodeQuantityTooSmall,
			"%s %s is worth %s %s at the live book (base rounded down to the step %s), below the minimum notional %s %s of %s",
			req.Quantity, in, quote, m.sym.Quote, m.step, m.minNotional, m.sym.Quote, m.sym)
	}
	pay, payAmount, get, getAmount := m.sym.Quote, quote, m.sym.Base, base
	if req.Side == exgate.SideSell {
		pay, payAmount, get, getAmount = m.sym.Base, base, m.sym.Quote, quote
	}
	fee := getAmount.Mul(e.fees.Taker)
	now := e.now().UnixMilli()
	status, raw := exgate.OrderFilled, rawFilled
	if !complete {
		status, raw = exgate.OrderExpired, rawExpired
	}
	o = exgate.Order{
		ID: req.ClientOrderID, Asset1: m.sym.Base, Asset2: m.sym.Quote, Status: status,
		Type: exgate.OrderTypeMarket, Side: req.Side, Quantity: exgate.NewNumber(qty), QuantityIn: in,
		Fees: exgate.NumberPtr(fee), FeesIn: get, OpenAt: now, CloseAt: now,
		Exchange: e.live.Name(), ClientOrderID: req.ClientOrderID, ExchangeOrderID: "paper-" + req.ClientOrderID,
		ExecutedQuantity: exgate.NumberPtr(base), QuoteQuantity: exgate.NumberPtr(quote),
		AveragePrice: exgate.AveragePrice(quote, base), RawStatus: raw, Paper: true,
	}
	need = exgate.BalanceChange{Asset: pay, Delta: payAmount.Neg()}
	if in == pay {
		need.Delta = decimal.Min(need.Delta, qty.Neg())
	}
	rec, err := json.Marshal(o)
	if err != nil {
		return o, op, need, fmt.Errorf("paper: encode order %s: %w", o.ID, err)
	}
	return o, exgate.SimOperation{
		ID: o.ID, Kind: exgate.IntentOrder, Record: rec, CreatedAt: e.now(),
		Changes: []exgate.BalanceChange{{Asset: pay, Delta: payAmount.Neg()}, {Asset: get, Delta: getAmount.Sub(fee)}},
	}, need, nil
}

// apply applies op after opening the account through the sim wallet (with
// the key's starting balances), and refuses what the balances cannot pay
// with the amounts in the detail.
func (e *Exchange) apply(ctx context.Context, cred exgate.Credential, op exgate.SimOperation, id string) error {
	if _, err := e.wallet.Balances(ctx, cred); err != nil { // opens the account
		return err
	}
	err := e.store.ApplySimOperation(ctx, cred.ID, op)
	if errors.Is(err, exgate.ErrInsufficientFunds) {
		return e.fundsError(ctx, cred, op, err)
	}
	if err != nil {
		return ledgerError(id, err)
	}
	return nil
}

// checkFunds refuses an order the paper balances cannot pay for (need
// is the negative change it needs), with the amounts in the detail,
// opening the account first. The ledger checks again atomically.
func (e *Exchange) checkFunds(ctx context.Context, cred exgate.Credential, need exgate.BalanceChange) error {
	if _, err := e.wallet.Balances(ctx, cred); err != nil { // opens the account
		return err
	}
	bals, err := e.store.SimBalances(ctx, cred.ID)
	if err != nil {
		return &exgate.Error{Code: exgate.CodeExchangeError, Detail: "could not read the paper balances", Err: err}
	}
	if have := bals[need.Asset]; have.LessThan(need.Delta.Neg()) {
		return exgate.Errorf(exgate.CodeInsufficientFunds,
			"the order needs %s %s, the paper account has %s %s available", need.Delta.Neg(), need.Asset, have, need.Asset)
	}
	return nil
}

// fundsError says which asset the account lacks, and how much.
func (e *Exchange) fundsError(ctx context.Context, cred exgate.Credential, op exgate.SimOperation, cause error) error {
	bals, err := e.store.SimBalances(ctx, cred.ID)
	if err == nil {
		for _, c := range op.Changes {
			if have := bals[c.Asset]; c.Delta.IsNegative() && have.LessThan(c.Delta.Neg()) {
				return &exgate.Error{Code: exgate.CodeInsufficientFunds, Err: cause,
					Detail: fmt.Sprintf("the order needs %s %s, the paper account has %s %s available", c.Delta.Neg(), c.Asset, have, c.Asset)}
			}
		}
	}
	return ledgerError(op.ID, cause)
}

// checkLimit checks a limit order against the market's rules and returns
// its quantity rounded down to the step.
func checkLimit(m market, req exgate.LimitOrderRequest) (decimal.Decimal, error) {
	if err := req.Validate(); err != nil {
		return decimal.Decimal{}, err
	}
	if err := exgate.CheckPrice(req.Price, m.tick); err != nil {
		return decimal.Decimal{}, err
	}
	q := roundDown(req.Quantity, m.step)
	if q.LessThan(m.minQty) || !q.IsPositive() {
		return decimal.Decimal{}, exgate.Errorf(exgate.CodeQuantityTooSmall,
			"quantity %s %s is below the minimum %s %s of %s (step %s, rounded down to %s)",
			req.Quantity, m.sym.Base, m.minQty, m.sym.Base, m.sym, m.step, q)
	}
	if n := q.Mul(req.Price); n.LessThan(m.minNotional) {
		return decimal.Decimal{}, exgate.Errorf(exgate.CodeQuantityTooSmall,
			"%s %s at %s is worth %s %s, below the minimum notional %s %s of %s",
			q, m.sym.Base, req.Price, n, m.sym.Quote, m.minNotional, m.sym.Quote, m.sym)
	}
	return q, nil
}

// PlaceLimitOrder places a paper key's limit order: what crosses the live
// book fills at once at the book's prices (taker), IOC and FOK end there,
// and a GTC remainder rests, holding its funds, until the live book
// crosses it (watch.go).
func (e *Exchange) PlaceLimitOrder(ctx context.Context, cred exgate.Credential, req exgate.LimitOrderRequest) (exgate.Order, error) {
	if !cred.Paper {
		lo, err := ability[exgate.LimitOrders](e, "limit orders")
		if err != nil {
			return exgate.Order{}, err
		}
		return lo.PlaceLimitOrder(ctx, cred, req)
	}
	if req.ClientOrderID == "" {
		return exgate.Order{}, exgate.ParamError("clientOrderId", "a paper order needs a client order id")
	}
	o, hold, takes, err := e.prepareLimit(ctx, cred, req)
	if err != nil {
		return exgate.Order{}, err
	}
	rec, err := json.Marshal(o)
	if err != nil {
		return exgate.Order{}, fmt.Errorf("paper: encode order %s: %w", o.ID, err)
	}
	payAsset := o.Asset2
	if o.Side == exgate.SideSell {
		payAsset = o.Asset1
	}
	op := exgate.SimOperation{ID: o.ID, Kind: exgate.IntentOrder, Open: true, Record: rec, CreatedAt: e.now(),
		Changes: []exgate.BalanceChange{{Asset: payAsset, Delta: hold.Neg()}}}
	if err := e.apply(ctx, cred, op, o.ID); err != nil {
		return exgate.Order{}, err
	}
	c := chain{placed: o}
	var due []step
	if req.TimeInForce != exgate.FOK || complete(takes, o.Quantity.Decimal) {
		for _, t := range takes {
			due = append(due, e.fillStep(o, t.price, t.qty, false, o.OpenAt))
		}
	}
	if req.TimeInForce != exgate.GTC && !(chain{placed: o, steps: due}).closed() {
		due = append(due, step{Kind: kindExpire, At: o.OpenAt})
	}
	c, err = e.record(ctx, cred, c, due)
	if err != nil {
		// Placed; the watcher settles the rest.
		e.log.Warn("paper: the first fills of an order were not recorded", "order", o.ID, "err", err)
	}
	out := c.order()
	e.notify(cred.ID, out)
	return out, nil
}

func complete(ts []take, qty decimal.Decimal) bool {
	base, _ := sum(ts)
	return base.GreaterThanOrEqual(qty)
}

// prepareLimit checks a limit order and returns it as placed (PENDING,
// nothing executed), the funds it holds and what it takes from the live
// book at once. A postOnly order that would take is ORDER_REJECTED.
func (e *Exchange) prepareLimit(ctx context.Context, cred exgate.Credential, req exgate.LimitOrderRequest) (exgate.Order, decimal.Decimal, []take, error) {
	m, err := e.market(ctx, cred, req.Symbol)
	if err != nil {
		return exgate.Order{}, decimal.Decimal{}, nil, err
	}
	q, err := checkLimit(m, req)
	if err != nil {
		return exgate.Order{}, decimal.Decimal{}, nil, err
	}
	book, err := e.book(ctx, cred, req.Symbol, bookDepth)
	if err != nil {
		return exgate.Order{}, decimal.Decimal{}, nil, err
	}
	levels, err := side(book, req.Side)
	if err != nil {
		return exgate.Order{}, decimal.Decimal{}, nil, exgate.Errorf(exgate.CodeExchangeError, "%s's book of %s: %v", e.live.Name(), req.Symbol, err)
	}
	takes, _ := walk(levels, m, req.Side, q, false, &req.Price)
	if req.PostOnly && len(takes) > 0 {
		return exgate.Order{}, decimal.Decimal{}, nil, exgate.Errorf(exgate.CodeOrderRejected,
			"the postOnly order would trade at once: %s %s at %s crosses %s's book", req.Side, m.sym, req.Price, e.live.Name())
	}
	hold := q
	feesIn := m.sym.Base
	if req.Side == exgate.SideBuy {
		hold = q.Mul(req.Price)
	} else {
		feesIn = m.sym.Quote
	}
	now := e.now().UnixMilli()
	zero := decimal.Zero
	return exgate.Order{
		ID: req.ClientOrderID, Asset1: m.sym.Base, Asset2: m.sym.Quote, Status: exgate.OrderPending,
		Type: exgate.OrderTypeLimit, Side: req.Side, Quantity: exgate.NewNumber(q), QuantityIn: m.sym.Base,
		Fees: exgate.NumberPtr(zero), FeesIn: feesIn, OpenAt: now, CloseAt: now,
		Exchange: e.live.Name(), ClientOrderID: req.ClientOrderID, ExchangeOrderID: "paper-" + req.ClientOrderID,
		ExecutedQuantity: exgate.NumberPtr(zero), QuoteQuantity: exgate.NumberPtr(zero),
		RawStatus: rawNew, Price: exgate.NumberPtr(req.Price), TimeInForce: req.TimeInForce,
		PostOnly: req.PostOnly, Paper: true,
	}, hold, takes, nil
}

// fillStep is the step of one fill of o: qty at price, as maker (resting)
// or taker, with the fee in the asset received.
func (e *Exchange) fillStep(o exgate.Order, price, qty decimal.Decimal, maker bool, at int64) step {
	rate := e.fees.Taker
	if maker {
		rate = e.fees.Maker
	}
	quote := qty.Mul(price)
	fee := qty.Mul(rate)
	if o.Side == exgate.SideSell {
		fee = quote.Mul(rate)
	}
	return step{Kind: kindFill, At: at, Fill: &exgate.Fill{
		OrderID: o.ID, Asset1: o.Asset1, Asset2: o.Asset2, Side: o.Side,
		Price: exgate.NewNumber(price), Quantity: exgate.NewNumber(qty), QuoteQuantity: exgate.NewNumber(quote),
		Fee: exgate.NewNumber(fee), FeeIn: o.FeesIn, Maker: maker, Timestamp: at, ClientOrderID: o.ID, Paper: true,
	}}
}

// stepOperation is the ledger operation of step n of c: a fill moves the
// balances (and releases what a buy saved by filling below its limit), an
// end releases what the rest held; the step that ends the order closes
// its placement.
func stepOperation(c chain, n int, st step) (exgate.SimOperation, error) {
	o := c.placed
	limit := o.Price.Decimal
	cid := o.ID
	op := exgate.SimOperation{ID: stepID(cid, n), Kind: st.Kind}
	switch st.Kind {
	case kindFill:
		f := st.Fill
		f.ID = op.ID
		if o.Side == exgate.SideBuy {
			op.Changes = []exgate.BalanceChange{
				{Asset: o.Asset1, Delta: f.Quantity.Sub(f.Fee.Decimal)},
				{Asset: o.Asset2, Delta: limit.Sub(f.Price.Decimal).Mul(f.Quantity.Decimal)},
			}
		} else {
			op.Changes = []exgate.BalanceChange{{Asset: o.Asset2, Delta: f.QuoteQuantity.Sub(f.Fee.Decimal)}}
		}
		if (chain{placed: o, steps: append(slices.Clone(c.steps), st)}).closed() {
			op.Closes = cid
		}
	default:
		left := o.Quantity.Sub(c.executed())
		release, asset := left, o.Asset1
		if o.Side == exgate.SideBuy {
			release, asset = left.Mul(limit), o.Asset2
		}
		op.Changes = []exgate.BalanceChange{{Asset: asset, Delta: release}}
		op.Closes = cid
	}
	rec, err := json.Marshal(st)
	if err != nil {
		return op, fmt.Errorf("paper: encode step %s: %w", op.ID, err)
	}
	op.Record = rec
	return op, nil
}

// record applies the due steps after those c has. A step another
// instance recorded first (its id taken) ends the attempt: the caller gets
// the chain as the ledger has it, and the due steps, computed from a
// chain that was behind, are dropped.
func (e *Exchange) record(ctx context.Context, cred exgate.Credential, c chain, due []step) (chain, error) {
	for _, st := range due {
		n := len(c.steps) + 1
		op, err := stepOperation(c, n, st)
		if err != nil {
			return c, err
		}
		op.CreatedAt = e.now()
		err = e.store.ApplySimOperation(ctx, cred.ID, op)
		if errors.Is(err, exgate.ErrConflict) {
			return e.readChain(ctx, cred, c.placed.ID)
		}
		if err != nil {
			return c, ledgerError(c.placed.ID, err)
		}
		c.steps = append(c.steps, st)
	}
	return c, nil
}

// readChain reads an order's placement and its steps.
func (e *Exchange) readChain(ctx context.Context, cred exgate.Credential, cid string) (chain, error) {
	var c chain
	if cid == "" {
		return c, fmt.Errorf("paper: an order without a client id: %w", exgate.ErrNotFound)
	}
	op, err := e.store.SimOperation(ctx, cred.ID, cid)
	if err != nil {
		return c, fmt.Errorf("paper: order %s: %w", cid, err)
	}
	if op.Kind != exgate.IntentOrder {
		return c, fmt.Errorf("paper: %s names a %s: %w", cid, op.Kind, exgate.ErrNotFound)
	}
	if err := json.Unmarshal(op.Record, &c.placed); err != nil {
		return c, fmt.Errorf("paper: order %s: %w", cid, err)
	}
	if c.placed.Type != exgate.OrderTypeLimit {
		return c, nil
	}
	for n := 1; ; n++ {
		op, err := e.store.SimOperation(ctx, cred.ID, stepID(cid, n))
		if errors.Is(err, exgate.ErrNotFound) {
			return c, nil
		}
		if err != nil {
			return c, fmt.Errorf("paper: order %s step %d: %w", cid, n, err)
		}
		var st step
		if err := json.Unmarshal(op.Record, &st); err != nil {
			return c, fmt.Errorf("paper: order %s step %d: %w", cid, n, err)
		}
		c.steps = append(c.steps, st)
	}
}

// orderNow reads an order as it stands.
func (e *Exchange) orderNow(ctx context.Context, cred exgate.Credential, cid string) (exgate.Order, error) {
	c, err := e.readChain(ctx, cred, cid)
	if err != nil {
		return exgate.Order{}, err
	}
	if c.placed.Type != exgate.OrderTypeLimit {
		return c.placed, nil
	}
	return c.order(), nil
}

// QueryOrder reads a paper order back by its client order id.
func (e *Exchange) QueryOrder(ctx context.Context, cred exgate.Credential, q exgate.OrderQuery) (exgate.Order, error) {
	if !cred.Paper {
		return e.live.QueryOrder(ctx, cred, q)
	}
	o, err := e.orderNow(ctx, cred, q.ClientOrderID)
	if err != nil {
		return exgate.Order{}, err
	}
	if (q.Symbol != exgate.Symbol{} && (q.Symbol.Base != o.Asset1 || q.Symbol.Quote != o.Asset2)) {
		return exgate.Order{}, fmt.Errorf("paper: order %s on %s: %w", q.ClientOrderID, q.Symbol, exgate.ErrNotFound)
	}
	return o, nil
}

// TestOrder checks an order as placing it would, funds included, against
// the live book; nothing is placed.
func (e *Exchange) TestOrder(ctx context.Context, cred exgate.Credential, req exgate.TestOrderRequest) (exgate.Order, error) {
	if !cred.Paper {
		lo, err := ability[exgate.LimitOrders](e, "limit orders")
		if err != nil {
			return exgate.Order{}, err
		}
		return lo.TestOrder(ctx, cred, req)
	}
	var (
		o      exgate.Order
		change exgate.BalanceChange
	)
	switch {
	case req.Limit != nil:
		po, hold, _, err := e.prepareLimit(ctx, cred, *req.Limit)
		if err != nil {
			return exgate.Order{}, err
		}
		o = po
		change = exgate.BalanceChange{Asset: o.Asset2, Delta: hold.Neg()}
		if o.Side == exgate.SideSell {
			change.Asset = o.Asset1
		}
	case req.Market != nil:
		mo, _, need, err := e.marketOrder(ctx, cred, *req.Market)
		if err != nil {
			return exgate.Order{}, err
		}
		o = mo
		change = need
	default:
		return exgate.Order{}, exgate.ParamError("test", "nothing to test")
	}
	if err := e.checkFunds(ctx, cred, change); err != nil {
		return exgate.Order{}, err
	}
	o.Status, o.RawStatus = exgate.OrderTest, ""
	o.Fees, o.ExecutedQuantity, o.QuoteQuantity, o.AveragePrice = nil, nil, nil, nil
	return o, nil
}

// CancelOrder cancels a paper order's rest, after the fills recorded
// before it; a closed order is answered as it is.
func (e *Exchange) CancelOrder(ctx context.Context, cred exgate.Credential, req exgate.CancelRequest) (exgate.Order, error) {
	if !cred.Paper {
		lo, err := ability[exgate.LimitOrders](e, "limit orders")
		if err != nil {
			return exgate.Order{}, err
		}
		return lo.CancelOrder(ctx, cred, req)
	}
	for range 10 {
		c, err := e.readChain(ctx, cred, req.ClientOrderID)
		if err != nil {
			return exgate.Order{}, err
		}
		if (req.Symbol != exgate.Symbol{} && (req.Symbol.Base != c.placed.Asset1 || req.Symbol.Quote != c.placed.Asset2)) {
			return exgate.Order{}, fmt.Errorf("paper: order %s on %s: %w", req.ClientOrderID, req.Symbol, exgate.ErrNotFound)
		}
		if c.placed.Type != exgate.OrderTypeLimit {
			return c.placed, nil // a market order is final already
		}
		if c.closed() {
			return c.order(), nil
		}
		n := len(c.steps)
		c, err = e.record(ctx, cred, c, []step{{Kind: kindCancel, At: e.now().UnixMilli()}})
		if err != nil {
			return exgate.Order{}, err
		}
		if len(c.steps) > n && c.steps[len(c.steps)-1].Kind == kindCancel || c.closed() {
			o := c.order()
			e.notify(cred.ID, o)
			return o, nil
		}
		// Another instance recorded a step first: read again.
	}
	return exgate.Order{}, exgate.Errorf(exgate.CodeExchangeTimeout, "paper: order %s is being settled elsewhere", req.ClientOrderID)
}

// OpenOrders returns a paper key's resting orders, newest first.
func (e *Exchange) OpenOrders(ctx context.Context, cred exgate.Credential, f exgate.OrderFilter) ([]exgate.Order, error) {
	if !cred.Paper {
		oh, err := ability[exgate.OrderHistory](e, "order history")
		if err != nil {
			return nil, err
		}
		return oh.OpenOrders(ctx, cred, f)
	}
	ops, err := e.store.SimOpenOperations(ctx, cred.ID)
	if err != nil {
		return nil, &exgate.Error{Code: exgate.CodeExchangeError, Detail: "could not read the paper orders", Err: err}
	}
	out := []exgate.Order{}
	for _, op := range ops {
		o, err := e.orderNow(ctx, cred, op.ID)
		if err != nil {
			return nil, err
		}
		if !o.Status.Final() && matches(f.Symbol, o) {
			out = append(out, o)
		}
	}
	return out, nil
}

func matches(sym exgate.Symbol, o exgate.Order) bool {
	return sym == exgate.Symbol{} || (sym.Base == o.Asset1 && sym.Quote == o.Asset2)
}

func limitOf(n int) int {
	if n <= 0 {
		return exgate.DefaultRecentLimit
	}
	return min(n, exgate.MaxRecentLimit)
}

// RecentOrders returns a paper key's orders of a pair, newest first.
func (e *Exchange) RecentOrders(ctx context.Context, cred exgate.Credential, f exgate.OrderFilter) ([]exgate.Order, error) {
	if !cred.Paper {
		oh, err := ability[exgate.OrderHistory](e, "order history")
		if err != nil {
			return nil, err
		}
		return oh.RecentOrders(ctx, cred, f)
	}
	ops, err := e.store.SimOperations(ctx, cred.ID, exgate.IntentOrder, 0)
	if err != nil {
		return nil, &exgate.Error{Code: exgate.CodeExchangeError, Detail: "could not read the paper orders", Err: err}
	}
	limit := limitOf(f.Limit)
	out := []exgate.Order{}
	for _, op := range ops {
		if len(out) == limit {
			break
		}
		var o exgate.Order
		if err := json.Unmarshal(op.Record, &o); err != nil {
			return nil, fmt.Errorf("paper: order %s: %w", op.ID, err)
		}
		if !o.Paper || !matches(f.Symbol, o) {
			continue // a sim order of this ledger: never on a paper key
		}
		if o.Type == exgate.OrderTypeLimit {
			if o, err = e.orderNow(ctx, cred, op.ID); err != nil {
				return nil, err
			}
		}
		out = append(out, o)
	}
	return out, nil
}

// Fills returns a paper key's fills of a pair, newest first: the steps of
// limit orders, and one fill per market order at its average price.
func (e *Exchange) Fills(ctx context.Context, cred exgate.Credential, f exgate.OrderFilter) ([]exgate.Fill, error) {
	if !cred.Paper {
		oh, err := ability[exgate.OrderHistory](e, "order history")
		if err != nil {
			return nil, err
		}
		return oh.Fills(ctx, cred, f)
	}
	out := []exgate.Fill{}
	steps, err := e.store.SimOperations(ctx, cred.ID, kindFill, 0)
	if err != nil {
		return nil, &exgate.Error{Code: exgate.CodeExchangeError, Detail: "could not read the paper fills", Err: err}
	}
	for _, op := range steps {
		var st step
		if err := json.Unmarshal(op.Record, &st); err != nil || st.Fill == nil {
			return nil, fmt.Errorf("paper: fill %s: %v", op.ID, err)
		}
		if st.Fill.Asset1 == f.Symbol.Base && st.Fill.Asset2 == f.Symbol.Quote {
			out = append(out, *st.Fill)
		}
	}
	orders, err := e.store.SimOperations(ctx, cred.ID, exgate.IntentOrder, 0)
	if err != nil {
		return nil, &exgate.Error{Code: exgate.CodeExchangeError, Detail: "could not read the paper orders", Err: err}
	}
	for _, op := range orders {
		var o exgate.Order
		if err := json.Unmarshal(op.Record, &o); err != nil {
			return nil, fmt.Errorf("paper: order %s: %w", op.ID, err)
		}
		if o.Type != exgate.OrderTypeMarket || !matches(f.Symbol, o) || o.ExecutedQuantity == nil || !o.ExecutedQuantity.IsPositive() {
			continue
		}
		out = append(out, exgate.Fill{
			ID: o.ID + ".1", OrderID: o.ID, Asset1: o.Asset1, Asset2: o.Asset2, Side: o.Side,
			Price: *o.AveragePrice, Quantity: *o.ExecutedQuantity, QuoteQuantity: *o.QuoteQuantity,
			Fee: *o.Fees, FeeIn: o.FeesIn, Timestamp: o.CloseAt, ClientOrderID: o.ClientOrderID, Paper: true,
		})
	}
	slices.SortStableFunc(out, func(a, b exgate.Fill) int {
		return cmp.Or(cmp.Compare(b.Timestamp, a.Timestamp), strings.Compare(b.ID, a.ID))
	})
	return out[:min(len(out), limitOf(f.Limit))], nil
}
