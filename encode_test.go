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
