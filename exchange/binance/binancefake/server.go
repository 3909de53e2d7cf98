// Package binancefake is an in-process fake of Binance Spot's REST API for
// tests and load runs: the /api/v3 market data, account and order
// endpoints, the /sapi/v1/capital wallet endpoints and the /sapi/v1/asset
// transfer endpoints (transfer.go) the exgate adapter uses, answering with Binance's payload shapes and error codes.
//
// It checks requests as Binance does: the X-MBX-APIKEY header, the
// HMAC-SHA256 signature over the query string and body, the timestamp
// against recvWindow, parameter names, mandatory parameters and values,
// symbol filters and balances. Market orders fill against a static,
// deterministic order book (levels are not consumed) and move balances;
// limit orders fill on the levels their price crosses and rest otherwise,
// holding their funds, until canceled or filled with FillOrder (limit.go);
// klines are a pure function of symbol, interval and time (unless
// TickCurrentKline makes the current one change on every call). Static answers
// (exchangeInfo, depth, klines of the current interval, account) are
// encoded once and served from memory.
//
// A fault hook (SetFault) delays requests, answers them with a given
// status and body, or drops the connection before or after processing,
// for the order-safety tests.
package binancefake

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/exgate/exgate/exchange/internal/fakehttp"
	"github.com/exgate/exgate/exchange/internal/fakews"
)

// Options configure a Server. Every field is optional.
type Options struct {
	// Now is the server's clock; default time.Now. SetClockOffset skews
	// it further.
	Now func() time.Time
	// WeightLimit is the REQUEST_WEIGHT per minute of /api calls (per IP,
	// so per Server), published in exchangeInfo and enforced with 429
	// -1003; default 6000, negative for no limit.
	WeightLimit int
}

// Account is an API key of the fake with its balances.
type Account struct {
	APIKey string
	Secret string
	// Balances are the free amounts per asset, as decimal strings.
	Balances map[string]string
	// NoTrade and NoWithdraw take the key's trade or withdraw permission
	// away (answered with 401 -2015, as Binance does).
	NoTrade    bool
	NoWithdraw bool
	// PendingWithdrawals leaves new withdrawals processing (status 4)
	// instead of completing them at once.
	PendingWithdrawals bool
	// Funding are the free amounts of the funding wallet per asset
	// (transfer.go); empty by default.
	Funding map[string]string
	// NoTransfer takes the key's universal transfer permission away.
	NoTransfer bool
}

// Fault is what the fault hook does with one request (fakehttp.Fault).
type Fault = fakehttp.Fault

// Server is a running fake. Its exported methods are safe for concurrent
// use with the requests it serves.
type Server struct {
	// URL is the base URL to give the adapter (no trailing slash).
	URL string

	srv         *httptest.Server
	now         func() time.Time
	offsetMS    atomic.Int64
	weightLimit int
	routes      map[string]*route

	markets      map[string]*market
	exchangeInfo []byte
	coinConfig   []byte
	depthCache   sync.Map // depthKey -> []byte
	klineMu      sync.Mutex
	klineCache   map[klineKey][]byte
	// tick makes the current kline change on every call (TickCurrentKline);
	// ticks counts those calls.
	tick  atomic.Bool
	ticks atomic.Int64

	faults fakehttp.Faults
	// transferCalls counts the universal transfers asked for
	// (transfer.go).
	transferCalls atomic.Int64

	mu          sync.Mutex
	accounts    map[string]*account
	lastParams  map[string]url.Values
	weightMin   int64
	weightUsed  int
	sapiMin     int64
	sapiUsed    map[string]int
	nextOrderID int64
	nextTradeID int64
	nextID      int64
	cancels     map[string]int // client order id -> orders canceled
	// transferCallsOf counts the transfers asked for by "asset amount"
	// (transfer.go).
	transferCallsOf map[string]int

	// The WebSocket side (stream.go); subs and the stream state are
	// guarded by mu.
	ws          *fakews.Server
	subs        map[*sub]struct{}
	nextSubID   int64
	bookChanges int64
	klinesLive  map[klineLiveKey]*klineLive
}

// New starts a fake on a loopback port. Close it when done.
func New(opts Options) *Server {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.WeightLimit == 0 {
		opts.WeightLimit = 6000
	}
	s := &Server{
		now:             opts.Now,
		weightLimit:     opts.WeightLimit,
		accounts:        map[string]*account{},
		lastParams:      map[string]url.Values{},
		sapiUsed:        map[string]int{},
		klineCache:      map[klineKey][]byte{},
		nextOrderID:     1000,
		nextTradeID:     5000,
		subs:            map[*sub]struct{}{},
		transferCallsOf: map[string]int{},
		klinesLive:      map[klineLiveKey]*klineLive{},
	}
	s.ws = fakews.New(s.handleWS)
	s.markets = newMarkets()
	s.exchangeInfo = s.encodeExchangeInfo()
	s.coinConfig = encodeCoinConfig()
	s.routes = s.newRoutes()
	s.srv = httptest.NewServer(s.faults.Track(http.HandlerFunc(s.serve)))
	s.URL = s.srv.URL
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Client returns an HTTP client for the server.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// SetFault installs the fault hook (nil removes it).
func (s *Server) SetFault(f func(r *http.Request) Fault) {
	s.faults.SetHook(f)
}

// TickCurrentKline makes the current interval's kline change on every
// klines call, as a live market's does: each call adds one trade and a
// thousandth of the base asset to its trade count and volume. Off, klines
// are a pure function of symbol, interval and time.
func (s *Server) TickCurrentKline(on bool) { s.tick.Store(on) }

// SetClockOffset makes the server's clock run d ahead of Options.Now
// (negative: behind), to provoke -1021 answers.
func (s *Server) SetClockOffset(d time.Duration) { s.offsetMS.Store(d.Milliseconds()) }

// serverTime is the server's clock.
func (s *Server) serverTime() time.Time {
	return s.now().Add(time.Duration(s.offsetMS.Load()) * time.Millisecond)
}

// Requests returns how many requests reached path (any method), faults
// included.
func (s *Server) Requests(path string) int {
	return s.faults.Requests(path)
}

// Busy returns how many requests the fake is handling now, a WebSocket
// connection while it is open: a request its client gave up on may still
// be held by a fault's Delay, to be processed after.
func (s *Server) Busy() int { return s.faults.Busy() }

// LastParams returns the parameters (query and body, signature included)
// of the last request to method and path that passed authentication, or
// nil.
func (s *Server) LastParams(method, path string) url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.lastParams[method+" "+path]
	if v == nil {
		return nil
	}
	out := make(url.Values, len(v))
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// ResetCounters forgets request counts and recorded parameters.
func (s *Server) ResetCounters() {
	s.faults.ResetCounters()
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.lastParams)
}

// route is one endpoint of the fake.
type route struct {
	method string
	path   string
	signed bool
	// sapi is "" for /api endpoints, "ip" or "uid" for /sapi ones.
	sapi     string
	weight   func(url.Values) int
	allowed  []string
	required []string
	handle   func(*call) response
}

// call is one authenticated request being handled.
type call struct {
	r       *http.Request
	params  url.Values
	account *account // nil on public endpoints
	now     time.Time
}

func (c *call) get(name string) string { return c.params.Get(name) }

// response is a status and an encoded body.
type response struct {
	status int
	body   []byte
	// tail, when set, is written after body: an answer made of a cached
	// part and a part made for this call.
	tail   []byte
	header map[string]string
}

func ok(body []byte) response { return response{status: http.StatusOK, body: body} }

// apiErr is Binance's error answer {"code":...,"msg":...}.
func apiErr(status, code int, msg string) response {
	b := make([]byte, 0, len(msg)+32)
	b = append(b, `{"code":`...)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, `,"msg":`...)
	b = strconv.AppendQuote(b, msg)
	b = append(b, '}')
	return response{status: status, body: b}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if isWebSocket(r.URL.Path) {
		s.faults.Count(r)
		s.serveWebSocket(w, r)
		return
	}
	f, done := s.faults.Before(w, r, "application/json;charset=UTF-8")
	if done {
		return
	}
	resp := s.handle(r)
	if f.DropAfter {
		fakehttp.Drop(w)
		return
	}
	h := w.Header()
	for k, v := range resp.header {
		h.Set(k, v)
	}
	h.Set("Content-Type", "application/json;charset=UTF-8")
	h.Set("Content-Length", strconv.Itoa(len(resp.body)+len(resp.tail)))
	w.WriteHeader(resp.status)
	_, _ = w.Write(resp.body)
	if len(resp.tail) > 0 {
		_, _ = w.Write(resp.tail)
	}
}

// handle routes, meters, authenticates and checks one request.
func (s *Server) handle(r *http.Request) response {
	rt := s.routes[r.Method+" "+r.URL.Path]
	if rt == nil {
		for _, other := range s.routes {
			if other.path == r.URL.Path {
				return response{status: http.StatusMethodNotAllowed, body: []byte(`{"code":-1000,"msg":"Method not allowed."}`)}
			}
		}
		return response{status: http.StatusNotFound, body: []byte("<html><body><h2>404 Not found</h2></body></html>")}
	}
	rawQuery := r.URL.RawQuery
	var rawBody string
	if r.Method != http.MethodGet && r.Body != nil {
		b, err := io.ReadAll(io.LimitReader(r.Body, 1<<16))
		if err != nil {
			return apiErr(http.StatusBadRequest, -1000, "An unknown error occurred while processing the request.")
		}
		rawBody = string(b)
	}
	params, perr := parseParams(rawQuery, rawBody)
	if perr != nil {
		return apiErr(http.StatusBadRequest, -1100, "Illegal characters found in a parameter.")
	}
	now := s.serverTime()
	weight := 1
	if rt.weight != nil {
		weight = rt.weight(params)
	}
	meter := s.meter(rt, r.Header.Get("X-MBX-APIKEY"), weight, now)
	if meter.status != 0 {
		return meter
	}
	resp := s.check(rt, r, params, rawQuery, rawBody, now)
	if resp.header == nil {
		resp.header = meter.header
	} else {
		for k, v := range meter.header {
			resp.header[k] = v
		}
	}
	return resp
}

// check authenticates the request, checks its parameters and runs the
// handler.
func (s *Server) check(rt *route, r *http.Request, params url.Values, rawQuery, rawBody string, now time.Time) response {
	c := &call{r: r, params: params, now: now}
	if rt.signed {
		key := r.Header.Get("X-MBX-APIKEY")
		if key == "" || strings.ContainsAny(key, " \t") {
			return apiErr(http.StatusUnauthorized, -2014, "API-key format invalid.")
		}
		s.mu.Lock()
		c.account = s.accounts[key]
		s.mu.Unlock()
		if c.account == nil {
			return apiErr(http.StatusUnauthorized, -2015, "Invalid API-key, IP, or permissions for action.")
		}
	}
	allowed := rt.allowed
	if rt.signed {
		allowed = append(allowed[:len(allowed):len(allowed)], "recvWindow", "timestamp", "signature")
	}
	read := 0
	for name := range params {
		if !contains(allowed, name) {
			continue
		}
		read++
	}
	if read != len(params) {
		return apiErr(http.StatusBadRequest, -1104, "Not all sent parameters were read; read '"+strconv.Itoa(read)+"' parameter(s) but was sent '"+strconv.Itoa(len(params))+"'.")
	}
	required := rt.required
	if rt.signed {
		required = append(required[:len(required):len(required)], "timestamp", "signature")
	}
	for _, name := range required {
		if params.Get(name) == "" {
			return apiErr(http.StatusBadRequest, -1102, "Mandatory parameter '"+name+"' was not sent, was empty/null, or malformed.")
		}
	}
	if rt.signed {
		if resp, bad := s.checkSignature(c.account, params, rawQuery, rawBody, now); bad {
			return resp
		}
	}
	s.mu.Lock()
	s.lastParams[rt.method+" "+rt.path] = params
	s.mu.Unlock()
	return rt.handle(c)
}

// checkSignature verifies the timestamp window and the HMAC over the raw
// query string concatenated with the raw body, the signature pair removed
// (rest-api.md, "SIGNED Endpoint security" and "Timing security").
func (s *Server) checkSignature(a *account, params url.Values, rawQuery, rawBody string, now time.Time) (response, bool) {
	if resp, bad := checkWindow(params, now); bad {
		return resp, true
	}
	sig := strings.ToLower(params.Get("signature"))
	mac := hmac.New(sha256.New, []byte(a.secret))
	mac.Write([]byte(withoutSignature(rawQuery)))
	mac.Write([]byte(withoutSignature(rawBody)))
	want := hex.EncodeToString(mac.Sum(nil))
	if !hmac.Equal([]byte(sig), []byte(want)) {
		return apiErr(http.StatusBadRequest, -1022, "Signature for this request is not valid."), true
	}
	return response{}, false
}

// checkWindow checks recvWindow and the timestamp against the server's
// clock (rest-api.md, "Timing security"; the WebSocket API's is the
// same).
func checkWindow(params url.Values, now time.Time) (response, bool) {
	recvWindow := int64(5000)
	if v := params.Get("recvWindow"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 {
			return apiErr(http.StatusBadRequest, -1100, "Illegal characters found in parameter 'recvWindow'; legal range is '^[0-9]{1,20}(\\.[0-9]{1,3})?$'."), true
		}
		if f > 60000 {
			return apiErr(http.StatusBadRequest, -1131, "recvWindow must be less than 60000"), true
		}
		recvWindow = int64(f)
	}
	ts, err := strconv.ParseInt(params.Get("timestamp"), 10, 64)
	if err != nil {
		return apiErr(http.StatusBadRequest, -1100, "Illegal characters found in parameter 'timestamp'; legal range is '^[0-9]{1,20}$'."), true
	}
	if ts > 1e14 { // microseconds
		ts /= 1000
	}
	server := now.UnixMilli()
	if ts >= server+1000 {
		return apiErr(http.StatusBadRequest, -1021, "Timestamp for this request was 1000ms ahead of the server's time."), true
	}
	if server-ts > recvWindow {
		return apiErr(http.StatusBadRequest, -1021, "Timestamp for this request is outside of the recvWindow."), true
	}
	return response{}, false
}

// withoutSignature removes the signature=... pair from a raw parameter
// string.
func withoutSignature(raw string) string {
	if !strings.Contains(raw, "signature=") {
		return raw
	}
	parts := strings.Split(raw, "&")
	out := parts[:0]
	for _, p := range parts {
		if !strings.HasPrefix(p, "signature=") {
			out = append(out, p)
		}
	}
	return strings.Join(out, "&")
}

// parseParams merges query and body parameters; the query string wins
// when a name is in both (rest-api.md, "General information on endpoints").
func parseParams(rawQuery, rawBody string) (url.Values, error) {
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return nil, err
	}
	if rawBody == "" {
		return q, nil
	}
	b, err := url.ParseQuery(rawBody)
	if err != nil {
		return nil, err
	}
	for k, v := range b {
		if _, ok := q[k]; !ok {
			q[k] = v
		}
	}
	return q, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// meter counts the request's weight and answers 429 -1003 once the
// minute's REQUEST_WEIGHT is spent. The usage headers are set on every
// answer.
func (s *Server) meter(rt *route, apiKey string, weight int, now time.Time) response {
	minute := now.Unix() / 60
	retry := strconv.FormatInt(60-now.Unix()%60, 10)
	s.mu.Lock()
	defer s.mu.Unlock()
	if rt.sapi != "" {
		if s.sapiMin != minute {
			s.sapiMin = minute
			clear(s.sapiUsed)
		}
		key := "ip"
		header := "X-SAPI-USED-IP-WEIGHT-1M"
		if rt.sapi == "uid" {
			key, header = "uid:"+apiKey, "X-SAPI-USED-UID-WEIGHT-1M"
		}
		s.sapiUsed[key] += weight
		return response{header: map[string]string{header: strconv.Itoa(s.sapiUsed[key])}}
	}
	if s.weightMin != minute {
		s.weightMin, s.weightUsed = minute, 0
	}
	s.weightUsed += weight
	h := map[string]string{"X-MBX-USED-WEIGHT-1M": strconv.Itoa(s.weightUsed)}
	if s.weightLimit > 0 && s.weightUsed > s.weightLimit {
		h["Retry-After"] = retry
		resp := apiErr(http.StatusTooManyRequests, -1003, "Too much request weight used; current limit is "+strconv.Itoa(s.weightLimit)+" request weight per 1 MINUTE. Please use WebSocket Streams for live updates to avoid polling the API.")
		resp.header = h
		return resp
	}
	return response{header: h}
}

// newRoutes lists the endpoints with their weights and parameters.
// Source: binance-spot-api-docs rest-api.md and developers.binance.com
// wallet/capital pages.
func (s *Server) newRoutes() map[string]*route {
	one := func(url.Values) int { return 1 }
	fixed := func(n int) func(url.Values) int { return func(url.Values) int { return n } }
	routes := []*route{
		{method: http.MethodGet, path: "/api/v3/ping", weight: one, handle: func(*call) response { return ok([]byte("{}")) }},
		{method: http.MethodGet, path: "/api/v3/time", weight: one, handle: s.handleTime},
		{method: http.MethodGet, path: "/api/v3/exchangeInfo", weight: fixed(20),
			allowed: []string{"symbol", "symbols", "permissions", "showPermissionSets", "symbolStatus"}, handle: s.handleExchangeInfo},
		{method: http.MethodGet, path: "/api/v3/klines", weight: fixed(2),
			allowed: []string{"symbol", "interval", "startTime", "endTime", "timeZone", "limit"}, required: []string{"symbol", "interval"}, handle: s.handleKlines},
		{method: http.MethodGet, path: "/api/v3/depth", weight: depthWeight,
			allowed: []string{"symbol", "limit", "symbolStatus"}, required: []string{"symbol"}, handle: s.handleDepth},
		{method: http.MethodGet, path: "/api/v3/account", signed: true, weight: fixed(20),
			allowed: []string{"omitZeroBalances"}, handle: s.handleAccount},
		{method: http.MethodPost, path: "/api/v3/order", signed: true, weight: one,
			allowed: []string{"symbol", "side", "type", "timeInForce", "quantity", "quoteOrderQty", "price", "newClientOrderId",
				"strategyId", "strategyType", "stopPrice", "trailingDelta", "icebergQty", "newOrderRespType", "selfTradePreventionMode",
				"pegPriceType", "pegOffsetValue", "pegOffsetType"},
			required: []string{"symbol", "side", "type"}, handle: s.handleNewOrder},
		{method: http.MethodGet, path: "/api/v3/order", signed: true, weight: fixed(4),
			allowed: []string{"symbol", "orderId", "origClientOrderId"}, required: []string{"symbol"}, handle: s.handleQueryOrder},
		{method: http.MethodGet, path: "/api/v3/myTrades", signed: true, weight: func(p url.Values) int {
			if p.Get("orderId") != "" {
				return 5
			}
			return 20
		}, allowed: []string{"symbol", "orderId", "startTime", "endTime", "fromId", "limit"}, required: []string{"symbol"}, handle: s.handleMyTrades},
		{method: http.MethodGet, path: "/sapi/v1/account/apiRestrictions", signed: true, sapi: "ip", weight: one, handle: s.handleAPIRestrictions},
		{method: http.MethodGet, path: "/sapi/v1/capital/config/getall", signed: true, sapi: "ip", weight: fixed(10), handle: s.handleCoinConfig},
		{method: http.MethodGet, path: "/sapi/v1/capital/deposit/hisrec", signed: true, sapi: "ip", weight: one,
			allowed: []string{"includeSource", "coin", "status", "startTime", "endTime", "offset", "limit", "txId"}, handle: s.handleDepositHistory},
		{method: http.MethodGet, path: "/sapi/v1/capital/deposit/address", signed: true, sapi: "ip", weight: fixed(10),
			allowed: []string{"coin", "network", "amount"}, required: []string{"coin"}, handle: s.handleDepositAddress},
		{method: http.MethodPost, path: "/sapi/v1/capital/withdraw/apply", signed: true, sapi: "uid", weight: fixed(900),
			allowed:  []string{"coin", "withdrawOrderId", "network", "address", "addressTag", "amount", "transactionFeeFlag", "name", "walletType"},
			required: []string{"coin", "address", "amount"}, handle: s.handleWithdraw},
		{method: http.MethodGet, path: "/sapi/v1/capital/withdraw/history", signed: true, sapi: "ip", weight: fixed(18000),
			allowed: []string{"coin", "withdrawOrderId", "status", "offset", "limit", "idList", "startTime", "endTime"}, handle: s.handleWithdrawHistory},
	}
	routes = append(routes, s.lifecycleRoutes()...)
	routes = append(routes, s.transferRoutes()...)
	m := make(map[string]*route, len(routes))
	for _, r := range routes {
		m[r.method+" "+r.path] = r
	}
	return m
}

// depthWeight is GET /api/v3/depth's weight by limit.
func depthWeight(p url.Values) int {
	limit, err := strconv.Atoi(p.Get("limit"))
	if err != nil || limit <= 0 {
		limit = 100
	}
	switch {
	case limit <= 100:
		return 5
	case limit <= 500:
		return 25
	case limit <= 1000:
		return 50
	}
	return 250
}

func (s *Server) handleTime(c *call) response {
	b := append([]byte(`{"serverTime":`), strconv.AppendInt(nil, c.now.UnixMilli(), 10)...)
	return ok(append(b, '}'))
}
