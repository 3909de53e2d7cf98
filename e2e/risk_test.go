package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/client"
	"github.com/exgate/exgate/exchange/binance/binancefake"
)

// riskDeployment is a deployment whose Binance URL is a fake with the
// given accounts (API key = secret = name), and two instances.
func riskDeployment(t *testing.T, accounts ...string) (*deployment, []*instance, *binancefake.Server) {
	t.Helper()
	fake := binancefake.New(binancefake.Options{WeightLimit: -1})
	t.Cleanup(fake.Close)
	for _, a := range accounts {
		fake.AddAccount(binancefake.Account{APIKey: a, Secret: a, Balances: map[string]string{"BTC": "10", "USDT": "1000000"}})
	}
	d := newDeployment(t, "EXGATE_BINANCE_URL="+fake.URL, "EXGATE_BINANCE_WS_URL="+fake.WSURL(), "EXGATE_BINANCE_WS_API_URL="+fake.WSURL()+"/ws-api/v3")
	return d, d.startN(2, "--client-rate-limit", "0"), fake
}

// restingBuy is a limit buy of 0.001 BTC at 54000 USDT (54 USD), below the
// fake's mid of 60000, so that it rests.
func restingBuy(ref string) client.LimitOrder {
	return client.LimitOrder{Asset1: "BTC", Asset2: "USDT", Side: "BUY", Quantity: "0.001", Price: "54000", ClientOrderID: ref}
}

// TestScaleOutRiskLimits: 40 orders of 54 USD at once, half on each
// instance, against a daily notional of 500 USD: exactly 9 are accepted
// and reach the exchange, whatever the interleaving; a cancel gives its
// share back on either instance.
func TestScaleOutRiskLimits(t *testing.T) {
	d, insts, fake := riskDeployment(t, "acct")
	key := d.createKey("risk")
	d.addExchangeKey(key.APIKey, "main", "binance", "--key", "acct", "--secret", "acct", "--permissions", "read,trade")
	d.admin("risk", "set", "--api-key", key.APIKey, "--max-order-notional", "100", "--daily-notional", "500")
	clients := []*client.Client{insts[0].client(key, "main"), insts[1].client(key, "main")}
	ctx := t.Context()
	// The limits hold on every instance within a second: wait until a
	// test order over maxOrderNotional is refused on both.
	for _, c := range clients {
		waitUntil(t, 2*time.Second, func() bool {
			o := restingBuy("")
			o.Quantity, o.Test = "0.002", true
			_, err := c.PlaceLimitOrder(ctx, o)
			return problemCode(err) == "RISK_LIMIT_EXCEEDED"
		})
	}

	const n = 40
	errs := make([]error, n)
	orders := make([]exgate.Order, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			orders[i], errs[i] = clients[i%2].PlaceLimitOrder(ctx, restingBuy(fmt.Sprintf("c-%02d", i)))
		})
	}
	close(start)
	wg.Wait()
	var accepted []exgate.Order
	for i, err := range errs {
		switch problemCode(err) {
		case "":
			accepted = append(accepted, orders[i])
		case "RISK_LIMIT_EXCEEDED":
			ce := err.(*client.Error)
			if ce.Limit != "dailyNotional" || ce.Max != "500" {
				t.Errorf("order %d refused by %s (value %s, max %s), want dailyNotional of 500", i, ce.Limit, ce.Value, ce.Max)
			}
			if v := decimal.RequireFromString(ce.Value); v.LessThanOrEqual(decimal.NewFromInt(500)) {
				t.Errorf("order %d refused at %s, within the limit", i, v)
			}
		default:
			t.Fatalf("order %d: %v", i, err)
		}
	}
	notional := decimal.NewFromInt(54).Mul(decimal.NewFromInt(int64(len(accepted))))
	if notional.GreaterThan(decimal.NewFromInt(500)) || len(accepted) != 9 {
		t.Fatalf("%d orders accepted (%s USD); want 9, at most 500 USD", len(accepted), notional)
	}
	if got := fake.OrderCount("acct"); got != len(accepted) {
		t.Fatalf("%d orders reached the exchange, want the %d accepted", got, len(accepted))
	}
	a, err := clients[1].AccountRisk(ctx)
	if err != nil || a.Usage.DailyNotional != "486" || a.Usage.OpenOrders != 9 {
		t.Fatalf("usage = %+v, %v; want 486 USD and 9 open", a.Usage, err)
	}

	// A cancel on one instance gives its share back on the other.
	if _, err := clients[0].CancelOrder(ctx, client.OrderRef{ID: accepted[0].ID}); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	// The canceled order's outcome, and with it its share, is committed
	// just after the cancel's answer (docs/orders.md, docs/risk.md): the
	// other instance sees it once that commit is in.
	for deadline := time.Now().Add(10 * time.Second); ; {
		a, err := clients[1].AccountRisk(ctx)
		if err == nil && a.Usage.DailyNotional == "432" && a.Usage.OpenOrders == 8 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("usage after the cancel = %+v, %v; want 432 USD and 8 open", a.Usage, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := clients[1].PlaceLimitOrder(ctx, restingBuy("after-cancel")); err != nil {
		t.Fatalf("an order after the cancel: %v, want it accepted", err)
	}
	if _, err := clients[0].PlaceLimitOrder(ctx, restingBuy("over-again")); problemCode(err) != "RISK_LIMIT_EXCEEDED" {
		t.Fatalf("the next order: %v, want RISK_LIMIT_EXCEEDED", err)
	}
}

// TestScaleOutKillSwitch: halt --cancel-open while orders rest on two
// exchange keys of one client key: every one is canceled, new orders are
// refused on both instances within a second of the halt, another key
// trades on, and after resume the key trades again.
func TestScaleOutKillSwitch(t *testing.T) {
	d, insts, fake := riskDeployment(t, "bot-a1", "bot-a2", "bot-b")
	bot := d.createKey("bot")
	other := d.createKey("other")
	d.addExchangeKey(bot.APIKey, "a1", "binance", "--key", "bot-a1", "--secret", "bot-a1", "--permissions", "read,trade")
	d.addExchangeKey(bot.APIKey, "a2", "binance", "--key", "bot-a2", "--secret", "bot-a2", "--permissions", "read,trade")
	d.addExchangeKey(other.APIKey, "b", "binance", "--key", "bot-b", "--secret", "bot-b", "--permissions", "read,trade")
	ctx := t.Context()
	for i, name := range []string{"a1", "a2", "a1", "a2"} {
		if _, err := insts[i%2].client(bot, name).PlaceLimitOrder(ctx, restingBuy(fmt.Sprintf("rest-%d", i))); err != nil {
			t.Fatalf("resting order %d: %v", i, err)
		}
	}
	if _, err := insts[0].client(other, "b").PlaceLimitOrder(ctx, restingBuy("other-rest")); err != nil {
		t.Fatal(err)
	}

	// Watch both instances with test orders (nothing is placed) while the
	// halt runs: each must refuse within a second of the halt.
	type seen struct {
		at   time.Time
		body string
	}
	refused := make([]seen, 2)
	var refusedMu sync.Mutex // the watchers write refused, the test reads it
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i, inst := range insts {
		c := inst.client(bot, "a1")
		wg.Go(func() {
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for {
				o := restingBuy("")
				o.Test = true
				_, err := c.PlaceLimitOrder(ctx, o)
				if problemCode(err) == "TRADING_HALTED" {
					refusedMu.Lock()
					refused[i] = seen{time.Now(), err.(*client.Error).Reason}
					refusedMu.Unlock()
					return
				}
				select {
				case <-stop:
					return
				case <-tick.C:
				}
			}
		})
	}
	out := d.admin("risk", "halt", "--api-key", bot.APIKey, "--cancel-open", "--reason", "runaway bot")
	var printed struct {
		State    string `json:"state"`
		Canceled int    `json:"canceled"`
	}
	if err := json.Unmarshal(out, &printed); err != nil || printed.State != "halted" || printed.Canceled != 4 {
		t.Fatalf("risk halt printed %s (%v); want halted and 4 canceled", out, err)
	}
	waitUntil(t, 5*time.Second, func() bool {
		refusedMu.Lock()
		defer refusedMu.Unlock()
		return !refused[0].at.IsZero() && !refused[1].at.IsZero()
	})
	close(stop)
	wg.Wait()
	var haltedAt time.Time
	var entries []struct {
		Time   time.Time `json:"time"`
		Action string    `json:"action"`
	}
	for line := range strings.SplitSeq(strings.TrimSpace(string(d.admin("audit", "--api-key", bot.APIKey))), "\n") {
		var e struct {
			Time   time.Time `json:"time"`
			Action string    `json:"action"`
		}
		if err := json.Unmarshal([]byte(line), &e); err == nil {
			entries = append(entries, e)
			if e.Action == "risk halt" {
				haltedAt = e.Time
			}
		}
	}
	if haltedAt.IsZero() {
		t.Fatalf("no risk halt in the audit trail: %+v", entries)
	}
	for i, s := range refused {
		if lag := s.at.Sub(haltedAt); lag > time.Second {
			t.Errorf("instance %d refused %s after the halt, want within 1s", i, lag)
		}
		if s.body != "runaway bot" {
			t.Errorf("instance %d: reason %q, want the halt's", i, s.body)
		}
	}
	for _, acct := range []string{"bot-a1", "bot-a2"} {
		if n := fake.OpenOrderCount(acct); n != 0 {
			t.Errorf("%d orders still open on %s after halt --cancel-open", n, acct)
		}
	}
	for _, inst := range insts {
		if _, err := inst.client(bot, "a2").PlaceLimitOrder(ctx, restingBuy("")); problemCode(err) != "TRADING_HALTED" {
			t.Errorf("an order of the halted key on %s: %v, want TRADING_HALTED", inst.name, err)
		}
		// Reads and cancels still work.
		if _, err := inst.client(bot, "a2").OpenOrders(ctx, "BTC", "USDT"); err != nil {
			t.Errorf("a read of the halted key on %s: %v", inst.name, err)
		}
		if _, err := inst.client(other, "b").PlaceLimitOrder(ctx, restingBuy("")); err != nil {
			t.Errorf("an order of another key on %s: %v, want it accepted", inst.name, err)
		}
	}
	if n := fake.OpenOrderCount("bot-b"); n != 3 {
		t.Errorf("the other key has %d open orders, want its 3", n)
	}

	d.admin("risk", "resume", "--api-key", bot.APIKey)
	for _, inst := range insts {
		c := inst.client(bot, "a1")
		waitUntil(t, 2*time.Second, func() bool {
			o := restingBuy("")
			o.Test = true
			_, err := c.PlaceLimitOrder(ctx, o)
			return err == nil
		})
		if _, err := c.PlaceLimitOrder(ctx, restingBuy("")); err != nil {
			t.Errorf("an order after resume on %s: %v", inst.name, err)
		}
	}
}
