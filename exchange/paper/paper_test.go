package paper_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/paper"
	"github.com/exgate/exgate/exchange/sim"
)

// live is a scripted real exchange: one market, BTC/USDT (step 0.001,
// tick 0.01, minimum 0.001 BTC and 5 USDT), whose book a test sets. Any
// call that would need the account's key fails the test.
type live struct {
	t    *testing.T
	mu   sync.Mutex
	book exgate.OrderBook
	// calls counts the book reads; keyed records every credential that
	// reached it with key material.
	calls  int
	keyed  []exgate.Credential
	orders int
}

func (l *live) Name() string { return "binance" }

func (l *live) seen(cred exgate.Credential) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if cred.Paper && (cred.Key != "" || cred.Secret != "" || cred.Passphrase != "") {
		l.keyed = append(l.keyed, cred)
	}
}

func (l *live) setBook(bids, asks [][2]string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.book = exgate.OrderBook{Bids: []exgate.Level{}, Asks: []exgate.Level{}}
	for _, b := range bids {
		l.book.Bids = append(l.book.Bids, exgate.Level{Price: b[0], Quantity: b[1]})
	}
	for _, a := range asks {
		l.book.Asks = append(l.book.Asks, exgate.Level{Price: a[0], Quantity: a[1]})
	}
}

func (l *live) OrderBook(ctx context.Context, cred exgate.Credential, req exgate.OrderBookRequest) (exgate.OrderBook, error) {
	l.seen(cred)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls++
	return l.book, nil
}

func (l *live) RecentKlines(ctx context.Context, cred exgate.Credential, req exgate.KlineRequest) ([]exgate.Kline, error) {
	l.seen(cred)
	return []exgate.Kline{}, nil
}

func (l *live) Symbols(ctx context.Context, cred exgate.Credential, f exgate.SymbolFilter) ([]exgate.SymbolInfo, error) {
	l.seen(cred)
	info := exgate.SymbolInfo{Asset1: "BTC", Asset2: "USDT", Status: exgate.SymbolTrading, QuantityStep: "0.001",
		PriceStep: "0.01", MinQuantity: "0.001", MinNotional: "5", OrderTypes: []string{"MARKET", "LIMIT"}}
	if (f.Symbol != exgate.Symbol{} && f.Symbol != exgate.Symbol{Base: "BTC", Quote: "USDT"}) {
		return []exgate.SymbolInfo{}, nil
	}
	return []exgate.SymbolInfo{info}, nil
}

func (l *live) StandardFees() exgate.FeeRates {
	return exgate.FeeRates{Maker: decimal.RequireFromString("0.001"), Taker: decimal.RequireFromString("0.002")}
}

// The account calls: only a real key may reach them.
func (l *live) signed(cred exgate.Credential) error {
	if cred.Paper {
		l.t.Errorf("a paper key's account call reached the real exchange: %v", cred)
	}
	l.mu.Lock()
	l.orders++
	l.mu.Unlock()
	return errors.New("live account call")
}

func (l *live) PlaceMarketOrder(ctx context.Context, cred exgate.Credential, req exgate.OrderRequest) (exgate.Order, error) {
	return exgate.Order{}, l.signed(cred)
}
func (l *live) QueryOrder(ctx context.Context, cred exgate.Credential, q exgate.OrderQuery) (exgate.Order, error) {
	return exgate.Order{}, l.signed(cred)
}
func (l *live) Balances(ctx context.Context, cred exgate.Credential) ([]exgate.Balance, error) {
	return nil, l.signed(cred)
}
func (l *live) RecentDeposits(ctx context.Context, cred exgate.Credential, f exgate.DepositFilter) ([]exgate.Deposit, error) {
	return nil, l.signed(cred)
}
func (l *live) DepositAddress(ctx context.Context, cred exgate.Credential, req exgate.DepositAddressRequest) (exgate.DepositAddress, error) {
	return exgate.DepositAddress{}, l.signed(cred)
}
func (l *live) Withdraw(ctx context.Context, cred exgate.Credential, req exgate.WithdrawalRequest) (exgate.Withdrawal, error) {
	return exgate.Withdrawal{}, l.signed(cred)
}
func (l *live) QueryWithdrawal(ctx context.Context, cred exgate.Credential, q exgate.WithdrawalQuery) (exgate.Withdrawal, error) {
	return exgate.Withdrawal{}, l.signed(cred)
}

// store is the sim memory ledger plus the paper keys it knows.
type store struct {
	*sim.MemoryLedger
	creds []exgate.Credential
}

func (s *store) PaperCredentialsResting(ctx context.Context, exchange string) ([]exgate.Credential, error) {
	var out []exgate.Credential
	for _, c := range s.creds {
		open, err := s.SimOpenOperations(ctx, c.ID)
		if err != nil {
			return nil, err
		}
		if c.Paper && c.Exchange == exchange && len(open) > 0 {
			out = append(out, c)
		}
	}
	return out, nil
}

// clock is a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type env struct {
	ex    *paper.Exchange
	live  *live
	store *store
	clock *clock
	cred  exgate.Credential
}

func newEnv(t *testing.T, balances string) *env {
	t.Helper()
	bals, err := exgate.ParsePaperBalances(balances)
	if err != nil {
		t.Fatal(err)
	}
	l := &live{t: t}
	l.setBook(
		[][2]string{{"99.00", "1"}, {"98.00", "2"}},
		[][2]string{{"101.00", "1"}, {"102.00", "2"}, {"105.00", "0.5"}},
	)
	st := &store{MemoryLedger: sim.NewMemoryLedger()}
	clk := &clock{now: time.UnixMilli(1_700_000_000_000)}
	cred := exgate.Credential{ID: 7, ClientAPIKey: "bot", Name: "rehearsal", Exchange: "binance", Paper: true, PaperBalances: bals,
		Permissions: []exgate.Permission{exgate.PermissionTrade}}
	st.creds = append(st.creds, cred)
	ex := paper.New(paper.Options{Live: l, Wallet: sim.New(sim.Options{Ledger: st, Now: clk.Now}), Store: st, Now: clk.Now})
	t.Cleanup(func() {
		if len(l.keyed) > 0 {
			t.Errorf("the real exchange received key material for a paper key: %v", l.keyed)
		}
	})
	return &env{ex: ex, live: l, store: st, clock: clk, cred: cred}
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// balances reads the paper balances as "ASSET available/locked".
func (e *env) balances(t *testing.T) map[string][2]string {
	t.Helper()
	bs, err := e.ex.Balances(t.Context(), e.cred)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][2]string{}
	for _, b := range bs {
		out[b.Asset] = [2]string{b.Available.String(), b.Locked.String()}
	}
	return out
}

func (e *env) checkBalance(t *testing.T, asset, available, locked string) {
	t.Helper()
	got := e.balances(t)[asset]
	if !dec(got[0]).Equal(dec(available)) || !dec(cmpOr(got[1], "0")).Equal(dec(locked)) {
		t.Errorf("%s balance = %s available, %s locked; want %s, %s", asset, got[0], got[1], available, locked)
	}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

var btcusdt = exgate.Symbol{Base: "BTC", Quote: "USDT"}

func TestMarketOrdersWalkTheLiveBook(t *testing.T) {
	for _, tc := range []struct {
		name                        string
		side                        exgate.Side
		qty                         string
		in                          exgate.QuantityIn
		status                      exgate.OrderStatus
		executed, quote, fee, feeIn string
		usdt, btc                   string // balances after, from USDT 1000, BTC 2
	}{
		// 1 BTC at 101 and 0.5 at 102: 152 USDT, fee 0.2% of 1.5 BTC.
		{"buy base across two levels", exgate.SideBuy, "1.5", exgate.InBase, exgate.OrderFilled, "1.5", "152", "0.003", "BTC", "848", "3.497"},
		// 250 USDT: 1 at 101 (101 left: 149), then floor(149/102 by 0.001) = 1.460 at 102 = 148.92.
		{"buy quote", exgate.SideBuy, "250", exgate.InQuote, exgate.OrderFilled, "2.46", "249.92", "0.00492", "BTC", "750.08", "4.45508"},
		// The book holds 3.5 BTC of asks: a 5 BTC buy takes them and expires.
		{"buy more than the book", exgate.SideBuy, "5", exgate.InBase, exgate.OrderExpired, "3.5", "357.5", "0.007", "BTC", "642.5", "5.493"},
		// 1 at 99 and 0.2 at 98: 118.6 USDT, fee 0.2% of it in USDT.
		{"sell base", exgate.SideSell, "1.2", exgate.InBase, exgate.OrderFilled, "1.2", "118.6", "0.2372", "USDT", "1118.3628", "0.8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, "USDT=1000,BTC=2")
			o, err := e.ex.PlaceMarketOrder(t.Context(), e.cred, exgate.OrderRequest{Symbol: btcusdt, Side: tc.side,
				Quantity: dec(tc.qty), QuantityIn: tc.in, ClientOrderID: "m1"})
			if err != nil {
				t.Fatal(err)
			}
			if o.Status != tc.status || !o.ExecutedQuantity.Equal(dec(tc.executed)) || !o.QuoteQuantity.Equal(dec(tc.quote)) ||
				!o.Fees.Equal(dec(tc.fee)) || o.FeesIn != tc.feeIn || !o.Paper || o.Exchange != "binance" {
				t.Fatalf("order = %+v executed %v quote %v fee %v", o, o.ExecutedQuantity, o.QuoteQuantity, o.Fees)
			}
			// The average price lies within the levels it consumed.
			avg := o.AveragePrice.Decimal
			lo, hi := dec("101"), dec("105")
			if tc.side == exgate.SideSell {
				lo, hi = dec("98"), dec("99")
			}
			if avg.LessThan(lo) || avg.GreaterThan(hi) {
				t.Errorf("average price %s outside the consumed levels %s..%s", avg, lo, hi)
			}
			e.checkBalance(t, "USDT", tc.usdt, "0")
			e.checkBalance(t, "BTC", tc.btc, "0")
			got, err := e.ex.QueryOrder(t.Context(), e.cred, exgate.OrderQuery{ClientOrderID: "m1"})
			if err != nil || got.Status != o.Status {
				t.Errorf("QueryOrder = %+v, %v", got, err)
			}
		})
	}
}

func TestMarketOrderRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  exgate.OrderRequest
		code exgate.Code
	}{
		{"below the minimum notional", exgate.OrderRequest{Symbol: btcusdt, Side: exgate.SideBuy, Quantity: dec("4"), QuantityIn: exgate.InQuote}, exgate.CodeQuantityTooSmall},
		{"below the minimum quantity", exgate.OrderRequest{Symbol: btcusdt, Side: exgate.SideBuy, Quantity: dec("0.0009"), QuantityIn: exgate.InBase}, exgate.CodeQuantityTooSmall},
		{"more than the account holds", exgate.OrderRequest{Symbol: btcusdt, Side: exgate.SideSell, Quantity: dec("3"), QuantityIn: exgate.InBase}, exgate.CodeInsufficientFunds},
		{"unknown pair", exgate.OrderRequest{Symbol: exgate.Symbol{Base: "DOGE", Quote: "USDT"}, Side: exgate.SideBuy, Quantity: dec("1"), QuantityIn: exgate.InBase}, exgate.CodeUnknownSymbol},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, "USDT=1000,BTC=2")
			tc.req.ClientOrderID = "r1"
			_, err := e.ex.PlaceMarketOrder(t.Context(), e.cred, tc.req)
			if ee, ok := errors.AsType[*exgate.Error](err); !ok || ee.Code != tc.code {
				t.Fatalf("error = %v, want %s", err, tc.code)
			}
			e.checkBalance(t, "USDT", "1000", "0")
			e.checkBalance(t, "BTC", "2", "0")
		})
	}
}

func limit(side exgate.Side, qty, price string, tif exgate.TimeInForce, postOnly bool, cid string) exgate.LimitOrderRequest {
	return exgate.LimitOrderRequest{Symbol: btcusdt, Side: side, Quantity: dec(qty), Price: dec(price), TimeInForce: tif, PostOnly: postOnly, ClientOrderID: cid}
}

func TestLimitOrdersAtPlacement(t *testing.T) {
	for _, tc := range []struct {
		name             string
		req              exgate.LimitOrderRequest
		status           exgate.OrderStatus
		executed         string
		usdtAvail, usdtL string
		code             exgate.Code
	}{
		// Crosses 101 (1 BTC) and 102 (0.5 of 2): taker fills at the book's prices; nothing rests.
		{name: "crossing buy fills at once", req: limit(exgate.SideBuy, "1.5", "102.00", exgate.GTC, false, "l1"),
			status: exgate.OrderFilled, executed: "1.5", usdtAvail: "1260", usdtL: "0"},
		// Holds 412; takes 1 at 101 and 2 at 102 (releasing 4 of the hold); the
		// rest (1 BTC at 103) rests holding 103 USDT.
		{name: "partly crossing buy rests", req: limit(exgate.SideBuy, "4", "103.00", exgate.GTC, false, "l2"),
			status: exgate.OrderPartiallyFilled, executed: "3", usdtAvail: "1004", usdtL: "103"},
		{name: "IOC rest expires", req: limit(exgate.SideBuy, "4", "103.00", exgate.IOC, false, "l3"),
			status: exgate.OrderExpired, executed: "3", usdtAvail: "1107", usdtL: "0"},
		{name: "FOK that cannot fill expires with nothing", req: limit(exgate.SideBuy, "4", "103.00", exgate.FOK, false, "l4"),
			status: exgate.OrderExpired, executed: "0", usdtAvail: "1412", usdtL: "0"},
		{name: "resting buy below the book", req: limit(exgate.SideBuy, "2", "100.00", exgate.GTC, false, "l5"),
			status: exgate.OrderPending, executed: "0", usdtAvail: "1212", usdtL: "200"},
		{name: "postOnly that would take is refused", req: limit(exgate.SideBuy, "1", "101.00", exgate.GTC, true, "l6"),
			code: exgate.CodeOrderRejected, usdtAvail: "1412", usdtL: "0"},
		{name: "price off the tick", req: limit(exgate.SideBuy, "1", "100.001", exgate.GTC, false, "l7"),
			code: exgate.CodeInvalidParameter, usdtAvail: "1412", usdtL: "0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, "USDT=1412,BTC=2")
			o, err := e.ex.PlaceLimitOrder(t.Context(), e.cred, tc.req)
			if tc.code != "" {
				if ee, ok := errors.AsType[*exgate.Error](err); !ok || ee.Code != tc.code {
					t.Fatalf("error = %v, want %s", err, tc.code)
				}
				e.checkBalance(t, "USDT", tc.usdtAvail, tc.usdtL)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.Status != tc.status || !o.ExecutedQuantity.Equal(dec(tc.executed)) || !o.Paper {
				t.Fatalf("order status %s executed %s, want %s %s", o.Status, o.ExecutedQuantity, tc.status, tc.executed)
			}
			if tc.name == "crossing buy fills at once" {
				// 1 at 101, 0.5 at 102, taker fee 0.2% in BTC.
				e.checkBalance(t, "BTC", "3.497", "0")
			}
			e.checkBalance(t, "USDT", tc.usdtAvail, tc.usdtL)
		})
	}
}

func TestRestingOrderFillsWhenTheLiveBookCrossesIt(t *testing.T) {
	e := newEnv(t, "USDT=1000,BTC=2")
	ctx := t.Context()
	o, err := e.ex.PlaceLimitOrder(ctx, e.cred, limit(exgate.SideBuy, "3", "100.00", exgate.GTC, false, "rest"))
	if err != nil || o.Status != exgate.OrderPending {
		t.Fatalf("place: %+v, %v", o, err)
	}
	e.checkBalance(t, "USDT", "700", "300")

	// The book does not cross: nothing fills.
	e.clock.Advance(time.Second)
	if err := e.ex.CheckResting(ctx); err != nil {
		t.Fatal(err)
	}
	if o, _ := e.ex.QueryOrder(ctx, e.cred, exgate.OrderQuery{ClientOrderID: "rest"}); o.Status != exgate.OrderPending {
		t.Fatalf("filled without a cross: %+v", o)
	}

	// The asks move down across 100 with 1.2 BTC at or below it: a
	// partial maker fill at the order's own price.
	e.live.setBook([][2]string{{"98.00", "1"}}, [][2]string{{"99.50", "0.7"}, {"100.00", "0.5"}, {"100.50", "9"}})
	e.clock.Advance(time.Second)
	if err := e.ex.CheckResting(ctx); err != nil {
		t.Fatal(err)
	}
	o, _ = e.ex.QueryOrder(ctx, e.cred, exgate.OrderQuery{ClientOrderID: "rest"})
	if o.Status != exgate.OrderPartiallyFilled || !o.ExecutedQuantity.Equal(dec("1.2")) || !o.AveragePrice.Equal(dec("100")) {
		t.Fatalf("after the cross: %s executed %s avg %s", o.Status, o.ExecutedQuantity, o.AveragePrice)
	}
	// Maker fee 0.1% of 1.2 BTC; 120 USDT spent from the hold.
	e.checkBalance(t, "BTC", "3.1988", "0")
	e.checkBalance(t, "USDT", "700", "180")

	// A check within the same second takes nothing more.
	e.clock.Advance(500 * time.Millisecond)
	if err := e.ex.CheckResting(ctx); err != nil {
		t.Fatal(err)
	}
	if o, _ := e.ex.QueryOrder(ctx, e.cred, exgate.OrderQuery{ClientOrderID: "rest"}); !o.ExecutedQuantity.Equal(dec("1.2")) {
		t.Fatalf("filled twice within a second: executed %s", o.ExecutedQuantity)
	}

	// A second later the book still crosses with more: the rest fills.
	e.live.setBook([][2]string{{"98.00", "1"}}, [][2]string{{"99.00", "5"}})
	e.clock.Advance(time.Second)
	if err := e.ex.CheckResting(ctx); err != nil {
		t.Fatal(err)
	}
	o, _ = e.ex.QueryOrder(ctx, e.cred, exgate.OrderQuery{ClientOrderID: "rest"})
	if o.Status != exgate.OrderFilled || !o.ExecutedQuantity.Equal(dec("3")) {
		t.Fatalf("after the second cross: %s executed %s", o.Status, o.ExecutedQuantity)
	}
	e.checkBalance(t, "USDT", "700", "0")
	e.checkBalance(t, "BTC", "4.997", "0")
	fills, err := e.ex.Fills(ctx, e.cred, exgate.OrderFilter{Symbol: btcusdt})
	if err != nil || len(fills) != 2 || !fills[0].Maker || !fills[0].Paper || fills[0].ID != "rest.2" {
		t.Fatalf("fills = %+v, %v", fills, err)
	}
	if open, _ := e.ex.OpenOrders(ctx, e.cred, exgate.OrderFilter{}); len(open) != 0 {
		t.Errorf("open after the fill: %v", open)
	}
}

func TestCancelReleasesTheHold(t *testing.T) {
	e := newEnv(t, "USDT=1000")
	ctx := t.Context()
	if _, err := e.ex.PlaceLimitOrder(ctx, e.cred, limit(exgate.SideBuy, "2", "100.00", exgate.GTC, false, "c1")); err != nil {
		t.Fatal(err)
	}
	e.checkBalance(t, "USDT", "800", "200")
	o, err := e.ex.CancelOrder(ctx, e.cred, exgate.CancelRequest{ClientOrderID: "c1"})
	if err != nil || o.Status != exgate.OrderCanceled {
		t.Fatalf("cancel: %+v, %v", o, err)
	}
	e.checkBalance(t, "USDT", "1000", "0")
	if again, err := e.ex.CancelOrder(ctx, e.cred, exgate.CancelRequest{ClientOrderID: "c1"}); err != nil || again.Status != exgate.OrderCanceled {
		t.Fatalf("second cancel: %+v, %v", again, err)
	}
	e.checkBalance(t, "USDT", "1000", "0")
	recent, err := e.ex.RecentOrders(ctx, e.cred, exgate.OrderFilter{Symbol: btcusdt})
	if err != nil || len(recent) != 1 || recent[0].Status != exgate.OrderCanceled {
		t.Fatalf("recent = %+v, %v", recent, err)
	}
}

func TestTestOrderChecksWithoutPlacing(t *testing.T) {
	e := newEnv(t, "USDT=100")
	ctx := t.Context()
	o, err := e.ex.TestOrder(ctx, e.cred, exgate.TestOrderRequest{Market: &exgate.OrderRequest{Symbol: btcusdt, Side: exgate.SideBuy,
		Quantity: dec("50"), QuantityIn: exgate.InQuote, ClientOrderID: "t1"}})
	if err != nil || o.Status != exgate.OrderTest || !o.Paper {
		t.Fatalf("test order: %+v, %v", o, err)
	}
	_, err = e.ex.TestOrder(ctx, e.cred, exgate.TestOrderRequest{Limit: ptr(limit(exgate.SideBuy, "2", "100.00", exgate.GTC, false, "t2"))})
	if ee, ok := errors.AsType[*exgate.Error](err); !ok || ee.Code != exgate.CodeInsufficientFunds {
		t.Fatalf("test order beyond the balance: %v", err)
	}
	e.checkBalance(t, "USDT", "100", "0")
	if recent, _ := e.ex.RecentOrders(ctx, e.cred, exgate.OrderFilter{Symbol: btcusdt}); len(recent) != 0 {
		t.Errorf("a test order was recorded: %v", recent)
	}
}

func ptr[T any](v T) *T { return &v }

func TestRealKeysPassThrough(t *testing.T) {
	e := newEnv(t, "USDT=0")
	real := exgate.Credential{ID: 8, Name: "live", Exchange: "binance", Key: "k", Secret: "s"}
	if _, err := e.ex.PlaceMarketOrder(t.Context(), real, exgate.OrderRequest{Symbol: btcusdt, Side: exgate.SideBuy,
		Quantity: dec("1"), QuantityIn: exgate.InBase, ClientOrderID: "x"}); err == nil || e.live.orders != 1 {
		t.Fatalf("a real key's order did not reach the real exchange: %v, %d calls", err, e.live.orders)
	}
	// Its market data is the real exchange's too, with its key.
	if _, err := e.ex.OrderBook(t.Context(), real, exgate.OrderBookRequest{Symbol: btcusdt, Limit: 5}); err != nil {
		t.Fatal(err)
	}
	// A paper key given key material never passes it on.
	leaky := e.cred
	leaky.Key, leaky.Secret = "should-not", "travel"
	if _, err := e.ex.OrderBook(t.Context(), leaky, exgate.OrderBookRequest{Symbol: btcusdt, Limit: 5}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ex.PlaceMarketOrder(t.Context(), leaky, exgate.OrderRequest{Symbol: btcusdt, Side: exgate.SideBuy,
		Quantity: dec("0.1"), QuantityIn: exgate.InBase, ClientOrderID: "y"}); err == nil {
		t.Fatal("a paper order beyond the (empty) balance was placed")
	}
}

func TestOrderStreamOfAPaperKey(t *testing.T) {
	e := newEnv(t, "USDT=1000")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	got := make(chan exgate.Order, 16)
	done := make(chan error, 1)
	go func() { done <- e.ex.WatchOrders(ctx, e.cred, func(o exgate.Order) { got <- o }) }()
	// The stream is live once a placement reaches it; keep placing until
	// one does (the first may come before the stream listens, and is then
	// found by the stream's first scan of the open orders).
	if _, err := e.ex.PlaceLimitOrder(ctx, e.cred, limit(exgate.SideBuy, "1", "100.00", exgate.GTC, false, "s1")); err != nil {
		t.Fatal(err)
	}
	first := <-got
	if first.ClientOrderID != "s1" || first.Status != exgate.OrderPending || !first.Paper {
		t.Fatalf("first = %+v", first)
	}
	if _, err := e.ex.CancelOrder(ctx, e.cred, exgate.CancelRequest{ClientOrderID: "s1"}); err != nil {
		t.Fatal(err)
	}
	for o := range got {
		if o.ClientOrderID == "s1" && o.Status == exgate.OrderCanceled {
			break
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// The switch hides no ability of the real adapter behind it.
func TestSwitchHidesNoAbility(t *testing.T) {
	e := newEnv(t, "")
	if fs, ok := exgate.Ability[exgate.FeeSchedule](e.ex); !ok || !fs.StandardFees().Taker.Equal(dec("0.002")) {
		t.Errorf("the real adapter's fee schedule is hidden (%v)", ok)
	}
	if e.ex.Fees().Taker.String() != "0.002" {
		t.Errorf("paper fees %+v, want the real adapter's", e.ex.Fees())
	}
}

// A paper key has sim's two wallets; a real key of an exchange with one
// wallet has none to transfer between, and is told so naming the wallet
// parameter that is not spot.
func TestPaperTransfers(t *testing.T) {
	e := newEnv(t, "USDT=1000")
	ctx := t.Context()
	if _, ok := exgate.TransfersFor(e.ex, e.cred); !ok {
		t.Fatal("a paper key has no transfers")
	}
	tr, err := e.ex.Transfer(ctx, e.cred, exgate.TransferRequest{Asset: "USDT", Amount: dec("400"),
		From: exgate.WalletSpot, To: exgate.WalletFunding, ClientTransferID: "t1"})
	if err != nil || tr.Exchange != "binance" || tr.Status != exgate.TransferCompleted {
		t.Fatalf("transfer = %+v, %v", tr, err)
	}
	e.checkBalance(t, "USDT", "600", "0")
	funding, err := e.ex.WalletBalances(ctx, e.cred, exgate.WalletFunding)
	if err != nil || len(funding) != 1 || !funding[0].Available.Equal(dec("400")) {
		t.Fatalf("funding wallet = %+v, %v", funding, err)
	}
	real := exgate.Credential{ID: 9, Name: "live", Exchange: "binance", Key: "k", Secret: "s"}
	if _, ok := exgate.TransfersFor(e.ex, real); ok {
		t.Error("a real key of an exchange with one wallet has transfers")
	}
	_, err = e.ex.Transfer(ctx, real, exgate.TransferRequest{Asset: "USDT", Amount: dec("1"), From: exgate.WalletFunding, To: exgate.WalletSpot})
	if ee, ok := errors.AsType[*exgate.Error](err); !ok || ee.Code != exgate.CodeInvalidParameter || ee.Param != "from" {
		t.Errorf("real key's transfer: %v, want INVALID_PARAMETER naming from", err)
	}
}
