package binance_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/api"
	"github.com/exgate/exgate/api/openapitest"
	"github.com/exgate/exgate/client"
	"github.com/exgate/exgate/exchange/binance"
	"github.com/exgate/exgate/exchange/binance/binancefake"
	"github.com/exgate/exgate/httpapi"
	"github.com/exgate/exgate/journal"
	"github.com/exgate/exgate/localstate"
	"github.com/exgate/exgate/sqlite"
)

// transferGateway is the HTTP API with the journal in front of the
// Binance adapter pointed at the fake, the journal on a clock the test
// moves and the adapter giving up on Binance after callTimeout, so that a
// slow answer is an unknown outcome.
type transferGateway struct {
	*apiGateway
	jr    *journal.Service
	shift atomic.Int64
	// url and hc reach the gateway, for clients on other exchange keys.
	url string
	hc  *http.Client
}

const transferCallTimeout = 300 * time.Millisecond

func newTransferGateway(t *testing.T) *transferGateway {
	t.Helper()
	ctx := t.Context()
	fake := binancefake.New(binancefake.Options{WeightLimit: -1})
	t.Cleanup(fake.Close)
	fake.AddAccount(binancefake.Account{APIKey: fakeKey, Secret: fakeSecret,
		Balances: map[string]string{"BTC": "3", "USDT": "250000"}, Funding: map[string]string{"USDT": "100"}})
	hc := fake.Client()
	hc.Timeout = transferCallTimeout
	ex := binance.New(binance.Options{BaseURL: fake.URL, HTTPClient: hc, Limiter: localstate.NewLimiter(time.Now), RetryBackoff: time.Millisecond})
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "exgate.db"), bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	g := &transferGateway{}
	now := func() time.Time { return time.Now().Add(time.Duration(g.shift.Load())) }
	exchanges := map[string]exgate.Exchange{binance.Name: ex}
	g.jr = journal.New(journal.Options{Store: st, Exchanges: exchanges, Now: now, NotFoundGrace: time.Minute})
	srv := httpapi.New(httpapi.Config{
		Keys: st, Exchanges: exchanges, Ledger: g.jr, OpenAPI: api.Spec(),
		Replay: localstate.NewReplayGuard(time.Now), Limiter: localstate.NewLimiter(time.Now),
	})
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	if err := st.CreateClientKey(ctx, exgate.ClientKey{APIKey: "client-key", Secret: "client-secret", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	for name, perms := range map[string][]exgate.Permission{
		"main":      {exgate.PermissionRead, exgate.PermissionTrade},
		"read-only": {exgate.PermissionRead},
	} {
		if _, err := st.AddCredential(ctx, exgate.Credential{ClientAPIKey: "client-key", Name: name, Exchange: binance.Name,
			Key: fakeKey, Secret: fakeSecret, Permissions: perms}); err != nil {
			t.Fatal(err)
		}
	}
	vc := &http.Client{Transport: validating{t: t, v: openapitest.New(t), next: hs.Client().Transport}}
	g.url, g.hc = hs.URL, vc
	g.apiGateway = &apiGateway{t: t, fake: fake, cl: client.New(hs.URL, "client-key", "client-secret", "main", client.WithHTTPClient(vc))}
	return g
}

func (g *transferGateway) transfer(asset, amount, from, to, ref string) reply {
	g.t.Helper()
	kv := []string{"asset", asset, "amount", amount, "from", from, "to", to}
	if ref != "" {
		kv = append(kv, "clientTransferId", ref)
	}
	return g.call("POST", "/v1/wallet/transfer", kv...)
}

// wallet reads one wallet's balances by asset.
func (g *transferGateway) wallet(w string) map[string]string {
	g.t.Helper()
	out := map[string]string{}
	for _, b := range decode[[]exgate.Balance](g.t, g.call("GET", "/v1/wallet/account-balance", "wallet", w)) {
		out[b.Asset] = b.Available.String()
	}
	return out
}

func TestTransfersThroughTheAPI(t *testing.T) {
	g := newTransferGateway(t)

	out := decode[exgate.Transfer](t, g.transfer("BTC", "1.25", "spot", "funding", "fund-1"))
	if out.Status != exgate.TransferCompleted || out.ClientTransferID != "fund-1" || out.ID == "fund-1" || out.ExchangeID == "" ||
		out.From != exgate.WalletSpot || out.To != exgate.WalletFunding || !out.Amount.Equal(decimal.RequireFromString("1.25")) {
		t.Fatalf("spot to funding: %+v", out)
	}
	if p := g.fake.LastParams("POST", "/sapi/v1/asset/transfer"); p.Get("type") != "MAIN_FUNDING" || p.Get("asset") != "BTC" || p.Get("amount") != "1.25" {
		t.Errorf("sent %v", p)
	}
	if spot, funding := g.wallet("spot"), g.wallet("funding"); spot["BTC"] != "1.75" || funding["BTC"] != "1.25" || funding["USDT"] != "100" {
		t.Fatalf("after spot to funding: spot %v funding %v", spot, funding)
	}
	back := decode[exgate.Transfer](t, g.transfer("BTC", "0.25", "FUNDING", "Spot", ""))
	if back.Status != exgate.TransferCompleted || back.ClientTransferID != back.ID || back.From != exgate.WalletFunding {
		t.Fatalf("funding to spot: %+v", back)
	}
	if p := g.fake.LastParams("POST", "/sapi/v1/asset/transfer"); p.Get("type") != "FUNDING_MAIN" {
		t.Errorf("sent %v", p)
	}
	if spot, funding := g.wallet("spot"), g.wallet("funding"); spot["BTC"] != "2" || funding["BTC"] != "1" {
		t.Fatalf("after funding to spot: spot %v funding %v", spot, funding)
	}
	// The default wallet is spot.
	if bals := decode[[]exgate.Balance](t, g.call("GET", "/v1/wallet/account-balance")); len(bals) != 2 || bals[0].Asset != "BTC" || bals[0].Available.String() != "2" {
		t.Errorf("balances without wallet: %+v", bals)
	}

	// History: both, newest first, Binance's ids; the asset filter.
	hist := decode[[]exgate.Transfer](t, g.call("GET", "/v1/wallet/transfers", "asset", "BTC"))
	if len(hist) != 2 || hist[0].ExchangeID != back.ExchangeID || hist[1].ExchangeID != out.ExchangeID {
		t.Fatalf("history %+v", hist)
	}
	if none := decode[[]exgate.Transfer](t, g.call("GET", "/v1/wallet/transfers", "asset", "ETH")); len(none) != 0 {
		t.Errorf("ETH history %+v", none)
	}
	// Lookup by either id.
	byRef := decode[exgate.Transfer](t, g.call("GET", "/v1/wallet/transfer", "clientTransferId", "fund-1"))
	byID := decode[exgate.Transfer](t, g.call("GET", "/v1/wallet/transfer", "id", out.ID))
	if byRef.ID != out.ID || byID.ClientTransferID != "fund-1" || byRef.ExchangeID != out.ExchangeID {
		t.Fatalf("lookup: %+v %+v", byRef, byID)
	}

	// Idempotency: the same client id again is one exchange call.
	calls := g.fake.TransferCalls()
	again := decode[exgate.Transfer](t, g.transfer("BTC", "1.25", "spot", "funding", "fund-1"))
	if again.ID != out.ID || g.fake.TransferCalls() != calls {
		t.Fatalf("the same id again: %+v after %d more exchange calls", again, g.fake.TransferCalls()-calls)
	}
	problem(t, g.transfer("BTC", "2", "spot", "funding", "fund-1"), http.StatusConflict, exgate.CodeIdempotencyConflict, "")
	if g.fake.TransferCalls() != calls {
		t.Fatalf("a conflicting reuse reached the exchange")
	}
}

func TestTransferRefusals(t *testing.T) {
	g := newTransferGateway(t)
	calls := g.fake.TransferCalls()
	for _, tc := range []struct {
		name   string
		kv     []string
		status int
		code   exgate.Code
		param  string
	}{
		{"missing amount", []string{"asset", "BTC", "from", "spot", "to", "funding"}, 400, exgate.CodeInvalidParameter, "amount"},
		{"negative amount", []string{"asset", "BTC", "amount", "-1", "from", "spot", "to", "funding"}, 400, exgate.CodeInvalidParameter, "amount"},
		{"zero amount", []string{"asset", "BTC", "amount", "0", "from", "spot", "to", "funding"}, 400, exgate.CodeInvalidParameter, "amount"},
		{"unknown wallet", []string{"asset", "BTC", "amount", "1", "from", "margin", "to", "funding"}, 400, exgate.CodeInvalidParameter, "from"},
		{"missing to", []string{"asset", "BTC", "amount", "1", "from", "spot"}, 400, exgate.CodeInvalidParameter, "to"},
		{"same wallet", []string{"asset", "BTC", "amount", "1", "from", "spot", "to", "spot"}, 400, exgate.CodeInvalidParameter, "to"},
		{"unknown asset", []string{"asset", "NOSUCHCOIN", "amount", "1", "from", "spot", "to", "funding"}, 400, exgate.CodeInvalidParameter, "asset"},
		{"unknown parameter", []string{"asset", "BTC", "amount", "1", "from", "spot", "to", "funding", "network", "BTC"}, 400, exgate.CodeInvalidParameter, "network"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			problem(t, g.call("POST", "/v1/wallet/transfer", tc.kv...), tc.status, tc.code, tc.param)
		})
	}
	if n := g.fake.TransferCalls(); n != calls {
		t.Errorf("%d refused transfers reached Binance", n-calls)
	}
	// More than the wallet holds: Binance refuses it (-5013), nothing moves.
	problem(t, g.transfer("BTC", "3.5", "spot", "funding", ""), http.StatusUnprocessableEntity, exgate.CodeInsufficientFunds, "amount")
	problem(t, g.transfer("USDT", "100.01", "funding", "spot", ""), http.StatusUnprocessableEntity, exgate.CodeInsufficientFunds, "amount")
	if spot, funding := g.wallet("spot"), g.wallet("funding"); spot["BTC"] != "3" || len(funding) != 1 || funding["USDT"] != "100" {
		t.Fatalf("after refusals: spot %v funding %v", spot, funding)
	}
	problem(t, g.call("GET", "/v1/wallet/account-balance", "wallet", "margin"), 400, exgate.CodeInvalidParameter, "wallet")
	problem(t, g.call("GET", "/v1/wallet/transfer", "clientTransferId", "nothing"), 404, exgate.CodeNotFound, "")

	// Transfers need the trade permission.
	ro := client.New(g.url, "client-key", "client-secret", "read-only", client.WithHTTPClient(g.hc))
	status, body, _ := ro.Do(t.Context(), "POST", "/v1/wallet/transfer", []client.Param{{Name: "asset", Value: "BTC"}, {Name: "amount", Value: "1"}, {Name: "from", Value: "spot"}, {Name: "to", Value: "funding"}})
	problem(t, reply{status, body}, http.StatusForbidden, exgate.CodePermissionDenied, "")
}

// TestTransferFaults sends one transfer per fault Binance can answer
// with: the adapter giving up before Binance executes it (timeout), after
// (accept then timeout), a reset before it is read, the answer lost after
// it executed, and a 5xx. Each answer is 504 with the pending transfer; the
// same client id again sends nothing; the reads then reconcile each from
// Binance's history to what Binance holds: never two transfers, never a
// lost one.
func TestTransferFaults(t *testing.T) {
	g := newTransferGateway(t)
	cases := []struct {
		name     string
		amount   string
		fault    binancefake.Fault
		executed bool
	}{
		{"timeout", "0.011", binancefake.Fault{Delay: 2 * transferCallTimeout, Status: 503, Body: `{"code":-1008,"msg":"busy"}`}, false},
		{"accept then timeout", "0.012", binancefake.Fault{Delay: 2 * transferCallTimeout}, true},
		{"reset", "0.013", binancefake.Fault{Drop: true}, false},
		{"answer lost", "0.014", binancefake.Fault{DropAfter: true}, true},
		{"5xx", "0.015", binancefake.Fault{Status: 502, Body: `<html>Bad Gateway</html>`}, false},
	}
	ids := map[string]string{}
	for _, tc := range cases {
		ref := "fault-" + tc.amount
		fault := tc.fault
		g.fake.SetFault(func(r *http.Request) binancefake.Fault {
			if r.Method == http.MethodPost && r.URL.Path == "/sapi/v1/asset/transfer" {
				return fault
			}
			return binancefake.Fault{}
		})
		calls := g.fake.Requests("/sapi/v1/asset/transfer")
		r := g.transfer("BTC", tc.amount, "spot", "funding", ref)
		var p struct {
			Code     exgate.Code      `json:"code"`
			ID       string           `json:"id"`
			Transfer *exgate.Transfer `json:"transfer"`
		}
		_ = json.Unmarshal(r.body, &p)
		if r.status != http.StatusGatewayTimeout || p.Code != exgate.CodeExchangeTimeout || p.Transfer == nil ||
			p.Transfer.Status != exgate.TransferPending || p.Transfer.ClientTransferID != ref || p.ID != p.Transfer.ID {
			t.Fatalf("%s: answer %d %s, want 504 with the pending transfer", tc.name, r.status, r.body)
		}
		ids[ref] = p.ID
		g.fake.SetFault(nil)
		if n := g.fake.Requests("/sapi/v1/asset/transfer") - calls; n != 1 {
			t.Errorf("%s: %d calls to Binance's transfer path, want the one", tc.name, n)
		}
		// Another transfer of the same asset and amount is refused
		// while this one's outcome is unknown, and nothing is sent.
		problem(t, g.transfer("BTC", tc.amount, "spot", "funding", ref+"-other"), http.StatusConflict, exgate.CodeTransferInFlight, "")
		if tc.executed {
			// Wait for a slow request to land in the fake, as it
			// would on Binance after its client gave up.
			deadline := time.Now().Add(10 * time.Second)
			for g.fake.TransfersOf(fakeKey, "BTC", tc.amount) == 0 && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
		}
		// A retry with the same id sends nothing again (it reads the
		// history instead).
		posts := g.fake.TransferCallsOf("BTC", tc.amount)
		g.transfer("BTC", tc.amount, "spot", "funding", ref)
		if n := g.fake.TransferCallsOf("BTC", tc.amount); n != posts || n > 1 {
			t.Errorf("%s: %d transfers of it asked for, %d before the retry", tc.name, n, posts)
		}
	}
	// Every executed request has landed (waited for above).
	for _, tc := range cases {
		if n := g.fake.TransfersOf(fakeKey, "BTC", tc.amount); (n == 1) != tc.executed || n > 1 {
			t.Fatalf("%s: the fake holds %d transfers, want executed=%v", tc.name, n, tc.executed)
		}
	}
	// Reading them reconciles from the history: the executed ones are
	// found at once; the others once the grace period has passed.
	read := func() {
		for _, tc := range cases {
			ref := "fault-" + tc.amount
			r := g.call("GET", "/v1/wallet/transfer", "clientTransferId", ref)
			switch {
			case tc.executed:
				tr := decode[exgate.Transfer](t, r)
				if tr.Status != exgate.TransferCompleted || tr.ID != ids[ref] || tr.ExchangeID == "" {
					t.Errorf("%s: read back %+v, want completed", tc.name, tr)
				}
			case g.shift.Load() == 0:
				if tr := decode[exgate.Transfer](t, r); tr.Status != exgate.TransferPending {
					t.Errorf("%s: read back %+v, want still pending", tc.name, tr)
				}
			default:
				problem(t, r, http.StatusUnprocessableEntity, exgate.CodeTransferRejected, "")
			}
		}
	}
	read()
	g.shift.Store(int64(2 * time.Minute))
	read()
	// Balances: exactly the executed transfers moved.
	if spot, funding := g.wallet("spot"), g.wallet("funding"); spot["BTC"] != "2.974" || funding["BTC"] != "0.026" {
		t.Errorf("after the faults: spot %v funding %v, want 0.012 + 0.014 moved", spot, funding)
	}
	// The settled key is free: the same amount may be sent again.
	if tr := decode[exgate.Transfer](t, g.transfer("BTC", "0.011", "spot", "funding", "")); tr.Status != exgate.TransferCompleted {
		t.Errorf("after settling: %+v", tr)
	}
}
