package gateio

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/exgate/exgate"
)

// seed adds the named testdata files and a few hostile inputs to f.
func seed(f *testing.F, files ...string) {
	for _, name := range files {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{"", "null", "[]", "{}", `[[]]`, `[null]`, `{"id":1e400}`, `[["1","2"]]`, `"x"`} {
		f.Add([]byte(s))
	}
}

func FuzzParseCandles(f *testing.F) {
	seed(f, "candlesticks.json")
	f.Add([]byte(`[["60","1","2e3","3","1","1.5","5","true"]]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		cs, err := parseCandles(b)
		if err != nil {
			return
		}
		for _, c := range cs {
			for _, v := range []string{c.open, c.high, c.low, c.close, c.baseVolume} {
				if !exgate.IsPlainDecimal(v) {
					t.Fatalf("candle field %q is not a plain decimal", v)
				}
			}
		}
		if _, err := aggregate(exgate.Interval3m, exgate.Interval1m, cs); err != nil {
			return
		}
	})
}

func FuzzParseBook(f *testing.F) {
	seed(f, "order_book.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		bids, asks, err := parseBook(b)
		if err != nil {
			return
		}
		for i := 1; i < len(bids); i++ {
			if bids[i].priceDec.GreaterThan(bids[i-1].priceDec) {
				t.Fatal("bids not descending")
			}
		}
		for i := 1; i < len(asks); i++ {
			if asks[i].priceDec.LessThan(asks[i-1].priceDec) {
				t.Fatal("asks not ascending")
			}
		}
		for _, l := range append(bids, asks...) {
			if !exgate.IsPlainDecimal(l.price) || !exgate.IsPlainDecimal(l.qty) || !l.qtyDec.IsPositive() {
				t.Fatalf("level %+v", l)
			}
		}
	})
}

func FuzzParseOrder(f *testing.F) {
	seed(f, "order_market_buy_filled.json", "order_market_sell_filled.json", "order_limit_filled_docs.json")
	e := New(Options{})
	p := &pair{id: "BTC_USDT", sym: exgate.Symbol{Base: "BTC", Quote: "USDT"}, amountPrecision: 6, precision: 1}
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := parseOrder(b)
		if err != nil {
			return
		}
		out := e.normalizeOrder(p, o, "x", o.Amount.Decimal, amountIn(o))
		if out.CloseAt < out.OpenAt || (out.Status == exgate.OrderPending && out.CloseAt != out.OpenAt) {
			t.Fatalf("times %d %d for %s", out.OpenAt, out.CloseAt, out.Status)
		}
		if out.Fees != nil && out.Fees.IsNegative() {
			t.Fatal("negative fee")
		}
	})
}

func FuzzParseOrders(f *testing.F) {
	f.Add([]byte(`[{"id":"1","status":"closed","side":"buy","text":"t-a"}]`))
	seed(f)
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = parseOrders(b) })
}

func FuzzParseDeposits(f *testing.F) {
	seed(f, "deposits.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := parseDeposits(b)
		if err != nil {
			return
		}
		for _, r := range rows {
			d := normalizeDeposit(r)
			if d.Amount.IsNegative() || d.RawStatus == "" {
				t.Fatalf("deposit %+v", d)
			}
		}
	})
}

func FuzzParseWithdrawals(f *testing.F) {
	seed(f, "withdrawals.json", "withdrawals_v4_99.json", "withdraw_response.json", "withdraw_response_real.json")
	e := New(Options{})
	f.Fuzz(func(t *testing.T, b []byte) {
		if w, err := parseWithdrawal(b); err == nil {
			out := e.normalizeWithdrawal(w, "x")
			if out.Amount.IsNegative() {
				t.Fatalf("negative amount %s", out.Amount)
			}
		}
		rows, err := parseWithdrawals(b)
		if err != nil {
			return
		}
		for _, r := range rows {
			out := e.normalizeWithdrawal(r, "x")
			if out.Fees != nil && !out.Amount.Add(out.Fees.Decimal).Equal(out.TotalAmount.Decimal) {
				t.Fatalf("amount %s + fees %s != total %s", out.Amount, out.Fees, out.TotalAmount)
			}
		}
	})
}

func FuzzParseSmall(f *testing.F) {
	seed(f, "spot_accounts.json", "deposit_address.json", "currency_pair.json", "error.json", "error_request_expired.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = parseAccounts(b)
		_, _ = parseAddress(b)
		_, _ = parsePairs(b)
		_, _ = parseChains(b)
		_, _ = parseWithdrawStatus(b)
		_, _ = parseServerTime(b)
		if ae := parseError(400, b); ae.msg == "" {
			t.Fatal("error without a message")
		}
	})
}

// seedResults adds the result of each named stream frame too.
func seedResults(f *testing.F, files ...string) {
	for _, name := range files {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		m, err := parseWSMessage(b)
		if err != nil {
			f.Fatal(err)
		}
		f.Add([]byte(m.Result))
	}
}

func FuzzParseWSMessage(f *testing.F) {
	seed(f, "ws_subscribe_ok.json", "ws_subscribe_auth_error.json", "ws_pong.json", "ws_orders.json", "ws_candlesticks.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseWSMessage(b)
		if err != nil {
			return
		}
		if m.Channel == "" {
			t.Fatal("a message without a channel was accepted")
		}
		if _, err := ack(m, m.Channel); err != nil && m.Error == nil {
			t.Fatalf("ack refused a message without an error: %v", err)
		}
	})
}

func FuzzParseBookUpdate(f *testing.F) {
	seed(f)
	seedResults(f, "ws_order_book_update.json", "ws_order_book_update_full.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		u, err := parseBookUpdate(b)
		if err != nil {
			return
		}
		if !u.Full && u.First > u.Last {
			t.Fatalf("update %d..%d accepted", u.First, u.Last)
		}
		var s bookSync
		s.snapshot(u.First-1, nil, nil)
		if _, err := s.apply(u); err != nil {
			return
		}
		for _, side := range [][]exgate.Level{s.book.Snapshot(0).Bids, s.book.Snapshot(0).Asks} {
			for _, l := range side {
				if !exgate.IsPlainDecimal(l.Price) || !exgate.IsPlainDecimal(l.Quantity) {
					t.Fatalf("level %+v is not plain decimals", l)
				}
			}
		}
	})
}

func FuzzParseCandleUpdate(f *testing.F) {
	seed(f)
	seedResults(f, "ws_candlesticks.json", "ws_candlesticks_open.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		u, err := parseCandleUpdate(b)
		if err != nil {
			return
		}
		for _, v := range []string{u.o, u.h, u.l, u.c, u.baseVolume} {
			if !exgate.IsPlainDecimal(v) {
				t.Fatalf("candle field %q is not a plain decimal", v)
			}
		}
	})
}

func FuzzParseOrderUpdate(f *testing.F) {
	seed(f)
	seedResults(f, "ws_orders.json")
	e := New(Options{})
	f.Fuzz(func(t *testing.T, b []byte) {
		os, err := parseOrderUpdate(b)
		if err != nil {
			return
		}
		for _, o := range os {
			if o.Status == "" || o.CurrencyPair == "" {
				t.Fatalf("order %+v accepted without a status or pair", o)
			}
			got := e.orderFromGate(&pair{id: o.CurrencyPair, sym: btcUSDTSym, amountPrecision: 8, precision: 8}, o, "")
			if got.Status == "" || got.ID == "" {
				t.Fatalf("order converted to %+v", got)
			}
		}
	})
}
