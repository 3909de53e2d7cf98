package gateio

import (
	"crypto/hmac"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/gateio/gateiofake"
	"github.com/exgate/exgate/exchange/internal/rest"
)

func TestWSSign(t *testing.T) {
	// The string Gate's docs sign: channel=<channel>&event=<event>&time=<time>.
	mac := hmac.New(sha512.New, []byte("secret"))
	mac.Write([]byte("channel=spot.orders&event=subscribe&time=1611541000"))
	want := hex.EncodeToString(mac.Sum(nil))
	if got := wsSign("secret", "spot.orders", "subscribe", 1611541000); got != want {
		t.Errorf("wsSign = %s, want %s", got, want)
	}
	if got := gateiofake.WSSign("secret", "spot.orders", "subscribe", 1611541000); got != want {
		t.Errorf("the fake signs %s, want %s", got, want)
	}
}

func TestParseWSAnswers(t *testing.T) {
	tests := []struct {
		file     string
		channel  string
		done     bool
		wantCode exgate.Code // "" for no error
		wantErr  bool
	}{
		{"ws_subscribe_ok.json", "spot.orders", true, "", false},
		{"ws_subscribe_auth_error.json", "spot.orders", true, exgate.CodeExchangeAuthFailed, true},
		{"ws_subscribe_auth_error.json", "spot.candlesticks", false, "", false},
		{"ws_pong.json", "spot.orders", false, "", false},
		{"ws_orders.json", "spot.orders", false, "", false},
	}
	for _, tc := range tests {
		m, err := parseWSMessage(readTestdata(t, tc.file))
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		done, err := ack(m, tc.channel)
		if done != tc.done || (err != nil) != tc.wantErr {
			t.Errorf("%s on %s: ack = %v, %v; want %v, error %v", tc.file, tc.channel, done, err, tc.done, tc.wantErr)
		}
		if tc.wantCode != "" {
			if xe, ok := errors.AsType[*exgate.Error](err); !ok || xe.Code != tc.wantCode {
				t.Errorf("%s: error %v, want %s", tc.file, err, tc.wantCode)
			}
		}
	}
	// Any other refusal is not permanent: the stream retries.
	if err := refused("spot.orders", &wsError{Code: 2, Message: "Invalid argument"}); errors.As(err, new(*exgate.Error)) {
		t.Errorf("code 2 refusal = %v, want a transient error", err)
	}
	for _, bad := range []string{"", "{", `{"time":1}`, `[]`, `{"channel":""}`} {
		if _, err := parseWSMessage([]byte(bad)); err == nil {
			t.Errorf("parseWSMessage(%q) accepted", bad)
		}
	}
}

func TestParseBookUpdate(t *testing.T) {
	m, err := parseWSMessage(readTestdata(t, "ws_order_book_update.json"))
	if err != nil {
		t.Fatal(err)
	}
	u, err := parseBookUpdate(m.Result)
	if err != nil {
		t.Fatal(err)
	}
	want := bookUpdate{Pair: "BTC_USDT", First: 48776301, Last: 48776306,
		Bids: [][2]string{{"19137.74", "0.0001"}, {"19088.37", "0"}}, Asks: [][2]string{{"19137.75", "0.6135"}}}
	if diff := cmp.Diff(want, u); diff != "" {
		t.Errorf("update (-want +got):\n%s", diff)
	}
	m, _ = parseWSMessage(readTestdata(t, "ws_order_book_update_full.json"))
	if u, err = parseBookUpdate(m.Result); err != nil || !u.Full || u.Asks[1] != [2]string{"19140", "2"} {
		t.Errorf("full update = %+v, %v; want full with the exponent written plain", u, err)
	}
	for _, bad := range []string{`{"s":"BTC_USDT","U":5,"u":4}`, `{"s":"","U":1,"u":1}`, `{"s":"X","U":1,"u":1,"b":[["1"]]}`,
		`{"s":"X","U":1,"u":1,"a":[["x","1"]]}`, `{"s":"X","U":0,"u":1}`} {
		if _, err := parseBookUpdate([]byte(bad)); err == nil {
			t.Errorf("parseBookUpdate(%s) accepted", bad)
		}
	}
}

func lv(p, q string) level { return level{price: p, qty: q} }

func TestBookSync(t *testing.T) {
	up := func(first, last int64, bids ...[2]string) bookUpdate {
		return bookUpdate{Pair: "BTC_USDT", First: first, Last: last, Bids: bids}
	}
	var b bookSync
	// Before a snapshot, updates wait (the snapshot's id decides).
	if changed, err := b.apply(up(99, 100, [2]string{"9", "1"})); changed || err != nil {
		t.Fatalf("update before the snapshot: %v, %v", changed, err)
	}
	b.snapshot(100, []level{lv("10", "1"), lv("9", "2")}, []level{lv("11", "1")})
	steps := []struct {
		u       bookUpdate
		changed bool
		gap     bool
		id      int64
		why     string
	}{
		{up(95, 100, [2]string{"10", "5"}), false, false, 100, "u <= id: in the snapshot already"},
		{up(99, 102, [2]string{"10", "3"}), true, false, 102, "the first applied one has U <= id+1 <= u"},
		{up(103, 103, [2]string{"9", "0"}), true, false, 103, "the next goes on from the last"},
		{up(105, 106, [2]string{"8", "1"}), false, true, 0, "U > last+1: a gap"},
		{up(107, 107, [2]string{"8", "1"}), false, false, 0, "after a gap nothing applies before a new snapshot"},
	}
	for _, s := range steps {
		changed, err := b.apply(s.u)
		if changed != s.changed || errors.Is(err, errBookGap) != s.gap || b.id != s.id {
			t.Fatalf("%s: apply(%d..%d) = %v, %v, id %d; want %v, gap %v, id %d", s.why, s.u.First, s.u.Last, changed, err, b.id, s.changed, s.gap, s.id)
		}
	}
	b.snapshot(200, []level{lv("10", "1")}, []level{lv("11", "1")})
	// A crossing update is never emitted: the book must be rebuilt.
	if changed, err := b.apply(up(201, 201, [2]string{"12", "1"})); changed || err == nil || b.id != 0 {
		t.Errorf("crossing update: %v, %v, id %d", changed, err, b.id)
	}
	// A full message replaces the book whatever came before.
	full := bookUpdate{Pair: "BTC_USDT", Full: true, Last: 300, Bids: [][2]string{{"20", "1"}}, Asks: [][2]string{{"21", "2"}}}
	if changed, err := b.apply(full); !changed || err != nil || b.id != 300 {
		t.Fatalf("full: %v, %v, id %d", changed, err, b.id)
	}
	want := exgate.OrderBook{Bids: []exgate.Level{{Price: "20", Quantity: "1"}}, Asks: []exgate.Level{{Price: "21", Quantity: "2"}}}
	if diff := cmp.Diff(want, b.book.Snapshot(exgate.MaxStreamDepth)); diff != "" {
		t.Errorf("book after full (-want +got):\n%s", diff)
	}
}

func TestParseCandleUpdate(t *testing.T) {
	m, _ := parseWSMessage(readTestdata(t, "ws_candlesticks.json"))
	u, err := parseCandleUpdate(m.Result)
	want := candleUpdate{name: "1m_BTC_USDT", openMS: 1606292580000, o: "19128.1", h: "19128.1", l: "19128.1", c: "19128.1", baseVolume: "3.8283", closed: true}
	if err != nil || u != want {
		t.Errorf("closed candle = %+v, %v; want %+v", u, err, want)
	}
	m, _ = parseWSMessage(readTestdata(t, "ws_candlesticks_open.json"))
	if u, err = parseCandleUpdate(m.Result); err != nil || u.closed || u.baseVolume != "0.0063" {
		t.Errorf("open candle = %+v, %v", u, err)
	}
	for _, bad := range []string{`{"t":"x","n":"1m_A_B","o":"1","h":"1","l":"1","c":"1","a":"1"}`, `{"t":"60","o":"1","h":"1","l":"1","c":"1","a":"1"}`,
		`{"t":"60","n":"1m_A_B","o":"-1","h":"1","l":"1","c":"1","a":"1"}`, `{"t":"60","n":"1m_A_B","o":"1","h":"1","l":"1","c":"1"}`} {
		if _, err := parseCandleUpdate([]byte(bad)); err == nil {
			t.Errorf("parseCandleUpdate(%s) accepted", bad)
		}
	}
}

func TestKlineTracker(t *testing.T) {
	at := func(min int64, c string) exgate.Kline {
		return rest.Kline(exgate.Interval1m, time.Unix(min*60, 0).UTC(), "1", "2", "1", c, "1")
	}
	type emitted struct {
		Open   int64
		Close  string
		Closed bool
	}
	var k klineTracker
	grace := 5 * time.Second
	steps := []struct {
		name     string
		kl       exgate.Kline
		complete bool
		due      time.Time // a boundary check instead of an update
		want     []emitted
	}{
		{name: "first kline", kl: at(10, "1.5"), want: []emitted{{600000, "1.5", false}}},
		{name: "unchanged push", kl: at(10, "1.5"), want: nil},
		{name: "changed", kl: at(10, "1.6"), want: []emitted{{600000, "1.6", false}}},
		{name: "the next kline closes it", kl: at(11, "1.7"), want: []emitted{{600000, "1.6", true}, {660000, "1.7", false}}},
		{name: "a late push of the closed one", kl: at(10, "1.9"), want: nil},
		{name: "w=true", kl: at(11, "1.8"), complete: true, want: []emitted{{660000, "1.8", true}}},
		{name: "after w=true, the same kline again", kl: at(11, "1.9"), want: nil},
		{name: "the next after a closed one", kl: at(12, "2"), want: []emitted{{720000, "2", false}}},
		{name: "before the boundary and its grace", due: time.Unix(13*60, 0).Add(grace - time.Millisecond), want: nil},
		{name: "at the boundary plus grace", due: time.Unix(13*60, 0).Add(grace), want: []emitted{{720000, "2", true}}},
		{name: "again", due: time.Unix(14*60, 0), want: nil},
		{name: "the next kline after a boundary close", kl: at(13, "2.1"), want: []emitted{{780000, "2.1", false}}},
	}
	for _, s := range steps {
		var out []exgate.KlineUpdate
		if s.due.IsZero() {
			out = k.update(s.kl, s.complete)
		} else {
			out = k.due(s.due, grace)
		}
		var got []emitted
		for _, u := range out {
			got = append(got, emitted{u.Kline.OpenTime, u.Kline.ClosePrice, u.Closed})
		}
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Fatalf("%s (-want +got):\n%s", s.name, diff)
		}
	}
}

func TestStreamInterval(t *testing.T) {
	tests := []struct {
		iv     exgate.Interval
		gate   string
		source exgate.Interval
		built  bool
	}{
		{exgate.Interval1m, "1m", exgate.Interval1m, false},
		{exgate.Interval8h, "8h", exgate.Interval8h, false},
		{exgate.Interval1d, "1d", exgate.Interval1d, false},
		{exgate.Interval3m, "1m", exgate.Interval1m, true},
		{exgate.Interval12h, "4h", exgate.Interval4h, true},
		{exgate.Interval1w, "1d", exgate.Interval1d, true},
		{exgate.Interval1M, "1d", exgate.Interval1d, true}, // the channel has no 30d
	}
	for _, tt := range tests {
		src, err := streamInterval(tt.iv)
		if err != nil || src.gi.name != tt.gate || src.source != tt.source || src.built != tt.built {
			t.Errorf("streamInterval(%s) = %+v, %v; want %s from %s, built %v", tt.iv, src, err, tt.gate, tt.source, tt.built)
		}
	}
	_, err := streamInterval("2m")
	if xe, ok := errors.AsType[*exgate.Error](err); !ok || xe.Code != exgate.CodeInvalidParameter {
		t.Errorf("streamInterval(2m) error %v, want INVALID_PARAMETER", err)
	}
}

func TestKlineBuilder(t *testing.T) {
	b := klineBuilder{iv: exgate.Interval3m, source: exgate.Interval1m}
	c := func(min int64, close, vol string) candle {
		return candle{openSec: min * 60, open: "1", high: close, low: "1", close: close, baseVolume: vol}
	}
	b.set([]candle{c(30, "2", "1"), c(31, "3", "2")}) // the bucket 30..32
	check := func(what string, ks []exgate.Kline, want ...string) {
		t.Helper()
		var got []string
		for _, k := range ks {
			got = append(got, fmt.Sprintf("%d %s %s %s", k.OpenTime/60000, k.HighPrice, k.ClosePrice, k.Volume))
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", what, diff)
		}
	}
	ks, _ := b.klines()
	check("from REST", ks, "30 3 3 3")
	b.add(c(31, "4", "2.5")) // the current 1m candle moves
	ks, _ = b.klines()
	check("a push of the current source candle", ks, "30 4 4 3.5")
	b.add(c(33, "5", "1")) // the next bucket starts
	ks, _ = b.klines()
	check("the next bucket", ks, "30 4 4 3.5", "33 5 5 1")
	if b.add(c(32, "9", "9")) {
		t.Error("a late push of a bucket left behind was taken")
	}
	ks, _ = b.klines()
	check("only the last bucket is kept", ks, "33 5 5 1")
}

func TestParseOrderUpdate(t *testing.T) {
	e := New(Options{Now: func() time.Time { return time.Unix(1700000000, 0) }})
	m, _ := parseWSMessage(readTestdata(t, "ws_orders.json"))
	os, err := parseOrderUpdate(m.Result)
	if err != nil {
		t.Fatal(err)
	}
	pairs := map[string]*pair{
		"BTC_USDT": {id: "BTC_USDT", sym: btcUSDTSym, amountPrecision: 6, precision: 1},
		"ETH_USDT": {id: "ETH_USDT", sym: exgate.Symbol{Base: "ETH", Quote: "USDT"}, amountPrecision: 4, precision: 2},
	}
	out := make([]exgate.Order, 0, len(os))
	for _, o := range os {
		out = append(out, e.orderFromGate(pairs[o.CurrencyPair], o, ""))
	}
	checkGolden(t, "ws_orders.golden.json", out)
	var statuses []exgate.OrderStatus
	for _, o := range out {
		statuses = append(statuses, o.Status)
	}
	want := []exgate.OrderStatus{exgate.OrderPending, exgate.OrderPartiallyFilled, exgate.OrderFilled, exgate.OrderCanceled, exgate.OrderExpired}
	if diff := cmp.Diff(want, statuses); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	for _, bad := range []string{`{}`, `[{"id":"1","side":"buy","currency_pair":"A_B","event":"moved"}]`,
		`[{"id":"1","side":"buy","event":"put"}]`, `[{"id":"1","side":"up","currency_pair":"A_B","event":"put"}]`} {
		if _, err := parseOrderUpdate([]byte(bad)); err == nil {
			t.Errorf("parseOrderUpdate(%s) accepted", bad)
		}
	}
}
