package console

import (
	"net/http/httptest"
	"net/url"
	"regexp"
	"testing"

	"github.com/exgate/exgate"
)

var symbolText = regexp.MustCompile(`^[A-Z0-9]{1,20}/[A-Z0-9]{1,20}$`)

// FuzzMarketQuery: the market page's query (from the operator's browser)
// never panics, and what it accepts is a known exchange, a BASE/QUOTE pair
// of asset codes and a normalized interval.
func FuzzMarketQuery(f *testing.F) {
	for _, s := range []string{"", "exchange=sim&symbol=BTC/USDT&interval=1m", "symbol=btc%2Fusdt", "symbol=BTC/", "interval=1M", "exchange=SIM&symbol=%00/%FF", "symbol=a/b/c"} {
		f.Add(s)
	}
	exchanges := map[string]exgate.Exchange{"sim": nil}
	f.Fuzz(func(t *testing.T, raw string) {
		if _, err := url.ParseQuery(raw); err != nil {
			return
		}
		r := httptest.NewRequest("GET", "/market", nil)
		r.URL.RawQuery = raw
		m := readMarketQuery(r, exchanges)
		if m.Err != "" {
			return
		}
		if m.Exchange != "sim" || !symbolText.MatchString(m.Symbol.String()) {
			t.Fatalf("accepted %q as %+v", raw, m)
		}
		if _, err := exgate.ParseInterval(string(m.Interval)); err != nil {
			t.Fatalf("accepted interval %q: %v", m.Interval, err)
		}
	})
}
