package sim_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/sim"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

var (
	btcUSDT = exgate.Symbol{Base: "BTC", Quote: "USDT"}
	ethUSDT = exgate.Symbol{Base: "ETH", Quote: "USDT"}
	ethBTC  = exgate.Symbol{Base: "ETH", Quote: "BTC"}
)

// newSim returns a sim over a memory ledger, the ledger and its clock.
func newSim(t testing.TB) (*sim.Exchange, *sim.MemoryLedger, *clock) {
	t.Helper()
	clk := &clock{t: testNow}
	l := sim.NewMemoryLedger()
	l.Now = clk.Now
	return sim.New(sim.Options{Ledger: l, Now: clk.Now}), l, clk
}

func balances(t *testing.T, e *sim.Exchange, cred exgate.Credential) map[string]decimal.Decimal {
	t.Helper()
	bals, err := e.Balances(t.Context(), cred)
	if err != nil {
		t.Fatalf("Balances: %v", err)
	}
	out := map[string]decimal.Decimal{}
	for _, b := range bals {
		out[b.Asset] = b.Available
	}
	return out
}

func wantCode(t *testing.T, err error, code exgate.Code, param string) *exgate.Error {
	t.Helper()
	e, ok := errors.AsType[*exgate.Error](err)
	if !ok || e.Code != code || e.Param != param {
		t.Fatalf("error %v, want code %s param %q", err, code, param)
	}
	return e
}

func TestStartingBalances(t *testing.T) {
	e, _, _ := newSim(t)
	got := balances(t, e, testCredential())
	want := map[string]decimal.Decimal{
		"BTC": dec("10"), "ETH": dec("100"), "USDT": dec("100000"), "SOL": dec("500"), "XRP": dec("1000"), "BNB": dec("100"),
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Fatalf("starting balances (-got +want):\n%s", diff)
	}
}

func TestMarketDataIsDeterministic(t *testing.T) {
	ctx := t.Context()
	cred := testCredential()
	a := sim.New(sim.Options{Now: func() time.Time { return testNow }})
	b := sim.New(sim.Options{Now: func() time.Time { return testNow }})
	later := sim.New(sim.Options{Now: func() time.Time { return testNow.Add(3 * time.Hour) }})
	other := sim.New(sim.Options{Seed: 42, Now: func() time.Time { return testNow }})
	for _, iv := range exgate.Intervals {
		t.Run(string(iv), func(t *testing.T) {
			req := exgate.KlineRequest{Symbol: btcUSDT, Interval: iv, Limit: 50}
			ka, _ := a.RecentKlines(ctx, cred, req)
			kb, _ := b.RecentKlines(ctx, cred, req)
			if diff := cmp.Diff(ka, kb); diff != "" {
				t.Fatalf("two instances disagree (-a +b):\n%s", diff)
			}
			// Klines closed at testNow are the same three hours later.
			kl, _ := later.RecentKlines(ctx, cred, exgate.KlineRequest{Symbol: btcUSDT, Interval: iv, Limit: 1000})
			byOpen := map[int64]exgate.Kline{}
			for _, k := range kl {
				byOpen[k.OpenTime] = k
			}
			for _, k := range ka[:len(ka)-1] {
				if got, ok := byOpen[k.OpenTime]; ok && !cmp.Equal(got, k) {
					t.Fatalf("closed kline %d changed later:\n%+v\n%+v", k.OpenTime, k, got)
				}
			}
			ko, _ := other.RecentKlines(ctx, cred, req)
			if cmp.Equal(ka, ko) {
				t.Fatal("another seed gives the same klines")
			}
		})
	}
	ba, _ := a.OrderBook(ctx, cred, exgate.OrderBookRequest{Symbol: ethBTC, Limit: 1000})
	bb, _ := b.OrderBook(ctx, cred, exgate.OrderBookRequest{Symbol: ethBTC, Limit: 1000})
	if diff := cmp.Diff(ba, bb); diff != "" {
		t.Fatalf("two instances' books disagree (-a +b):\n%s", diff)
	}
}

func TestKlines(t *testing.T) {
	e, _, _ := newSim(t)
	ctx := t.Context()
	t.Run("last kline is open", func(t *testing.T) {
		ks, err := e.RecentKlines(ctx, testCredential(), exgate.KlineRequest{Symbol: btcUSDT, Interval: exgate.Interval1h, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		last := ks[len(ks)-1]
		if last.OpenTime > testNow.UnixMilli() || last.CloseTime < testNow.UnixMilli() {
			t.Fatalf("last kline %d..%d does not contain now %d", last.OpenTime, last.CloseTime, testNow.UnixMilli())
		}
		if ks[0].ClosePrice != ks[1].OpenPrice {
			t.Errorf("close %s of a kline is not the next open %s", ks[0].ClosePrice, ks[1].OpenPrice)
		}
	})
	t.Run("limits", func(t *testing.T) {
		for _, limit := range []int{0, 1, 1000, 5000} {
			ks, err := e.RecentKlines(ctx, testCredential(), exgate.KlineRequest{Symbol: ethUSDT, Interval: exgate.Interval1M, Limit: limit})
			want := min(max(limit, 1), 1000)
			if limit == 0 {
				want = exgate.DefaultKlineLimit
			}
			if err != nil || len(ks) != want {
				t.Errorf("limit %d: %d klines, %v; want %d", limit, len(ks), err, want)
			}
		}
	})
	t.Run("prices are realistic", func(t *testing.T) {
		centres := map[exgate.Symbol][2]string{
			btcUSDT: {"20000", "200000"}, ethUSDT: {"1000", "10000"}, ethBTC: {"0.01", "0.2"},
			{Base: "SOL", Quote: "USDT"}: {"40", "500"}, {Base: "XRP", Quote: "USDT"}: {"0.15", "2"}, {Base: "BNB", Quote: "USDT"}: {"150", "2000"},
		}
		for sym, r := range centres {
			ks, err := e.RecentKlines(ctx, testCredential(), exgate.KlineRequest{Symbol: sym, Interval: exgate.Interval1M, Limit: 1000})
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range ks {
				if lo, hi := dec(k.LowPrice), dec(k.HighPrice); lo.LessThan(dec(r[0])) || hi.GreaterThan(dec(r[1])) {
					t.Fatalf("%s kline %s: low %s high %s outside %s..%s", sym, time.UnixMilli(k.OpenTime).UTC(), lo, hi, r[0], r[1])
				}
			}
		}
	})
	t.Run("cross rate is consistent", func(t *testing.T) {
		last := func(sym exgate.Symbol) decimal.Decimal {
			ks, err := e.RecentKlines(ctx, testCredential(), exgate.KlineRequest{Symbol: sym, Interval: exgate.Interval1m, Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			return dec(ks[0].ClosePrice)
		}
		cross := last(ethUSDT).Div(last(btcUSDT))
		if got := last(ethBTC); got.Sub(cross).Abs().GreaterThan(dec("0.00002")) {
			t.Fatalf("ETH/BTC %s, ETH/USDT / BTC/USDT = %s", got, cross)
		}
	})
}

func TestOrderBook(t *testing.T) {
	e, _, clk := newSim(t)
	ctx := t.Context()
	for _, sym := range []exgate.Symbol{btcUSDT, ethBTC, {Base: "XRP", Quote: "USDT"}} {
		t.Run(sym.String(), func(t *testing.T) {
			b, err := e.OrderBook(ctx, testCredential(), exgate.OrderBookRequest{Symbol: sym, Limit: exgate.MaxOrderBookLimit})
			if err != nil {
				t.Fatal(err)
			}
			if len(b.Bids) != 1000 || len(b.Asks) != 1000 {
				t.Fatalf("%d bids and %d asks, want 1000 each", len(b.Bids), len(b.Asks))
			}
			bid, ask := dec(b.Bids[0].Price), dec(b.Asks[0].Price)
			if spread := ask.Sub(bid).Div(bid); spread.GreaterThan(dec("0.001")) {
				t.Errorf("spread %s..%s is %s of the price, want under 0.1%%", bid, ask, spread)
			}
			depth := dec(b.Bids[0].Price).Sub(dec(b.Bids[999].Price)).Div(bid)
			if depth.LessThan(dec("0.001")) || depth.GreaterThan(dec("0.5")) {
				t.Errorf("1000 bid levels span %s of the price, want 0.1%% to 50%%", depth)
			}
		})
	}
	t.Run("changes every second", func(t *testing.T) {
		a, _ := e.OrderBook(ctx, testCredential(), exgate.OrderBookRequest{Symbol: btcUSDT, Limit: 5})
		clk.Add(100 * time.Millisecond) // same second
		b, _ := e.OrderBook(ctx, testCredential(), exgate.OrderBookRequest{Symbol: btcUSDT, Limit: 5})
		clk.Add(time.Second)
		c, _ := e.OrderBook(ctx, testCredential(), exgate.OrderBookRequest{Symbol: btcUSDT, Limit: 5})
		if !cmp.Equal(a, b) {
			t.Error("the book changed within a second")
		}
		if cmp.Equal(a, c) {
			t.Error("the book did not change from one second to the next")
		}
	})
}

// walkCost computes by hand what taking qty base from the book costs.
func walkCost(t *testing.T, levels []exgate.Level, qty decimal.Decimal) decimal.Decimal {
	t.Helper()
	cost := decimal.Zero
	for _, l := range levels {
		take := decimal.Min(qty, dec(l.Quantity))
		cost = cost.Add(take.Mul(dec(l.Price)))
		qty = qty.Sub(take)
		if qty.IsZero() {
			return cost
		}
	}
	t.Fatal("book too shallow for the test")
	return cost
}

func TestMarketOrderAccounting(t *testing.T) {
	ctx := t.Context()
	cred := testCredential()
	tests := []struct {
		name string
		req  exgate.OrderRequest
		// wantQuantity is the order quantity after rounding.
		wantQuantity string
		// step is the base step of the pair.
		step string
	}{
		{"buy base over several levels", exgate.OrderRequest{Symbol: btcUSDT, Side: exgate.SideBuy, Quantity: dec("1.0345678"), QuantityIn: exgate.InBase}, "1.03456", "0.00001"},
		{"sell base over several levels", exgate.OrderRequest{Symbol: btcUSDT, Side: exgate.SideSell, Quantity: dec("3"), QuantityIn: exgate.InBase}, "3", "0.00001"},
		{"buy quote", exgate.OrderRequest{Symbol: btcUSDT, Side: exgate.SideBuy, Quantity: dec("50000.129"), QuantityIn: exgate.InQuote}, "50000.12", "0.00001"},
		{"sell quote", exgate.OrderRequest{Symbol: ethBTC, Side: exgate.SideSell, Quantity: dec("0.3"), QuantityIn: exgate.InQuote}, "0.3", "0.0001"},
		{"sell XRP", exgate.OrderRequest{Symbol: exgate.Symbol{Base: "XRP", Quote: "USDT"}, Side: exgate.SideSell, Quantity: dec("999.99"), QuantityIn: exgate.InBase}, "999.9", "0.1"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, _, _ := newSim(t)
			req := tc.req
			req.ClientOrderID = fmt.Sprintf("o%d", i)
			book, _ := e.OrderBook(ctx, cred, exgate.OrderBookRequest{Symbol: req.Symbol, Limit: 1000})
			before := balances(t, e, cred)
			o, err := e.PlaceMarketOrder(ctx, cred, req)
			if err != nil {
				t.Fatal(err)
			}
			after := balances(t, e, cred)
			if o.Status != exgate.OrderFilled || o.RawStatus != "FILLED" {
				t.Errorf("status %s (%s), want FILLED", o.Status, o.RawStatus)
			}
			if o.Quantity.String() != tc.wantQuantity {
				t.Errorf("quantity %s, want %s rounded down to the step", o.Quantity, tc.wantQuantity)
			}
			base, quote := o.ExecutedQuantity.Decimal, o.QuoteQuantity.Decimal
			levels := book.Asks
			if req.Side == exgate.SideSell {
				levels = book.Bids
			}
			if cost := walkCost(t, levels, base); !cost.Equal(quote) {
				t.Errorf("quote quantity %s, walking the book for %s costs %s", quote, base, cost)
			}
			if req.QuantityIn == exgate.InBase && !base.Equal(o.Quantity.Decimal) {
				t.Errorf("executed %s, want the whole %s", base, o.Quantity)
			}
			if req.QuantityIn == exgate.InQuote {
				// Less than one more step could have been bought (the
				// walk stays within 1% of the best price here).
				slack := o.Quantity.Sub(quote)
				oneStep := dec(levels[0].Price).Mul(dec(tc.step)).Mul(dec("1.01"))
				if slack.IsNegative() || slack.GreaterThanOrEqual(oneStep) {
					t.Errorf("quote quantity %s for a request of %s: want at most one step (%s) less", quote, o.Quantity, oneStep)
				}
			}
			pay, get, paid, got := req.Symbol.Quote, req.Symbol.Base, quote, base
			if req.Side == exgate.SideSell {
				pay, get, paid, got = req.Symbol.Base, req.Symbol.Quote, base, quote
			}
			fee := got.Mul(dec("0.001"))
			if o.FeesIn != get || !o.Fees.Equal(fee) {
				t.Errorf("fees %s %s, want 0.1%% of %s %s = %s", o.Fees, o.FeesIn, got, get, fee)
			}
			if moved := before[pay].Sub(after[pay]); !moved.Equal(paid) {
				t.Errorf("%s moved by -%s, want -%s", pay, moved, paid)
			}
			if moved := after[get].Sub(before[get]); !moved.Equal(got.Sub(fee)) {
				t.Errorf("%s moved by %s, want %s - fee %s", get, moved, got, fee)
			}
			if avg := exgate.AveragePrice(quote, base); !o.AveragePrice.Equal(avg.Decimal) {
				t.Errorf("average price %s, want %s", o.AveragePrice, avg)
			}
			back, err := e.QueryOrder(ctx, cred, exgate.OrderQuery{Symbol: req.Symbol, ClientOrderID: req.ClientOrderID})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(back, o); diff != "" {
				t.Errorf("QueryOrder (-got +placed):\n%s", diff)
			}
		})
	}
}

func TestMarketOrderErrors(t *testing.T) {
	ctx := t.Context()
	cred := testCredential()
	order := func(sym exgate.Symbol, side exgate.Side, qty string, in exgate.QuantityIn) exgate.OrderRequest {
		return exgate.OrderRequest{Symbol: sym, Side: side, Quantity: dec(qty), QuantityIn: in, ClientOrderID: exgate.NewID('o')}
	}
	tests := []struct {
		name    string
		req     exgate.OrderRequest
		code    exgate.Code
		param   string
		mention string
	}{
		{"unknown pair", order(exgate.Symbol{Base: "DOGE", Quote: "USDT"}, exgate.SideBuy, "1", exgate.InBase), exgate.CodeUnknownSymbol, "", "DOGE/USDT is not listed"},
		{"inverse pair", order(exgate.Symbol{Base: "USDT", Quote: "BTC"}, exgate.SideBuy, "100", exgate.InBase), exgate.CodeUnknownSymbol, "", "as BTC/USDT"},
		{"under the minimum quantity", order(btcUSDT, exgate.SideBuy, "0.000009", exgate.InBase), exgate.CodeQuantityTooSmall, "", "minimum 0.00001 BTC"},
		{"under the minimum notional in base", order(btcUSDT, exgate.SideSell, "0.00001", exgate.InBase), exgate.CodeQuantityTooSmall, "", "minimum notional 5 USDT"},
		{"under the minimum notional in quote", order(btcUSDT, exgate.SideBuy, "4.99", exgate.InQuote), exgate.CodeQuantityTooSmall, "", "minimum notional 5 USDT"},
		{"rounds to zero", order(ethBTC, exgate.SideSell, "0.00005", exgate.InBase), exgate.CodeQuantityTooSmall, "", "rounded down to 0"},
		{"more than held", order(btcUSDT, exgate.SideSell, "11", exgate.InBase), exgate.CodeInsufficientFunds, "", "needs 11 BTC, the account has 10 BTC"},
		{"more quote than held", order(btcUSDT, exgate.SideBuy, "100002", exgate.InQuote), exgate.CodeInsufficientFunds, "", "USDT"},
		{"no client id", exgate.OrderRequest{Symbol: btcUSDT, Side: exgate.SideBuy, Quantity: dec("1"), QuantityIn: exgate.InBase}, exgate.CodeInvalidParameter, "clientOrderId", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, _, _ := newSim(t)
			before := balances(t, e, cred)
			_, err := e.PlaceMarketOrder(ctx, cred, tc.req)
			ee := wantCode(t, err, tc.code, tc.param)
			if tc.mention != "" && !strings.Contains(ee.Detail, tc.mention) {
				t.Errorf("detail %q, want it to mention %q", ee.Detail, tc.mention)
			}
			if diff := cmp.Diff(balances(t, e, cred), before); diff != "" {
				t.Errorf("a refused order moved balances (-after +before):\n%s", diff)
			}
			if _, err := e.QueryOrder(ctx, cred, exgate.OrderQuery{Symbol: tc.req.Symbol, ClientOrderID: tc.req.ClientOrderID}); !errors.Is(err, exgate.ErrNotFound) {
				t.Errorf("QueryOrder of the refused order: %v, want ErrNotFound", err)
			}
		})
	}

	t.Run("same client id twice", func(t *testing.T) {
		e, _, _ := newSim(t)
		req := order(btcUSDT, exgate.SideBuy, "0.01", exgate.InBase)
		if _, err := e.PlaceMarketOrder(ctx, cred, req); err != nil {
			t.Fatal(err)
		}
		before := balances(t, e, cred)
		_, err := e.PlaceMarketOrder(ctx, cred, req)
		wantCode(t, err, exgate.CodeOrderRejected, "")
		if diff := cmp.Diff(balances(t, e, cred), before); diff != "" {
			t.Errorf("the duplicate moved balances (-after +before):\n%s", diff)
		}
	})

	t.Run("query on another pair or exchange id", func(t *testing.T) {
		e, _, _ := newSim(t)
		req := order(btcUSDT, exgate.SideBuy, "0.01", exgate.InBase)
		o, err := e.PlaceMarketOrder(ctx, cred, req)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []exgate.OrderQuery{
			{Symbol: ethUSDT, ClientOrderID: req.ClientOrderID},
			{Symbol: btcUSDT, ClientOrderID: req.ClientOrderID, ExchangeOrderID: o.ExchangeOrderID + "0"},
		} {
			if _, err := e.QueryOrder(ctx, cred, q); !errors.Is(err, exgate.ErrNotFound) {
				t.Errorf("QueryOrder(%+v): %v, want ErrNotFound", q, err)
			}
		}
		other := cred
		other.ID++
		if _, err := e.QueryOrder(ctx, other, exgate.OrderQuery{Symbol: btcUSDT, ClientOrderID: req.ClientOrderID}); !errors.Is(err, exgate.ErrNotFound) {
			t.Errorf("QueryOrder from another credential: %v, want ErrNotFound", err)
		}
	})
}

// faultyLedger fails ApplySimOperation with err, after applying when
// applied is set (the commit happened but its answer was lost).
type faultyLedger struct {
	*sim.MemoryLedger
	err     error
	applied bool
}

func (l *faultyLedger) ApplySimOperation(ctx context.Context, id int64, op exgate.SimOperation) error {
	if l.applied {
		if err := l.MemoryLedger.ApplySimOperation(ctx, id, op); err != nil {
			return err
		}
	}
	return l.err
}

func TestLedgerFailures(t *testing.T) {
	ctx := t.Context()
	cred := testCredential()
	for _, applied := range []bool{false, true} {
		t.Run(fmt.Sprintf("applied=%v", applied), func(t *testing.T) {
			l := &faultyLedger{MemoryLedger: sim.NewMemoryLedger(), err: errors.New("connection reset"), applied: applied}
			e := sim.New(sim.Options{Ledger: l, Now: func() time.Time { return testNow }})
			req := exgate.OrderRequest{Symbol: btcUSDT, Side: exgate.SideBuy, Quantity: dec("0.01"), QuantityIn: exgate.InBase, ClientOrderID: "o1"}
			_, err := e.PlaceMarketOrder(ctx, cred, req)
			wantCode(t, err, exgate.CodeExchangeTimeout, "")
			_, qerr := e.QueryOrder(ctx, cred, exgate.OrderQuery{Symbol: btcUSDT, ClientOrderID: "o1"})
			if applied != (qerr == nil) {
				t.Errorf("QueryOrder after an unknown outcome: %v; the order was applied: %v", qerr, applied)
			}
			wreq := exgate.WithdrawalRequest{Asset: "ETH", Network: "ETH", Address: "0x52908400098527886E0F7030069857D2E4169EE7", Amount: dec("1"), ClientWithdrawalID: "w1"}
			_, err = e.Withdraw(ctx, cred, wreq)
			wantCode(t, err, exgate.CodeExchangeTimeout, "")
		})
	}
}

// removedLedger has no credential behind any account, as the store has
// once the exchange key is removed.
type removedLedger struct{ *sim.MemoryLedger }

func (removedLedger) EnsureSimAccount(context.Context, int64, []exgate.BalanceChange) error {
	return fmt.Errorf("credential: %w", exgate.ErrNotFound)
}

// TestRemovedExchangeKey: a request that reaches sim after its exchange
// key was removed is refused as UNKNOWN_EXCHANGE_KEY, not as an exchange
// error.
func TestRemovedExchangeKey(t *testing.T) {
	e := sim.New(sim.Options{Ledger: removedLedger{sim.NewMemoryLedger()}, Now: func() time.Time { return testNow }})
	_, err := e.Balances(t.Context(), testCredential())
	wantCode(t, err, exgate.CodeUnknownExchangeKey, "")
}

// forgetfulLedger loses every account once, like a store reset under a
// running gateway.
type forgetfulLedger struct {
	sim.Ledger
	mu     sync.Mutex
	forget bool
}

func (l *forgetfulLedger) SimBalances(ctx context.Context, id int64) (map[string]decimal.Decimal, error) {
	l.mu.Lock()
	if l.forget {
		l.forget = false
		l.Ledger = sim.NewMemoryLedger()
	}
	l.mu.Unlock()
	return l.Ledger.SimBalances(ctx, id)
}

func TestAccountReopened(t *testing.T) {
	l := &forgetfulLedger{Ledger: sim.NewMemoryLedger()}
	e := sim.New(sim.Options{Ledger: l, Now: func() time.Time { return testNow }})
	cred := testCredential()
	balances(t, e, cred)
	l.forget = true
	if got := balances(t, e, cred); !got["BTC"].Equal(dec("10")) {
		t.Fatalf("balances after the store lost the account: %v, want a reopened account", got)
	}
}

func TestConcurrentOrders(t *testing.T) {
	e, _, _ := newSim(t)
	cred := testCredential()
	const n = 40 // each sells 0.3 BTC of 10: 33 fit
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, errs[i] = e.PlaceMarketOrder(t.Context(), cred, exgate.OrderRequest{
				Symbol: btcUSDT, Side: exgate.SideSell, Quantity: dec("0.3"), QuantityIn: exgate.InBase, ClientOrderID: fmt.Sprintf("o%d", i),
			})
		})
	}
	wg.Wait()
	ok := 0
	for i, err := range errs {
		switch {
		case err == nil:
			ok++
		case exgate.ErrorCode(err) != exgate.CodeInsufficientFunds:
			t.Errorf("order %d: %v", i, err)
		}
	}
	if ok != 33 {
		t.Errorf("%d orders filled, want 33", ok)
	}
	if got := balances(t, e, cred)["BTC"]; !got.Equal(dec("0.1")) {
		t.Errorf("BTC balance %s, want 0.1", got)
	}
}

func BenchmarkRecentKlines(b *testing.B) {
	e := sim.New(sim.Options{Now: func() time.Time { return testNow }})
	req := exgate.KlineRequest{Symbol: btcUSDT, Interval: exgate.Interval1m, Limit: 500}
	for b.Loop() {
		if _, err := e.RecentKlines(b.Context(), testCredential(), req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOrderBook(b *testing.B) {
	e := sim.New(sim.Options{Now: func() time.Time { return testNow }})
	req := exgate.OrderBookRequest{Symbol: btcUSDT, Limit: 100}
	for b.Loop() {
		if _, err := e.OrderBook(b.Context(), testCredential(), req); err != nil {
			b.Fatal(err)
		}
	}
}
