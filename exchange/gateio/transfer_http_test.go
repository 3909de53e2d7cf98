package gateio_test

import (
	"net/http"
	"testing"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/client"
)

// TestOneWalletThroughTheAPI: Gate.io spot has one wallet here
// (docs/contract.md 2.10), so a transfer is 400 naming the wallet
// parameter that is not spot, and wallet=funding is 400 naming wallet;
// nothing reaches Gate.io.
func TestOneWalletThroughTheAPI(t *testing.T) {
	e := newAPIEnv(t)
	if _, ok := exgate.Ability[exgate.WalletTransfers](e.ex); ok {
		t.Fatal("the gateio adapter has wallet transfers; this test and docs/exchanges/gateio.md must change")
	}
	ctx := t.Context()
	for _, tc := range []struct {
		from, to, param string
	}{
		{"spot", "funding", "to"},
		{"funding", "spot", "from"},
	} {
		_, _, err := e.c.Do(ctx, http.MethodPost, "/v1/wallet/transfer", []client.Param{
			{Name: "asset", Value: "BTC"}, {Name: "amount", Value: "0.1"}, {Name: "from", Value: tc.from}, {Name: "to", Value: tc.to}})
		wantProblem(t, err, http.StatusBadRequest, string(exgate.CodeInvalidParameter), tc.param)
	}
	_, _, err := e.c.Do(ctx, http.MethodGet, "/v1/wallet/account-balance", []client.Param{{Name: "wallet", Value: "funding"}})
	wantProblem(t, err, http.StatusBadRequest, string(exgate.CodeInvalidParameter), "wallet")
	if status, body, err := e.c.Do(ctx, http.MethodGet, "/v1/wallet/transfers", nil); err != nil || status != 200 || string(body) != "[]" {
		t.Errorf("transfers: %d %s %v, want []", status, body, err)
	}
}
