package kraken_test

import (
	"testing"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/exchangetest"
	"github.com/exgate/exgate/exchange/kraken/krakenfake"
)

// btcUSDTKey is the fake's pair key of btcUSDT.
const btcUSDTKey = "XBTUSDT"

func fakeBook(srv *krakenfake.Server, n int) exgate.OrderBook {
	bids, asks := srv.Book(btcUSDTKey, n)
	conv := func(ls []krakenfake.Level) []exgate.Level {
		out := make([]exgate.Level, len(ls))
		for i, l := range ls {
			out[i] = exgate.Level{Price: l.Price.String(), Quantity: l.Volume.String()}
		}
		return out
	}
	return exgate.OrderBook{Bids: conv(bids), Asks: conv(asks)}
}

func TestStreams(t *testing.T) {
	exchangetest.RunStreams(t, func(t *testing.T) exchangetest.StreamSetup {
		e := newEnv(t, krakenfake.Options{}, nil)
		return exchangetest.StreamSetup{
			Setup: conformanceSetup(e),
			Fill: func(t *testing.T, id string) {
				if err := e.srv.FillOrder(testKey, id); err != nil {
					t.Fatal(err)
				}
			},
			Pause: func(*testing.T) func() { return e.srv.PauseStreams() },
			Book:  func(*testing.T) exgate.OrderBook { return fakeBook(e.srv, exgate.MaxStreamDepth) },
			ChangeBook: func(t *testing.T) {
				if err := e.srv.ChangeBook(btcUSDTKey); err != nil {
					t.Fatal(err)
				}
			},
			// Kraken's book channel has no sequence numbers: its CRC32
			// is the check (BookChecksum).
			SkipSequence: nil,
			BadChecksum:  func(*testing.T) { e.srv.BadChecksum() },
			TradeKline: func(t *testing.T, next bool) {
				if err := e.srv.TradeKline(btcUSDTKey, next); err != nil {
					t.Fatal(err)
				}
			},
		}
	})
}
