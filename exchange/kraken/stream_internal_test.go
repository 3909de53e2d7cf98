package kraken

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/wsstream"
)

// wsFrame reads a golden frame of testdata/ws (Kraken's documented v2
// shapes, this project's values) and parses its envelope.
func wsFrame(t testing.TB, name string) wsMessage {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "ws", name))
	if err != nil {
		t.Fatal(err)
	}
	m, err := parseMessage(raw)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return m
}

func sampleBTCUSD(t testing.TB) (*markets, *market) {
	m := sampleMarkets(t)
	mk, ok := m.bySymbolV2("BTC/USD")
	if !ok {
		t.Fatal("no BTC/USD in the sample markets")
	}
	return m, mk
}

func TestBookFrames(t *testing.T) {
	_, mk := sampleBTCUSD(t)
	book := krakenBook{priceDecimals: mk.pairDecimals, qtyDecimals: mk.lotDecimals}
	var got []exgate.OrderBook
	for _, name := range []string{"book_snapshot.json", "book_update.json"} {
		msg := wsFrame(t, name)
		items, err := parseBook(msg.Data)
		if err != nil || len(items) != 1 {
			t.Fatalf("%s: %d items, %v", name, len(items), err)
		}
		if err := book.apply(items[0], msg.Type == "snapshot"); err != nil {
			t.Fatal(err)
		}
		if sum := book.checksum(); items[0].Checksum == nil || sum != *items[0].Checksum {
			t.Errorf("%s: checksum %d, the frame says %v", name, sum, items[0].Checksum)
		}
		got = append(got, book.Snapshot(exgate.MaxStreamDepth))
	}
	golden(t, "ws/book_stream", got)
}

func TestChecksumField(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"45285.2", "452852"},
		{"0.00100000", "100000"},
		{"0.05000", "5000"},
		{"100.00", "10000"},
		{"0.00000000", ""},
	} {
		if got := checksumField(tc.in); got != tc.want {
			t.Errorf("checksumField(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestBookTruncate: levels pushed beyond the subscribed depth leave the
// book without a removal from Kraken.
func TestBookTruncate(t *testing.T) {
	book := krakenBook{priceDecimals: 1, qtyDecimals: 8}
	var snap wsBook
	for i := range bookDepth {
		var l wsLevel
		if err := json.Unmarshal([]byte(fmt.Sprintf(`{"price":%d.5,"qty":1}`, 1000-i)), &l); err != nil {
			t.Fatal(err)
		}
		snap.Bids = append(snap.Bids, l)
	}
	if err := book.apply(snap, true); err != nil {
		t.Fatal(err)
	}
	var upd wsBook
	if err := json.Unmarshal([]byte(`{"bids":[{"price":1000.7,"qty":2}]}`), &upd); err != nil {
		t.Fatal(err)
	}
	if err := book.apply(upd, false); err != nil {
		t.Fatal(err)
	}
	bids := book.Levels(wsstream.Bid, 0)
	if len(bids) != bookDepth || bids[0].Price != "1000.7" || bids[bookDepth-1].Price != "902.5" {
		t.Errorf("after an insert: %d bids from %s to %s, want %d from 1000.7 to 902.5", len(bids), bids[0].Price, bids[len(bids)-1].Price, bookDepth)
	}
}

func TestOHLCFrame(t *testing.T) {
	_, mk := sampleBTCUSD(t)
	items, err := parseOHLCData(wsFrame(t, "ohlc_update.json").Data)
	if err != nil || len(items) != 1 {
		t.Fatalf("%d items, %v", len(items), err)
	}
	k, err := items[0].kline(mk, exgate.Interval1m)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "ws/ohlc_stream", k)
}

// TestExecutionFrames merges the snapshot and the updates as WatchOrders
// does and normalizes each state through toOrder.
func TestExecutionFrames(t *testing.T) {
	m, _ := sampleBTCUSD(t)
	orders := map[string]*wsOrder{}
	var got []exgate.Order
	for _, name := range []string{"executions_snapshot.json", "executions_update.json"} {
		items, err := parseExecutions(wsFrame(t, name).Data)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range items {
			o := orders[x.OrderID]
			if o == nil {
				o = &wsOrder{}
				orders[x.OrderID] = o
			}
			o.merge(m, x)
			if !o.complete() {
				t.Fatalf("%s: order %s incomplete after %s", name, x.OrderID, x.ExecType)
			}
			order, err := m.toOrder(x.OrderID, o.ko, exgate.Symbol{})
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, order)
		}
	}
	golden(t, "ws/orders_stream", got)
	last := got[3]
	if last.Status != exgate.OrderFilled || last.ID != "bot-7" || last.Fees == nil || last.Fees.String() != "0.96" {
		t.Errorf("filled order = %+v; want FILLED bot-7 with 0.96 USD fees", last)
	}
}

func TestSubscribeErrors(t *testing.T) {
	for _, tc := range []struct {
		frame string
		code  exgate.Code
	}{
		{"subscribe_error_token.json", exgate.CodeExchangeAuthFailed},
		{"subscribe_error_pair.json", exgate.CodeUnknownSymbol},
	} {
		err := subscribeError(wsFrame(t, tc.frame))
		if xe, ok := err.(*exgate.Error); !ok || xe.Code != tc.code {
			t.Errorf("%s: %v, want %s", tc.frame, err, tc.code)
		}
	}
	if err := subscribeError(wsMessage{Method: "subscribe", Error: "EService:Unavailable"}); err == nil {
		t.Error("an unavailable service is no error")
	} else if _, ok := err.(*exgate.Error); ok {
		t.Errorf("EService:Unavailable = %v, want a transient error", err)
	}
	if m := wsFrame(t, "subscribe_ack.json"); m.Success == nil || !*m.Success || m.Result.Symbol != "BTC/USD" {
		t.Errorf("ack = %+v", m)
	}
}

// TestKlineTracker: one emission per change, exactly one Closed per
// kline, late updates of a closed kline dropped.
func TestKlineTracker(t *testing.T) {
	k := func(open int64, closePrice string) exgate.Kline {
		n := uint64(1)
		return exgate.Kline{OpenTime: open, ClosePrice: closePrice, CloseTime: open + 59_999, NumberOfTrades: &n}
	}
	var got []string
	tr := &klineTracker{lastClosed: -1, emit: func(u exgate.KlineUpdate) {
		got = append(got, fmt.Sprintf("%d:%s:%v", u.Kline.OpenTime, u.Kline.ClosePrice, u.Closed))
	}}
	for _, u := range []exgate.Kline{k(60_000, "1"), k(60_000, "1"), k(60_000, "2"), k(0, "9"), k(120_000, "3"), k(60_000, "4"), k(120_000, "3")} {
		tr.update(u)
	}
	tr.close()
	tr.close()
	want := []string{"60000:1:false", "60000:2:false", "60000:2:true", "120000:3:false", "120000:3:true"}
	if fmt.Sprintf("%v", got) != fmt.Sprintf("%v", want) {
		t.Errorf("emissions %v, want %v", got, want)
	}
}

// BenchmarkBookUpdate: one update of two levels on a 100-level book,
// parsed, applied, checked (CRC32) and copied for emission, as WatchBook
// does per message.
func BenchmarkBookUpdate(b *testing.B) {
	book := krakenBook{priceDecimals: 1, qtyDecimals: 8}
	var snap wsBook
	for i := range bookDepth {
		var bid, ask wsLevel
		json.Unmarshal([]byte(fmt.Sprintf(`{"price":%d.5,"qty":0.125}`, 60000-i)), &bid)
		json.Unmarshal([]byte(fmt.Sprintf(`{"price":%d.5,"qty":0.25}`, 60001+i)), &ask)
		snap.Bids, snap.Asks = append(snap.Bids, bid), append(snap.Asks, ask)
	}
	if err := book.apply(snap, true); err != nil {
		b.Fatal(err)
	}
	frames := [][]byte{
		[]byte(`[{"symbol":"BTC/USD","bids":[{"price":60000.5,"qty":0.5}],"asks":[{"price":60001.5,"qty":0.75}],"checksum":1}]`),
		[]byte(`[{"symbol":"BTC/USD","bids":[{"price":60000.5,"qty":0.125}],"asks":[{"price":60001.5,"qty":0.25}],"checksum":1}]`),
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		items, err := parseBook(frames[i%2])
		if err != nil {
			b.Fatal(err)
		}
		if err := book.apply(items[0], false); err != nil {
			b.Fatal(err)
		}
		book.checksum()
		book.Snapshot(exgate.MaxStreamDepth)
	}
}
