package sim

import (
	"testing"

	"github.com/exgate/exgate"
)

// TestMayCrossNeverSkipsACrossing checks the minute skip of resting
// orders against the per-second book: for every second of many minutes, a
// limit exactly at that second's best ask (bid) must make mayCross of its
// minute true, or a fill would be skipped.
func TestMayCrossNeverSkipsACrossing(t *testing.T) {
	e := New(Options{})
	for _, sym := range []exgate.Symbol{{Base: "BTC", Quote: "USDT"}, {Base: "ETH", Quote: "BTC"}, {Base: "XRP", Quote: "USDT"}} {
		p := e.markets[sym]
		start := int64(1_795_000_000) - int64(1_795_000_000)%60
		skipped := 0
		for m := range int64(300) {
			a := start + m*997*60 // minutes spread over about 200 days
			// A buy 1% under the market is skipped in most minutes.
			_, asks := e.book(p, a)
			if ask, _, _ := asks.next(); !e.mayCross(p, exgate.SideBuy, ask*99/100, a, a+59) {
				skipped++
			}
			for s := a; s < a+60; s++ {
				bids, asks := e.book(p, s)
				bid, _, _ := bids.next()
				ask, _, _ := asks.next()
				if !e.mayCross(p, exgate.SideBuy, ask, a, a+59) {
					t.Fatalf("%s: a buy at %d crosses at second %d but mayCross of minute %d says no", sym, ask, s, a)
				}
				if !e.mayCross(p, exgate.SideSell, bid, a, a+59) {
					t.Fatalf("%s: a sell at %d crosses at second %d but mayCross of minute %d says no", sym, bid, s, a)
				}
			}
		}
		if skipped < 250 {
			t.Errorf("%s: only %d of 300 minutes skipped for a buy 1%% under the market", sym, skipped)
		}
	}
}
