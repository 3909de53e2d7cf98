package paper

import (
	"context"
	"errors"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// minMakerGap is the least time between two maker fills of one resting
// order: a resting order takes at most one fill a second, of at most the
// depth that crosses it at that moment, so that the same live liquidity,
// seen again by the next check or by another instance's watcher, is not
// filled twice within a second (docs/paper.md).
const minMakerGap = 900 // ms

// Run checks the resting orders of this exchange's paper keys against the
// live book every CheckInterval until ctx ends (docs/contract.md 2.9).
// Every instance runs it; two instances filling one order collide on the
// step's id in the ledger, and the loser reads the order again.
func (e *Exchange) Run(ctx context.Context) error {
	ticks, stop := e.tick(CheckInterval)
	defer stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticks:
			if err := e.CheckResting(ctx); err != nil && ctx.Err() == nil {
				e.log.Warn("paper: checking resting orders", "exchange", e.live.Name(), "err", err)
			}
		}
	}
}

// CheckResting checks every resting paper order of this exchange once
// against the live book, reading each pair's book once.
func (e *Exchange) CheckResting(ctx context.Context) error {
	creds, err := e.store.PaperCredentialsResting(ctx, e.live.Name())
	if err != nil {
		return err
	}
	books := map[exgate.Symbol]exgate.OrderBook{}
	var errs []error
	for _, cred := range creds {
		if err := e.checkCredential(ctx, cred, books); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// checkCredential checks the resting orders of one paper key.
func (e *Exchange) checkCredential(ctx context.Context, cred exgate.Credential, books map[exgate.Symbol]exgate.OrderBook) error {
	ops, err := e.store.SimOpenOperations(ctx, cred.ID)
	if err != nil {
		return err
	}
	for _, op := range ops {
		c, err := e.readChain(ctx, cred, op.ID)
		if err != nil {
			return err
		}
		if c.placed.Type != exgate.OrderTypeLimit || c.closed() {
			continue
		}
		sym := exgate.Symbol{Base: c.placed.Asset1, Quote: c.placed.Asset2}
		book, ok := books[sym]
		if !ok {
			if book, err = e.book(ctx, cred, sym, restingDepth); err != nil {
				return err
			}
			books[sym] = book
		}
		st, ok, err := e.makerFill(c, book)
		if err != nil || !ok {
			return err
		}
		before := len(c.steps)
		if c, err = e.record(ctx, cred, c, []step{st}); err != nil {
			return err
		}
		if len(c.steps) > before {
			e.notify(cred.ID, c.order())
		}
	}
	return nil
}

// makerFill is the fill a resting order gets from the live book now: at
// its own price, as maker, as much of its rest as the levels that cross
// it hold. None when nothing crosses, or when its last fill was less than
// minMakerGap ago.
func (e *Exchange) makerFill(c chain, book exgate.OrderBook) (step, bool, error) {
	o := c.placed
	now := e.now().UnixMilli()
	if n := len(c.steps); n > 0 && now-c.steps[n-1].At < minMakerGap {
		return step{}, false, nil
	}
	levels, err := side(book, o.Side)
	if err != nil {
		return step{}, false, err
	}
	left := o.Quantity.Sub(c.executed())
	available := decimal.Zero
	for _, l := range levels {
		if !crosses(o.Side, l.price, o.Price.Decimal) {
			break
		}
		available = available.Add(l.qty)
	}
	q := decimal.Min(left, available)
	if !q.IsPositive() {
		return step{}, false, nil
	}
	return e.fillStep(o, o.Price.Decimal, q, true, now), true, nil
}

// notify passes a change of a paper order to this instance's order
// streams of the key.
func (e *Exchange) notify(credID int64, o exgate.Order) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ch := range e.notices[credID] {
		select {
		case ch <- o:
		default: // the stream's scan finds it
		}
	}
}

func (e *Exchange) listen(credID int64) (chan exgate.Order, func()) {
	ch := make(chan exgate.Order, 64)
	e.mu.Lock()
	e.notices[credID] = append(e.notices[credID], ch)
	e.mu.Unlock()
	return ch, func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		list := e.notices[credID]
		for i, c := range list {
			if c == ch {
				e.notices[credID] = append(list[:i], list[i+1:]...)
				break
			}
		}
		if len(e.notices[credID]) == 0 {
			delete(e.notices, credID)
		}
	}
}

// watchPaperOrders streams a paper key's orders: this instance's changes
// as they happen, and every CheckInterval a scan of the open orders that
// brings in what another instance's watcher filled.
func (e *Exchange) watchPaperOrders(ctx context.Context, cred exgate.Credential, emit func(exgate.Order)) error {
	ch, stop := e.listen(cred.ID)
	defer stop()
	ticks, stopTicks := e.tick(CheckInterval)
	defer stopTicks()
	last := map[string]exgate.Order{}
	final := map[string]bool{}
	seen := func(o exgate.Order) {
		if prev, ok := last[o.ClientOrderID]; (ok && !prev.Advances(o)) || final[o.ClientOrderID] {
			return
		}
		if o.Status.Final() {
			delete(last, o.ClientOrderID)
			if len(final) >= 10_000 {
				clear(final)
			}
			final[o.ClientOrderID] = true
		} else {
			last[o.ClientOrderID] = o
		}
		emit(o)
	}
	scan := func() error {
		open, err := e.OpenOrders(ctx, cred, exgate.OrderFilter{})
		if err != nil {
			return err
		}
		still := make(map[string]bool, len(open))
		for i := len(open) - 1; i >= 0; i-- { // oldest first
			still[open[i].ClientOrderID] = true
			seen(open[i])
		}
		for cid := range last {
			if !still[cid] {
				if o, err := e.orderNow(ctx, cred, cid); err == nil {
					seen(o)
				}
			}
		}
		return nil
	}
	if err := scan(); err != nil && ctx.Err() == nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case o := <-ch:
			seen(o)
		case <-ticks:
			if err := scan(); err != nil && ctx.Err() == nil {
				e.log.Warn("paper: order stream scan", "err", err)
			}
		}
	}
}
