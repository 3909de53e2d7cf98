package kraken_test

import (
	"testing"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/exchangetest"
	"github.com/exgate/exgate/exchange/kraken/krakenfake"
)

// conformanceSetup is the adapter of e as the conformance suites see it.
func conformanceSetup(e *env) exchangetest.Setup {
	return exchangetest.Setup{
		Exchange:      e.ex,
		Credential:    e.cred,
		Symbol:        btcUSDT,
		BaseQuantity:  dec("0.001"),
		QuoteQuantity: dec("50"),
		Withdrawal: exgate.WithdrawalRequest{
			Asset: "BTC", Network: "BTC", Address: btcAddress, Amount: dec("0.01"),
		},
		DepositAddress: exgate.DepositAddressRequest{Asset: "BTC", Network: "BTC"},
	}
}

func TestConformance(t *testing.T) {
	exchangetest.Run(t, func(t *testing.T) exchangetest.Setup {
		return conformanceSetup(newEnv(t, krakenfake.Options{}, nil))
	})
}
