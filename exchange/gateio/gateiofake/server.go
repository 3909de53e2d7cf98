// Package gateiofake is an in-process fake of Gate (Gate.io) API v4 for
// tests and load runs: the spot market data, account and order endpoints
// and the wallet endpoints the exgate adapter uses, under /api/v4, with
// Gate's payload shapes and error labels.
//
// It checks requests as Gate does: the KEY, Timestamp and SIGN headers,
// the HMAC-SHA512 signature over METHOD, path, URL-decoded query, the
// SHA-512 of the body (of the empty string when there is none) and the
// timestamp, a Timestamp within 60 s of the server's clock, parameter
// names and values, pair rules (precisions, minimums, trade status) and
// balances. Market orders fill at once against a static, deterministic
// order book (levels are not consumed) and move balances; limit orders
// (gtc, ioc, fok, poc) match the same book, rest, are canceled and filled
// by a hook (lifecycle.go), with open_orders and my_trades; candlesticks are
// a pure function of pair, interval and time. Rate limits follow Gate's
// documented budgets and answer 429 TOO_MANY_REQUESTS.
//
// The Spot WebSocket v4 at /ws/v4/ (ws.go) serves the live streams: signed
// spot.orders pushes on every order change, spot.order_book_update pushes
// with update ids, spot.candlesticks, with hooks to skip an update id,
// pause, drop or silence the streams while REST stays up.
//
// A fault hook (SetFault) delays requests, answers them with a given
// status and body, or drops the connection before or after processing,
// for the order-safety tests.
package gateiofake

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha512"
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

// wsPath is the path of the Spot WebSocket v4 (ws.go).
const wsPath = "/ws/v4/"

// Options configure a Server. Every field is optional.
type Options struct {
	// Now is the server's clock; default time.Now. SetClockOffset skews
	// it further.
	Now func() time.Time
	// NoRateLimits turns Gate's request budgets off (the
	// X-Gate-RateLimit headers are still sent).
	NoRateLimits bool
	// FeeRate is the taker fee of market orders; default 0.002.
	FeeRate string
}

// Account is an API key of the fake with its balances.
type Account struct {
	APIKey string
	Secret string
	// Balances are the available amounts per currency, as decimal
	// strings.
	Balances map[string]string
	// NoTrade and NoWithdraw take the key's spot trade or withdrawal
	// permission away (answered 403 FORBIDDEN).
	NoTrade    bool
	NoWithdraw bool
	// PendingWithdrawals leaves new withdrawals in REQUEST instead of
	// completing them (DONE with a block number) at once.
	PendingWithdrawals bool
	// Deposits replaces the seeded deposit history when not nil.
	Deposits []Deposit
}

// Deposit is one incoming transfer of an account.
type Deposit struct {
	ID       string
	Currency string
	Chain    string
	Address  string
	Memo     string
	TxID     string
	Amount   string
	Status   string
	Time     time.Time
}

// Fault is what the fault hook does with one request (fakehttp.Fault).
type Fault = fakehttp.Fault

// SentOrder is the body of one POST /spot/orders that passed
// authentication, as the fake read it.
type SentOrder struct {
	Text         string `json:"text"`
	CurrencyPair string `json:"currency_pair"`
	Type         string `json:"type"`
	Account      string `json:"account"`
	Side         string `json:"side"`
	Amount       string `json:"amount"`
	Price        string `json:"price"`
	TimeInForce  string `json:"time_in_force"`
	Iceberg      string `json:"iceberg"`
	ActionMode   string `json:"action_mode"`
}

// Server is a running fake. Its exported methods are safe for concurrent
// use with the requests it serves.
type Server struct {
	// URL is the base URL to give the adapter (no /api/v4, no trailing
	// slash).
	URL string

	srv      *httptest.Server
	now      func() time.Time
	offsetMS atomic.Int64
	noLimits bool
	feeRate  decimal.Decimal
	faults   fakehttp.Faults

	mu        sync.Mutex
	pairs     map[string]*Pair
	books     map[string]*book
	accounts  map[string]*account
	windows   map[string]*window
	hold      bool
	ws        *fakews.Server
	wsClients map[*wsClient]bool
	candles   map[string]*liveCandle
	// wsAuthFailures counts refused private stream subscriptions.
	wsAuthFailures int
	wsSilent       bool
	nextOrderID    int64
	nextTradeID    int64
	nextWID        int64
}

// account is the fake's state of one API key.
type account struct {
	Account
	avail, locked map[string]decimal.Decimal
	orders        []*order
	sent          []SentOrder
	trades        []*trade
	deposits      []Deposit
	withdrawals   []*withdrawal
}

// New starts a fake on a loopback port. Close it when done.
func New(opts Options) *Server {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	fee := decimal.RequireFromString("0.002")
	if opts.FeeRate != "" {
		fee = decimal.RequireFromString(opts.FeeRate)
	}
	s := &Server{
		now:         opts.Now,
		noLimits:    opts.NoRateLimits,
		feeRate:     fee,
		pairs:       map[string]*Pair{},
		books:       map[string]*book{},
		accounts:    map[string]*account{},
		windows:     map[string]*window{},
		wsClients:   map[*wsClient]bool{},
		candles:     map[string]*liveCandle{},
		nextOrderID: 394120049349,
		nextTradeID: 5736713,
		nextWID:     64413318,
	}
	for _, p := range defaultPairs() {
		s.pairs[p.ID] = p
		s.books[p.ID] = generateBook(p)
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
	if a.APIKey == "" || a.Secret == "" {
		return fmt.Errorf("gateiofake: account needs an API key and a secret")
	}
	acc := &account{Account: a, avail: map[string]decimal.Decimal{}, locked: map[string]decimal.Decimal{}}
	for cur, v := range a.Balances {
		d, err := decimal.NewFromString(v)
		if err != nil || d.IsNegative() {
			return fmt.Errorf("gateiofake: balance %s %q: not a non-negative decimal", cur, v)
		}
		acc.avail[strings.ToUpper(cur)] = d
	}
	acc.deposits = a.Deposits
	if acc.deposits == nil {
		acc.deposits = SeedDeposits(s.serverTime())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.accounts[a.APIKey]; dup {
		return fmt.Errorf("gateiofake: API key %s already added", a.APIKey)
	}
	s.accounts[a.APIKey] = acc
	return nil
}

// SeedDeposits is the deposit history a new account gets: completed and
// pending deposits of several currencies over the last days, relative to
// now.
func SeedDeposits(now time.Time) []Deposit {
	return []Deposit{
		{ID: "d33361395", Currency: "USDT", Chain: "TRX", Address: "TXkZ5Ff4qgSBVRrfBMfxcDxUrW5g1mDtKf", TxID: "9f1a0f2b6c3e4d5a", Amount: "1500", Status: "DONE", Time: now.Add(-72 * time.Hour)},
		{ID: "d33361402", Currency: "BTC", Chain: "BTC", Address: "bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh", TxID: "4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b", Amount: "0.25", Status: "DONE", Time: now.Add(-48 * time.Hour)},
		{ID: "d33361417", Currency: "ETH", Chain: "ETH", Address: "0x0ab891497116f7f5532a4c2f4f7b1784488628e1", TxID: "0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060", Amount: "3.5", Status: "TRACK", Time: now.Add(-2 * time.Hour)},
		{ID: "d33361420", Currency: "USDT", Chain: "ETH", Address: "0x0ab891497116f7f5532a4c2f4f7b1784488628e1", TxID: "0x9b2f1c5d8e7a6b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c", Amount: "250.5", Status: "PEND", Time: now.Add(-30 * time.Minute)},
		{ID: "d33361433", Currency: "XRP", Chain: "XRP", Address: "rLdinLq5CJood9wdjY9ZCdgycK8KGevkUj", Memo: "104223", TxID: "E3FE6EA3D48F0C2B639448020EA4F03D4F4F8FFDB243A852A0F59177921B4879", Amount: "120", Status: "BLOCKED", Time: now.Add(-96 * time.Hour)},
	}
}

// SetFault installs the fault hook (nil removes it).
func (s *Server) SetFault(f func(r *http.Request) Fault) {
	s.faults.SetHook(f)
}

// SetClockOffset makes the server's clock run d ahead of Options.Now
// (negative: behind), to provoke REQUEST_EXPIRED answers.
func (s *Server) SetClockOffset(d time.Duration) { s.offsetMS.Store(d.Milliseconds()) }

// serverTime is the server's clock.
func (s *Server) serverTime() time.Time {
	return s.now().Add(time.Duration(s.offsetMS.Load()) * time.Millisecond)
}

// Requests returns how many requests reached path (for example
// "/api/v4/spot/orders", any method), faults included.
func (s *Server) Requests(path string) int {
	return s.faults.Requests(path)
}

// Busy returns how many requests the fake is handling now, a WebSocket
// connection while it is open: a request its client gave up on may still
// be held by a fault's Delay, to be processed after.
func (s *Server) Busy() int { return s.faults.Busy() }

// ResetCounters forgets the request counts.
func (s *Server) ResetCounters() {
	s.faults.ResetCounters()
}

// OrdersByText returns how many orders the account holds (open or
// finished) with the given text ("t-..." client order id).
func (s *Server) OrdersByText(apiKey, text string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.accounts[apiKey]
	if a == nil {
		return 0
	}
	n := 0
	for _, o := range a.orders {
		if o.text == text {
			n++
		}
	}
	return n
}

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

// Withdrawals returns how many withdrawals the account made with the
// given withdraw_order_id.
func (s *Server) Withdrawals(apiKey, withdrawOrderID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.accounts[apiKey]
	if a == nil {
		return 0
	}
	n := 0
	for _, w := range a.withdrawals {
		if w.orderID == withdrawOrderID {
			n++
		}
	}
	return n
}

// Balance returns an account's available amount of a currency.
func (s *Server) Balance(apiKey, currency string) decimal.Decimal {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.accounts[apiKey]; a != nil {
		return a.avail[strings.ToUpper(currency)]
	}
	return decimal.Zero
}

// HoldOrders makes new market orders stay open (nothing filled, funds
// locked) until FillHeldOrders; false places them normally again.
func (s *Server) HoldOrders(hold bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hold = hold
}

// FillHeldOrders fills every open order against the book.
func (s *Server) FillHeldOrders() {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.serverTime()
	for _, a := range s.accounts {
		for _, o := range a.orders {
			if o.status == "open" && o.typ != "limit" {
				a.locked[o.lockedIn] = a.locked[o.lockedIn].Sub(o.amount)
				a.avail[o.lockedIn] = a.avail[o.lockedIn].Add(o.amount)
				s.execute(a, o, now)
				s.pushOrder(a, o, "finish")
			}
		}
	}
}

// SetWithdrawalStatus changes the status (and block number) of an
// account's withdrawal, found by its id ("w...").
func (s *Server) SetWithdrawalStatus(apiKey, id, status, blockNumber string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.accounts[apiKey]
	if a == nil {
		return fmt.Errorf("gateiofake: no account %s", apiKey)
	}
	for _, w := range a.withdrawals {
		if w.id == id {
			w.status, w.blockNumber = status, blockNumber
			return nil
		}
	}
	return fmt.Errorf("gateiofake: no withdrawal %s", id)
}

// SetTradeStatus changes a pair's trade_status (untradable, buyable,
// sellable, tradable).
func (s *Server) SetTradeStatus(pairID, status string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.pairs[pairID]; p != nil {
		cp := *p
		cp.TradeStatus = status
		s.pairs[pairID] = &cp
	}
}

// SetBook replaces the order book of a pair (bids and asks best first).
func (s *Server) SetBook(pairID string, bids, asks []Level) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := newBook(bids, asks)
	if old := s.books[pairID]; old != nil {
		b.id = old.id + 1
	}
	s.books[pairID] = b
}

// apiError is one of Gate's error answers.
type apiError struct {
	status  int
	label   string
	message string
}

func (e *apiError) Error() string { return e.label + ": " + e.message }

func errorf(status int, label, format string, args ...any) *apiError {
	return &apiError{status: status, label: label, message: fmt.Sprintf(format, args...)}
}

func invalidParam(name, value string) *apiError {
	return errorf(http.StatusBadRequest, "INVALID_PARAM_VALUE", "Invalid parameter `%s` with value: %s", name, value)
}

func missingParam(name string) *apiError {
	return errorf(http.StatusBadRequest, "MISSING_REQUIRED_PARAM", "Missing required parameter: %s", name)
}

// call is one request as a handler sees it.
type call struct {
	r     *http.Request
	query url.Values
	body  []byte
	acc   *account // nil on public routes
	id    string   // {order_id} of /spot/orders/{order_id}
	now   time.Time
}

// route is one endpoint of the fake.
type route struct {
	method  string
	private bool
	// params are the query parameter names Gate takes.
	params []string
	// limit and window are the endpoint's budget; perPair keys it by
	// currency pair as well (order placement).
	limit   int
	window  time.Duration
	perPair bool
	handle  func(s *Server, c *call) (any, *apiError)
	// status is the success status (200 unless set).
	status int
}

// routes maps "METHOD path-under-/api/v4" to its route; GET and DELETE
// /spot/orders/{order_id} are matched by prefix.
var routes = map[string]*route{
	"GET /spot/time":                 {method: http.MethodGet, limit: 200, window: 10 * time.Second, handle: (*Server).handleTime},
	"GET /spot/currency_pairs":       {method: http.MethodGet, limit: 200, window: 10 * time.Second, handle: (*Server).handlePairs},
	"GET /spot/candlesticks":         {method: http.MethodGet, params: []string{"currency_pair", "interval", "limit", "from", "to"}, limit: 200, window: 10 * time.Second, handle: (*Server).handleCandles},
	"GET /spot/order_book":           {method: http.MethodGet, params: []string{"currency_pair", "interval", "limit", "with_id"}, limit: 200, window: 10 * time.Second, handle: (*Server).handleBook},
	"GET /wallet/currency_chains":    {method: http.MethodGet, params: []string{"currency"}, limit: 200, window: 10 * time.Second, handle: (*Server).handleChains},
	"GET /account/detail":            {method: http.MethodGet, private: true, limit: 80, window: 10 * time.Second, handle: (*Server).handleAccountDetail},
	"GET /spot/accounts":             {method: http.MethodGet, private: true, params: []string{"currency"}, limit: 200, window: 10 * time.Second, handle: (*Server).handleAccounts},
	"POST /spot/orders":              {method: http.MethodPost, private: true, limit: 10, window: time.Second, perPair: true, handle: (*Server).handleCreateOrder, status: http.StatusCreated},
	"GET /spot/orders":               {method: http.MethodGet, private: true, params: []string{"currency_pair", "status", "page", "limit", "account", "from", "to", "side"}, limit: 200, window: 10 * time.Second, handle: (*Server).handleListOrders},
	"GET /spot/orders/{order_id}":    {method: http.MethodGet, private: true, params: []string{"currency_pair", "account"}, limit: 200, window: 10 * time.Second, handle: (*Server).handleGetOrder},
	"DELETE /spot/orders/{order_id}": {method: http.MethodDelete, private: true, params: []string{"currency_pair", "account", "action_mode"}, limit: 200, window: time.Second, handle: (*Server).handleCancelOrder},
	"GET /spot/open_orders":          {method: http.MethodGet, private: true, params: []string{"page", "limit", "account"}, limit: 200, window: 10 * time.Second, handle: (*Server).handleOpenOrders},
	"GET /spot/my_trades":            {method: http.MethodGet, private: true, params: []string{"currency_pair", "limit", "page", "order_id", "account", "from", "to"}, limit: 200, window: 10 * time.Second, handle: (*Server).handleMyTrades},
	"GET /wallet/deposits":           {method: http.MethodGet, private: true, params: []string{"currency", "from", "to", "limit", "offset"}, limit: 200, window: 10 * time.Second, handle: (*Server).handleDeposits},
	"GET /wallet/deposit_address":    {method: http.MethodGet, private: true, params: []string{"currency"}, limit: 200, window: 10 * time.Second, handle: (*Server).handleDepositAddress},
	"GET /wallet/withdrawals":        {method: http.MethodGet, private: true, params: []string{"currency", "withdraw_id", "asset_class", "withdraw_order_id", "from", "to", "limit", "offset"}, limit: 200, window: 10 * time.Second, handle: (*Server).handleWithdrawals},
	"GET /wallet/withdraw_status":    {method: http.MethodGet, private: true, params: []string{"currency"}, limit: 200, window: 10 * time.Second, handle: (*Server).handleWithdrawStatus},
	"POST /withdrawals":              {method: http.MethodPost, private: true, limit: 1, window: 3 * time.Second, handle: (*Server).handleWithdraw},
}

// serve counts the request, applies the fault hook and answers.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == wsPath {
		s.faults.Count(r)
		s.ws.ServeHTTP(w, r)
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

// handle routes, authenticates, meters and answers one request.
func (s *Server) handle(r *http.Request) (int, map[string]string, []byte) {
	now := s.serverTime()
	header := map[string]string{
		"X-In-Time":  strconv.FormatInt(now.UnixMicro(), 10),
		"X-Out-Time": strconv.FormatInt(now.UnixMicro(), 10),
		"Date":       now.UTC().Format(http.TimeFormat),
	}
	fail := func(e *apiError) (int, map[string]string, []byte) {
		b, _ := json.Marshal(map[string]string{"label": e.label, "message": e.message})
		return e.status, header, b
	}
	const prefix = "/api/v4"
	if !strings.HasPrefix(r.URL.Path, prefix+"/") {
		return fail(errorf(http.StatusNotFound, "NOT_FOUND", "Not found"))
	}
	path := strings.TrimPrefix(r.URL.Path, prefix)
	key, id := r.Method+" "+path, ""
	if rest, ok := strings.CutPrefix(path, "/spot/orders/"); ok && rest != "" && !strings.Contains(rest, "/") {
		key, id = r.Method+" /spot/orders/{order_id}", rest
	}
	rt := routes[key]
	if rt == nil {
		for k := range routes {
			if strings.HasSuffix(k, " "+path) {
				return fail(errorf(http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "Method not allowed"))
			}
		}
		return fail(errorf(http.StatusNotFound, "NOT_FOUND", "Not found"))
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return fail(errorf(http.StatusBadRequest, "INVALID_REQUEST_BODY", "Cannot read the request body"))
	}
	c := &call{r: r, body: body, id: id, now: now}
	if rt.private {
		acc, e := s.authenticate(r, body, now)
		if e != nil {
			return fail(e)
		}
		c.acc = acc
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return fail(errorf(http.StatusBadRequest, "INVALID_PROTOCOL", "Malformed query string"))
	}
	for name := range q {
		if !slices.Contains(rt.params, name) {
			return fail(errorf(http.StatusBadRequest, "INVALID_PARAM_VALUE", "Unknown parameter `%s`", name))
		}
	}
	c.query = q
	if rt.method == http.MethodPost {
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			return fail(errorf(http.StatusBadRequest, "INVALID_CONTENT_TYPE", "Content-Type must be application/json"))
		}
	}
	if e := s.meter(rt, key, c, header); e != nil {
		return fail(e)
	}
	if exp := r.Header.Get("x-gate-exptime"); exp != "" {
		ms, err := strconv.ParseInt(exp, 10, 64)
		if err != nil {
			return fail(errorf(http.StatusBadRequest, "INVALID_PARAM_VALUE", "Invalid x-gate-exptime header: %s", exp))
		}
		if now.UnixMilli() > ms {
			return fail(errorf(http.StatusBadRequest, "REQUEST_EXPIRED", "Request expired by x-gate-exptime"))
		}
	}
	out, e := rt.handle(s, c)
	if e != nil {
		return fail(e)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return fail(errorf(http.StatusInternalServerError, "INTERNAL", "encoding: %v", err))
	}
	status := http.StatusOK
	if rt.status != 0 {
		status = rt.status
	}
	return status, header, b
}

// Sign computes Gate's APIv4 signature the way the fake checks it: hex
// HMAC-SHA512 of METHOD\nPATH\nQUERY\nhex(SHA512(BODY))\nTIMESTAMP.
func Sign(secret, method, path, query string, body []byte, timestamp string) string {
	h := sha512.Sum512(body)
	msg := method + "\n" + path + "\n" + query + "\n" + hex.EncodeToString(h[:]) + "\n" + timestamp
	mac := hmac.New(sha512.New, []byte(secret))
	mac.Write([]byte(msg))
	return hex.EncodeToString(mac.Sum(nil))
}

// timestampWindow is how far Gate lets Timestamp stray from its clock.
const timestampWindow = 60 * time.Second

// authenticate checks the headers and signature of a private request as
// Gate does: the Timestamp window first, then the key, then the
// signature over the decoded query and the body's hash.
func (s *Server) authenticate(r *http.Request, body []byte, now time.Time) (*account, *apiError) {
	for _, h := range []string{"KEY", "Timestamp", "SIGN"} {
		if r.Header.Get(h) == "" {
			return nil, errorf(http.StatusBadRequest, "MISSING_REQUIRED_HEADER", "Missing required header: %s", h)
		}
	}
	ts := r.Header.Get("Timestamp")
	sec, err := decimal.NewFromString(ts)
	if err != nil || strings.ContainsAny(ts, "eE ") {
		return nil, errorf(http.StatusBadRequest, "INVALID_PARAM_VALUE", "Invalid Timestamp header: %s", ts)
	}
	gap := sec.Sub(decimal.NewFromInt(now.UnixMilli()).Shift(-3)).Abs()
	if gap.GreaterThan(decimal.NewFromInt(int64(timestampWindow / time.Second))) {
		return nil, errorf(http.StatusUnauthorized, "REQUEST_EXPIRED", "gap between request Timestamp and server time exceeds 60")
	}
	s.mu.Lock()
	acc := s.accounts[r.Header.Get("KEY")]
	s.mu.Unlock()
	if acc == nil {
		return nil, errorf(http.StatusUnauthorized, "INVALID_KEY", "Invalid key provided")
	}
	query, err := url.QueryUnescape(r.URL.RawQuery)
	if err != nil {
		return nil, errorf(http.StatusUnauthorized, "INVALID_SIGNATURE", "Signature mismatch")
	}
	want := Sign(acc.Secret, r.Method, r.URL.EscapedPath(), query, body, ts)
	got, err := hex.DecodeString(strings.ToLower(r.Header.Get("SIGN")))
	wantRaw, _ := hex.DecodeString(want)
	if err != nil || !hmac.Equal(got, wantRaw) {
		return nil, errorf(http.StatusUnauthorized, "INVALID_SIGNATURE", "Signature mismatch")
	}
	return acc, nil
}

// window counts one budget's requests in fixed windows.
type window struct {
	start time.Time
	count int
}

// meter takes one request from the route's budget (per IP for public
// routes, per key for private ones, and per pair for orders) and writes
// Gate's rate-limit headers.
func (s *Server) meter(rt *route, key string, c *call, header map[string]string) *apiError {
	who := "ip"
	if c.acc != nil {
		who = c.acc.APIKey
	}
	wkey := key + "|" + who
	if rt.perPair {
		var b struct {
			CurrencyPair string `json:"currency_pair"`
		}
		_ = json.Unmarshal(c.body, &b)
		wkey += "|" + b.CurrencyPair
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.windows[wkey]
	start := c.now.Truncate(rt.window)
	if w == nil || !w.start.Equal(start) {
		w = &window{start: start}
		s.windows[wkey] = w
	}
	w.count++
	remain := max(rt.limit-w.count, 0)
	header["X-Gate-RateLimit-Limit"] = strconv.Itoa(rt.limit)
	header["X-Gate-RateLimit-Requests-Remain"] = strconv.Itoa(remain)
	header["X-Gate-RateLimit-Reset-Timestamp"] = strconv.FormatInt(c.now.Unix(), 10)
	if s.noLimits || w.count <= rt.limit {
		if s.noLimits {
			header["X-Gate-RateLimit-Requests-Remain"] = strconv.Itoa(rt.limit)
		}
		return nil
	}
	header["X-Gate-RateLimit-Reset-Timestamp"] = strconv.FormatInt(start.Add(rt.window).Add(time.Second-1).Unix(), 10)
	return errorf(http.StatusTooManyRequests, "TOO_MANY_REQUESTS", "Request Rate limit Exceeded")
}

// decodeBody reads a JSON object body into v, refusing unknown fields.
func decodeBody(body []byte, v any) *apiError {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errorf(http.StatusBadRequest, "INVALID_REQUEST_BODY", "Invalid request body: %v", err)
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
		return 0, invalidParam(name, v)
	}
	return n, nil
}

// decimalText writes a decimal in plain notation.
func decimalText(d decimal.Decimal) string { return d.String() }

func (s *Server) handleTime(c *call) (any, *apiError) {
	return map[string]int64{"server_time": c.now.UnixMilli()}, nil
}
