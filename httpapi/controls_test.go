package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/api"
	"github.com/exgate/exgate/api/openapitest"
	"github.com/exgate/exgate/exchange/sim"
	"github.com/exgate/exgate/httpapi"
	"github.com/exgate/exgate/journal"
	"github.com/exgate/exgate/localstate"
	"github.com/exgate/exgate/sqlite"
)

// countingExchange counts the withdrawals that reach the exchange.
type countingExchange struct {
	exgate.Exchange
	withdrawals atomic.Int64
}

// Unwrap shows the sim's other abilities (its two wallets) through the
// counter.
func (c *countingExchange) Unwrap() exgate.Exchange { return c.Exchange }

func (c *countingExchange) Withdraw(ctx context.Context, cred exgate.Credential, req exgate.WithdrawalRequest) (exgate.Withdrawal, error) {
	c.withdrawals.Add(1)
	return c.Exchange.Withdraw(ctx, cred, req)
}

// newControlledGateway is newGateway with the operator's controls on:
// allowlists and the audit trail in the store, and trusted proxies.
func newControlledGateway(t *testing.T, trusted []netip.Prefix) (*gateway, *countingExchange) {
	return newAuditedGateway(t, trusted, nil)
}

// auditStore is where a gateway of the tests writes its audit trail.
type auditStore interface {
	AppendAudits(ctx context.Context, es []exgate.AuditEntry) error
}

// newAuditedGateway is newControlledGateway writing its audit trail
// through audit(store) when audit is not nil.
func newAuditedGateway(t *testing.T, trusted []netip.Prefix, audit func(*sqlite.Store) auditStore) (*gateway, *countingExchange) {
	t.Helper()
	ctx := t.Context()
	clk := &clock{t: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "exgate.db"), bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	st.Now = clk.Now
	ex := &countingExchange{Exchange: sim.New(sim.Options{Ledger: st, Now: clk.Now})}
	exchanges := map[string]exgate.Exchange{"sim": ex}
	jr := journal.New(journal.Options{Store: st, Exchanges: exchanges, Now: clk.Now})
	var auditLog auditStore = st
	if audit != nil {
		auditLog = audit(st)
	}
	srv := httpapi.New(httpapi.Config{
		Keys:           st,
		Exchanges:      exchanges,
		Ledger:         jr,
		Replay:         localstate.NewReplayGuard(clk.Now),
		Limiter:        localstate.NewLimiter(clk.Now),
		OpenAPI:        api.Spec(),
		Now:            clk.Now,
		Controls:       st,
		Audit:          auditLog,
		TrustedProxies: trusted,
	})
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	g := &gateway{t: t, srv: hs, api: srv, store: st, clock: clk, validator: openapitest.New(t)}
	g.apiKey, g.secret = g.addClient("client-a")
	g.addCredential(g.apiKey, "demo", exgate.PermissionTrade, exgate.PermissionWithdraw)
	return g, ex
}

func (g *gateway) setAllowedIPs(list string) {
	g.t.Helper()
	ps, err := exgate.ParseIPAllowlist(list)
	if err != nil {
		g.t.Fatal(err)
	}
	if err := g.store.SetAllowedIPs(g.t.Context(), g.apiKey, ps); err != nil {
		g.t.Fatal(err)
	}
	g.clock.Add(time.Second) // past the allowlist cache
}

func wantCode(t *testing.T, r response, status int, code string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	if code != "" {
		if got := r.problem(t)["code"]; got != code {
			t.Fatalf("code %v, want %s: %s", got, code, r.body)
		}
	}
}

func TestIPAllowlist(t *testing.T) {
	balances := request{path: "/v1/wallet/account-balance"}
	xff := func(v string) request {
		r := balances
		r.header = map[string]string{"X-Forwarded-For": v}
		return r
	}
	tests := []struct {
		name    string
		trusted string // --trusted-proxies
		allow   string // the key's allowlist
		req     request
		want    int
	}{
		{"no allowlist", "", "", balances, 200},
		{"peer allowed", "", "127.0.0.0/8", balances, 200},
		{"peer allowed as one address", "", "10.0.0.1,127.0.0.1", balances, 200},
		{"peer refused", "", "10.0.0.0/8", balances, 403},
		{"untrusted X-Forwarded-For ignored", "", "203.0.113.0/24", xff("203.0.113.7"), 403},
		{"untrusted X-Forwarded-For cannot hide the peer", "", "127.0.0.0/8", xff("10.1.1.1"), 200},
		{"through a trusted proxy, allowed", "127.0.0.1/32", "203.0.113.0/24", xff("203.0.113.7"), 200},
		{"through a trusted proxy, refused", "127.0.0.1/32", "203.0.113.0/24", xff("198.51.100.9"), 403},
		{"right-most untrusted address counts", "127.0.0.1/32", "203.0.113.0/24", xff("203.0.113.7, 198.51.100.9"), 403},
		{"trusted hops are skipped", "127.0.0.0/8,10.0.0.0/8", "203.0.113.0/24", xff("198.51.100.9, 203.0.113.7, 10.0.0.2"), 200},
		{"trusted proxy without the header is the client", "127.0.0.1/32", "203.0.113.0/24", balances, 403},
		{"trusted proxy writing nonsense", "127.0.0.1/32", "203.0.113.0/24", xff("203.0.113.7, not-an-ip"), 403},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			trusted, err := exgate.ParseIPAllowlist(tc.trusted)
			if err != nil {
				t.Fatal(err)
			}
			g, _ := newControlledGateway(t, trusted)
			g.setAllowedIPs(tc.allow)
			r := g.do(tc.req)
			if tc.want == 403 {
				wantCode(t, r, 403, "IP_NOT_ALLOWED")
			} else {
				wantCode(t, r, tc.want, "")
			}
		})
	}

	t.Run("authentication first", func(t *testing.T) {
		g, _ := newControlledGateway(t, nil)
		g.setAllowedIPs("10.0.0.0/8")
		wantCode(t, g.do(request{path: "/v1/wallet/account-balance", secret: "wrong"}), 401, "INVALID_SIGNATURE")
	})

	t.Run("before anything else", func(t *testing.T) {
		g, _ := newControlledGateway(t, nil)
		g.setAllowedIPs("10.0.0.0/8")
		wantCode(t, g.do(request{path: "/v1/wallet/account-balance", exchangeKey: str("nope")}), 403, "IP_NOT_ALLOWED")
		wantCode(t, g.do(request{path: "/v1/market/order-book", query: "asset1=NOPE&asset2=USDT"}), 403, "IP_NOT_ALLOWED")
	})

	t.Run("a change applies within a second", func(t *testing.T) {
		g, _ := newControlledGateway(t, nil)
		wantCode(t, g.do(request{path: "/v1/wallet/account-balance"}), 200, "")
		g.setAllowedIPs("10.0.0.0/8")
		wantCode(t, g.do(request{path: "/v1/wallet/account-balance"}), 403, "IP_NOT_ALLOWED")
		g.setAllowedIPs("")
		wantCode(t, g.do(request{path: "/v1/wallet/account-balance"}), 200, "")
	})
}

func TestWithdrawalAllowlist(t *testing.T) {
	const (
		allowed   = `"asset":"XRP","network":"XRP","address":"rPEPPER7kfTD9w2To4CQk6UCfuHM9c6GDY","tag":"12345","amount":"10"`
		elsewhere = `"asset":"XRP","network":"XRP","address":"rPEPPER7kfTD9w2To4CQk6UCfuHM9c6GDY","tag":"999","amount":"10"`
	)
	allow := func(g *gateway, hold time.Duration) {
		t.Helper()
		_, err := g.store.AllowAddress(t.Context(), exgate.AllowedAddress{ClientAPIKey: g.apiKey, CredentialName: "demo",
			Asset: "xrp", Network: "xrp", Address: "rPEPPER7kfTD9w2To4CQk6UCfuHM9c6GDY", Tag: "12345", UsableFrom: g.clock.Now().Add(hold)})
		if err != nil {
			t.Fatal(err)
		}
	}
	withdraw := func(g *gateway, body string) response {
		return g.do(request{method: "POST", path: "/v1/wallet/withdraw", body: body})
	}

	t.Run("no allowlist: anywhere", func(t *testing.T) {
		g, ex := newControlledGateway(t, nil)
		wantCode(t, withdraw(g, elsewhere), 200, "")
		if ex.withdrawals.Load() != 1 {
			t.Fatalf("%d withdrawals reached the exchange, want 1", ex.withdrawals.Load())
		}
	})

	t.Run("allowed and refused", func(t *testing.T) {
		g, ex := newControlledGateway(t, nil)
		allow(g, 0)
		wantCode(t, withdraw(g, elsewhere), 403, "ADDRESS_NOT_ALLOWED")
		if n := ex.withdrawals.Load(); n != 0 {
			t.Fatalf("a refused withdrawal reached the exchange (%d calls)", n)
		}
		if un, _ := g.store.UnfinishedIntents(t.Context(), 0); len(un) != 0 {
			t.Fatalf("a refused withdrawal was journaled: %+v", un)
		}
		wantCode(t, withdraw(g, allowed), 200, "")
		if n := ex.withdrawals.Load(); n != 1 {
			t.Fatalf("%d withdrawals reached the exchange, want 1", n)
		}
	})

	t.Run("held until the hold passes", func(t *testing.T) {
		g, ex := newControlledGateway(t, nil)
		allow(g, 24*time.Hour)
		r := withdraw(g, allowed)
		wantCode(t, r, 403, "ADDRESS_NOT_ALLOWED")
		if d := r.problem(t)["detail"].(string); !strings.Contains(d, "hold until 2026-11-23T12:00:00Z") {
			t.Errorf("detail %q does not say until when", d)
		}
		g.clock.Add(24*time.Hour - time.Second)
		wantCode(t, withdraw(g, allowed), 403, "ADDRESS_NOT_ALLOWED")
		if n := ex.withdrawals.Load(); n != 0 {
			t.Fatalf("a held withdrawal reached the exchange (%d calls)", n)
		}
		g.clock.Add(time.Second)
		wantCode(t, withdraw(g, allowed), 200, "")
	})

	t.Run("a retry of a withdrawal made before the deny gets its first answer", func(t *testing.T) {
		g, ex := newControlledGateway(t, nil)
		allow(g, 0)
		first := withdraw(g, allowed+`,"clientWithdrawalId":"w-1"`)
		wantCode(t, first, 200, "")
		if err := g.store.DenyAddress(t.Context(), exgate.AllowedAddress{ClientAPIKey: g.apiKey, CredentialName: "demo",
			Asset: "XRP", Network: "XRP", Address: "rPEPPER7kfTD9w2To4CQk6UCfuHM9c6GDY", Tag: "12345"}); err != nil {
			t.Fatal(err)
		}
		again := withdraw(g, allowed+`,"clientWithdrawalId":"w-1"`)
		wantCode(t, again, 200, "")
		if !bytes.Equal(again.body, first.body) {
			t.Errorf("retry answered %s, want the first answer %s", again.body, first.body)
		}
		wantCode(t, withdraw(g, allowed+`,"clientWithdrawalId":"w-2"`), 403, "ADDRESS_NOT_ALLOWED")
		if n := ex.withdrawals.Load(); n != 1 {
			t.Fatalf("%d withdrawals reached the exchange, want 1", n)
		}
	})

	t.Run("denied", func(t *testing.T) {
		g, ex := newControlledGateway(t, nil)
		allow(g, 0)
		if err := g.store.DenyAddress(t.Context(), exgate.AllowedAddress{ClientAPIKey: g.apiKey, CredentialName: "demo",
			Asset: "XRP", Network: "XRP", Address: "rPEPPER7kfTD9w2To4CQk6UCfuHM9c6GDY", Tag: "12345"}); err != nil {
			t.Fatal(err)
		}
		wantCode(t, withdraw(g, allowed), 403, "ADDRESS_NOT_ALLOWED")
		wantCode(t, withdraw(g, elsewhere), 403, "ADDRESS_NOT_ALLOWED")
		if n := ex.withdrawals.Load(); n != 0 {
			t.Fatalf("%d withdrawals reached the exchange, want none", n)
		}
	})
}

func TestAuditTrail(t *testing.T) {
	g, _ := newControlledGateway(t, nil)
	ctx := t.Context()
	_, err := g.store.AllowAddress(ctx, exgate.AllowedAddress{ClientAPIKey: g.apiKey, CredentialName: "demo",
		Asset: "BTC", Network: "BTC", Address: "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"})
	if err != nil {
		t.Fatal(err)
	}
	const orderBody = `"asset1":"BTC","asset2":"USDT","side":"BUY","quantity":"100","quantityIn":"asset2"`
	const withdrawBody = `"asset":"BTC","network":"BTC","address":"bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh","amount":"0.01"`
	signatures := []string{sign(g.secret, bodyParams(t, orderBody)), sign(g.secret, bodyParams(t, withdrawBody))}
	order := g.do(request{method: "POST", path: "/v1/order/market", body: orderBody})
	wantCode(t, order, 200, "")
	var placed struct{ ID string }
	if err := json.Unmarshal(order.body, &placed); err != nil || placed.ID == "" {
		t.Fatalf("order answer %s", order.body)
	}
	refused := g.do(request{method: "POST", path: "/v1/wallet/withdraw", body: withdrawBody})
	wantCode(t, refused, 403, "ADDRESS_NOT_ALLOWED")
	// Unauthenticated requests are not recorded: a flood of them must
	// not fill the store.
	wantCode(t, g.do(request{method: "POST", path: "/v1/order/market", body: `"asset1":"BTC"`, secret: "wrong"}), 401, "")
	// Reads are not recorded.
	wantCode(t, g.do(request{path: "/v1/wallet/account-balance"}), 200, "")

	// The records are written after the answers.
	if err := g.api.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := g.store.AuditLog(ctx, exgate.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d audit entries, want 2: %+v", len(got), got)
	}
	w, o := got[0], got[1]
	if w.Action != "POST /v1/wallet/withdraw" || w.Status != 403 || w.Code != "ADDRESS_NOT_ALLOWED" || w.Details["address"] != "bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh" {
		t.Errorf("withdrawal entry %+v", w)
	}
	if o.Action != "POST /v1/order/market" || o.Status != 200 || o.Code != "" || o.IntentID != placed.ID ||
		o.APIKey != g.apiKey || o.ExchangeKey != "demo" || o.Actor != "api" || o.Remote != "127.0.0.1" || o.RequestID == "" ||
		o.Details["quantity"] != "100" {
		t.Errorf("order entry %+v", o)
	}
	for _, e := range got {
		b, _ := json.Marshal(e)
		for _, secret := range append([]string{g.secret, "signature"}, signatures...) {
			if strings.Contains(string(b), secret) {
				t.Errorf("audit entry %s holds %q", b, secret)
			}
		}
	}
}
