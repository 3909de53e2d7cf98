package kraken_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/kraken/krakenfake"
)

// rawRow is one OHLC row read straight from the fake.
type rawRow struct {
	open          time.Time
	o, h, l, c, v string
	n             uint64
}

// fetchRaw reads the fake's OHLC rows of a Kraken interval.
func fetchRaw(t *testing.T, srv *krakenfake.Server, minutes int) []rawRow {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("%s/0/public/OHLC?pair=XBTUSDT&interval=%d", srv.URL, minutes))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var env struct {
		Result map[string]json.RawMessage `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		t.Fatal(err)
	}
	var rows [][]any
	if err := json.Unmarshal(env.Result["XBTUSDT"], &rows); err != nil {
		t.Fatal(err)
	}
	out := make([]rawRow, 0, len(rows))
	for _, r := range rows {
		out = append(out, rawRow{
			open: time.Unix(int64(r[0].(float64)), 0).UTC(),
			o:    r[1].(string), h: r[2].(string), l: r[3].(string), c: r[4].(string), v: r[6].(string),
			n: uint64(r[7].(float64)),
		})
	}
	return out
}

// rollUp builds iv klines from finer rows, independently of the adapter:
// every bucket must hold all its finer rows, except the oldest (dropped
// when the rows start inside it) and the newest (the open one).
func rollUp(t *testing.T, rows []rawRow, fine time.Duration, iv exgate.Interval) []exgate.Kline {
	t.Helper()
	var out []exgate.Kline
	for i := 0; i < len(rows); {
		start := iv.Start(rows[i].open)
		next := iv.Next(start)
		j := i
		for j < len(rows) && rows[j].open.Before(next) {
			j++
		}
		bucket := rows[i:j]
		i = j
		if !bucket[0].open.Equal(start) {
			continue
		}
		if want := int(next.Sub(start) / fine); len(bucket) != want && j < len(rows) {
			t.Fatalf("%s bucket %s holds %d finer rows, want %d", iv, start, len(bucket), want)
		}
		k := exgate.Kline{OpenTime: start.UnixMilli(), CloseTime: next.UnixMilli() - 1, OpenPrice: bucket[0].o, ClosePrice: bucket[len(bucket)-1].c}
		high, low, vol := dec(bucket[0].h), dec(bucket[0].l), decimal.Zero
		k.HighPrice, k.LowPrice = bucket[0].h, bucket[0].l
		var n uint64
		for _, r := range bucket {
			if dec(r.h).GreaterThan(high) {
				high, k.HighPrice = dec(r.h), r.h
			}
			if dec(r.l).LessThan(low) {
				low, k.LowPrice = dec(r.l), r.l
			}
			vol = vol.Add(dec(r.v))
			n += r.n
		}
		k.Volume = vol.String()
		k.NumberOfTrades = &n
		out = append(out, k)
	}
	return out
}

func TestSynthesizedKlines(t *testing.T) {
	tests := []struct {
		iv       exgate.Interval
		minutes  int // the Kraken interval the adapter must use
		wantRows int // klines the 720 finer rows give at testNow
	}{
		{exgate.Interval3m, 1, 240},
		{exgate.Interval2h, 60, 360},
		{exgate.Interval6h, 60, 120},
		{exgate.Interval8h, 240, 360},
		{exgate.Interval12h, 240, 240},
		{exgate.Interval3d, 1440, 240},
		{exgate.Interval1M, 1440, 24},
		{exgate.Interval1w, 1440, 103}, // Kraken's weeks (the fake's) start on Thursday
	}
	for _, tc := range tests {
		t.Run(string(tc.iv), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, krakenfake.Options{}, nil)
			ohlc := watch(e.srv, "/0/public/OHLC", nil)
			got, err := e.ex.RecentKlines(t.Context(), e.cred, exgate.KlineRequest{Symbol: btcUSDT, Interval: tc.iv, Limit: exgate.MaxKlineLimit})
			if err != nil {
				t.Fatal(err)
			}
			if last := ohlc.last(t); last.Get("interval") != fmt.Sprint(tc.minutes) || last.Get("pair") != "XBTUSDT" {
				t.Errorf("OHLC request %v, want interval %d on XBTUSDT", last, tc.minutes)
			}
			e.srv.SetFault(nil)
			want := rollUp(t, fetchRaw(t, e.srv, tc.minutes), time.Duration(tc.minutes)*time.Minute, tc.iv)
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("klines differ from the roll-up of the %d-minute rows (-got +want):\n%s", tc.minutes, diff)
			}
			if len(got) != tc.wantRows {
				t.Errorf("%d klines, want %d (the documented cap at this time)", len(got), tc.wantRows)
			}
			last := got[len(got)-1]
			if want := tc.iv.Start(testNow).UnixMilli(); last.OpenTime != want {
				t.Errorf("last kline opens at %d, want the current %s bucket %d", last.OpenTime, tc.iv, want)
			}
			limited, err := e.ex.RecentKlines(t.Context(), e.cred, exgate.KlineRequest{Symbol: btcUSDT, Interval: tc.iv, Limit: 7})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(limited, got[len(got)-7:]); diff != "" {
				t.Errorf("limit 7 is not the 7 most recent klines (-got +want):\n%s", diff)
			}
		})
	}
}

func TestNativeKlines(t *testing.T) {
	tests := []struct {
		iv      exgate.Interval
		minutes int
		opts    krakenfake.Options
	}{
		{exgate.Interval1m, 1, krakenfake.Options{}},
		{exgate.Interval5m, 5, krakenfake.Options{}},
		{exgate.Interval15m, 15, krakenfake.Options{}},
		{exgate.Interval30m, 30, krakenfake.Options{}},
		{exgate.Interval1h, 60, krakenfake.Options{}},
		{exgate.Interval4h, 240, krakenfake.Options{}},
		{exgate.Interval1d, 1440, krakenfake.Options{}},
		{exgate.Interval1w, 10080, krakenfake.Options{WeeklyMonday: true}},
	}
	for _, tc := range tests {
		t.Run(string(tc.iv), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, tc.opts, nil)
			got, err := e.ex.RecentKlines(t.Context(), e.cred, exgate.KlineRequest{Symbol: btcUSDT, Interval: tc.iv, Limit: exgate.MaxKlineLimit})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 720 {
				t.Errorf("%d klines for limit 1000, want Kraken's 720 (the answer is truncated)", len(got))
			}
			raw := fetchRaw(t, e.srv, tc.minutes)
			want := make([]exgate.Kline, 0, len(raw))
			for _, r := range raw {
				n := r.n
				want = append(want, exgate.Kline{
					OpenTime: r.open.UnixMilli(), OpenPrice: r.o, HighPrice: r.h, LowPrice: r.l, ClosePrice: r.c,
					Volume: r.v, CloseTime: tc.iv.Next(r.open).UnixMilli() - 1, NumberOfTrades: &n,
				})
			}
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("klines differ from Kraken's rows (-got +want):\n%s", diff)
			}
		})
	}
	t.Run("unknown interval", func(t *testing.T) {
		e := newEnv(t, krakenfake.Options{}, nil)
		_, err := e.ex.RecentKlines(t.Context(), e.cred, exgate.KlineRequest{Symbol: btcUSDT, Interval: "2w", Limit: 5})
		wantCode(t, err, exgate.CodeInvalidParameter)
	})
}

func TestOrderBookLimits(t *testing.T) {
	tests := []struct {
		limit, wantCount, wantLevels int
	}{
		{1, 1, 1},
		{5, 5, 5},
		{100, 100, 100},
		{1000, 500, 100}, // Kraken serves at most 500; the fake's book holds 100
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.limit), func(t *testing.T) {
			e := newEnv(t, krakenfake.Options{}, nil)
			depth := watch(e.srv, "/0/public/Depth", nil)
			ob, err := e.ex.OrderBook(t.Context(), e.cred, exgate.OrderBookRequest{Symbol: btcUSDT, Limit: tc.limit})
			if err != nil {
				t.Fatal(err)
			}
			if got := depth.last(t).Get("count"); got != fmt.Sprint(tc.wantCount) {
				t.Errorf("Depth count=%s, want %d", got, tc.wantCount)
			}
			if len(ob.Bids) != tc.wantLevels || len(ob.Asks) != tc.wantLevels {
				t.Errorf("%d bids %d asks, want %d", len(ob.Bids), len(ob.Asks), tc.wantLevels)
			}
			if !slices.IsSortedFunc(ob.Bids, func(a, b exgate.Level) int { return dec(b.Price).Cmp(dec(a.Price)) }) ||
				!slices.IsSortedFunc(ob.Asks, func(a, b exgate.Level) int { return dec(a.Price).Cmp(dec(b.Price)) }) {
				t.Error("bids not descending or asks not ascending")
			}
			if ob.Bids[0].Price != "30007.00000" {
				t.Errorf("best bid %q, want Kraken's text 30007.00000 kept", ob.Bids[0].Price)
			}
		})
	}
}
