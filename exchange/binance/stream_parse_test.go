package binance

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/wsstream"
)

func frameFile(t testing.TB, name string) []byte {
	t.Helper()
	return readTestdata(t, filepath.Join("stream", name))
}

// TestParseStreamFrames reads the documented message shapes (written in
// testdata/stream after user-data-stream.md, web-socket-streams.md and
// web-socket-api.md) and compares what the adapter makes of them with
// golden files.
func TestParseStreamFrames(t *testing.T) {
	depth, err := parseDepthEvent(frameFile(t, "depth_update.json"))
	if err != nil {
		t.Fatal(err)
	}
	if depth.FirstID != 4172301 || depth.FinalID != 4172304 || len(depth.Bids) != 2 || depth.Asks[1] != [2]string{"60002.2", "0"} {
		t.Errorf("depth update = %+v", depth)
	}
	type klineOut struct {
		Kline  exgate.Kline
		Closed bool
	}
	var klines []klineOut
	for _, name := range []string{"kline_open.json", "kline_closed.json"} {
		k, closed, err := parseKlineEvent(frameFile(t, name), exgate.Interval1m)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		klines = append(klines, klineOut{k, closed})
	}
	golden(t, "stream/klines.golden.json", klines)
	if _, _, err := parseKlineEvent(frameFile(t, "kline_open.json"), exgate.Interval5m); err == nil {
		t.Error("a 1m kline read on a 5m stream")
	}

	kinds := map[string]string{}
	for _, name := range []string{"execution_new.json", "subscribed.json", "refused.json", "terminated.json", "account_position.json"} {
		ev, err := parseUserMessage(frameFile(t, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		kinds[name] = ev.kind
		if ev.answer != nil {
			kinds[name] = "answer " + string(ev.answer.ID)
		}
	}
	want := map[string]string{"execution_new.json": "executionReport", "subscribed.json": "answer 1", "refused.json": "answer 1",
		"terminated.json": "eventStreamTerminated", "account_position.json": "outboundAccountPosition"}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("message kinds (-want +got):\n%s", diff)
	}
	for _, bad := range []string{`{}`, `{"e":"kline"}`, `[1]`, `{"event":{"e":"executionReport","s":"BTCUSDT","i":1,"X":"NEW","S":"HOLD"}}`,
		`{"event":{"e":"executionReport","s":"BTCUSDT","i":1,"X":"NEW","S":"BUY","q":"-1"}}`} {
		if _, err := parseUserMessage([]byte(bad)); err == nil {
			t.Errorf("parseUserMessage(%s) accepted", bad)
		}
	}
	for _, bad := range []string{`{"e":"depthUpdate","U":5,"u":4}`, `{"e":"depthUpdate","U":1,"u":1,"b":[["x","1"]]}`, `{"e":"trade"}`,
		`{"e":"depthUpdate","U":1,"u":2,"a":[["1","-1"]]}`} {
		if _, err := parseDepthEvent([]byte(bad)); err == nil {
			t.Errorf("parseDepthEvent(%s) accepted", bad)
		}
	}
}

// TestOrderReports runs an order's three reports (placed, partly filled,
// canceled) through the order stream and compares the emitted orders
// with a golden file: the same normalization as the REST lookups, the
// order's own client id on the cancel (C), fees from the streamed trade.
func TestOrderReports(t *testing.T) {
	e := newEnv(t)
	var got []exgate.Order
	w := &orderWatch{e: e.ex, cred: e.cred, emit: func(o exgate.Order) { got = append(got, o) },
		orders: map[string]*tracked{}, symbols: map[exgate.Symbol]bool{}}
	for _, name := range []string{"execution_new.json", "execution_trade.json", "execution_trade.json", "execution_canceled.json", "execution_new.json"} {
		ev, err := parseUserMessage(frameFile(t, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		w.report(t.Context(), &ev.report)
	}
	// The repeated trade and the NEW after the cancel are old news: not
	// emitted.
	if len(got) != 3 {
		t.Fatalf("%d orders emitted, want 3: %+v", len(got), got)
	}
	golden(t, "stream/orders.golden.json", got)
	if got[2].ID != "bot-7-0001" || got[2].Status != exgate.OrderCanceled || got[1].Fees == nil {
		t.Errorf("cancel emitted as %s %s, trade fees %v", got[2].ID, got[2].Status, got[1].Fees)
	}
}

// TestLocalBook follows web-socket-streams.md "How to manage a local order
// book correctly" on a snapshot at lastUpdateId 100.
func TestLocalBook(t *testing.T) {
	ev := func(first, final int64, bids ...[2]string) depthEvent {
		return depthEvent{Type: "depthUpdate", FirstID: first, FinalID: final, Bids: bids}
	}
	steps := []struct {
		name    string
		ev      depthEvent
		applied bool
		gap     bool
	}{
		{"older than the snapshot: dropped", ev(90, 100, [2]string{"50", "9"}), false, false},
		{"first event must straddle lastUpdateId+1", ev(99, 101, [2]string{"50", "2"}), true, false},
		{"next U = previous u + 1", ev(102, 103, [2]string{"49", "1"}), true, false},
		{"a replay of an applied range: dropped", ev(102, 103), false, false},
		{"a skipped id is a gap", ev(105, 106), false, true},
	}
	lb := &localBook{id: 100}
	for _, s := range steps {
		applied, err := lb.apply(s.ev)
		var gap *bookGap
		if applied != s.applied || errors.As(err, &gap) != s.gap || (err != nil && !s.gap) {
			t.Errorf("%s: applied %v, err %v", s.name, applied, err)
		}
	}
	if got := lb.book.Levels(wsstream.Bid, 0); len(got) != 2 || got[0].Quantity != "2" || lb.id != 103 {
		t.Errorf("book %v at %d", got, lb.id)
	}
	fresh := &localBook{id: 100}
	if _, err := fresh.apply(ev(102, 104)); err == nil {
		t.Error("a first event past lastUpdateId+1 applied")
	}
	crossed := &localBook{id: 1}
	_ = crossed.book.Set(wsstream.Ask, "10", "1")
	if _, err := crossed.apply(depthEvent{FirstID: 2, FinalID: 2, Bids: [][2]string{{"11", "1"}}}); err == nil {
		t.Error("a crossed book is not a gap")
	}
}

// TestKlineState: every change of the current kline once, its close
// once, and a close missed on the stream taken from the REST rows.
func TestKlineState(t *testing.T) {
	n := func(v uint64) *uint64 { return &v }
	k := func(open int64, close string, trades uint64) exgate.Kline {
		return exgate.Kline{OpenTime: open, CloseTime: open + 59999, OpenPrice: "1", HighPrice: "2", LowPrice: "1", ClosePrice: close, Volume: "1", NumberOfTrades: n(trades)}
	}
	var got []exgate.KlineUpdate
	emit := func(u exgate.KlineUpdate) { got = append(got, u) }
	var missing []int64
	st := &klineState{}
	st.update(k(0, "1", 1), false, nil, emit, func(o int64) { missing = append(missing, o) })
	st.update(k(0, "1", 1), false, nil, emit, nil)                // unchanged
	st.update(k(0, "1.5", 2), false, nil, emit, nil)              // changed
	st.update(k(0, "1.6", 3), true, nil, emit, nil)               // closed
	st.update(k(0, "1.6", 3), true, nil, emit, nil)               // closed again: once only
	st.update(k(60000, "2", 1), false, nil, emit, nil)            // next
	st.update(k(0, "9", 9), false, nil, emit, nil)                // stale
	rows := []exgate.Kline{k(60000, "2.5", 4), k(120000, "3", 1)} // the close of 60000 was missed
	st.update(k(120000, "3", 1), false, rows, emit, func(o int64) { missing = append(missing, o) })
	up := func(k exgate.Kline, closed bool) exgate.KlineUpdate {
		return exgate.KlineUpdate{Kline: k, Closed: closed}
	}
	want := []exgate.KlineUpdate{up(k(0, "1", 1), false), up(k(0, "1.5", 2), false), up(k(0, "1.6", 3), true),
		up(k(60000, "2", 1), false), up(k(60000, "2.5", 4), true), up(k(120000, "3", 1), false)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("emissions (-want +got):\n%s", diff)
	}
	if len(missing) != 0 {
		t.Errorf("missing closes %v", missing)
	}
	st.update(k(240000, "4", 1), false, nil, emit, func(o int64) { missing = append(missing, o) })
	if len(missing) != 1 || missing[0] != 120000 || !got[len(got)-2].Closed || got[len(got)-2].Kline.OpenTime != 120000 {
		t.Errorf("a close missing on the stream and the REST API: missing %v, emitted %v", missing, got[len(got)-2:])
	}
}

// TestSubscribeSignature checks the WebSocket API signing against the
// HMAC example of web-socket-api.md ("SIGNED request example (HMAC)")
// and the subscription's payload: its parameters sorted by name.
func TestSubscribeSignature(t *testing.T) {
	doc := "apiKey=vmPUZE6mv9SD5VNHk4HlWFsOr6aKE2zvsw0MuIgwCIPy6utIco14y7Ju91duEh8A&newOrderRespType=ACK&price=52000.00&quantity=0.01000000&recvWindow=100&side=SELL&symbol=BTCUSDT&timeInForce=GTC&timestamp=1645423376532&type=LIMIT"
	if got := sign(testSecret, doc, ""); got != "cc15477742bd704c29492d96c7ead9414dfd8e0ec4a00f947bb5bb454ddbd08a" {
		t.Errorf("documented example signed %s", got)
	}
	b, err := subscribeRequest(7, exgate.Credential{Key: testKey, Secret: testSecret}, 5000, 1645423376532)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":7,"method":"userDataStream.subscribe.signature","params":{"apiKey":"` + testKey + `","recvWindow":5000,"signature":"` +
		sign(testSecret, "apiKey="+testKey+"&recvWindow=5000&timestamp=1645423376532", "") + `","timestamp":1645423376532}}`
	if string(b) != want {
		t.Errorf("subscription\n got %s\nwant %s", b, want)
	}
}

// TestWatchOrdersAuthRefused: a key the WebSocket API refuses (a wrong
// secret: -1022; an unknown key: -2015) ends WatchOrders with
// EXCHANGE_AUTH_FAILED, without retrying.
func TestWatchOrdersAuthRefused(t *testing.T) {
	for name, cred := range map[string]exgate.Credential{
		"wrong secret": {Key: testKey, Secret: "not-the-secret"},
		"unknown key":  {Key: "unknown-key", Secret: testSecret},
	} {
		t.Run(name, func(t *testing.T) {
			e := newStreamEnv(t)
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			err := e.ex.WatchOrders(ctx, cred, func(o exgate.Order) { t.Errorf("emitted %+v", o) })
			if code(err) != exgate.CodeExchangeAuthFailed {
				t.Fatalf("WatchOrders = %v, want EXCHANGE_AUTH_FAILED", err)
			}
			if n := e.fake.StreamsAccepted(); n != 1 {
				t.Errorf("%d connections, want 1 (a refused key is not retried)", n)
			}
		})
	}
}

// TestWatchRefusesBeforeConnecting: an interval or a pair that cannot be
// streamed is refused with its code, at once.
func TestWatchRefusesBeforeConnecting(t *testing.T) {
	e := newStreamEnv(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := e.ex.WatchKlines(ctx, e.cred, btcusdt, "7m", func(exgate.KlineUpdate) {}); code(err) != exgate.CodeInvalidParameter {
		t.Errorf("WatchKlines(7m) = %v", err)
	}
	nope := exgate.Symbol{Base: "NOPE", Quote: "USDT"}
	if err := e.ex.WatchBook(ctx, e.cred, nope, func(exgate.OrderBook) {}); code(err) != exgate.CodeUnknownSymbol {
		t.Errorf("WatchBook(NOPE/USDT) = %v", err)
	}
	if n := e.fake.StreamsAccepted(); n != 0 {
		t.Errorf("%d stream connections", n)
	}
}

// TestSilentConnectionDropped: a connection that sends nothing (no
// message, no ping) for StreamIdle is taken for dead and replaced; the
// caller hears of each loss (exgate.StreamLost) and gets the book again
// from each new connection, though unchanged.
func TestSilentConnectionDropped(t *testing.T) {
	e := newStreamEnv(t, func(o *Options) { o.StreamIdle = 100 * time.Millisecond })
	var mu sync.Mutex
	var events []string // "book" or "lost", in order
	var first exgate.OrderBook
	note := func(ev string) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, ev)
	}
	ctx, cancel := context.WithCancel(exgate.ContextWithStreamLost(t.Context(), func() { note("lost") }))
	done := make(chan error, 1)
	go func() {
		done <- e.ex.WatchBook(ctx, e.cred, btcusdt, func(b exgate.OrderBook) {
			mu.Lock()
			if first.Bids == nil {
				first = b
			} else if !sameLevels(b, first) {
				t.Errorf("book changed: %v, first %v", b, first)
			}
			mu.Unlock()
			note("book")
		})
	}()
	deadline := time.Now().Add(5 * time.Second)
	for e.fake.StreamsAccepted() < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := e.fake.StreamsAccepted(); n < 3 {
		t.Errorf("%d connections after 5 s of a silent stream, want a new one every 100 ms", n)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("WatchBook = %v after its context ended", err)
	}
	mu.Lock()
	defer mu.Unlock()
	// Every loss is told before the next connection's book: never two
	// books without a loss between them (a connection that failed before
	// its book adds a loss of its own).
	books := 0
	for i, ev := range events {
		if ev == "book" {
			books++
			if i > 0 && events[i-1] == "book" {
				t.Fatalf("events %v: two books with no loss between them", events)
			}
		}
	}
	if books < 2 || events[0] != "book" {
		t.Fatalf("events %v, want the book, a loss and the book again at least", events)
	}
}
