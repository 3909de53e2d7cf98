package httpapi_test

import (
	"context"
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/exgate/exgate"
)

// walletBalances reads one wallet's available amounts by asset.
func walletBalances(t *testing.T, g *gateway, wallet string) map[string]string {
	t.Helper()
	r := g.do(request{path: "/v1/wallet/account-balance", query: "wallet=" + wallet})
	if r.status != 200 {
		t.Fatalf("balances of %s: %d %s", wallet, r.status, r.body)
	}
	var bals []exgate.Balance
	if err := json.Unmarshal(r.body, &bals); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, b := range bals {
		out[b.Asset] = b.Available.String()
	}
	return out
}

func decodeTransfer(t *testing.T, r response) exgate.Transfer {
	t.Helper()
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	var tr exgate.Transfer
	if err := json.Unmarshal(r.body, &tr); err != nil {
		t.Fatal(err)
	}
	return tr
}

func wantProblem(t *testing.T, r response, status int, code, param string) {
	t.Helper()
	p := r.problem(t)
	if r.status != status || p["code"] != code || (param != "" && p["param"] != param) {
		t.Errorf("answer %d %s, want %d %s naming %q", r.status, r.body, status, code, param)
	}
}

// TestTransfersOnSim moves funds between the sim's two wallets through the
// API (docs/contract.md 2.10): a new key holds everything in spot.
func TestTransfersOnSim(t *testing.T) {
	g := newGateway(t, options{})
	if funding := walletBalances(t, g, "funding"); len(funding) != 0 {
		t.Fatalf("a new key's funding wallet: %v, want empty", funding)
	}
	out := decodeTransfer(t, g.do(request{method: "POST", path: "/v1/wallet/transfer",
		body: `"asset":"btc","amount":"2.5","from":"spot","to":"funding","clientTransferId":"move-1"`}))
	if out.Status != exgate.TransferCompleted || out.ClientTransferID != "move-1" || out.Asset != "BTC" || out.Exchange != "sim" {
		t.Fatalf("spot to funding: %+v", out)
	}
	if spot, funding := walletBalances(t, g, "spot"), walletBalances(t, g, "funding"); spot["BTC"] != "7.5" || funding["BTC"] != "2.5" {
		t.Fatalf("after spot to funding: spot %v funding %v", spot, funding)
	}
	back := decodeTransfer(t, g.do(request{method: "POST", path: "/v1/wallet/transfer",
		body: `"asset":"BTC","amount":1,"from":"funding","to":"spot"`}))
	if back.ClientTransferID != back.ID || back.Status != exgate.TransferCompleted {
		t.Fatalf("funding to spot without a client id: %+v", back)
	}
	if spot, funding := walletBalances(t, g, "spot"), walletBalances(t, g, "funding"); spot["BTC"] != "8.5" || funding["BTC"] != "1.5" {
		t.Fatalf("after funding to spot: spot %v funding %v", spot, funding)
	}
	// The same id again: the first answer, nothing moved.
	again := decodeTransfer(t, g.do(request{method: "POST", path: "/v1/wallet/transfer",
		body: `"asset":"BTC","amount":"2.5","from":"spot","to":"funding","clientTransferId":"move-1"`}))
	if again.ID != out.ID {
		t.Fatalf("the same id again: %+v, want %+v", again, out)
	}
	if spot := walletBalances(t, g, "spot"); spot["BTC"] != "8.5" {
		t.Fatalf("the same id again moved funds: spot %v", spot)
	}
	// History and lookups.
	r := g.do(request{path: "/v1/wallet/transfers", query: "asset=BTC"})
	var hist []exgate.Transfer
	if err := json.Unmarshal(r.body, &hist); err != nil || r.status != 200 || len(hist) != 2 {
		t.Fatalf("history: %d %s", r.status, r.body)
	}
	// Listed with the ids the client knows.
	for _, h := range hist {
		if (h.ID != out.ID || h.ClientTransferID != "move-1") && (h.ID != back.ID || h.ClientTransferID != back.ID) {
			t.Errorf("history entry %+v, want the ids of %+v or %+v", h, out, back)
		}
	}
	if got := decodeTransfer(t, g.do(request{path: "/v1/wallet/transfer", query: "clientTransferId=move-1"})); got.ID != out.ID {
		t.Errorf("by clientTransferId: %+v", got)
	}
	if got := decodeTransfer(t, g.do(request{path: "/v1/wallet/transfer", query: "id=" + url.QueryEscape(back.ID)})); got.ClientTransferID != back.ID {
		t.Errorf("by id: %+v", got)
	}
	// An order trades from spot only: what sits in funding is not spent.
	wantProblem(t, g.do(request{method: "POST", path: "/v1/wallet/transfer",
		body: `"asset":"BTC","amount":"1.6","from":"funding","to":"spot"`}), 422, "INSUFFICIENT_FUNDS", "amount")
}

func TestTransferRefusalsOnSim(t *testing.T) {
	g := newGateway(t, options{})
	for _, tc := range []struct {
		name, body  string
		status      int
		code, param string
	}{
		{"missing amount", `"asset":"BTC","from":"spot","to":"funding"`, 400, "INVALID_PARAMETER", "amount"},
		{"negative amount", `"asset":"BTC","amount":"-1","from":"spot","to":"funding"`, 400, "INVALID_PARAMETER", "amount"},
		{"unknown wallet", `"asset":"BTC","amount":"1","from":"spot","to":"savings"`, 400, "INVALID_PARAMETER", "to"},
		{"from equal to to", `"asset":"BTC","amount":"1","from":"funding","to":"funding"`, 400, "INVALID_PARAMETER", "to"},
		{"unknown asset", `"asset":"DOGE","amount":"1","from":"spot","to":"funding"`, 400, "INVALID_PARAMETER", "asset"},
		{"too fine", `"asset":"BTC","amount":"0.000000001","from":"spot","to":"funding"`, 400, "INVALID_PARAMETER", "amount"},
		{"more than the wallet holds", `"asset":"BTC","amount":"10.5","from":"spot","to":"funding"`, 422, "INSUFFICIENT_FUNDS", "amount"},
		{"wallet as a number", `"asset":"BTC","amount":"1","from":1,"to":"funding"`, 400, "INVALID_PARAMETER", "from"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantProblem(t, g.do(request{method: "POST", path: "/v1/wallet/transfer", body: tc.body}), tc.status, tc.code, tc.param)
		})
	}
	if spot, funding := walletBalances(t, g, "spot"), walletBalances(t, g, "funding"); spot["BTC"] != "10" || len(funding) != 0 {
		t.Fatalf("after refusals: spot %v funding %v", spot, funding)
	}
	// Bad input is refused before anything is journaled; only the
	// transfer the ledger refused (more than the wallet holds) is.
	cred, err := g.store.Credential(t.Context(), g.apiKey, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if its, err := g.store.RecentIntents(t.Context(), cred.ID, exgate.IntentTransfer, 0); err != nil || len(its) != 1 {
		t.Errorf("journaled transfers after the refusals: %d (%v), want 1", len(its), err)
	}
	wantProblem(t, g.do(request{path: "/v1/wallet/account-balance", query: "wallet=margin"}), 400, "INVALID_PARAMETER", "wallet")
	wantProblem(t, g.do(request{path: "/v1/wallet/transfer", query: "id=x&clientTransferId=y"}), 400, "INVALID_PARAMETER", "")
	wantProblem(t, g.do(request{method: "GET", path: "/v1/wallet/transfers", query: "asset=BTC&limit=5"}), 400, "INVALID_PARAMETER", "limit")

	// The trade permission: a read-only exchange key may read, not move.
	g.addCredential(g.apiKey, "viewer", exgate.PermissionRead)
	viewer := "viewer"
	wantProblem(t, g.do(request{method: "POST", path: "/v1/wallet/transfer", exchangeKey: &viewer,
		body: `"asset":"BTC","amount":"1","from":"spot","to":"funding"`}), 403, "PERMISSION_DENIED", "")
	if r := g.do(request{path: "/v1/wallet/transfers", exchangeKey: &viewer}); r.status != 200 {
		t.Errorf("read-only key listing transfers: %d %s", r.status, r.body)
	}
	// Another method on the path answers 405 naming both.
	r := g.do(request{method: "DELETE", path: "/v1/wallet/transfer"})
	if r.status != 405 || r.header.Get("Allow") != "POST, GET, HEAD" {
		t.Errorf("DELETE: %d Allow %q", r.status, r.header.Get("Allow"))
	}
}

// oneWallet is an exchange without exgate.WalletTransfers, as Kraken and
// Gate.io spot are here.
type oneWallet struct{ exgate.Exchange }

func TestOneWalletExchange(t *testing.T) {
	g := newGateway(t, options{wrap: func(e exgate.Exchange) exgate.Exchange { return oneWallet{e} }})
	wantProblem(t, g.do(request{method: "POST", path: "/v1/wallet/transfer",
		body: `"asset":"BTC","amount":"1","from":"spot","to":"funding"`}), 400, "INVALID_PARAMETER", "to")
	wantProblem(t, g.do(request{method: "POST", path: "/v1/wallet/transfer",
		body: `"asset":"BTC","amount":"1","from":"funding","to":"spot"`}), 400, "INVALID_PARAMETER", "from")
	wantProblem(t, g.do(request{path: "/v1/wallet/account-balance", query: "wallet=funding"}), 400, "INVALID_PARAMETER", "wallet")
	if r := g.do(request{path: "/v1/wallet/account-balance", query: "wallet=spot"}); r.status != 200 {
		t.Errorf("wallet=spot: %d %s", r.status, r.body)
	}
	if r := g.do(request{path: "/v1/wallet/transfers"}); r.status != 200 || string(r.body) != "[]" {
		t.Errorf("transfers: %d %s", r.status, r.body)
	}
}

// transferFault makes the sim's transfers end ambiguously: before it
// applies them (lost on the way) or after (the answer lost).
type transferFault struct {
	exgate.Exchange
	after bool
}

func (f transferFault) wallets() exgate.WalletTransfers {
	wt, _ := exgate.Ability[exgate.WalletTransfers](f.Exchange)
	return wt
}

func (f transferFault) WalletBalances(ctx context.Context, c exgate.Credential, w exgate.WalletKind) ([]exgate.Balance, error) {
	return f.wallets().WalletBalances(ctx, c, w)
}

func (f transferFault) Transfer(ctx context.Context, c exgate.Credential, r exgate.TransferRequest) (exgate.Transfer, error) {
	if f.after {
		if _, err := f.wallets().Transfer(ctx, c, r); err != nil {
			return exgate.Transfer{}, err
		}
	}
	return exgate.Transfer{}, exgate.Errorf(exgate.CodeExchangeTimeout, "no answer")
}

func (f transferFault) QueryTransfer(ctx context.Context, c exgate.Credential, q exgate.TransferQuery) (exgate.Transfer, error) {
	return f.wallets().QueryTransfer(ctx, c, q)
}

func (f transferFault) RecentTransfers(ctx context.Context, c exgate.Credential, flt exgate.TransferFilter) ([]exgate.Transfer, error) {
	return f.wallets().RecentTransfers(ctx, c, flt)
}

// TestTransferFaultsOnSim: an ambiguous answer is 504 with the pending
// transfer, reconciled by reading it back, never sent again.
func TestTransferFaultsOnSim(t *testing.T) {
	for _, after := range []bool{false, true} {
		name := map[bool]string{false: "lost before", true: "answer lost"}[after]
		t.Run(name, func(t *testing.T) {
			g := newGateway(t, options{wrap: func(e exgate.Exchange) exgate.Exchange { return transferFault{e, after} }})
			body := `"asset":"ETH","amount":"3","from":"spot","to":"funding","clientTransferId":"amb-1"`
			r := g.do(request{method: "POST", path: "/v1/wallet/transfer", body: body})
			p := r.problem(t)
			pending, _ := p["transfer"].(map[string]any)
			if r.status != 504 || p["code"] != "EXCHANGE_TIMEOUT" || pending["status"] != "pending" || p["id"] != pending["id"] {
				t.Fatalf("answer %d %s, want 504 with the pending transfer", r.status, r.body)
			}
			// The retry reads it back instead of sending it again.
			retry := g.do(request{method: "POST", path: "/v1/wallet/transfer", body: body})
			wantMoved := "0"
			if after {
				wantMoved = "3"
				if tr := decodeTransfer(t, retry); tr.Status != exgate.TransferCompleted || tr.ID != p["id"] {
					t.Fatalf("retry: %+v", tr)
				}
			} else if retry.status != 504 {
				t.Fatalf("retry of a transfer not found yet: %d %s", retry.status, retry.body)
			}
			g.clock.Add(3 * time.Minute)
			got := g.do(request{path: "/v1/wallet/transfer", query: "clientTransferId=amb-1"})
			if after {
				if tr := decodeTransfer(t, got); tr.Status != exgate.TransferCompleted {
					t.Errorf("read back: %+v", tr)
				}
			} else {
				wantProblem(t, got, 422, "TRANSFER_REJECTED", "")
			}
			if funding := walletBalances(t, g, "funding"); (funding["ETH"] == "" && wantMoved != "0") || (funding["ETH"] != "" && funding["ETH"] != wantMoved) {
				t.Errorf("funding ETH %q, want %s moved", funding["ETH"], wantMoved)
			}
		})
	}
}

// TestTransferAudited: a transfer is in the audit trail with its outcome
// and the transfer's id, a refused one with its code.
func TestTransferAudited(t *testing.T) {
	g, _ := newControlledGateway(t, nil)
	ctx := t.Context()
	ok := g.do(request{method: "POST", path: "/v1/wallet/transfer", body: `"asset":"BTC","amount":"1","from":"spot","to":"funding","clientTransferId":"a-1"`})
	moved := decodeTransfer(t, ok)
	wantProblem(t, g.do(request{method: "POST", path: "/v1/wallet/transfer", body: `"asset":"BTC","amount":"1","from":"spot","to":"spot"`}), 400, "INVALID_PARAMETER", "to")
	if err := g.api.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := g.store.AuditLog(ctx, exgate.AuditFilter{})
	if err != nil || len(got) != 2 {
		t.Fatalf("audit entries %+v, %v; want 2", got, err)
	}
	bad, good := got[0], got[1]
	if good.Action != "POST /v1/wallet/transfer" || good.Status != 200 || good.IntentID != moved.ID || good.Details["clientTransferId"] != "a-1" {
		t.Errorf("transfer entry %+v", good)
	}
	if bad.Action != "POST /v1/wallet/transfer" || bad.Status != 400 || bad.Code != "INVALID_PARAMETER" {
		t.Errorf("refused transfer entry %+v", bad)
	}
}
