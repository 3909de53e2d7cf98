package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// The risk controls (exgate.RiskStore; reservations on CreateIntent,
// settlements on UpdateIntent).

func usd(s string) *decimal.Decimal {
	d := decimal.RequireFromString(s)
	return &d
}

func count(n int64) *int64 { return &n }

func (s suite) testRiskLimits(t *testing.T) {
	e := s.newEnv(t)
	ctx := t.Context()
	if err := e.CreateClientKey(ctx, exgate.ClientKey{APIKey: "k1", Secret: "s"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.SetRiskLimits(ctx, "nobody", exgate.RiskLimits{DailyNotional: usd("1")}, nil); !errors.Is(err, exgate.ErrNotFound) {
		t.Fatalf("SetRiskLimits(unknown key) = %v, want ErrNotFound", err)
	}
	got, err := e.SetRiskLimits(ctx, "k1", exgate.RiskLimits{
		Symbols: []exgate.Symbol{{Base: "BTC", Quote: "USDT"}}, MaxOrderNotional: usd("1000.50"), MaxOpenOrders: count(3),
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(got); string(b) != `{"symbols":["BTC/USDT"],"maxOrderNotional":"1000.5","maxOpenOrders":3}` {
		t.Fatalf("limits after the first set = %s", b)
	}
	got, err = e.SetRiskLimits(ctx, "k1", exgate.RiskLimits{DailyNotional: usd("0.000000001")}, []string{exgate.LimitMaxOpenOrders})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"symbols":["BTC/USDT"],"maxOrderNotional":"1000.5","dailyNotional":"0.000000001"}`
	if b, _ := json.Marshal(got); string(b) != want {
		t.Fatalf("limits after the second set = %s, want %s", b, want)
	}
	if _, err := e.SetRiskLimits(ctx, "k1", exgate.RiskLimits{PriceBand: usd("5")}, []string{"bogus"}); err == nil {
		t.Fatal("an unknown limit in clear was accepted")
	}
	all, err := e.reopen(t).AllRiskLimits(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(all["k1"]); string(b) != want || len(all) != 1 {
		t.Fatalf("AllRiskLimits = %v (k1 %s), want only k1 %s: a refused set changes nothing", all, b, want)
	}
	if _, err := e.SetRiskLimits(ctx, "k1", exgate.RiskLimits{}, exgate.RiskLimitNames); err != nil {
		t.Fatal(err)
	}
	if all, err := e.AllRiskLimits(ctx); err != nil || len(all) != 0 {
		t.Fatalf("AllRiskLimits after clearing all = %v, %v; want none", all, err)
	}
}

func (s suite) testRiskHalts(t *testing.T) {
	e := s.newEnv(t)
	ctx := t.Context()
	for _, k := range []string{"k1", "k2"} {
		if err := e.CreateClientKey(ctx, exgate.ClientKey{APIKey: k, Secret: "s"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.HaltTrading(ctx, exgate.RiskHalt{APIKey: "nobody", Reason: "x"}); !errors.Is(err, exgate.ErrNotFound) {
		t.Fatalf("HaltTrading(unknown key) = %v, want ErrNotFound", err)
	}
	if err := e.HaltTrading(ctx, exgate.RiskHalt{APIKey: "k1", Reason: "runaway bot"}); err != nil {
		t.Fatal(err)
	}
	if err := e.HaltTrading(ctx, exgate.RiskHalt{APIKey: exgate.RiskHaltAll, Reason: "incident"}); err != nil {
		t.Fatal(err)
	}
	halts, err := e.reopen(t).RiskHalts(ctx)
	if err != nil || len(halts) != 2 {
		t.Fatalf("RiskHalts = %v, %v; want 2", halts, err)
	}
	if h := exgate.HaltOf(halts, "k1"); h == nil || h.Reason != "runaway bot" {
		t.Fatalf("halt of k1 = %+v, want its own", h)
	}
	if h := exgate.HaltOf(halts, "k2"); h == nil || h.Reason != "incident" || !h.CreatedAt.Equal(startTime()) {
		t.Fatalf("halt of k2 = %+v, want the global one at %v", h, startTime())
	}
	if n, err := e.ResumeTrading(ctx, "k1"); err != nil || n != 1 {
		t.Fatalf("ResumeTrading(k1) = %d, %v; want 1", n, err)
	}
	if n, err := e.ResumeTrading(ctx, exgate.RiskHaltAll); err != nil || n != 1 {
		t.Fatalf("ResumeTrading(all) = %d, %v; want 1", n, err)
	}
	if halts, err := e.RiskHalts(ctx); err != nil || len(halts) != 0 {
		t.Fatalf("RiskHalts after resume = %v, %v; want none", halts, err)
	}
}

// riskIntent is an order intent reserving notional USD of an open order.
func riskIntent(id string, notional string, max *decimal.Decimal, maxOpen *int64) exgate.Intent {
	in := intent(id, "k1", "")
	in.Risk = &exgate.RiskReservation{
		Day: "2030-01-02", Notional: decimal.RequireFromString(notional), Quote: "USDT", QuoteUSD: decimal.NewFromInt(1),
		Open: true, Price: decimal.NewFromInt(100), MaxDailyNotional: max, MaxOpenOrders: maxOpen,
	}
	return in
}

func orderJSON(t *testing.T, status exgate.OrderStatus, qty, executed string) []byte {
	t.Helper()
	o := exgate.Order{Asset1: "BTC", Asset2: "USDT", Status: status, Type: exgate.OrderTypeLimit,
		Quantity: exgate.NewNumber(decimal.RequireFromString(qty)), Price: exgate.NumberPtr(decimal.NewFromInt(100))}
	ex := decimal.RequireFromString(executed)
	o.ExecutedQuantity = exgate.NumberPtr(ex)
	o.QuoteQuantity = exgate.NumberPtr(ex.Mul(decimal.NewFromInt(100)))
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wantUsage checks key k1's usage of 2030-01-02 (riskIntent's day).
func (e env) wantUsage(t *testing.T, wantNotional string, wantOpen int64) {
	t.Helper()
	u, err := e.RiskUsage(t.Context(), "k1", "2030-01-02")
	if err != nil {
		t.Fatal(err)
	}
	if u.DailyNotional.String() != wantNotional || u.OpenOrders != wantOpen {
		t.Fatalf("usage = %s USD, %d open; want %s, %d", u.DailyNotional, u.OpenOrders, wantNotional, wantOpen)
	}
}

func (s suite) testRiskReservations(t *testing.T) {
	e := s.newEnv(t)
	ctx := t.Context()
	usage := func(wantNotional string, wantOpen int64) { t.Helper(); e.wantUsage(t, wantNotional, wantOpen) }
	max := usd("1000")
	if err := e.CreateIntent(ctx, riskIntent("r1", "600", max, count(2))); err != nil {
		t.Fatal(err)
	}
	usage("600", 1)
	// Over the daily notional: refused, nothing recorded.
	err := e.CreateIntent(ctx, riskIntent("r2", "400.01", max, count(2)))
	if e, ok := errors.AsType[*exgate.Error](err); !ok || e.Code != exgate.CodeRiskLimitExceeded || e.Risk == nil ||
		e.Risk.Limit != exgate.LimitDailyNotional || e.Risk.Value != "1000.01" || e.Risk.Max != "1000" {
		t.Fatalf("over the daily notional: %v (%+v), want RISK_LIMIT_EXCEEDED dailyNotional 1000.01 of 1000", err, e)
	}
	if _, err := e.Intent(ctx, "r2"); !errors.Is(err, exgate.ErrNotFound) {
		t.Fatalf("a refused intent was recorded: %v", err)
	}
	usage("600", 1)
	if err := e.CreateIntent(ctx, riskIntent("r3", "400", max, count(2))); err != nil {
		t.Fatal(err)
	}
	usage("1000", 2)
	// Over the open orders.
	err = e.CreateIntent(ctx, riskIntent("r4", "0", max, count(2)))
	if e, ok := errors.AsType[*exgate.Error](err); !ok || e.Risk == nil || e.Risk.Limit != exgate.LimitMaxOpenOrders || e.Risk.Value != "3" || e.Risk.Max != "2" {
		t.Fatalf("over the open orders: %v, want maxOpenOrders 3 of 2", err)
	}
	// A duplicate id reserves nothing.
	if err := e.CreateIntent(ctx, riskIntent("r1", "1", nil, nil)); !errors.Is(err, exgate.ErrConflict) {
		t.Fatalf("duplicate = %v, want ErrConflict", err)
	}
	usage("1000", 2)

	// r1 (6 BTC at 100) fills 2 and rests: charge unchanged, still open.
	if err := e.UpdateIntent(ctx, "r1", exgate.IntentOutcome{State: exgate.IntentAccepted, Answer: exgate.AnswerRecord, Response: orderJSON(t, exgate.OrderPartiallyFilled, "6", "2")}); err != nil {
		t.Fatal(err)
	}
	usage("1000", 2)
	// An unknown outcome keeps the reservation.
	if err := e.UpdateIntent(ctx, "r3", exgate.IntentOutcome{State: exgate.IntentUnknown, Answer: exgate.AnswerPending, Response: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	usage("1000", 2)
	// r1 canceled after 2 filled: 400 of its 600 given back, no longer open.
	if err := e.UpdateIntent(ctx, "r1", exgate.IntentOutcome{State: exgate.IntentFinal, Answer: exgate.AnswerRecord, Response: orderJSON(t, exgate.OrderCanceled, "6", "2")}); err != nil {
		t.Fatal(err)
	}
	usage("600", 1)
	// r3 refused by the exchange: all of it given back.
	if err := e.UpdateIntent(ctx, "r3", exgate.IntentOutcome{State: exgate.IntentFinal, Answer: exgate.AnswerError, Response: []byte(`{"code":"ORDER_REJECTED"}`)}); err != nil {
		t.Fatal(err)
	}
	usage("200", 0)
	// Recording the same answer again changes nothing.
	if err := e.UpdateIntent(ctx, "r1", exgate.IntentOutcome{State: exgate.IntentFinal, Answer: exgate.AnswerRecord, Response: orderJSON(t, exgate.OrderCanceled, "6", "2")}); err != nil {
		t.Fatal(err)
	}
	usage("200", 0)
	// Another day starts afresh.
	if u, err := e.RiskUsage(ctx, "k1", "2030-01-03"); err != nil || !u.DailyNotional.IsZero() {
		t.Fatalf("next day's usage = %+v, %v; want zero", u, err)
	}
	// A withdrawal counts to its own figure.
	wd := intent("w1", "k1", "")
	wd.Kind = exgate.IntentWithdrawal
	wd.Risk = &exgate.RiskReservation{Day: "2030-01-02", Notional: decimal.NewFromInt(50), QuoteUSD: decimal.NewFromInt(1), MaxDailyWithdrawal: usd("60")}
	if err := e.CreateIntent(ctx, wd); err != nil {
		t.Fatal(err)
	}
	wd.ID = "w2"
	err = e.CreateIntent(ctx, wd)
	if e, ok := errors.AsType[*exgate.Error](err); !ok || e.Risk == nil || e.Risk.Limit != exgate.LimitDailyWithdrawal || e.Risk.Value != "100" {
		t.Fatalf("over the daily withdrawal: %v, want dailyWithdrawal 100", err)
	}
	if err := e.UpdateIntent(ctx, "w1", exgate.IntentOutcome{State: exgate.IntentFinal, Answer: exgate.AnswerRecord, Response: []byte(`{"status":"failed"}`)}); err != nil {
		t.Fatal(err)
	}
	if u, _ := e.RiskUsage(ctx, "k1", "2030-01-02"); !u.DailyWithdrawal.IsZero() {
		t.Fatalf("withdrawal usage after a failure = %s, want 0", u.DailyWithdrawal)
	}
	// An order of the day rests over midnight; the next day's first order
	// starts the figures afresh; the first order's cancel then frees its
	// open order but changes nothing of the new day.
	if err := e.CreateIntent(ctx, riskIntent("d1", "5", nil, nil)); err != nil {
		t.Fatal(err)
	}
	usage("205", 1)
	next := riskIntent("d2", "10", usd("10"), nil)
	next.Risk.Day = "2030-01-03"
	if err := e.CreateIntent(ctx, next); err != nil {
		t.Fatalf("the next day's first order, at its limit: %v", err)
	}
	if err := e.UpdateIntent(ctx, "d1", exgate.IntentOutcome{State: exgate.IntentFinal, Answer: exgate.AnswerRecord, Response: orderJSON(t, exgate.OrderCanceled, "0.05", "0")}); err != nil {
		t.Fatal(err)
	}
	if u, err := e.RiskUsage(ctx, "k1", "2030-01-03"); err != nil || u.DailyNotional.String() != "10" || u.OpenOrders != 1 {
		t.Fatalf("next day's usage = %+v, %v; want 10 USD and 1 open", u, err)
	}
	if u, err := e.RiskUsage(ctx, "k1", "2030-01-02"); err != nil || !u.DailyNotional.IsZero() {
		t.Fatalf("the past day's usage = %+v, %v; want none kept", u, err)
	}
}

// testRiskSettlementHint: an outcome's settlement worked out by the
// journal (IntentOutcome.Risk) is used while the intent's stored
// reservation is the one it was worked out from, and ignored once it is
// not. Each hint below says something the answer does not, so that the
// figures tell which of the two the store went by.
func (s suite) testRiskSettlementHint(t *testing.T) {
	e := s.newEnv(t)
	ctx := t.Context()
	usage := func(want string, wantOpen int64) { t.Helper(); e.wantUsage(t, want, wantOpen) }
	h1 := riskIntent("h1", "600", nil, nil)
	if err := e.CreateIntent(ctx, h1); err != nil {
		t.Fatal(err)
	}
	usage("600", 1)
	// The answer leaves 6 at 100 resting (600 charged, open); the hint,
	// from the reservation as stored, says 250 and no longer open: the
	// store takes the hint.
	rest := orderJSON(t, exgate.OrderPending, "6", "0")
	hint := exgate.RiskSettlement{Reserved: *h1.Risk, Charge: decimal.NewFromInt(250), Known: true}
	if err := e.UpdateIntent(ctx, "h1", exgate.IntentOutcome{State: exgate.IntentAccepted, Answer: exgate.AnswerRecord, Response: rest, Risk: &hint}); err != nil {
		t.Fatal(err)
	}
	usage("250", 0)
	// The stored reservation is now 250 and closed; a hint worked out from
	// the reservation as first recorded no longer holds: the answer (6
	// canceled after 1 filled: 100) settles it.
	stale := exgate.RiskSettlement{Reserved: *h1.Risk, Charge: decimal.NewFromInt(7), Known: true}
	if err := e.UpdateIntent(ctx, "h1", exgate.IntentOutcome{State: exgate.IntentFinal, Answer: exgate.AnswerRecord,
		Response: orderJSON(t, exgate.OrderCanceled, "6", "1"), Risk: &stale}); err != nil {
		t.Fatal(err)
	}
	usage("100", 0)
	// RecordOutcome takes a hint the same way.
	h2 := riskIntent("h2", "50", nil, nil)
	if err := e.CreateIntent(ctx, h2); err != nil {
		t.Fatal(err)
	}
	usage("150", 1)
	hint2 := exgate.RiskSettlement{Reserved: *h2.Risk, Charge: decimal.NewFromInt(20), Open: true, Known: true}
	if err := e.RecordOutcome(ctx, "h2", exgate.IntentOutcome{State: exgate.IntentAccepted, Answer: exgate.AnswerRecord,
		Response: orderJSON(t, exgate.OrderPending, "0.5", "0"), Risk: &hint2}); err != nil {
		t.Fatal(err)
	}
	usage("120", 1)
}

// testRiskFiguresOfTwoStores: each store writes a key's figures on the
// condition that the row still holds them as it last knew them
// (sqlstore's updateFigures); two stores on one database (two instances)
// take turns, so that each one's knowledge is stale in turn, both when
// it would let an order through that the row refuses and when it would
// refuse one that the row lets through.
func (s suite) testRiskFiguresOfTwoStores(t *testing.T) {
	e := s.newEnv(t)
	ctx := t.Context()
	a, b := e.Store, e.reopen(t)
	max := usd("1000")
	reserve := func(st exgate.Store, id, notional, wantRefusal string) {
		t.Helper()
		err := st.CreateIntent(ctx, riskIntent(id, notional, max, nil))
		if wantRefusal == "" {
			if err != nil {
				t.Fatalf("%s of %s USD: %v", id, notional, err)
			}
			return
		}
		if e, ok := errors.AsType[*exgate.Error](err); !ok || e.Risk == nil || e.Risk.Limit != exgate.LimitDailyNotional || e.Risk.Value != wantRefusal {
			t.Fatalf("%s of %s USD: %v, want dailyNotional refused at %s", id, notional, err, wantRefusal)
		}
	}
	reserve(a, "t1", "600", "")
	reserve(b, "t2", "300", "") // a's figures are stale now: 600
	reserve(a, "t3", "200", "1100")
	reserve(a, "t4", "100", "")
	reserve(b, "t5", "1", "1001") // b's are stale: 900
	// b gives t2's 300 back; a still knows 1000 and must not refuse 250.
	if err := b.UpdateIntent(ctx, "t2", exgate.IntentOutcome{State: exgate.IntentFinal, Answer: exgate.AnswerError, Response: []byte(`{"code":"ORDER_REJECTED"}`)}); err != nil {
		t.Fatal(err)
	}
	reserve(a, "t6", "250", "")
	u, err := b.RiskUsage(ctx, "k1", "2030-01-02")
	if err != nil || u.DailyNotional.String() != "950" || u.OpenOrders != 3 {
		t.Fatalf("usage = %+v, %v; want 950 USD and 3 open (t1, t4, t6)", u, err)
	}
}

// testConcurrentRiskReservations: 40 orders of 30 USD each on two
// instances against a daily notional of 500: exactly 16 are reserved,
// whatever the interleaving.
func (s suite) testConcurrentRiskReservations(t *testing.T) {
	e := s.newEnv(t)
	ctx := t.Context()
	stores := []exgate.Store{e.Store, e.reopen(t)}
	const n = 40
	errs := make([]error, n)
	var wg sync.WaitGroup
	ready := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-ready
			errs[i] = stores[i%2].CreateIntent(ctx, riskIntent(fmt.Sprintf("c%02d", i), "30", usd("500"), nil))
		})
	}
	close(ready)
	wg.Wait()
	accepted := 0
	for i, err := range errs {
		if err == nil {
			accepted++
			continue
		}
		if e, ok := errors.AsType[*exgate.Error](err); !ok || e.Code != exgate.CodeRiskLimitExceeded {
			t.Fatalf("order %d: %v, want nil or RISK_LIMIT_EXCEEDED", i, err)
		}
	}
	u, err := e.RiskUsage(ctx, "k1", "2030-01-02")
	if err != nil {
		t.Fatal(err)
	}
	if accepted != 16 || u.DailyNotional.String() != "480" || u.OpenOrders != 16 {
		t.Fatalf("accepted %d, usage %s USD and %d open; want 16, 480 and 16", accepted, u.DailyNotional, u.OpenOrders)
	}
}
