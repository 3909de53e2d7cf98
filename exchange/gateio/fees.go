package gateio

import (
	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// StandardFees are the exchange's standard spot rates, 0.1% maker and 0.1%
// taker, which paper keys pay (docs/contract.md 2.9). Source:
// https://www.gate.com/fee: spot VIP 0 pays 0.1% maker and 0.1% taker.
func (e *Exchange) StandardFees() exgate.FeeRates {
	return exgate.FeeRates{Maker: decimal.New(1, -3), Taker: decimal.New(1, -3)}
}
