package gateio

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/gateio/gateiofake"
	"github.com/exgate/exgate/exchange/internal/rest"
)

// recordingLimiter never makes a call wait and records pauses.
type recordingLimiter struct {
	mu     sync.Mutex
	pauses map[string]time.Time
}

func (l *recordingLimiter) Reserve(context.Context, string, int, exgate.RateLimit) (time.Duration, error) {
	return 0, nil
}

func (l *recordingLimiter) Pause(_ context.Context, key string, until time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pauses == nil {
		l.pauses = map[string]time.Time{}
	}
	l.pauses[key] = until
	return nil
}

func (l *recordingLimiter) PausedUntil(context.Context, string) (time.Time, error) {
	return time.Time{}, nil
}

func (l *recordingLimiter) pause(key string) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.pauses[key]
}

// testEnv is a fake with a funded account and an adapter on it.
type testEnv struct {
	srv  *gateiofake.Server
	ex   *Exchange
	lim  *recordingLimiter
	cred exgate.Credential
}

func newTestEnv(t *testing.T, now func() time.Time) *testEnv {
	t.Helper()
	srv := gateiofake.New(gateiofake.Options{Now: now, NoRateLimits: true})
	t.Cleanup(srv.Close)
	if err := srv.AddAccount(gateiofake.Account{APIKey: "k", Secret: "s", Balances: map[string]string{"BTC": "1", "USDT": "100000"}}); err != nil {
		t.Fatal(err)
	}
	lim := &recordingLimiter{}
	return &testEnv{
		srv:  srv,
		lim:  lim,
		ex:   New(Options{BaseURL: srv.URL, HTTPClient: srv.Client(), Now: now, Limiter: lim, RetryBackoff: time.Millisecond}),
		cred: exgate.Credential{ID: 3, Key: "k", Secret: "s"},
	}
}

var btcUSDTReq = exgate.OrderRequest{Symbol: exgate.Symbol{Base: "BTC", Quote: "USDT"}, Side: exgate.SideBuy,
	Quantity: decimal.NewFromInt(100), QuantityIn: exgate.InQuote, ClientOrderID: "o1"}

// calls exercise one endpoint of each kind.
var calls = map[string]struct {
	method, path string
	call         func(t *testing.T, e *testEnv) error
}{
	"read": {http.MethodGet, "/api/v4/spot/accounts", func(t *testing.T, e *testEnv) error {
		_, err := e.ex.Balances(t.Context(), e.cred)
		return err
	}},
	"order": {http.MethodPost, "/api/v4/spot/orders", func(t *testing.T, e *testEnv) error {
		_, err := e.ex.PlaceMarketOrder(t.Context(), e.cred, btcUSDTReq)
		return err
	}},
	"withdraw": {http.MethodPost, "/api/v4/withdrawals", func(t *testing.T, e *testEnv) error {
		_, err := e.ex.Withdraw(t.Context(), e.cred, exgate.WithdrawalRequest{Asset: "USDT", Network: "TRX",
			Address: "TXkZ5Ff4qgSBVRrfBMfxcDxUrW5g1mDtKf", Amount: decimal.NewFromInt(10), ClientWithdrawalID: "w1"})
		return err
	}},
}

func TestErrorLabels(t *testing.T) {
	// want: the code for a read, an order and a withdrawal.
	tests := []struct {
		label, message  string
		status          int
		read, ord, wdrw exgate.Code
	}{
		{"BALANCE_NOT_ENOUGH", "Not enough balance", 400, exgate.CodeInsufficientFunds, exgate.CodeInsufficientFunds, exgate.CodeInsufficientFunds},
		{"INVALID_CURRENCY_PAIR", "Invalid currency pair", 400, exgate.CodeUnknownSymbol, exgate.CodeUnknownSymbol, exgate.CodeUnknownSymbol},
		{"INVALID_CURRENCY", "Invalid currency", 400, exgate.CodeInvalidParameter, exgate.CodeInvalidParameter, exgate.CodeInvalidParameter},
		{"INVALID_KEY", "Invalid key provided", 401, exgate.CodeExchangeAuthFailed, exgate.CodeExchangeAuthFailed, exgate.CodeExchangeAuthFailed},
		{"INVALID_CREDENTIALS", "Invalid credentials", 401, exgate.CodeExchangeAuthFailed, exgate.CodeExchangeAuthFailed, exgate.CodeExchangeAuthFailed},
		{"INVALID_SIGNATURE", "Signature mismatch", 401, exgate.CodeExchangeAuthFailed, exgate.CodeExchangeAuthFailed, exgate.CodeExchangeAuthFailed},
		{"IP_FORBIDDEN", "IP not allowed", 403, exgate.CodeExchangeAuthFailed, exgate.CodeExchangeAuthFailed, exgate.CodeExchangeAuthFailed},
		{"READ_ONLY", "read only", 403, exgate.CodeExchangeAuthFailed, exgate.CodeExchangeAuthFailed, exgate.CodeExchangeAuthFailed},
		{"FORBIDDEN", "no permission", 403, exgate.CodeExchangeAuthFailed, exgate.CodeExchangeAuthFailed, exgate.CodeExchangeAuthFailed},
		{"ACCOUNT_LOCKED", "locked", 403, exgate.CodeExchangeAuthFailed, exgate.CodeExchangeAuthFailed, exgate.CodeExchangeAuthFailed},
		{"MISSING_REQUIRED_HEADER", "Missing required header: KEY", 400, exgate.CodeExchangeAuthFailed, exgate.CodeExchangeAuthFailed, exgate.CodeExchangeAuthFailed},
		{"TOO_MANY_REQUESTS", "Request Rate limit Exceeded", 429, exgate.CodeExchangeUnavailable, exgate.CodeExchangeUnavailable, exgate.CodeExchangeUnavailable},
		{"TOO_FAST", "Withdrawal frequency exceeded", 400, exgate.CodeExchangeUnavailable, exgate.CodeExchangeUnavailable, exgate.CodeExchangeUnavailable},
		{"AMOUNT_TOO_LITTLE", "Amount too little", 400, exgate.CodeQuantityTooSmall, exgate.CodeQuantityTooSmall, exgate.CodeWithdrawalRejected},
		{"QUANTITY_NOT_ENOUGH", "Quantity not enough", 400, exgate.CodeQuantityTooSmall, exgate.CodeQuantityTooSmall, exgate.CodeWithdrawalRejected},
		{"AMOUNT_TOO_MUCH", "Amount too much", 400, exgate.CodeOrderRejected, exgate.CodeOrderRejected, exgate.CodeWithdrawalRejected},
		{"INVALID_PRECISION", "Invalid precision", 400, exgate.CodeInvalidParameter, exgate.CodeOrderRejected, exgate.CodeInvalidParameter},
		{"INVALID_PARAM_VALUE", "Invalid parameter `address` with value: x", 400, exgate.CodeInvalidParameter, exgate.CodeInvalidParameter, exgate.CodeInvalidParameter},
		{"INVALID_PARAM_VALUE", "Your order size 1 USDT is too small. The minimum is 3 USDT", 400, exgate.CodeInvalidParameter, exgate.CodeQuantityTooSmall, exgate.CodeInvalidParameter},
		{"ORDER_BOOK_NOT_FOUND", "Insufficient liquidity", 400, exgate.CodeOrderRejected, exgate.CodeOrderRejected, exgate.CodeOrderRejected},
		{"FOK_NOT_FILL", "FOK not filled", 400, exgate.CodeOrderRejected, exgate.CodeOrderRejected, exgate.CodeOrderRejected},
		{"POC_FILL_IMMEDIATELY", "POC would take", 400, exgate.CodeOrderRejected, exgate.CodeOrderRejected, exgate.CodeOrderRejected},
		{"TRADE_RESTRICTED", "Trading restricted", 400, exgate.CodeOrderRejected, exgate.CodeOrderRejected, exgate.CodeOrderRejected},
		{"ORDER_CLOSED", "Order closed", 400, exgate.CodeOrderRejected, exgate.CodeOrderRejected, exgate.CodeOrderRejected},
		{"ORDER_CANCELLED", "Order cancelled", 400, exgate.CodeOrderRejected, exgate.CodeOrderRejected, exgate.CodeOrderRejected},
		{"CANCEL_FAIL", "Cancel failed", 400, exgate.CodeOrderRejected, exgate.CodeOrderRejected, exgate.CodeOrderRejected},
		{"WITHDRAWAL_OVER_LIMIT", "Over limit", 400, exgate.CodeWithdrawalRejected, exgate.CodeWithdrawalRejected, exgate.CodeWithdrawalRejected},
		{"API_WITHDRAW_DISABLED", "Disabled", 400, exgate.CodeWithdrawalRejected, exgate.CodeWithdrawalRejected, exgate.CodeWithdrawalRejected},
		{"ADDRESS_NOT_USED", "Address not used", 400, exgate.CodeWithdrawalRejected, exgate.CodeWithdrawalRejected, exgate.CodeWithdrawalRejected},
		{"DUPLICATE_REQUEST", "Duplicate", 400, exgate.CodeWithdrawalRejected, exgate.CodeWithdrawalRejected, exgate.CodeWithdrawalRejected},
		{"INVALID_WITHDRAW_ID", "Invalid withdraw id", 400, exgate.CodeWithdrawalRejected, exgate.CodeWithdrawalRejected, exgate.CodeWithdrawalRejected},
		{"ORDER_NOT_FOUND", "Order not found", 404, exgate.CodeNotFound, exgate.CodeNotFound, exgate.CodeNotFound},
		{"CLIENT_ID_NOT_FOUND", "Order with client ID t-x not found", 404, exgate.CodeNotFound, exgate.CodeNotFound, exgate.CodeNotFound},
		{"INTERNAL", "internal", 500, exgate.CodeExchangeUnavailable, exgate.CodeExchangeTimeout, exgate.CodeExchangeTimeout},
		{"SERVER_ERROR", "server error", 500, exgate.CodeExchangeUnavailable, exgate.CodeExchangeTimeout, exgate.CodeExchangeTimeout},
		{"TOO_BUSY", "busy", 503, exgate.CodeExchangeUnavailable, exgate.CodeExchangeTimeout, exgate.CodeExchangeTimeout},
		{"SOMETHING_NEW", "a new refusal", 400, exgate.CodeExchangeError, exgate.CodeExchangeError, exgate.CodeExchangeError},
		{"", "<html>Bad Gateway</html>", 502, exgate.CodeExchangeUnavailable, exgate.CodeExchangeTimeout, exgate.CodeExchangeTimeout},
	}
	covered := map[string]bool{}
	for _, tc := range tests {
		covered[tc.label] = true
		for kind, want := range map[string]exgate.Code{"read": tc.read, "order": tc.ord, "withdraw": tc.wdrw} {
			t.Run(tc.label+"/"+tc.message+"/"+kind, func(t *testing.T) {
				t.Parallel()
				e := newTestEnv(t, nil)
				c := calls[kind]
				body := `{"label":"` + tc.label + `","message":"` + tc.message + `"}`
				if tc.label == "" {
					body = tc.message
				}
				e.srv.SetFault(func(r *http.Request) gateiofake.Fault {
					if r.Method == c.method && r.URL.Path == c.path {
						return gateiofake.Fault{Status: tc.status, Body: body}
					}
					return gateiofake.Fault{}
				})
				err := c.call(t, e)
				ge, ok := errors.AsType[*exgate.Error](err)
				if !ok || ge.Code != want {
					t.Fatalf("error %v, want code %s", err, want)
				}
				if !strings.Contains(ge.Detail, tc.message) {
					t.Errorf("detail %q does not carry Gate's message %q", ge.Detail, tc.message)
				}
				if want == exgate.CodeNotFound && !errors.Is(err, exgate.ErrNotFound) {
					t.Errorf("error %v does not wrap ErrNotFound", err)
				}
				sent := e.srv.Requests(c.path)
				switch {
				case kind != "read" && sent != 1:
					t.Errorf("%s sent %d times, want once (never retried)", kind, sent)
				case kind == "read" && tc.status >= 500 && sent != 1+rest.ReadRetries:
					t.Errorf("read sent %d times after %d answers, want %d", sent, tc.status, 1+rest.ReadRetries)
				case kind == "read" && tc.status < 500 && sent != 1:
					t.Errorf("read sent %d times after a %d answer, want once", sent, tc.status)
				}
			})
		}
	}
	for label := range errorLabels {
		if !covered[label] {
			t.Errorf("label %s has no test case", label)
		}
	}
	for label := range serverLabels {
		if !covered[label] {
			t.Errorf("server label %s has no test case", label)
		}
	}
}

func TestRateLimitAnswer(t *testing.T) {
	// A fixed clock on a whole second, shared by the fake and the
	// adapter: the reset timestamp is in whole seconds, so with the real
	// clock the wait it names is up to a second shorter than asked, less
	// the time the call took, and a busy machine failed the test.
	now := time.Unix(1_780_000_000, 0)
	clock := func() time.Time { return now }
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{name: "Retry-After", header: map[string]string{"Retry-After": "7"}, want: 7 * time.Second},
		{name: "reset timestamp", header: map[string]string{"X-Gate-RateLimit-Reset-Timestamp": strconv.FormatInt(now.Add(4*time.Second).Unix(), 10)}, want: 4 * time.Second},
		{name: "no header: the budget's window", want: 10 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t, clock)
			e.srv.SetFault(faultFor(http.MethodGet, "/api/v4/spot/accounts", gateiofake.Fault{Status: 429, Header: tc.header,
				Body: `{"label":"TOO_MANY_REQUESTS","message":"Request Rate limit Exceeded"}`}))
			_, err := e.ex.Balances(t.Context(), e.cred)
			ge, ok := errors.AsType[*exgate.Error](err)
			if !ok || ge.Code != exgate.CodeExchangeUnavailable {
				t.Fatalf("error %v, want EXCHANGE_UNAVAILABLE", err)
			}
			if ge.RetryAfter != tc.want {
				t.Errorf("RetryAfter %s, want %s", ge.RetryAfter, tc.want)
			}
			if until := e.lim.pause("gateio/uid/3/spot/accounts"); !until.Equal(now.Add(tc.want)) {
				t.Errorf("budget paused until %s from now, want %s", until.Sub(now), tc.want)
			}
		})
	}
	t.Run("remain 0 pauses the budget", func(t *testing.T) {
		e := newTestEnv(t, nil)
		reset := time.Now().Add(5 * time.Second)
		e.srv.SetFault(faultFor(http.MethodGet, "/api/v4/spot/accounts", gateiofake.Fault{Status: 200, Body: `[]`,
			Header: map[string]string{"X-Gate-RateLimit-Requests-Remain": "0", "X-Gate-RateLimit-Reset-Timestamp": strconv.FormatInt(reset.Unix(), 10)}}))
		if _, err := e.ex.Balances(t.Context(), e.cred); err != nil {
			t.Fatal(err)
		}
		if until := e.lim.pause("gateio/uid/3/spot/accounts"); until.IsZero() {
			t.Error("budget not paused")
		}
	})
}

func faultFor(method, path string, f gateiofake.Fault) func(*http.Request) gateiofake.Fault {
	return func(r *http.Request) gateiofake.Fault {
		if r.Method == method && r.URL.Path == path {
			return f
		}
		return gateiofake.Fault{}
	}
}

func TestRequestExpiredResync(t *testing.T) {
	t.Run("read is resent once after resynchronizing", func(t *testing.T) {
		e := newTestEnv(t, nil)
		e.srv.SetClockOffset(3 * time.Minute)
		if _, err := e.ex.Balances(t.Context(), e.cred); err != nil {
			t.Fatal(err)
		}
		if a, tm := e.srv.Requests("/api/v4/spot/accounts"), e.srv.Requests("/api/v4/spot/time"); a != 2 || tm != 1 {
			t.Errorf("%d accounts requests and %d time requests, want 2 and 1", a, tm)
		}
		if d := time.Duration(e.ex.c.offset.Load()) * time.Millisecond; d < 179*time.Second || d > 181*time.Second {
			t.Errorf("offset %s, want about 3 minutes", d)
		}
		if _, err := e.ex.Balances(t.Context(), e.cred); err != nil {
			t.Fatal(err)
		}
		if n := e.srv.Requests("/api/v4/spot/time"); n != 1 {
			t.Errorf("%d time requests, want no new one once in sync", n)
		}
	})
	t.Run("offset from the Date header when /spot/time fails", func(t *testing.T) {
		e := newTestEnv(t, nil)
		e.srv.SetClockOffset(-5 * time.Minute)
		e.srv.SetFault(faultFor(http.MethodGet, "/api/v4/spot/time", gateiofake.Fault{Status: 503, Body: `{"label":"TOO_BUSY","message":"busy"}`}))
		if _, err := e.ex.Balances(t.Context(), e.cred); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("an order is not resent", func(t *testing.T) {
		e := newTestEnv(t, nil)
		e.srv.SetClockOffset(2 * time.Minute)
		_, err := e.ex.PlaceMarketOrder(t.Context(), e.cred, btcUSDTReq)
		ge, ok := errors.AsType[*exgate.Error](err)
		if !ok || ge.Code != exgate.CodeExchangeUnavailable || !strings.Contains(ge.Detail, "not executed") {
			t.Fatalf("error %v, want EXCHANGE_UNAVAILABLE saying it was not executed", err)
		}
		if n := e.srv.Requests("/api/v4/spot/orders"); n != 1 {
			t.Errorf("order sent %d times, want once", n)
		}
		if n := e.srv.OrdersByText("k", "t-o1"); n != 0 {
			t.Errorf("%d orders placed, want none", n)
		}
		if _, err := e.ex.PlaceMarketOrder(t.Context(), e.cred, btcUSDTReq); err != nil {
			t.Errorf("order after the resync: %v", err)
		}
	})
	t.Run("clock that cannot be corrected", func(t *testing.T) {
		e := newTestEnv(t, nil)
		e.srv.SetFault(faultFor(http.MethodGet, "/api/v4/spot/accounts", gateiofake.Fault{Status: 401,
			Body: `{"label":"REQUEST_EXPIRED","message":"gap between request Timestamp and server time exceeds 60"}`}))
		_, err := e.ex.Balances(t.Context(), e.cred)
		if ge, ok := errors.AsType[*exgate.Error](err); !ok || ge.Code != exgate.CodeExchangeError {
			t.Fatalf("error %v, want EXCHANGE_ERROR", err)
		}
		if n := e.srv.Requests("/api/v4/spot/accounts"); n != 2 {
			t.Errorf("%d requests, want 2 (one resend after the resync)", n)
		}
	})
}

func TestFakeRateLimitReached(t *testing.T) {
	// A clock that stands still: the fake's one-second window never turns.
	at := time.Now()
	now := func() time.Time { return at }
	srv := gateiofake.New(gateiofake.Options{Now: now})
	t.Cleanup(srv.Close)
	if err := srv.AddAccount(gateiofake.Account{APIKey: "k", Secret: "s", Balances: map[string]string{"USDT": "100000"}}); err != nil {
		t.Fatal(err)
	}
	lim := &recordingLimiter{}
	ex := New(Options{BaseURL: srv.URL, HTTPClient: srv.Client(), Limiter: lim, Now: now})
	cred := exgate.Credential{ID: 3, Key: "k", Secret: "s"}
	var err error
	for i := range 12 {
		req := btcUSDTReq
		req.ClientOrderID = "o" + strconv.Itoa(i)
		if _, err = ex.PlaceMarketOrder(t.Context(), cred, req); err != nil {
			break
		}
	}
	// Ten orders per second per pair: the eleventh is refused.
	if n := srv.Requests("/api/v4/spot/orders"); n != 11 {
		t.Fatalf("%d orders sent before the refusal, want 11", n)
	}
	ge, ok := errors.AsType[*exgate.Error](err)
	if !ok || ge.Code != exgate.CodeExchangeUnavailable || ge.RetryAfter <= 0 {
		t.Fatalf("error %v, want EXCHANGE_UNAVAILABLE with RetryAfter", err)
	}
	if lim.pause("gateio/uid/3/orders/BTC_USDT").IsZero() {
		t.Error("order budget not paused")
	}
}
