package journal_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/journal"
	"github.com/exgate/exgate/sqlite"
)

// TestFaultInjectionKrakenLifecycle places limit orders on Kraken's fake
// through the journal (GTC orders away from the market, which rest, and
// crossing IOC orders, which fill), then cancels every one of them, while
// the fake injects timeouts before and after it acts, 5xx answers, resets
// and slow answers on AddOrder and CancelOrder (and less often on reads),
// with clients retrying under the same client id. Afterwards:
//   - the fake holds at most one order per client id;
//   - every cancel the client saw answered CANCELED is canceled on the
//     fake (no lost cancel), and once the faults stop a last cancel by
//     each client leaves nothing of ours open;
//   - the journal's record of each order matches the fake's.
func TestFaultInjectionKrakenLifecycle(t *testing.T) {
	if testing.Short() {
		t.Skip("fault injection runs thousands of requests; skipped with -short")
	}
	t.Parallel()
	v := krakenVenue(t)
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

	om, ok := exgate.Ability[exgate.OrderManager](v.ex)
	if !ok {
		t.Fatal("the Kraken adapter does not implement exgate.OrderManager")
	}
	sym := exgate.Symbol{Base: "BTC", Quote: "USDT"}
	book, err := v.ex.OrderBook(ctx, cred, exgate.OrderBookRequest{Symbol: sym, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	away := decimal.RequireFromString(book.Bids[0].Price).Mul(decimal.RequireFromString("0.9")).Round(1)
	cross := decimal.RequireFromString(book.Asks[0].Price).Mul(decimal.RequireFromString("1.01")).Round(1)
	limitFor := func(i int) exgate.LimitOrderRequest {
		req := exgate.LimitOrderRequest{Symbol: sym, Side: exgate.SideBuy, Quantity: decimal.RequireFromString("0.001"),
			Price: away, TimeInForce: exgate.GTC}
		if i%3 == 0 {
			req.Price, req.TimeInForce = cross, exgate.IOC
		}
		return req
	}

	rng := rand.New(rand.NewPCG(15, 3))
	var rngMu sync.Mutex
	faultsOn := func() {
		v.inject(func(r *http.Request) fault {
			rngMu.Lock()
			defer rngMu.Unlock()
			if p := r.URL.Path; p != "/0/private/AddOrder" && p != "/0/private/CancelOrder" && rng.IntN(4) != 0 {
				return faultNone // reads fail less often
			}
			return randomFault(rng)
		})
	}
	faultsOff := func() {
		v.inject(func(*http.Request) fault { return faultNone })
		// A slow request may still be sleeping in the fake, to be
		// processed after its client gave up (see runFaults).
		time.Sleep(2 * slowDelay)
	}
	okCode := func(err error, also ...exgate.Code) bool {
		switch c := exgate.ErrorCode(err); c {
		case exgate.CodeExchangeTimeout, exgate.CodeExchangeError, exgate.CodeExchangeUnavailable, exgate.CodeOrderRejected:
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

	attempts, distinct := 400, 160
	if raceEnabled {
		attempts, distinct = 150, 60
	}
	// run spreads attempts over 8 clients; attempt n works on ref n %
	// distinct, so every ref is tried two or three times, often at once.
	run := func(do func(n int, ref string)) {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for {
					n := int(next.Add(1)) - 1
					if n >= attempts {
						return
					}
					do(n, fmt.Sprintf("lim-%d", n%distinct))
				}
			})
		}
		wg.Wait()
	}

	// Phase 1: limit orders under faults.
	faultsOn()
	run(func(n int, ref string) {
		if _, err := jr.PlaceLimitOrder(ctx, cred, limitFor(n%distinct), ref); err != nil && !okCode(err) {
			t.Errorf("place %s: unexpected %v", ref, err)
		}
	})

	// Phase 2: cancels under faults. A cancel answered CANCELED must
	// hold on the exchange.
	var canceledMu sync.Mutex
	canceled := map[string]bool{}
	run(func(_ int, ref string) {
		o, err := jr.CancelOrder(ctx, cred, "", ref)
		switch {
		case err == nil && o.Status == exgate.OrderCanceled:
			canceledMu.Lock()
			canceled[ref] = true
			canceledMu.Unlock()
		case err != nil && !okCode(err, exgate.CodeNotFound):
			t.Errorf("cancel %s: unexpected %v", ref, err)
		}
	})
	faultsOff()

	// Phase 3: reconcile, then every client cancels once more, cleanly,
	// and reconciles until nothing is left.
	clk.Add(2 * time.Minute)
	for range 5 {
		jr.ReconcileAll(ctx)
		clk.Add(time.Minute)
	}
	for i := range distinct {
		ref := fmt.Sprintf("lim-%d", i)
		if o, err := jr.CancelOrder(ctx, cred, "", ref); err != nil && exgate.ErrorCode(err) != exgate.CodeNotFound {
			t.Errorf("clean cancel %s: %+v %v", ref, o, err)
		}
	}
	left := -1
	for i := 0; i < 20 && left != 0; i++ {
		left = jr.ReconcileAll(ctx)
		clk.Add(time.Minute)
	}
	if left != 0 {
		t.Fatalf("%d intents still unfinished after reconciliation", left)
	}

	open, err := om.OpenOrders(ctx, cred, exgate.OrderFilter{Symbol: sym})
	if err != nil {
		t.Fatal(err)
	}
	if len(open) != 0 {
		t.Errorf("%d orders still open on the fake after every client canceled: %+v", len(open), open)
	}
	held, never, nCanceled, filled := 0, 0, 0, 0
	for i := range distinct {
		ref := fmt.Sprintf("lim-%d", i)
		it, err := st.IntentByClientRef(ctx, "client", exgate.IntentOrder, ref)
		if err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		n := v.orders(it.ID)
		if n > 1 {
			t.Errorf("%s (%s): the exchange holds %d of it", ref, it.ID, n)
		}
		recorded, err := jr.Order(ctx, "client", "", ref)
		switch {
		case n == 0:
			never++
			if err == nil && recorded.Status != exgate.OrderRejected {
				t.Errorf("%s: never placed, recorded as %s", ref, recorded.Status)
			}
			continue
		case err != nil:
			t.Errorf("%s: held by the exchange, the journal answers %v", ref, err)
			continue
		}
		held++
		truth, err := v.ex.QueryOrder(ctx, cred, exgate.OrderQuery{Symbol: sym, ClientOrderID: it.ID})
		if err != nil {
			t.Errorf("%s: read from the fake: %v", ref, err)
			continue
		}
		if truth.Status != recorded.Status || !truth.Status.Final() {
			t.Errorf("%s: the fake has it %s, the journal %s", ref, truth.Status, recorded.Status)
		}
		if canceled[ref] && truth.Status != exgate.OrderCanceled {
			t.Errorf("%s: the client was answered CANCELED, the fake has it %s", ref, truth.Status)
		}
		switch truth.Status {
		case exgate.OrderCanceled:
			nCanceled++
		case exgate.OrderFilled:
			filled++
		}
	}
	t.Logf("kraken limit orders: %d attempts (and as many cancels) over %d client ids: %d held by the exchange (%d canceled, %d filled), %d never placed; %d cancels answered CANCELED under faults",
		attempts, distinct, held, nCanceled, filled, never, len(canceled))
	if held == 0 || len(canceled) == 0 {
		t.Error("no order or no cancel got through: the faults are too strong for the test to mean anything")
	}
}
