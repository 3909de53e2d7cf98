package binance

import (
	"errors"
	"strings"

	"github.com/exgate/exgate"
)

// scanner reads the two large market data answers (klines and depth)
// without reflection: they are arrays of scalars, and decoding them with
// encoding/json costs milliseconds per answer. It accepts only the shapes
// Binance sends (strings without escapes); on anything else the callers
// fall back to encoding/json, which then decides.
//
// It works on the answer as one string, so the values it returns are
// substrings of it and cost no allocation each.
type scanner struct {
	b string
	i int
}

var errShape = errors.New("unexpected JSON shape")

func (s *scanner) ws() {
	b, i := s.b, s.i
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	s.i = i
}

// consume skips white space and then c if it is next.
func (s *scanner) consume(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// end reports whether only white space is left.
func (s *scanner) end() bool {
	s.ws()
	return s.i == len(s.b)
}

// str reads a string without escapes.
func (s *scanner) str() (string, error) {
	if !s.consume('"') {
		return "", errShape
	}
	// The loop works on locals: through s, every byte would be a load
	// and a store of s.i.
	b, start := s.b, s.i
	for i := start; i < len(b); i++ {
		if c := b[i]; stopsString[c] {
			if c != '"' {
				return "", errShape // escapes, control bytes, non-ASCII: left to encoding/json
			}
			s.i = i + 1
			return b[start:i], nil
		}
	}
	return "", errShape
}

// decimal reads a string without escapes like str and reports whether it
// is a plain decimal (exgate.IsPlainDecimal), checked in the same pass:
// the prices and volumes of a kline row are read once, not twice.
func (s *scanner) decimal() (v string, plain bool, err error) {
	if !s.consume('"') {
		return "", false, errShape
	}
	b, start := s.b, s.i
	digits, dots := 0, 0
	for i := start; i < len(b); i++ {
		c := b[i]
		switch {
		case c >= '0' && c <= '9':
			digits++
			continue
		case c == '.':
			dots++
			continue
		case !stopsString[c]:
			continue
		case c != '"':
			return "", false, errShape // escapes, control bytes, non-ASCII: left to encoding/json
		}
		s.i = i + 1
		v = b[start:i]
		plain = digits > 0 && dots <= 1 && digits+dots == len(v) && v[0] != '.' && v[len(v)-1] != '.' && len(v) <= exgate.MaxDecimalText
		return v, plain, nil
	}
	return "", false, errShape
}

// stopsString marks the bytes that end str's fast loop: the closing quote,
// and the bytes it leaves to encoding/json (the backslash of an escape,
// control bytes and the bytes of non-ASCII characters).
var stopsString = func() (t [256]bool) {
	for c := range t {
		t[c] = c == '"' || c == '\\' || c < 0x20 || c >= 0x80
	}
	return t
}()

// token reads a number or literal.
func (s *scanner) token() (string, error) {
	s.ws()
	b, start := s.b, s.i
	i := start
	for ; i < len(b); i++ {
		c := b[i]
		if c == ',' || c == ']' || c == '}' || c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			break
		}
		if c == '"' || c == '[' || c == '{' {
			return "", errShape
		}
	}
	if i == start {
		return "", errShape
	}
	s.i = i
	return b[start:i], nil
}

// skip reads any scalar value (a string or a token).
func (s *scanner) skip() error {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '"' {
		_, err := s.str()
		return err
	}
	_, err := s.token()
	return err
}

// next ends one element of an array: a comma (more follow) or the closing
// bracket.
func (s *scanner) next() (more bool, err error) {
	if s.consume(',') {
		return true, nil
	}
	if s.consume(']') {
		return false, nil
	}
	return false, errShape
}

// scanKlines reads kline rows into their raw parts and hands each to row
// as it is read, so that no slice of raw rows is built; n estimates the
// number of rows for the caller's sizing, end is the offset in b just
// after the row's closing bracket. The rawKline passed to row is reused
// for the next row.
func scanKlines(b string, row func(n int, r *rawKline, end int) error) error {
	s := &scanner{b: b}
	if !s.consume('[') {
		return errShape
	}
	if s.consume(']') {
		return checkEnd(s)
	}
	// A Binance kline row is about 175 bytes.
	return scanKlineRows(s, len(b)/160+1, row)
}

// scanKlinesAfter reads the rest of a klines answer from just after one of
// its rows: either the end of the array or more rows, handed to row as
// scanKlines does.
func scanKlinesAfter(b string, row func(n int, r *rawKline, end int) error) error {
	s := &scanner{b: b}
	if more, err := s.next(); err != nil {
		return err
	} else if !more {
		return checkEnd(s)
	}
	return scanKlineRows(s, len(b)/160+1, row)
}

// scanKlineRows reads rows from the start of one to the end of the array.
func scanKlineRows(s *scanner, n int, row func(n int, r *rawKline, end int) error) error {
	var r rawKline
	for {
		if !s.consume('[') {
			return errShape
		}
		r = rawKline{}
		open, err := s.token()
		if err != nil {
			return err
		}
		r.open = open
		for field := 1; ; field++ {
			if more, err := s.next(); err != nil {
				return err
			} else if !more {
				if field < 9 {
					return errShape
				}
				break
			}
			switch {
			case field <= 5:
				if r.values[field-1], r.plain[field-1], err = s.decimal(); err != nil {
					return err
				}
			case field == 8:
				if r.trades, err = s.token(); err != nil {
					return err
				}
			default:
				if err := s.skip(); err != nil {
					return err
				}
			}
		}
		if err := row(n, &r, s.i); err != nil {
			return err
		}
		if more, err := s.next(); err != nil {
			return err
		} else if !more {
			return checkEnd(s)
		}
	}
}

// rawKline is one kline row as scanned: open time and trade count as
// number tokens, open, high, low, close and volume as strings.
type rawKline struct {
	open, trades string
	values       [5]string
	// plain[i] reports that values[i] is known to be a plain decimal.
	plain [5]bool
}

func checkEnd(s *scanner) error {
	if !s.end() {
		return errShape
	}
	return nil
}

// scanBook reads a depth answer's bids and asks as [price, quantity]
// strings; other members are skipped.
func scanBook(b string) (bids, asks [][2]string, err error) {
	s := &scanner{b: b}
	if !s.consume('{') {
		return nil, nil, errShape
	}
	if s.consume('}') {
		return nil, nil, checkEnd(s)
	}
	for {
		key, err := s.str()
		if err != nil || !s.consume(':') {
			return nil, nil, errShape
		}
		switch key {
		case "bids":
			if bids, err = scanLevels(s); err != nil {
				return nil, nil, err
			}
		case "asks":
			if asks, err = scanLevels(s); err != nil {
				return nil, nil, err
			}
		default:
			if err := s.skip(); err != nil {
				return nil, nil, err
			}
		}
		if s.consume(',') {
			continue
		}
		if s.consume('}') {
			return bids, asks, checkEnd(s)
		}
		return nil, nil, errShape
	}
}

func scanLevels(s *scanner) ([][2]string, error) {
	if !s.consume('[') {
		return nil, errShape
	}
	out := [][2]string{}
	if s.consume(']') {
		return out, nil
	}
	for {
		if !s.consume('[') {
			return nil, errShape
		}
		var l [2]string
		var err error
		if l[0], err = s.str(); err != nil || !s.consume(',') {
			return nil, errShape
		}
		if l[1], err = s.str(); err != nil {
			return nil, err
		}
		for s.consume(',') { // fields Binance might add
			if err := s.skip(); err != nil {
				return nil, err
			}
		}
		if !s.consume(']') {
			return nil, errShape
		}
		out = append(out, l)
		if more, err := s.next(); err != nil {
			return nil, err
		} else if !more {
			return out, nil
		}
	}
}

// comparePlain compares two plain decimals (digits with an optional
// fraction, as exgate.IsPlainDecimal accepts) by value.
func comparePlain(a, b string) int {
	ai, af, _ := strings.Cut(a, ".")
	bi, bf, _ := strings.Cut(b, ".")
	ai, bi = strings.TrimLeft(ai, "0"), strings.TrimLeft(bi, "0")
	if len(ai) != len(bi) {
		if len(ai) < len(bi) {
			return -1
		}
		return 1
	}
	if c := strings.Compare(ai, bi); c != 0 {
		return c
	}
	af, bf = strings.TrimRight(af, "0"), strings.TrimRight(bf, "0")
	return strings.Compare(af, bf)
}
