package gateio_test

import (
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

// fixedNow is the clock of the kline tests: a Friday, mid-month, mid-hour.
var fixedNow = time.Date(2025, 3, 14, 10, 37, 12, 0, time.UTC)

func fixedClock() time.Time { return fixedNow }

// expectKline builds what the adapter should answer for one bucket of iv
// starting at open, from the fake's source candles of gateInterval.
func expectKline(srv *gateiofake.Server, iv exgate.Interval, gateInterval string, step time.Duration, open time.Time) exgate.Kline {
	end := iv.Next(open)
	var k exgate.Kline
	var hi, lo, vol decimal.Decimal
	for t := open; t.Before(end) && !t.After(fixedNow); t = t.Add(step) {
		c := srv.Candle("BTC_USDT", gateInterval, t)
		h, l := dec(c.High), dec(c.Low)
		if k.OpenPrice == "" {
			k.OpenPrice, k.HighPrice, k.LowPrice, hi, lo = c.Open, c.High, c.Low, h, l
		}
		if h.GreaterThan(hi) {
			hi, k.HighPrice = h, c.High
		}
		if l.LessThan(lo) {
			lo, k.LowPrice = l, c.Low
		}
		k.ClosePrice = c.Close
		vol = vol.Add(dec(c.BaseVolume))
	}
	k.Volume = vol.String()
	k.OpenTime = open.UnixMilli()
	k.CloseTime = end.UnixMilli() - 1
	return k
}

func TestBuiltKlines(t *testing.T) {
	tests := []struct {
		iv     exgate.Interval
		source string
		step   time.Duration
		limit  int
		// wantRequests is how many candlestick requests building takes.
		wantRequests int
	}{
		{iv: exgate.Interval3m, source: "1m", step: time.Minute, limit: 5, wantRequests: 1},
		{iv: exgate.Interval3m, source: "1m", step: time.Minute, limit: 400, wantRequests: 2},
		{iv: exgate.Interval2h, source: "1h", step: time.Hour, limit: 10, wantRequests: 1},
		{iv: exgate.Interval6h, source: "1h", step: time.Hour, limit: 10, wantRequests: 1},
		{iv: exgate.Interval6h, source: "1h", step: time.Hour, limit: 1000, wantRequests: 6},
		{iv: exgate.Interval12h, source: "4h", step: 4 * time.Hour, limit: 10, wantRequests: 1},
		{iv: exgate.Interval3d, source: "1d", step: 24 * time.Hour, limit: 10, wantRequests: 1},
		{iv: exgate.Interval1w, source: "1d", step: 24 * time.Hour, limit: 10, wantRequests: 1},
		{iv: exgate.Interval1w, source: "1d", step: 24 * time.Hour, limit: 200, wantRequests: 2},
	}
	for _, tc := range tests {
		t.Run(string(tc.iv)+"/limit="+strconv.Itoa(tc.limit), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, envOptions{now: fixedClock})
			ks, err := e.ex.RecentKlines(t.Context(), e.cred, exgate.KlineRequest{Symbol: btcUSDT, Interval: tc.iv, Limit: tc.limit})
			if err != nil {
				t.Fatal(err)
			}
			if len(ks) != tc.limit {
				t.Fatalf("%d klines, want %d", len(ks), tc.limit)
			}
			last := tc.iv.Start(fixedNow)
			if got := time.UnixMilli(ks[len(ks)-1].OpenTime).UTC(); !got.Equal(last) {
				t.Errorf("last kline opens at %s, want the current bucket %s", got, last)
			}
			for i, k := range ks {
				open := time.UnixMilli(k.OpenTime).UTC()
				if i > 0 && !open.Equal(tc.iv.Next(time.UnixMilli(ks[i-1].OpenTime).UTC())) {
					t.Fatalf("kline %d opens at %s, not right after the previous one", i, open)
				}
				if want := expectKline(e.srv, tc.iv, tc.source, tc.step, open); k != want {
					t.Fatalf("kline %d:\n got %+v\nwant %+v", i, k, want)
				}
			}
			if n := e.srv.Requests("/api/v4/spot/candlesticks"); n != tc.wantRequests {
				t.Errorf("%d candlestick requests, want %d", n, tc.wantRequests)
			}
		})
	}
}

func TestWeeklyKlinesStartMonday(t *testing.T) {
	e := newEnv(t, envOptions{now: fixedClock})
	ks, err := e.ex.RecentKlines(t.Context(), e.cred, exgate.KlineRequest{Symbol: btcUSDT, Interval: exgate.Interval1w, Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range ks {
		if wd := time.UnixMilli(k.OpenTime).UTC().Weekday(); wd != time.Monday {
			t.Errorf("1w kline opens on %s, want Monday", wd)
		}
	}
}

func TestNativeKlines(t *testing.T) {
	tests := []struct {
		iv   exgate.Interval
		gate string
	}{
		{exgate.Interval1m, "1m"}, {exgate.Interval5m, "5m"}, {exgate.Interval15m, "15m"}, {exgate.Interval30m, "30m"},
		{exgate.Interval1h, "1h"}, {exgate.Interval4h, "4h"}, {exgate.Interval8h, "8h"}, {exgate.Interval1d, "1d"},
		{exgate.Interval1M, "30d"},
	}
	for _, tc := range tests {
		t.Run(string(tc.iv), func(t *testing.T) {
			e := newEnv(t, envOptions{now: fixedClock})
			ks, err := e.ex.RecentKlines(t.Context(), e.cred, exgate.KlineRequest{Symbol: btcUSDT, Interval: tc.iv, Limit: 3})
			if err != nil {
				t.Fatal(err)
			}
			if len(ks) != 3 {
				t.Fatalf("%d klines, want 3", len(ks))
			}
			for _, k := range ks {
				open := time.UnixMilli(k.OpenTime).UTC()
				c := e.srv.Candle("BTC_USDT", tc.gate, open)
				want := exgate.Kline{OpenTime: k.OpenTime, OpenPrice: c.Open, HighPrice: c.High, LowPrice: c.Low, ClosePrice: c.Close,
					Volume: c.BaseVolume, CloseTime: tc.iv.Next(open).UnixMilli() - 1}
				if k != want {
					t.Errorf("kline\n got %+v\nwant %+v", k, want)
				}
			}
			if n := e.srv.Requests("/api/v4/spot/candlesticks"); n != 1 {
				t.Errorf("%d candlestick requests, want 1", n)
			}
		})
	}
}

// TestMonthlyFallback answers 30d with buckets that do not start on the
// first of the month: the adapter then builds 1M from 1d.
func TestMonthlyFallback(t *testing.T) {
	e := newEnv(t, envOptions{now: fixedClock})
	e.srv.SetFault(func(r *http.Request) gateiofake.Fault {
		if r.URL.Path == "/api/v4/spot/candlesticks" && r.URL.Query().Get("interval") == "30d" {
			return gateiofake.Fault{Status: 200, Body: `[["1738368000","1","2","3","1","2","1","true"],["1740960000","1","2","3","1","2","1","false"]]`}
		}
		return gateiofake.Fault{}
	})
	ks, err := e.ex.RecentKlines(t.Context(), e.cred, exgate.KlineRequest{Symbol: btcUSDT, Interval: exgate.Interval1M, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(ks) != 2 {
		t.Fatalf("%d klines, want 2", len(ks))
	}
	for _, k := range ks {
		open := time.UnixMilli(k.OpenTime).UTC()
		if open.Day() != 1 || open.Hour() != 0 {
			t.Errorf("1M kline opens at %s", open)
		}
		if want := expectKline(e.srv, exgate.Interval1M, "1d", 24*time.Hour, open); k != want {
			t.Errorf("kline\n got %+v\nwant %+v", k, want)
		}
	}
}

func TestKlineErrors(t *testing.T) {
	e := newEnv(t, envOptions{now: fixedClock})
	_, err := e.ex.RecentKlines(t.Context(), e.cred, exgate.KlineRequest{Symbol: exgate.Symbol{Base: "USDT", Quote: "BTC"}, Interval: exgate.Interval1m, Limit: 5})
	if ge := wantCode(t, err, exgate.CodeUnknownSymbol); !strings.Contains(ge.Detail, "BTC/USDT") {
		t.Errorf("detail %q does not name the inverse pair", ge.Detail)
	}
	e.srv.SetFault(func(r *http.Request) gateiofake.Fault {
		if r.URL.Path == "/api/v4/spot/candlesticks" {
			return gateiofake.Fault{Status: 200, Body: `[["1741948620","1","2","3","1","2","true"]]`}
		}
		return gateiofake.Fault{}
	})
	_, err = e.ex.RecentKlines(t.Context(), e.cred, exgate.KlineRequest{Symbol: btcUSDT, Interval: exgate.Interval1m, Limit: 5})
	wantCode(t, err, exgate.CodeExchangeError)
}

func TestOrderBook(t *testing.T) {
	e := newEnv(t, envOptions{})
	for _, limit := range []int{1, 10, 1000} {
		b, err := e.ex.OrderBook(t.Context(), e.cred, exgate.OrderBookRequest{Symbol: btcUSDT, Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		want := min(limit, 300) // the fake's depth
		if len(b.Bids) != want || len(b.Asks) != want {
			t.Errorf("limit %d: %d bids %d asks, want %d", limit, len(b.Bids), len(b.Asks), want)
		}
		if b.Bids[0].Price != "59999.5" || b.Asks[0].Price != "60000.5" || b.Asks[0].Quantity != "0.05" {
			t.Errorf("best levels %+v %+v", b.Bids[0], b.Asks[0])
		}
	}
}

func TestPairsCachedAndRefreshed(t *testing.T) {
	var nowMS atomic.Int64
	nowMS.Store(fixedNow.UnixMilli())
	clock := func() time.Time { return time.UnixMilli(nowMS.Load()) }
	e := newEnv(t, envOptions{now: clock})
	for range 3 {
		if _, err := e.ex.OrderBook(t.Context(), e.cred, exgate.OrderBookRequest{Symbol: btcUSDT, Limit: 5}); err != nil {
			t.Fatal(err)
		}
	}
	if n := e.srv.Requests("/api/v4/spot/currency_pairs"); n != 1 {
		t.Errorf("%d pair list requests, want 1 (cached)", n)
	}
	nope := exgate.Symbol{Base: "NOPE", Quote: "USDT"}
	_, err := e.ex.OrderBook(t.Context(), e.cred, exgate.OrderBookRequest{Symbol: nope, Limit: 5})
	wantCode(t, err, exgate.CodeUnknownSymbol)
	if n := e.srv.Requests("/api/v4/spot/currency_pairs"); n != 1 {
		t.Errorf("%d pair list requests after a miss on a fresh list, want 1", n)
	}
	// A miss on a list older than a minute reloads it once (a new listing).
	nowMS.Add((2 * time.Minute).Milliseconds())
	_, err = e.ex.OrderBook(t.Context(), e.cred, exgate.OrderBookRequest{Symbol: nope, Limit: 5})
	wantCode(t, err, exgate.CodeUnknownSymbol)
	if n := e.srv.Requests("/api/v4/spot/currency_pairs"); n != 2 {
		t.Errorf("%d pair list requests after a miss on an old list, want 2", n)
	}
}
