package bybit_test

import (
	"strings"
	"testing"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/bybit/bybitfake"
)

// Where Bybit's behaviour is not documented (docs/exchanges/bybit.md
// "Unconfirmed"), the fake can answer each way; the adapter gives the same
// answer either way.
func TestUnconfirmedAlternatives(t *testing.T) {
	limit := func(id string, price string, postOnly bool) exgate.LimitOrderRequest {
		return exgate.LimitOrderRequest{Symbol: btcUSDT, Side: exgate.SideBuy, Quantity: dec("0.01"), Price: dec(price),
			TimeInForce: exgate.GTC, PostOnly: postOnly, ClientOrderID: id}
	}
	t.Run("a crossing PostOnly refused at once (170218)", func(t *testing.T) {
		e := newEnv(t, envOptions{fake: func(o *bybitfake.Options) { o.PostOnlyRefusedSync = true }})
		_, err := e.ex.PlaceLimitOrder(t.Context(), e.cred, limit("po-1", "60001.5", true))
		wantCode(t, err, exgate.CodeOrderRejected)
	})
	for _, code := range []int{170141, 110072} {
		t.Run("a reused orderLinkId refused with "+itoa(code), func(t *testing.T) {
			e := newEnv(t, envOptions{fake: func(o *bybitfake.Options) { o.DuplicateLinkIDCode = code }})
			if _, err := e.ex.PlaceLimitOrder(t.Context(), e.cred, limit("dup-1", "50000", false)); err != nil {
				t.Fatal(err)
			}
			_, err := e.ex.PlaceLimitOrder(t.Context(), e.cred, limit("dup-1", "50000", false))
			wantCode(t, err, exgate.CodeOrderRejected)
		})
	}
	for _, code := range []int{131002, 131083, 131093} {
		t.Run("an address outside the book refused with "+itoa(code), func(t *testing.T) {
			e := newEnv(t, envOptions{fake: func(o *bybitfake.Options) { o.AddressRefusalCode = code }})
			_, err := e.ex.Withdraw(t.Context(), e.cred, exgate.WithdrawalRequest{ClientWithdrawalID: "wb1", Asset: "USDT", Network: "TRX",
				Address: "TNotInTheBook0000000000000000000000", Amount: dec("20")})
			if ee := wantCode(t, err, exgate.CodeWithdrawalRejected); !strings.Contains(ee.Detail, "address book") {
				t.Errorf("detail %q", ee.Detail)
			}
		})
	}
	t.Run("open orders listed in the history too", func(t *testing.T) {
		e := newEnv(t, envOptions{fake: func(o *bybitfake.Options) { o.HistoryHasOpen = true }})
		if _, err := e.ex.PlaceLimitOrder(t.Context(), e.cred, limit("open-1", "50000", false)); err != nil {
			t.Fatal(err)
		}
		recent, err := e.ex.RecentOrders(t.Context(), e.cred, exgate.OrderFilter{Symbol: btcUSDT})
		if err != nil || len(recent) != 1 || recent[0].Status != exgate.OrderPending {
			t.Fatalf("recent = %+v, %v; want the open order once", recent, err)
		}
	})
	t.Run("zero rows in the funding wallet", func(t *testing.T) {
		e := newEnv(t, envOptions{
			fake:    func(o *bybitfake.Options) { o.FundListsZero = true },
			account: func(a *bybitfake.Account) { a.Fund = map[string]string{"USDT": "5", "BTC": "0"} },
		})
		bals, err := e.ex.WalletBalances(t.Context(), e.cred, exgate.WalletFunding)
		if err != nil || len(bals) != 1 || bals[0].Asset != "USDT" {
			t.Fatalf("funding = %+v, %v; want the USDT row only", bals, err)
		}
	})
}
