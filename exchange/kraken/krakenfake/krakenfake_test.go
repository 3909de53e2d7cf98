package krakenfake_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/exgate/exgate/exchange/kraken/krakenfake"
)

var secret = []byte("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")

func newServer(t *testing.T) *krakenfake.Server {
	t.Helper()
	srv := krakenfake.New(krakenfake.Options{Now: func() time.Time { return time.Unix(1741965000, 0) }})
	t.Cleanup(srv.Close)
	err := srv.AddAccount(krakenfake.Account{
		Key: "key", Secret: base64.StdEncoding.EncodeToString(secret),
		Balances: map[string]string{"XXBT": "1", "USDT": "1000"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// call sends a private request signed by hand and returns Kraken's error
// list.
func call(t *testing.T, srv *krakenfake.Server, method, key string, nonce uint64, form url.Values, sign func(path, nonce, body string) string) []string {
	t.Helper()
	form.Set("nonce", strconv.FormatUint(nonce, 10))
	body := form.Encode()
	path := "/0/private/" + method
	req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("API-Key", key)
	req.Header.Set("API-Sign", sign(path, strconv.FormatUint(nonce, 10), body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var env struct {
		Error  []string        `json:"error"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("HTTP %d", resp.StatusCode)
	}
	return env.Error
}

func good(path, nonce, body string) string { return krakenfake.Sign(secret, path, nonce, body) }

func TestNonceAndSignature(t *testing.T) {
	srv := newServer(t)
	tests := []struct {
		name  string
		key   string
		nonce uint64
		sign  func(path, nonce, body string) string
		want  string
	}{
		{"first nonce", "key", 100, good, ""},
		{"same nonce again", "key", 100, good, "EAPI:Invalid nonce"},
		{"smaller nonce", "key", 99, good, "EAPI:Invalid nonce"},
		{"larger nonce", "key", 101, good, ""},
		{"unknown key", "nokey", 200, good, "EAPI:Invalid key"},
		{"signature over another path", "key", 300, func(_, n, b string) string { return good("/0/private/Balance", n, b) }, "EAPI:Invalid signature"},
		{"signature over another body", "key", 301, func(p, n, _ string) string { return good(p, n, "nonce="+n+"&x=1") }, "EAPI:Invalid signature"},
		{"signature with another secret", "key", 302, func(p, n, b string) string { return krakenfake.Sign([]byte("other"), p, n, b) }, "EAPI:Invalid signature"},
		{"refused nonces are not consumed", "key", 102, good, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			errs := call(t, srv, "BalanceEx", tc.key, tc.nonce, url.Values{}, tc.sign)
			got := strings.Join(errs, ",")
			if got != tc.want {
				t.Errorf("errors %q, want %q", got, tc.want)
			}
		})
	}
}

func TestAddOrderChecks(t *testing.T) {
	srv := newServer(t)
	nonce := uint64(1000)
	tests := []struct {
		name string
		form url.Values
		want string
	}{
		{"unknown pair", url.Values{"pair": {"NOPE"}, "type": {"buy"}, "ordertype": {"market"}, "volume": {"0.01"}}, "EQuery:Unknown asset pair"},
		{"bad side", url.Values{"pair": {"XBTUSDT"}, "type": {"long"}, "ordertype": {"market"}, "volume": {"0.01"}}, "EGeneral:Invalid arguments:type"},
		{"limit order without a price", url.Values{"pair": {"XBTUSDT"}, "type": {"buy"}, "ordertype": {"limit"}, "volume": {"0.01"}}, "EGeneral:Invalid arguments:price"},
		{"limit price off the tick", url.Values{"pair": {"XBTUSDT"}, "type": {"buy"}, "ordertype": {"limit"}, "volume": {"0.01"}, "price": {"25000.05"}}, "EGeneral:Invalid arguments:price"},
		{"FOK is not a Kraken time in force", url.Values{"pair": {"XBTUSDT"}, "type": {"buy"}, "ordertype": {"limit"}, "volume": {"0.01"}, "price": {"25000"}, "timeinforce": {"FOK"}}, "EGeneral:Invalid arguments:timeinforce"},
		{"post with IOC", url.Values{"pair": {"XBTUSDT"}, "type": {"buy"}, "ordertype": {"limit"}, "volume": {"0.01"}, "price": {"25000"}, "timeinforce": {"IOC"}, "oflags": {"post"}}, "EGeneral:Invalid arguments:oflags"},
		{"a parameter Kraken does not document", url.Values{"pair": {"XBTUSDT"}, "type": {"buy"}, "ordertype": {"limit"}, "volume": {"0.01"}, "price": {"25000"}, "timeInForce": {"GTC"}}, "EGeneral:Invalid arguments:timeInForce"},
		{"stop orders not served", url.Values{"pair": {"XBTUSDT"}, "type": {"buy"}, "ordertype": {"stop-loss"}, "volume": {"0.01"}}, "EGeneral:Invalid arguments:ordertype"},
		{"too many decimals", url.Values{"pair": {"XBTUSDT"}, "type": {"buy"}, "ordertype": {"market"}, "volume": {"0.000000001"}}, "EGeneral:Invalid arguments:volume"},
		{"viqc on a sell", url.Values{"pair": {"XBTUSDT"}, "type": {"sell"}, "ordertype": {"market"}, "volume": {"10"}, "oflags": {"viqc"}}, "EGeneral:Invalid arguments:viqc"},
		{"below ordermin", url.Values{"pair": {"XBTUSDT"}, "type": {"buy"}, "ordertype": {"market"}, "volume": {"0.00001"}}, "EOrder:Order minimum not met"},
		{"below costmin", url.Values{"pair": {"XBTUSDT"}, "type": {"buy"}, "ordertype": {"market"}, "volume": {"0.4"}, "oflags": {"viqc"}}, "EOrder:Cost minimum not met"},
		{"insufficient funds", url.Values{"pair": {"XBTUSDT"}, "type": {"sell"}, "ordertype": {"market"}, "volume": {"2"}}, "EOrder:Insufficient funds"},
		{"bad client id", url.Values{"pair": {"XBTUSDT"}, "type": {"buy"}, "ordertype": {"market"}, "volume": {"0.001"}, "cl_ord_id": {"this id is far too long"}}, "EGeneral:Invalid arguments:cl_ord_id"},
		{"cancel-only market", url.Values{"pair": {"DOTUSD"}, "type": {"buy"}, "ordertype": {"market"}, "volume": {"1"}}, "EService:Market in cancel_only mode"},
		{"ok", url.Values{"pair": {"XBTUSDT"}, "type": {"buy"}, "ordertype": {"market"}, "volume": {"0.001"}, "cl_ord_id": {"abc123"}}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nonce++
			errs := call(t, srv, "AddOrder", "key", nonce, tc.form, good)
			if got := strings.Join(errs, ","); got != tc.want {
				t.Errorf("errors %q, want %q", got, tc.want)
			}
		})
	}
	if n := srv.OrdersByClientID("key", "abc123"); n != 1 {
		t.Errorf("%d orders with the client id, want 1", n)
	}
}
