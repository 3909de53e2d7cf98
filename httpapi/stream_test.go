package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/stream"
)

// tickSource stands in for the sim streams' tickers: tick hands one tick
// to every live stream.
type tickSource struct {
	mu    sync.Mutex
	chans map[chan time.Time]struct{}
}

func (s *tickSource) new(time.Duration) (<-chan time.Time, func()) {
	ch := make(chan time.Time)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.chans == nil {
		s.chans = map[chan time.Time]struct{}{}
	}
	s.chans[ch] = struct{}{}
	return ch, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.chans, ch)
	}
}

// tick returns once every stream has taken the tick.
func (s *tickSource) tick(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	chans := make([]chan time.Time, 0, len(s.chans))
	for ch := range s.chans {
		chans = append(chans, ch)
	}
	s.mu.Unlock()
	if len(chans) == 0 {
		t.Fatal("no stream to tick")
	}
	for _, ch := range chans {
		select {
		case ch <- time.Now():
		case <-time.After(5 * time.Second):
			t.Fatal("a stream did not take its tick")
		}
	}
}

// streamQuery is a signed handshake query: a timestamp and extra.
func (g *gateway) streamQuery(extra string) string {
	q := "timestamp=" + strconv.FormatInt(g.timestamp(), 10)
	if extra != "" {
		q = extra + "&" + q
	}
	return q + "&signature=" + sign(g.secret, q)
}

// client is a WebSocket client of /v1/stream.
type client struct {
	t  *testing.T
	ws *websocket.Conn
}

func (g *gateway) dial(query string, header http.Header) (*client, *http.Response, error) {
	ctx, cancel := context.WithTimeout(g.t.Context(), 5*time.Second)
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(g.srv.URL, "http")+"/v1/stream?"+query, &websocket.DialOptions{HTTPHeader: header})
	if err != nil {
		return nil, resp, err
	}
	g.t.Cleanup(func() { _ = ws.CloseNow() })
	return &client{t: g.t, ws: ws}, resp, nil
}

func (g *gateway) connect() *client {
	g.t.Helper()
	c, resp, err := g.dial(g.streamQuery(""), http.Header{"X-API-KEY": {g.apiKey}, "X-API-EXCHANGE-KEY": {"demo"}})
	if err != nil {
		g.t.Fatalf("dial: %v (%v)", err, resp)
	}
	return c
}

func (c *client) send(frame string) {
	c.t.Helper()
	if err := c.ws.Write(c.t.Context(), websocket.MessageText, []byte(frame)); err != nil {
		c.t.Fatal(err)
	}
}

func (c *client) next() map[string]any {
	c.t.Helper()
	m, err := c.read(5 * time.Second)
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return m
}

func (c *client) read(d time.Duration) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(c.t.Context(), d)
	defer cancel()
	_, b, err := c.ws.Read(ctx)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		c.t.Fatalf("frame %s: %v", b, err)
	}
	return m, nil
}

// none checks that no message comes for a moment. A read timing out
// closes a coder/websocket connection, so it is the last check on c.
func (c *client) none() {
	c.t.Helper()
	if m, err := c.read(100 * time.Millisecond); err == nil {
		c.t.Fatalf("unexpected message %v", m)
	}
}

func (c *client) expect(op, code string) map[string]any {
	c.t.Helper()
	m := c.next()
	if m["op"] != op || (code != "" && m["code"] != code) {
		c.t.Fatalf("got %v, want op %s code %s", m, op, code)
	}
	return m
}

func TestStreamHandshakeRefusedBeforeUpgrade(t *testing.T) {
	g := newGateway(t, options{streams: &stream.Options{}})
	ts := func() string { return "timestamp=" + strconv.FormatInt(g.timestamp(), 10) }
	old := "timestamp=" + strconv.FormatInt(g.clock.Now().Add(-time.Minute).UnixMilli(), 10)

	// A handshake accepted once cannot be used again.
	replayed := g.streamQuery("")
	c, resp, err := g.dial(replayed, http.Header{"X-API-KEY": {g.apiKey}, "X-API-EXCHANGE-KEY": {"demo"}})
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("first handshake: %v %v", err, resp)
	}
	c.ws.CloseNow()
	q, sig, _ := strings.Cut(replayed, "&signature=")

	for _, tc := range []struct {
		name   string
		req    request
		status int
		code   string
	}{
		{"unsigned", request{query: ts(), noSig: true}, 401, "MISSING_SIGNATURE"},
		{"no timestamp", request{}, 401, "MISSING_TIMESTAMP"},
		{"bad signature", request{query: ts(), secret: "wrong"}, 401, "INVALID_SIGNATURE"},
		{"expired", request{query: old}, 401, "TIMESTAMP_OUTSIDE_WINDOW"},
		{"replayed", request{query: q, signature: sig}, 401, "REPLAYED_REQUEST"},
		{"no key", request{query: ts(), apiKey: str("")}, 401, "MISSING_API_KEY"},
		{"unknown key parameter", request{query: "apiKey=nobody&" + ts(), apiKey: str("")}, 401, "INVALID_API_KEY"},
		{"extra parameter", request{query: "asset1=BTC&" + ts()}, 400, "INVALID_PARAMETER"},
		{"key twice", request{query: "apiKey=" + g.apiKey + "&" + ts()}, 400, "INVALID_PARAMETER"},
		{"no exchange key", request{query: ts(), exchangeKey: str("")}, 400, "MISSING_EXCHANGE_KEY"},
		{"unknown exchange key", request{query: "exchangeKey=nope&" + ts(), exchangeKey: str("")}, 404, "UNKNOWN_EXCHANGE_KEY"},
		{"POST", request{method: "POST", path: "/v1/stream"}, 405, "METHOD_NOT_ALLOWED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.path = "/v1/stream"
			r := g.do(tc.req)
			if r.status != tc.status || r.problem(t)["code"] != tc.code {
				t.Fatalf("status %d %s, want %d %s", r.status, r.body, tc.status, tc.code)
			}
		})
	}
	// The handshake's MISSING_TIMESTAMP says why this request needs one,
	// also where GETs may go without (issue 25: it said "on every
	// request").
	lax := newGateway(t, options{streams: &stream.Options{}})
	if r := lax.do(request{path: "/v1/stream"}); r.status != 401 ||
		!strings.Contains(r.problem(t)["detail"].(string), "stream handshake") || strings.Contains(string(r.body), "every") {
		t.Errorf("handshake without a timestamp where GETs need none: %d %s, want MISSING_TIMESTAMP about the handshake", r.status, r.body)
	}

	// The same refusals reach a WebSocket client as the HTTP answer.
	_, resp, err = g.dial(replayed, http.Header{"X-API-KEY": {g.apiKey}, "X-API-EXCHANGE-KEY": {"demo"}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("replayed WebSocket handshake: %v %v", err, resp)
	}

	// Without a hub the route is not implemented.
	plain := newGateway(t, options{})
	if r := plain.do(request{path: "/v1/stream", query: ts()}); r.status != 501 {
		t.Fatalf("without streams: %d %s", r.status, r.body)
	}
}

func TestStreamKeysAsQueryParameters(t *testing.T) {
	g := newGateway(t, options{streams: &stream.Options{}})
	q := g.streamQuery("apiKey=" + url.QueryEscape(g.apiKey) + "&exchangeKey=demo")
	c, resp, err := g.dial(q, nil)
	if err != nil {
		t.Fatalf("dial: %v %v", err, resp)
	}
	c.send(`{"op":"subscribe","channel":"orders"}`)
	c.expect("subscribed", "")
}

func TestStreamBadInputKeepsConnection(t *testing.T) {
	g := newGateway(t, options{streams: &stream.Options{MaxSubscriptions: 2}})
	c := g.connect()
	for _, tc := range []struct{ frame, code, detail string }{
		{`{"op":"subscribe","channel":"trades"}`, "INVALID_PARAMETER", "unknown channel"},
		{`{"op":"subscribe","channel":"book","asset1":"FOO","asset2":"USDT"}`, "UNKNOWN_SYMBOL", "FOO/USDT"},
		{`{"op":"subscribe","channel":"klines","asset1":"USDT","asset2":"BTC"}`, "UNKNOWN_SYMBOL", "BTC/USDT"},
		{`{"op":"subscribe","channel":"book","asset1":"BTC","asset2":"USDT","depth":101}`, "INVALID_PARAMETER", "depth"},
		{`{"op":"subscribe","channel":"book","asset1":"BTC","asset2":"USDT","depth":0}`, "INVALID_PARAMETER", "depth"},
		{`{"op":"subscribe","channel":"klines","asset1":"BTC","asset2":"USDT","interval":"7m"}`, "INVALID_PARAMETER", "interval"},
		{`not json`, "INVALID_PARAMETER", "JSON"},
		{`{"op":"subscribe","channel":"orders"`, "INVALID_PARAMETER", "JSON"},
		{`{"op":"ping"}`, "INVALID_PARAMETER", "op"},
	} {
		c.send(tc.frame)
		if m := c.expect("error", tc.code); !strings.Contains(m["detail"].(string), tc.detail) {
			t.Errorf("%s: detail %q lacks %q", tc.frame, m["detail"], tc.detail)
		}
	}
	c.send(`{"op":"subscribe","channel":"orders"}`)
	c.expect("subscribed", "")
	c.send(`{"op":"subscribe","channel":"book","asset1":"BTC","asset2":"USDT","depth":1}`)
	c.expect("subscribed", "")
	if m := c.next(); m["channel"] != "book" || len(m["data"].(map[string]any)["bids"].([]any)) != 1 {
		t.Fatalf("book %v", m)
	}
	c.send(`{"op":"subscribe","channel":"klines","asset1":"BTC","asset2":"USDT"}`)
	c.expect("error", "RATE_LIMITED")
	// Still usable after all of it.
	c.send(`{"op":"unsubscribe","channel":"book","asset1":"BTC","asset2":"USDT"}`)
	c.expect("unsubscribed", "")
	c.send(`{"op":"subscribe","channel":"klines","asset1":"BTC","asset2":"USDT"}`)
	c.expect("subscribed", "")
	if m := c.next(); m["channel"] != "klines" {
		t.Fatalf("klines %v", m)
	}
}

// TestStreamOrdersOnSim: an order placed and canceled through the API is
// seen on the stream, PENDING then CANCELED, with the ids the client
// knows; an order canceled behind the journal's back reaches the journal
// through the stream.
func TestStreamOrdersOnSim(t *testing.T) {
	var simEx exgate.Exchange
	g := newGateway(t, options{streams: &stream.Options{}, wrap: func(ex exgate.Exchange) exgate.Exchange { simEx = ex; return ex }})
	c := g.connect()
	c.send(`{"op":"subscribe","channel":"orders"}`)
	c.expect("subscribed", "")

	bid, _ := g.bestBidAsk(t)
	away := bid.Mul(decimal.RequireFromString("0.95")).Round(2).String()
	placed := decodeAs[exgate.Order](t, g.post("/v1/order/limit", limitBody("BUY", "0.1", away, `"clientOrderId":"s-1"`)))
	m := c.next()
	data := m["data"].(map[string]any)
	if m["channel"] != "orders" || data["id"] != placed.ID || data["clientOrderId"] != "s-1" || data["status"] != "PENDING" {
		t.Fatalf("placed on the stream: %v", m)
	}
	decodeAs[exgate.Order](t, g.post("/v1/order/cancel", `"clientOrderId":"s-1"`))
	if data := c.next()["data"].(map[string]any); data["id"] != placed.ID || data["status"] != "CANCELED" {
		t.Fatalf("canceled on the stream: %v", data)
	}

	// A second order, canceled on the exchange directly: the journal
	// learns of it from the stream, without a read of the exchange.
	second := decodeAs[exgate.Order](t, g.post("/v1/order/limit", limitBody("BUY", "0.1", away, `"clientOrderId":"s-2"`)))
	c.next()
	// The outcome is committed just after the answer (docs/orders.md):
	// wait for it.
	it := waitIntent(t, g, second.ID, func(it exgate.Intent) bool { return it.State != exgate.IntentSubmitting })
	if it.State != exgate.IntentAccepted {
		t.Fatalf("intent before: %+v", it)
	}
	om, _ := exgate.Ability[exgate.OrderManager](simEx)
	if _, err := om.CancelOrder(t.Context(), mustCred(t, g), exgate.CancelRequest{ClientOrderID: second.ID}); err != nil {
		t.Fatal(err)
	}
	if data := c.next()["data"].(map[string]any); data["id"] != second.ID || data["clientOrderId"] != "s-2" || data["status"] != "CANCELED" {
		t.Fatalf("canceled elsewhere, on the stream: %v", data)
	}
	it = waitIntent(t, g, second.ID, func(it exgate.Intent) bool { return it.State == exgate.IntentFinal })
	if !strings.Contains(string(it.Response), `"CANCELED"`) {
		t.Fatalf("intent after the stream: %+v", it)
	}
	// The per-second scan finds nothing new: no message.
	g.ticks.tick(t)
	c.none()
}

// waitIntent reads the intent id until done holds (the journal commits
// an outcome after the answer), for at most 10 s.
func waitIntent(t *testing.T, g *gateway, id string, done func(exgate.Intent) bool) exgate.Intent {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		it, err := g.store.Intent(t.Context(), id)
		if err == nil && done(it) {
			return it
		}
		if time.Now().After(deadline) {
			t.Fatalf("intent %s never got there: %+v %v", id, it, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func mustCred(t *testing.T, g *gateway) exgate.Credential {
	t.Helper()
	cred, err := g.store.Credential(t.Context(), g.apiKey, "demo")
	if err != nil {
		t.Fatal(err)
	}
	return cred
}

// TestStreamKlinesOnSim: one message per change of the current kline,
// one for the kline that closes, then the next one.
func TestStreamKlinesOnSim(t *testing.T) {
	g := newGateway(t, options{streams: &stream.Options{}})
	g.clock.Add(50 * time.Second) // 12:00:50
	c := g.connect()
	c.send(`{"op":"subscribe","channel":"klines","asset1":"ETH","asset2":"USDT"}`)
	c.expect("subscribed", "")
	same := func(a, b exgate.Kline) bool { return jsonOf(t, a) == jsonOf(t, b) }
	current := func() exgate.Kline {
		ks := decodeAs[[]exgate.Kline](t, g.do(request{path: "/v1/market/recent-klines", query: "asset1=ETH&asset2=USDT&limit=1"}))
		return ks[0]
	}
	kline := func(m map[string]any) exgate.Kline {
		b, _ := json.Marshal(m["data"])
		var k exgate.Kline
		if err := json.Unmarshal(b, &k); err != nil {
			t.Fatal(err)
		}
		return k
	}
	first := c.next()
	if k := kline(first); !same(k, current()) || first["closed"] != nil || first["interval"] != "1m" {
		t.Fatalf("first %v, want %+v", first, current())
	}
	last, changes := current(), 0
	for range 9 { // to 12:00:59
		g.clock.Add(time.Second)
		g.ticks.tick(t)
		now := current()
		if same(now, last) {
			continue
		}
		changes++
		if got := kline(c.next()); !same(got, now) {
			t.Fatalf("at %s: %+v, want %+v", g.clock.Now(), got, now)
		}
		last = now
	}
	if changes == 0 {
		t.Fatal("the sim's kline never changed in 9 s")
	}
	g.clock.Add(time.Second) // 12:01:00: the 12:00 kline closes
	g.ticks.tick(t)
	closed := c.next()
	k := kline(closed)
	if closed["closed"] != true || k.OpenTime != last.OpenTime || k.CloseTime != last.OpenTime+59_999 {
		t.Fatalf("closing message %v", closed)
	}
	if next := kline(c.next()); !same(next, current()) || next.OpenTime != last.OpenTime+60_000 {
		t.Fatalf("next kline %+v, want %+v", next, current())
	}
	c.none()
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
