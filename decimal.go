package exgate

import (
	"errors"
	"strings"

	"github.com/shopspring/decimal"
)

// Number is an exact decimal written to JSON as a number (the spec's
// Float64 fields: quantity, fees, amount). It is never converted to
// float64: 0.1001 is written as 0.1001.
type Number struct{ decimal.Decimal }

// NewNumber wraps d.
func NewNumber(d decimal.Decimal) Number { return Number{d} }

// NumberPtr wraps d and returns a pointer, for nullable fields.
func NumberPtr(d decimal.Decimal) *Number { return &Number{d} }

// AveragePriceDigits is how many significant digits an order's
// averagePrice keeps. The ratio quoteQuantity / executedQuantity rarely
// ends; 15 significant digits are what a float64 holds exactly, so a
// client that reads the JSON number as a float64 gets the very digits
// written (api/openapi.yaml, Order.averagePrice). quoteQuantity and
// executedQuantity themselves are exact.
const AveragePriceDigits = 15

// AveragePrice returns quote / base rounded half away from zero to
// AveragePriceDigits significant digits, or nil when base is not positive.
func AveragePrice(quote, base decimal.Decimal) *Number {
	if !base.IsPositive() {
		return nil
	}
	// 60 decimals hold 15 significant digits of any ratio above 1e-45
	// before the rounding to significant digits below.
	q := quote.DivRound(base, 60)
	if q.IsZero() {
		return NumberPtr(q)
	}
	// magnitude: digits before the point (0 or less below 1).
	magnitude := int32(len(q.Coefficient().String())) + q.Exponent()
	if q.Coefficient().Sign() < 0 {
		magnitude--
	}
	return NumberPtr(q.Round(AveragePriceDigits - magnitude))
}

// MarshalJSON writes the decimal as a JSON number in plain notation.
func (n Number) MarshalJSON() ([]byte, error) { return []byte(n.Decimal.String()), nil }

// UnmarshalJSON accepts a JSON number or a string holding a decimal.
func (n *Number) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	d, err := ParseDecimal(s)
	if err != nil {
		return err
	}
	n.Decimal = d
	return nil
}

// ErrNotDecimal is returned for text that is not a decimal number.
var ErrNotDecimal = errors.New("not a decimal number")

// ParseDecimal parses a decimal number written as digits with an optional
// sign, fraction and exponent ("0.1", "-2", "1e-3"). Unlike
// decimal.NewFromString it refuses empty input, "NaN", "Inf", hexadecimal
// and surrounding spaces, and it caps the length so that hostile input
// cannot make it allocate without bound.
func ParseDecimal(s string) (decimal.Decimal, error) {
	if !isDecimalText(s) {
		return decimal.Decimal{}, ErrNotDecimal
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Decimal{}, ErrNotDecimal
	}
	return d, nil
}

// MaxDecimalText bounds the length of decimal text the gateway parses, so
// also its significant digits.
const MaxDecimalText = 64

// MaxDecimalExponent bounds the written exponent of decimal text (1e64 and
// 1e-64 parse, 1e65 and 1e-9999 do not), so that no accepted number
// expands to thousands of digits when it is logged, echoed or stored.
const MaxDecimalExponent = 64

// isDecimalText reports whether s is sign? digits [. digits] [e sign? digits],
// with at least one digit in the mantissa and an exponent of at most
// MaxDecimalExponent.
func isDecimalText(s string) bool {
	if len(s) == 0 || len(s) > MaxDecimalText {
		return false
	}
	i := 0
	if s[i] == '+' || s[i] == '-' {
		i++
	}
	digits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		digits, exp := 0, 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			if exp = exp*10 + int(s[i]-'0'); exp > MaxDecimalExponent {
				return false
			}
			i++
			digits++
		}
		if digits == 0 {
			return false
		}
	}
	return i == len(s)
}

// IsPlainDecimal reports whether s is a non-negative decimal in plain
// notation (digits with an optional fraction, no sign or exponent): the form
// of the spec's decimal-string fields. Adapters use it to pass exchange
// market data through without parsing every number.
func IsPlainDecimal(s string) bool {
	if len(s) == 0 || len(s) > MaxDecimalText {
		return false
	}
	digits, dot := 0, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !dot:
			dot = true
		default:
			return false
		}
	}
	return digits > 0 && s[0] != '.' && s[len(s)-1] != '.'
}
