package exgate

import (
	"context"
	"errors"
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

// symbolList is a SymbolLister of fixed markets.
type symbolList []Symbol

func (l symbolList) Symbols(_ context.Context, _ Credential, f SymbolFilter) ([]SymbolInfo, error) {
	for _, s := range l {
		if s == f.Symbol {
			return []SymbolInfo{{Asset1: s.Base, Asset2: s.Quote}}, nil
		}
	}
	return nil, nil
}

// TestListedSymbol: the inverted-pair rule, written once for the API and
// the stream.
func TestListedSymbol(t *testing.T) {
	l := symbolList{{Base: "BTC", Quote: "USDT"}}
	cred := Credential{Exchange: "sim"}
	tests := []struct {
		sym    Symbol
		detail string
	}{
		{Symbol{Base: "BTC", Quote: "USDT"}, ""},
		{Symbol{Base: "USDT", Quote: "BTC"}, "USDT/BTC is not listed on sim; the pair is listed the other way round as BTC/USDT"},
		{Symbol{Base: "ETH", Quote: "USDT"}, "ETH/USDT is not listed on sim"},
	}
	for _, tc := range tests {
		info, err := ListedSymbol(t.Context(), l, cred, tc.sym)
		if tc.detail == "" {
			if err != nil || info.Asset1 != tc.sym.Base {
				t.Errorf("%s: %+v %v", tc.sym, info, err)
			}
			continue
		}
		if e, ok := errors.AsType[*Error](err); !ok || e.Code != CodeUnknownSymbol || e.Detail != tc.detail {
			t.Errorf("%s: %v, want UNKNOWN_SYMBOL %q", tc.sym, err, tc.detail)
		}
	}
}
