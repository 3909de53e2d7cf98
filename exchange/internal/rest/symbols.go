package rest

import (
	"cmp"
	"slices"

	"github.com/exgate/exgate"
)

// SortSymbols orders a symbol list as GET /v1/market/symbols lists it:
// by asset1, then asset2.
func SortSymbols(list []exgate.SymbolInfo) {
	slices.SortFunc(list, func(a, b exgate.SymbolInfo) int {
		return cmp.Or(cmp.Compare(a.Asset1, b.Asset1), cmp.Compare(a.Asset2, b.Asset2))
	})
}
