package console_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/console"
	"github.com/exgate/exgate/stream"
)

// fakeLive is a LiveFeed the test drives: each Watch is announced on
// watches, delivers what the test sends on its channel, and returns end's
// error (or nil when its context ends).
type fakeLive struct {
	watches chan *fakeWatch
}

type fakeWatch struct {
	exchange string
	req      stream.Request
	msgs     chan []byte
	end      chan error
	done     chan struct{}
}

func newFakeLive() *fakeLive { return &fakeLive{watches: make(chan *fakeWatch, 10)} }

func (f *fakeLive) Watch(ctx context.Context, exchange string, req stream.Request, deliver func([]byte)) error {
	w := &fakeWatch{exchange: exchange, req: req, msgs: make(chan []byte), end: make(chan error, 1), done: make(chan struct{})}
	defer close(w.done)
	f.watches <- w
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-w.end:
			return err
		case m := <-w.msgs:
			deliver(m)
		}
	}
}

// next returns the next Watch, by channel.
func (f *fakeLive) both(t *testing.T) (book, klines *fakeWatch) {
	t.Helper()
	for range 2 {
		select {
		case w := <-f.watches:
			if w.req.Channel == stream.ChannelBook {
				book = w
			} else {
				klines = w
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no Watch")
		}
	}
	if book == nil || klines == nil {
		t.Fatal("want one book and one klines Watch")
	}
	return book, klines
}

// sse reads Server-Sent Events.
type sse struct {
	t      *testing.T
	resp   *http.Response
	events chan [2]string
}

func (b *browser) events(path string) *sse {
	b.t.Helper()
	resp, err := b.c.Get(b.e.srv.URL + path)
	if err != nil {
		b.t.Fatal(err)
	}
	s := &sse{t: b.t, resp: resp, events: make(chan [2]string, 100)}
	b.t.Cleanup(func() { resp.Body.Close() })
	go func() {
		defer close(s.events)
		sc := bufio.NewScanner(resp.Body)
		var name, data string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if name != "" || data != "" {
					s.events <- [2]string{name, data}
				}
				name, data = "", ""
			case strings.HasPrefix(line, "event: "):
				name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				data = strings.TrimPrefix(line, "data: ")
			case strings.HasPrefix(line, ":"):
				s.events <- [2]string{":", line}
			}
		}
	}()
	return s
}

// next returns the next event that is not a keep-alive comment; ok is
// false when the stream has ended.
func (s *sse) next() (name, data string, ok bool) {
	s.t.Helper()
	for {
		select {
		case ev, open := <-s.events:
			if !open {
				return "", "", false
			}
			if ev[0] != ":" {
				return ev[0], ev[1], true
			}
		case <-time.After(5 * time.Second):
			s.t.Fatal("no event")
		}
	}
}

func (s *sse) ended() {
	s.t.Helper()
	if name, data, ok := s.next(); ok {
		s.t.Fatalf("event %s %s after the end", name, data)
	}
}

func TestLiveEvents(t *testing.T) {
	live := newFakeLive()
	e := newEnvWith(t, func(o *console.Options) { o.Live = live })
	b := e.loggedIn(t)
	s := b.events("/api/market/live?exchange=sim&symbol=eth/usdt&interval=5m")
	if s.resp.StatusCode != 200 || s.resp.Header.Get("Content-Type") != "text/event-stream" || s.resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("live: %d %v", s.resp.StatusCode, s.resp.Header)
	}
	book, klines := live.both(t)
	want := exgate.Symbol{Base: "ETH", Quote: "USDT"}
	if book.exchange != "sim" || book.req.Symbol != want || book.req.Depth != 50 || klines.req.Symbol != want || klines.req.Interval != exgate.Interval5m {
		t.Fatalf("watches: book %+v klines %+v", book.req, klines.req)
	}
	bookMsg := `{"channel":"book","asset1":"ETH","asset2":"USDT","data":{"bids":[{"price":"3000.10","quantity":"1"}],"asks":[]},"time":1}`
	book.msgs <- []byte(bookMsg)
	if name, data, _ := s.next(); name != "book" || data != bookMsg {
		t.Fatalf("event %s %s", name, data)
	}
	klineMsg := `{"channel":"klines","asset1":"ETH","asset2":"USDT","interval":"5m","data":{"openTime":0,"closePrice":"3000.10"}}`
	klines.msgs <- []byte(klineMsg)
	if name, data, _ := s.next(); name != "kline" || data != klineMsg {
		t.Fatalf("event %s %s", name, data)
	}
	// The browser goes away: both subscriptions end.
	s.resp.Body.Close()
	for _, w := range []*fakeWatch{book, klines} {
		select {
		case <-w.done:
		case <-time.After(5 * time.Second):
			t.Fatal("a Watch outlived its page")
		}
	}
}

// A subscription the exchange refuses ends the stream with a problem
// event, and the other subscription with it.
func TestLiveProblem(t *testing.T) {
	live := newFakeLive()
	e := newEnvWith(t, func(o *console.Options) { o.Live = live })
	s := e.loggedIn(t).events("/api/market/live?symbol=NOPE/USDT")
	book, klines := live.both(t)
	klines.end <- exgate.Errorf(exgate.CodeUnknownSymbol, "NOPE/USDT is not listed on sim")
	name, data, _ := s.next()
	var p struct {
		Status int
		Code   string
		Detail string
	}
	if err := json.Unmarshal([]byte(data), &p); err != nil || name != "problem" || p.Code != "UNKNOWN_SYMBOL" || p.Status != 400 || !strings.Contains(p.Detail, "not listed") {
		t.Fatalf("event %s %s (%v)", name, data, err)
	}
	s.ended()
	<-book.done
}

// A session logged out while the page is open ends its stream at the next
// keep-alive.
func TestLiveEndsWithSession(t *testing.T) {
	live := newFakeLive()
	e := newEnvWith(t, func(o *console.Options) { o.Live = live; o.LiveKeepAlive = 10 * time.Millisecond })
	b := e.loggedIn(t)
	s := b.events("/api/market/live")
	book, _ := live.both(t)
	if code, _, _ := b.post("/logout", url.Values{"csrf": {b.csrf}}, nil); code != http.StatusSeeOther {
		t.Fatalf("logout = %d", code)
	}
	s.ended()
	<-book.done
}

func TestLiveRefusals(t *testing.T) {
	live := newFakeLive()
	withLive := newEnvWith(t, func(o *console.Options) { o.Live = live })
	polling := newEnv(t)
	for _, tc := range []struct {
		name string
		e    *env
		path string
		code int
		has  string
	}{
		{"bad pair", withLive, "/api/market/live?symbol=BTCUSDT", 400, "INVALID_PARAMETER"},
		{"exchange not enabled", withLive, "/api/market/live?exchange=binance", 400, "not enabled"},
		{"bad interval", withLive, "/api/market/live?interval=7m", 400, "INVALID_PARAMETER"},
		{"no live feed", polling, "/api/market/live", 501, "NOT_IMPLEMENTED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, hd, body := tc.e.loggedIn(t).get(tc.path)
			if code != tc.code || hd.Get("Content-Type") != "application/problem+json" || !strings.Contains(body, tc.has) {
				t.Fatalf("GET %s = %d %s %s", tc.path, code, hd.Get("Content-Type"), body)
			}
		})
	}
	code, _, _ := withLive.browser(t).get("/api/market/live")
	if code != http.StatusUnauthorized {
		t.Fatalf("without a session = %d, want 401", code)
	}
	select {
	case w := <-live.watches:
		t.Fatalf("a refused request subscribed: %+v", w.req)
	default:
	}
}

// With the real stream hub over sim, the page's stream carries the
// simulated exchange's book, and the hub counts the page as in-process
// watchers.
func TestLiveThroughHub(t *testing.T) {
	var hub *stream.Hub
	var once sync.Once
	e := newEnvWith(t, func(o *console.Options) {
		once.Do(func() { hub = stream.New(stream.Options{Exchanges: o.Exchanges}) })
		o.Live = hub
	})
	s := e.loggedIn(t).events("/api/market/live?symbol=BTC/USDT")
	seen := map[string]bool{}
	for !seen["book"] {
		name, data, ok := s.next()
		if !ok {
			t.Fatal("the stream ended")
		}
		if name == "problem" {
			t.Fatalf("problem: %s", data)
		}
		seen[name] = true
		if name == "book" && !strings.Contains(data, `"bids":[{"price":"`) {
			t.Fatalf("book event %s", data)
		}
	}
	if st := hub.Stats(); st.Watchers < 1 || st.Connections != 0 {
		t.Fatalf("hub stats %+v, want the page's watchers", st)
	}
}

// The events outlive the server's read and write timeouts (serve sets
// both on the console's server): each write has a deadline of its own.
func TestLiveOutlivesServerTimeouts(t *testing.T) {
	live := newFakeLive()
	e := newEnvWith(t, func(o *console.Options) { o.Live = live })
	e.srv.Close()
	e.srv = httptest.NewUnstartedServer(e.srv.Config.Handler)
	e.srv.Config.ReadTimeout, e.srv.Config.WriteTimeout = 50*time.Millisecond, 50*time.Millisecond
	e.srv.Start()
	t.Cleanup(e.srv.Close)
	s := e.loggedIn(t).events("/api/market/live")
	book, _ := live.both(t)
	time.Sleep(200 * time.Millisecond) // past both timeouts: the server's own clocks, no fake to move
	msg := `{"channel":"book","asset1":"BTC","asset2":"USDT","data":{"bids":[],"asks":[]},"time":2}`
	book.msgs <- []byte(msg)
	if name, data, ok := s.next(); !ok || name != "book" || data != msg {
		t.Fatalf("after the server's timeouts: %q %q %v", name, data, ok)
	}
}
