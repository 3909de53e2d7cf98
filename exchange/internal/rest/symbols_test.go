package rest

import (
	"slices"
	"testing"
	"time"

	"github.com/exgate/exgate"
)

func TestSortSymbols(t *testing.T) {
	list := []exgate.SymbolInfo{{Asset1: "ETH", Asset2: "USDT"}, {Asset1: "BTC", Asset2: "USDT"}, {Asset1: "BTC", Asset2: "EUR"}, {Asset1: "BTCX", Asset2: "AAA"}}
	SortSymbols(list)
	var got []string
	for _, s := range list {
		got = append(got, s.Asset1+"/"+s.Asset2)
	}
	if want := []string{"BTC/EUR", "BTC/USDT", "BTCX/AAA", "ETH/USDT"}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestLimit(t *testing.T) {
	for _, tt := range []struct{ n, want int }{{-1, 100}, {0, 100}, {1, 1}, {500, 500}, {501, 500}} {
		if got := Limit(tt.n, 100, 500); got != tt.want {
			t.Errorf("Limit(%d, 100, 500) = %d, want %d", tt.n, got, tt.want)
		}
	}
}

func TestNetworkCode(t *testing.T) {
	for in, want := range map[string]string{"erc20": "ETH", " TRC20 ": "TRX", "BEP20": "BSC", "polygon": "MATIC", "ARB": "ARBITRUM", "op": "OPTIMISM", "AVAX": "AVAXC", "sol": "SOL", "MATIC": "MATIC"} {
		if got := NetworkCode(in); got != want {
			t.Errorf("NetworkCode(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPositiveOr(t *testing.T) {
	for _, tt := range []struct{ d, want time.Duration }{{-time.Second, time.Minute}, {0, time.Minute}, {time.Second, time.Second}} {
		if got := PositiveOr(tt.d, time.Minute); got != tt.want {
			t.Errorf("PositiveOr(%s, 1m) = %s, want %s", tt.d, got, tt.want)
		}
	}
}
