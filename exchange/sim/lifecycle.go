package sim

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// The matching model of limit orders (docs/contract.md section 3). A limit order
// is a pure function of its parameters, its placement second t0 and the
// seeded price path, so every instance computes the same fills:
//
//   - At t0 it takes liquidity: it walks the opposite side of the book of
//     t0, level by level, while the level's price is at or better than
//     its limit, filling at each level's price (taker fills). A postOnly
//     order that would take anything is refused (ORDER_REJECTED). FOK
//     fills only if the walk fills it completely, else it EXPIRES with
//     nothing; IOC EXPIRES with whatever the walk left.
//   - A GTC remainder rests. At every later second s whose book crosses
//     its limit (best ask at or below a buy's limit, best bid at or above a
//     sell's), it fills at its own limit price (maker fills) as much as the
//     crossing levels of the book of s hold; so an order larger than the
//     book's depth at that moment fills partially and rests on.
//   - Funds are held while the order rests: a buy holds quantity * price
//     of the quote asset, a sell its quantity of the base asset. A fill
//     moves the balances (fee rate takerFee, in the asset received, for
//     maker and taker alike) and releases what a buy saved by filling
//     below its limit; a cancel releases the rest.
//
// In the ledger an order is a chain of operations under its client id
// cid: "cid" places it (Open, holding the funds), and "cid.1", "cid.2"...
// are its fills and its end (cancel or expiry), the last of them closing
// "cid". Whoever reads an order first applies the steps that have come due
// ("settles" it); two instances racing on a step collide on its id, and
// the loser reads the chain again. So a cancel can never overtake a fill
// another instance recorded first: it becomes the next step after it.

// Operation kinds of the order chain.
const (
	kindFill   exgate.IntentKind = "fill"
	kindCancel exgate.IntentKind = "cancel"
	kindExpire exgate.IntentKind = "expire"
)

// Raw statuses of limit orders, after Binance's.
const (
	rawOrderNew             = "NEW"
	rawOrderPartiallyFilled = "PARTIALLY_FILLED"
	rawOrderCanceled        = "CANCELED"
	rawOrderRejected        = "REJECTED"
)

// crossMarginPPM widens the bounds of a minute's prices in mayCross
// beyond the rounding of the price noise's octaves.
const crossMarginPPM = 200

// maxRestingLevels bounds how many levels of one second's book a resting
// order can fill against.
const maxRestingLevels = 1000

// step is the record of one operation of an order chain after the
// placement.
type step struct {
	Kind exgate.IntentKind `json:"kind"`
	// Fill is set for a fill.
	Fill *exgate.Fill `json:"fill,omitempty"`
	// At is when the step happened, Unix ms.
	At int64 `json:"at"`
}

// limitOrder is an order chain read from the ledger.
type limitOrder struct {
	placed exgate.Order
	steps  []step
}

// scanKey names a resting order in Exchange.scanned; scanMark says that
// the seconds from `from` (the first second after the order's last
// recorded step) to upTo hold no fill of it.
type scanKey struct {
	cred int64
	cid  string
}

type scanMark struct{ from, upTo int64 }

// event is a fill the model computes: base quantity at price (ticks).
type event struct {
	sec   int64
	price int64
	qty   int64 // in steps
	maker bool
}

var _ exgate.OrderManager = (*Exchange)(nil)

// Symbols lists the sim's markets.
func (e *Exchange) Symbols(ctx context.Context, cred exgate.Credential, f exgate.SymbolFilter) ([]exgate.SymbolInfo, error) {
	out := []exgate.SymbolInfo{}
	for _, m := range marketTable {
		sym := exgate.Symbol{Base: m.Base, Quote: m.Quote}
		if (f.Symbol != exgate.Symbol{} && f.Symbol != sym) {
			continue
		}
		p := e.markets[sym]
		out = append(out, exgate.SymbolInfo{
			Asset1: m.Base, Asset2: m.Quote, Status: exgate.SymbolTrading,
			QuantityStep: p.step.String(), PriceStep: p.tick.String(),
			MinQuantity: p.minQty.String(), MinNotional: p.minNotional.String(),
			OrderTypes: []string{exgate.OrderTypeMarket, exgate.OrderTypeLimit},
		})
	}
	exgate.SortSymbols(out)
	return out, nil
}

// checkLimit validates a limit order against its market: the price on
// the tick, the quantity rounded down to the step and above the minimums.
// It returns the rounded quantity and the price, in steps and ticks.
func (e *Exchange) checkLimit(p *pairInfo, req exgate.LimitOrderRequest) (qty, price int64, err error) {
	if err := req.Validate(); err != nil {
		return 0, 0, err
	}
	if err := exgate.CheckPrice(req.Price, p.tick); err != nil {
		return 0, 0, err
	}
	q := req.Quantity.RoundDown(p.StepExp)
	if q.LessThan(p.minQty) {
		return 0, 0, exgate.Errorf(exgate.CodeQuantityTooSmall,
			"quantity %s %s is below the minimum %s %s of %s (step %s, rounded down to %s)",
			req.Quantity, p.Base, p.minQty, p.Base, p.sym, p.step, q)
	}
	if n := q.Mul(req.Price); n.LessThan(p.minNotional) {
		return 0, 0, exgate.Errorf(exgate.CodeQuantityTooSmall,
			"%s %s at %s is worth %s %s, below the minimum notional %s %s of %s",
			q, p.Base, req.Price, n, p.Quote, p.minNotional, p.Quote, p.sym)
	}
	// The book counts in whole steps and ticks, at most 10^15 of each:
	// the parameter past that is named with the largest value it takes.
	limit := decimal.New(1, 15)
	if !req.Price.Shift(p.TickExp).IsInteger() || req.Price.Shift(p.TickExp).GreaterThan(limit) {
		return 0, 0, exgate.ParamError("price", "price %s is out of range: %s takes at most %s %s",
			req.Price, p.sym, limit.Shift(-p.TickExp), p.Quote)
	}
	if !q.Shift(p.StepExp).IsInteger() || q.Shift(p.StepExp).GreaterThan(limit) {
		return 0, 0, exgate.ParamError("quantity", "quantity %s is out of range: %s takes at most %s %s",
			req.Quantity, p.sym, limit.Shift(-p.StepExp), p.Base)
	}
	return q.Shift(p.StepExp).IntPart(), req.Price.Shift(p.TickExp).IntPart(), nil
}

// crosses reports whether a level at lvl ticks trades with an order of
// side at limit ticks.
func crosses(side exgate.Side, lvl, limit int64) bool {
	if side == exgate.SideBuy {
		return lvl <= limit
	}
	return lvl >= limit
}

// takerEvents is what an order takes from the book of its placement
// second: the levels at or better than its limit, up to its quantity.
func (e *Exchange) takerEvents(p *pairInfo, side exgate.Side, qty, limit, t0 int64) (evs []event, left int64) {
	bids, asks := e.book(p, t0)
	w := asks
	if side == exgate.SideSell {
		w = bids
	}
	left = qty
	for range maxFillLevels {
		if left == 0 {
			break
		}
		price, q, ok := w.next()
		if !ok || !crosses(side, price, limit) {
			break
		}
		take := min(q, left)
		evs = append(evs, event{sec: t0, price: price, qty: take})
		left -= take
	}
	return evs, left
}

// makerEvents are the fills of a resting order of side at limit ticks with
// left steps to fill, at the seconds from `from` to `to` inclusive.
func (e *Exchange) makerEvents(p *pairInfo, side exgate.Side, left, limit, from, to int64) []event {
	var evs []event
	for s := from; s <= to && left > 0; s++ {
		if s%60 == 0 || s == from {
			// Skip to the next minute when no second of this one can
			// cross: each asset's price is monotone within a minute
			// (prices.go), which bounds the pair's.
			end := min(s-s%60+59, to)
			if !e.mayCross(p, side, limit, s, end) {
				s = end
				continue
			}
		}
		bids, asks := e.book(p, s)
		w := asks
		if side == exgate.SideSell {
			w = bids
		}
		depth := int64(0)
		for range maxRestingLevels {
			price, q, ok := w.next()
			if !ok || !crosses(side, price, limit) || depth >= left {
				break
			}
			depth += q
		}
		if depth == 0 {
			continue
		}
		take := min(depth, left)
		evs = append(evs, event{sec: s, price: limit, qty: take, maker: true})
		left -= take
	}
	return evs
}

// mayCross reports whether the book of any second from a to b, within
// one minute, may cross a resting order of side at limit ticks. Every
// asset's price noise is linear within a minute (up to the rounding of its
// octaves, a few ppm: the bounds are widened by crossMarginPPM), so the
// pair's mid lies between bounds made of its assets' prices at a and b;
// a best ask (bid) is monotone in the mid.
func (e *Exchange) mayCross(p *pairInfo, side exgate.Side, limit, a, b int64) bool {
	ba, bb := e.noise[p.Base].priceE8(a), e.noise[p.Base].priceE8(b)
	qa, qb := e.noise[p.Quote].priceE8(a), e.noise[p.Quote].priceE8(b)
	half := func(mid int64) int64 { return max(1, mid*spreadPPM/(2*ppm)) }
	if side == exgate.SideBuy {
		lo := mulDiv(min(ba, bb), pow10(p.TickExp), max(qa, qb))
		lo = max(1, lo-mulDiv(lo, crossMarginPPM, ppm)-1)
		return lo+half(lo) <= limit
	}
	hi := mulDiv(max(ba, bb), pow10(p.TickExp), min(qa, qb))
	hi += mulDiv(hi, crossMarginPPM, ppm) + 1
	return hi-half(hi) >= limit
}

// PlaceLimitOrder places a limit order under req.ClientOrderID: it holds
// the funds, takes what crosses at once and rests (GTC) or expires (IOC,
// FOK) with the rest.
func (e *Exchange) PlaceLimitOrder(ctx context.Context, cred exgate.Credential, req exgate.LimitOrderRequest) (exgate.Order, error) {
	if req.ClientOrderID == "" {
		return exgate.Order{}, exgate.ParamError("clientOrderId", "sim needs a client order id")
	}
	o, hold, err := e.prepareLimit(req)
	if err != nil {
		return exgate.Order{}, err
	}
	o.ExchangeOrderID = e.exchangeID(cred, req.ClientOrderID)
	p := e.markets[req.Symbol]
	record, err := json.Marshal(o)
	if err != nil {
		return exgate.Order{}, fmt.Errorf("sim: encode order %s: %w", req.ClientOrderID, err)
	}
	payAsset := p.Quote
	if req.Side == exgate.SideSell {
		payAsset = p.Base
	}
	op := exgate.SimOperation{
		ID: req.ClientOrderID, Kind: exgate.IntentOrder, Open: true,
		Changes:   []exgate.BalanceChange{{Asset: payAsset, Delta: hold.Neg()}},
		Record:    record,
		CreatedAt: e.now(),
	}
	err = e.withAccount(ctx, cred, func() error {
		if err := e.checkFunds(ctx, cred, payAsset, hold, "the order"); err != nil {
			return err
		}
		return e.ledger.ApplySimOperation(ctx, cred.ID, op)
	})
	if err != nil {
		return exgate.Order{}, e.applyError("order", req.ClientOrderID, err)
	}
	lo, err := e.settle(ctx, cred, req.ClientOrderID, nil)
	if err != nil {
		// The order is placed; its first steps are applied by the next
		// reader.
		e.notices.notify(cred.ID, o)
		return o, nil
	}
	o = lo.order(p)
	e.notices.notify(cred.ID, o)
	return o, nil
}

// prepareLimit checks a limit order and returns it as placed (PENDING,
// nothing executed) with the amount it holds. A postOnly order that would
// trade is ORDER_REJECTED.
func (e *Exchange) prepareLimit(req exgate.LimitOrderRequest) (exgate.Order, decimal.Decimal, error) {
	p, err := e.market(req.Symbol)
	if err != nil {
		return exgate.Order{}, decimal.Decimal{}, err
	}
	qty, limit, err := e.checkLimit(p, req)
	if err != nil {
		return exgate.Order{}, decimal.Decimal{}, err
	}
	now := e.now()
	if req.PostOnly {
		if evs, _ := e.takerEvents(p, req.Side, qty, limit, floorDiv(now.UnixMilli(), 1000)); len(evs) > 0 {
			return exgate.Order{}, decimal.Decimal{}, exgate.Errorf(exgate.CodeOrderRejected,
				"the postOnly order would trade at once: %s %s at %s crosses the book",
				req.Side, p.sym, req.Price)
		}
	}
	q := decimal.New(qty, -p.StepExp)
	hold := q
	if req.Side == exgate.SideBuy {
		hold = q.Mul(req.Price)
	}
	feesIn := p.Base
	if req.Side == exgate.SideSell {
		feesIn = p.Quote
	}
	zero := decimal.Zero
	o := exgate.Order{
		ID: req.ClientOrderID, Asset1: p.Base, Asset2: p.Quote, Status: exgate.OrderPending,
		Type: exgate.OrderTypeLimit, Side: req.Side, Quantity: exgate.NewNumber(q), QuantityIn: p.Base,
		Fees: exgate.NumberPtr(zero), FeesIn: feesIn, OpenAt: now.UnixMilli(), CloseAt: now.UnixMilli(),
		Exchange: Name, ClientOrderID: req.ClientOrderID,
		ExecutedQuantity: exgate.NumberPtr(zero), QuoteQuantity: exgate.NumberPtr(zero),
		RawStatus: rawOrderNew, Price: exgate.NumberPtr(req.Price), TimeInForce: req.TimeInForce,
		PostOnly: req.PostOnly,
	}
	return o, hold, nil
}

// TestOrder checks an order as PlaceMarketOrder or PlaceLimitOrder would,
// funds included, and returns it with status TEST. Nothing is placed.
func (e *Exchange) TestOrder(ctx context.Context, cred exgate.Credential, req exgate.TestOrderRequest) (exgate.Order, error) {
	switch {
	case req.Limit != nil:
		o, hold, err := e.prepareLimit(*req.Limit)
		if err != nil {
			return exgate.Order{}, err
		}
		pay := o.Asset2
		if o.Side == exgate.SideSell {
			pay = o.Asset1
		}
		if err := e.withAccount(ctx, cred, func() error { return e.checkFunds(ctx, cred, pay, hold, "the order") }); err != nil {
			return exgate.Order{}, e.applyError("order", o.ID, err)
		}
		o.Status, o.RawStatus, o.Fees = exgate.OrderTest, "", nil
		return o, nil
	case req.Market != nil:
		r := *req.Market
		p, err := e.market(r.Symbol)
		if err != nil {
			return exgate.Order{}, err
		}
		if !r.Quantity.IsPositive() {
			return exgate.Order{}, exgate.ParamError("quantity", "quantity must be positive, not %s", r.Quantity)
		}
		now := e.now()
		f := e.walk(p, r, floorDiv(now.UnixMilli(), 1000))
		if err := tooSmall(p, r, f); err != nil {
			return exgate.Order{}, err
		}
		pay, need := p.Quote, f.quote
		if r.Side == exgate.SideSell {
			pay, need = p.Base, f.base
		}
		if err := e.withAccount(ctx, cred, func() error { return e.checkFunds(ctx, cred, pay, need, marketWhat(p, r, f)) }); err != nil {
			return exgate.Order{}, e.applyError("order", r.ClientOrderID, err)
		}
		return exgate.Order{
			ID: r.ClientOrderID, Asset1: p.Base, Asset2: p.Quote, Status: exgate.OrderTest,
			Type: exgate.OrderTypeMarket, Side: r.Side, Quantity: exgate.NewNumber(f.quantity),
			QuantityIn: r.QuantityIn.Asset(p.sym), OpenAt: now.UnixMilli(), CloseAt: now.UnixMilli(),
			Exchange: Name, ClientOrderID: r.ClientOrderID,
		}, nil
	}
	return exgate.Order{}, exgate.ParamError("test", "nothing to test")
}

// readChain reads an order's placement and its steps.
func (e *Exchange) readChain(ctx context.Context, cred exgate.Credential, cid string) (limitOrder, error) {
	var lo limitOrder
	if err := e.readRecord(ctx, cred, cid, exgate.IntentOrder, &lo.placed); err != nil {
		return lo, err
	}
	if lo.placed.Type != exgate.OrderTypeLimit {
		return lo, nil
	}
	for n := 1; ; n++ {
		op, err := e.ledger.SimOperation(ctx, cred.ID, stepID(cid, n))
		if errors.Is(err, exgate.ErrNotFound) {
			return lo, nil
		}
		if err != nil {
			return lo, fmt.Errorf("sim: order %s step %d: %w", cid, n, err)
		}
		var st step
		if err := json.Unmarshal(op.Record, &st); err != nil {
			return lo, fmt.Errorf("sim: order %s step %d: %w", cid, n, err)
		}
		lo.steps = append(lo.steps, st)
	}
}

func stepID(cid string, n int) string { return cid + "." + strconv.Itoa(n) }

// closed reports whether the chain has ended.
func (lo limitOrder) closed() bool {
	if len(lo.steps) == 0 {
		return false
	}
	last := lo.steps[len(lo.steps)-1]
	return last.Kind != kindFill || lo.executed().Equal(lo.placed.Quantity.Decimal)
}

func (lo limitOrder) executed() decimal.Decimal {
	sum := decimal.Zero
	for _, st := range lo.steps {
		if st.Fill != nil {
			sum = sum.Add(st.Fill.Quantity.Decimal)
		}
	}
	return sum
}

// order is the chain as an Order.
func (lo limitOrder) order(p *pairInfo) exgate.Order {
	o := lo.placed
	base, quote, fees := decimal.Zero, decimal.Zero, decimal.Zero
	for _, st := range lo.steps {
		if st.Fill != nil {
			base = base.Add(st.Fill.Quantity.Decimal)
			quote = quote.Add(st.Fill.QuoteQuantity.Decimal)
			fees = fees.Add(st.Fill.Fee.Decimal)
		}
	}
	o.ExecutedQuantity, o.QuoteQuantity, o.Fees = exgate.NumberPtr(base), exgate.NumberPtr(quote), exgate.NumberPtr(fees)
	if base.IsPositive() {
		o.AveragePrice = exgate.AveragePrice(quote, base)
		o.Status, o.RawStatus = exgate.OrderPartiallyFilled, rawOrderPartiallyFilled
	}
	if len(lo.steps) > 0 && lo.closed() {
		last := lo.steps[len(lo.steps)-1]
		o.CloseAt = last.At
		switch last.Kind {
		case kindFill:
			o.Status, o.RawStatus = exgate.OrderFilled, rawOrderFilled
		case kindCancel:
			o.Status, o.RawStatus = exgate.OrderCanceled, rawOrderCanceled
		case kindExpire:
			o.Status, o.RawStatus = exgate.OrderExpired, rawOrderExpired
		}
	}
	return o
}

// settle applies the steps of an open order that have come due by now,
// and then the step end (cancel) when it is not nil. It returns the chain
// as it is after.
func (e *Exchange) settle(ctx context.Context, cred exgate.Credential, cid string, end *step) (limitOrder, error) {
	for attempt := 0; ; attempt++ {
		lo, err := e.readChain(ctx, cred, cid)
		if err != nil || lo.placed.Type != exgate.OrderTypeLimit {
			return lo, err
		}
		if lo.closed() {
			e.scanned.Delete(scanKey{cred.ID, cid})
			return lo, nil
		}
		due, err := e.due(cred, lo, e.now())
		if err != nil {
			return lo, err
		}
		if end != nil && (len(due) == 0 || !lo.closedBy(due)) {
			due = append(due, *end)
		}
		conflict := false
		for _, st := range due {
			n := len(lo.steps) + 1
			op, err := e.stepOperation(lo, cid, n, st)
			if err != nil {
				return lo, err
			}
			err = e.ledger.ApplySimOperation(ctx, cred.ID, op)
			if errors.Is(err, exgate.ErrConflict) {
				conflict = true // another instance applied step n first
				break
			}
			if err != nil {
				return lo, e.applyError("order", cid, err)
			}
			lo.steps = append(lo.steps, st)
		}
		if !conflict {
			return lo, nil
		}
		if attempt >= 10 {
			return lo, exgate.Errorf(exgate.CodeExchangeTimeout, "sim: order %s is being settled elsewhere", cid)
		}
	}
}

// closedBy reports whether the order ends with the due steps.
func (lo limitOrder) closedBy(due []step) bool {
	next := lo
	next.steps = append(slices.Clone(lo.steps), due...)
	return next.closed()
}

// due computes the steps of an open order after its recorded ones, up to
// now. The order's whole history is a pure function of the order and the
// price path, and the recorded steps are a prefix of it: the taker fills
// of its placement second, then for IOC and FOK the expiry, for GTC the
// maker fills of the seconds after.
func (e *Exchange) due(cred exgate.Credential, lo limitOrder, now time.Time) ([]step, error) {
	o := lo.placed
	p, err := e.market(exgate.Symbol{Base: o.Asset1, Quote: o.Asset2})
	if err != nil {
		return nil, err
	}
	qty := o.Quantity.Shift(p.StepExp).IntPart()
	limit := o.Price.Shift(p.TickExp).IntPart()
	t0 := floorDiv(o.OpenAt, 1000)
	taker, left := e.takerEvents(p, o.Side, qty, limit, t0)
	if o.TimeInForce == exgate.FOK && left > 0 {
		taker, left = nil, qty
	}
	recorded := len(lo.steps)
	var evs []event
	if recorded < len(taker) {
		evs = taker[recorded:]
	}
	if o.TimeInForce == exgate.GTC {
		from, remaining := t0+1, left
		if recorded > len(taker) {
			from = floorDiv(lo.steps[recorded-1].At, 1000) + 1
			remaining = qty - lo.executed().Shift(p.StepExp).IntPart()
		}
		// Seconds this instance already found quiet since the same last
		// step need no second look: the history is a pure function.
		key, nowSec, scanFrom := scanKey{cred.ID, o.ID}, floorDiv(now.UnixMilli(), 1000), from
		if v, ok := e.scanned.Load(key); ok && v.(scanMark).from == from {
			scanFrom = max(from, v.(scanMark).upTo+1)
		}
		maker := e.makerEvents(p, o.Side, remaining, limit, scanFrom, nowSec)
		if len(maker) == 0 {
			e.scanned.Store(key, scanMark{from: from, upTo: nowSec})
		} else {
			e.scanned.Delete(key)
		}
		evs = append(evs, maker...)
	}
	out := make([]step, 0, len(evs)+1)
	for _, ev := range evs {
		out = append(out, e.fillStep(p, o, ev, recorded+len(out)+1))
	}
	if o.TimeInForce != exgate.GTC && !lo.closedBy(out) {
		out = append(out, step{Kind: kindExpire, At: o.OpenAt})
	}
	return out, nil
}

// fillStep is the step of one fill event, numbered n in its chain.
func (e *Exchange) fillStep(p *pairInfo, o exgate.Order, ev event, n int) step {
	q := decimal.New(ev.qty, -p.StepExp)
	price := decimal.New(ev.price, -p.TickExp)
	quote := q.Mul(price)
	fee := q.Mul(takerFee)
	if o.Side == exgate.SideSell {
		fee = quote.Mul(takerFee)
	}
	at := ev.sec * 1000
	if !ev.maker {
		at = o.OpenAt
	}
	return step{Kind: kindFill, At: at, Fill: &exgate.Fill{
		ID: stepID(o.ID, n), OrderID: o.ID, Asset1: o.Asset1, Asset2: o.Asset2, Side: o.Side,
		Price: exgate.NewNumber(price), Quantity: exgate.NewNumber(q), QuoteQuantity: exgate.NewNumber(quote),
		Fee: exgate.NewNumber(fee), FeeIn: o.FeesIn, Maker: ev.maker, Timestamp: at, ClientOrderID: o.ID,
	}}
}

// stepOperation is the ledger operation of step n of an order's chain.
func (e *Exchange) stepOperation(lo limitOrder, cid string, n int, st step) (exgate.SimOperation, error) {
	o := lo.placed
	limit := o.Price.Decimal
	op := exgate.SimOperation{ID: stepID(cid, n), Kind: st.Kind, CreatedAt: e.now()}
	switch st.Kind {
	case kindFill:
		f := st.Fill
		if o.Side == exgate.SideBuy {
			op.Changes = []exgate.BalanceChange{
				{Asset: o.Asset1, Delta: f.Quantity.Sub(f.Fee.Decimal)},
				// The hold was at the limit price; a fill below it
				// releases the difference.
				{Asset: o.Asset2, Delta: limit.Sub(f.Price.Decimal).Mul(f.Quantity.Decimal)},
			}
		} else {
			op.Changes = []exgate.BalanceChange{{Asset: o.Asset2, Delta: f.QuoteQuantity.Sub(f.Fee.Decimal)}}
		}
		next := limitOrder{placed: o, steps: append(slices.Clone(lo.steps), st)}
		if next.closed() {
			op.Closes = cid
		}
	default:
		left := o.Quantity.Sub(lo.executed())
		release, asset := left, o.Asset1
		if o.Side == exgate.SideBuy {
			release, asset = left.Mul(limit), o.Asset2
		}
		op.Changes = []exgate.BalanceChange{{Asset: asset, Delta: release}}
		op.Closes = cid
	}
	rec, err := json.Marshal(st)
	if err != nil {
		return op, fmt.Errorf("sim: encode step %s: %w", op.ID, err)
	}
	op.Record = rec
	return op, nil
}

// limitOrderNow reads an order and settles it if it is a limit order.
func (e *Exchange) limitOrderNow(ctx context.Context, cred exgate.Credential, cid string) (exgate.Order, error) {
	lo, err := e.settle(ctx, cred, cid, nil)
	if err != nil {
		return exgate.Order{}, err
	}
	if lo.placed.Type != exgate.OrderTypeLimit {
		return lo.placed, nil
	}
	p, err := e.market(exgate.Symbol{Base: lo.placed.Asset1, Quote: lo.placed.Asset2})
	if err != nil {
		return exgate.Order{}, err
	}
	return lo.order(p), nil
}

// CancelOrder cancels an open limit order by client id, after the fills
// that came before it. A closed order is answered as it is.
func (e *Exchange) CancelOrder(ctx context.Context, cred exgate.Credential, req exgate.CancelRequest) (exgate.Order, error) {
	if req.ClientOrderID == "" {
		return exgate.Order{}, fmt.Errorf("sim: cancel without a client order id: %w", exgate.ErrNotFound)
	}
	var lo limitOrder
	err := e.withAccount(ctx, cred, func() error {
		var err error
		lo, err = e.settle(ctx, cred, req.ClientOrderID, &step{Kind: kindCancel, At: e.now().UnixMilli()})
		return err
	})
	if err != nil {
		return exgate.Order{}, err
	}
	if (req.Symbol != exgate.Symbol{} && (req.Symbol.Base != lo.placed.Asset1 || req.Symbol.Quote != lo.placed.Asset2)) {
		return exgate.Order{}, fmt.Errorf("sim: order %s on %s: %w", req.ClientOrderID, req.Symbol, exgate.ErrNotFound)
	}
	if lo.placed.Type != exgate.OrderTypeLimit {
		return lo.placed, nil // a market order is final already
	}
	p, _ := e.market(exgate.Symbol{Base: lo.placed.Asset1, Quote: lo.placed.Asset2})
	o := lo.order(p)
	e.notices.notify(cred.ID, o)
	return o, nil
}

// OpenOrders settles and returns the open limit orders, newest first.
func (e *Exchange) OpenOrders(ctx context.Context, cred exgate.Credential, f exgate.OrderFilter) ([]exgate.Order, error) {
	ops, err := e.ledger.SimOpenOperations(ctx, cred.ID)
	if err != nil {
		return nil, &exgate.Error{Code: exgate.CodeExchangeError, Detail: "sim could not read the open orders", Err: err}
	}
	out := []exgate.Order{}
	for _, op := range ops {
		o, err := e.limitOrderNow(ctx, cred, op.ID)
		if err != nil {
			return nil, err
		}
		if o.Status.Final() || !matches(f.Symbol, o) {
			continue
		}
		out = append(out, o)
	}
	return out, nil
}

func matches(sym exgate.Symbol, o exgate.Order) bool {
	return sym == exgate.Symbol{} || (sym.Base == o.Asset1 && sym.Quote == o.Asset2)
}

// RecentOrders returns the orders of a pair, market and limit, newest
// first.
func (e *Exchange) RecentOrders(ctx context.Context, cred exgate.Credential, f exgate.OrderFilter) ([]exgate.Order, error) {
	if _, err := e.market(f.Symbol); err != nil {
		return nil, err
	}
	limit := limitOf(f.Limit)
	ops, err := e.ledger.SimOperations(ctx, cred.ID, exgate.IntentOrder, 0)
	if err != nil {
		return nil, &exgate.Error{Code: exgate.CodeExchangeError, Detail: "sim could not read the orders", Err: err}
	}
	out := []exgate.Order{}
	for _, op := range ops {
		if len(out) == limit {
			break
		}
		var o exgate.Order
		if err := json.Unmarshal(op.Record, &o); err != nil {
			return nil, fmt.Errorf("sim: order %s: %w", op.ID, err)
		}
		if !matches(f.Symbol, o) {
			continue
		}
		if o.Type == exgate.OrderTypeLimit {
			if o, err = e.limitOrderNow(ctx, cred, op.ID); err != nil {
				return nil, err
			}
		}
		out = append(out, o)
	}
	return out, nil
}

func limitOf(n int) int {
	if n <= 0 {
		return exgate.DefaultRecentLimit
	}
	return min(n, exgate.MaxRecentLimit)
}

// Fills returns the fills of a pair, newest first: the steps of limit
// orders and one fill per market order at its average price.
func (e *Exchange) Fills(ctx context.Context, cred exgate.Credential, f exgate.OrderFilter) ([]exgate.Fill, error) {
	if _, err := e.market(f.Symbol); err != nil {
		return nil, err
	}
	// Settle the open orders first, so their fills are recorded.
	if _, err := e.OpenOrders(ctx, cred, exgate.OrderFilter{Symbol: f.Symbol}); err != nil {
		return nil, err
	}
	limit := limitOf(f.Limit)
	out := []exgate.Fill{}
	fills, err := e.ledger.SimOperations(ctx, cred.ID, kindFill, 0)
	if err != nil {
		return nil, &exgate.Error{Code: exgate.CodeExchangeError, Detail: "sim could not read the fills", Err: err}
	}
	for _, op := range fills {
		var st step
		if err := json.Unmarshal(op.Record, &st); err != nil || st.Fill == nil {
			return nil, fmt.Errorf("sim: fill %s: %v", op.ID, err)
		}
		if st.Fill.Asset1 == f.Symbol.Base && st.Fill.Asset2 == f.Symbol.Quote {
			out = append(out, *st.Fill)
		}
	}
	orders, err := e.ledger.SimOperations(ctx, cred.ID, exgate.IntentOrder, 0)
	if err != nil {
		return nil, &exgate.Error{Code: exgate.CodeExchangeError, Detail: "sim could not read the orders", Err: err}
	}
	for _, op := range orders {
		var o exgate.Order
		if err := json.Unmarshal(op.Record, &o); err != nil {
			return nil, fmt.Errorf("sim: order %s: %w", op.ID, err)
		}
		if o.Type != exgate.OrderTypeMarket || !matches(f.Symbol, o) || o.ExecutedQuantity == nil || !o.ExecutedQuantity.IsPositive() {
			continue
		}
		out = append(out, exgate.Fill{
			ID: o.ID + ".1", OrderID: o.ID, Asset1: o.Asset1, Asset2: o.Asset2, Side: o.Side,
			Price: *o.AveragePrice, Quantity: *o.ExecutedQuantity, QuoteQuantity: *o.QuoteQuantity,
			Fee: *o.Fees, FeeIn: o.FeesIn, Timestamp: o.CloseAt, ClientOrderID: o.ClientOrderID,
		})
	}
	slices.SortStableFunc(out, func(a, b exgate.Fill) int {
		if c := cmp.Compare(b.Timestamp, a.Timestamp); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// RecentWithdrawals returns the withdrawals made on the sim, newest
// first.
func (e *Exchange) RecentWithdrawals(ctx context.Context, cred exgate.Credential, f exgate.WithdrawalFilter) ([]exgate.Withdrawal, error) {
	ops, err := e.ledger.SimOperations(ctx, cred.ID, exgate.IntentWithdrawal, 0)
	if err != nil {
		return nil, &exgate.Error{Code: exgate.CodeExchangeError, Detail: "sim could not read the withdrawals", Err: err}
	}
	out := []exgate.Withdrawal{}
	for _, op := range ops {
		var w exgate.Withdrawal
		if err := json.Unmarshal(op.Record, &w); err != nil {
			return nil, fmt.Errorf("sim: withdrawal %s: %w", op.ID, err)
		}
		if (f.Asset != "" && w.Asset != f.Asset) || (f.Status != "" && w.Status != f.Status) {
			continue
		}
		out = append(out, w)
	}
	return out, nil
}

// locked sums what the open orders hold, by asset.
func (e *Exchange) locked(ctx context.Context, cred exgate.Credential) (map[string]decimal.Decimal, error) {
	ops, err := e.ledger.SimOpenOperations(ctx, cred.ID)
	if err != nil {
		return nil, err
	}
	out := map[string]decimal.Decimal{}
	for _, op := range ops {
		lo, err := e.readChain(ctx, cred, op.ID)
		if err != nil {
			return nil, err
		}
		o := lo.placed
		left := o.Quantity.Sub(lo.executed())
		if o.Side == exgate.SideBuy {
			out[o.Asset2] = out[o.Asset2].Add(left.Mul(o.Price.Decimal))
		} else {
			out[o.Asset1] = out[o.Asset1].Add(left)
		}
	}
	return out, nil
}
