package kraken

import (
	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// StandardFees are the exchange's standard spot rates, 0.25% maker and 0.40%
// taker, which paper keys pay (docs/contract.md 2.9). Source:
// https://www.kraken.com/features/fee-schedule: Kraken Pro spot, 30-day volume up to $10,000, pays 0.25% maker and 0.40% taker.
func (e *Exchange) StandardFees() exgate.FeeRates {
	return exgate.FeeRates{Maker: decimal.New(25, -4), Taker: decimal.New(40, -4)}
}
