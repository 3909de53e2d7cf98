package stream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/exgate/exgate"
)

// startWatch runs Watch in the background; its messages arrive on the
// returned channel and its result on done.
func startWatch(t *testing.T, h *Hub, ctx context.Context, req Request) (msgs chan map[string]any, done chan error) {
	t.Helper()
	msgs, done = make(chan map[string]any, 100), make(chan error, 1)
	go func() {
		done <- h.Watch(ctx, "fake", req, func(b []byte) {
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Errorf("message %s: %v", b, err)
			}
			msgs <- m
		})
	}()
	return msgs, done
}

// within returns the next value on ch, failing the test after 5 s.
func within[T any](t *testing.T, ch chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatalf("no %s", what)
		var zero T
		return zero
	}
}

func nextMsg(t *testing.T, msgs chan map[string]any) map[string]any {
	t.Helper()
	return within(t, msgs, "message")
}

func waitErr(t *testing.T, done chan error) error {
	t.Helper()
	return within(t, done, "return from Watch")
}

// An in-process watcher shares the upstream subscription with the
// WebSocket clients of the pair, gets the latest state on joining and
// leaves the topic when its context ends.
func TestWatchSharesUpstream(t *testing.T) {
	h := newHarness(t, nil)
	a := h.connect(t, testCred)
	a.send(`{"op":"subscribe","channel":"book","asset1":"BTC","asset2":"USDT","depth":3}`)
	a.expectOp(t, OpSubscribed, "")
	call := h.ex.nextCall(t)
	call.book(book(5, "10"))
	a.next(t)

	ctx, cancel := context.WithCancel(context.Background())
	msgs, done := startWatch(t, h.hub, ctx, Request{Channel: ChannelBook, Symbol: exgate.Symbol{Base: "BTC", Quote: "USDT"}, Depth: 2})
	if m := nextMsg(t, msgs); m["channel"] != "book" || len(m["data"].(map[string]any)["bids"].([]any)) != 2 {
		t.Fatalf("latest book on joining: %v", m)
	}
	h.clk.Add(time.Second)
	call.book(book(5, "20"))
	if m := nextMsg(t, msgs); m["data"].(map[string]any)["bids"].([]any)[0].(map[string]any)["price"] != "200" {
		t.Fatalf("update: %v", m)
	}
	a.next(t)
	h.ex.noCall(t)
	st := h.hub.Stats()
	if st.Connections != 1 || st.Watchers != 1 || len(st.Topics) != 1 || st.Topics[0].Subscribers != 2 || st.Topics[0].Channel != ChannelBook {
		t.Fatalf("stats with a client and a watcher: %+v", st)
	}
	cancel()
	if err := waitErr(t, done); err != nil {
		t.Fatalf("Watch ended by its context: %v", err)
	}
	if st := h.hub.Stats(); st.Watchers != 0 || st.Topics[0].Subscribers != 1 {
		t.Fatalf("stats after the watcher left: %+v", st)
	}
	if call.ctx.Err() != nil {
		t.Fatal("the upstream stopped while a client still listens")
	}
}

func TestWatchKlinesAlone(t *testing.T) {
	h := newHarness(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	msgs, done := startWatch(t, h.hub, ctx, Request{Channel: ChannelKlines, Symbol: exgate.Symbol{Base: "ETH", Quote: "BTC"}})
	call := h.ex.nextCall(t)
	call.kline(exgate.KlineUpdate{Kline: exgate.Kline{OpenTime: 60_000, ClosePrice: "0.05", CloseTime: 119_999}})
	if m := nextMsg(t, msgs); m["interval"] != "1m" || m["asset1"] != "ETH" || m["data"].(map[string]any)["closePrice"] != "0.05" {
		t.Fatalf("kline: %v", m)
	}
	cancel()
	if err := waitErr(t, done); err != nil {
		t.Fatal(err)
	}
	h.passGrace(t)
	select {
	case <-call.ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream outlived its only watcher")
	}
	if st := h.hub.Stats(); len(st.Topics) != 0 || st.Watchers != 0 {
		t.Fatalf("stats after the last watcher: %+v", st)
	}
}

func TestWatchRefusals(t *testing.T) {
	h := newHarness(t, nil)
	sym := exgate.Symbol{Base: "BTC", Quote: "USDT"}
	for _, tc := range []struct {
		name     string
		exchange string
		req      Request
		code     exgate.Code
	}{
		{"orders need a credential", "fake", Request{Channel: ChannelOrders}, exgate.CodeInvalidParameter},
		{"depth too deep", "fake", Request{Channel: ChannelBook, Symbol: sym, Depth: exgate.MaxStreamDepth + 1}, exgate.CodeInvalidParameter},
		{"exchange not enabled", "nowhere", Request{Channel: ChannelBook, Symbol: sym}, exgate.CodeExchangeUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := h.hub.Watch(context.Background(), tc.exchange, tc.req, func([]byte) { t.Error("delivered") })
			if e, ok := errors.AsType[*exgate.Error](err); !ok || e.Code != tc.code {
				t.Fatalf("err %v, want %s", err, tc.code)
			}
		})
	}
	h.ex.noCall(t)
}

// An upstream that refuses the pair for good ends the Watch with its
// error.
func TestWatchUpstreamRefuses(t *testing.T) {
	h := newHarness(t, nil)
	h.ex.fail = exgate.Errorf(exgate.CodeUnknownSymbol, "no such pair")
	_, done := startWatch(t, h.hub, context.Background(), Request{Channel: ChannelBook, Symbol: exgate.Symbol{Base: "NO", Quote: "PE"}})
	h.ex.nextCall(t)
	if e, ok := errors.AsType[*exgate.Error](waitErr(t, done)); !ok || e.Code != exgate.CodeUnknownSymbol {
		t.Fatalf("want UNKNOWN_SYMBOL, got %v", e)
	}
}

// A watcher whose deliver does not keep up is ended with ErrSlow, not
// waited for: the topic and its other subscribers go on.
func TestWatchSlowEnds(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.QueueLimit = 2 })
	release := make(chan struct{})
	done := make(chan error, 1)
	delivered := make(chan struct{}, 10)
	go func() {
		done <- h.hub.Watch(context.Background(), "fake", Request{Channel: ChannelKlines, Symbol: exgate.Symbol{Base: "BTC", Quote: "USDT"}},
			func([]byte) { delivered <- struct{}{}; <-release })
	}()
	call := h.ex.nextCall(t)
	call.kline(exgate.KlineUpdate{Kline: exgate.Kline{OpenTime: 0, ClosePrice: "0"}})
	<-delivered // the watcher is now stuck in deliver
	for i := 1; i <= 3; i++ {
		call.kline(exgate.KlineUpdate{Kline: exgate.Kline{OpenTime: 0, ClosePrice: string(rune('0' + i))}})
	}
	close(release)
	if err := waitErr(t, done); !errors.Is(err, ErrSlow) {
		t.Fatalf("want ErrSlow, got %v", err)
	}
	if st := h.hub.Stats(); st.SlowClosed != 1 {
		t.Fatalf("slow closes %d, want 1", st.SlowClosed)
	}
}

// Stats counts the restarts of a failing upstream by exchange and
// channel.
func TestStatsRestarts(t *testing.T) {
	h := newHarness(t, nil)
	h.ex.fail = errors.New("connection reset")
	a := h.connect(t, testCred)
	a.send(`{"op":"subscribe","channel":"book","asset1":"BTC","asset2":"USDT"}`)
	a.expectOp(t, OpSubscribed, "")
	h.ex.nextCall(t)
	h.ex.nextCall(t) // restarted after the backoff, counted before it
	st := h.hub.Stats()
	i := slices.IndexFunc(st.Restarts, func(r RestartStats) bool { return r.Exchange == "fake" && r.Channel == ChannelBook })
	if i < 0 || st.Restarts[i].Restarts < 1 {
		t.Fatalf("no restart counted: %+v", st)
	}
}

// HoldBook keeps a pair's upstream book subscription open, and LiveBook
// gives its latest book only while the upstream connection has been up
// since that book.
func TestLiveBook(t *testing.T) {
	h := newHarness(t, nil)
	sym := exgate.Symbol{Base: "BTC", Quote: "USDT"}
	if _, ok := h.hub.LiveBook("fake", sym); ok {
		t.Fatal("a live book with no subscription")
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- h.hub.HoldBook(ctx, "fake", sym) }()
	call := h.ex.nextCall(t)
	if call.channel != ChannelBook || call.sym != sym {
		t.Fatalf("upstream call %s %s", call.channel, call.sym)
	}
	if _, ok := h.hub.LiveBook("fake", sym); ok {
		t.Fatal("a live book before the upstream sent one")
	}
	// Every update counts at once, paced or not: 30 in one instant.
	for i := range 30 {
		call.book(book(100, fmt.Sprint(i)))
	}
	if b, ok := h.hub.LiveBook("fake", sym); !ok || len(b.Bids) != 100 || b.Bids[0].Price != "290" {
		t.Fatalf("LiveBook = %d levels from %v, %v; want the latest, whole", len(b.Bids), b.Bids[:min(1, len(b.Bids))], ok)
	}
	if _, ok := h.hub.LiveBook("fake", exgate.Symbol{Base: "ETH", Quote: "USDT"}); ok {
		t.Fatal("a live book of another pair")
	}
	// The adapter lost its connection: no live book until the next one.
	exgate.StreamLost(call.ctx)
	if _, ok := h.hub.LiveBook("fake", sym); ok {
		t.Fatal("a live book after the upstream connection dropped")
	}
	call.book(book(1, "7"))
	if b, ok := h.hub.LiveBook("fake", sym); !ok || b.Bids[0].Price != "70" {
		t.Fatalf("after the reconnect: %v, %v", b, ok)
	}
	// Released, the subscription ends after the grace period.
	cancel()
	if err := waitErr(t, done); err != nil {
		t.Fatalf("HoldBook = %v", err)
	}
	h.passGrace(t)
	if _, ok := h.hub.LiveBook("fake", sym); ok {
		t.Fatal("a live book after its subscription ended")
	}
}

func TestHoldBookRefused(t *testing.T) {
	h := newHarness(t, nil)
	h.ex.mu.Lock()
	h.ex.fail = exgate.Errorf(exgate.CodeUnknownSymbol, "no such pair")
	h.ex.mu.Unlock()
	err := h.hub.HoldBook(t.Context(), "fake", exgate.Symbol{Base: "NOPE", Quote: "USDT"})
	if e, ok := errors.AsType[*exgate.Error](err); !ok || e.Code != exgate.CodeUnknownSymbol {
		t.Fatalf("HoldBook = %v, want UNKNOWN_SYMBOL", err)
	}
	if err := h.hub.HoldBook(t.Context(), "nowhere", exgate.Symbol{Base: "BTC", Quote: "USDT"}); err == nil {
		t.Fatal("HoldBook on an exchange not enabled")
	}
}
