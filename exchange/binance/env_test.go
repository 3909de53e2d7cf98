package binance

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/binance/binancefake"
	"github.com/exgate/exgate/localstate"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// clock is a settable clock shared by the adapter and the fake.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// env is an adapter pointed at a fresh fake with one funded account.
type env struct {
	fake    *binancefake.Server
	ex      *Exchange
	cred    exgate.Credential
	clock   *clock
	limiter *localstate.Limiter
}

const (
	testKey    = "vmPUZE6mv9SD5VNHk4HlWFsOr6aKE2zvsw0MuIgwCIPy6utIco14y7Ju91duEh8A"
	testSecret = "NhqPtmdSJYdKjVHjA7PZj4Mge3R5YNiP1e3UZjInClVN65XAbvqqM6A7H5fATj0j"
)

var btcusdt = exgate.Symbol{Base: "BTC", Quote: "USDT"}

func newEnv(t testing.TB, mods ...func(*Options)) *env {
	t.Helper()
	// The clock starts at the real time and stands still; the limiter runs
	// on real time so that budgets refill, and pauses set on the test
	// clock are in its future.
	clk := &clock{t: time.Now().Truncate(time.Millisecond)}
	fake := binancefake.New(binancefake.Options{Now: clk.Now})
	t.Cleanup(fake.Close)
	fake.AddAccount(binancefake.Account{APIKey: testKey, Secret: testSecret, Balances: map[string]string{
		"BTC": "3", "ETH": "40", "USDT": "250000", "SOL": "500", "XRP": "50000", "BNB": "20",
	}})
	lim := localstate.NewLimiter(time.Now)
	opts := Options{BaseURL: fake.URL, HTTPClient: fake.Client(), Now: clk.Now, Limiter: lim, RetryBackoff: time.Millisecond, MaxWait: 2 * time.Second}
	for _, m := range mods {
		m(&opts)
	}
	return &env{
		fake:    fake,
		ex:      New(opts),
		cred:    exgate.Credential{ID: 7, Name: "main", Exchange: "binance", Key: testKey, Secret: testSecret, Permissions: []exgate.Permission{"read", "trade", "withdraw"}},
		clock:   clk,
		limiter: lim,
	}
}

func num(t testing.TB, s string) decimal.Decimal {
	t.Helper()
	v, err := decimal.NewFromString(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// golden compares v, as indented JSON, with testdata/name (rewritten with
// -update).
func golden(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", name, diff)
	}
}

// code returns the exgate code of err, or "" for nil.
func code(err error) exgate.Code {
	if err == nil {
		return ""
	}
	return exgate.ErrorCode(err)
}
