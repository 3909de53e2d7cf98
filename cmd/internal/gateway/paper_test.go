package gateway

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/client"
	"github.com/exgate/exgate/exchange/binance/binancefake"
)

// TestPaperKeyThroughTheGateway: a paper key on Binance, through the
// gateway as Build wires it (coalescing on, the paper switch in front):
// its market order fills from the fake's book, its balances are the
// simulated ones, and the fake sees public market-data calls only.
func TestPaperKeyThroughTheGateway(t *testing.T) {
	ctx := t.Context()
	bf := binancefake.New(binancefake.Options{WeightLimit: -1})
	t.Cleanup(bf.Close)
	var (
		mu     sync.Mutex
		signed []string
		public int
	)
	bf.SetFault(func(r *http.Request) binancefake.Fault {
		mu.Lock()
		defer mu.Unlock()
		if r.Header.Get("X-MBX-APIKEY") != "" || strings.Contains(r.URL.RawQuery, "signature=") {
			signed = append(signed, r.Method+" "+r.URL.Path)
		} else {
			public++
		}
		return binancefake.Fault{}
	})
	fs, cfg := NewFlagSet("serve", func(name string) string {
		return map[string]string{"EXGATE_DATA_DIR": t.TempDir(), "EXGATE_BINANCE_URL": bf.URL}[name]
	}, io.Discard, true)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	st, err := OpenStore(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	state, err := OpenState(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { state.Close() })
	if err := st.CreateClientKey(ctx, exgate.ClientKey{APIKey: "bot", Secret: "bot-secret"}); err != nil {
		t.Fatal(err)
	}
	bals, _ := exgate.ParsePaperBalances("BTC=0,USDT=1000")
	if _, err := st.AddCredential(ctx, exgate.Credential{ClientAPIKey: "bot", Name: "rehearsal", Exchange: "binance", Paper: true,
		PaperBalances: bals, Permissions: []exgate.Permission{exgate.PermissionTrade}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddCredential(ctx, exgate.Credential{ClientAPIKey: "bot", Name: "kr", Exchange: "kraken", Key: "k", Secret: "c2VjcmV0",
		Permissions: []exgate.Permission{exgate.PermissionTrade}}); err != nil {
		t.Fatal(err)
	}
	g, err := Build(cfg, st, state, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(g.API)
	t.Cleanup(hs.Close)
	cl := client.New(hs.URL, "bot", "bot-secret", "rehearsal", client.WithHTTPClient(hs.Client()))
	call := func(method, path string, kv ...string) []byte {
		t.Helper()
		var ps []client.Param
		for i := 0; i+1 < len(kv); i += 2 {
			ps = append(ps, client.Param{Name: kv[i], Value: kv[i+1]})
		}
		status, body, err := cl.Do(ctx, method, path, ps)
		if err != nil || status != http.StatusOK {
			t.Fatalf("%s %s: %d %s %v", method, path, status, body, err)
		}
		return body
	}
	var o exgate.Order
	if err := json.Unmarshal(call("POST", "/v1/order/market", "asset1", "BTC", "asset2", "USDT", "side", "BUY",
		"quantity", "100", "quantityIn", "USDT"), &o); err != nil {
		t.Fatal(err)
	}
	if !o.Paper || o.Status != exgate.OrderFilled || !o.QuoteQuantity.IsPositive() || o.Exchange != "binance" {
		t.Fatalf("paper market order = %+v", o)
	}
	var bs []exgate.Balance
	if err := json.Unmarshal(call("GET", "/v1/wallet/account-balance"), &bs); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, b := range bs {
		got[b.Asset] = b.Available.String()
	}
	if want := "1000"; got["USDT"] == want || got["BTC"] == "" {
		t.Errorf("paper balances after a buy = %v", got)
	}
	// The paper key has sim's two wallets.
	var tr exgate.Transfer
	if err := json.Unmarshal(call("POST", "/v1/wallet/transfer", "asset", "USDT", "amount", "100", "from", "spot", "to", "funding"), &tr); err != nil {
		t.Fatal(err)
	}
	if tr.Status != exgate.TransferCompleted || tr.Exchange != "binance" {
		t.Errorf("paper transfer = %+v", tr)
	}
	if err := json.Unmarshal(call("GET", "/v1/wallet/account-balance", "wallet", "funding"), &bs); err != nil || len(bs) != 1 || bs[0].Available.String() != "100" {
		t.Errorf("paper funding wallet = %+v, %v", bs, err)
	}
	// Bad transfer input on a paper key is refused by sim's rules before
	// anything is recorded.
	status, body, _ := cl.Do(ctx, "POST", "/v1/wallet/transfer", []client.Param{{Name: "asset", Value: "ZZZ"}, {Name: "amount", Value: "1"},
		{Name: "from", Value: "spot"}, {Name: "to", Value: "funding"}, {Name: "clientTransferId", Value: "bad-1"}})
	if status != http.StatusBadRequest || !strings.Contains(string(body), `"param":"asset"`) {
		t.Errorf("paper transfer of an unknown asset = %d %s, want 400 naming asset", status, body)
	}
	if status, body, _ := cl.Do(ctx, "GET", "/v1/wallet/transfer", []client.Param{{Name: "clientTransferId", Value: "bad-1"}}); status != http.StatusNotFound {
		t.Errorf("the refused paper transfer was recorded: %d %s", status, body)
	}
	// A real Kraken key behind its paper switch still has one wallet: 400
	// naming the wallet that is not spot, and nothing recorded.
	kr := client.New(hs.URL, "bot", "bot-secret", "kr", client.WithHTTPClient(hs.Client()))
	status, body, _ = kr.Do(ctx, "POST", "/v1/wallet/transfer", []client.Param{{Name: "asset", Value: "USDT"}, {Name: "amount", Value: "1"},
		{Name: "from", Value: "spot"}, {Name: "to", Value: "funding"}, {Name: "clientTransferId", Value: "kr-1"}})
	if status != http.StatusBadRequest || !strings.Contains(string(body), `"param":"to"`) {
		t.Errorf("Kraken transfer = %d %s, want 400 naming to", status, body)
	}
	if status, body, _ := kr.Do(ctx, "GET", "/v1/wallet/transfer", []client.Param{{Name: "clientTransferId", Value: "kr-1"}}); status != http.StatusNotFound {
		t.Errorf("the refused Kraken transfer was recorded: %d %s", status, body)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(signed) > 0 || public == 0 {
		t.Errorf("the exchange saw signed requests %v and %d public ones; want none and some", signed, public)
	}
}
