package binance

import (
	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// StandardFees are the exchange's standard spot rates, 0.1% maker and 0.1%
// taker, which paper keys pay (docs/contract.md 2.9). Source:
// https://www.binance.com/en/fee/schedule: regular users (VIP 0) pay 0.1000% maker and 0.1000% taker on spot.
func (e *Exchange) StandardFees() exgate.FeeRates {
	return exgate.FeeRates{Maker: decimal.New(1, -3), Taker: decimal.New(1, -3)}
}
