package okx

import (
	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// StandardFees are OKX's standard spot rates for USDT and crypto pairs,
// regular users Lv1: 0.080% maker and 0.100% taker (https://www.okx.com/fees);
// paper trading (docs/paper.md) charges them.
func (e *Exchange) StandardFees() exgate.FeeRates {
	return exgate.FeeRates{Maker: decimal.New(8, -4), Taker: decimal.New(1, -3)}
}

var _ exgate.FeeSchedule = (*Exchange)(nil)
