package main

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/exgate/exgate/client"
	"github.com/exgate/exgate/exchange/binance/binancefake"
	"github.com/exgate/exgate/exchange/bybit/bybitfake"
	"github.com/exgate/exgate/exchange/gateio/gateiofake"
	"github.com/exgate/exgate/exchange/kraken/krakenfake"
	"github.com/exgate/exgate/exchange/okx/okxfake"
)

// exchangeCase is one real exchange's fake, set up for every route.
type exchangeCase struct {
	name   string
	envURL string
	// start runs the fake and returns it with an account's API key and
	// secret.
	start      func(t *testing.T) runningFake
	withdrawal client.WithdrawRequest
	address    [2]string // asset, network
}

// runningFake is an exchange fake as `exgate serve` is pointed at it.
type runningFake struct {
	url, key, secret string
	// passphrase is the key's passphrase, for an exchange whose keys
	// have one (OKX).
	passphrase string
	// env points the exchange's REST and WebSocket URLs at the fake.
	env map[string]string
	// fill fills an open order of the account on the fake, named by the
	// client order id the gateway sent (the gateway's order id).
	fill func(clientOrderID string) error
	// pauseStreams drops the fake's stream connections and refuses new
	// ones until resume.
	pauseStreams func() (resume func())
}

const btcAddr = "bc1qxdsh4sdd29h6ldehz0se5c61asq8cgwyjf2y3z"

var exchangeCases = []exchangeCase{
	{
		name: "binance", envURL: "EXGATE_BINANCE_URL",
		start: func(t *testing.T) runningFake {
			f := binancefake.New(binancefake.Options{})
			t.Cleanup(f.Close)
			f.AddAccount(binancefake.Account{APIKey: "bkey", Secret: "bsecret", Balances: map[string]string{"USDT": "100000", "BTC": "2"}})
			f.AddDeposit("bkey", binancefake.Deposit{Coin: "USDT", Network: "TRX", Amount: "100", Status: 1, Address: "TN3W4H6rK2ce4vX9YnFQHwKENnHjoxb3m9", TxID: "tx1", InsertTime: time.Now().Add(-time.Hour)})
			return runningFake{url: f.URL, key: "bkey", secret: "bsecret",
				env:  map[string]string{"EXGATE_BINANCE_URL": f.URL, "EXGATE_BINANCE_WS_URL": f.WSURL(), "EXGATE_BINANCE_WS_API_URL": f.WSURL() + "/ws-api/v3"},
				fill: func(id string) error { return f.FillOrder("bkey", id) }, pauseStreams: f.PauseStreams}
		},
		withdrawal: client.WithdrawRequest{Asset: "USDT", Network: "TRX", Address: "TN3W4H6rK2ce4vX9YnFQHwKENnHjoxb3m9", Amount: "25"},
		address:    [2]string{"BTC", "BTC"},
	},
	{
		name: "kraken", envURL: "EXGATE_KRAKEN_URL",
		start: func(t *testing.T) runningFake {
			f := krakenfake.New(krakenfake.Options{})
			t.Cleanup(f.Close)
			secret := "a3Jha2VuLXNlY3JldC1mb3ItdGhlLWUyZS10ZXN0"
			if err := f.AddAccount(krakenfake.Account{Key: "kkey", Secret: secret,
				Balances:     map[string]string{"XXBT": "2", "USDT": "100000"},
				WithdrawKeys: []krakenfake.WithdrawKey{{Name: "cold", Asset: "XXBT", Method: "Bitcoin", Address: btcAddr, Verified: true}},
			}); err != nil {
				t.Fatal(err)
			}
			return runningFake{url: f.URL, key: "kkey", secret: secret,
				env:  map[string]string{"EXGATE_KRAKEN_URL": f.URL, "EXGATE_KRAKEN_WS_URL": f.WSURL, "EXGATE_KRAKEN_WS_AUTH_URL": f.WSAuthURL},
				fill: func(id string) error { return f.FillOrder("kkey", id) }, pauseStreams: f.PauseStreams}
		},
		withdrawal: client.WithdrawRequest{Asset: "BTC", Network: "BTC", Address: btcAddr, Amount: "0.01"},
		address:    [2]string{"BTC", "BTC"},
	},
	{
		name: "gateio", envURL: "EXGATE_GATEIO_URL",
		start: func(t *testing.T) runningFake {
			f := gateiofake.New(gateiofake.Options{})
			t.Cleanup(f.Close)
			if err := f.AddAccount(gateiofake.Account{APIKey: "gkey", Secret: "gsecret", Balances: map[string]string{"USDT": "100000", "BTC": "2"}}); err != nil {
				t.Fatal(err)
			}
			return runningFake{url: f.URL, key: "gkey", secret: "gsecret",
				env:  map[string]string{"EXGATE_GATEIO_URL": f.URL, "EXGATE_GATEIO_WS_URL": f.WSURL()},
				fill: func(id string) error { return f.FillOrder("gkey", "t-"+id) }, pauseStreams: f.PauseStreams}
		},
		withdrawal: client.WithdrawRequest{Asset: "USDT", Network: "TRX", Address: "TXkZ5Ff4qgSBVRrfBMfxcDxUrW5g1mDtKf", Amount: "100"},
		address:    [2]string{"XRP", "XRP"},
	},
	{
		name: "okx", envURL: "EXGATE_OKX_URL",
		start: func(t *testing.T) runningFake {
			f := okxfake.New(okxfake.Options{})
			t.Cleanup(f.Close)
			// Orders use the trading account, withdrawals the funding one.
			if err := f.AddAccount(okxfake.Account{APIKey: "okey", Secret: "osecret", Passphrase: "opass",
				Balances: map[string]string{"USDT": "100000", "BTC": "2"}, Funding: map[string]string{"USDT": "1000"}}); err != nil {
				t.Fatal(err)
			}
			return runningFake{url: f.URL, key: "okey", secret: "osecret", passphrase: "opass",
				env:  map[string]string{"EXGATE_OKX_URL": f.URL, "EXGATE_OKX_WS_URL": f.WSURL()},
				fill: func(id string) error { return f.FillOrder("okey", id) }, pauseStreams: f.PauseStreams}
		},
		withdrawal: client.WithdrawRequest{Asset: "USDT", Network: "TRX", Address: "TXkZ5Ff4qgSBVRrfBMfxcDxUrW5g1mDtKf", Amount: "100"},
		address:    [2]string{"XRP", "XRP"},
	},
	{
		name: "bybit", envURL: "EXGATE_BYBIT_URL",
		start: func(t *testing.T) runningFake {
			f := bybitfake.New(bybitfake.Options{})
			t.Cleanup(f.Close)
			// Orders use the unified account, withdrawals the funding one,
			// to an address of the account's address book.
			if err := f.AddAccount(bybitfake.Account{APIKey: "ykey", Secret: "ysecret",
				Unified: map[string]string{"USDT": "100000", "BTC": "2"}, Fund: map[string]string{"USDT": "1000"},
				AddressBook: []bybitfake.BookAddress{{Coin: "USDT", Chain: "TRX", Address: "TXkZ5Ff4qgSBVRrfBMfxcDxUrW5g1mDtKf"}}}); err != nil {
				t.Fatal(err)
			}
			return runningFake{url: f.URL, key: "ykey", secret: "ysecret",
				env:  map[string]string{"EXGATE_BYBIT_URL": f.URL, "EXGATE_BYBIT_WS_URL": f.WSURL(), "EXGATE_BYBIT_WS_PRIVATE_URL": f.WSPrivateURL()},
				fill: func(id string) error { return f.FillOrder("ykey", id) }, pauseStreams: f.PauseStreams}
		},
		withdrawal: client.WithdrawRequest{Asset: "USDT", Network: "TRX", Address: "TXkZ5Ff4qgSBVRrfBMfxcDxUrW5g1mDtKf", Amount: "100"},
		address:    [2]string{"XRP", "XRP"},
	},
}

// keyArgs are the exchange-keys add arguments of the fake's account.
func (f runningFake) keyArgs() []string {
	args := []string{"--key", f.key, "--secret", f.secret}
	if f.passphrase != "" {
		args = append(args, "--passphrase", f.passphrase)
	}
	return args
}

// TestServeEveryRouteOnEachExchange runs `exgate serve` with the
// exchange's URL at its fake, adds a client key and the exchange key with
// the CLI, and calls every route with signed requests.
func TestServeEveryRouteOnEachExchange(t *testing.T) {
	for _, ec := range exchangeCases {
		t.Run(ec.name, func(t *testing.T) {
			fake := ec.start(t)
			url := fake.url
			env := map[string]string{"EXGATE_DATA_DIR": t.TempDir(), ec.envURL: url}
			out, err := runCmd(t, env, "keys", "create", "--label", ec.name)
			if err != nil {
				t.Fatal(err, out)
			}
			var ck struct{ APIKey, SecretKey string }
			_ = json.Unmarshal([]byte(out), &ck)
			args := append([]string{"exchange-keys", "add", "--api-key", ck.APIKey, "--name", "main", "--exchange", ec.name}, fake.keyArgs()...)
			if out, err := runCmd(t, env, append(args, "--permissions", "read,trade,withdraw")...); err != nil {
				t.Fatal(err, out)
			}
			logs, errc := startServer(t, env, "serve", "--addr", "127.0.0.1:0")
			m := waitFor(t, logs, regexp.MustCompile(`exgate listening.*addr=(\S+)`), errc)
			c := client.New("http://"+m[1], ck.APIKey, ck.SecretKey, "main")
			ctx := t.Context()

			if bals, err := c.AccountBalance(ctx); err != nil || len(bals) == 0 {
				t.Errorf("account-balance: %v %v", bals, err)
			}
			if ks, err := c.RecentKlines(ctx, client.KlinesRequest{Asset1: "BTC", Asset2: "USDT", Interval: "1h", Limit: 5}); err != nil || len(ks) != 5 {
				t.Errorf("recent-klines: %d %v", len(ks), err)
			}
			if b, err := c.OrderBook(ctx, client.OrderBookRequest{Asset1: "BTC", Asset2: "USDT", Limit: 5}); err != nil || len(b.Bids) == 0 || len(b.Asks) == 0 {
				t.Errorf("order-book: %+v %v", b, err)
			}
			if _, err := c.RecentDeposits(ctx, client.DepositsFilter{}); err != nil {
				t.Errorf("recent-deposits: %v", err)
			}
			if a, err := c.DepositAddress(ctx, ec.address[0], ec.address[1]); err != nil || a.Address == "" {
				t.Errorf("deposit: %+v %v", a, err)
			}
			o, err := c.PlaceMarketOrder(ctx, client.MarketOrder{Asset1: "BTC", Asset2: "USDT", Side: "BUY", Quantity: "100", QuantityIn: "asset2", ClientOrderID: "e2e-1"})
			if err != nil || o.Exchange != ec.name || o.ClientOrderID != "e2e-1" {
				t.Errorf("order/market: %+v %v", o, err)
			}
			if got, err := c.Order(ctx, client.OrderRef{ClientOrderID: "e2e-1"}); err != nil || got.ID != o.ID {
				t.Errorf("order: %+v %v", got, err)
			}
			w, err := c.Withdraw(ctx, ec.withdrawal)
			if err != nil || w.ID == "" || !strings.EqualFold(w.Asset, ec.withdrawal.Asset) {
				t.Errorf("withdraw: %+v %v", w, err)
			} else if got, err := c.Withdrawal(ctx, client.WithdrawalRef{ID: w.ID}); err != nil || got.ID != w.ID {
				t.Errorf("withdrawal: %+v %v", got, err)
			}
			if _, err := c.OrderBook(ctx, client.OrderBookRequest{Asset1: "USDT", Asset2: "BTC"}); problemCodeOf(err) != "UNKNOWN_SYMBOL" {
				t.Errorf("inverse pair: %v", err)
			}
		})
	}
}

func problemCodeOf(err error) string {
	if ce, ok := errors.AsType[*client.Error](err); ok {
		return ce.Code
	}
	return ""
}
