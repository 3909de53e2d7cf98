package kraken_test

import (
	"net/http"
	"testing"

	"github.com/exgate/exgate"
)

// TestOneWalletThroughTheAPI: Kraken spot has one wallet here
// (docs/contract.md 2.10), so a transfer is 400 naming the wallet
// parameter that is not spot, and wallet=funding is 400 naming wallet;
// nothing reaches Kraken.
func TestOneWalletThroughTheAPI(t *testing.T) {
	g := newAPIGateway(t)
	if _, ok := exgate.Ability[exgate.WalletTransfers](g.env.ex); ok {
		t.Fatal("the kraken adapter has wallet transfers; this test and docs/exchanges/kraken.md must change")
	}
	for _, tc := range []struct {
		from, to, param string
	}{
		{"spot", "funding", "to"},
		{"funding", "spot", "from"},
	} {
		a := g.call(http.MethodPost, "/v1/wallet/transfer", "asset", "BTC", "amount", "0.1", "from", tc.from, "to", tc.to)
		if code, param := a.problem(t); a.status != http.StatusBadRequest || code != string(exgate.CodeInvalidParameter) || param != tc.param {
			t.Errorf("%s to %s: %d %s, want 400 INVALID_PARAMETER naming %s", tc.from, tc.to, a.status, a.body, tc.param)
		}
	}
	a := g.call(http.MethodGet, "/v1/wallet/account-balance", "wallet", "funding")
	if code, param := a.problem(t); a.status != http.StatusBadRequest || code != string(exgate.CodeInvalidParameter) || param != "wallet" {
		t.Errorf("wallet=funding: %d %s, want 400 naming wallet", a.status, a.body)
	}
	if a := g.call(http.MethodGet, "/v1/wallet/transfers"); a.status != http.StatusOK || string(a.body) != "[]" {
		t.Errorf("transfers: %d %s, want []", a.status, a.body)
	}
}
