package exgate_test

import (
	"encoding/json"
	"testing"

	"github.com/exgate/exgate"
)

// The hand-written encoders must produce exactly what encoding/json makes
// of the struct tags.
func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	n := uint64(42)
	klines := []exgate.Kline{
		{OpenTime: 1, OpenPrice: "1.5", HighPrice: "2", LowPrice: "1", ClosePrice: "1.25", Volume: "0.001", CloseTime: 59999, NumberOfTrades: &n},
		{OpenTime: 60000, OpenPrice: `we"ird\`, HighPrice: "<&>", LowPrice: "\u00e9", ClosePrice: "\n", Volume: "0", CloseTime: 119999},
	}
	for _, ks := range [][]exgate.Kline{nil, {}, klines} {
		want, _ := json.Marshal(ks)
		if ks == nil {
			want = []byte("[]") // the API answers an empty array, never null
		}
		if got := exgate.AppendKlinesJSON(nil, ks); string(got) != string(want) {
			t.Errorf("klines:\n got %s\nwant %s", got, want)
		}
	}
	book := exgate.OrderBook{Bids: []exgate.Level{{Price: "2", Quantity: "1"}, {Price: "1.5", Quantity: "3"}}, Asks: []exgate.Level{{Price: "2.5", Quantity: `"`}}}
	want, _ := json.Marshal(book)
	if got := exgate.AppendOrderBookJSON(nil, book); string(got) != string(want) {
		t.Errorf("book:\n got %s\nwant %s", got, want)
	}
	empty := exgate.AppendOrderBookJSON(nil, exgate.OrderBook{})
	if string(empty) != `{"bids":[],"asks":[]}` {
		t.Errorf("empty book %s", empty)
	}
}

// BenchmarkAppendKlinesJSON encodes 500 klines shaped like Binance's, the
// answer of the load tool's recent-klines request (docs/PERFORMANCE.md).
func BenchmarkAppendKlinesJSON(b *testing.B) {
	klines := make([]exgate.Kline, 500)
	for i := range klines {
		n := uint64(1000 + i)
		klines[i] = exgate.Kline{OpenTime: 1795357140000 + int64(i)*60000, OpenPrice: "60303.60000000",
			HighPrice: "60313.80000000", LowPrice: "59317.80000000", ClosePrice: "59448.00000000",
			Volume: "211.75900000", CloseTime: 1795357199999 + int64(i)*60000, NumberOfTrades: &n}
	}
	buf := exgate.AppendKlinesJSON(nil, klines)
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		buf = exgate.AppendKlinesJSON(buf[:0], klines)
	}
}
