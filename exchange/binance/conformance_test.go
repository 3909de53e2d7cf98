package binance

import (
	"testing"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/exchangetest"
)

func TestConformance(t *testing.T) {
	exchangetest.Run(t, func(t *testing.T) exchangetest.Setup { return conformanceSetup(t, newEnv(t)) })
}

// conformanceSetup is the adapter on e's fake as the conformance cases
// (REST and streams) take it.
func conformanceSetup(t *testing.T, e *env) exchangetest.Setup {
	return exchangetest.Setup{
		Exchange:      e.ex,
		Credential:    e.cred,
		Symbol:        btcusdt,
		BaseQuantity:  num(t, "0.0123"),
		QuoteQuantity: num(t, "150"),
		Withdrawal: exgate.WithdrawalRequest{
			Asset: "USDT", Network: "TRX", Address: "TN3W4H6rK2ce4vX9YnFQHwKENnHjoxb3m9", Amount: num(t, "25"),
		},
		DepositAddress: exgate.DepositAddressRequest{Asset: "XRP", Network: "XRP"},
	}
}
