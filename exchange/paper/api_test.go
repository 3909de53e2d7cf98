package paper_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/api"
	"github.com/exgate/exgate/api/openapitest"
	"github.com/exgate/exgate/client"
	"github.com/exgate/exgate/exchange/binance"
	"github.com/exgate/exgate/exchange/binance/binancefake"
	"github.com/exgate/exgate/exchange/gateio"
	"github.com/exgate/exgate/exchange/gateio/gateiofake"
	"github.com/exgate/exgate/exchange/paper"
	"github.com/exgate/exgate/exchange/sim"
	"github.com/exgate/exgate/httpapi"
	"github.com/exgate/exgate/journal"
	"github.com/exgate/exgate/localstate"
	"github.com/exgate/exgate/sqlite"
)

// signedLog records the requests that reached a fake exchange carrying
// key material: a paper key must never cause one.
type signedLog struct {
	mu     sync.Mutex
	signed []string
	public int
}

func (l *signedLog) hook(isSigned func(r *http.Request) bool) func(r *http.Request) binancefake.Fault {
	return func(r *http.Request) binancefake.Fault {
		l.mu.Lock()
		defer l.mu.Unlock()
		if isSigned(r) {
			l.signed = append(l.signed, r.Method+" "+r.URL.Path)
		} else {
			l.public++
		}
		return binancefake.Fault{}
	}
}

func (l *signedLog) check(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.signed) > 0 {
		t.Errorf("the exchange received signed requests for a paper key: %v", l.signed)
	}
	if l.public == 0 {
		t.Error("the exchange received no request at all: the paper key's market data did not come from it")
	}
}

// apiEnv is the HTTP API with the journal in front of a paper switch in
// front of a real adapter pointed at its fake, with one paper key.
type apiEnv struct {
	t     *testing.T
	cl    *client.Client
	paper *paper.Exchange
	clock *clock
}

func newAPIEnv(t *testing.T, name string, live exgate.Exchange, balances string, more ...exgate.Permission) *apiEnv {
	t.Helper()
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "exgate.db"), bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	clk := &clock{now: time.Now()}
	p := paper.New(paper.Options{Live: live, Wallet: sim.New(sim.Options{Ledger: st}), Store: st, Now: clk.Now})
	exchanges := map[string]exgate.Exchange{name: p}
	srv := httpapi.New(httpapi.Config{
		Keys:      st,
		Exchanges: exchanges,
		Ledger:    journal.New(journal.Options{Store: st, Exchanges: exchanges}),
		Replay:    localstate.NewReplayGuard(time.Now),
		Limiter:   localstate.NewLimiter(time.Now),
		OpenAPI:   api.Spec(),
	})
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	if err := st.CreateClientKey(ctx, exgate.ClientKey{APIKey: "client-key", Secret: "client-secret", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	bals, err := exgate.ParsePaperBalances(balances)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddCredential(ctx, exgate.Credential{ClientAPIKey: "client-key", Name: "rehearsal", Exchange: name, Paper: true,
		PaperBalances: bals, Permissions: append([]exgate.Permission{exgate.PermissionRead, exgate.PermissionTrade}, more...)}); err != nil {
		t.Fatal(err)
	}
	// Every answer is checked against the OpenAPI document.
	hc := &http.Client{Transport: validating{t: t, v: openapitest.New(t), next: hs.Client().Transport}}
	return &apiEnv{t: t, cl: client.New(hs.URL, "client-key", "client-secret", "rehearsal", client.WithHTTPClient(hc)), paper: p, clock: clk}
}

// validating checks every answer against the OpenAPI document.
type validating struct {
	t    *testing.T
	v    *openapitest.Validator
	next http.RoundTripper
}

func (vt validating) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := vt.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	vt.v.Check(vt.t, req, resp, b)
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp, nil
}

func (a *apiEnv) call(method, path string, kv ...string) (int, []byte) {
	a.t.Helper()
	var ps []client.Param
	for i := 0; i+1 < len(kv); i += 2 {
		ps = append(ps, client.Param{Name: kv[i], Value: kv[i+1]})
	}
	status, body, err := a.cl.Do(a.t.Context(), method, path, ps)
	if err != nil && status == 0 {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	return status, body
}

func decodeOK[T any](t *testing.T, status int, body []byte) T {
	t.Helper()
	var v T
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return v
}

func (a *apiEnv) balances() map[string]exgate.Balance {
	a.t.Helper()
	status, body := a.call("GET", "/v1/wallet/account-balance")
	out := map[string]exgate.Balance{}
	for _, b := range decodeOK[[]exgate.Balance](a.t, status, body) {
		out[b.Asset] = b
	}
	return out
}

func (a *apiEnv) order(id string) exgate.Order {
	a.t.Helper()
	status, body := a.call("GET", "/v1/order", "clientOrderId", id)
	return decodeOK[exgate.Order](a.t, status, body)
}

func binanceSigned(r *http.Request) bool {
	return r.Header.Get("X-MBX-APIKEY") != "" || strings.Contains(r.URL.RawQuery, "signature=")
}

func TestPaperTradingOnTheBinanceFake(t *testing.T) {
	fake := binancefake.New(binancefake.Options{WeightLimit: -1})
	t.Cleanup(fake.Close)
	var log signedLog
	fake.SetFault(log.hook(binanceSigned))
	t.Cleanup(func() { log.check(t) })
	live := binance.New(binance.Options{BaseURL: fake.URL, HTTPClient: fake.Client(), Limiter: localstate.NewLimiter(time.Now)})
	a := newAPIEnv(t, "binance", live, "BTC=1,USDT=100000")
	if err := fake.SetBook("BTCUSDT",
		[][2]string{{"59990.00", "0.5"}, {"59980.00", "1"}},
		[][2]string{{"60010.00", "0.1"}, {"60020.00", "0.2"}, {"60050.00", "1"}}); err != nil {
		t.Fatal(err)
	}

	t.Run("market buy walks the asks", func(t *testing.T) {
		// 0.15 BTC: 0.1 at 60010, 0.05 at 60020.
		status, body := a.call("POST", "/v1/order/market", "asset1", "BTC", "asset2", "USDT", "side", "BUY",
			"quantity", "0.15", "quantityIn", "asset1", "clientOrderId", "pm-1")
		o := decodeOK[exgate.Order](t, status, body)
		if o.Status != exgate.OrderFilled || !o.Paper || o.Exchange != "binance" {
			t.Fatalf("order = %s", body)
		}
		avg := o.AveragePrice.Decimal
		if avg.LessThan(dec("60010")) || avg.GreaterThan(dec("60020")) {
			t.Errorf("average price %s outside the consumed asks 60010..60020", avg)
		}
		quote := dec("6001").Add(dec("3001")) // 0.1*60010 + 0.05*60020
		fee := dec("0.15").Mul(dec("0.001"))  // Binance's taker rate, in BTC
		if !o.QuoteQuantity.Equal(quote) || !o.Fees.Equal(fee) || o.FeesIn != "BTC" {
			t.Errorf("quote %s fee %s %s, want %s and %s BTC", o.QuoteQuantity, o.Fees, o.FeesIn, quote, fee)
		}
		b := a.balances()
		if !b["USDT"].Available.Equal(dec("100000").Sub(quote)) || !b["BTC"].Available.Equal(dec("1.15").Sub(fee)) {
			t.Errorf("balances %+v, want USDT %s and BTC %s", b, dec("100000").Sub(quote), dec("1.15").Sub(fee))
		}
	})

	t.Run("resting limit fills when the book moves across it", func(t *testing.T) {
		before := a.balances()
		status, body := a.call("POST", "/v1/order/limit", "asset1", "BTC", "asset2", "USDT", "side", "BUY",
			"quantity", "0.3", "price", "59000.00", "clientOrderId", "pl-1")
		if o := decodeOK[exgate.Order](t, status, body); o.Status != exgate.OrderPending {
			t.Fatalf("placed: %s", body)
		}
		a.clock.Advance(time.Second)
		if err := a.paper.CheckResting(t.Context()); err != nil {
			t.Fatal(err)
		}
		if o := a.order("pl-1"); o.Status != exgate.OrderPending {
			t.Fatalf("filled before the book crossed it: %+v", o)
		}
		// The asks fall to 58990 with only 0.1 BTC at or below 59000:
		// a partial fill at the order's price.
		if err := fake.SetBook("BTCUSDT", [][2]string{{"58900.00", "1"}},
			[][2]string{{"58990.00", "0.1"}, {"59100.00", "1"}}); err != nil {
			t.Fatal(err)
		}
		a.clock.Advance(time.Second)
		if err := a.paper.CheckResting(t.Context()); err != nil {
			t.Fatal(err)
		}
		o := a.order("pl-1")
		if o.Status != exgate.OrderPartiallyFilled || !o.ExecutedQuantity.Equal(dec("0.1")) || !o.AveragePrice.Equal(dec("59000")) {
			t.Fatalf("after a thin cross: %s executed %s at %s", o.Status, o.ExecutedQuantity, o.AveragePrice)
		}
		// More liquidity crosses a second later: the rest fills.
		if err := fake.SetBook("BTCUSDT", [][2]string{{"58900.00", "1"}}, [][2]string{{"58950.00", "1"}}); err != nil {
			t.Fatal(err)
		}
		a.clock.Advance(time.Second)
		if err := a.paper.CheckResting(t.Context()); err != nil {
			t.Fatal(err)
		}
		o = a.order("pl-1")
		if o.Status != exgate.OrderFilled || !o.ExecutedQuantity.Equal(dec("0.3")) {
			t.Fatalf("after the second cross: %s executed %s", o.Status, o.ExecutedQuantity)
		}
		// Balances moved by exactly quantity × price and the maker fee.
		after := a.balances()
		cost := dec("0.3").Mul(dec("59000"))
		fee := dec("0.3").Mul(dec("0.001"))
		if got := before["USDT"].Available.Sub(after["USDT"].Available); !got.Equal(cost) {
			t.Errorf("USDT moved by %s, want %s", got, cost)
		}
		if got := after["BTC"].Available.Sub(before["BTC"].Available); !got.Equal(dec("0.3").Sub(fee)) {
			t.Errorf("BTC moved by %s, want %s", got, dec("0.3").Sub(fee))
		}
		status, body = a.call("GET", "/v1/order/fills", "asset1", "BTC", "asset2", "USDT")
		fills := decodeOK[[]exgate.Fill](t, status, body)
		if len(fills) < 2 || !fills[0].Paper || !fills[0].Maker {
			t.Errorf("fills = %s", body)
		}
	})

	t.Run("test order and refusals change nothing", func(t *testing.T) {
		before := a.balances()
		status, body := a.call("POST", "/v1/order/market", "asset1", "BTC", "asset2", "USDT", "side", "BUY",
			"quantity", "100", "quantityIn", "USDT", "test", "true")
		if o := decodeOK[exgate.Order](t, status, body); o.Status != exgate.OrderTest {
			t.Fatalf("test: %s", body)
		}
		status, body = a.call("POST", "/v1/order/market", "asset1", "BTC", "asset2", "USDT", "side", "SELL",
			"quantity", "50", "quantityIn", "asset1")
		if status != http.StatusUnprocessableEntity || !strings.Contains(string(body), "INSUFFICIENT_FUNDS") {
			t.Fatalf("selling more than the paper account holds: %d %s", status, body)
		}
		after := a.balances()
		for asset, b := range before {
			if !after[asset].Available.Equal(b.Available) {
				t.Errorf("%s moved from %s to %s", asset, b.Available, after[asset].Available)
			}
		}
	})
}

func TestPaperTradingOnTheGateFake(t *testing.T) {
	fake := gateiofake.New(gateiofake.Options{NoRateLimits: true})
	t.Cleanup(fake.Close)
	var log signedLog
	fake.SetFault(log.hook(func(r *http.Request) bool { return r.Header.Get("KEY") != "" || r.Header.Get("SIGN") != "" }))
	t.Cleanup(func() { log.check(t) })
	live := gateio.New(gateio.Options{BaseURL: fake.URL, HTTPClient: fake.Client(), Limiter: localstate.NewLimiter(time.Now)})
	a := newAPIEnv(t, "gateio", live, "BTC=1,USDT=10000")
	fake.SetBook("BTC_USDT",
		[]gateiofake.Level{{Price: "59990.0", Amount: "1"}},
		[]gateiofake.Level{{Price: "60010.0", Amount: "0.01"}, {Price: "60100.0", Amount: "0.02"}})

	// A quote-amount buy larger than the book: it takes both levels and
	// the rest expires.
	status, body := a.call("POST", "/v1/order/market", "asset1", "BTC", "asset2", "USDT", "side", "BUY",
		"quantity", "5000", "quantityIn", "USDT", "clientOrderId", "pg-1")
	o := decodeOK[exgate.Order](t, status, body)
	quote := dec("0.01").Mul(dec("60010")).Add(dec("0.02").Mul(dec("60100")))
	if o.Status != exgate.OrderExpired || !o.ExecutedQuantity.Equal(dec("0.03")) || !o.QuoteQuantity.Equal(quote) || !o.Paper {
		t.Fatalf("order %s, want EXPIRED with 0.03 BTC for %s USDT", body, quote)
	}
	b := a.balances()
	if !b["USDT"].Available.Equal(dec("10000").Sub(quote)) {
		t.Errorf("USDT %s, want %s", b["USDT"].Available, dec("10000").Sub(quote))
	}
	wantFee := dec("0.03").Mul(a.paper.Fees().Taker)
	if !o.Fees.Equal(wantFee) || !b["BTC"].Available.Equal(dec("1.03").Sub(wantFee)) {
		t.Errorf("fee %s, BTC %s; want fee %s", o.Fees, b["BTC"].Available, wantFee)
	}
}

// A paper key's withdrawal is sim's: a malformed address is refused
// before anything is recorded, a good one is simulated (never sent), and
// reads back with the real exchange's name.
func TestPaperWithdrawals(t *testing.T) {
	fake := binancefake.New(binancefake.Options{WeightLimit: -1})
	t.Cleanup(fake.Close)
	var log signedLog
	fake.SetFault(log.hook(binanceSigned))
	live := binance.New(binance.Options{BaseURL: fake.URL, HTTPClient: fake.Client(), Limiter: localstate.NewLimiter(time.Now)})
	a := newAPIEnv(t, "binance", live, "BTC=1", exgate.PermissionWithdraw)
	status, body := a.call("POST", "/v1/wallet/withdraw", "asset", "BTC", "network", "BTC", "address", "not-an-address", "amount", "0.1", "clientWithdrawalId", "pw-bad")
	if status != http.StatusBadRequest || !strings.Contains(string(body), `"param":"address"`) {
		t.Fatalf("malformed address: %d %s", status, body)
	}
	if status, body := a.call("GET", "/v1/wallet/withdrawal", "clientWithdrawalId", "pw-bad"); status != http.StatusNotFound {
		t.Fatalf("the refused withdrawal was recorded: %d %s", status, body)
	}
	status, body = a.call("POST", "/v1/wallet/withdraw", "asset", "BTC", "network", "BTC",
		"address", "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", "amount", "0.1", "clientWithdrawalId", "pw-1")
	w := decodeOK[exgate.Withdrawal](t, status, body)
	if w.Exchange != "binance" || !w.Amount.Equal(dec("0.1")) {
		t.Fatalf("withdrawal %s", body)
	}
	if fake.WithdrawalsWithClientID(w.ID) != 0 {
		t.Error("a paper withdrawal reached the exchange")
	}
	status, body = a.call("GET", "/v1/wallet/recent-withdraws")
	if ws := decodeOK[[]exgate.Withdrawal](t, status, body); len(ws) != 1 || ws[0].Exchange != "binance" {
		t.Errorf("recent withdrawals %s", body)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	if len(log.signed) > 0 {
		t.Errorf("signed requests reached the exchange: %v", log.signed)
	}
}
