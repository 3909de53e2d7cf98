package kraken_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/kraken"
	"github.com/exgate/exgate/exchange/kraken/krakenfake"
)

// capture records the form bodies (POST) or queries (GET) of requests to
// path, leaving them intact for the fake; fault, when set, decides what
// the fake does with the nth request (1-based).
type capture struct {
	mu    sync.Mutex
	forms []url.Values
}

func (c *capture) all() []url.Values {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]url.Values(nil), c.forms...)
}

func (c *capture) last(t testing.TB) url.Values {
	t.Helper()
	all := c.all()
	if len(all) == 0 {
		t.Fatal("no request captured")
	}
	return all[len(all)-1]
}

func watch(srv *krakenfake.Server, path string, fault func(n int) krakenfake.Fault) *capture {
	c := &capture{}
	srv.SetFault(func(r *http.Request) krakenfake.Fault {
		if r.URL.Path != path {
			return krakenfake.Fault{}
		}
		form := r.URL.Query()
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			form, _ = url.ParseQuery(string(body))
		}
		c.mu.Lock()
		c.forms = append(c.forms, form)
		n := len(c.forms)
		c.mu.Unlock()
		if fault != nil {
			return fault(n)
		}
		return krakenfake.Fault{}
	})
	return c
}

// wantCode checks err's exgate code and that its detail names every
// mention.
func wantCode(t testing.TB, err error, code exgate.Code, mention ...string) *exgate.Error {
	t.Helper()
	xe, ok := errors.AsType[*exgate.Error](err)
	if !ok {
		t.Fatalf("error %v, want *exgate.Error %s", err, code)
	}
	if xe.Code != code {
		t.Fatalf("code %s (%q), want %s", xe.Code, xe.Detail, code)
	}
	for _, m := range mention {
		if !strings.Contains(xe.Detail, m) {
			t.Errorf("detail %q does not name %q", xe.Detail, m)
		}
	}
	return xe
}

func TestMarketOrderForms(t *testing.T) {
	tests := []struct {
		name         string
		side         exgate.Side
		in           exgate.QuantityIn
		qty          string
		wantVolume   func(bestBid decimal.Decimal) string
		wantOflags   string
		wantQuantity string
		wantIn       string
	}{
		{
			name: "BUY in base", side: exgate.SideBuy, in: exgate.InBase, qty: "0.00123456789",
			wantVolume: func(decimal.Decimal) string { return "0.00123456" }, wantOflags: "fciq",
			wantQuantity: "0.00123456", wantIn: "BTC",
		},
		{
			name: "SELL in base", side: exgate.SideSell, in: exgate.InBase, qty: "0.001",
			wantVolume: func(decimal.Decimal) string { return "0.001" }, wantOflags: "fciq",
			wantQuantity: "0.001", wantIn: "BTC",
		},
		{
			name: "BUY in quote uses viqc", side: exgate.SideBuy, in: exgate.InQuote, qty: "50.1234567",
			wantVolume: func(decimal.Decimal) string { return "50.12345" }, wantOflags: "viqc",
			wantQuantity: "50.12345", wantIn: "USDT",
		},
		{
			name: "SELL in quote converted on the bids", side: exgate.SideSell, in: exgate.InQuote, qty: "50",
			wantVolume: func(bid decimal.Decimal) string {
				q, _ := dec("50").QuoRem(bid, 8)
				return q.String()
			},
			wantOflags: "fciq", wantQuantity: "50", wantIn: "USDT",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, krakenfake.Options{}, nil)
			ctx := t.Context()
			ob, err := e.ex.OrderBook(ctx, e.cred, exgate.OrderBookRequest{Symbol: btcUSDT, Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			bestBid := dec(ob.Bids[0].Price)
			btcBefore, usdtBefore := e.srv.Balance(testKey, "XXBT"), e.srv.Balance(testKey, "USDT")
			adds := watch(e.srv, "/0/private/AddOrder", nil)
			req := exgate.OrderRequest{Symbol: btcUSDT, Side: tc.side, Quantity: dec(tc.qty), QuantityIn: tc.in, ClientOrderID: exgate.NewID('o')}
			o, err := e.ex.PlaceMarketOrder(ctx, e.cred, req)
			if err != nil {
				t.Fatal(err)
			}
			form := adds.last(t)
			wantForm := url.Values{
				"pair": {"XBTUSDT"}, "type": {strings.ToLower(string(tc.side))}, "ordertype": {"market"},
				"volume": {tc.wantVolume(bestBid)}, "oflags": {tc.wantOflags}, "cl_ord_id": {req.ClientOrderID},
			}
			for k, v := range wantForm {
				if form.Get(k) != v[0] {
					t.Errorf("AddOrder %s = %q, want %q", k, form.Get(k), v[0])
				}
			}
			if o.Status != exgate.OrderFilled || o.RawStatus != "closed" {
				t.Errorf("status %s (%s), want FILLED (closed)", o.Status, o.RawStatus)
			}
			if o.ID != req.ClientOrderID || o.ClientOrderID != req.ClientOrderID || o.ExchangeOrderID == "" {
				t.Errorf("ids %q %q %q", o.ID, o.ClientOrderID, o.ExchangeOrderID)
			}
			if o.Quantity.String() != tc.wantQuantity || o.QuantityIn != tc.wantIn {
				t.Errorf("quantity %s %s, want %s %s", o.Quantity, o.QuantityIn, tc.wantQuantity, tc.wantIn)
			}
			if o.Fees == nil || !o.Fees.IsPositive() || o.FeesIn != "USDT" {
				t.Fatalf("fees %v %s, want > 0 USDT", o.Fees, o.FeesIn)
			}
			if o.ExecutedQuantity == nil || o.QuoteQuantity == nil || o.AveragePrice == nil {
				t.Fatalf("executed %v quote %v average %v, want all set", o.ExecutedQuantity, o.QuoteQuantity, o.AveragePrice)
			}
			if o.CloseAt < o.OpenAt {
				t.Errorf("closeAt %d before openAt %d", o.CloseAt, o.OpenAt)
			}
			// The balances moved by exactly what the order reports.
			dBTC := e.srv.Balance(testKey, "XXBT").Sub(btcBefore)
			dUSDT := e.srv.Balance(testKey, "USDT").Sub(usdtBefore)
			wantBTC, wantUSDT := o.ExecutedQuantity.Decimal, o.QuoteQuantity.Add(o.Fees.Decimal).Neg()
			if tc.side == exgate.SideSell {
				wantBTC, wantUSDT = wantBTC.Neg(), o.QuoteQuantity.Sub(o.Fees.Decimal)
			}
			if !dBTC.Equal(wantBTC) || !dUSDT.Equal(wantUSDT) {
				t.Errorf("balances moved BTC %s USDT %s, want %s and %s", dBTC, dUSDT, wantBTC, wantUSDT)
			}
			if tc.in == exgate.InQuote && tc.side == exgate.SideSell {
				// The converted volume sells for at most the quote asked.
				if o.QuoteQuantity.GreaterThan(dec(tc.qty)) {
					t.Errorf("sold for %s, more than the %s asked", o.QuoteQuantity, tc.qty)
				}
			}
		})
	}
}

func TestQuantityTooSmall(t *testing.T) {
	xtz := exgate.Symbol{Base: "XTZ", Quote: "USD"}
	lvl := func(p string) []krakenfake.Level {
		return []krakenfake.Level{{Price: dec(p), Volume: dec("100000")}}
	}
	tests := []struct {
		name     string
		side     exgate.Side
		in       exgate.QuantityIn
		qty      string
		bid, ask string
		mention  []string
	}{
		{"base below ordermin", exgate.SideBuy, exgate.InBase, "3.999999999", "0.8", "0.81", []string{"4 XTZ"}},
		{"base notional below costmin", exgate.SideSell, exgate.InBase, "4", "0.1", "0.11", []string{"0.5 USD"}},
		{"BUY quote below costmin", exgate.SideBuy, exgate.InQuote, "0.49", "0.8", "0.81", []string{"0.5 USD"}},
		{"BUY quote buys less than ordermin", exgate.SideBuy, exgate.InQuote, "0.6", "0.19", "0.2", []string{"4 XTZ"}},
		{"SELL quote below costmin", exgate.SideSell, exgate.InQuote, "0.45", "0.8", "0.81", []string{"0.5 USD"}},
		{"SELL quote converts to less than ordermin", exgate.SideSell, exgate.InQuote, "0.6", "0.2", "0.21", []string{"4 XTZ"}},
		{"rounds to zero", exgate.SideBuy, exgate.InBase, "0.000000001", "0.8", "0.81", []string{"4 XTZ"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, krakenfake.Options{}, nil)
			e.srv.SetBook("XTZUSD", lvl(tc.bid), lvl(tc.ask))
			_, err := e.ex.PlaceMarketOrder(t.Context(), e.cred, exgate.OrderRequest{
				Symbol: xtz, Side: tc.side, Quantity: dec(tc.qty), QuantityIn: tc.in, ClientOrderID: exgate.NewID('o'),
			})
			wantCode(t, err, exgate.CodeQuantityTooSmall, tc.mention...)
			if n := e.srv.Requests("/0/private/AddOrder"); n != 0 {
				t.Errorf("%d AddOrder requests, want none", n)
			}
		})
	}
	t.Run("market not online", func(t *testing.T) {
		e := newEnv(t, krakenfake.Options{}, nil)
		_, err := e.ex.PlaceMarketOrder(t.Context(), e.cred, exgate.OrderRequest{
			Symbol: exgate.Symbol{Base: "DOT", Quote: "USD"}, Side: exgate.SideBuy, Quantity: dec("10"), QuantityIn: exgate.InBase, ClientOrderID: exgate.NewID('o'),
		})
		wantCode(t, err, exgate.CodeOrderRejected, "cancel_only")
		if n := e.srv.Requests("/0/private/AddOrder"); n != 0 {
			t.Errorf("%d AddOrder requests, want none", n)
		}
	})
	t.Run("bids too thin to convert", func(t *testing.T) {
		e := newEnv(t, krakenfake.Options{}, nil)
		e.srv.SetBook("XTZUSD", []krakenfake.Level{{Price: dec("0.8"), Volume: dec("10")}}, lvl("0.81"))
		_, err := e.ex.PlaceMarketOrder(t.Context(), e.cred, exgate.OrderRequest{
			Symbol: xtz, Side: exgate.SideSell, Quantity: dec("100"), QuantityIn: exgate.InQuote, ClientOrderID: exgate.NewID('o'),
		})
		wantCode(t, err, exgate.CodeOrderRejected, "too thin")
		if n := e.srv.Requests("/0/private/AddOrder"); n != 0 {
			t.Errorf("%d AddOrder requests, want none", n)
		}
	})
	t.Run("insufficient funds from Kraken", func(t *testing.T) {
		e := newEnv(t, krakenfake.Options{}, nil)
		_, err := e.ex.PlaceMarketOrder(t.Context(), e.cred, exgate.OrderRequest{
			Symbol: btcUSDT, Side: exgate.SideSell, Quantity: dec("11"), QuantityIn: exgate.InBase, ClientOrderID: exgate.NewID('o'),
		})
		wantCode(t, err, exgate.CodeInsufficientFunds, "EOrder:Insufficient funds")
	})
}

func TestPendingOrderAndQuery(t *testing.T) {
	e := newEnv(t, krakenfake.Options{}, nil)
	ctx := t.Context()
	e.srv.HoldOrders(true)
	req := exgate.OrderRequest{Symbol: btcUSDT, Side: exgate.SideBuy, Quantity: dec("0.01"), QuantityIn: exgate.InBase, ClientOrderID: exgate.NewID('o')}
	o, err := e.ex.PlaceMarketOrder(ctx, e.cred, req)
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != exgate.OrderPending || o.CloseAt != o.OpenAt || o.Fees != nil || o.RawStatus != "open" {
		t.Errorf("held order: status %s raw %s openAt %d closeAt %d fees %v; want PENDING, closeAt == openAt, no fees", o.Status, o.RawStatus, o.OpenAt, o.CloseAt, o.Fees)
	}
	got, err := e.ex.QueryOrder(ctx, e.cred, exgate.OrderQuery{Symbol: btcUSDT, ClientOrderID: req.ClientOrderID})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != exgate.OrderPending || got.ExchangeOrderID != o.ExchangeOrderID || got.ID != req.ClientOrderID {
		t.Errorf("QueryOrder while open: %+v", got)
	}
	e.srv.FillHeldOrders()
	for _, q := range []exgate.OrderQuery{
		{Symbol: btcUSDT, ClientOrderID: req.ClientOrderID},
		{Symbol: btcUSDT, ClientOrderID: req.ClientOrderID, ExchangeOrderID: o.ExchangeOrderID},
	} {
		got, err := e.ex.QueryOrder(ctx, e.cred, q)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != exgate.OrderFilled || got.Fees == nil || got.CloseAt < got.OpenAt || got.OpenAt != o.OpenAt {
			t.Errorf("QueryOrder(%+v) after fill: %+v", q, got)
		}
	}
	if n := e.srv.OrdersByClientID(testKey, req.ClientOrderID); n != 1 {
		t.Errorf("the fake holds %d orders with the client id, want 1", n)
	}
	_, err = e.ex.QueryOrder(ctx, e.cred, exgate.OrderQuery{Symbol: btcUSDT, ClientOrderID: req.ClientOrderID, ExchangeOrderID: "OXXXXX-XXXXX-XXXXXX"})
	if !errors.Is(err, exgate.ErrNotFound) {
		t.Errorf("QueryOrder by an unknown txid: %v, want ErrNotFound", err)
	}
}

// TestOrderOutcomeUnknown checks that an order whose answer is lost is
// EXCHANGE_TIMEOUT, is sent exactly once, and is found again by its client
// id exactly when Kraken processed it.
func TestOrderOutcomeUnknown(t *testing.T) {
	tests := []struct {
		name      string
		fault     krakenfake.Fault
		timeout   time.Duration
		processed bool
	}{
		{"answer lost after processing", krakenfake.Fault{DropAfter: true}, 0, true},
		{"connection dropped before processing", krakenfake.Fault{Drop: true}, 0, false},
		{"HTTP 502 from the edge", krakenfake.Fault{Status: 502, Body: "bad gateway"}, 0, false},
		{"HTTP 520 from the edge", krakenfake.Fault{Status: 520, Body: ""}, 0, false},
		{"Kraken internal error", krakenfake.Fault{Status: 200, Body: `{"error":["EGeneral:Internal error"]}`}, 0, false},
		{"unparseable answer", krakenfake.Fault{Status: 200, Body: `{"error":[],"result":`}, 0, false},
		{"no answer in time", krakenfake.Fault{Delay: 5 * time.Second}, 300 * time.Millisecond, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, krakenfake.Options{}, nil)
			// Load markets and the book first so that only AddOrder is faulted.
			if _, err := e.ex.OrderBook(t.Context(), e.cred, exgate.OrderBookRequest{Symbol: btcUSDT, Limit: 10}); err != nil {
				t.Fatal(err)
			}
			watch(e.srv, "/0/private/AddOrder", func(int) krakenfake.Fault { return tc.fault })
			ctx := t.Context()
			if tc.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.timeout)
				defer cancel()
			}
			req := exgate.OrderRequest{Symbol: btcUSDT, Side: exgate.SideBuy, Quantity: dec("0.01"), QuantityIn: exgate.InBase, ClientOrderID: exgate.NewID('o')}
			_, err := e.ex.PlaceMarketOrder(ctx, e.cred, req)
			wantCode(t, err, exgate.CodeExchangeTimeout)
			if n := e.srv.Requests("/0/private/AddOrder"); n != 1 {
				t.Errorf("%d AddOrder requests, want exactly 1", n)
			}
			e.srv.SetFault(nil)
			got, err := e.ex.QueryOrder(t.Context(), e.cred, exgate.OrderQuery{Symbol: btcUSDT, ClientOrderID: req.ClientOrderID})
			if tc.processed {
				if err != nil || got.Status != exgate.OrderFilled || got.ID != req.ClientOrderID {
					t.Errorf("QueryOrder after a lost answer: %+v, %v; want the FILLED order", got, err)
				}
			} else if !errors.Is(err, exgate.ErrNotFound) {
				t.Errorf("QueryOrder after an unprocessed order: %+v, %v; want ErrNotFound", got, err)
			}
		})
	}
}

func TestReadsRetried(t *testing.T) {
	t.Run("5xx then success", func(t *testing.T) {
		e := newEnv(t, krakenfake.Options{}, nil)
		watch(e.srv, "/0/public/Depth", func(n int) krakenfake.Fault {
			if n == 1 {
				return krakenfake.Fault{Status: 502, Body: "bad gateway"}
			}
			return krakenfake.Fault{}
		})
		if _, err := e.ex.OrderBook(t.Context(), e.cred, exgate.OrderBookRequest{Symbol: btcUSDT, Limit: 5}); err != nil {
			t.Fatal(err)
		}
		if n := e.srv.Requests("/0/public/Depth"); n != 2 {
			t.Errorf("%d Depth requests, want 2", n)
		}
	})
	t.Run("dropped connection then success", func(t *testing.T) {
		e := newEnv(t, krakenfake.Options{}, nil)
		watch(e.srv, "/0/private/BalanceEx", func(n int) krakenfake.Fault {
			return krakenfake.Fault{Drop: n == 1}
		})
		if _, err := e.ex.Balances(t.Context(), e.cred); err != nil {
			t.Fatal(err)
		}
		if n := e.srv.Requests("/0/private/BalanceEx"); n != 2 {
			t.Errorf("%d BalanceEx requests, want 2", n)
		}
	})
	t.Run("gives up after three attempts", func(t *testing.T) {
		e := newEnv(t, krakenfake.Options{}, nil)
		watch(e.srv, "/0/private/BalanceEx", func(int) krakenfake.Fault { return krakenfake.Fault{Status: 503, Body: "down"} })
		_, err := e.ex.Balances(t.Context(), e.cred)
		wantCode(t, err, exgate.CodeExchangeUnavailable)
		if n := e.srv.Requests("/0/private/BalanceEx"); n != 3 {
			t.Errorf("%d BalanceEx requests, want 3", n)
		}
	})
}

// staleNonces always returns the same nonce, as a second client on the
// same key would make Kraken see it.
type staleNonces struct{}

func (staleNonces) Next(context.Context, string, int64) (int64, error) {
	return 1_700_000_000_000_000, nil
}

func TestInvalidNonce(t *testing.T) {
	e := newEnv(t, krakenfake.Options{}, func(o *kraken.Options) { o.Nonces = staleNonces{} })
	ctx := t.Context()
	if _, err := e.ex.Balances(ctx, e.cred); err != nil {
		t.Fatalf("first call: %v", err)
	}
	_, err := e.ex.Balances(ctx, e.cred)
	wantCode(t, err, exgate.CodeExchangeUnavailable, "EAPI:Invalid nonce")
	if n := e.srv.Requests("/0/private/BalanceEx"); n != 4 {
		t.Errorf("%d BalanceEx requests, want 1 + 3 attempts", n)
	}
	_, err = e.ex.PlaceMarketOrder(ctx, e.cred, exgate.OrderRequest{Symbol: btcUSDT, Side: exgate.SideBuy, Quantity: dec("0.01"), QuantityIn: exgate.InBase, ClientOrderID: exgate.NewID('o')})
	wantCode(t, err, exgate.CodeExchangeUnavailable, "nothing was placed")
	if n := e.srv.Requests("/0/private/AddOrder"); n != 1 {
		t.Errorf("%d AddOrder requests, want 1 (never re-sent)", n)
	}
}

// TestConcurrentPrivateCalls runs 200 private calls at once on one API
// key: the per-key lock keeps the nonces in order, so Kraken (the fake)
// refuses none.
func TestConcurrentPrivateCalls(t *testing.T) {
	e := newEnv(t, krakenfake.Options{}, nil)
	ctx := t.Context()
	if _, err := e.ex.Balances(ctx, e.cred); err != nil { // load markets
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for i := range 200 {
		wg.Go(func() {
			var err error
			switch i % 3 {
			case 0:
				_, err = e.ex.Balances(ctx, e.cred)
			case 1:
				_, err = e.ex.RecentDeposits(ctx, e.cred, exgate.DepositFilter{})
			default:
				_, err = e.ex.QueryOrder(ctx, e.cred, exgate.OrderQuery{Symbol: btcUSDT, ClientOrderID: exgate.NewID('o')})
				if errors.Is(err, exgate.ErrNotFound) {
					err = nil
				}
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent private call: %v", err)
		}
	}
	// No attempt was refused (a retried read would hide one).
	if n := e.srv.Refused("EAPI:Invalid nonce"); n != 0 {
		t.Errorf("Kraken refused %d nonces, want none", n)
	}
}

// TestNonceUnit checks that nonces are microseconds since the epoch,
// strictly increasing per key.
func TestNonceUnit(t *testing.T) {
	e := newEnv(t, krakenfake.Options{}, nil)
	bals := watch(e.srv, "/0/private/BalanceEx", nil)
	for range 3 {
		if _, err := e.ex.Balances(t.Context(), e.cred); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, f := range bals.all() {
		got = append(got, f.Get("nonce"))
	}
	us := testNow.UnixMicro()
	want := []string{fmt.Sprint(us), fmt.Sprint(us + 1), fmt.Sprint(us + 2)}
	if !slices.Equal(got, want) {
		t.Errorf("nonces %v, want %v", got, want)
	}
}

func TestAuthErrors(t *testing.T) {
	e := newEnv(t, krakenfake.Options{}, nil)
	ctx := t.Context()
	bad := e.cred
	bad.Secret = "AAAA" + testSecret[4:]
	_, err := e.ex.Balances(ctx, bad)
	wantCode(t, err, exgate.CodeExchangeAuthFailed, "EAPI:Invalid signature")
	unknown := e.cred
	unknown.Key = "no-such-key"
	_, err = e.ex.Balances(ctx, unknown)
	wantCode(t, err, exgate.CodeExchangeAuthFailed, "EAPI:Invalid key")
	before := e.srv.Requests("/0/private/BalanceEx")
	notB64 := e.cred
	notB64.Secret = "not base64 !"
	_, err = e.ex.Balances(ctx, notB64)
	wantCode(t, err, exgate.CodeExchangeAuthFailed, "base64")
	if n := e.srv.Requests("/0/private/BalanceEx"); n != before {
		t.Errorf("a request was sent with an unusable secret")
	}
}

func TestPacing(t *testing.T) {
	t.Run("wait beyond the deadline sends nothing", func(t *testing.T) {
		e := newEnv(t, krakenfake.Options{}, nil)
		e.limiter.wait = func(key string) time.Duration {
			if strings.HasPrefix(key, "kraken:rest:") {
				return time.Hour
			}
			return 0
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		_, err := e.ex.Balances(ctx, e.cred)
		xe := wantCode(t, err, exgate.CodeExchangeUnavailable, "nothing was sent")
		if xe.RetryAfter != time.Hour {
			t.Errorf("RetryAfter %s, want 1h", xe.RetryAfter)
		}
		if n := e.srv.Requests("/0/private/BalanceEx"); n != 0 {
			t.Errorf("%d BalanceEx requests, want none", n)
		}
	})
	t.Run("short wait then proceed", func(t *testing.T) {
		e := newEnv(t, krakenfake.Options{}, nil)
		var mu sync.Mutex
		waited := false
		e.limiter.wait = func(key string) time.Duration {
			mu.Lock()
			defer mu.Unlock()
			if strings.HasPrefix(key, "kraken:rest:") && !waited {
				waited = true
				return 20 * time.Millisecond
			}
			return 0
		}
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		if _, err := e.ex.Balances(ctx, e.cred); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("budgets per key", func(t *testing.T) {
		e := newEnv(t, krakenfake.Options{}, nil)
		_, err := e.ex.PlaceMarketOrder(t.Context(), e.cred, exgate.OrderRequest{Symbol: btcUSDT, Side: exgate.SideBuy, Quantity: dec("0.01"), QuantityIn: exgate.InBase, ClientOrderID: exgate.NewID('o')})
		if err != nil {
			t.Fatal(err)
		}
		e.limiter.mu.Lock()
		defer e.limiter.mu.Unlock()
		if n := e.limiter.reserved["kraken:trade:"+testKey+":XBTUSDT"]; n != 1 {
			t.Errorf("trading counter reservations %d, want 1 (AddOrder)", n)
		}
		if n := e.limiter.reserved["kraken:rest:"+testKey]; n != 1 {
			t.Errorf("REST counter reservations %d, want 1 (QueryOrders)", n)
		}
		if n := e.limiter.reserved["kraken:public"]; n != 3 {
			t.Errorf("public reservations %d, want 3 (Assets, AssetPairs, Depth)", n)
		}
	})
	t.Run("rate limit answer pauses the key", func(t *testing.T) {
		e := newEnv(t, krakenfake.Options{}, nil)
		watch(e.srv, "/0/private/BalanceEx", func(int) krakenfake.Fault {
			return krakenfake.Fault{Status: 200, Body: `{"error":["EAPI:Rate limit exceeded"]}`}
		})
		_, err := e.ex.Balances(t.Context(), e.cred)
		xe := wantCode(t, err, exgate.CodeExchangeUnavailable, "EAPI:Rate limit exceeded")
		if xe.RetryAfter != 9*time.Second {
			t.Errorf("RetryAfter %s, want 9s", xe.RetryAfter)
		}
		if got := e.limiter.pausedUntil("kraken:rest:" + testKey); !got.Equal(testNow.Add(9 * time.Second)) {
			t.Errorf("paused until %s, want %s", got, testNow.Add(9*time.Second))
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		_, err = e.ex.Balances(ctx, e.cred)
		wantCode(t, err, exgate.CodeExchangeUnavailable, "nothing was sent")
		if n := e.srv.Requests("/0/private/BalanceEx"); n != 1 {
			t.Errorf("%d BalanceEx requests, want 1 (paused after it)", n)
		}
	})
	t.Run("HTTP 429 pauses public calls", func(t *testing.T) {
		e := newEnv(t, krakenfake.Options{}, nil)
		e.srv.SetFault(func(r *http.Request) krakenfake.Fault {
			return krakenfake.Fault{Status: http.StatusTooManyRequests, Body: "slow down"}
		})
		_, err := e.ex.OrderBook(t.Context(), e.cred, exgate.OrderBookRequest{Symbol: btcUSDT, Limit: 5})
		xe := wantCode(t, err, exgate.CodeExchangeUnavailable, "429")
		if xe.RetryAfter <= 0 || e.limiter.pausedUntil("kraken:public").IsZero() {
			t.Errorf("RetryAfter %s, pause %s; want both set", xe.RetryAfter, e.limiter.pausedUntil("kraken:public"))
		}
	})
}

// TestDefaults runs the adapter with its default limiter and nonces (the
// localstate ones) on the real clock.
func TestDefaults(t *testing.T) {
	srv := krakenfake.New(krakenfake.Options{})
	t.Cleanup(srv.Close)
	if err := srv.AddAccount(krakenfake.Account{Key: testKey, Secret: testSecret, Balances: map[string]string{"USDT": "1000"}}); err != nil {
		t.Fatal(err)
	}
	ex := kraken.New(kraken.Options{BaseURL: srv.URL})
	cred := exgate.Credential{Exchange: kraken.Name, Key: testKey, Secret: testSecret}
	if ex.Name() != "kraken" {
		t.Errorf("Name() = %q", ex.Name())
	}
	for range 5 {
		bals, err := ex.Balances(t.Context(), cred)
		if err != nil {
			t.Fatal(err)
		}
		if len(bals) != 1 || bals[0].Asset != "USDT" {
			t.Errorf("balances %+v", bals)
		}
	}
	o, err := ex.PlaceMarketOrder(t.Context(), cred, exgate.OrderRequest{Symbol: btcUSDT, Side: exgate.SideBuy, Quantity: dec("20"), QuantityIn: exgate.InQuote, ClientOrderID: exgate.NewID('o')})
	if err != nil || o.Status != exgate.OrderFilled {
		t.Fatalf("order %+v, %v", o, err)
	}
}
