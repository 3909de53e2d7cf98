package exgate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/shopspring/decimal"
)

// FeeRates are an exchange's standard spot fees as fractions of the
// amount traded (0.001 is 0.1%): Maker for an order that rested on the
// book, Taker for one that took liquidity. Paper keys (docs/contract.md
// 2.9) pay them.
type FeeRates struct {
	Maker decimal.Decimal
	Taker decimal.Decimal
}

// FeeSchedule is an adapter that knows its exchange's standard spot fee
// rates, from a table citing the exchange's fee page.
type FeeSchedule interface {
	StandardFees() FeeRates
}

// ParsePaperBalances reads the starting balances of a paper key,
// "BTC=1,USDT=10000": upper-case asset codes, each once, with a
// non-negative decimal amount. An empty string is no balances given.
func ParsePaperBalances(s string) ([]BalanceChange, error) {
	var out []BalanceChange
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		asset, amount, ok := strings.Cut(part, "=")
		asset = strings.ToUpper(strings.TrimSpace(asset))
		if !ok || !validAssetCode(asset) {
			return nil, fmt.Errorf("balance %q: want ASSET=AMOUNT, such as BTC=1", part)
		}
		d, err := decimal.NewFromString(strings.TrimSpace(amount))
		if err != nil || d.IsNegative() {
			return nil, fmt.Errorf("balance %q: the amount must be a non-negative decimal", part)
		}
		if slices.ContainsFunc(out, func(c BalanceChange) bool { return c.Asset == asset }) {
			return nil, fmt.Errorf("balance of %s given twice", asset)
		}
		out = append(out, BalanceChange{Asset: asset, Delta: d})
	}
	return out, nil
}

// FormatPaperBalances writes balances as ParsePaperBalances reads them,
// as the stores keep them.
func FormatPaperBalances(bs []BalanceChange) string {
	parts := make([]string, len(bs))
	for i, b := range bs {
		parts[i] = b.Asset + "=" + b.Delta.String()
	}
	return strings.Join(parts, ",")
}

// validAssetCode accepts 1 to 16 upper-case letters and digits.
func validAssetCode(s string) bool {
	if len(s) == 0 || len(s) > 16 {
		return false
	}
	for _, r := range s {
		if (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}
