package rest

import (
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// Decimal is a decimal an exchange writes in JSON as a string or a number
// ("1.5" or 1.5). It is parsed exactly with exgate.ParseDecimal, never
// through float64. null, an absent member and the empty string leave it
// unset (Set false, value zero).
type Decimal struct {
	decimal.Decimal
	// Set is false when the member was absent, null or "".
	Set bool
}

// UnmarshalJSON reads a JSON string or number; null and "" leave it unset.
func (d *Decimal) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" {
		return nil
	}
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	if s == "" {
		return nil
	}
	v, err := exgate.ParseDecimal(s)
	if err != nil {
		return fmt.Errorf("bad decimal %q", Truncate(b))
	}
	d.Decimal, d.Set = v, true
	return nil
}
