package rest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/exgate/exgate"
)

func TestAggregate(t *testing.T) {
	at := func(min int) time.Time { return time.Date(2026, 11, 27, 10, min, 0, 0, time.UTC) }
	bar := func(min int, o, h, l, c, v string) Candle {
		return Candle{Open: at(min), OpenPrice: o, High: h, Low: l, Close: c, Volume: v}
	}
	cs := []Candle{
		bar(0, "10", "12", "9", "11", "1.5"),
		bar(5, "11", "15.0", "10", "14", "2"),
		bar(5, "99", "99", "99", "99", "99"), // the same bar again (pages overlap): skipped
		bar(10, "14", "14.5", "8.50", "9", "0.25"),
		bar(15, "9", "10", "9", "10", "1"), // the next 15m kline
	}
	got, err := Aggregate(exgate.Interval15m, exgate.Interval5m, cs)
	if err != nil {
		t.Fatal(err)
	}
	want := []exgate.Kline{
		{OpenTime: at(0).UnixMilli(), OpenPrice: "10", HighPrice: "15.0", LowPrice: "8.50", ClosePrice: "9", Volume: "3.75", CloseTime: at(15).UnixMilli() - 1},
		{OpenTime: at(15).UnixMilli(), OpenPrice: "9", HighPrice: "10", LowPrice: "9", ClosePrice: "10", Volume: "1", CloseTime: at(30).UnixMilli() - 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Aggregate (-want +got):\n%s", diff)
	}
	for name, bad := range map[string][]Candle{
		"not aligned": {{Open: at(0).Add(time.Minute), OpenPrice: "1", High: "1", Low: "1", Close: "1", Volume: "1"}},
		"bad decimal": {bar(0, "1", "x", "1", "1", "1")},
	} {
		if ks, err := Aggregate(exgate.Interval15m, exgate.Interval5m, bad); err == nil {
			t.Errorf("%s: Aggregate = %v, want an error", name, ks)
		}
	}
}
