package bybit

import (
	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// StandardFees are the exchange's standard spot rates, 0.1% maker and 0.1%
// taker, which paper keys pay (docs/contract.md 2.9). Source: Bybit's help
// center, "Spot Trading Fees" (non-VIP: all spot pairs 0.1% maker, 0.1%
// taker), https://www.bybit.com/en/help-center/article/Trading-Fee-Structure.
func (e *Exchange) StandardFees() exgate.FeeRates {
	return exgate.FeeRates{Maker: decimal.New(1, -3), Taker: decimal.New(1, -3)}
}

var _ exgate.FeeSchedule = (*Exchange)(nil)
