package exgate

import (
	"slices"
	"testing"
)

func TestSortSymbols(t *testing.T) {
	list := []SymbolInfo{{Asset1: "ETH", Asset2: "USDT"}, {Asset1: "BTC", Asset2: "USDT"}, {Asset1: "BTC", Asset2: "EUR"},
		{Asset1: "BTCX", Asset2: "AAA"}, {Asset1: "ETH.S", Asset2: "ETH"}}
	SortSymbols(list)
	var got []string
	for _, s := range list {
		got = append(got, s.Asset1+"/"+s.Asset2)
	}
	// By asset1 first: ETH before ETH.S, though "ETH.S/ETH" < "ETH/USDT"
	// as whole strings.
	if want := []string{"BTC/EUR", "BTC/USDT", "BTCX/AAA", "ETH/USDT", "ETH.S/ETH"}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
