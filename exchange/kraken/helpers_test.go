package kraken_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/kraken"
	"github.com/exgate/exgate/exchange/kraken/krakenfake"
)

// testNow is the fixed clock of the tests (a Friday afternoon, UTC).
var testNow = time.Date(2025, 3, 14, 15, 9, 26, 535_000_000, time.UTC)

func fixedNow() time.Time { return testNow }

// testLimiter takes every reservation at once unless wait says otherwise,
// and records reservations and pauses.
type testLimiter struct {
	mu       sync.Mutex
	wait     func(key string) time.Duration
	reserved map[string]int
	paused   map[string]time.Time
}

func newTestLimiter() *testLimiter {
	return &testLimiter{reserved: map[string]int{}, paused: map[string]time.Time{}}
}

func (l *testLimiter) Reserve(_ context.Context, key string, cost int, _ exgate.RateLimit) (time.Duration, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.wait != nil {
		if d := l.wait(key); d > 0 {
			return d, nil
		}
	}
	l.reserved[key] += cost
	return 0, nil
}

func (l *testLimiter) Pause(_ context.Context, key string, until time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.paused[key] = until
	return nil
}

func (l *testLimiter) PausedUntil(_ context.Context, key string) (time.Time, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.paused[key], nil
}

func (l *testLimiter) pausedUntil(key string) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.paused[key]
}

// testNonces is an in-process Nonces.
type testNonces struct {
	mu   sync.Mutex
	last map[string]int64
}

func (n *testNonces) Next(_ context.Context, key string, floor int64) (int64, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.last == nil {
		n.last = map[string]int64{}
	}
	v := max(n.last[key]+1, floor)
	n.last[key] = v
	return v, nil
}

const (
	testKey        = "kraken-test-key"
	btcAddress     = "bc1qxdsh4sdd29h6ldehz0se5c61asq8cgwyjf2y3z"
	xrpAddress     = "rLHzPsX3oXdzU2qP17kHCH2G4csZv1rAJh"
	xrpTag         = "1361101127"
	unverifiedAddr = "bc1qunverified0000000000000000000000000000"
)

var testSecret = base64.StdEncoding.EncodeToString([]byte("kraken fake secret of sixty-four bytes for the adapter tests!!!!!"))

// env is an adapter pointed at a fresh fake with one funded account.
type env struct {
	srv     *krakenfake.Server
	ex      *kraken.Exchange
	cred    exgate.Credential
	limiter *testLimiter
}

// newEnv starts a fake and an adapter; edit tweaks the adapter options.
func newEnv(t testing.TB, fakeOpts krakenfake.Options, edit func(*kraken.Options)) *env {
	t.Helper()
	if fakeOpts.Now == nil {
		fakeOpts.Now = fixedNow
	}
	srv := krakenfake.New(fakeOpts)
	t.Cleanup(srv.Close)
	err := srv.AddAccount(krakenfake.Account{
		Key:    testKey,
		Secret: testSecret,
		Balances: map[string]string{
			"XXBT": "10", "USDT": "100000", "ZUSD": "100000", "XETH": "100", "SOL": "500",
			"XXRP": "1000", "XTZ": "250", "XZEC": "3", "XBT.F": "0.5", "ETH2.S": "3", "ZEUR": "0",
		},
		Holds: map[string]string{"ZUSD": "1500"},
		WithdrawKeys: []krakenfake.WithdrawKey{
			{Name: "btc-wallet-1", Asset: "XXBT", Method: "Bitcoin", Address: btcAddress, Verified: true},
			{Name: "btc-unconfirmed", Asset: "XXBT", Method: "Bitcoin", Address: unverifiedAddr},
			{Name: "xrp-exchange", Asset: "XXRP", Method: "Ripple XRP", Address: xrpAddress, Tag: xrpTag, Verified: true},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	lim := newTestLimiter()
	opts := kraken.Options{
		BaseURL:    srv.URL,
		HTTPClient: &http.Client{Timeout: 5 * time.Second},
		Now:        fakeOpts.Now,
		Limiter:    lim,
		Nonces:     &testNonces{},
		RetryDelay: time.Millisecond,
		// The streams: the fake's endpoints, a fake that heartbeats every
		// second, reconnects within milliseconds.
		WSURL:         srv.WSURL,
		WSAuthURL:     srv.WSAuthURL,
		WSReadTimeout: 3 * time.Second,
		WSBackoffMin:  10 * time.Millisecond,
		WSBackoffMax:  100 * time.Millisecond,
	}
	if edit != nil {
		edit(&opts)
	}
	return &env{
		srv:     srv,
		ex:      kraken.New(opts),
		limiter: lim,
		cred: exgate.Credential{
			ID: 1, Name: "main", Exchange: kraken.Name, Key: testKey, Secret: testSecret,
			Permissions: []exgate.Permission{exgate.PermissionRead, exgate.PermissionTrade, exgate.PermissionWithdraw},
		},
	}
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

var btcUSDT = exgate.Symbol{Base: "BTC", Quote: "USDT"}
