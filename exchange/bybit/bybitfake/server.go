// Package bybitfake is an in-process fake of Bybit's API v5 for tests
// (category=spot on a unified trading account): the market data, order,
// account and asset endpoints the exgate adapter uses, with Bybit's
// envelope ({retCode, retMsg, result, retExtInfo, time}), numbers as
// strings and its retCodes.
//
// It checks requests as Bybit does (https://bybit-exchange.github.io/docs/v5/guide):
// the X-BAPI-API-KEY, X-BAPI-TIMESTAMP, X-BAPI-SIGN and X-BAPI-RECV-WINDOW
// headers, the HMAC-SHA256 signature over timestamp + key + recv window +
// the query string or body exactly as sent, the timing rule
// server_time - recv_window <= timestamp < server_time + 1000 (10002),
// parameters, instrument rules and balances. Market orders fill at once
// against a static, deterministic order book; limit orders (GTC, IOC, FOK,
// PostOnly) match it, rest, are canceled, and are filled by a hook
// (FillOrder). Klines are a pure function of symbol, interval and time,
// newest first. The unified (UNIFIED) and funding (FUND) wallets are
// apart: withdrawals take FUND only, transfers move between the two, and
// withdrawals go only to the account's address book.
//
// Rate limits follow Bybit's documented budgets
// (https://bybit-exchange.github.io/docs/v5/rate-limit): each endpoint's
// per-UID limit in a rolling window answers retCode 10006 with the
// X-Bapi-Limit headers, and more than 600 requests in 5 seconds from the
// address is HTTP 403 and a 10-minute ban. TooManyVisits and IPBans count
// those answers, so a test can show the adapter never earned one.
//
// The WebSocket v5 (ws.go) serves the public orderbook and kline topics
// and the private order topic after auth.
//
// A fault hook (SetFault) delays requests, answers them with a given
// status and body, or drops the connection before or after processing.
package bybitfake

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
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
	// NoRateLimits turns the per-UID and per-IP limits off (the headers
	// are still sent).
	NoRateLimits bool
	// IPLimit is the requests allowed per 5 s from one address; default
	// 600, Bybit's.
	IPLimit int
	// LimitHeadersOnPublic sends the X-Bapi-Limit headers on public
	// answers too (whether Bybit does is not documented).
	LimitHeadersOnPublic bool
	// FeeRate is the taker and maker fee; default 0.001 (Bybit's base
	// spot rate).
	FeeRate string
	// DuplicateLinkIDCode is the retCode of a reused orderLinkId; default
	// 170141 (110072 is the other documented candidate).
	DuplicateLinkIDCode int
	// AddressRefusalCode is the retCode of a withdrawal to an address not
	// in the address book; default 131002 (131083 and 131093 are the
	// other documented candidates).
	AddressRefusalCode int
	// PostOnlyRefusedSync refuses a crossing PostOnly order with 170218
	// instead of accepting it and cancelling it
	// (EC_PostOnlyWillTakeLiquidity).
	PostOnlyRefusedSync bool
	// HistoryHasOpen lists open orders in order/history too.
	HistoryHasOpen bool
	// FundListsZero lists zero balances in the funding wallet.
	FundListsZero bool
}

// Account is an API key of the fake with its wallets.
type Account struct {
	APIKey string
	Secret string
	// Unified and Fund are the balances of the unified trading account
	// and the funding account, as decimal strings.
	Unified map[string]string
	Fund    map[string]string
	// AddressBook lists the withdrawal addresses the account saved; a
	// withdrawal elsewhere is refused.
	AddressBook []BookAddress
	// ReadOnly refuses orders, withdrawals and transfers (10005).
	ReadOnly bool
	// PendingWithdrawals leaves new withdrawals Pending instead of
	// success.
	PendingWithdrawals bool
	// Deposits replaces the seeded deposit history when not nil.
	Deposits []Deposit
}

// BookAddress is one entry of an account's withdrawal address book.
type BookAddress struct {
	Coin, Chain, Address, Tag string
}

// Deposit is one deposit record.
type Deposit struct {
	ID, Coin, Chain, Amount, TxID, Address, Tag string
	Status                                      int
	Time                                        time.Time
}

// Fault is what the fault hook does with one request (fakehttp.Fault).
type Fault = fakehttp.Fault

// SentOrder is the body of one POST /v5/order/create that passed
// authentication, as the fake read it.
type SentOrder struct {
	Category    string `json:"category"`
	Symbol      string `json:"symbol"`
	Side        string `json:"side"`
	OrderType   string `json:"orderType"`
	Qty         string `json:"qty"`
	Price       string `json:"price"`
	MarketUnit  string `json:"marketUnit"`
	TimeInForce string `json:"timeInForce"`
	OrderLinkID string `json:"orderLinkId"`
	IsLeverage  int    `json:"isLeverage"`
	OrderFilter string `json:"orderFilter"`
}

// Server is a running fake. Its exported methods are safe for concurrent
// use with the requests it serves.
type Server struct {
	// URL is the base URL to give the adapter.
	URL string

	srv      *httptest.Server
	opts     Options
	now      func() time.Time
	offsetMS atomic.Int64
	feeRate  decimal.Decimal
	faults   fakehttp.Faults

	tooMany atomic.Int64
	ipBans  atomic.Int64

	mu          sync.Mutex
	pairs       map[string]*Pair
	books       map[string]*book
	accounts    map[string]*account
	uidLog      map[string][]time.Time
	ipLog       []time.Time
	bannedUntil time.Time
	nextOrderID int64
	nextExecID  int64
	nextWID     int64

	ws       *fakews.Server
	wsPriv   *fakews.Server
	wsSubs   map[*wsConn]bool
	candles  map[string]*liveCandle
	wsSilent bool
}

// account is the fake's state of one API key.
type account struct {
	Account
	unified, fund map[string]decimal.Decimal
	locked        map[string]decimal.Decimal
	orders        []*order
	sent          []SentOrder
	execs         []*execution
	deposits      []Deposit
	withdrawals   []*withdrawal
	requestIDs    map[string]bool
	transfers     []*transfer
}

// New starts a fake on a loopback port. Close it when done.
func New(opts Options) *Server {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.IPLimit <= 0 {
		opts.IPLimit = 600
	}
	if opts.DuplicateLinkIDCode == 0 {
		opts.DuplicateLinkIDCode = 170141
	}
	if opts.AddressRefusalCode == 0 {
		opts.AddressRefusalCode = 131002
	}
	fee := decimal.RequireFromString("0.001")
	if opts.FeeRate != "" {
		fee = decimal.RequireFromString(opts.FeeRate)
	}
	s := &Server{
		opts: opts, now: opts.Now, feeRate: fee,
		pairs: map[string]*Pair{}, books: map[string]*book{}, accounts: map[string]*account{},
		uidLog: map[string][]time.Time{}, nextOrderID: 1880000000000000000, nextExecID: 2100000000000000000, nextWID: 131600000,
		wsSubs: map[*wsConn]bool{}, candles: map[string]*liveCandle{},
	}
	for _, p := range defaultPairs() {
		s.pairs[p.Symbol] = p
		s.books[p.Symbol] = generateBook(p)
	}
	s.ws = fakews.New(s.servePublicWS)
	s.wsPriv = fakews.New(s.servePrivateWS)
	s.srv = httptest.NewServer(s.faults.Track(http.HandlerFunc(s.serve)))
	s.URL = s.srv.URL
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Client returns an HTTP client for the server.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// AddAccount registers an API key. Without Deposits the account gets a
// seeded history (SeedDeposits).
func (s *Server) AddAccount(a Account) error {
	if a.APIKey == "" || a.Secret == "" {
		return fmt.Errorf("bybitfake: account needs an API key and a secret")
	}
	acc := &account{Account: a, unified: map[string]decimal.Decimal{}, fund: map[string]decimal.Decimal{},
		locked: map[string]decimal.Decimal{}, requestIDs: map[string]bool{}}
	for _, w := range []struct {
		from map[string]string
		to   map[string]decimal.Decimal
	}{{a.Unified, acc.unified}, {a.Fund, acc.fund}} {
		for coin, v := range w.from {
			d, err := decimal.NewFromString(v)
			if err != nil || d.IsNegative() {
				return fmt.Errorf("bybitfake: balance %s %q: not a non-negative decimal", coin, v)
			}
			w.to[strings.ToUpper(coin)] = d
		}
	}
	acc.deposits = a.Deposits
	if acc.deposits == nil {
		acc.deposits = SeedDeposits(s.serverTime())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.accounts[a.APIKey]; dup {
		return fmt.Errorf("bybitfake: API key %s already added", a.APIKey)
	}
	s.accounts[a.APIKey] = acc
	return nil
}

// SeedDeposits is the deposit history a new account gets: one record in
// each of Bybit's deposit statuses over the last days, and one older than
// Bybit's 30-day window.
func SeedDeposits(now time.Time) []Deposit {
	return []Deposit{
		{ID: "10001", Coin: "USDT", Chain: "TRX", Amount: "1500", TxID: "9f1a0f2b6c3e4d5a", Address: "TXkZ5Ff4qgSBVRrfBMfxcDxUrW5g1mDtKf", Status: 3, Time: now.Add(-72 * time.Hour)},
		{ID: "10002", Coin: "BTC", Chain: "BTC", Amount: "0.25", TxID: "4a5e1e4baab89f3a", Address: "bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh", Status: 3, Time: now.Add(-48 * time.Hour)},
		{ID: "10003", Coin: "ETH", Chain: "ETH", Amount: "3.5", TxID: "0x5c504ed432cb5113", Address: "0x0ab891497116f7f5532a4c2f4f7b1784488628e1", Status: 1, Time: now.Add(-2 * time.Hour)},
		{ID: "10004", Coin: "USDT", Chain: "ETH", Amount: "250.5", TxID: "0x9b2f1c5d8e7a6b4c", Address: "0x0ab891497116f7f5532a4c2f4f7b1784488628e1", Status: 2, Time: now.Add(-30 * time.Minute)},
		{ID: "10005", Coin: "XRP", Chain: "XRP", Amount: "120", TxID: "E3FE6EA3D48F0C2B", Address: "rLdinLq5CJood9wdjY9ZCdgycK8KGevkUj", Tag: "104223", Status: 4, Time: now.Add(-96 * time.Hour)},
		{ID: "10006", Coin: "SOL", Chain: "SOL", Amount: "12", TxID: "53j7mUftUboJ2TVb", Address: "DhTEGye1vq2PPr8DPWit4HTDprnvnDiqpVHnHSY1Y82p", Status: 10012, Time: now.Add(-120 * time.Hour)},
		{ID: "10007", Coin: "USDT", Chain: "BSC", Amount: "75", TxID: "0x77aa", Address: "0x0ab891497116f7f5532a4c2f4f7b1784488628e1", Status: 70011, Time: now.Add(-150 * time.Hour)},
		{ID: "10008", Coin: "BTC", Chain: "BTC", Amount: "1", TxID: "0ld", Address: "bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh", Status: 3, Time: now.Add(-40 * 24 * time.Hour)},
	}
}

// SetFault installs the fault hook (nil removes it).
func (s *Server) SetFault(f func(r *http.Request) Fault) { s.faults.SetHook(f) }

// SetClockOffset makes the server's clock run d ahead of Options.Now.
func (s *Server) SetClockOffset(d time.Duration) { s.offsetMS.Store(d.Milliseconds()) }

// serverTime is the server's clock.
func (s *Server) serverTime() time.Time {
	return s.now().Add(time.Duration(s.offsetMS.Load()) * time.Millisecond)
}

// Requests returns how many requests reached path, faults included.
func (s *Server) Requests(path string) int { return s.faults.Requests(path) }

// Busy returns how many requests the fake is handling now, a WebSocket
// connection while it is open: a request its client gave up on may still
// be held by a fault's Delay, to be processed after.
func (s *Server) Busy() int { return s.faults.Busy() }

// ResetCounters forgets the request counts.
func (s *Server) ResetCounters() { s.faults.ResetCounters() }

// TooManyVisits is how many 10006 answers the fake gave; IPBans how many
// HTTP 403 answers of its per-IP limit.
func (s *Server) TooManyVisits() int64 { return s.tooMany.Load() }

// IPBans is how many requests the per-IP limit refused with HTTP 403.
func (s *Server) IPBans() int64 { return s.ipBans.Load() }

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

// Balance returns an account's available amount of a coin in the unified
// wallet (walletBalance less locked).
func (s *Server) Balance(apiKey, coin string) decimal.Decimal {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.accounts[apiKey]; a != nil {
		return a.unified[strings.ToUpper(coin)]
	}
	return decimal.Zero
}

// FundBalance returns an account's funding wallet balance of a coin.
func (s *Server) FundBalance(apiKey, coin string) decimal.Decimal {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.accounts[apiKey]; a != nil {
		return a.fund[strings.ToUpper(coin)]
	}
	return decimal.Zero
}

// Locked returns what open orders hold of a coin.
func (s *Server) Locked(apiKey, coin string) decimal.Decimal {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.accounts[apiKey]; a != nil {
		return a.locked[strings.ToUpper(coin)]
	}
	return decimal.Zero
}

// apiError is one of Bybit's error answers: HTTP status (200 for the
// business errors) and retCode.
type apiError struct {
	status int
	code   int
	msg    string
}

func errorf(code int, format string, args ...any) *apiError {
	return &apiError{status: http.StatusOK, code: code, msg: fmt.Sprintf(format, args...)}
}

// call is one request as a handler sees it.
type call struct {
	r     *http.Request
	query url.Values
	body  []byte
	acc   *account // nil on public routes
	now   time.Time
}

// route is one endpoint of the fake: its per-UID limit per window (none
// for public routes) and the query parameters it takes.
type route struct {
	private bool
	limit   int
	window  time.Duration
	params  []string
	handle  func(s *Server, c *call) (any, *apiError)
}

// routes maps "METHOD path" to its route. Limits: Source
// https://bybit-exchange.github.io/docs/v5/rate-limit.
var routes = map[string]*route{
	"GET /v5/market/time":             {handle: (*Server).handleTime},
	"GET /v5/market/instruments-info": {params: []string{"category", "symbol", "status", "baseCoin", "symbolType", "limit", "cursor"}, handle: (*Server).handleInstruments},
	"GET /v5/market/kline":            {params: []string{"category", "symbol", "interval", "start", "end", "limit"}, handle: (*Server).handleKline},
	"GET /v5/market/orderbook":        {params: []string{"category", "symbol", "limit"}, handle: (*Server).handleBook},

	"POST /v5/order/create":          {private: true, limit: 20, window: time.Second, handle: (*Server).handleCreate},
	"POST /v5/order/cancel":          {private: true, limit: 20, window: time.Second, handle: (*Server).handleCancel},
	"GET /v5/order/realtime":         {private: true, limit: 50, window: time.Second, params: []string{"category", "symbol", "baseCoin", "settleCoin", "orderId", "orderLinkId", "openOnly", "orderFilter", "limit", "cursor"}, handle: (*Server).handleRealtime},
	"GET /v5/order/history":          {private: true, limit: 50, window: time.Second, params: []string{"category", "symbol", "baseCoin", "settleCoin", "orderId", "orderLinkId", "orderFilter", "orderStatus", "startTime", "endTime", "limit", "cursor"}, handle: (*Server).handleHistory},
	"GET /v5/execution/list":         {private: true, limit: 50, window: time.Second, params: []string{"category", "symbol", "orderId", "orderLinkId", "baseCoin", "startTime", "endTime", "execType", "limit", "cursor"}, handle: (*Server).handleExecutions},
	"GET /v5/user/query-api":         {private: true, limit: 10, window: time.Second, handle: (*Server).handleQueryAPI},
	"GET /v5/account/wallet-balance": {private: true, limit: 50, window: time.Second, params: []string{"accountType", "coin"}, handle: (*Server).handleWalletBalance},

	"GET /v5/asset/transfer/query-account-coins-balance": {private: true, limit: 5, window: time.Second, params: []string{"memberId", "accountType", "coin", "withBonus"}, handle: (*Server).handleFundBalance},
	"GET /v5/asset/coin/query-info":                      {private: true, limit: 5, window: time.Second, params: []string{"coin"}, handle: (*Server).handleCoinInfo},
	"GET /v5/asset/deposit/query-record":                 {private: true, limit: 100, window: time.Minute, params: []string{"id", "txID", "coin", "startTime", "endTime", "limit", "cursor"}, handle: (*Server).handleDeposits},
	"GET /v5/asset/deposit/query-address":                {private: true, limit: 300, window: time.Minute, params: []string{"coin", "chainType"}, handle: (*Server).handleDepositAddress},
	"POST /v5/asset/withdraw/create":                     {private: true, limit: 5, window: time.Second, handle: (*Server).handleWithdraw},
	"GET /v5/asset/withdraw/query-record":                {private: true, limit: 300, window: time.Minute, params: []string{"withdrawID", "txID", "coin", "withdrawType", "startTime", "endTime", "limit", "cursor"}, handle: (*Server).handleWithdrawals},
	"POST /v5/asset/transfer/inter-transfer":             {private: true, limit: 60, window: time.Minute, handle: (*Server).handleTransfer},
	"GET /v5/asset/transfer/query-inter-transfer-list":   {private: true, limit: 60, window: time.Minute, params: []string{"transferId", "coin", "status", "startTime", "endTime", "limit", "cursor"}, handle: (*Server).handleTransfers},
}

// Paths of the WebSocket v5 (ws.go).
const (
	wsPublicPath  = "/v5/public/spot"
	wsPrivatePath = "/v5/private"
)

// serve counts the request, applies the fault hook and answers.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case wsPublicPath:
		s.faults.Count(r)
		s.ws.ServeHTTP(w, r)
		return
	case wsPrivatePath:
		s.faults.Count(r)
		s.wsPriv.ServeHTTP(w, r)
		return
	}
	f, done := s.faults.Before(w, r, "application/json")
	if done {
		return
	}
	status, header, body := s.handle(r)
	if f.DropAfter {
		fakehttp.Drop(w)
		return
	}
	for k, v := range header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// envelope writes Bybit's answer envelope.
func envelope(code int, msg string, result any, now time.Time) []byte {
	if result == nil {
		result = map[string]any{}
	}
	b, _ := json.Marshal(map[string]any{"retCode": code, "retMsg": msg, "result": result, "retExtInfo": map[string]any{}, "time": now.UnixMilli()})
	return b
}

// handle routes, limits, authenticates and answers one request.
func (s *Server) handle(r *http.Request) (int, map[string]string, []byte) {
	now := s.serverTime()
	header := map[string]string{}
	fail := func(e *apiError) (int, map[string]string, []byte) {
		return e.status, header, envelope(e.code, e.msg, nil, now)
	}
	if banned := s.meterIP(now); banned {
		s.ipBans.Add(1)
		return http.StatusForbidden, header, []byte("403 Forbidden: access too frequent")
	}
	rt := routes[r.Method+" "+r.URL.Path]
	if rt == nil {
		for k := range routes {
			if strings.HasSuffix(k, " "+r.URL.Path) {
				return http.StatusBadRequest, header, []byte("bad method")
			}
		}
		return http.StatusNotFound, header, []byte("404 page not found")
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return fail(errorf(10001, "cannot read the body"))
	}
	if r.Method == http.MethodGet && len(body) > 0 {
		// "A GET request with a body is rejected with HTTP 403".
		return http.StatusForbidden, header, []byte("403 Forbidden")
	}
	c := &call{r: r, body: body, now: now}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return fail(errorf(10001, "params error: malformed query"))
	}
	for name := range q {
		if !slices.Contains(rt.params, name) {
			return fail(errorf(10001, "params error: unknown parameter %s", name))
		}
	}
	c.query = q
	if rt.private {
		acc, e := s.authenticate(r, body, now)
		if e != nil {
			return fail(e)
		}
		c.acc = acc
		if e := s.meterUID(rt, r.Method+" "+r.URL.Path, acc, now, header); e != nil {
			return fail(e)
		}
		if r.Method == http.MethodPost && !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			return fail(errorf(10001, "params error: Content-Type must be application/json"))
		}
	} else if s.opts.LimitHeadersOnPublic {
		header["X-Bapi-Limit"] = "600"
		header["X-Bapi-Limit-Status"] = "599"
		header["X-Bapi-Limit-Reset-Timestamp"] = strconv.FormatInt(now.UnixMilli(), 10)
	}
	out, e := rt.handle(s, c)
	if e != nil {
		return fail(e)
	}
	msg := "OK"
	if strings.HasPrefix(r.URL.Path, "/v5/asset/") {
		msg = "success"
	}
	return http.StatusOK, header, envelope(0, msg, out, now)
}

// meterIP counts the request against the per-IP limit (600 in any 5
// seconds) and reports whether it is refused: past the limit, and for 10
// minutes after, every request is refused.
func (s *Server) meterIP(now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if now.Before(s.bannedUntil) {
		return true
	}
	cut := now.Add(-5 * time.Second)
	i := 0
	for i < len(s.ipLog) && !s.ipLog[i].After(cut) {
		i++
	}
	s.ipLog = append(s.ipLog[i:], now)
	if len(s.ipLog) > s.opts.IPLimit && !s.opts.NoRateLimits {
		s.bannedUntil = now.Add(10 * time.Minute)
		return true
	}
	return false
}

// meterUID counts a signed request against its endpoint's per-UID limit in
// a rolling window and writes the X-Bapi-Limit headers; over the limit it
// is retCode 10006.
func (s *Server) meterUID(rt *route, key string, acc *account, now time.Time, header map[string]string) *apiError {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key + "|" + acc.APIKey
	cut := now.Add(-rt.window)
	log := s.uidLog[k]
	i := 0
	for i < len(log) && !log[i].After(cut) {
		i++
	}
	log = append(log[i:], now)
	s.uidLog[k] = log
	header["X-Bapi-Limit"] = strconv.Itoa(rt.limit)
	remain := max(rt.limit-len(log), 0)
	header["X-Bapi-Limit-Status"] = strconv.Itoa(remain)
	header["X-Bapi-Limit-Reset-Timestamp"] = strconv.FormatInt(now.UnixMilli(), 10)
	if s.opts.NoRateLimits {
		header["X-Bapi-Limit-Status"] = strconv.Itoa(rt.limit)
		return nil
	}
	if remain == 0 {
		header["X-Bapi-Limit-Reset-Timestamp"] = strconv.FormatInt(log[0].Add(rt.window).UnixMilli(), 10)
	}
	if len(log) > rt.limit {
		s.tooMany.Add(1)
		return errorf(10006, "Too many visits!")
	}
	return nil
}

// Sign computes Bybit's HMAC signature the way the fake checks it.
func Sign(secret, timestamp, apiKey, recvWindow, payload string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(timestamp + apiKey + recvWindow + payload))
	return hex.EncodeToString(mac.Sum(nil))
}

// authenticate checks a signed request as Bybit does: the headers (10001),
// the key (10003, HTTP 401), the timing rule (10002) and the signature
// over the query string or body exactly as sent (10004).
func (s *Server) authenticate(r *http.Request, body []byte, now time.Time) (*account, *apiError) {
	key, ts, sig := r.Header.Get("X-BAPI-API-KEY"), r.Header.Get("X-BAPI-TIMESTAMP"), r.Header.Get("X-BAPI-SIGN")
	if key == "" || ts == "" || sig == "" {
		return nil, errorf(10001, "empty value: apiTimestamp[%s] apiKey[%s] apiSignature[%s]: openapi sign params error!", ts, key, sig)
	}
	s.mu.Lock()
	acc := s.accounts[key]
	s.mu.Unlock()
	if acc == nil {
		return nil, &apiError{status: http.StatusUnauthorized, code: 10003, msg: "API key is invalid."}
	}
	recvHeader := r.Header.Get("X-BAPI-RECV-WINDOW")
	recv := int64(5000)
	if recvHeader != "" {
		n, err := strconv.ParseInt(recvHeader, 10, 64)
		if err != nil || n <= 0 {
			return nil, errorf(10001, "params error: recv_window invalid")
		}
		recv = n
	}
	tsMS, err := strconv.ParseInt(ts, 10, 64)
	server := now.UnixMilli()
	if err != nil || tsMS < server-recv || tsMS >= server+1000 {
		return nil, errorf(10002, "invalid request, please check your server timestamp or recv_window param. req_timestamp[%s],server_timestamp[%d],recv_window[%d]", ts, server, recv)
	}
	payload := r.URL.RawQuery
	if r.Method == http.MethodPost {
		payload = string(body)
	}
	origin := ts + key + recvHeader + payload
	if want := Sign(acc.Secret, ts, key, recvHeader, payload); !hmac.Equal([]byte(want), []byte(sig)) {
		return nil, errorf(10004, "error sign! origin_string[%s]", origin)
	}
	return acc, nil
}

// decodeBody reads a JSON object body into v, refusing unknown fields as
// a parameter error.
func decodeBody(body []byte, v any) *apiError {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errorf(10001, "params error: %v", err)
	}
	return nil
}

// intParam reads an optional integer query parameter.
func intParam(q url.Values, name string, def int64) (int64, *apiError) {
	v := q.Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, errorf(10001, "params error: %s invalid", name)
	}
	return n, nil
}

// page cuts a list at an opaque cursor (the offset as text) and returns
// the next cursor ("" at the end).
func page[T any](list []T, cursor string, limit int) ([]T, string, *apiError) {
	off := 0
	if cursor != "" {
		n, err := strconv.Atoi(cursor)
		if err != nil || n < 0 {
			return nil, "", errorf(10001, "params error: cursor invalid")
		}
		off = min(n, len(list))
	}
	end := min(off+limit, len(list))
	next := ""
	if end < len(list) {
		next = strconv.Itoa(end)
	}
	return list[off:end], next, nil
}

// limitParam reads limit within [1, most], default def.
func limitParam(q url.Values, def, most int64) (int, *apiError) {
	n, e := intParam(q, "limit", def)
	if e != nil {
		return 0, e
	}
	if n < 1 || n > most {
		return 0, errorf(10001, "params error: limit must be in [1, %d]", most)
	}
	return int(n), nil
}

func ms(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }

func (s *Server) handleTime(c *call) (any, *apiError) {
	return map[string]string{"timeSecond": strconv.FormatInt(c.now.Unix(), 10), "timeNano": strconv.FormatInt(c.now.UnixNano(), 10)}, nil
}

func (s *Server) handleQueryAPI(c *call) (any, *apiError) {
	readOnly := 0
	if c.acc.ReadOnly {
		readOnly = 1
	}
	return map[string]any{"id": "13770661", "note": "exgate", "apiKey": c.acc.APIKey, "readOnly": readOnly, "ips": []string{"*"}, "uta": 1,
		"permissions": map[string][]string{"Spot": {"SpotTrade"}, "Wallet": {"AccountTransfer", "SubMemberTransfer", "Withdraw"}}}, nil
}
