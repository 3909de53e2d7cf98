package sim_test

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/exchangetest"
	"github.com/exgate/exgate/exchange/sim"
)

// testNow is the fixed clock of the tests: not on a minute boundary, so
// the last kline is still open.
var testNow = time.Date(2026, 11, 22, 12, 34, 56, 789_000_000, time.UTC)

func testCredential() exgate.Credential {
	return exgate.Credential{
		ID: 7, Name: "paper", Exchange: sim.Name,
		Permissions: []exgate.Permission{exgate.PermissionRead, exgate.PermissionTrade, exgate.PermissionWithdraw},
	}
}

func TestConformance(t *testing.T) {
	tests := []struct {
		name  string
		setup exchangetest.Setup
	}{
		{"BTC-USDT", exchangetest.Setup{
			Symbol:         exgate.Symbol{Base: "BTC", Quote: "USDT"},
			BaseQuantity:   decimal.RequireFromString("0.0123"),
			QuoteQuantity:  decimal.RequireFromString("250"),
			Withdrawal:     exgate.WithdrawalRequest{Asset: "ETH", Network: "ETH", Address: "0x52908400098527886E0F7030069857D2E4169EE7", Amount: decimal.RequireFromString("1.5")},
			DepositAddress: exgate.DepositAddressRequest{Asset: "USDT", Network: "TRX"},
		}},
		{"ETH-BTC", exchangetest.Setup{
			Symbol:         exgate.Symbol{Base: "ETH", Quote: "BTC"},
			BaseQuantity:   decimal.RequireFromString("0.5"),
			QuoteQuantity:  decimal.RequireFromString("0.02"),
			Withdrawal:     exgate.WithdrawalRequest{Asset: "XRP", Network: "XRP", Address: "rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh", Tag: "12345", Amount: decimal.RequireFromString("25")},
			DepositAddress: exgate.DepositAddressRequest{Asset: "XRP", Network: "XRP"},
		}},
		{"XRP-USDT", exchangetest.Setup{
			Symbol:         exgate.Symbol{Base: "XRP", Quote: "USDT"},
			BaseQuantity:   decimal.RequireFromString("100"),
			QuoteQuantity:  decimal.RequireFromString("20"),
			Withdrawal:     exgate.WithdrawalRequest{Asset: "BTC", Network: "BTC", Address: "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", Amount: decimal.RequireFromString("0.01")},
			DepositAddress: exgate.DepositAddressRequest{Asset: "SOL", Network: "SOL"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			exchangetest.Run(t, func(t *testing.T) exchangetest.Setup {
				s := tc.setup
				s.Exchange = sim.New(sim.Options{Ledger: sim.NewMemoryLedger(), Now: func() time.Time { return testNow }})
				s.Credential = testCredential()
				return s
			})
		})
	}
}
