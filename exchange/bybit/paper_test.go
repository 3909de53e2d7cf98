package bybit_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/client"
	"github.com/exgate/exgate/exchange/bybit"
	"github.com/exgate/exgate/exchange/bybit/bybitfake"
	"github.com/exgate/exgate/exchange/paper"
	"github.com/exgate/exgate/exchange/sim"
	"github.com/exgate/exgate/httpapi"
	"github.com/exgate/exgate/journal"
	"github.com/exgate/exgate/localstate"
	"github.com/exgate/exgate/sqlite"
)

// A paper key on Bybit (docs/contract.md 2.9): market data from the fake,
// orders filled by the gateway at Bybit's standard 0.1% fee, and nothing
// signed ever sent to Bybit.
func TestPaperKeyOnBybit(t *testing.T) {
	ctx := t.Context()
	fake := bybitfake.New(bybitfake.Options{})
	t.Cleanup(fake.Close)
	var mu sync.Mutex
	var signed []string
	fake.SetFault(func(r *http.Request) bybitfake.Fault {
		if r.Header.Get("X-BAPI-SIGN") != "" {
			mu.Lock()
			signed = append(signed, r.URL.Path)
			mu.Unlock()
		}
		return bybitfake.Fault{}
	})
	live := bybit.New(bybit.Options{BaseURL: fake.URL, HTTPClient: fake.Client(), Limiter: localstate.NewLimiter(time.Now)})
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "exgate.db"), bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	p := paper.New(paper.Options{Live: live, Wallet: sim.New(sim.Options{Ledger: st}), Store: st})
	exchanges := map[string]exgate.Exchange{bybit.Name: p}
	hs := httptest.NewServer(httpapi.New(httpapi.Config{Keys: st, Exchanges: exchanges,
		Ledger: journal.New(journal.Options{Store: st, Exchanges: exchanges}),
		Replay: localstate.NewReplayGuard(time.Now), Limiter: localstate.NewLimiter(time.Now)}))
	t.Cleanup(hs.Close)
	if err := st.CreateClientKey(ctx, exgate.ClientKey{APIKey: "client-key", Secret: "client-secret", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	bals, err := exgate.ParsePaperBalances("BTC=1,USDT=10000")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddCredential(ctx, exgate.Credential{ClientAPIKey: "client-key", Name: "rehearsal", Exchange: bybit.Name, Paper: true,
		PaperBalances: bals, Permissions: []exgate.Permission{exgate.PermissionRead, exgate.PermissionTrade}}); err != nil {
		t.Fatal(err)
	}
	cl := client.New(hs.URL, "client-key", "client-secret", "rehearsal")
	o, err := cl.PlaceMarketOrder(ctx, client.MarketOrder{Asset1: "BTC", Asset2: "USDT", Side: "BUY", Quantity: "0.01", QuantityIn: "BTC"})
	if err != nil {
		t.Fatal(err)
	}
	// 0.01 BTC at the fake's best ask 60000.5; the fee 0.1% of the BTC.
	if o.Status != exgate.OrderFilled || !o.Paper || num(o.AveragePrice) != "60000.5" || o.Fees == nil || !o.Fees.Equal(dec("0.00001")) {
		t.Fatalf("paper order %+v (average %s, fees %v)", o, num(o.AveragePrice), o.Fees)
	}
	if ks, err := cl.RecentKlines(ctx, client.KlinesRequest{Asset1: "BTC", Asset2: "USDT", Interval: "1h", Limit: 3}); err != nil || len(ks) != 3 {
		t.Fatalf("klines %+v, %v", ks, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(signed) > 0 || len(fake.SentOrders("any")) > 0 {
		t.Errorf("Bybit received signed requests for a paper key: %v", signed)
	}
	if fake.Requests("/v5/market/orderbook") == 0 {
		t.Error("the paper order did not read Bybit's book")
	}
}
