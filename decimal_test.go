package exgate

import (
	"strings"
	"testing"
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
