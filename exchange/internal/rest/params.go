package rest

import (
	"net/url"
	"strings"
)

// Param is one name=value pair: {name, value}.
type Param [2]string

// Params keep the order they were added in, which is the order they are
// sent and signed in (url.Values would sort them).
type Params []Param

// Add appends name=value.
func (p *Params) Add(name, value string) { *p = append(*p, Param{name, value}) }

// Encode writes the pairs percent-encoded, joined by &.
func (p Params) Encode() string {
	var b strings.Builder
	for i, kv := range p {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(kv[0]))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(kv[1]))
	}
	return b.String()
}

// Join joins two encoded parameter strings with &, either may be empty.
func Join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "&" + b
}

// Limit is a request's limit as the adapters apply it: def when the
// request sets none (n <= 0), else n capped at most (docs/contract.md 2.3
// and 2.4 give each route's default and maximum).
func Limit(n, def, most int) int {
	if n <= 0 {
		return def
	}
	return min(n, most)
}
