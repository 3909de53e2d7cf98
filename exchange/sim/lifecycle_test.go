package sim_test

import (
	"errors"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/sim"
)

// bestPrices reads the best bid and ask of the sim's book now.
func bestPrices(t *testing.T, e *sim.Exchange, sym exgate.Symbol) (bid, ask decimal.Decimal) {
	t.Helper()
	book, err := e.OrderBook(t.Context(), testCredential(), exgate.OrderBookRequest{Symbol: sym, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	return dec(book.Bids[0].Price), dec(book.Asks[0].Price)
}

func limitReq(id string, side exgate.Side, qty, price string, tif exgate.TimeInForce, postOnly bool) exgate.LimitOrderRequest {
	return exgate.LimitOrderRequest{Symbol: btcUSDT, Side: side, Quantity: dec(qty), Price: dec(price),
		TimeInForce: tif, PostOnly: postOnly, ClientOrderID: id}
}

func lockedOf(t *testing.T, e *sim.Exchange, asset string) decimal.Decimal {
	t.Helper()
	bals, err := e.Balances(t.Context(), testCredential())
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bals {
		if b.Asset == asset {
			return b.Locked
		}
	}
	return decimal.Zero
}

func TestLimitOrderRestsHoldsAndCancels(t *testing.T) {
	e, _, _ := newSim(t)
	ctx, cred := t.Context(), testCredential()
	bid, _ := bestPrices(t, e, btcUSDT)
	price := bid.Mul(dec("0.9")).Round(2)
	o, err := e.PlaceLimitOrder(ctx, cred, limitReq("gtc1", exgate.SideBuy, "0.5", price.String(), exgate.GTC, false))
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != exgate.OrderPending || o.Type != exgate.OrderTypeLimit || !o.Price.Equal(price) || o.ExchangeOrderID == "" {
		t.Fatalf("placed %+v", o)
	}
	if q, err := e.QueryOrder(ctx, cred, exgate.OrderQuery{Symbol: btcUSDT, ClientOrderID: "gtc1", ExchangeOrderID: o.ExchangeOrderID}); err != nil || q.ID != "gtc1" {
		t.Fatalf("QueryOrder by both ids: %+v %v", q, err)
	}
	hold := price.Mul(dec("0.5"))
	if got := balances(t, e, cred)["USDT"]; !got.Equal(dec("100000").Sub(hold)) {
		t.Errorf("USDT available %s, want 100000 - %s held", got, hold)
	}
	if got := lockedOf(t, e, "USDT"); !got.Equal(hold) {
		t.Errorf("USDT locked %s, want %s", got, hold)
	}
	open, err := e.OpenOrders(ctx, cred, exgate.OrderFilter{})
	if err != nil || len(open) != 1 || open[0].ID != "gtc1" {
		t.Fatalf("open orders %v %v", open, err)
	}
	c, err := e.CancelOrder(ctx, cred, exgate.CancelRequest{Symbol: btcUSDT, ClientOrderID: "gtc1"})
	if err != nil || c.Status != exgate.OrderCanceled {
		t.Fatalf("cancel: %+v %v", c, err)
	}
	if got := balances(t, e, cred)["USDT"]; !got.Equal(dec("100000")) {
		t.Errorf("USDT after cancel %s, want all released", got)
	}
	again, err := e.CancelOrder(ctx, cred, exgate.CancelRequest{ClientOrderID: "gtc1"})
	if err != nil || again.Status != exgate.OrderCanceled {
		t.Errorf("second cancel: %+v %v", again, err)
	}
	if got := balances(t, e, cred)["USDT"]; !got.Equal(dec("100000")) {
		t.Errorf("USDT after a second cancel %s: released twice", got)
	}
	if _, err := e.CancelOrder(ctx, cred, exgate.CancelRequest{ClientOrderID: "nope"}); !errors.Is(err, exgate.ErrNotFound) {
		t.Errorf("cancel of an unknown order: %v", err)
	}
	recent, err := e.RecentOrders(ctx, cred, exgate.OrderFilter{Symbol: btcUSDT})
	if err != nil || len(recent) != 1 || recent[0].Status != exgate.OrderCanceled {
		t.Errorf("recent %+v %v", recent, err)
	}
}

func TestLimitOrderTimeInForce(t *testing.T) {
	e, _, _ := newSim(t)
	ctx, cred := t.Context(), testCredential()
	bid, ask := bestPrices(t, e, btcUSDT)
	far := bid.Mul(dec("0.9")).Round(2).String()
	cross := ask.Mul(dec("1.001")).Round(2).String()
	tests := []struct {
		name       string
		req        exgate.LimitOrderRequest
		wantStatus exgate.OrderStatus
		wantCode   exgate.Code
		wantParam  string
	}{
		{"GTC crossing fills", limitReq("x1", exgate.SideBuy, "0.01", cross, exgate.GTC, false), exgate.OrderFilled, "", ""},
		{"IOC away expires", limitReq("x2", exgate.SideBuy, "0.01", far, exgate.IOC, false), exgate.OrderExpired, "", ""},
		{"IOC crossing fills", limitReq("x3", exgate.SideBuy, "0.01", cross, exgate.IOC, false), exgate.OrderFilled, "", ""},
		{"FOK too large expires", limitReq("x4", exgate.SideBuy, "1", ask.String(), exgate.FOK, false), exgate.OrderExpired, "", ""},
		{"FOK crossing fills", limitReq("x5", exgate.SideBuy, "0.01", cross, exgate.FOK, false), exgate.OrderFilled, "", ""},
		{"postOnly crossing refused", limitReq("x6", exgate.SideBuy, "0.01", cross, exgate.GTC, true), "", exgate.CodeOrderRejected, ""},
		{"postOnly away rests", limitReq("x7", exgate.SideSell, "0.01", ask.Mul(dec("1.1")).Round(2).String(), exgate.GTC, true), exgate.OrderPending, "", ""},
		{"price off the tick", limitReq("x8", exgate.SideBuy, "0.01", "100.001", exgate.GTC, false), "", exgate.CodeInvalidParameter, "price"},
		{"postOnly with IOC", limitReq("x9", exgate.SideBuy, "0.01", far, exgate.IOC, true), "", exgate.CodeInvalidParameter, "postOnly"},
		{"zero price", limitReq("x10", exgate.SideBuy, "0.01", "0", exgate.GTC, false), "", exgate.CodeInvalidParameter, "price"},
		{"below minimum notional", limitReq("x11", exgate.SideBuy, "0.00001", "1", exgate.GTC, false), "", exgate.CodeQuantityTooSmall, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := balances(t, e, cred)
			o, err := e.PlaceLimitOrder(ctx, cred, tc.req)
			if tc.wantCode != "" {
				wantCode(t, err, tc.wantCode, tc.wantParam)
				if after := balances(t, e, cred); !after["USDT"].Equal(before["USDT"]) || !after["BTC"].Equal(before["BTC"]) {
					t.Errorf("a refused order moved balances: %v -> %v", before, after)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.Status != tc.wantStatus {
				t.Fatalf("status %s, want %s: %+v", o.Status, tc.wantStatus, o)
			}
			if o.Status == exgate.OrderFilled {
				if !o.ExecutedQuantity.Equal(o.Quantity.Decimal) || o.AveragePrice.GreaterThan(dec(cross)) {
					t.Errorf("filled %+v", o)
				}
				spent := before["USDT"].Sub(balances(t, e, cred)["USDT"])
				if !spent.Equal(o.QuoteQuantity.Decimal) {
					t.Errorf("spent %s USDT for a fill of %s", spent, o.QuoteQuantity)
				}
			}
			if o.Status == exgate.OrderExpired && !o.ExecutedQuantity.IsZero() && tc.req.TimeInForce == exgate.FOK {
				t.Errorf("FOK expired with %s executed", o.ExecutedQuantity)
			}
			if o.Status == exgate.OrderExpired {
				if after := balances(t, e, cred); !after["USDT"].Equal(before["USDT"]) {
					t.Errorf("expired order kept %s USDT", before["USDT"].Sub(after["USDT"]))
				}
			}
		})
	}
	fills, err := e.Fills(ctx, cred, exgate.OrderFilter{Symbol: btcUSDT})
	if err != nil || len(fills) < 3 {
		t.Fatalf("fills %v %v", fills, err)
	}
}

// TestRestingOrderFillsWhenThePriceCrosses places a buy just under the
// market, lets the clock run until the seeded path comes down to it, and
// checks that two instances on one ledger agree on the fill.
func TestRestingOrderFillsWhenThePriceCrosses(t *testing.T) {
	e, l, clk := newSim(t)
	other := sim.New(sim.Options{Ledger: l, Now: clk.Now})
	ctx, cred := t.Context(), testCredential()
	bid, _ := bestPrices(t, e, btcUSDT)
	price := bid.Sub(dec("30"))
	if _, err := e.PlaceLimitOrder(ctx, cred, limitReq("rest1", exgate.SideBuy, "1", price.String(), exgate.GTC, false)); err != nil {
		t.Fatal(err)
	}
	var o exgate.Order
	for range 24 * 60 {
		clk.Add(time.Minute)
		var err error
		if o, err = other.QueryOrder(ctx, cred, exgate.OrderQuery{Symbol: btcUSDT, ClientOrderID: "rest1"}); err != nil {
			t.Fatal(err)
		}
		if o.Status != exgate.OrderPending {
			break
		}
	}
	if o.Status != exgate.OrderFilled && o.Status != exgate.OrderPartiallyFilled {
		t.Fatalf("never filled in a day: %+v", o)
	}
	if !o.AveragePrice.Equal(price) {
		t.Errorf("maker fill at %s, want its limit %s", o.AveragePrice, price)
	}
	mine, err := e.QueryOrder(ctx, cred, exgate.OrderQuery{ClientOrderID: "rest1"})
	if err != nil || !mine.ExecutedQuantity.Equal(o.ExecutedQuantity.Decimal) {
		t.Fatalf("instances disagree: %+v vs %+v (%v)", mine, o, err)
	}
	c, err := e.CancelOrder(ctx, cred, exgate.CancelRequest{ClientOrderID: "rest1"})
	if err != nil {
		t.Fatal(err)
	}
	bought := balances(t, e, cred)["BTC"].Sub(dec("10"))
	if want := c.ExecutedQuantity.Sub(c.Fees.Decimal); !bought.Equal(want) {
		t.Errorf("BTC received %s, want executed - fee = %s", bought, want)
	}
	spent := dec("100000").Sub(balances(t, e, cred)["USDT"])
	if !spent.Equal(c.ExecutedQuantity.Mul(price)) {
		t.Errorf("USDT spent %s, want %s at the limit", spent, c.ExecutedQuantity.Mul(price))
	}
	if lk := lockedOf(t, e, "USDT"); !lk.IsZero() {
		t.Errorf("USDT still locked %s after the cancel", lk)
	}
	t.Logf("filled %s of 1 at %s, status after cancel %s", c.ExecutedQuantity, price, c.Status)
}
