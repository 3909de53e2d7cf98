package gateio_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/gateio/gateiofake"
)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// The fake's BTC_USDT book: asks 60000.5 (0.05 BTC), 60001 (0.15), ...;
// bids 59999.5 (0.05), 59999 (0.15), ...; amount precision 6, price
// precision 1, minimums 0.00001 BTC and 3 USDT.
func TestPlaceMarketOrderSentAmounts(t *testing.T) {
	tests := []struct {
		name       string
		side       exgate.Side
		qty        string
		in         exgate.QuantityIn
		wantSide   string
		wantAmount string // Gate's amount as sent
		wantQty    string // the order's reported quantity, in the requested asset
	}{
		{name: "BUY in quote is sent as it is", side: exgate.SideBuy, qty: "250", in: exgate.InQuote, wantSide: "buy", wantAmount: "250", wantQty: "250"},
		{name: "SELL in base is sent as it is", side: exgate.SideSell, qty: "0.01", in: exgate.InBase, wantSide: "sell", wantAmount: "0.01", wantQty: "0.01"},
		{name: "BUY in base costs its asks", side: exgate.SideBuy, qty: "0.01", in: exgate.InBase, wantSide: "buy", wantAmount: "600", wantQty: "0.01"},
		{name: "SELL in quote sells what the bids pay", side: exgate.SideSell, qty: "250", in: exgate.InQuote, wantSide: "sell", wantAmount: "0.004166", wantQty: "250"},
		{name: "BUY in base walks two levels", side: exgate.SideBuy, qty: "0.1", in: exgate.InBase, wantSide: "buy", wantAmount: "6000", wantQty: "0.1"},
		{name: "SELL in quote walks two levels", side: exgate.SideSell, qty: "5000", in: exgate.InQuote, wantSide: "sell", wantAmount: "0.083334", wantQty: "5000"},
		{name: "BUY in quote rounds down to the price precision", side: exgate.SideBuy, qty: "250.07", in: exgate.InQuote, wantSide: "buy", wantAmount: "250", wantQty: "250"},
		{name: "SELL in base rounds down to the amount precision", side: exgate.SideSell, qty: "0.0123456789", in: exgate.InBase, wantSide: "sell", wantAmount: "0.012345", wantQty: "0.012345"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOptions{})
			id := exgate.NewID('o')
			o, err := e.ex.PlaceMarketOrder(t.Context(), e.cred, exgate.OrderRequest{
				Symbol: btcUSDT, Side: tc.side, Quantity: dec(tc.qty), QuantityIn: tc.in, ClientOrderID: id,
			})
			if err != nil {
				t.Fatal(err)
			}
			sent := e.srv.SentOrders("gate-key")
			if len(sent) != 1 {
				t.Fatalf("%d orders sent, want 1", len(sent))
			}
			want := gateiofake.SentOrder{Text: "t-" + id, CurrencyPair: "BTC_USDT", Type: "market", Account: "spot",
				Side: tc.wantSide, Amount: tc.wantAmount, TimeInForce: "ioc", ActionMode: "FULL"}
			if sent[0] != want {
				t.Errorf("sent %+v\nwant %+v", sent[0], want)
			}
			if !o.Quantity.Equal(dec(tc.wantQty)) || o.QuantityIn != tc.in.Asset(btcUSDT) || o.Side != tc.side {
				t.Errorf("order quantity %s %s side %s, want %s %s %s", o.Quantity, o.QuantityIn, o.Side, tc.wantQty, tc.in.Asset(btcUSDT), tc.side)
			}
			if o.Status != exgate.OrderFilled || o.Fees == nil || o.ExecutedQuantity == nil || !o.ExecutedQuantity.IsPositive() {
				t.Errorf("order %+v, want FILLED with fees and an executed quantity", o)
			}
			wantFeesIn := "BTC"
			if tc.side == exgate.SideSell {
				wantFeesIn = "USDT"
			}
			if o.FeesIn != wantFeesIn || o.ID != id || o.ClientOrderID != id || o.ExchangeOrderID == "" || o.RawStatus != "closed/filled" {
				t.Errorf("order %+v", o)
			}
		})
	}
}

func TestPlaceMarketOrderRefusedLocally(t *testing.T) {
	thin := []gateiofake.Level{{Price: "60000.5", Amount: "0.01"}}
	tests := []struct {
		name    string
		side    exgate.Side
		qty     string
		in      exgate.QuantityIn
		setup   func(*gateiofake.Server)
		id      string
		want    exgate.Code
		mention string
	}{
		{name: "BUY quote under min_quote_amount", side: exgate.SideBuy, qty: "2.9", in: exgate.InQuote, want: exgate.CodeQuantityTooSmall, mention: "3 USDT"},
		{name: "SELL base under min_base_amount", side: exgate.SideSell, qty: "0.000005", in: exgate.InBase, want: exgate.CodeQuantityTooSmall, mention: "0.00001 BTC"},
		{name: "SELL base rounding to zero", side: exgate.SideSell, qty: "0.0000001", in: exgate.InBase, want: exgate.CodeQuantityTooSmall, mention: "0.00001"},
		{name: "SELL base worth under min_quote_amount", side: exgate.SideSell, qty: "0.00002", in: exgate.InBase, want: exgate.CodeQuantityTooSmall, mention: "3 USDT"},
		{name: "BUY base costing under min_quote_amount", side: exgate.SideBuy, qty: "0.00004", in: exgate.InBase, want: exgate.CodeQuantityTooSmall, mention: "3 USDT"},
		{name: "SELL quote under min_quote_amount", side: exgate.SideSell, qty: "1", in: exgate.InQuote, want: exgate.CodeQuantityTooSmall, mention: "3 USDT"},
		{name: "BUY base over max_base_amount", side: exgate.SideBuy, qty: "20000", in: exgate.InBase, want: exgate.CodeOrderRejected, mention: "10000"},
		{name: "BUY base deeper than the book", side: exgate.SideBuy, qty: "0.5", in: exgate.InBase, want: exgate.CodeOrderRejected, mention: "asks",
			setup: func(s *gateiofake.Server) { s.SetBook("BTC_USDT", thin, thin) }},
		{name: "SELL quote deeper than the book", side: exgate.SideSell, qty: "100000", in: exgate.InQuote, want: exgate.CodeOrderRejected, mention: "bids",
			setup: func(s *gateiofake.Server) { s.SetBook("BTC_USDT", thin, thin) }},
		{name: "untradable pair", side: exgate.SideBuy, qty: "100", in: exgate.InQuote, want: exgate.CodeOrderRejected, mention: "untradable",
			setup: func(s *gateiofake.Server) { s.SetTradeStatus("BTC_USDT", "untradable") }},
		{name: "buy on a sellable pair", side: exgate.SideBuy, qty: "100", in: exgate.InQuote, want: exgate.CodeOrderRejected, mention: "sellable",
			setup: func(s *gateiofake.Server) { s.SetTradeStatus("BTC_USDT", "sellable") }},
		{name: "sell on a buyable pair", side: exgate.SideSell, qty: "0.01", in: exgate.InBase, want: exgate.CodeOrderRejected, mention: "buyable",
			setup: func(s *gateiofake.Server) { s.SetTradeStatus("BTC_USDT", "buyable") }},
		{name: "client id Gate cannot take", side: exgate.SideBuy, qty: "100", in: exgate.InQuote, id: "no spaces allowed", want: exgate.CodeInvalidParameter},
		{name: "client id too long", side: exgate.SideBuy, qty: "100", in: exgate.InQuote, id: strings.Repeat("a", 37), want: exgate.CodeInvalidParameter},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOptions{})
			if tc.setup != nil {
				tc.setup(e.srv)
			}
			id := tc.id
			if id == "" {
				id = exgate.NewID('o')
			}
			_, err := e.ex.PlaceMarketOrder(t.Context(), e.cred, exgate.OrderRequest{
				Symbol: btcUSDT, Side: tc.side, Quantity: dec(tc.qty), QuantityIn: tc.in, ClientOrderID: id,
			})
			ge := wantCode(t, err, tc.want)
			if !strings.Contains(ge.Detail, tc.mention) {
				t.Errorf("detail %q, want it to mention %q", ge.Detail, tc.mention)
			}
			if n := e.srv.Requests("/api/v4/spot/orders"); n != 0 {
				t.Errorf("%d order requests sent, want none", n)
			}
		})
	}
}

func TestPlaceMarketOrderOtherPairs(t *testing.T) {
	tests := []struct {
		sym exgate.Symbol
		qty string
		in  exgate.QuantityIn
	}{
		{exgate.Symbol{Base: "ETH", Quote: "BTC"}, "0.5", exgate.InBase},
		{exgate.Symbol{Base: "ETH", Quote: "BTC"}, "0.01", exgate.InQuote},
		{exgate.Symbol{Base: "SOL", Quote: "USDT"}, "3", exgate.InBase},
		{exgate.Symbol{Base: "XRP", Quote: "USDT"}, "50", exgate.InQuote},
	}
	for _, tc := range tests {
		for _, side := range []exgate.Side{exgate.SideBuy, exgate.SideSell} {
			t.Run(tc.sym.String()+" "+string(side)+" "+tc.qty+" "+tc.in.Asset(tc.sym), func(t *testing.T) {
				e := newEnv(t, envOptions{})
				o, err := e.ex.PlaceMarketOrder(t.Context(), e.cred, exgate.OrderRequest{
					Symbol: tc.sym, Side: side, Quantity: dec(tc.qty), QuantityIn: tc.in, ClientOrderID: exgate.NewID('o'),
				})
				if err != nil {
					t.Fatal(err)
				}
				if o.Status != exgate.OrderFilled || o.Asset1 != tc.sym.Base || o.Asset2 != tc.sym.Quote {
					t.Errorf("order %+v", o)
				}
			})
		}
	}
}

func TestQueryOrder(t *testing.T) {
	t.Run("finished order found by client id in the finished list", func(t *testing.T) {
		e := newEnv(t, envOptions{})
		id := exgate.NewID('o')
		placed, err := e.ex.PlaceMarketOrder(t.Context(), e.cred, exgate.OrderRequest{Symbol: btcUSDT, Side: exgate.SideBuy, Quantity: dec("100"), QuantityIn: exgate.InQuote, ClientOrderID: id})
		if err != nil {
			t.Fatal(err)
		}
		e.srv.ResetCounters()
		got, err := e.ex.QueryOrder(t.Context(), e.cred, exgate.OrderQuery{Symbol: btcUSDT, ClientOrderID: id})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != exgate.OrderFilled || got.ExchangeOrderID != placed.ExchangeOrderID || got.ID != id || got.OpenAt != placed.OpenAt {
			t.Errorf("queried %+v, placed %+v", got, placed)
		}
		if n := e.srv.Requests("/api/v4/spot/orders/t-" + id); n != 1 {
			t.Errorf("%d lookups by text, want 1", n)
		}
		if n := e.srv.Requests("/api/v4/spot/orders"); n != 1 {
			t.Errorf("%d finished-list requests, want 1", n)
		}
	})
	t.Run("by exchange order id", func(t *testing.T) {
		e := newEnv(t, envOptions{})
		id := exgate.NewID('o')
		placed, err := e.ex.PlaceMarketOrder(t.Context(), e.cred, exgate.OrderRequest{Symbol: btcUSDT, Side: exgate.SideSell, Quantity: dec("0.01"), QuantityIn: exgate.InBase, ClientOrderID: id})
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []exgate.OrderQuery{
			{Symbol: btcUSDT, ClientOrderID: id, ExchangeOrderID: placed.ExchangeOrderID},
			{Symbol: btcUSDT, ExchangeOrderID: placed.ExchangeOrderID},
		} {
			got, err := e.ex.QueryOrder(t.Context(), e.cred, q)
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != id || got.Status != exgate.OrderFilled || !got.Quantity.Equal(dec("0.01")) || got.QuantityIn != "BTC" {
				t.Errorf("QueryOrder(%+v) = %+v", q, got)
			}
		}
	})
	t.Run("open order found by text, then filled", func(t *testing.T) {
		e := newEnv(t, envOptions{})
		e.srv.HoldOrders(true)
		id := exgate.NewID('o')
		placed, err := e.ex.PlaceMarketOrder(t.Context(), e.cred, exgate.OrderRequest{Symbol: btcUSDT, Side: exgate.SideBuy, Quantity: dec("100"), QuantityIn: exgate.InQuote, ClientOrderID: id})
		if err != nil {
			t.Fatal(err)
		}
		if placed.Status != exgate.OrderPending || placed.CloseAt != placed.OpenAt || placed.RawStatus != "open" {
			t.Errorf("placed %+v, want PENDING with closeAt == openAt", placed)
		}
		got, err := e.ex.QueryOrder(t.Context(), e.cred, exgate.OrderQuery{Symbol: btcUSDT, ClientOrderID: id})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != exgate.OrderPending || got.ExchangeOrderID != placed.ExchangeOrderID {
			t.Errorf("queried %+v, want the PENDING order", got)
		}
		if n := e.srv.Requests("/api/v4/spot/orders"); n != 1 {
			t.Errorf("%d list requests, want only the placement (the text lookup found it)", n)
		}
		e.srv.FillHeldOrders()
		got, err = e.ex.QueryOrder(t.Context(), e.cred, exgate.OrderQuery{Symbol: btcUSDT, ClientOrderID: id})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != exgate.OrderFilled || got.Fees == nil {
			t.Errorf("queried %+v, want FILLED with fees", got)
		}
	})
	t.Run("unknown", func(t *testing.T) {
		e := newEnv(t, envOptions{})
		_, err := e.ex.QueryOrder(t.Context(), e.cred, exgate.OrderQuery{Symbol: btcUSDT, ClientOrderID: exgate.NewID('o')})
		if !errors.Is(err, exgate.ErrNotFound) {
			t.Errorf("error %v, want ErrNotFound", err)
		}
		_, err = e.ex.QueryOrder(t.Context(), e.cred, exgate.OrderQuery{Symbol: btcUSDT, ExchangeOrderID: "12345"})
		if !errors.Is(err, exgate.ErrNotFound) {
			t.Errorf("by unknown exchange id: error %v, want ErrNotFound", err)
		}
	})
}

// orderPath is the placement route.
const orderPath = "/api/v4/spot/orders"

func faultOn(method, path string, f gateiofake.Fault) func(*http.Request) gateiofake.Fault {
	return func(r *http.Request) gateiofake.Fault {
		if r.Method == method && r.URL.Path == path {
			return f
		}
		return gateiofake.Fault{}
	}
}

func TestOrderSafety(t *testing.T) {
	buy := func(id string) exgate.OrderRequest {
		return exgate.OrderRequest{Symbol: btcUSDT, Side: exgate.SideBuy, Quantity: dec("100"), QuantityIn: exgate.InQuote, ClientOrderID: id}
	}
	tests := []struct {
		name       string
		fault      gateiofake.Fault
		timeout    time.Duration
		want       exgate.Code
		wantPlaced int
	}{
		{name: "answer lost after the order was placed", fault: gateiofake.Fault{DropAfter: true}, want: exgate.CodeExchangeTimeout, wantPlaced: 1},
		{name: "connection dropped before processing", fault: gateiofake.Fault{Drop: true}, want: exgate.CodeExchangeTimeout, wantPlaced: 0},
		{name: "500", fault: gateiofake.Fault{Status: 500, Body: `{"label":"INTERNAL","message":"internal error"}`}, want: exgate.CodeExchangeTimeout},
		{name: "502 from a proxy", fault: gateiofake.Fault{Status: 502, Body: `<html>bad gateway</html>`}, want: exgate.CodeExchangeTimeout},
		{name: "TOO_BUSY", fault: gateiofake.Fault{Status: 503, Body: `{"label":"TOO_BUSY","message":"busy"}`}, want: exgate.CodeExchangeTimeout},
		{name: "unreadable 201", fault: gateiofake.Fault{Status: 201, Body: `{"id":`}, want: exgate.CodeExchangeTimeout},
		{name: "no answer in time", fault: gateiofake.Fault{Delay: 300 * time.Millisecond}, timeout: 100 * time.Millisecond, want: exgate.CodeExchangeTimeout},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOptions{})
			e.srv.SetFault(faultOn(http.MethodPost, orderPath, tc.fault))
			ctx := t.Context()
			if tc.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.timeout)
				defer cancel()
			}
			id := exgate.NewID('o')
			_, err := e.ex.PlaceMarketOrder(ctx, e.cred, buy(id))
			wantCode(t, err, tc.want)
			if n := e.srv.Requests(orderPath); n != 1 {
				t.Errorf("order sent %d times, want exactly once", n)
			}
			e.srv.SetFault(nil)
			if n := e.srv.OrdersByText("gate-key", "t-"+id); n != tc.wantPlaced {
				t.Errorf("%d orders held with the text, want %d", n, tc.wantPlaced)
			}
			got, err := e.ex.QueryOrder(t.Context(), e.cred, exgate.OrderQuery{Symbol: btcUSDT, ClientOrderID: id})
			switch {
			case tc.wantPlaced == 1 && (err != nil || got.Status != exgate.OrderFilled):
				t.Errorf("reconciling: %+v, %v; want the FILLED order", got, err)
			case tc.wantPlaced == 0 && !errors.Is(err, exgate.ErrNotFound):
				t.Errorf("reconciling: %+v, %v; want ErrNotFound", got, err)
			}
		})
	}
}

func TestOrderExpiryHeader(t *testing.T) {
	now := time.Now()
	e := newEnv(t, envOptions{})
	var exptime atomic.Int64
	e.srv.SetFault(func(r *http.Request) gateiofake.Fault {
		if r.Method == http.MethodPost {
			v, _ := strconv.ParseInt(r.Header.Get("x-gate-exptime"), 10, 64)
			exptime.Store(v)
		}
		return gateiofake.Fault{}
	})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := e.ex.PlaceMarketOrder(ctx, e.cred, exgate.OrderRequest{Symbol: btcUSDT, Side: exgate.SideBuy, Quantity: dec("100"), QuantityIn: exgate.InQuote, ClientOrderID: exgate.NewID('o')}); err != nil {
		t.Fatal(err)
	}
	got := time.UnixMilli(exptime.Load())
	if got.Before(now.Add(10*time.Second)) || got.After(now.Add(20*time.Second)) {
		t.Errorf("x-gate-exptime %s, want about the ctx deadline plus 5 s", got.Sub(now))
	}
}
