package exgate

import (
	"strconv"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

// Issue 13: decimals are bounded before they are logged, echoed or stored.
func TestParseDecimalBounds(t *testing.T) {
	tests := []struct {
		text string
		ok   bool
	}{
		{"0.1", true},
		{"1e64", true},
		{"1e-64", true},
		{"1E+64", true},
		{"1e65", false},
		{"1e-65", false},
		{"1e-9999", false},
		{"1e0000000000000000000000000064", true},
		{"1e99999999999999999999", false},
		{strings.Repeat("1", 64), true},
		{strings.Repeat("1", 65), false},
		{"0." + strings.Repeat("1", 63), false}, // 65 characters
		{"1e", false},
		{"1e+", false},
	}
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			_, err := ParseDecimal(tc.text)
			if (err == nil) != tc.ok {
				t.Fatalf("ParseDecimal(%q) err = %v, want ok %v", tc.text, err, tc.ok)
			}
		})
	}
}

// TestAveragePrice: an average price keeps AveragePriceDigits significant
// digits, so that a float64 reads the JSON number back as the same text.
func TestAveragePrice(t *testing.T) {
	tests := []struct{ quote, base, want string }{
		{"99.284637", "0.00122", "81380.8500000000"},
		{"1", "3", "0.333333333333333"},
		{"2", "3", "0.666666666666667"},
		{"1629726205997392.44", "100000000000000", "16.2972620599739"},
		{"5", "0", ""},
		{"0", "7", "0"},
		{"1", "70000", "0.0000142857142857143"},
	}
	for _, tc := range tests {
		got := AveragePrice(decimal.RequireFromString(tc.quote), decimal.RequireFromString(tc.base))
		if tc.want == "" {
			if got != nil {
				t.Errorf("AveragePrice(%s, %s) = %s, want nil", tc.quote, tc.base, got)
			}
			continue
		}
		if got == nil || !got.Equal(decimal.RequireFromString(tc.want)) {
			t.Errorf("AveragePrice(%s, %s) = %v, want %s", tc.quote, tc.base, got, tc.want)
			continue
		}
		b, _ := got.MarshalJSON()
		f, err := strconv.ParseFloat(string(b), 64)
		if err != nil || strconv.FormatFloat(f, 'f', -1, 64) != string(b) {
			t.Errorf("AveragePrice(%s, %s) = %s, which a float64 reads back as %v", tc.quote, tc.base, b, strconv.FormatFloat(f, 'f', -1, 64))
		}
	}
}
