package journal_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/journal"
	"github.com/exgate/exgate/sqlite"
)

// The order lifecycle under the faults of fault_test.go (answers too slow
// for the adapter, 5xx, connections reset before and after the request is
// processed), on each exchange's fake through the journal, one table over
// the venues (venues, fault_test.go): limit orders retried under the same
// client id are held at most once each, and cancels are never lost and
// never reach another order.

// lifecycleJournal is a journal over a fresh store for the venue.
func lifecycleJournal(t *testing.T, v venue) (*journal.Service, exgate.Credential, *shiftClock, *sqlite.Store) {
	t.Helper()
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "exgate.db"), bytes.Repeat([]byte{1}, 32))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.CreateClientKey(ctx, exgate.ClientKey{APIKey: "client", Secret: "x", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	cred := v.cred
	cred.ClientAPIKey, cred.Name = "client", "main"
	if cred, err = st.AddCredential(ctx, cred); err != nil {
		t.Fatal(err)
	}
	clk := &shiftClock{}
	jr := journal.New(journal.Options{Store: st, Exchanges: map[string]exgate.Exchange{cred.Exchange: v.ex},
		Now: clk.Now, CallTimeout: 3 * time.Second, NotFoundGrace: time.Minute})
	return jr, cred, clk, st
}

// injectRandom installs the seeded fault mix of fault_test.go; always
// says which requests take a fault every time (reads: one in four).
func injectRandom(v venue, seed uint64, always func(*http.Request) bool) {
	rng := rand.New(rand.NewPCG(seed, 15))
	var mu sync.Mutex
	v.inject(func(r *http.Request) fault {
		mu.Lock()
		defer mu.Unlock()
		if !always(r) && rng.IntN(4) != 0 {
			return faultNone
		}
		return randomFault(rng)
	})
}

// settle stops the faults, waits for requests still held by the fake
// (see runFaults), then reconciles, moving the clock past the grace
// period, until every intent left unfinished is accepted (an order
// resting on the book).
func settle(t *testing.T, v venue, jr *journal.Service, clk *shiftClock, st *sqlite.Store) {
	t.Helper()
	v.inject(func(*http.Request) fault { return faultNone })
	v.idle(t)
	clk.Add(2 * time.Minute)
	var open []exgate.Intent
	for range 20 {
		jr.ReconcileAll(t.Context())
		clk.Add(time.Minute)
		its, err := st.UnfinishedIntents(t.Context(), 1000)
		if err != nil {
			t.Fatal(err)
		}
		open = slices.DeleteFunc(its, func(it exgate.Intent) bool { return it.State == exgate.IntentAccepted })
		if len(open) == 0 {
			return
		}
	}
	for _, it := range open {
		t.Errorf("%s %s still %s after reconciliation: %s", it.Kind, it.ID, it.State, it.Response)
	}
}

// faultSymbol is the pair every fake lists and funds.
var faultSymbol = exgate.Symbol{Base: "BTC", Quote: "USDT"}

// limitPrices are a price that rests (a tenth under the best bid) and one
// that crosses (a hundredth over the best ask), on the market's tick.
func limitPrices(t *testing.T, v venue, om exgate.OrderManager, cred exgate.Credential) (rest, cross decimal.Decimal) {
	t.Helper()
	ctx := t.Context()
	book, err := v.ex.OrderBook(ctx, cred, exgate.OrderBookRequest{Symbol: faultSymbol, Limit: 1})
	if err != nil || len(book.Bids) == 0 || len(book.Asks) == 0 {
		t.Fatalf("%s book: %+v %v", v.name, book, err)
	}
	infos, err := om.Symbols(ctx, cred, exgate.SymbolFilter{Symbol: faultSymbol})
	if err != nil || len(infos) != 1 {
		t.Fatalf("%s symbols: %+v %v", v.name, infos, err)
	}
	tick := decimal.RequireFromString(infos[0].PriceStep)
	rest = decimal.RequireFromString(book.Bids[0].Price).Mul(decimal.RequireFromString("0.9")).Div(tick).Floor().Mul(tick)
	cross = decimal.RequireFromString(book.Asks[0].Price).Mul(decimal.RequireFromString("1.01")).Div(tick).Ceil().Mul(tick)
	return rest, cross
}

// underFaults reports whether err is one a client may see under faults:
// none, an unknown outcome, an exchange failure or a refusal (and the
// codes in also).
func underFaults(err error, also ...exgate.Code) bool {
	switch c := exgate.ErrorCode(err); {
	case err == nil, c == exgate.CodeExchangeTimeout, c == exgate.CodeExchangeError, c == exgate.CodeExchangeUnavailable, c == exgate.CodeOrderRejected:
		return true
	default:
		for _, a := range also {
			if c == a {
				return true
			}
		}
	}
	return false
}

// spread runs do(n) for n below attempts on workers goroutines.
func spread(workers, attempts int, do func(n int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				n := int(next.Add(1)) - 1
				if n >= attempts {
					return
				}
				do(n)
			}
		})
	}
	wg.Wait()
}

// TestFaultLimitOrders: limit orders (even client ids rest, odd ones
// cross and fill at once) are placed and retried under the same client
// id while every submission takes a fault; afterwards the exchange holds
// at most one order per client id, and the journal's record of each
// agrees with the exchange's.
func TestFaultLimitOrders(t *testing.T) {
	if testing.Short() {
		t.Skip("fault injection runs many requests; skipped with -short")
	}
	t.Parallel()
	for i, newVenue := range venues() {
		v := newVenue(t)
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			jr, cred, clk, st := lifecycleJournal(t, v)
			om, ok := exgate.Ability[exgate.OrderManager](v.ex)
			if !ok {
				t.Fatalf("the %s adapter has no exgate.OrderManager", v.name)
			}
			rest, cross := limitPrices(t, v, om, cred)
			order := func(ref int) exgate.LimitOrderRequest {
				r := exgate.LimitOrderRequest{Symbol: faultSymbol, Side: exgate.SideBuy, Quantity: decimal.RequireFromString(v.limitQty),
					Price: rest, TimeInForce: exgate.GTC}
				if ref%2 == 1 {
					r.Price, r.TimeInForce = cross, exgate.IOC
				}
				return r
			}
			injectRandom(v, uint64(1+i), v.isSubmit)
			attempts, distinct := 300, 120
			if raceEnabled {
				attempts, distinct = 90, 36
			}
			spread(8, attempts, func(n int) {
				if _, err := jr.PlaceLimitOrder(ctx, cred, order(n%distinct), fmt.Sprintf("lim-%d", n%distinct)); !underFaults(err) {
					t.Errorf("attempt %d: unexpected %v", n, err)
				}
			})
			settle(t, v, jr, clk, st)

			held := 0
			for i := range distinct {
				ref := fmt.Sprintf("lim-%d", i)
				it, err := st.IntentByClientRef(ctx, "client", exgate.IntentOrder, ref)
				if err != nil {
					t.Fatal(err)
				}
				n := v.orders(it.ID)
				switch {
				case n > 1:
					t.Errorf("%s (%s): the exchange holds %d orders with its client id", ref, it.ID, n)
				case it.State != exgate.IntentFinal && it.State != exgate.IntentAccepted:
					t.Errorf("%s: state %s after reconciliation: %s", ref, it.State, it.Response)
				case n == 1 && it.Answer == exgate.AnswerRecord:
					held++
					if it.State == exgate.IntentFinal {
						checkRecorded(t, exgate.IntentOrder, it)
					}
					recorded, err := jr.Order(ctx, "client", it.ID, "")
					truth, qerr := v.ex.QueryOrder(ctx, cred, exgate.OrderQuery{Symbol: faultSymbol, ClientOrderID: it.ID})
					if err != nil || qerr != nil {
						t.Fatalf("%s: %v %v", ref, err, qerr)
					}
					if recorded.Status != truth.Status || recorded.Type != exgate.OrderTypeLimit {
						t.Errorf("%s: the journal says %s %s, the exchange %s", ref, recorded.Type, recorded.Status, truth.Status)
					}
				case n == 0 && it.Answer != exgate.AnswerRecord:
				default:
					t.Errorf("%s (%s): the exchange holds %d, the journal says %q %s", ref, it.ID, n, it.Answer, it.Response)
				}
			}
			t.Logf("%s limit orders: %d attempts over %d client ids, %d held by the exchange", v.name, attempts, distinct, held)
			if held == 0 {
				t.Error("no limit order reached the exchange: the faults are too strong for the test to mean anything")
			}
		})
	}
}

// TestFaultCancels: resting orders placed without faults are canceled,
// each three times and often at once, while every cancel takes a fault;
// afterwards every one of them is canceled on the exchange and in the
// journal (no lost cancel), a cancel answered CANCELED held, and neither
// an order of the journal nobody canceled nor one placed on the exchange
// directly was touched.
func TestFaultCancels(t *testing.T) {
	if testing.Short() {
		t.Skip("fault injection runs many requests; skipped with -short")
	}
	t.Parallel()
	for i, newVenue := range venues() {
		v := newVenue(t)
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			jr, cred, clk, st := lifecycleJournal(t, v)
			om, ok := exgate.Ability[exgate.OrderManager](v.ex)
			if !ok {
				t.Fatalf("the %s adapter has no exgate.OrderManager", v.name)
			}
			rest, _ := limitPrices(t, v, om, cred)
			resting := exgate.LimitOrderRequest{Symbol: faultSymbol, Side: exgate.SideBuy, Quantity: decimal.RequireFromString(v.limitQty),
				Price: rest, TimeInForce: exgate.GTC}
			n := 40
			if raceEnabled {
				n = 16
			}
			// Placed without faults; one the journal's CallTimeout left
			// unknown on a very busy machine is reconciled before the
			// cancels start.
			place := func(ref string) {
				if _, err := jr.PlaceLimitOrder(ctx, cred, resting, ref); err != nil && exgate.ErrorCode(err) != exgate.CodeExchangeTimeout {
					t.Fatalf("place %s: %v", ref, err)
				}
			}
			for i := range n {
				place(fmt.Sprintf("can-%d", i))
			}
			place("bystander")
			settle(t, v, jr, clk, st)
			for i := range n + 1 {
				ref := fmt.Sprintf("can-%d", i)
				if i == n {
					ref = "bystander"
				}
				if o, err := jr.Order(ctx, "client", "", ref); err != nil || o.Status != exgate.OrderPending {
					t.Fatalf("%s before the cancels: %+v, %v; want PENDING", ref, o, err)
				}
			}
			bystander, err := jr.Order(ctx, "client", "", "bystander")
			if err != nil {
				t.Fatal(err)
			}
			outsideReq := resting
			outsideReq.ClientOrderID = "outside1"
			outside, err := om.PlaceLimitOrder(ctx, cred, outsideReq)
			if exgate.ErrorCode(err) == exgate.CodeExchangeTimeout {
				// Read back by its id when the answer was lost: never
				// sent twice.
				outside, err = v.ex.QueryOrder(ctx, cred, exgate.OrderQuery{Symbol: faultSymbol, ClientOrderID: outsideReq.ClientOrderID})
			}
			if err != nil {
				t.Fatal(err)
			}

			injectRandom(v, uint64(21+i), v.isCancel)
			var canceledMu sync.Mutex
			canceled := map[string]bool{}
			var unknown atomic.Int64
			spread(8, 3*n, func(k int) {
				ref := fmt.Sprintf("can-%d", k%n)
				o, err := jr.CancelOrder(ctx, cred, "", ref)
				switch {
				case err == nil && o.Status == exgate.OrderCanceled:
					canceledMu.Lock()
					canceled[ref] = true
					canceledMu.Unlock()
				case err == nil:
					t.Errorf("cancel %s answered %s", ref, o.Status)
				case exgate.ErrorCode(err) == exgate.CodeExchangeTimeout:
					unknown.Add(1)
				case !underFaults(err, exgate.CodeNotFound):
					t.Errorf("cancel %s: unexpected %v", ref, err)
				}
			})
			settle(t, v, jr, clk, st)

			open, err := om.OpenOrders(ctx, cred, exgate.OrderFilter{Symbol: faultSymbol})
			if err != nil {
				t.Fatal(err)
			}
			still := map[string]bool{}
			for _, o := range open {
				still[o.ClientOrderID] = true
			}
			if len(open) != 2 || !still[bystander.ID] || !still[outside.ClientOrderID] {
				t.Errorf("open after the cancels: %+v; want only %s and %s", open, bystander.ID, outside.ClientOrderID)
			}
			for i := range n {
				ref := fmt.Sprintf("can-%d", i)
				o, err := jr.Order(ctx, "client", "", ref)
				if err != nil || o.Status != exgate.OrderCanceled {
					t.Errorf("%s in the journal: %+v, %v; want CANCELED (a lost cancel?)", ref, o, err)
					continue
				}
				if c := v.orders(o.ID); c != 1 {
					t.Errorf("%s: the exchange holds %d orders", ref, c)
				}
				truth, err := v.ex.QueryOrder(ctx, cred, exgate.OrderQuery{Symbol: faultSymbol, ClientOrderID: o.ID})
				if err != nil || truth.Status != exgate.OrderCanceled {
					t.Errorf("%s on the exchange: %s %v, want CANCELED", ref, truth.Status, err)
				}
			}
			if len(canceled) == 0 {
				t.Error("no cancel was answered CANCELED: the faults are too strong for the test to mean anything")
			}
			t.Logf("%s cancels: %d attempts over %d orders, %d answered CANCELED, %d with an unknown outcome", v.name, 3*n, n, len(canceled), unknown.Load())
		})
	}
}
