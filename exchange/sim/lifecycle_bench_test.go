package sim_test

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// BenchmarkReadRestingOrder measures reading a GTC order that has rested
// a day without filling: the path of every minute since it was placed is
// checked (most minutes skipped whole) on every read.
func BenchmarkReadRestingOrder(b *testing.B) {
	e, _, clk := newSim(b)
	ctx, cred := b.Context(), testCredential()
	book, err := e.OrderBook(ctx, cred, exgate.OrderBookRequest{Symbol: btcUSDT, Limit: 1})
	if err != nil {
		b.Fatal(err)
	}
	price := decimal.RequireFromString(book.Bids[0].Price).Mul(decimal.RequireFromString("0.5")).Round(2)
	if _, err := e.PlaceLimitOrder(ctx, cred, limitReq("bench1", exgate.SideBuy, "0.01", price.String(), exgate.GTC, false)); err != nil {
		b.Fatal(err)
	}
	clk.Add(24 * time.Hour)
	for b.Loop() {
		o, err := e.QueryOrder(ctx, cred, exgate.OrderQuery{Symbol: btcUSDT, ClientOrderID: "bench1"})
		if err != nil || o.Status != exgate.OrderPending {
			b.Fatalf("%+v %v", o, err)
		}
	}
}
