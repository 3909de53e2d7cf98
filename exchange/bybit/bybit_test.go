package bybit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/bybit"
	"github.com/exgate/exgate/exchange/bybit/bybitfake"
	"github.com/exgate/exgate/exchange/exchangetest"
)

// env is one fake Bybit with a funded account and an adapter pointed at
// it.
type env struct {
	srv  *bybitfake.Server
	ex   *bybit.Exchange
	cred exgate.Credential
}

// envOptions tweak newEnv.
type envOptions struct {
	now     func() time.Time
	account func(*bybitfake.Account)
	fake    func(*bybitfake.Options)
	adapter func(*bybit.Options)
	// callTimeout is the journal's CallTimeout behind the HTTP API
	// (newAPIEnv); zero for its default.
	callTimeout time.Duration
}

// The account's withdrawal address book: the conformance suite's USDT
// address on TRX and an XRP address with a tag.
var addressBook = []bybitfake.BookAddress{
	{Coin: "USDT", Chain: "TRX", Address: "TXkZ5Ff4qgSBVRrfBMfxcDxUrW5g1mDtKf"},
	{Coin: "XRP", Chain: "XRP", Address: "rPEPPER7kfTD9w2To4CQk6UCfuHM9c6GDY", Tag: "424242"},
}

// newEnv starts a fake and an adapter with one funded account.
func newEnv(tb testing.TB, o envOptions) *env {
	tb.Helper()
	fo := bybitfake.Options{Now: o.now}
	if o.fake != nil {
		o.fake(&fo)
	}
	srv := bybitfake.New(fo)
	tb.Cleanup(srv.Close)
	acc := bybitfake.Account{
		APIKey: "bybit-key", Secret: "bybit-secret",
		Unified:     map[string]string{"BTC": "2", "USDT": "200000", "ETH": "50", "SOL": "500", "XRP": "10000"},
		Fund:        map[string]string{"USDT": "5000", "XRP": "1000", "BTC": "0.5"},
		AddressBook: addressBook,
	}
	if o.account != nil {
		o.account(&acc)
	}
	if err := srv.AddAccount(acc); err != nil {
		tb.Fatal(err)
	}
	ao := bybit.Options{BaseURL: srv.URL, HTTPClient: srv.Client(), Now: o.now, RetryBackoff: time.Millisecond, Limiter: noLimits{},
		WSURL: srv.WSURL(), WSPrivateURL: srv.WSPrivateURL(), WSBackoffMin: 20 * time.Millisecond, WSBackoffMax: 200 * time.Millisecond}
	if o.adapter != nil {
		o.adapter(&ao)
	}
	return &env{
		srv: srv,
		ex:  bybit.New(ao),
		cred: exgate.Credential{ID: 9, Name: "bybit", Exchange: bybit.Name, Key: acc.APIKey, Secret: acc.Secret,
			Permissions: []exgate.Permission{exgate.PermissionRead, exgate.PermissionTrade, exgate.PermissionWithdraw}},
	}
}

// noLimits is a Limiter that never makes a call wait.
type noLimits struct{}

func (noLimits) Reserve(context.Context, string, int, exgate.RateLimit) (time.Duration, error) {
	return 0, nil
}
func (noLimits) Pause(context.Context, string, time.Time) error { return nil }
func (noLimits) PausedUntil(context.Context, string) (time.Time, error) {
	return time.Time{}, nil
}

var btcUSDT = exgate.Symbol{Base: "BTC", Quote: "USDT"}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func TestConformance(t *testing.T) {
	exchangetest.Run(t, func(t *testing.T) exchangetest.Setup {
		// The adapter's default limiter (localstate) paces as in
		// production.
		e := newEnv(t, envOptions{adapter: func(o *bybit.Options) { o.Limiter = nil }})
		return conformanceSetup(e)
	})
}

// conformanceSetup is the suites' setup of an env.
func conformanceSetup(e *env) exchangetest.Setup {
	return exchangetest.Setup{
		Exchange:      e.ex,
		Credential:    e.cred,
		Symbol:        btcUSDT,
		BaseQuantity:  dec("0.01"),
		QuoteQuantity: dec("250"),
		Withdrawal: exgate.WithdrawalRequest{
			Asset: "USDT", Network: "TRX", Address: "TXkZ5Ff4qgSBVRrfBMfxcDxUrW5g1mDtKf", Amount: dec("100"),
		},
		DepositAddress: exgate.DepositAddressRequest{Asset: "XRP", Network: "XRP"},
	}
}

// wantCode checks err's code.
func wantCode(t *testing.T, err error, code exgate.Code) *exgate.Error {
	t.Helper()
	e, ok := errors.AsType[*exgate.Error](err)
	if !ok {
		t.Fatalf("error %v, want *exgate.Error with code %s", err, code)
	}
	if e.Code != code {
		t.Fatalf("code %s (%s), want %s", e.Code, e.Detail, code)
	}
	return e
}
