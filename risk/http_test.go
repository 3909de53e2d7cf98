package risk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/api"
	"github.com/exgate/exgate/client"
	"github.com/exgate/exgate/exchange/binance"
	"github.com/exgate/exgate/exchange/binance/binancefake"
	"github.com/exgate/exgate/exchange/sim"
	"github.com/exgate/exgate/httpapi"
	"github.com/exgate/exgate/journal"
	"github.com/exgate/exgate/localstate"
	"github.com/exgate/exgate/metrics"
	"github.com/exgate/exgate/risk"
	"github.com/exgate/exgate/sqlite"
	"github.com/exgate/exgate/stream"
)

const (
	fakeKey    = "binance-api-key"
	fakeSecret = "binance-api-secret"
	apiKey     = "client-key"
	ethAddress = "0x52908400098527886E0F7030069857D2E4169EE7"
)

// gateway is the HTTP API with the risk engine and the journal in front
// of one exchange: sim, or Binance's fake.
type gateway struct {
	t    testing.TB
	st   exgate.Store
	cl   *client.Client
	cred exgate.Credential
	// sent counts what reached the exchange: orders and withdrawals.
	sent func() int
	// exact: the exchange's book does not move, so a band edge is known.
	exact bool
	// metrics count the refusals.
	metrics *metrics.Metrics
	// fake is Binance's fake (nil on sim); hub the stream hub the risk
	// engine reads books from (gatewayOptions.books).
	fake *binancefake.Server
	hub  *stream.Hub
}

// refused is what the metrics counted of refusals of limit.
func (g *gateway) refused(limit string) float64 {
	g.t.Helper()
	fams, err := g.metrics.Registry().Gather()
	if err != nil {
		g.t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != "exgate_risk_refusals_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "limit" && l.GetValue() == limit {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// waitAudit waits until the audit trail holds a request refused with code.
func (g *gateway) waitAudit(code string) {
	g.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		entries, err := g.st.AuditLog(g.t.Context(), exgate.AuditFilter{APIKey: apiKey})
		if err != nil {
			g.t.Fatal(err)
		}
		for _, e := range entries {
			if e.Actor == exgate.AuditActorAPI && e.Code == code && e.Status == 403 {
				return
			}
		}
		if time.Now().After(deadline) {
			g.t.Fatalf("no %s refusal in the audit trail: %+v", code, entries)
		}
		tick := time.NewTimer(10 * time.Millisecond)
		<-tick.C
	}
}

func newGateway(t testing.TB, exchange string) *gateway {
	t.Helper()
	return newGatewayWith(t, exchange, gatewayOptions{})
}

// gatewayOptions are a gateway's extras.
type gatewayOptions struct {
	// books: the risk engine reads books from a stream hub on the
	// exchange's streams, and runs (with Poll at 10 ms); limits are the
	// key's limits, set before the engine starts.
	books  bool
	limits exgate.RiskLimits
}

func newGatewayWith(t testing.TB, exchange string, opts gatewayOptions) *gateway {
	t.Helper()
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "exgate.db"), bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	g := &gateway{t: t, st: st}
	var ex exgate.Exchange
	cred := exgate.Credential{ClientAPIKey: apiKey, Name: "main", Exchange: exchange,
		Permissions: []exgate.Permission{exgate.PermissionRead, exgate.PermissionTrade, exgate.PermissionWithdraw}}
	switch exchange {
	case "binance":
		fake := binancefake.New(binancefake.Options{WeightLimit: -1})
		t.Cleanup(fake.Close)
		fake.AddAccount(binancefake.Account{APIKey: fakeKey, Secret: fakeSecret, Balances: map[string]string{"BTC": "3", "USDT": "250000"}})
		ex = binance.New(binance.Options{BaseURL: fake.URL, HTTPClient: fake.Client(), Limiter: localstate.NewLimiter(time.Now), RetryBackoff: time.Millisecond,
			StreamURL: fake.WSURL(), WSAPIURL: fake.WSURL() + "/ws-api/v3", StreamBackoffMin: 5 * time.Millisecond, StreamBackoffMax: 20 * time.Millisecond})
		cred.Key, cred.Secret = fakeKey, fakeSecret
		g.fake = fake
		g.sent = func() int { return fake.OrderCount(fakeKey) + fake.Requests("/sapi/v1/capital/withdraw/apply") }
		g.exact = true
	default:
		ex = sim.New(sim.Options{Ledger: st})
		// What sim was asked to do is in its ledger: an order placed
		// leaves an operation (a fill, or the hold of a resting order).
		g.sent = func() int {
			n := 0
			for _, k := range []exgate.IntentKind{exgate.IntentOrder, exgate.IntentWithdrawal} {
				ops, err := st.SimOperations(ctx, g.cred.ID, k, 0)
				if err != nil {
					t.Fatal(err)
				}
				n += len(ops)
			}
			return n
		}
	}
	exchanges := map[string]exgate.Exchange{exchange: ex}
	ropts := risk.Options{Store: st, Poll: time.Nanosecond}
	if opts.books {
		g.hub = stream.New(stream.Options{Exchanges: exchanges})
		ropts.Books, ropts.Poll = g.hub, 10*time.Millisecond
	}
	eng := risk.New(ropts)
	g.metrics = metrics.New()
	riskMetrics := g.metrics.Risk(eng.HaltCount)
	srv := httpapi.New(httpapi.Config{
		Keys:        st,
		Exchanges:   exchanges,
		Ledger:      journal.New(journal.Options{Store: st, Exchanges: exchanges}),
		Replay:      localstate.NewReplayGuard(time.Now),
		Limiter:     localstate.NewLimiter(time.Now),
		OpenAPI:     api.Spec(),
		Risk:        eng,
		RiskMetrics: riskMetrics,
		Audit:       st,
		// Keys and credentials are read afresh for each request.
		KeyCacheTTL: time.Nanosecond,
	})
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	if err := st.CreateClientKey(ctx, exgate.ClientKey{APIKey: apiKey, Secret: "client-secret", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if g.cred, err = st.AddCredential(ctx, cred); err != nil {
		t.Fatal(err)
	}
	if opts.books {
		if _, err := st.SetRiskLimits(ctx, apiKey, opts.limits, nil); err != nil {
			t.Fatal(err)
		}
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); eng.Run(runCtx) }()
		t.Cleanup(func() { stop(); <-done })
	}
	g.cl = client.New(hs.URL, apiKey, "client-secret", "main", client.WithHTTPClient(hs.Client()))
	return g
}

// journaled counts the orders and withdrawals the journal recorded.
func (g *gateway) journaled() int {
	g.t.Helper()
	n := 0
	for _, k := range []exgate.IntentKind{exgate.IntentOrder, exgate.IntentWithdrawal} {
		its, err := g.st.RecentIntents(g.t.Context(), g.cred.ID, k, 0)
		if err != nil {
			g.t.Fatal(err)
		}
		n += len(its)
	}
	return n
}

type reply struct {
	status int
	body   map[string]any
	raw    string
}

func (g *gateway) call(method, path string, kv ...string) reply {
	g.t.Helper()
	var ps []client.Param
	for i := 0; i+1 < len(kv); i += 2 {
		ps = append(ps, client.Param{Name: kv[i], Value: kv[i+1]})
	}
	status, body, err := g.cl.Do(g.t.Context(), method, path, ps)
	if err != nil && status == 0 {
		g.t.Fatalf("%s %s: %v", method, path, err)
	}
	r := reply{status: status, raw: string(body)}
	_ = json.Unmarshal(body, &r.body)
	return r
}

func (g *gateway) setLimits(l exgate.RiskLimits) {
	g.t.Helper()
	if _, err := g.st.SetRiskLimits(g.t.Context(), apiKey, l, nil); err != nil {
		g.t.Fatal(err)
	}
}

// mid reads the BTC/USDT mid price through the API.
func (g *gateway) mid() decimal.Decimal {
	g.t.Helper()
	r := g.call("GET", "/v1/market/order-book", "asset1", "BTC", "asset2", "USDT", "limit", "5")
	if r.status != 200 {
		g.t.Fatalf("order book: %d %s", r.status, r.raw)
	}
	var b exgate.OrderBook
	if err := json.Unmarshal([]byte(r.raw), &b); err != nil {
		g.t.Fatal(err)
	}
	bid := decimal.RequireFromString(b.Bids[0].Price)
	ask := decimal.RequireFromString(b.Asks[0].Price)
	return bid.Add(ask).Div(decimal.NewFromInt(2))
}

func usd(s string) *decimal.Decimal {
	d := decimal.RequireFromString(s)
	return &d
}

func count(n int64) *int64 { return &n }

// limitBuy is a resting limit buy of BTC/USDT at price worth about
// notional USDT.
func limitBuy(price decimal.Decimal, qty string, extra ...string) []string {
	return append([]string{"asset1", "BTC", "asset2", "USDT", "side", "BUY", "quantity", qty, "price", price.String()}, extra...)
}

// TestLimits: each limit refuses the order or withdrawal that would pass
// it, with the problem the contract fixes (docs/contract.md 2.8), before
// anything reaches the exchange; without the check the request would be
// accepted (the cases before each refusal show the same route accepting).
func TestLimits(t *testing.T) {
	for _, exchange := range []string{"sim", "binance"} {
		t.Run(exchange, func(t *testing.T) {
			tests := []struct {
				name   string
				limits exgate.RiskLimits
				// before runs accepted requests first; it returns the refused request.
				run func(g *gateway, low decimal.Decimal) reply
				// want: the problem's code, limit, value and max ("" when absent).
				code, limit, value, max string
				// sentBefore is how many orders reached the exchange before the refusal.
				sentBefore int
			}{
				{
					name: "symbols", limits: exgate.RiskLimits{Symbols: []exgate.Symbol{{Base: "ETH", Quote: "USDT"}}},
					run: func(g *gateway, low decimal.Decimal) reply {
						return g.call("POST", "/v1/order/limit", limitBuy(low, "0.001")...)
					},
					code: "RISK_LIMIT_EXCEEDED", limit: "symbols", value: "BTC/USDT",
				},
				{
					name: "maxOrderNotional limit", limits: exgate.RiskLimits{MaxOrderNotional: usd("50")},
					run: func(g *gateway, low decimal.Decimal) reply {
						return g.call("POST", "/v1/order/limit", limitBuy(low, "0.001")...)
					},
					code: "RISK_LIMIT_EXCEEDED", limit: "maxOrderNotional", value: "low*0.001", max: "50",
				},
				{
					name: "maxOrderNotional market in quote", limits: exgate.RiskLimits{MaxOrderNotional: usd("50")},
					run: func(g *gateway, low decimal.Decimal) reply {
						return g.call("POST", "/v1/order/market", "asset1", "BTC", "asset2", "USDT", "side", "BUY", "quantity", "50.01", "quantityIn", "USDT")
					},
					code: "RISK_LIMIT_EXCEEDED", limit: "maxOrderNotional", value: "50.01", max: "50",
				},
				{
					name: "maxOrderNotional test order", limits: exgate.RiskLimits{MaxOrderNotional: usd("50")},
					run: func(g *gateway, low decimal.Decimal) reply {
						return g.call("POST", "/v1/order/limit", limitBuy(low, "0.001", "test", "true")...)
					},
					code: "RISK_LIMIT_EXCEEDED", limit: "maxOrderNotional", value: "low*0.001", max: "50",
				},
				{
					name: "priceBand", limits: exgate.RiskLimits{PriceBand: usd("5")},
					run: func(g *gateway, low decimal.Decimal) reply {
						// low is 90% of the mid: a sell there is 10% below it.
						return g.call("POST", "/v1/order/limit", "asset1", "BTC", "asset2", "USDT", "side", "SELL", "quantity", "0.001", "price", low.String())
					},
					code: "RISK_LIMIT_EXCEEDED", limit: "priceBand", value: "low", max: "mid*0.95",
				},
				{
					name: "maxOpenOrders", limits: exgate.RiskLimits{MaxOpenOrders: count(1)},
					run: func(g *gateway, low decimal.Decimal) reply {
						if r := g.call("POST", "/v1/order/limit", limitBuy(low, "0.001")...); r.status != 200 {
							g.t.Fatalf("first order: %d %s", r.status, r.raw)
						}
						return g.call("POST", "/v1/order/limit", limitBuy(low, "0.001")...)
					},
					code: "RISK_LIMIT_EXCEEDED", limit: "maxOpenOrders", value: "2", max: "1", sentBefore: 1,
				},
				{
					name: "dailyNotional", limits: exgate.RiskLimits{DailyNotional: usd("100")},
					run: func(g *gateway, low decimal.Decimal) reply {
						if r := g.call("POST", "/v1/order/limit", limitBuy(low, "0.001")...); r.status != 200 {
							g.t.Fatalf("first order: %d %s", r.status, r.raw)
						}
						return g.call("POST", "/v1/order/limit", limitBuy(low, "0.001")...)
					},
					code: "RISK_LIMIT_EXCEEDED", limit: "dailyNotional", value: "low*0.002", max: "100", sentBefore: 1,
				},
				{
					name: "dailyWithdrawal", limits: exgate.RiskLimits{DailyWithdrawal: usd("100")},
					run: func(g *gateway, low decimal.Decimal) reply {
						return g.call("POST", "/v1/wallet/withdraw", "asset", "USDT", "network", "ETH", "address", ethAddress, "amount", "100.5")
					},
					code: "RISK_LIMIT_EXCEEDED", limit: "dailyWithdrawal", value: "100.5", max: "100",
				},
				{
					name: "halted",
					run: func(g *gateway, low decimal.Decimal) reply {
						if err := g.st.HaltTrading(g.t.Context(), exgate.RiskHalt{APIKey: apiKey, Reason: "runaway bot"}); err != nil {
							g.t.Fatal(err)
						}
						return g.call("POST", "/v1/order/market", "asset1", "BTC", "asset2", "USDT", "side", "BUY", "quantity", "10", "quantityIn", "USDT")
					},
					code: "TRADING_HALTED",
				},
			}
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					g := newGateway(t, exchange)
					mid := g.mid()
					low := mid.Mul(decimal.RequireFromString("0.9")).Truncate(0)
					g.setLimits(tc.limits)
					r := tc.run(g, low)
					if r.status != 403 || r.body["code"] != tc.code {
						t.Fatalf("answer %d %s, want 403 %s", r.status, r.raw, tc.code)
					}
					eval := func(s string) string {
						if s == "" {
							return ""
						}
						base, factor, ok := strings.Cut(s, "*")
						var v decimal.Decimal
						switch base {
						case "low":
							v = low
						case "mid":
							v = mid
						default:
							return s
						}
						if ok {
							v = v.Mul(decimal.RequireFromString(factor))
						}
						return v.String()
					}
					if tc.code == "TRADING_HALTED" {
						if r.body["reason"] != "runaway bot" {
							t.Errorf("reason = %v, want the halt's", r.body["reason"])
						}
					} else {
						got := [3]any{r.body["limit"], r.body["value"], r.body["max"]}
						want := [3]any{tc.limit, eval(tc.value), eval(tc.max)}
						if want[2] == "" {
							want[2] = nil
						}
						if tc.max == "mid*0.95" && !g.exact {
							want[2] = got[2] // the simulated book moves with time
						}
						if got != want {
							t.Errorf("limit, value, max = %v, want %v (%s)", got, want, r.raw)
						}
					}
					if n := g.sent(); n != tc.sentBefore {
						t.Errorf("%d orders or withdrawals reached the exchange, want %d", n, tc.sentBefore)
					}
					if n := g.journaled(); n != tc.sentBefore {
						t.Errorf("%d orders or withdrawals journaled, want %d", n, tc.sentBefore)
					}
					// The refusal is counted by limit and in the audit trail.
					label := tc.limit
					if tc.code == "TRADING_HALTED" {
						label = "halted"
					}
					if n := g.refused(label); n != 1 {
						t.Errorf("refusals of %s counted %v, want 1", label, n)
					}
					g.waitAudit(tc.code)
				})
			}
		})
	}
}

// TestCancelGivesBack: a canceled order's notional and open order are
// given back, so the next order fits again.
func TestCancelGivesBack(t *testing.T) {
	g := newGateway(t, "binance")
	low := g.mid().Mul(decimal.RequireFromString("0.9")).Truncate(0)
	g.setLimits(exgate.RiskLimits{DailyNotional: usd("60"), MaxOpenOrders: count(1)})
	first := g.call("POST", "/v1/order/limit", limitBuy(low, "0.001")...)
	if first.status != 200 {
		t.Fatalf("first order: %d %s", first.status, first.raw)
	}
	if r := g.call("POST", "/v1/order/limit", limitBuy(low, "0.0001")...); r.status != 403 {
		t.Fatalf("second order before the cancel: %d %s, want 403", r.status, r.raw)
	}
	if r := g.call("POST", "/v1/order/cancel", "id", first.body["id"].(string)); r.status != 200 || r.body["status"] != "CANCELED" {
		t.Fatalf("cancel: %d %s", r.status, r.raw)
	}
	acct := g.call("GET", "/v1/account/risk")
	usage := acct.body["usage"].(map[string]any)
	if usage["dailyNotional"] != "0" || usage["openOrders"] != float64(0) || acct.body["state"] != "active" {
		t.Fatalf("account after the cancel: %s, want nothing used", acct.raw)
	}
	if r := g.call("POST", "/v1/order/limit", limitBuy(low, "0.001")...); r.status != 200 {
		t.Fatalf("order after the cancel: %d %s, want it accepted", r.status, r.raw)
	}
}

// TestConcurrentOrders: 40 orders at once, each under maxOrderNotional,
// against a daily notional that fits only some: the accepted notional
// never passes the limit, and exactly as many as fit reach the exchange.
func TestConcurrentOrders(t *testing.T) {
	for _, exchange := range []string{"sim", "binance"} {
		t.Run(exchange, func(t *testing.T) {
			g := newGateway(t, exchange)
			low := g.mid().Mul(decimal.RequireFromString("0.9")).Truncate(0)
			each := low.Mul(decimal.RequireFromString("0.001"))
			limit := each.Mul(decimal.NewFromInt(7)).Add(decimal.NewFromInt(1))
			g.setLimits(exgate.RiskLimits{MaxOrderNotional: usd("100"), DailyNotional: &limit})
			const n = 40
			replies := make([]reply, n)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range n {
				wg.Go(func() {
					<-start
					replies[i] = g.call("POST", "/v1/order/limit", limitBuy(low, "0.001", "clientOrderId", fmt.Sprintf("c-%02d", i))...)
				})
			}
			close(start)
			wg.Wait()
			accepted := 0
			for i, r := range replies {
				switch {
				case r.status == 200:
					accepted++
				case r.status == 403 && r.body["limit"] == "dailyNotional":
				default:
					t.Fatalf("order %d: %d %s", i, r.status, r.raw)
				}
			}
			if total := each.Mul(decimal.NewFromInt(int64(accepted))); total.GreaterThan(limit) || accepted != 7 {
				t.Fatalf("%d accepted (%s USD), want 7 within %s USD", accepted, total, limit)
			}
			if got := g.sent(); got != accepted {
				t.Fatalf("%d orders reached the exchange, want %d", got, accepted)
			}
		})
	}
}

// TestPriceBandFromLiveBook: with a stream hub, the price band is checked
// against the book Binance streams once the engine holds a subscription
// to it, without one REST read per order; while the stream is down the
// engine reads the book over REST again, and never a book from before
// the drop.
func TestPriceBandFromLiveBook(t *testing.T) {
	g := newGatewayWith(t, "binance", gatewayOptions{books: true, limits: exgate.RiskLimits{PriceBand: usd("5")}})
	sym := exgate.Symbol{Base: "BTC", Quote: "USDT"}
	mid := g.mid()
	depthReads := func() int { return g.fake.Requests("/api/v3/depth") }
	order := func(price decimal.Decimal) reply {
		g.t.Helper()
		return g.call("POST", "/v1/order/limit", "asset1", "BTC", "asset2", "USDT", "side", "SELL", "quantity", "0.001", "price", price.String())
	}
	low := mid.Mul(decimal.RequireFromString("0.9")) // 10 % below the mid
	inBand := mid.Mul(decimal.RequireFromString("1.01"))
	waitLive := func(want bool) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); ; {
			if _, ok := g.hub.LiveBook("binance", sym); ok == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the hub's BTC/USDT book never became live=%v", want)
			}
			time.Sleep(time.Millisecond)
		}
	}
	// The first order reads the book over REST and has the engine hold
	// the pair's stream.
	before := depthReads()
	if r := order(inBand); r.status != 200 {
		t.Fatalf("an order in the band: %d %s", r.status, r.raw)
	}
	if depthReads() == before {
		t.Fatal("the first order did not read the book over REST")
	}
	waitLive(true)
	// From the live book: no REST read, the same refusal.
	before = depthReads()
	for range 5 {
		if r := order(inBand); r.status != 200 {
			t.Fatalf("an order in the band: %d %s", r.status, r.raw)
		}
	}
	r := order(low)
	if r.status != 403 || r.body["limit"] != "priceBand" || r.body["max"] != mid.Mul(decimal.RequireFromString("0.95")).String() {
		t.Fatalf("an order 10 %% below the mid: %d %s", r.status, r.raw)
	}
	if n := depthReads() - before; n != 0 {
		t.Fatalf("%d REST reads of the book with the stream live", n)
	}
	// The stream goes down: the engine does not use the book it had.
	resume := g.fake.PauseStreams()
	waitLive(false)
	before = depthReads()
	if r := order(inBand); r.status != 200 {
		t.Fatalf("an order in the band with the stream down: %d %s", r.status, r.raw)
	}
	if depthReads() == before {
		t.Fatal("with the stream down the order was checked without reading the book")
	}
	resume()
	waitLive(true)
}
