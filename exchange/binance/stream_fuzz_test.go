package binance

import (
	"testing"

	"github.com/exgate/exgate"
)

// The stream parsers read what an exchange connection sends: none may
// panic, and what they accept must hold what the streams rely on.

func FuzzParseDepthEvent(f *testing.F) {
	seed(f, "stream/depth_update.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := parseDepthEvent(b)
		if err != nil {
			return
		}
		if ev.FirstID <= 0 || ev.FinalID < ev.FirstID {
			t.Fatalf("accepted ids U=%d u=%d", ev.FirstID, ev.FinalID)
		}
		lb := &localBook{id: ev.FirstID - 1}
		if _, err := lb.apply(ev); err != nil {
			if _, gap := err.(*bookGap); !gap {
				t.Fatalf("an accepted update does not apply: %v", err)
			}
		}
	})
}

func FuzzParseKlineEvent(f *testing.F) {
	seed(f, "stream/kline_open.json", "stream/kline_closed.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		k, _, err := parseKlineEvent(b, exgate.Interval1m)
		if err != nil {
			return
		}
		if k.CloseTime != k.OpenTime+59999 || k.NumberOfTrades == nil {
			t.Fatalf("accepted kline %+v", k)
		}
		for _, v := range []string{k.OpenPrice, k.HighPrice, k.LowPrice, k.ClosePrice, k.Volume} {
			if !exgate.IsPlainDecimal(v) {
				t.Fatalf("accepted value %q", v)
			}
		}
	})
}

func FuzzParseUserMessage(f *testing.F) {
	seed(f, "stream/execution_new.json", "stream/execution_trade.json", "stream/execution_canceled.json",
		"stream/subscribed.json", "stream/refused.json", "stream/terminated.json", "stream/account_position.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := parseUserMessage(b)
		if err != nil || ev.kind != "executionReport" {
			return
		}
		r := ev.report
		if r.OrderID <= 0 || r.Status == "" || r.CumulativeQty.IsNegative() || r.LastQty.IsNegative() {
			t.Fatalf("accepted report %+v", r)
		}
		mk := &market{pair: btcusdt, symbol: r.Symbol, basePrecision: 8, quotePrecision: 8}
		o := New(Options{}).orderOf(t.Context(), mk, r.orderJSON(), r.ClientOrderID)
		if o.ExchangeOrderID == "" || o.Status == "" {
			t.Fatalf("normalized to %+v", o)
		}
	})
}
