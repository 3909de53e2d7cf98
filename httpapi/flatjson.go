package httpapi

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// flatJSON parses one JSON object whose members are scalars, calling member
// for each in document order with its decoded name, its value (a string's
// decoded content; a number's literal text; true, false or null) and
// whether the value was a string. It follows RFC 8259 exactly, refuses
// invalid UTF-8, and is the hot path of every POST, so it avoids allocating
// where the text needs no unescaping: names and values are substrings of b.
func flatJSON(b string, member func(name, value string, isString bool) error) error {
	p := jsonScanner{b: b}
	p.space()
	if !p.eat('{') {
		return errNotScalarObject
	}
	p.space()
	if p.eat('}') {
		return p.end()
	}
	for {
		p.space()
		if p.peek() != '"' {
			return p.fail("a member name")
		}
		name, err := p.str()
		if err != nil {
			return err
		}
		p.space()
		if !p.eat(':') {
			return p.fail("':'")
		}
		p.space()
		var value string
		isString := false
		switch c := p.peek(); {
		case c == '"':
			value, err = p.str()
			isString = true
		case c == '-' || (c >= '0' && c <= '9'):
			value, err = p.number()
		case c == 't':
			value, err = p.literal("true")
		case c == 'f':
			value, err = p.literal("false")
		case c == 'n':
			value, err = p.literal("null")
		case c == '{' || c == '[':
			return fmt.Errorf("member %q: %w", name, errNotScalarObject)
		default:
			return p.fail("a value")
		}
		if err != nil {
			return err
		}
		if err := member(name, value, isString); err != nil {
			return err
		}
		p.space()
		if p.eat(',') {
			continue
		}
		if p.eat('}') {
			return p.end()
		}
		return p.fail("',' or '}'")
	}
}

type jsonScanner struct {
	b string
	i int
}

var errJSONSyntax = errors.New("body is not valid JSON")

func (p *jsonScanner) fail(want string) error {
	if p.i >= len(p.b) {
		return fmt.Errorf("%w: unexpected end, want %s", errJSONSyntax, want)
	}
	return fmt.Errorf("%w: at offset %d want %s", errJSONSyntax, p.i, want)
}

func (p *jsonScanner) peek() byte {
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

func (p *jsonScanner) eat(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *jsonScanner) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonScanner) end() error {
	p.space()
	if p.i != len(p.b) {
		return errors.New("body must hold exactly one JSON object")
	}
	return nil
}

func (p *jsonScanner) literal(word string) (string, error) {
	if len(p.b)-p.i < len(word) || p.b[p.i:p.i+len(word)] != word {
		return "", p.fail(word)
	}
	p.i += len(word)
	return word, nil
}

// number scans a JSON number and returns its literal text.
func (p *jsonScanner) number() (string, error) {
	start := p.i
	p.eat('-')
	switch c := p.peek(); {
	case c == '0':
		p.i++
	case c >= '1' && c <= '9':
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
		}
	default:
		return "", p.fail("a digit")
	}
	if p.eat('.') {
		if !p.digits() {
			return "", p.fail("a digit after '.'")
		}
	}
	if c := p.peek(); c == 'e' || c == 'E' {
		p.i++
		if c := p.peek(); c == '+' || c == '-' {
			p.i++
		}
		if !p.digits() {
			return "", p.fail("an exponent digit")
		}
	}
	return p.b[start:p.i], nil
}

func (p *jsonScanner) digits() bool {
	start := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	return p.i > start
}

// str scans a JSON string and returns its decoded content.
func (p *jsonScanner) str() (string, error) {
	p.i++ // the opening quote
	start := p.i
	// Fast path: no escapes.
	for p.i < len(p.b) {
		c := p.b[p.i]
		if c == '"' {
			s := p.b[start:p.i]
			p.i++
			if !utf8.ValidString(s) {
				return "", fmt.Errorf("%w: a string is not valid UTF-8", errJSONSyntax)
			}
			return s, nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", p.fail("no control character in a string")
		}
		p.i++
	}
	buf := append([]byte(nil), p.b[start:p.i]...)
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			if !utf8.Valid(buf) {
				return "", fmt.Errorf("%w: a string is not valid UTF-8", errJSONSyntax)
			}
			return string(buf), nil
		case c < 0x20:
			return "", p.fail("no control character in a string")
		case c != '\\':
			buf = append(buf, c)
			p.i++
			continue
		}
		p.i++ // the backslash
		if p.i >= len(p.b) {
			return "", p.fail("an escape")
		}
		e := p.b[p.i]
		p.i++
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", p.fail("four hex digits")
			}
			if utf16.IsSurrogate(r) {
				// A valid pair makes one rune; a lone surrogate
				// becomes U+FFFD, as encoding/json does.
				save := p.i
				if p.eat('\\') && p.eat('u') {
					if r2, ok := p.hex4(); ok {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							buf = utf8.AppendRune(buf, dec)
							continue
						}
					}
				}
				p.i = save
				r = utf8.RuneError
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return "", p.fail("a valid escape")
		}
	}
	return "", p.fail("the closing quote")
}

func (p *jsonScanner) hex4() (rune, bool) {
	if len(p.b)-p.i < 4 {
		return 0, false
	}
	v, err := strconv.ParseUint(p.b[p.i:p.i+4], 16, 32)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(v), true
}
