package binance

import (
	"testing"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

// The gateway parses these answers on every market data request; a load
// run repeats them (see binancefake's BenchmarkHotPaths for the other side).

func BenchmarkParseKlines(b *testing.B) {
	e := newEnv(b)
	body, err := e.ex.c.doText(b.Context(), request{ep: epKlines, params: rest.Params{{"symbol", "BTCUSDT"}, {"interval", "1m"}, {"limit", "500"}}})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if ks, err := parseKlines(body, exgate.Interval1m); err != nil || len(ks) != 500 {
			b.Fatal(len(ks), err)
		}
	}
}

func BenchmarkParseBook(b *testing.B) {
	e := newEnv(b)
	body, err := e.ex.c.doText(b.Context(), request{ep: epDepth, params: rest.Params{{"symbol", "BTCUSDT"}, {"limit", "1000"}}})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if book, err := parseBook(body); err != nil || len(book.bids) != 1000 {
			b.Fatal(err)
		}
	}
}
