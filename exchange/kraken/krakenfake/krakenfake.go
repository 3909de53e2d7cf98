// Package krakenfake is an in-process fake of Kraken Spot's REST API for
// tests and local runs: an httptest server that checks requests as Kraken
// does (API-Key, API-Sign over path + SHA256(nonce + body), a nonce that
// must exceed the last one accepted for the key, parameter names and
// values) and answers with Kraken's payload shapes: {"error":[...],
// "result":...}, X/Z-prefixed asset ids (XXBT, ZUSD), pair keys (XXBTZUSD,
// XBTUSDT), Kraken's error strings.
//
// It serves Assets, AssetPairs, OHLC, Depth, Time, Balance, BalanceEx,
// AddOrder (market orders, filled against the fake's book, moving
// balances; limit orders, see lifecycle.go; validate=true), QueryOrders,
// OpenOrders, ClosedOrders, CancelOrder, TradesHistory, DepositMethods,
// DepositAddresses, DepositStatus, WithdrawMethods, WithdrawAddresses,
// WithdrawInfo, Withdraw, WithdrawStatus and GetWebSocketsToken, and
// Kraken's WebSocket API v2 (ws.go). Private calls take form-encoded
// bodies only (Kraken also takes JSON).
package krakenfake

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate/exchange/internal/fakehttp"
	"github.com/exgate/exgate/exchange/internal/fakews"
)

// Options configure a Server.
type Options struct {
	// Now is the fake's clock (order and funding times, OHLC windows);
	// default time.Now.
	Now func() time.Time
	// FeeRate is the taker fee of fills; default 0.0026 (0.26 %).
	FeeRate decimal.Decimal
	// WeeklyMonday makes 10080-minute OHLC candles start on Monday 00:00
	// UTC; by default they start at multiples of a week since the Unix
	// epoch (Thursdays).
	WeeklyMonday bool
	// WSPath and WSAuthPath are the paths of the public and authenticated
	// WebSocket v2 endpoints (ws.go); default DefaultWSPath and
	// DefaultWSAuthPath.
	WSPath, WSAuthPath string
	// Heartbeat is how often a WebSocket connection gets Kraken's
	// heartbeat message; default 1 s (Kraken's), negative for none.
	Heartbeat time.Duration
}

// Fault is what the fault hook makes the server do with a request
// (fakehttp.Fault).
type Fault = fakehttp.Fault

// Account is a Kraken account of the fake.
type Account struct {
	// Key is the API key; Secret the base64 API secret.
	Key, Secret string
	// Balances are amounts by Kraken asset id ("XXBT", "ZUSD", "USDT",
	// and suffixed keys such as "XBT.F" for earn holdings).
	Balances map[string]string
	// Holds are BalanceEx hold_trade amounts by asset id.
	Holds map[string]string
	// WithdrawKeys are the saved withdrawal addresses.
	WithdrawKeys []WithdrawKey
	// Deposits are the deposit history; nil gets SeedDeposits, an empty
	// slice none.
	Deposits []Deposit
}

// WithdrawKey is a withdrawal address saved in the account under Name.
type WithdrawKey struct {
	Name string
	// Asset is the Kraken asset id (XXBT, USDT…).
	Asset, Method, Address, Tag string
	Verified                    bool
}

// Deposit is one deposit of the history (DepositStatus row).
type Deposit struct {
	Refid, Asset, Method, Txid, Info, Amount, Fee string
	Time                                          int64
	Status, StatusProp                            string
}

// Server is the fake Kraken API.
type Server struct {
	// URL is the base URL to give the adapter (no /0).
	URL string
	// WSURL and WSAuthURL are the public and authenticated WebSocket v2
	// endpoints (ws://…/v2, ws://…/ws-auth/v2 by default).
	WSURL, WSAuthURL string

	srv          *httptest.Server
	now          func() time.Time
	feeRate      decimal.Decimal
	weeklyMonday bool

	mu       sync.Mutex
	assets   []Asset
	pairs    []*Pair
	books    map[string]*book
	accounts map[string]*account
	refused  map[string]int
	faults   fakehttp.Faults
	hold     bool
	seq      int
	tradeSeq int

	// WebSocket v2 (ws.go).
	pubWS, authWS *fakews.Server
	heartbeat     time.Duration
	clients       map[*wsClient]struct{}
	seqConn       int
	tokens        map[string]string // token → account key
	tokenSeq      int
	refuseTokens  bool
	badChecksum   bool
	changes       int
	candles       map[string]*liveCandle
	pushed        map[*order]pushState
	execSeq       int
}

type account struct {
	Account
	secret      []byte
	lastNonce   uint64
	balances    map[string]decimal.Decimal
	holds       map[string]decimal.Decimal
	orders      []*order
	trades      []*trade
	validated   int
	deposits    []Deposit
	addresses   map[string][]depositAddress
	withdrawals []*withdrawal
}

// New starts a fake with the default markets and no accounts.
func New(opts Options) *Server {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.FeeRate.IsZero() {
		opts.FeeRate = decimal.RequireFromString("0.0026")
	}
	s := &Server{
		now:          opts.Now,
		feeRate:      opts.FeeRate,
		weeklyMonday: opts.WeeklyMonday,
		assets:       defaultAssets(),
		pairs:        defaultPairs(),
		books:        make(map[string]*book),
		accounts:     make(map[string]*account),
		refused:      make(map[string]int),
		heartbeat:    opts.Heartbeat,
		clients:      make(map[*wsClient]struct{}),
		tokens:       make(map[string]string),
		candles:      make(map[string]*liveCandle),
		pushed:       make(map[*order]pushState),
	}
	if s.heartbeat == 0 {
		s.heartbeat = time.Second
	}
	if opts.WSPath == "" {
		opts.WSPath = DefaultWSPath
	}
	if opts.WSAuthPath == "" {
		opts.WSAuthPath = DefaultWSAuthPath
	}
	s.pubWS, s.authWS = fakews.New(s.serveWS(false)), fakews.New(s.serveWS(true))
	for _, p := range s.pairs {
		s.books[p.Key] = generateBook(p)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /0/public/{method}", s.public)
	mux.HandleFunc("POST /0/public/{method}", s.public)
	mux.HandleFunc("POST /0/private/{method}", s.private)
	mux.Handle("GET "+opts.WSPath, s.pubWS)
	mux.Handle("GET "+opts.WSAuthPath, s.authWS)
	s.srv = httptest.NewServer(s.faults.Track(s.withFaults(mux)))
	s.URL = s.srv.URL
	s.WSURL = "ws" + strings.TrimPrefix(s.URL, "http") + opts.WSPath
	s.WSAuthURL = "ws" + strings.TrimPrefix(s.URL, "http") + opts.WSAuthPath
	return s
}

// Close drops the WebSocket connections and stops the server.
func (s *Server) Close() {
	s.PauseStreams()
	s.srv.Close()
}

// AddAccount adds (or replaces) an account.
func (s *Server) AddAccount(a Account) error {
	secret, err := base64.StdEncoding.DecodeString(a.Secret)
	if err != nil {
		return fmt.Errorf("krakenfake: secret is not base64: %w", err)
	}
	acct := &account{
		Account:   a,
		secret:    secret,
		balances:  make(map[string]decimal.Decimal),
		holds:     make(map[string]decimal.Decimal),
		addresses: make(map[string][]depositAddress),
	}
	for id, v := range a.Balances {
		d, err := decimal.NewFromString(v)
		if err != nil {
			return fmt.Errorf("krakenfake: balance %s: %w", id, err)
		}
		acct.balances[id] = d
	}
	for id, v := range a.Holds {
		d, err := decimal.NewFromString(v)
		if err != nil {
			return fmt.Errorf("krakenfake: hold %s: %w", id, err)
		}
		acct.holds[id] = d
	}
	acct.deposits = a.Deposits
	if acct.deposits == nil {
		acct.deposits = SeedDeposits(s.now())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.accounts[a.Key] = acct
	return nil
}

// SeedDeposits is the default deposit history: a completed BTC deposit, a
// pending USDT (TRC20) one, a settled ETH one and a failed SOL one.
func SeedDeposits(now time.Time) []Deposit {
	t := now.Unix()
	return []Deposit{
		{Refid: "FTQcuak-V6Za8qrWnhzTx67yYHz8Tg", Asset: "XXBT", Method: "Bitcoin", Txid: "6544b41b607d8b2512baf801755a3a87b6890eacdb451be8a94059fb11f0a8d9", Info: "2Myd4eaAW96ojk38A2uDK4FbioCayvkEgVq", Amount: "0.78125000", Fee: "0.0000000000", Time: t - 86400, Status: "Success"},
		{Refid: "FTQcuak-A1b2c3d4e5f6g7h8i9j0kLmN", Asset: "USDT", Method: "Tether USD (TRC20)", Txid: "9c1e4b7a2d5f8e0b3a6c9d2f5e8b1a4c7d0e3f6a9b2c5d8e1f4a7b0c3d6e9f2a", Info: "TXb5yL7eYkLCfR5dMuQ2RbvmP9tJ3fDhGq", Amount: "250.00000000", Fee: "0.00000000", Time: t - 600, Status: "Pending"},
		{Refid: "FTQcuak-Z9y8x7w6v5u4t3s2r1q0pOnM", Asset: "XETH", Method: "Ether (Hex)", Txid: "0x4e3a3754410177e6937ef1f84bba68ea139e8d1a2258c5f85db9f1cd715a1bdd", Info: "0x8ba1f109551bd432803012645ac136ddd64dba72", Amount: "1.5000000000", Fee: "0.0000000000", Time: t - 3600, Status: "Settled"},
		{Refid: "FTQcuak-K3j4h5g6f7d8s9a0p1o2iUyT", Asset: "SOL", Method: "Solana", Txid: "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW", Info: "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV", Amount: "10.0000000000", Fee: "0.0000000000", Time: t - 7200, Status: "Failure"},
	}
}

// SetFault installs a hook consulted for every request (nil removes it).
func (s *Server) SetFault(f func(*http.Request) Fault) {
	s.faults.SetHook(f)
}

// Requests returns how many requests reached path (e.g.
// "/0/private/AddOrder"), faulted ones included.
func (s *Server) Requests(path string) int {
	return s.faults.Requests(path)
}

// Busy returns how many requests the fake is handling now, a WebSocket
// connection while it is open: a request its client gave up on may still
// be held by a fault's Delay, to be processed after.
func (s *Server) Busy() int { return s.faults.Busy() }

// Refused returns how many private calls were answered with the Kraken
// error msg (e.g. "EAPI:Invalid nonce").
func (s *Server) Refused(msg string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused[msg]
}

// OrdersByClientID returns how many orders key holds with cl_ord_id id.
func (s *Server) OrdersByClientID(key, id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	if a := s.accounts[key]; a != nil {
		for _, o := range a.orders {
			if o.ClOrdID == id {
				n++
			}
		}
	}
	return n
}

// Balance returns key's balance of a Kraken asset id.
func (s *Server) Balance(key, assetID string) decimal.Decimal {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.accounts[key]; a != nil {
		return a.balances[assetID]
	}
	return decimal.Zero
}

// HoldOrders makes new orders stay open and unfilled until FillHeldOrders.
func (s *Server) HoldOrders(hold bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hold = hold
}

// FillHeldOrders fills every open order against the book.
func (s *Server) FillHeldOrders() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.accounts {
		for _, o := range a.orders {
			if o.Status == "open" && o.OrderType == "market" {
				s.fill(a, o)
			}
		}
		s.syncExecutions(a)
	}
}

// SetWithdrawalStatus sets a withdrawal's status and status-prop (and a
// txid once it is Success).
// WithdrawalsOf counts key's withdrawals of assetID (a Kraken asset id,
// such as XXBT) whose net amount, what the destination receives, equals
// amount. Kraken has no client withdrawal id; tests tell withdrawals apart
// by giving each its own amount.
func (s *Server) WithdrawalsOf(key, assetID string, amount decimal.Decimal) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.accounts[key]
	if a == nil {
		return 0
	}
	n := 0
	for _, w := range a.withdrawals {
		if w.Asset == assetID && w.Amount.Equal(amount) {
			n++
		}
	}
	return n
}

// SettleWithdrawals marks every withdrawal of key still in progress as
// sent (Success, with a txid), as Kraken does once it is on chain.
func (s *Server) SettleWithdrawals(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.accounts[key]; a != nil {
		for _, w := range a.withdrawals {
			if w.Status == "Initial" || w.Status == "Pending" || w.Status == "Settled" {
				w.Status, w.StatusProp = "Success", ""
				if w.Txid == "" {
					w.Txid = fmt.Sprintf("%064x", sha256.Sum256([]byte(w.Refid)))
				}
			}
		}
	}
}

func (s *Server) SetWithdrawalStatus(key, refid, status, prop string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.accounts[key]
	if a == nil {
		return fmt.Errorf("krakenfake: no account %s", key)
	}
	for _, w := range a.withdrawals {
		if w.Refid == refid {
			w.Status, w.StatusProp = status, prop
			if status == "Success" && w.Txid == "" {
				w.Txid = fmt.Sprintf("%064x", sha256.Sum256([]byte(refid)))
			}
			return nil
		}
	}
	return fmt.Errorf("krakenfake: no withdrawal %s", refid)
}

// SetBook replaces the order book of a pair (bids best first, asks best
// first).
func (s *Server) SetBook(pairKey string, bids, asks []Level) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.books[pairKey]
	s.books[pairKey] = &book{bids: bids, asks: asks}
	if p := s.pairByName(pairKey); p != nil && old != nil {
		s.pushBook(p, old)
	}
}

// withFaults counts requests and applies the fault hook.
func (s *Server) withFaults(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, done := s.faults.Before(w, r, "application/json")
		switch {
		case done:
		case f.DropAfter:
			next.ServeHTTP(httptest.NewRecorder(), r)
			fakehttp.Drop(w)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// reply writes Kraken's envelope.
func reply(w http.ResponseWriter, result any, errs ...string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if errs == nil {
		errs = []string{}
	}
	body := map[string]any{"error": errs}
	if len(errs) == 0 {
		body["result"] = result
	}
	json.NewEncoder(w).Encode(body)
}

// krakenError is a Kraken error string a handler answers with.
type krakenError string

func (e krakenError) Error() string { return string(e) }

// Kraken error strings the fake answers with.
const (
	errInvalidKey       krakenError = "EAPI:Invalid key"
	errInvalidSignature krakenError = "EAPI:Invalid signature"
	errInvalidNonce     krakenError = "EAPI:Invalid nonce"
	errUnknownMethod    krakenError = "EGeneral:Unknown method"
	errUnknownPair      krakenError = "EQuery:Unknown asset pair"
	errUnknownAsset     krakenError = "EQuery:Unknown asset"
	errInsufficient     krakenError = "EOrder:Insufficient funds"
	errOrderMinimum     krakenError = "EOrder:Order minimum not met"
	errCostMinimum      krakenError = "EOrder:Cost minimum not met"
	errInvalidOrder     krakenError = "EOrder:Invalid order"
	errCancelOnly       krakenError = "EService:Market in cancel_only mode"
	errUnknownKey       krakenError = "EFunding:Unknown withdraw key"
	errFundsShort       krakenError = "EFunding:Insufficient funds"
	errInvalidAmount    krakenError = "EFunding:Invalid amount"
	errMaxFee           krakenError = "EFunding:Max fee exceeded"
	errNoMethod         krakenError = "EFunding:No funding method"
	errBadAddress       krakenError = "EFunding:Invalid withdrawal address"
)

// invalidArg is EGeneral:Invalid arguments naming a field.
func invalidArg(field string) krakenError {
	return krakenError("EGeneral:Invalid arguments:" + field)
}

// Sign computes API-Sign the way Kraken verifies it; exported for tests
// that build requests by hand.
func Sign(secret []byte, path, nonce, body string) string {
	sum := sha256.Sum256([]byte(nonce + body))
	mac := hmac.New(sha512.New, secret)
	mac.Write([]byte(path))
	mac.Write(sum[:])
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// private authenticates a private call and dispatches it.
func (s *Server) private(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		reply(w, nil, string(invalidArg("body")))
		return
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		reply(w, nil, string(invalidArg("Content-Type")))
		return
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		reply(w, nil, string(invalidArg("body")))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	refuse := func(msg string) {
		s.refused[msg]++
		reply(w, nil, msg)
	}
	a := s.accounts[r.Header.Get("API-Key")]
	if a == nil {
		refuse(string(errInvalidKey))
		return
	}
	nonceText := form.Get("nonce")
	want := Sign(a.secret, r.URL.Path, nonceText, string(body))
	if !hmac.Equal([]byte(want), []byte(r.Header.Get("API-Sign"))) {
		refuse(string(errInvalidSignature))
		return
	}
	nonce, err := strconv.ParseUint(nonceText, 10, 64)
	if err != nil || nonce <= a.lastNonce {
		refuse(string(errInvalidNonce))
		return
	}
	a.lastNonce = nonce
	handlers := map[string]func(*account, url.Values) (any, error){
		"Balance":            s.balance,
		"BalanceEx":          s.balanceEx,
		"AddOrder":           s.addOrder,
		"QueryOrders":        s.queryOrders,
		"OpenOrders":         s.openOrders,
		"ClosedOrders":       s.closedOrders,
		"CancelOrder":        s.cancelOrder,
		"TradesHistory":      s.tradesHistory,
		"DepositMethods":     s.depositMethods,
		"DepositAddresses":   s.depositAddresses,
		"DepositStatus":      s.depositStatus,
		"WithdrawMethods":    s.withdrawMethods,
		"WithdrawAddresses":  s.withdrawAddresses,
		"WithdrawInfo":       s.withdrawInfo,
		"Withdraw":           s.withdraw,
		"WithdrawStatus":     s.withdrawStatus,
		"GetWebSocketsToken": s.getWebSocketsToken,
	}
	h, ok := handlers[r.PathValue("method")]
	if !ok {
		refuse(string(errUnknownMethod))
		return
	}
	res, err := h(a, form)
	s.syncExecutions(a)
	if err != nil {
		refuse(err.Error())
		return
	}
	reply(w, res)
}

// public dispatches a public call.
func (s *Server) public(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if r.Method == http.MethodPost {
		if err := r.ParseForm(); err == nil {
			q = r.Form
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	handlers := map[string]func(url.Values) (any, error){
		"Time":       s.time,
		"Assets":     s.assetsInfo,
		"AssetPairs": s.assetPairs,
		"OHLC":       s.ohlc,
		"Depth":      s.depth,
	}
	h, ok := handlers[r.PathValue("method")]
	if !ok {
		reply(w, nil, string(errUnknownMethod))
		return
	}
	res, err := h(q)
	if err != nil {
		reply(w, nil, err.Error())
		return
	}
	reply(w, res)
}

func (s *Server) time(url.Values) (any, error) {
	now := s.now().UTC()
	return map[string]any{"unixtime": now.Unix(), "rfc1123": now.Format(time.RFC1123)}, nil
}
