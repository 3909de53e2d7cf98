package risk_test

import (
	"testing"

	"github.com/exgate/exgate"
)

// TestHaltedKeyMayTransfer: a transfer between a key's own wallets moves
// nothing out of the account, so neither a halt nor a limit stops it
// (docs/contract.md 2.8 and 2.10), while an order is refused.
func TestHaltedKeyMayTransfer(t *testing.T) {
	for _, exchange := range []string{"sim", "binance"} {
		t.Run(exchange, func(t *testing.T) {
			g := newGateway(t, exchange)
			g.setLimits(exgate.RiskLimits{DailyWithdrawal: usd("1"), MaxOrderNotional: usd("1")})
			if err := g.st.HaltTrading(t.Context(), exgate.RiskHalt{APIKey: apiKey, Reason: "runaway bot"}); err != nil {
				t.Fatal(err)
			}
			if r := g.call("POST", "/v1/order/market", "asset1", "BTC", "asset2", "USDT", "side", "BUY", "quantity", "10", "quantityIn", "USDT"); r.status != 403 || r.body["code"] != "TRADING_HALTED" {
				t.Fatalf("order while halted: %d %s", r.status, r.raw)
			}
			for _, step := range [][]string{
				{"asset", "BTC", "amount", "1", "from", "spot", "to", "funding"},
				{"asset", "BTC", "amount", "1", "from", "funding", "to", "spot"},
			} {
				if r := g.call("POST", "/v1/wallet/transfer", step...); r.status != 200 || r.body["status"] != "completed" {
					t.Fatalf("transfer while halted: %d %s", r.status, r.raw)
				}
			}
		})
	}
}
