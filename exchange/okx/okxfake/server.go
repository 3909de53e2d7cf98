// Package okxfake is an in-process fake of OKX's API v5 for tests: the
// spot market data, trading, account and funding endpoints the exgate
// adapter uses, under /api/v5, with OKX's envelope ({"code","msg","data"}),
// its error codes and HTTP statuses, and (ws.go) its WebSocket API at
// /ws/v5/public, /ws/v5/private and /ws/v5/business.
//
// It checks requests as OKX does: the OK-ACCESS-KEY, -SIGN, -TIMESTAMP
// and -PASSPHRASE headers, the Base64 HMAC-SHA256 over timestamp +
// METHOD + path with its query + body, an ISO 8601 timestamp with
// milliseconds within 30 s of the server's clock, the passphrase of the
// key, parameter names, instrument rules (tick, lot, minimum size), and
// balances of the trading and the funding account. Market orders fill at
// once against a static, deterministic book (levels are not consumed),
// in either currency (tgtCcy); limit orders (limit, ioc, fok, post_only)
// match the same book, rest, are canceled and filled by a hook;
// candlesticks are a pure function of instrument, bar and time, newest
// first. Rate limits follow OKX's documented per-endpoint budgets and
// answer 429 with code 50011.
//
// A fault hook (SetFault) delays requests, answers them with a given
// status and body, or drops the connection before or after processing,
// for the order-safety tests.
package okxfake

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate/exchange/internal/fakehttp"
	"github.com/exgate/exgate/exchange/internal/fakews"
)

// Options configure a Server. Every field is optional.
type Options struct {
	// Now is the server's clock; default time.Now. SetClockOffset skews
	// it further.
	Now func() time.Time
	// NoRateLimits turns OKX's request budgets off.
	NoRateLimits bool
	// FeeRate is the taker fee; default 0.001. Makers pay 0.0008.
	FeeRate string
}

// Account is an API key of the fake with its balances.
type Account struct {
	APIKey     string
	Secret     string
	Passphrase string
	// Balances are the trading account's available amounts per
	// currency, Funding the funding account's, as decimal strings.
	Balances map[string]string
	Funding  map[string]string
	// Perm is the key's permissions as GET /account/config writes them;
	// default "read_only,trade,withdraw". IP is its allow-list ("": none).
	Perm, IP string
	// PendingWithdrawals leaves new withdrawals in state 0 (waiting)
	// instead of completing them (2) at once.
	PendingWithdrawals bool
	// Deposits replaces the seeded deposit history when not nil.
	Deposits []Deposit
}

// Deposit is one incoming transfer of an account.
type Deposit struct {
	ID, Ccy, Chain, To, TxID, Amt, State string
	Time                                 time.Time
}

// Fault is what the fault hook does with one request (fakehttp.Fault).
type Fault = fakehttp.Fault

// SentOrder is the body of one POST /api/v5/trade/order that passed
// authentication, as the fake read it.
type SentOrder struct {
	InstID   string `json:"instId"`
	TdMode   string `json:"tdMode"`
	Side     string `json:"side"`
	OrdType  string `json:"ordType"`
	Px       string `json:"px"`
	Sz       string `json:"sz"`
	TgtCcy   string `json:"tgtCcy"`
	ClOrdID  string `json:"clOrdId"`
	Tag      string `json:"tag"`
	BanAmend bool   `json:"banAmend"`
}

// Server is a running fake. Its exported methods are safe for concurrent
// use with the requests it serves.
type Server struct {
	// URL is the base URL to give the adapter (no /api/v5, no trailing
	// slash).
	URL string

	srv      *httptest.Server
	now      func() time.Time
	offsetMS atomic.Int64
	noLimits bool
	taker    decimal.Decimal
	maker    decimal.Decimal
	faults   fakehttp.Faults

	mu       sync.Mutex
	insts    map[string]*Instrument
	books    map[string]*book
	accounts map[string]*account
	windows  map[string]*window
	candles  map[string]*liveCandle
	corrupt  map[string]bool
	nextID   int64

	ws        *fakews.Server
	wsClients map[*wsClient]bool
	// wsLoginFailures counts refused logins.
	wsLoginFailures int
}

// account is the fake's state of one API key.
type account struct {
	Account
	avail, locked map[string]decimal.Decimal // trading account
	funding       map[string]decimal.Decimal // funding account (available)
	orders        []*order
	sent          []SentOrder
	fills         []*fill
	deposits      []Deposit
	withdrawals   []*withdrawal
	transfers     []*transfer
	bills         []*bill
}

// New starts a fake on a loopback port. Close it when done.
func New(opts Options) *Server {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	taker := decimal.RequireFromString("0.001")
	if opts.FeeRate != "" {
		taker = decimal.RequireFromString(opts.FeeRate)
	}
	s := &Server{
		now: opts.Now, noLimits: opts.NoRateLimits, taker: taker, maker: decimal.RequireFromString("0.0008"),
		insts: map[string]*Instrument{}, books: map[string]*book{}, accounts: map[string]*account{},
		windows: map[string]*window{}, candles: map[string]*liveCandle{}, wsClients: map[*wsClient]bool{},
		nextID: 680800019749904384,
	}
	for _, in := range defaultInstruments() {
		s.insts[in.InstID] = in
		s.books[in.InstID] = generateBook(in)
	}
	s.ws = fakews.New(s.serveWS)
	s.srv = httptest.NewServer(s.faults.Track(http.HandlerFunc(s.serve)))
	s.URL = s.srv.URL
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Client returns an HTTP client for the server.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// AddAccount registers an API key. Balances are decimal strings; without
// Deposits the account gets a seeded history (SeedDeposits).
func (s *Server) AddAccount(a Account) error {
	if a.APIKey == "" || a.Secret == "" || a.Passphrase == "" {
		return fmt.Errorf("okxfake: account needs an API key, a secret and a passphrase")
	}
	acc := &account{Account: a, avail: map[string]decimal.Decimal{}, locked: map[string]decimal.Decimal{}, funding: map[string]decimal.Decimal{}}
	for dst, src := range map[*map[string]decimal.Decimal]map[string]string{&acc.avail: a.Balances, &acc.funding: a.Funding} {
		for cur, v := range src {
			d, err := decimal.NewFromString(v)
			if err != nil || d.IsNegative() {
				return fmt.Errorf("okxfake: balance %s %q: not a non-negative decimal", cur, v)
			}
			(*dst)[strings.ToUpper(cur)] = d
		}
	}
	acc.deposits = a.Deposits
	if acc.deposits == nil {
		acc.deposits = SeedDeposits(s.serverTime())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.accounts[a.APIKey]; dup {
		return fmt.Errorf("okxfake: API key %s already added", a.APIKey)
	}
	s.accounts[a.APIKey] = acc
	return nil
}

// SeedDeposits is the deposit history a new account gets: a deposit in
// every state OKX documents (0 1 2 8 11 12 13 14 17), relative to now.
func SeedDeposits(now time.Time) []Deposit {
	h := func(n int) time.Time { return now.Add(-time.Duration(n) * time.Hour) }
	return []Deposit{
		{ID: "88013301", Ccy: "USDT", Chain: "USDT-TRC20", To: "TN4hGjVXMzyBDaAqYDGkbHc8nK9b4N1aGz", TxID: "fee235b3e812a1", Amt: "1500", State: "2", Time: h(72)},
		{ID: "88013302", Ccy: "BTC", Chain: "BTC-Bitcoin", To: "39XNxK1Ryqgg3Bsyn6HzoqV4Xji25pNkv6", TxID: "4a5e1e4baab89f3a", Amt: "0.25", State: "2", Time: h(48)},
		{ID: "88013303", Ccy: "ETH", Chain: "ETH-ERC20", To: "0x66d0edc2e63b6b992381ee668fbcb01f20ae0428", TxID: "0x5c504ed432cb5113", Amt: "3.5", State: "1", Time: h(6)},
		{ID: "88013304", Ccy: "USDT", Chain: "USDT-ERC20", To: "0x66d0edc2e63b6b992381ee668fbcb01f20ae0428", TxID: "0x9b2f1c5d8e7a6b4c", Amt: "250.5", State: "0", Time: h(1)},
		{ID: "88013305", Ccy: "XRP", Chain: "XRP-Ripple", To: "rLdinLq5CJood9wdjY9ZCdgycK8KGevkUj:104223", TxID: "E3FE6EA3D48F0C2B", Amt: "120", State: "11", Time: h(96)},
		{ID: "88013306", Ccy: "SOL", Chain: "SOL-Solana", To: "5Hd1cNpXYjXyJvBHsZhyZkTrQcyZ4e1Ep1Hkp9bvTg2B", TxID: "3pB7sMfd8Z", Amt: "10", State: "8", Time: h(30)},
		{ID: "88013307", Ccy: "USDT", Chain: "USDT-TRC20", To: "TN4hGjVXMzyBDaAqYDGkbHc8nK9b4N1aGz", TxID: "aa11bb22cc33", Amt: "75", State: "12", Time: h(120)},
		{ID: "88013308", Ccy: "BTC", Chain: "BTC-Bitcoin", To: "39XNxK1Ryqgg3Bsyn6HzoqV4Xji25pNkv6", TxID: "77e1f0c2", Amt: "0.01", State: "13", Time: h(140)},
		{ID: "88013309", Ccy: "ETH", Chain: "ETH-ERC20", To: "0x66d0edc2e63b6b992381ee668fbcb01f20ae0428", TxID: "0x31aa90", Amt: "0.4", State: "14", Time: h(160)},
		{ID: "88013310", Ccy: "USDT", Chain: "USDT-TRC20", To: "TN4hGjVXMzyBDaAqYDGkbHc8nK9b4N1aGz", TxID: "dd44ee55", Amt: "20", State: "17", Time: h(2)},
	}
}

// SetFault installs the fault hook (nil removes it).
func (s *Server) SetFault(f func(r *http.Request) Fault) { s.faults.SetHook(f) }

// SetClockOffset makes the server's clock run d ahead of Options.Now
// (negative: behind), to provoke 50102 answers.
func (s *Server) SetClockOffset(d time.Duration) { s.offsetMS.Store(d.Milliseconds()) }

func (s *Server) serverTime() time.Time {
	return s.now().Add(time.Duration(s.offsetMS.Load()) * time.Millisecond)
}

// Requests returns how many requests reached path (for example
// "/api/v5/trade/order", any method), faults included.
func (s *Server) Requests(path string) int { return s.faults.Requests(path) }

// Busy returns how many requests the fake is handling now, a WebSocket
// connection while it is open: a request its client gave up on may still
// be held by a fault's Delay, to be processed after.
func (s *Server) Busy() int { return s.faults.Busy() }

// ResetCounters forgets the request counts.
func (s *Server) ResetCounters() { s.faults.ResetCounters() }

// SentOrders returns the order bodies the account sent that passed
// authentication, oldest first.
func (s *Server) SentOrders(apiKey string) []SentOrder {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.accounts[apiKey]; a != nil {
		return slices.Clone(a.sent)
	}
	return nil
}

// OrdersByClOrdID returns how many orders the account holds (open or
// finished) with the given clOrdId.
func (s *Server) OrdersByClOrdID(apiKey, clOrdID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	if a := s.accounts[apiKey]; a != nil {
		for _, o := range a.orders {
			if o.clOrdID == clOrdID {
				n++
			}
		}
	}
	return n
}

// Withdrawals returns how many withdrawals the account made with the
// given clientId.
func (s *Server) Withdrawals(apiKey, clientID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	if a := s.accounts[apiKey]; a != nil {
		for _, w := range a.withdrawals {
			if w.clientID == clientID {
				n++
			}
		}
	}
	return n
}

// Transfers returns how many transfers the account made with the given
// clientId.
func (s *Server) Transfers(apiKey, clientID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	if a := s.accounts[apiKey]; a != nil {
		for _, t := range a.transfers {
			if t.clientID == clientID {
				n++
			}
		}
	}
	return n
}

// Balance returns the trading account's available amount of a currency.
func (s *Server) Balance(apiKey, ccy string) decimal.Decimal {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.accounts[apiKey]; a != nil {
		return a.avail[strings.ToUpper(ccy)]
	}
	return decimal.Zero
}

// Locked returns the trading account's frozen amount of a currency.
func (s *Server) Locked(apiKey, ccy string) decimal.Decimal {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.accounts[apiKey]; a != nil {
		return a.locked[strings.ToUpper(ccy)]
	}
	return decimal.Zero
}

// FundingBalance returns the funding account's available amount.
func (s *Server) FundingBalance(apiKey, ccy string) decimal.Decimal {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.accounts[apiKey]; a != nil {
		return a.funding[strings.ToUpper(ccy)]
	}
	return decimal.Zero
}

// SetWithdrawalState changes the state of an account's withdrawal, found
// by its wdId.
func (s *Server) SetWithdrawalState(apiKey, wdID, state string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.accounts[apiKey]; a != nil {
		for _, w := range a.withdrawals {
			if w.id == wdID {
				w.state = state
				return nil
			}
		}
	}
	return fmt.Errorf("okxfake: no withdrawal %s", wdID)
}

// SetState changes an instrument's state (live, suspend, preopen).
func (s *Server) SetState(instID, state string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if in := s.insts[instID]; in != nil {
		cp := *in
		cp.State = state
		s.insts[instID] = &cp
	}
}

// apiError is one of OKX's error answers: the HTTP status, the code and
// message, and for an order or cancel refused item by item the item's
// code (then the envelope's code is 1).
type apiError struct {
	status int
	code   string
	msg    string
	// item marks a refusal reported in data[0].sCode under code 1.
	item    bool
	clOrdID string
	// noData leaves data out (OKX's authentication failures).
	noData bool
}

func (e *apiError) Error() string { return e.code + ": " + e.msg }

func fail(status int, code, format string, args ...any) *apiError {
	return &apiError{status: status, code: code, msg: fmt.Sprintf(format, args...)}
}

// paramError is 51000 "Parameter {x} error" (HTTP 400).
func paramError(name string) *apiError {
	return fail(http.StatusBadRequest, "51000", "Parameter %s error", name)
}

// emptyParam is 50014 "Parameter {x} can not be empty." (HTTP 400).
func emptyParam(name string) *apiError {
	return fail(http.StatusBadRequest, "50014", "Parameter %s can not be empty.", name)
}

// itemError is an order or cancel refused item by item: HTTP 200, code
// 1, the reason in data[0].sCode and sMsg.
func itemError(code, clOrdID, format string, args ...any) *apiError {
	return &apiError{status: http.StatusOK, code: code, msg: fmt.Sprintf(format, args...), item: true, clOrdID: clOrdID}
}

// call is one request as a handler sees it.
type call struct {
	r     *http.Request
	query url.Values
	body  []byte
	acc   *account // nil on public routes
	now   time.Time
}

// route is one endpoint of the fake.
type route struct {
	private bool
	// params are the query parameter names OKX takes.
	params []string
	// limit requests per window, per IP (public) or per key, and per
	// instrument or currency when keyed so.
	limit  int
	window time.Duration
	keyBy  string // "", "instId" or "ccy" (read from the body or query)
	handle func(s *Server, c *call) (any, *apiError)
}

// The windows of OKX's rate limits: the trading and market endpoints count
// per 2 s, the funding account's per second.
const (
	windowTrading = 2 * time.Second
	windowFunding = time.Second
)

// routes maps "METHOD /api/v5/..." to its route. Limits: OKX API v5
// docs, each endpoint's "Rate Limit".
var routes = map[string]*route{
	"GET /api/v5/public/time":              {limit: 10, window: windowTrading, handle: (*Server).handleTime},
	"GET /api/v5/public/instruments":       {params: []string{"instType", "instId", "uly", "instFamily"}, limit: 20, window: windowTrading, handle: (*Server).handleInstruments},
	"GET /api/v5/market/candles":           {params: []string{"instId", "bar", "after", "before", "limit"}, limit: 40, window: windowTrading, handle: (*Server).handleCandles},
	"GET /api/v5/market/history-candles":   {params: []string{"instId", "bar", "after", "before", "limit"}, limit: 20, window: windowTrading, handle: (*Server).handleHistoryCandles},
	"GET /api/v5/market/books":             {params: []string{"instId", "sz"}, limit: 40, window: windowTrading, handle: (*Server).handleBooks},
	"GET /api/v5/account/config":           {private: true, limit: 5, window: windowTrading, handle: (*Server).handleConfig},
	"GET /api/v5/account/balance":          {private: true, params: []string{"ccy"}, limit: 10, window: windowTrading, handle: (*Server).handleBalance},
	"POST /api/v5/trade/order":             {private: true, limit: 60, window: windowTrading, keyBy: "instId", handle: (*Server).handlePlaceOrder},
	"POST /api/v5/trade/cancel-order":      {private: true, limit: 60, window: windowTrading, keyBy: "instId", handle: (*Server).handleCancelOrder},
	"GET /api/v5/trade/order":              {private: true, params: []string{"instId", "ordId", "clOrdId"}, limit: 60, window: windowTrading, keyBy: "instId", handle: (*Server).handleGetOrder},
	"GET /api/v5/trade/orders-pending":     {private: true, params: []string{"instType", "uly", "instFamily", "instId", "ordType", "state", "after", "before", "limit"}, limit: 60, window: windowTrading, handle: (*Server).handleOrdersPending},
	"GET /api/v5/trade/orders-history":     {private: true, params: []string{"instType", "uly", "instFamily", "instId", "ordType", "state", "category", "after", "before", "begin", "end", "limit"}, limit: 40, window: windowTrading, handle: (*Server).handleOrdersHistory},
	"GET /api/v5/trade/fills":              {private: true, params: []string{"instType", "uly", "instFamily", "instId", "ordId", "subType", "after", "before", "begin", "end", "limit"}, limit: 60, window: windowTrading, handle: (*Server).handleFills},
	"GET /api/v5/asset/currencies":         {private: true, params: []string{"ccy"}, limit: 6, window: windowFunding, handle: (*Server).handleCurrencies},
	"GET /api/v5/asset/balances":           {private: true, params: []string{"ccy"}, limit: 6, window: windowFunding, handle: (*Server).handleFundingBalances},
	"GET /api/v5/asset/deposit-address":    {private: true, params: []string{"ccy"}, limit: 6, window: windowFunding, handle: (*Server).handleDepositAddress},
	"GET /api/v5/asset/deposit-history":    {private: true, params: []string{"ccy", "depId", "fromWdId", "txId", "type", "state", "after", "before", "limit"}, limit: 6, window: windowFunding, handle: (*Server).handleDeposits},
	"POST /api/v5/asset/withdrawal":        {private: true, limit: 6, window: windowFunding, handle: (*Server).handleWithdraw},
	"GET /api/v5/asset/withdrawal-history": {private: true, params: []string{"ccy", "wdId", "clientId", "txId", "type", "state", "after", "before", "limit"}, limit: 6, window: windowFunding, handle: (*Server).handleWithdrawals},
	"POST /api/v5/asset/transfer":          {private: true, limit: 2, window: windowFunding, keyBy: "ccy", handle: (*Server).handleTransfer},
	"GET /api/v5/asset/transfer-state":     {private: true, params: []string{"transId", "clientId", "type"}, limit: 10, window: windowFunding, handle: (*Server).handleTransferState},
	"GET /api/v5/asset/bills":              {private: true, params: []string{"ccy", "type", "clientId", "after", "before", "limit"}, limit: 6, window: windowFunding, handle: (*Server).handleBills},
}

// wsPrefix is the path of the WebSocket endpoints (ws.go).
const wsPrefix = "/ws/v5/"

// serve counts the request, applies the fault hook and answers.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, wsPrefix) {
		s.faults.Count(r)
		s.ws.ServeHTTP(w, r)
		return
	}
	f, done := s.faults.Before(w, r, "application/json")
	if done {
		return
	}
	status, body := s.handle(r)
	if f.DropAfter {
		fakehttp.Drop(w)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// handle routes, authenticates, meters and answers one request.
func (s *Server) handle(r *http.Request) (int, []byte) {
	now := s.serverTime()
	failed := func(e *apiError) (int, []byte) {
		var b []byte
		switch {
		case e.noData:
			b, _ = json.Marshal(map[string]string{"msg": e.msg, "code": e.code})
		case e.item:
			b, _ = json.Marshal(map[string]any{"code": "1", "msg": "All operations failed",
				"data":   []map[string]string{{"clOrdId": e.clOrdID, "ordId": "", "tag": "", "ts": strconv.FormatInt(now.UnixMilli(), 10), "sCode": e.code, "sMsg": e.msg}},
				"inTime": strconv.FormatInt(now.UnixMicro(), 10), "outTime": strconv.FormatInt(now.UnixMicro(), 10)})
		default:
			b, _ = json.Marshal(map[string]any{"code": e.code, "msg": e.msg, "data": []any{}})
		}
		return e.status, b
	}
	key := r.Method + " " + r.URL.Path
	rt := routes[key]
	if rt == nil {
		for k := range routes {
			if strings.HasSuffix(k, " "+r.URL.Path) {
				return failed(fail(http.StatusMethodNotAllowed, "50115", "Invalid request method."))
			}
		}
		return failed(fail(http.StatusNotFound, "404", "Not Found"))
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return failed(fail(http.StatusBadRequest, "50002", "JSON syntax error"))
	}
	c := &call{r: r, body: body, now: now}
	if rt.private {
		acc, e := s.authenticate(r, body, now)
		if e != nil {
			return failed(e)
		}
		c.acc = acc
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return failed(fail(http.StatusBadRequest, "50002", "Malformed query string"))
	}
	for name := range q {
		if !slices.Contains(rt.params, name) {
			return failed(paramError(name))
		}
	}
	c.query = q
	if r.Method == http.MethodPost {
		if len(body) == 0 {
			return failed(fail(http.StatusBadRequest, "50000", "Body for POST request cannot be empty."))
		}
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			return failed(fail(http.StatusBadRequest, "50006", "Invalid Content-Type, please use \"application/json\" format."))
		}
	}
	if e := s.meter(rt, key, c); e != nil {
		return failed(e)
	}
	if exp := r.Header.Get("expTime"); exp != "" {
		ms, err := strconv.ParseInt(exp, 10, 64)
		if err != nil {
			return failed(fail(http.StatusBadRequest, "50036", "Invalid expTime"))
		}
		if now.UnixMilli() > ms {
			return failed(fail(http.StatusOK, "50037", "Order expired."))
		}
	}
	out, e := rt.handle(s, c)
	if e != nil {
		return failed(e)
	}
	if out == nil {
		out = []any{}
	}
	b, err := json.Marshal(map[string]any{"code": "0", "msg": "", "data": out})
	if err != nil {
		return failed(fail(http.StatusInternalServerError, "50026", "System error"))
	}
	return http.StatusOK, b
}

// Sign computes OKX's OK-ACCESS-SIGN the way the fake checks it:
// Base64(HMAC-SHA256(secret, timestamp + METHOD + requestPath + body)).
func Sign(secret, timestamp, method, requestPath string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(timestamp + method + requestPath))
	mac.Write(body)
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// timestampWindow is how far OK-ACCESS-TIMESTAMP may stray from the
// server's clock. OKX documents 30 s for the WebSocket login; the REST
// window is undocumented, and the fake holds it to the same 30 s.
const timestampWindow = 30 * time.Second

var isoTimestamp = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)

// authenticate checks a private request as OKX does (OKX API v5 docs,
// "REST Authentication"; codes from "Error Code", all HTTP 401 without
// data): every header present (50103 key, 50104 passphrase, 50106 sign,
// 50107 timestamp), the timestamp's format (50112) and age (50102), the
// key (50111), its passphrase (50105), then the signature over the path
// with its raw query and the body (50113).
func (s *Server) authenticate(r *http.Request, body []byte, now time.Time) (*account, *apiError) {
	auth := func(code, msg string) *apiError {
		return &apiError{status: http.StatusUnauthorized, code: code, msg: msg, noData: true}
	}
	for _, h := range []struct{ name, code string }{
		{"OK-ACCESS-KEY", "50103"}, {"OK-ACCESS-PASSPHRASE", "50104"}, {"OK-ACCESS-SIGN", "50106"}, {"OK-ACCESS-TIMESTAMP", "50107"},
	} {
		if r.Header.Get(h.name) == "" {
			return nil, auth(h.code, "Request header "+h.name+" can not be empty.")
		}
	}
	ts := r.Header.Get("OK-ACCESS-TIMESTAMP")
	t, err := time.Parse("2006-01-02T15:04:05.000Z", ts)
	if err != nil || !isoTimestamp.MatchString(ts) {
		return nil, auth("50112", "Invalid OK-ACCESS-TIMESTAMP")
	}
	if d := now.Sub(t); d > timestampWindow || d < -timestampWindow {
		return nil, auth("50102", "Timestamp request expired")
	}
	s.mu.Lock()
	acc := s.accounts[r.Header.Get("OK-ACCESS-KEY")]
	s.mu.Unlock()
	if acc == nil {
		return nil, auth("50111", "Invalid OK-ACCESS-KEY")
	}
	if !hmac.Equal([]byte(r.Header.Get("OK-ACCESS-PASSPHRASE")), []byte(acc.Passphrase)) {
		return nil, auth("50105", "Request header OK-ACCESS-PASSPHRASE incorrect.")
	}
	requestPath := r.URL.EscapedPath()
	if r.URL.RawQuery != "" {
		requestPath += "?" + r.URL.RawQuery
	}
	want := Sign(acc.Secret, ts, r.Method, requestPath, body)
	if !hmac.Equal([]byte(r.Header.Get("OK-ACCESS-SIGN")), []byte(want)) {
		return nil, auth("50113", "Invalid Sign")
	}
	return acc, nil
}

// window counts one budget's requests in fixed windows.
type window struct {
	start time.Time
	count int
}

// meter takes one request from the route's budget: per IP on public
// routes, per key on private ones, and per instrument or currency where
// OKX keys it so.
func (s *Server) meter(rt *route, key string, c *call) *apiError {
	who := "ip"
	if c.acc != nil {
		who = c.acc.APIKey
	}
	wkey := key + "|" + who
	if rt.keyBy != "" {
		var b map[string]any
		_ = json.Unmarshal(c.body, &b)
		v, _ := b[rt.keyBy].(string)
		if v == "" {
			v = c.query.Get(rt.keyBy)
		}
		wkey += "|" + v
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.noLimits {
		return nil
	}
	w := s.windows[wkey]
	start := c.now.Truncate(rt.window)
	if w == nil || !w.start.Equal(start) {
		w = &window{start: start}
		s.windows[wkey] = w
	}
	w.count++
	if w.count <= rt.limit {
		return nil
	}
	return &apiError{status: http.StatusTooManyRequests, code: "50011", msg: "Too Many Requests", noData: true}
}

// decodeBody reads a JSON object body into v. OKX tolerates members it
// does not know (ccxt sends some); the fake does too.
func decodeBody(body []byte, v any) *apiError {
	if err := json.Unmarshal(body, v); err != nil {
		return fail(http.StatusBadRequest, "50002", "JSON syntax error")
	}
	return nil
}

// limitParam reads limit (default def, at most most; above it 51000).
func limitParam(q url.Values, def, most int) (int, *apiError) {
	v := q.Get("limit")
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > most {
		return 0, paramError("limit")
	}
	return n, nil
}

// ms writes a time as OKX does: Unix milliseconds in a string.
func ms(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }

func (s *Server) handleConfig(c *call) (any, *apiError) {
	perm := c.acc.Perm
	if perm == "" {
		perm = "read_only,trade,withdraw"
	}
	return []map[string]string{{"uid": "44705892343619584", "acctLv": "1", "posMode": "net_mode", "perm": perm, "ip": c.acc.IP,
		"label": "exgate", "level": "Lv1", "mainUid": "44705892343619584"}}, nil
}

func (s *Server) handleTime(c *call) (any, *apiError) {
	return []map[string]string{{"ts": ms(c.now)}}, nil
}

// newID returns the next id of orders, fills, withdrawals and transfers.
// Call with s.mu held.
func (s *Server) newID() string {
	s.nextID++
	return strconv.FormatInt(s.nextID, 10)
}
