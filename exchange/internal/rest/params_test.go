package rest

import (
	"testing"
	"time"
)

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
