package exgate

import (
	"strings"
	"testing"
)

func TestParsePaperBalances(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: "", want: ""},
		{in: "btc=1, USDT=10000.50", want: "BTC=1,USDT=10000.5"},
		{in: "BTC=0", want: "BTC=0"},
		{in: "BTC", err: "want ASSET=AMOUNT"},
		{in: "BTC=-1", err: "non-negative"},
		{in: "BTC=x", err: "non-negative"},
		{in: "B-C=1", err: "want ASSET=AMOUNT"},
		{in: "BTC=1,btc=2", err: "twice"},
	} {
		got, err := ParsePaperBalances(tc.in)
		if tc.err != "" {
			if err == nil || !contains(err.Error(), tc.err) {
				t.Errorf("ParsePaperBalances(%q) error = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || FormatPaperBalances(got) != tc.want {
			t.Errorf("ParsePaperBalances(%q) = %q, %v; want %q", tc.in, FormatPaperBalances(got), err, tc.want)
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
