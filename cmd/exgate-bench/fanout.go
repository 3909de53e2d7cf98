package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/client"
	"github.com/exgate/exgate/cmd/internal/gateway"
	"github.com/exgate/exgate/exchange"
)

// benchFanout measures GET /v1/stream (docs/contract.md 2.5) fanning one
// book channel out to many WebSocket clients on loopback, side by side
// with a bare relay: the same frames fanned out over coder/websocket with
// no authentication, no hub and no normalization. Both sources tick at the
// same rate at the same time; each frame carries its send time (the first
// bid's price, in nanoseconds), so a client's delivery latency is its
// receive time minus that.
func benchFanout(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("exgate-bench fanout", flag.ContinueOnError)
	fs.SetOutput(stderr)
	clients := fs.Int("clients", 1000, "WebSocket clients on each side")
	rate := fs.Int("rate", 10, "book updates a second")
	depth := fs.Int("depth", 20, "levels a side each client subscribes to")
	dur := fs.Duration("duration", 10*time.Second, "how long latencies are recorded")
	warmup := fs.Duration("warmup", 2*time.Second, "how long both run before recording")
	rounds := fs.Int("rounds", 3, "recordings of --duration each, reported one by one and pooled")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the recorded rounds (clients, gateway and relay) to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *clients < 1 || *rate < 1 || *rounds < 1 || *depth < 1 || *depth > exgate.MaxStreamDepth {
		return errors.New("fanout: --clients, --rate and --rounds must be positive, --depth 1 to 100")
	}
	dataDir, err := os.MkdirTemp("", "exgate-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dataDir)

	// The gateway as serve builds it, its sim replaced by the synthetic
	// streaming exchange; no client limit (1000 handshakes at once).
	syn := &syntheticBook{every: time.Second / time.Duration(*rate)}
	// One client key holds every connection: the per-key bound is lifted
	// to the clients measured.
	cfg := &gateway.Config{DataDir: dataDir, ExchangeSettings: benchExchanges("http://127.0.0.1:1"), LogFormat: "text",
		StreamConnectionsPerKey: *clients}
	st, err := gateway.OpenStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	state, err := gateway.OpenState(ctx, cfg)
	if err != nil {
		return err
	}
	defer state.Close()
	key, err := gateway.NewClientKey(ctx, st, "bench", false)
	if err != nil {
		return err
	}
	if _, err := st.AddCredential(ctx, exgate.Credential{ClientAPIKey: key.APIKey, Name: "bench", Exchange: "sim"}); err != nil {
		return err
	}
	g, err := gateway.Build(cfg, st, state, slog.New(slog.DiscardHandler), gateway.WithoutAudit(),
		gateway.WithAdapters(exchange.Adapter{Name: "sim", InProcess: true,
			Build: func(exchange.Env) (exgate.Exchange, error) { return syn, nil }}))
	if err != nil {
		return err
	}
	gwURL, stopGW, err := serveLoopback(g.API)
	if err != nil {
		return err
	}
	defer stopGW()
	rl := &relay{clients: map[chan []byte]struct{}{}}
	relayURL, stopRelay, err := serveLoopback(rl)
	if err != nil {
		return err
	}
	defer stopRelay()

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	// recording is the round being recorded, 0 for none.
	var recording atomic.Int32
	gw := &side{name: "gateway (GET /v1/stream)", recording: &recording}
	bare := &side{name: "bare relay", recording: &recording}
	sub, _ := json.Marshal(map[string]any{"op": "subscribe", "channel": "book", "asset1": "BTC", "asset2": "USDT", "depth": *depth})
	// Handshake timestamps start in the past and step by a millisecond:
	// each signature is distinct, none is ahead of the gateway's clock.
	ts := time.Now().Add(-2 * time.Second).UnixMilli()
	before := residentKB()
	fmt.Fprintf(stderr, "connecting %d gateway clients\n", *clients)
	if err := connectAll(runCtx, *clients, func(i int) error {
		q := "timestamp=" + strconv.FormatInt(ts+int64(i), 10) + "&recvWindow=60000"
		target := "ws" + strings.TrimPrefix(gwURL, "http") + "/v1/stream?" + q + "&signature=" + client.Sign(key.Secret, q)
		hdr := http.Header{"X-API-KEY": {key.APIKey}, "X-API-EXCHANGE-KEY": {"bench"}}
		return gw.connect(runCtx, target, hdr, sub)
	}); err != nil {
		return err
	}
	withGateway := residentKB()
	fmt.Fprintf(stderr, "connecting %d bare relay clients\n", *clients)
	if err := connectAll(runCtx, *clients, func(int) error {
		return bare.connect(runCtx, "ws"+strings.TrimPrefix(relayURL, "http")+"/", nil, nil)
	}); err != nil {
		return err
	}
	withRelay := residentKB()
	go rl.source(runCtx, time.Second/time.Duration(*rate), *depth)

	fmt.Fprintf(stderr, "warming up for %s, then %d recordings of %s\n", *warmup, *rounds, *dur)
	if err := sleep(ctx, *warmup); err != nil {
		return err
	}
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	for r := 1; r <= *rounds; r++ {
		recording.Store(int32(r))
		if err := sleep(ctx, *dur); err != nil {
			return err
		}
	}
	recording.Store(0)
	cancel()
	gw.wait()
	bare.wait()

	watches := syn.watches.Load()
	fmt.Fprintf(stdout, "fanout: one book channel (depth %d) at %d updates/s to %d WebSocket clients on each side, loopback, %d x %s recorded after %s\n",
		*depth, *rate, *clients, *rounds, *dur, *warmup)
	expected := int(float64(*clients) * float64(*rate) * dur.Seconds())
	for i := 1; i <= *rounds+1; i++ {
		r := i % (*rounds + 1) // the rounds, then all of them
		label, want := fmt.Sprintf("round %d", r), expected
		if r == 0 {
			label, want = "all rounds", expected**rounds
		}
		gwStats, bareStats := gw.stats(r), bare.stats(r)
		fmt.Fprintf(stdout, "%s:\n  %-26s upstream subscriptions %d; %s\n", label, gw.name, watches, gwStats.line(want))
		fmt.Fprintf(stdout, "  %-26s %s\n", bare.name, bareStats.line(want))
		if bareStats.p99 > 0 {
			fmt.Fprintf(stdout, "  p99 ratio gateway / bare relay: %.2f (target <= 1.5)\n", float64(gwStats.p99)/float64(bareStats.p99))
		}
	}
	fmt.Fprintf(stdout, "resident memory per client (both ends in this process): gateway %.1f kB, bare relay %.1f kB; the gateway's own extra %.1f kB\n",
		perClient(before, withGateway, *clients), perClient(withGateway, withRelay, *clients),
		perClient(before, withGateway, *clients)-perClient(withGateway, withRelay, *clients))
	if watches != 1 {
		return fmt.Errorf("fanout: %d upstream subscriptions for one channel, want 1", watches)
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func perClient(a, b int64, n int) float64 { return float64(b-a) / float64(n) }

// residentKB is this process's resident memory after a collection.
func residentKB() int64 {
	runtime.GC()
	debug.FreeOSMemory()
	kb, _ := rssKB(os.Getpid())
	return kb
}

// connectAll runs connect for 0..n-1, 32 at a time.
func connectAll(ctx context.Context, n int, connect func(i int) error) error {
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 32)
	for i := range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := connect(i); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs // nil when none failed
}

// side is one set of clients and the latencies they saw.
type side struct {
	name      string
	recording *atomic.Int32
	readers   sync.WaitGroup
	mu        sync.Mutex
	lat       []sample
}

// sample is one delivery's latency in a round.
type sample struct {
	round int32
	d     time.Duration
}

// connect dials target, sends sub (when set) and waits for its answer,
// then reads frames until ctx ends, recording each one's latency.
func (s *side) connect(ctx context.Context, target string, hdr http.Header, sub []byte) error {
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	ws, _, err := websocket.Dial(dctx, target, &websocket.DialOptions{HTTPHeader: hdr})
	if err == nil && sub != nil {
		if err = ws.Write(dctx, websocket.MessageText, sub); err == nil {
			var ack []byte
			_, ack, err = ws.Read(dctx)
			if err == nil && !bytes.Contains(ack, []byte(`"op":"subscribed"`)) {
				err = fmt.Errorf("subscription answered %s", ack)
			}
		}
	}
	cancel()
	if err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	ws.SetReadLimit(1 << 20)
	s.readers.Add(1)
	go func() {
		defer s.readers.Done()
		defer ws.CloseNow()
		var mine []sample
		for {
			_, b, err := ws.Read(ctx)
			if err != nil {
				break
			}
			if sent, ok := sentAt(b); ok {
				if r := s.recording.Load(); r > 0 {
					mine = append(mine, sample{r, time.Duration(time.Now().UnixNano() - sent)})
				}
			}
		}
		s.mu.Lock()
		s.lat = append(s.lat, mine...)
		s.mu.Unlock()
	}()
	return nil
}

var priceMark = []byte(`"bids":[{"price":"`)

// sentAt reads the send time a frame carries in its first bid's price.
func sentAt(b []byte) (int64, bool) {
	i := bytes.Index(b, priceMark)
	if i < 0 {
		return 0, false
	}
	rest := b[i+len(priceMark):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(string(rest[:j]), 10, 64)
	return n, err == nil
}

type latencyStats struct {
	n             int
	p50, p99, max time.Duration
}

// wait waits for the readers, which end with the connections.
func (s *side) wait() { s.readers.Wait() }

// stats are the latencies of a round, or of all rounds for 0.
func (s *side) stats(round int) latencyStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	var lat []time.Duration
	for _, x := range s.lat {
		if round == 0 || int(x.round) == round {
			lat = append(lat, x.d)
		}
	}
	slices.Sort(lat)
	st := latencyStats{n: len(lat)}
	if st.n > 0 {
		st.p50, st.p99, st.max = lat[st.n/2], lat[min(st.n-1, st.n*99/100)], lat[st.n-1]
	}
	return st
}

func (l latencyStats) line(expected int) string {
	return fmt.Sprintf("delivered %d of about %d; latency p50 %s p99 %s max %s", l.n, expected,
		l.p50.Round(time.Microsecond), l.p99.Round(time.Microsecond), l.max.Round(time.Microsecond))
}

// syntheticBook is an exchange that streams one changing book at a fixed
// rate and counts its upstream subscriptions.
type syntheticBook struct {
	exgate.Exchange
	every   time.Duration
	watches atomic.Int32
}

func (s *syntheticBook) Name() string { return "sim" }

func (s *syntheticBook) WatchOrders(ctx context.Context, _ exgate.Credential, _ func(exgate.Order)) error {
	<-ctx.Done()
	return nil
}

func (s *syntheticBook) WatchKlines(ctx context.Context, _ exgate.Credential, _ exgate.Symbol, _ exgate.Interval, _ func(exgate.KlineUpdate)) error {
	<-ctx.Done()
	return nil
}

func (s *syntheticBook) WatchBook(ctx context.Context, _ exgate.Credential, _ exgate.Symbol, emit func(exgate.OrderBook)) error {
	s.watches.Add(1)
	t := time.NewTicker(s.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			emit(syntheticLevels(exgate.MaxStreamDepth))
		}
	}
}

// syntheticLevels is a book of n levels a side whose first bid's price is
// the time now in nanoseconds.
func syntheticLevels(n int) exgate.OrderBook {
	b := exgate.OrderBook{Bids: make([]exgate.Level, n), Asks: make([]exgate.Level, n)}
	for i := range n {
		b.Bids[i] = exgate.Level{Price: strconv.Itoa(60000 - i), Quantity: "0.5"}
		b.Asks[i] = exgate.Level{Price: strconv.Itoa(60001 + i), Quantity: "0.5"}
	}
	b.Bids[0].Price = strconv.FormatInt(time.Now().UnixNano(), 10)
	return b
}

// relay is the bare relay: every client gets every frame through its own
// queue and writer, nothing else.
type relay struct {
	mu      sync.Mutex
	clients map[chan []byte]struct{}
}

func (r *relay) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	ws, err := websocket.Accept(w, req, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return
	}
	ctx := ws.CloseRead(context.WithoutCancel(req.Context()))
	ch := make(chan []byte, 1024)
	r.mu.Lock()
	r.clients[ch] = struct{}{}
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.clients, ch)
		r.mu.Unlock()
		_ = ws.CloseNow()
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case b := <-ch:
			if err := ws.Write(ctx, websocket.MessageText, b); err != nil {
				return
			}
		}
	}
}

// source sends a book frame of the gateway's shape every period.
func (r *relay) source(ctx context.Context, every time.Duration, depth int) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		b := syntheticLevels(depth)
		frame, _ := json.Marshal(struct {
			Channel string           `json:"channel"`
			Asset1  string           `json:"asset1"`
			Asset2  string           `json:"asset2"`
			Data    exgate.OrderBook `json:"data"`
			Time    int64            `json:"time"`
		}{"book", "BTC", "USDT", b, time.Now().UnixMilli()})
		r.mu.Lock()
		for ch := range r.clients {
			select {
			case ch <- frame:
			default: // a full queue drops the frame
			}
		}
		r.mu.Unlock()
	}
}
