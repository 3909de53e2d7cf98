package okx_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/exchangetest"
	"github.com/exgate/exgate/exchange/okx"
	"github.com/exgate/exgate/exchange/okx/okxfake"
)

// env is one fake OKX with a funded account and an adapter pointed at it.
type env struct {
	srv  *okxfake.Server
	ex   *okx.Exchange
	cred exgate.Credential
}

// envOptions tweak newEnv.
type envOptions struct {
	now     func() time.Time
	account func(*okxfake.Account)
	fake    func(*okxfake.Options)
	adapter func(*okx.Options)
}

const (
	apiKey     = "okx-key"
	secret     = "okx-secret"
	passphrase = "okx-pass"
)

// newEnv starts a fake and an adapter with one funded account: the
// trading account holds what orders use, the funding account what
// withdrawals use.
func newEnv(tb testing.TB, o envOptions) *env {
	tb.Helper()
	fo := okxfake.Options{Now: o.now}
	if o.fake != nil {
		o.fake(&fo)
	}
	srv := okxfake.New(fo)
	tb.Cleanup(srv.Close)
	acc := okxfake.Account{
		APIKey: apiKey, Secret: secret, Passphrase: passphrase,
		Balances: map[string]string{"BTC": "2", "USDT": "200000", "ETH": "50", "SOL": "500", "XRP": "10000"},
		Funding:  map[string]string{"USDT": "5000", "BTC": "1", "XRP": "1000"},
	}
	if o.account != nil {
		o.account(&acc)
	}
	if err := srv.AddAccount(acc); err != nil {
		tb.Fatal(err)
	}
	ao := okx.Options{BaseURL: srv.URL, HTTPClient: srv.Client(), Now: o.now, RetryBackoff: time.Millisecond, Limiter: noLimits{},
		WSURL: srv.WSURL(), WSBackoffMin: 20 * time.Millisecond, WSBackoffMax: 200 * time.Millisecond}
	if o.adapter != nil {
		o.adapter(&ao)
	}
	return &env{
		srv: srv,
		ex:  okx.New(ao),
		cred: exgate.Credential{ID: 7, Name: "okx", Exchange: okx.Name, Key: acc.APIKey, Secret: acc.Secret, Passphrase: acc.Passphrase,
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

func TestConformance(t *testing.T) {
	exchangetest.Run(t, func(t *testing.T) exchangetest.Setup {
		// The adapter's default limiter (localstate) paces as in
		// production.
		e := newEnv(t, envOptions{adapter: func(o *okx.Options) { o.Limiter = nil }})
		return conformanceSetup(e)
	})
}

// conformanceSetup is the suites' setup of an env.
func conformanceSetup(e *env) exchangetest.Setup {
	return exchangetest.Setup{
		Exchange:      e.ex,
		Credential:    e.cred,
		Symbol:        btcUSDT,
		BaseQuantity:  decimal.RequireFromString("0.01"),
		QuoteQuantity: decimal.RequireFromString("250"),
		Withdrawal: exgate.WithdrawalRequest{
			Asset: "USDT", Network: "TRX", Address: "TXkZ5Ff4qgSBVRrfBMfxcDxUrW5g1mDtKf", Amount: decimal.RequireFromString("100"),
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

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
