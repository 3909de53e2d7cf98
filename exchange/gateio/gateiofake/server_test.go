package gateiofake_test

import (
	"crypto/hmac"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/exgate/exgate/exchange/gateio/gateiofake"
)

var now = time.Date(2025, 3, 14, 10, 37, 12, 0, time.UTC)

func clock() time.Time { return now }

func newServer(t *testing.T) *gateiofake.Server {
	t.Helper()
	s := gateiofake.New(gateiofake.Options{Now: clock})
	t.Cleanup(s.Close)
	if err := s.AddAccount(gateiofake.Account{APIKey: "key", Secret: "secret", Balances: map[string]string{"USDT": "1000", "BTC": "1"}}); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSignVectors(t *testing.T) {
	b, err := os.ReadFile("../testdata/signature_vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Vectors []struct{ Secret, Method, Path, Query, Body, Timestamp, Sign string }
	}
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	for _, v := range file.Vectors {
		t.Run(v.Method+" "+v.Path, func(t *testing.T) {
			if got := gateiofake.Sign(v.Secret, v.Method, v.Path, v.Query, []byte(v.Body), v.Timestamp); got != v.Sign {
				t.Errorf("Sign = %s, want %s", got, v.Sign)
			}
		})
	}
}

// signed describes one request to send and how to sign it.
type signed struct {
	method, path, rawQuery, body string
	// signQuery and signBody are what the signature covers when they
	// differ from what is sent; bodyHash overrides the body hash.
	signQuery, signBody *string
	bodyHash            string
	ts                  string
	key, secret         string
	drop                string // a header left out
}

func str(s string) *string { return &s }

func (r signed) send(t *testing.T, s *gateiofake.Server) (int, map[string]any, []byte) {
	t.Helper()
	u := s.URL + r.path
	if r.rawQuery != "" {
		u += "?" + r.rawQuery
	}
	req, err := http.NewRequest(r.method, u, strings.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	q, body := r.rawQuery, r.body
	if r.signQuery != nil {
		q = *r.signQuery
	}
	if r.signBody != nil {
		body = *r.signBody
	}
	ts := r.ts
	if ts == "" {
		ts = strconv.FormatInt(now.Unix(), 10)
	}
	key, secret := "key", "secret"
	if r.key != "" {
		key = r.key
	}
	if r.secret != "" {
		secret = r.secret
	}
	sig := gateiofake.Sign(secret, r.method, r.path, q, []byte(body), ts)
	if r.bodyHash != "" {
		h := sha512.Sum512([]byte(r.bodyHash))
		sig = signWithHash(secret, r.method, r.path, q, hex.EncodeToString(h[:]), ts)
	}
	for name, v := range map[string]string{"KEY": key, "Timestamp": ts, "SIGN": sig} {
		if name != r.drop {
			req.Header.Set(name, v)
		}
	}
	if r.method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return resp.StatusCode, m, raw
}

// signWithHash signs with a given body hash (to show the empty-body rule).
func signWithHash(secret, method, path, query, hash, ts string) string {
	mac := hmac.New(sha512.New, []byte(secret))
	mac.Write([]byte(method + "\n" + path + "\n" + query + "\n" + hash + "\n" + ts))
	return hex.EncodeToString(mac.Sum(nil))
}

func TestAuthentication(t *testing.T) {
	order := `{"text":"t-abc","currency_pair":"BTC_USDT","type":"market","account":"spot","side":"buy","amount":"10","time_in_force":"ioc"}`
	tests := []struct {
		name      string
		req       signed
		status    int
		wantLabel string
	}{
		{name: "GET with a query", req: signed{method: "GET", path: "/api/v4/spot/accounts", rawQuery: "currency=USDT"}, status: 200},
		{name: "GET without a query", req: signed{method: "GET", path: "/api/v4/spot/accounts"}, status: 200},
		{name: "query signed in its decoded form", req: signed{method: "GET", path: "/api/v4/spot/accounts", rawQuery: "currency=US%44T", signQuery: str("currency=USDT")}, status: 200},
		{name: "query signed percent-encoded", req: signed{method: "GET", path: "/api/v4/spot/accounts", rawQuery: "currency=US%44T"}, status: 401, wantLabel: "INVALID_SIGNATURE"},
		{name: "query signed in another order", req: signed{method: "GET", path: "/api/v4/wallet/deposits", rawQuery: "currency=USDT&limit=5", signQuery: str("limit=5&currency=USDT")}, status: 401, wantLabel: "INVALID_SIGNATURE"},
		{name: "query not signed", req: signed{method: "GET", path: "/api/v4/spot/accounts", rawQuery: "currency=USDT", signQuery: str("")}, status: 401, wantLabel: "INVALID_SIGNATURE"},
		{name: "GET signs the hash of the empty body", req: signed{method: "GET", path: "/api/v4/spot/accounts", bodyHash: "{}"}, status: 401, wantLabel: "INVALID_SIGNATURE"},
		{name: "POST", req: signed{method: "POST", path: "/api/v4/spot/orders", body: order}, status: 201},
		{name: "POST body changed after signing", req: signed{method: "POST", path: "/api/v4/spot/orders", body: strings.Replace(order, `"10"`, `"11"`, 1), signBody: str(order)}, status: 401, wantLabel: "INVALID_SIGNATURE"},
		{name: "wrong secret", req: signed{method: "GET", path: "/api/v4/spot/accounts", secret: "wrong"}, status: 401, wantLabel: "INVALID_SIGNATURE"},
		{name: "Timestamp 59 s behind", req: signed{method: "GET", path: "/api/v4/spot/accounts", ts: strconv.FormatInt(now.Unix()-59, 10)}, status: 200},
		{name: "Timestamp 61 s behind", req: signed{method: "GET", path: "/api/v4/spot/accounts", ts: strconv.FormatInt(now.Unix()-61, 10)}, status: 401, wantLabel: "REQUEST_EXPIRED"},
		{name: "Timestamp 61 s ahead", req: signed{method: "GET", path: "/api/v4/spot/accounts", ts: strconv.FormatInt(now.Unix()+61, 10)}, status: 401, wantLabel: "REQUEST_EXPIRED"},
		{name: "fractional Timestamp", req: signed{method: "GET", path: "/api/v4/spot/accounts", ts: strconv.FormatInt(now.Unix(), 10) + ".123456"}, status: 200},
		{name: "expired Timestamp is checked before the key", req: signed{method: "GET", path: "/api/v4/spot/accounts", key: "nobody", ts: "1"}, status: 401, wantLabel: "REQUEST_EXPIRED"},
		{name: "unknown key", req: signed{method: "GET", path: "/api/v4/spot/accounts", key: "nobody"}, status: 401, wantLabel: "INVALID_KEY"},
		{name: "missing SIGN", req: signed{method: "GET", path: "/api/v4/spot/accounts", drop: "SIGN"}, status: 400, wantLabel: "MISSING_REQUIRED_HEADER"},
		{name: "missing Timestamp", req: signed{method: "GET", path: "/api/v4/spot/accounts", drop: "Timestamp"}, status: 400, wantLabel: "MISSING_REQUIRED_HEADER"},
		{name: "unknown parameter", req: signed{method: "GET", path: "/api/v4/spot/accounts", rawQuery: "coin=USDT"}, status: 400, wantLabel: "INVALID_PARAM_VALUE"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t)
			status, m, raw := tc.req.send(t, s)
			if status != tc.status {
				t.Fatalf("status %d (%s), want %d", status, raw, tc.status)
			}
			if tc.wantLabel != "" && m["label"] != tc.wantLabel {
				t.Errorf("label %v (%s), want %s", m["label"], raw, tc.wantLabel)
			}
		})
	}
}

func TestOrderReplyShape(t *testing.T) {
	s := newServer(t)
	body := `{"text":"t-abc123","currency_pair":"BTC_USDT","type":"market","account":"spot","side":"buy","amount":"10","time_in_force":"ioc"}`
	status, m, raw := signed{method: "POST", path: "/api/v4/spot/orders", body: body}.send(t, s)
	if status != http.StatusCreated {
		t.Fatalf("status %d: %s", status, raw)
	}
	for _, f := range []string{"id", "text", "amend_text", "create_time", "update_time", "create_time_ms", "update_time_ms", "status",
		"currency_pair", "type", "account", "side", "amount", "price", "time_in_force", "iceberg", "left", "filled_amount",
		"fill_price", "filled_total", "avg_deal_price", "fee", "fee_currency", "point_fee", "gt_fee", "gt_maker_fee",
		"gt_taker_fee", "gt_discount", "rebated_fee", "rebated_fee_currency", "stp_id", "stp_act", "finish_as"} {
		if _, ok := m[f]; !ok {
			t.Errorf("order reply without %s: %s", f, raw)
		}
	}
	if m["status"] != "closed" || m["finish_as"] != "filled" || m["price"] != "0" || m["fee_currency"] != "BTC" {
		t.Errorf("order reply %s", raw)
	}
	if n := s.OrdersByText("key", "t-abc123"); n != 1 {
		t.Errorf("%d orders with the text, want 1", n)
	}
	// Finished orders are not found by text, only by id.
	status, m, _ = signed{method: "GET", path: "/api/v4/spot/orders/t-abc123", rawQuery: "currency_pair=BTC_USDT"}.send(t, s)
	if status != http.StatusNotFound || m["label"] != "CLIENT_ID_NOT_FOUND" {
		t.Errorf("text lookup of a finished order: %d %v", status, m)
	}
}

func TestOrderRules(t *testing.T) {
	tests := []struct {
		name, body, label string
	}{
		{"gtc market order", `{"currency_pair":"BTC_USDT","type":"market","side":"buy","amount":"10","time_in_force":"gtc"}`, "INVALID_PARAM_VALUE"},
		{"bad text", `{"text":"abc","currency_pair":"BTC_USDT","type":"market","side":"buy","amount":"10","time_in_force":"ioc"}`, "INVALID_PARAM_VALUE"},
		{"text too long", `{"text":"t-` + strings.Repeat("a", 29) + `","currency_pair":"BTC_USDT","type":"market","side":"buy","amount":"10","time_in_force":"ioc"}`, "INVALID_PARAM_VALUE"},
		{"buy under min quote", `{"currency_pair":"BTC_USDT","type":"market","side":"buy","amount":"2","time_in_force":"ioc"}`, "INVALID_PARAM_VALUE"},
		{"buy amount precision", `{"currency_pair":"BTC_USDT","type":"market","side":"buy","amount":"10.05","time_in_force":"ioc"}`, "INVALID_PRECISION"},
		{"sell amount precision", `{"currency_pair":"BTC_USDT","type":"market","side":"sell","amount":"0.0000001","time_in_force":"ioc"}`, "INVALID_PRECISION"},
		{"balance", `{"currency_pair":"BTC_USDT","type":"market","side":"buy","amount":"5000","time_in_force":"ioc"}`, "BALANCE_NOT_ENOUGH"},
		{"unknown pair", `{"currency_pair":"NOPE_USDT","type":"market","side":"buy","amount":"10","time_in_force":"ioc"}`, "INVALID_CURRENCY_PAIR"},
		{"unknown field", `{"currency_pair":"BTC_USDT","type":"market","side":"buy","amount":"10","time_in_force":"ioc","qty":"1"}`, "INVALID_REQUEST_BODY"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t)
			status, m, raw := signed{method: "POST", path: "/api/v4/spot/orders", body: tc.body}.send(t, s)
			if status != http.StatusBadRequest || m["label"] != tc.label {
				t.Errorf("%d %s, want 400 %s", status, raw, tc.label)
			}
		})
	}
}

func TestCandlestickRules(t *testing.T) {
	tests := []struct {
		name, query string
		status      int
		rows        int
		msg         string
	}{
		{name: "limit", query: "currency_pair=BTC_USDT&interval=1m&limit=5", status: 200, rows: 5},
		{name: "default 100", query: "currency_pair=BTC_USDT&interval=1h", status: 200, rows: 100},
		{name: "limit with from", query: "currency_pair=BTC_USDT&interval=1m&limit=5&from=1741940000", status: 400, msg: "limit"},
		{name: "limit over 1000", query: "currency_pair=BTC_USDT&interval=1m&limit=1001", status: 400, msg: "limit"},
		{name: "range of 1000 points", query: "currency_pair=BTC_USDT&interval=1m&from=" + strconv.FormatInt(now.Unix()-999*60-12, 10) + "&to=" + strconv.FormatInt(now.Unix(), 10), status: 200, rows: 1000},
		{name: "range too broad", query: "currency_pair=BTC_USDT&interval=1m&from=" + strconv.FormatInt(now.Unix()-1000*60-12, 10) + "&to=" + strconv.FormatInt(now.Unix(), 10), status: 400, msg: "too broad"},
		{name: "too long ago", query: "currency_pair=BTC_USDT&interval=1m&from=" + strconv.FormatInt(now.Unix()-10002*60, 10) + "&to=" + strconv.FormatInt(now.Unix()-10002*60+600, 10), status: 400, msg: "too long ago"},
		{name: "unknown interval", query: "currency_pair=BTC_USDT&interval=3m", status: 400, msg: "interval"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t)
			resp, err := s.Client().Get(s.URL + "/api/v4/spot/candlesticks?" + tc.query)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d (%s), want %d", resp.StatusCode, raw, tc.status)
			}
			if tc.status != 200 {
				if !strings.Contains(string(raw), tc.msg) {
					t.Errorf("answer %s does not mention %q", raw, tc.msg)
				}
				return
			}
			var rows [][]string
			if err := json.Unmarshal(raw, &rows); err != nil {
				t.Fatal(err)
			}
			if len(rows) != tc.rows {
				t.Fatalf("%d rows, want %d", len(rows), tc.rows)
			}
			for i, r := range rows {
				if len(r) != 8 {
					t.Fatalf("row %v has %d elements, want 8", r, len(r))
				}
				wantClosed := "true"
				if i == len(rows)-1 {
					wantClosed = "false"
				}
				if r[7] != wantClosed {
					t.Errorf("row %d closed flag %s, want %s", i, r[7], wantClosed)
				}
			}
		})
	}
}
