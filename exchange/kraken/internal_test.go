package kraken

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
	"github.com/exgate/exgate/exchange/kraken/krakenfake"
)

// TestSign checks the signing function (and the fake's verifier) against
// the vectors in testdata: Kraken's published example, the Kraken SDK's
// golden test, and two locally computed ones.
func TestSign(t *testing.T) {
	raw, err := os.ReadFile("testdata/signature_vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Vectors []struct {
			Source, Secret, Nonce, URIPath, Body, APISign string
		} `json:"vectors"`
	}
	// Field names differ in case and underscores; map them by hand.
	var loose struct {
		Vectors []map[string]string `json:"vectors"`
	}
	if err := json.Unmarshal(raw, &loose); err != nil {
		t.Fatal(err)
	}
	for _, v := range loose.Vectors {
		file.Vectors = append(file.Vectors, struct{ Source, Secret, Nonce, URIPath, Body, APISign string }{
			v["source"], v["secret"], v["nonce"], v["uri_path"], v["body"], v["api_sign"],
		})
	}
	if len(file.Vectors) < 2 {
		t.Fatalf("only %d vectors", len(file.Vectors))
	}
	for _, v := range file.Vectors {
		t.Run(v.URIPath+" "+v.Nonce+" "+v.Body[:min(len(v.Body), 12)], func(t *testing.T) {
			got, err := sign(v.Secret, v.URIPath, v.Nonce, v.Body)
			if err != nil {
				t.Fatal(err)
			}
			if got != v.APISign {
				t.Errorf("sign = %s, want %s (%s)", got, v.APISign, v.Source)
			}
			key, _ := base64.StdEncoding.DecodeString(v.Secret)
			if fake := krakenfake.Sign(key, v.URIPath, v.Nonce, v.Body); fake != v.APISign {
				t.Errorf("krakenfake.Sign = %s, want %s", fake, v.APISign)
			}
		})
	}
	if _, err := sign("not base64!", "/0/private/Balance", "1", "nonce=1"); err == nil {
		t.Error("sign with a non-base64 secret: no error")
	}
}

func TestOrderStatusTable(t *testing.T) {
	tests := []struct {
		raw      string
		executed bool
		want     exgate.OrderStatus
	}{
		{"pending", false, exgate.OrderPending},
		{"open", false, exgate.OrderPending},
		{"open", true, exgate.OrderPartiallyFilled},
		{"pending", true, exgate.OrderPartiallyFilled},
		{"closed", true, exgate.OrderFilled},
		{"canceled", false, exgate.OrderCanceled},
		{"canceled", true, exgate.OrderCanceled},
		{"expired", false, exgate.OrderExpired},
		{"something-new", false, exgate.OrderPending},
	}
	for _, tc := range tests {
		if got := orderStatus(tc.raw, tc.executed); got != tc.want {
			t.Errorf("orderStatus(%q, executed=%v) = %s, want %s", tc.raw, tc.executed, got, tc.want)
		}
	}
}

func TestDepositStatusTable(t *testing.T) {
	tests := []struct {
		status, prop string
		want         exgate.TransferStatus
	}{
		{"Initial", "", exgate.TransferPending},
		{"Pending", "", exgate.TransferPending},
		{"Settled", "", exgate.TransferPending},
		{"Success", "", exgate.TransferCompleted},
		{"Failure", "", exgate.TransferFailed},
		{"Success", "onhold", exgate.TransferPending},
		{"Pending", "on-hold", exgate.TransferPending},
		{"Failure", "return", exgate.TransferFailed},
		{"Success", "return", exgate.TransferFailed},
		{"Partial", "", exgate.TransferPending},
	}
	for _, tc := range tests {
		if got := depositStatus(tc.status, tc.prop); got != tc.want {
			t.Errorf("depositStatus(%q, %q) = %s, want %s", tc.status, tc.prop, got, tc.want)
		}
	}
	if got := rawTransferStatus("Success", "onhold"); got != "Success/onhold" {
		t.Errorf("rawTransferStatus = %q", got)
	}
	if got := rawTransferStatus("Pending", ""); got != "Pending" {
		t.Errorf("rawTransferStatus = %q", got)
	}
}

func TestWithdrawalStatusTable(t *testing.T) {
	tests := []struct {
		status, prop string
		want         exgate.TransferStatus
	}{
		{"Initial", "", exgate.TransferPending},
		{"Pending", "", exgate.TransferPending},
		{"Settled", "", exgate.TransferPending},
		{"Success", "", exgate.TransferCompleted},
		{"Failure", "", exgate.TransferFailed},
		{"Failure", "canceled", exgate.TransferCanceled},
		{"Pending", "cancel-pending", exgate.TransferPending},
		{"Pending", "cancel-denied", exgate.TransferPending},
		{"Pending", "onhold", exgate.TransferPending},
		{"Failure", "return", exgate.TransferFailed},
		{"Unheard", "", exgate.TransferPending},
	}
	for _, tc := range tests {
		if got := withdrawalStatus(tc.status, tc.prop); got != tc.want {
			t.Errorf("withdrawalStatus(%q, %q) = %s, want %s", tc.status, tc.prop, got, tc.want)
		}
	}
}

func TestMethodNetwork(t *testing.T) {
	tests := map[string]string{
		"Bitcoin":            "BTC",
		"Bitcoin Lightning":  "LIGHTNING",
		"Ether (Hex)":        "ETH",
		"Tether USD (ERC20)": "ETH",
		"Tether USD (TRC20)": "TRX",
		"USD Coin (SPL)":     "SOL",
		"Solana":             "SOL",
		"Ripple XRP":         "XRP",
		"Dogecoin":           "DOGE",
		"Tron":               "TRX",
		"SEPA":               "",
		"Tether USD (Moon)":  "",
	}
	for method, want := range tests {
		if got := methodNetwork(method); got != want {
			t.Errorf("methodNetwork(%q) = %q, want %q", method, got, want)
		}
	}
	if got := transferNetwork("Bitcoin", "Bitcoin"); got != "BTC" {
		t.Errorf("transferNetwork(Bitcoin, Bitcoin) = %q", got)
	}
	if got := transferNetwork("Wire", ""); got != "Wire" {
		t.Errorf("transferNetwork(Wire) = %q, want the method kept", got)
	}
}

// TestIntervalTable checks that every normalized interval is served and
// that each built one comes from a Kraken interval that divides it.
func TestIntervalTable(t *testing.T) {
	native := map[int]bool{1: true, 5: true, 15: true, 30: true, 60: true, 240: true, 1440: true, 10080: true, 21600: true}
	for _, iv := range exgate.Intervals {
		src, ok := krakenIntervals[iv]
		if !ok {
			t.Errorf("interval %s is not served", iv)
			continue
		}
		if !native[src.minutes] {
			t.Errorf("interval %s uses %d minutes, not a Kraken interval", iv, src.minutes)
		}
		if time.Duration(src.minutes)*time.Minute != src.from.Duration() {
			t.Errorf("interval %s: rows of %d minutes labelled %s", iv, src.minutes, src.from)
		}
		if d := iv.Duration(); d != 0 && d%src.from.Duration() != 0 {
			t.Errorf("interval %s is built from %s, which does not divide it", iv, src.from)
		}
		if !src.native {
			// The largest Kraken interval that divides iv must be used.
			for m := range native {
				md := time.Duration(m) * time.Minute
				d := iv.Duration()
				if iv == exgate.Interval1M {
					d = 24 * time.Hour // months are built from days
				}
				if md > src.from.Duration() && md <= d && d%md == 0 {
					t.Errorf("interval %s is built from %s but %d minutes also divides it", iv, src.from, m)
				}
			}
		}
	}
}

// TestAssetAndPairNames builds the name tables from the fake's Assets and
// AssetPairs and checks both directions, with the codes that look
// prefixed but are not (XTZ, ZRX) and the legacy ones (XXRP, XZEC).
func TestAssetAndPairNames(t *testing.T) {
	srv := krakenfake.New(krakenfake.Options{})
	defer srv.Close()
	ex := New(Options{BaseURL: srv.URL, Nonces: &memNonces{}, Limiter: nopLimiter{}})
	m, err := ex.loadMarkets(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	toCommon := map[string]string{
		"XXBT": "BTC", "XBT": "BTC", "XETH": "ETH", "ETH": "ETH", "ZUSD": "USD", "USD": "USD",
		"ZEUR": "EUR", "XXDG": "DOGE", "XDG": "DOGE", "XTZ": "XTZ", "XXRP": "XRP", "XRP": "XRP",
		"XZEC": "ZEC", "ZEC": "ZEC", "ZRX": "ZRX", "XXLM": "XLM", "XLM": "XLM", "USDT": "USDT",
		"SOL": "SOL", "DOT": "DOT", "KFEE": "FEE", "ETH2.S": "ETH2.S",
		// Not in Assets: the legacy table, else unchanged (never stripped).
		"XMLN": "MLN", "ZGBP": "GBP", "XFOO": "XFOO", "ZBAR": "ZBAR",
	}
	for name, want := range toCommon {
		if got := m.common(name); got != want {
			t.Errorf("common(%q) = %q, want %q", name, got, want)
		}
	}
	toID := map[string]string{
		"BTC": "XXBT", "ETH": "XETH", "USD": "ZUSD", "EUR": "ZEUR", "DOGE": "XXDG", "XTZ": "XTZ",
		"XRP": "XXRP", "ZEC": "XZEC", "ZRX": "ZRX", "XLM": "XXLM", "USDT": "USDT", "SOL": "SOL",
	}
	for common, want := range toID {
		if got, ok := m.assetID(common); !ok || got != want {
			t.Errorf("assetID(%q) = %q, %v; want %q", common, got, ok, want)
		}
	}
	for _, bad := range []string{"XBT", "XDG", "XXBT", "ETH2.S"} {
		if id, ok := m.assetID(bad); ok {
			t.Errorf("assetID(%q) = %q, want no such common code", bad, id)
		}
	}
	pairs := []struct {
		sym                  exgate.Symbol
		key, altname, wsname string
	}{
		{exgate.Symbol{Base: "BTC", Quote: "USD"}, "XXBTZUSD", "XBTUSD", "XBT/USD"},
		{exgate.Symbol{Base: "BTC", Quote: "USDT"}, "XBTUSDT", "XBTUSDT", "XBT/USDT"},
		{exgate.Symbol{Base: "ETH", Quote: "BTC"}, "XETHXXBT", "ETHXBT", "ETH/XBT"},
		{exgate.Symbol{Base: "XTZ", Quote: "USD"}, "XTZUSD", "XTZUSD", "XTZ/USD"},
		{exgate.Symbol{Base: "XRP", Quote: "USD"}, "XXRPZUSD", "XRPUSD", "XRP/USD"},
		{exgate.Symbol{Base: "ZEC", Quote: "USD"}, "XZECZUSD", "ZECUSD", "ZEC/USD"},
		{exgate.Symbol{Base: "DOGE", Quote: "USD"}, "XDGUSD", "XDGUSD", "XDG/USD"},
		{exgate.Symbol{Base: "ZRX", Quote: "USD"}, "ZRXUSD", "ZRXUSD", "ZRX/USD"},
		{exgate.Symbol{Base: "USDT", Quote: "USD"}, "USDTZUSD", "USDTUSD", "USDT/USD"},
	}
	for _, p := range pairs {
		mk, err := m.market(p.sym)
		if err != nil {
			t.Errorf("market(%s): %v", p.sym, err)
			continue
		}
		if mk.key != p.key {
			t.Errorf("market(%s).key = %q, want %q", p.sym, mk.key, p.key)
		}
		for _, name := range []string{p.key, p.altname, p.wsname} {
			if got := m.byName[name]; got != mk {
				t.Errorf("pair name %q resolves to %v, want %s", name, got, p.key)
			}
		}
	}
	_, err = m.market(exgate.Symbol{Base: "USD", Quote: "USDT"})
	if xe, ok := errors.AsType[*exgate.Error](err); !ok || xe.Code != exgate.CodeUnknownSymbol || !strings.Contains(xe.Detail, "USDT/USD") {
		t.Errorf("market(USD/USDT) = %v, want UNKNOWN_SYMBOL naming USDT/USD", err)
	}
	if mk, _ := m.market(exgate.Symbol{Base: "DOGE", Quote: "USD"}); mk.status != "online" {
		t.Errorf("a pair without status has status %q, want online", mk.status)
	}
}

// TestErrorTable maps every Kraken error string of the table (and an
// unknown one) for reads, orders and withdrawals.
func TestErrorTable(t *testing.T) {
	const (
		unavailable = exgate.CodeExchangeUnavailable
		timeout     = exgate.CodeExchangeTimeout
		auth        = exgate.CodeExchangeAuthFailed
	)
	type want struct{ read, order, withdraw exgate.Code }
	tests := []struct {
		msg      string
		want     want
		retry    bool // RetryAfter set
		pause    bool
		notFound bool
	}{
		{msg: "EAPI:Invalid key", want: want{auth, auth, auth}},
		{msg: "EAPI:Invalid signature", want: want{auth, auth, auth}},
		{msg: "EAPI:Invalid nonce", want: want{unavailable, unavailable, unavailable}, retry: true},
		{msg: "EAPI:Permission denied", want: want{auth, auth, auth}},
		{msg: "EGeneral:Permission denied", want: want{auth, auth, auth}},
		{msg: "ESession:Invalid session", want: want{auth, auth, auth}},
		{msg: "EAPI:Rate limit exceeded", want: want{unavailable, unavailable, unavailable}, retry: true, pause: true},
		{msg: "EOrder:Rate limit exceeded", want: want{unavailable, unavailable, unavailable}, retry: true, pause: true},
		{msg: "EOrder:Domain rate limit exceeded", want: want{unavailable, unavailable, unavailable}, retry: true, pause: true},
		{msg: "EService:Throttled: 1741965000", want: want{unavailable, unavailable, unavailable}, retry: true, pause: true},
		{msg: "EGeneral:Too many requests", want: want{unavailable, unavailable, unavailable}, retry: true, pause: true},
		{msg: "EGeneral:Temporary lockout", want: want{unavailable, unavailable, unavailable}, retry: true, pause: true},
		{msg: "EService:Unavailable", want: want{unavailable, unavailable, unavailable}, retry: true, pause: true},
		{msg: "EService:Market in cancel_only mode", want: want{exgate.CodeOrderRejected, exgate.CodeOrderRejected, exgate.CodeOrderRejected}},
		{msg: "EService:Market in post_only mode", want: want{exgate.CodeOrderRejected, exgate.CodeOrderRejected, exgate.CodeOrderRejected}},
		{msg: "EService:Market in limit_only mode", want: want{exgate.CodeOrderRejected, exgate.CodeOrderRejected, exgate.CodeOrderRejected}},
		{msg: "EService:Deadline elapsed", want: want{unavailable, unavailable, unavailable}},
		{msg: "EService:Busy", want: want{unavailable, timeout, timeout}, retry: true, pause: true},
		{msg: "EGeneral:Internal error", want: want{unavailable, timeout, timeout}, retry: true, pause: true},
		{msg: "EDatabase:Internal error", want: want{unavailable, timeout, timeout}, retry: true, pause: true},
		{msg: "EGeneral:Invalid arguments:volume", want: want{exgate.CodeInvalidParameter, exgate.CodeOrderRejected, exgate.CodeWithdrawalRejected}},
		{msg: "EQuery:Unknown asset pair", want: want{exgate.CodeUnknownSymbol, exgate.CodeUnknownSymbol, exgate.CodeUnknownSymbol}},
		{msg: "EQuery:Unknown asset", want: want{exgate.CodeInvalidParameter, exgate.CodeInvalidParameter, exgate.CodeInvalidParameter}},
		{msg: "EFunding:Unknown asset", want: want{exgate.CodeInvalidParameter, exgate.CodeInvalidParameter, exgate.CodeInvalidParameter}},
		{msg: "EOrder:Insufficient funds", want: want{exgate.CodeInsufficientFunds, exgate.CodeInsufficientFunds, exgate.CodeInsufficientFunds}},
		{msg: "EOrder:Insufficient margin", want: want{exgate.CodeInsufficientFunds, exgate.CodeInsufficientFunds, exgate.CodeInsufficientFunds}},
		{msg: "EOrder:Order minimum not met", want: want{exgate.CodeQuantityTooSmall, exgate.CodeQuantityTooSmall, exgate.CodeQuantityTooSmall}},
		{msg: "EOrder:Cost minimum not met", want: want{exgate.CodeQuantityTooSmall, exgate.CodeQuantityTooSmall, exgate.CodeQuantityTooSmall}},
		{msg: "EOrder:Orders limit exceeded", want: want{exgate.CodeOrderRejected, exgate.CodeOrderRejected, exgate.CodeOrderRejected}},
		{msg: "EOrder:Trading agreement required", want: want{exgate.CodeOrderRejected, exgate.CodeOrderRejected, exgate.CodeOrderRejected}},
		{msg: "EOrder:Unknown order", want: want{exgate.CodeNotFound, exgate.CodeNotFound, exgate.CodeNotFound}, notFound: true},
		{msg: "EOrder:Invalid order", want: want{exgate.CodeNotFound, exgate.CodeNotFound, exgate.CodeNotFound}, notFound: true},
		{msg: "EOrder:Tick size check failed", want: want{exgate.CodeInvalidParameter, exgate.CodeInvalidParameter, exgate.CodeInvalidParameter}},
		{msg: "EOrder:Invalid price", want: want{exgate.CodeInvalidParameter, exgate.CodeInvalidParameter, exgate.CodeInvalidParameter}},
		{msg: "EOrder:Positions limit exceeded", want: want{exgate.CodeOrderRejected, exgate.CodeOrderRejected, exgate.CodeOrderRejected}},
		{msg: "EFunding:Unknown withdraw key", want: want{exgate.CodeWithdrawalRejected, exgate.CodeWithdrawalRejected, exgate.CodeWithdrawalRejected}},
		{msg: "EFunding:Insufficient funds", want: want{exgate.CodeInsufficientFunds, exgate.CodeInsufficientFunds, exgate.CodeInsufficientFunds}},
		{msg: "EFunding:Invalid amount", want: want{exgate.CodeWithdrawalRejected, exgate.CodeWithdrawalRejected, exgate.CodeWithdrawalRejected}},
		{msg: "EFunding:Max fee exceeded", want: want{exgate.CodeWithdrawalRejected, exgate.CodeWithdrawalRejected, exgate.CodeWithdrawalRejected}},
		{msg: "EFunding:No funding method", want: want{exgate.CodeInvalidParameter, exgate.CodeInvalidParameter, exgate.CodeInvalidParameter}},
		{msg: "EFunding:Too many addresses", want: want{exgate.CodeExchangeError, exgate.CodeExchangeError, exgate.CodeExchangeError}},
		{msg: "EFunding:Invalid withdrawal address", want: want{exgate.CodeWithdrawalRejected, exgate.CodeWithdrawalRejected, exgate.CodeWithdrawalRejected}},
		{msg: "EBM:limit exceeded:CAL", want: want{exgate.CodeExchangeError, exgate.CodeExchangeError, exgate.CodeExchangeError}},
	}
	// Every rule of the table is exercised.
	for _, r := range errorRules {
		covered := false
		for _, tc := range tests {
			if rule, _ := matchError(tc.msg); rule.prefix == r.prefix {
				covered = true
			}
		}
		if !covered {
			t.Errorf("error rule %q has no test case", r.prefix)
		}
	}
	now := time.Unix(1741965000-3, 0)
	for _, tc := range tests {
		for _, k := range []struct {
			name string
			kind callKind
			want exgate.Code
		}{{"read", kindRead, tc.want.read}, {"order", kindOrder, tc.want.order}, {"withdraw", kindWithdraw, tc.want.withdraw}} {
			t.Run(tc.msg+"/"+k.name, func(t *testing.T) {
				lim := &recLimiter{}
				c := &client{Transport: rest.Transport{Exchange: "kraken", Now: func() time.Time { return now }, Limiter: lim, Log: discardLogger()}}
				err := c.classify(t.Context(), k.kind, "kraken:rest:k", restCounter[TierStarter], "Method", &apiError{messages: []string{tc.msg}})
				xe, ok := errors.AsType[*exgate.Error](err)
				if !ok {
					t.Fatalf("classify = %v, want *exgate.Error", err)
				}
				if xe.Code != k.want {
					t.Errorf("code = %s, want %s (detail %q)", xe.Code, k.want, xe.Detail)
				}
				if !strings.Contains(xe.Detail, tc.msg) {
					t.Errorf("detail %q does not carry Kraken's message %q", xe.Detail, tc.msg)
				}
				if xe.Code == timeout {
					return
				}
				if (xe.RetryAfter > 0) != tc.retry {
					t.Errorf("RetryAfter = %s, want set: %v", xe.RetryAfter, tc.retry)
				}
				if (lim.paused != "") != tc.pause {
					t.Errorf("paused %q, want a pause: %v", lim.paused, tc.pause)
				}
				if errors.Is(err, exgate.ErrNotFound) != tc.notFound {
					t.Errorf("errors.Is(ErrNotFound) = %v, want %v", !tc.notFound, tc.notFound)
				}
			})
		}
	}
	// Cancels are mutations (an ambiguous answer is EXCHANGE_TIMEOUT);
	// validate=true places nothing, so its ambiguous answers are not.
	for _, tc := range []struct {
		kind  callKind
		msg   string
		want  exgate.Code
		param string
	}{
		{kindCancel, "EGeneral:Internal error", timeout, ""},
		{kindCancel, "EOrder:Invalid order", exgate.CodeNotFound, ""},
		{kindValidate, "EGeneral:Internal error", unavailable, ""},
		{kindValidate, "EGeneral:Invalid arguments:volume", exgate.CodeOrderRejected, ""},
		{kindOrder, "EOrder:Tick size check failed", exgate.CodeInvalidParameter, "price"},
	} {
		c := &client{Transport: rest.Transport{Exchange: "kraken", Now: func() time.Time { return now }, Limiter: &recLimiter{}, Log: discardLogger()}}
		err := c.classify(t.Context(), tc.kind, "kraken:trade:k:XBTUSDT", tradingCounter[TierStarter], "Method", &apiError{messages: []string{tc.msg}})
		if xe, ok := errors.AsType[*exgate.Error](err); !ok || xe.Code != tc.want || xe.Param != tc.param {
			t.Errorf("kind %d, %s: %v, want %s naming %q", tc.kind, tc.msg, err, tc.want, tc.param)
		}
	}
	t.Run("rate limit backoff drains three counter points", func(t *testing.T) {
		lim := &recLimiter{}
		c := &client{Transport: rest.Transport{Exchange: "kraken", Now: func() time.Time { return now }, Limiter: lim, Log: discardLogger()}}
		err := c.classify(t.Context(), kindRead, "kraken:rest:k", restCounter[TierStarter], "Balance", &apiError{messages: []string{"EAPI:Rate limit exceeded"}})
		xe, _ := errors.AsType[*exgate.Error](err)
		if xe.RetryAfter != 9*time.Second || !lim.until.Equal(now.Add(9*time.Second)) {
			t.Errorf("RetryAfter %s, paused until %s; want 9s (3 points at 0.33/s)", xe.RetryAfter, lim.until)
		}
	})
	t.Run("throttled until the given time", func(t *testing.T) {
		lim := &recLimiter{}
		c := &client{Transport: rest.Transport{Exchange: "kraken", Now: func() time.Time { return now }, Limiter: lim, Log: discardLogger()}}
		err := c.classify(t.Context(), kindRead, "kraken:rest:k", restCounter[TierStarter], "Balance", &apiError{messages: []string{"EService:Throttled:1741965000"}})
		xe, _ := errors.AsType[*exgate.Error](err)
		if xe.RetryAfter != 3*time.Second {
			t.Errorf("RetryAfter %s, want 3s", xe.RetryAfter)
		}
	})
}

// recLimiter records the last pause.
type recLimiter struct {
	nopLimiter
	paused string
	until  time.Time
}

func (l *recLimiter) Pause(_ context.Context, key string, until time.Time) error {
	l.paused, l.until = key, until
	return nil
}

type nopLimiter struct{}

func (nopLimiter) Reserve(context.Context, string, int, exgate.RateLimit) (time.Duration, error) {
	return 0, nil
}
func (nopLimiter) Pause(context.Context, string, time.Time) error { return nil }
func (nopLimiter) PausedUntil(context.Context, string) (time.Time, error) {
	return time.Time{}, nil
}

type memNonces struct {
	mu   sync.Mutex
	last int64
}

func (n *memNonces) Next(_ context.Context, _ string, floor int64) (int64, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.last = max(n.last+1, floor)
	return n.last, nil
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
