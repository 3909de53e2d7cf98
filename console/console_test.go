package console_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/coalesce"
	"github.com/exgate/exgate/console"
	"github.com/exgate/exgate/exchange"
	"github.com/exgate/exgate/exchange/binance"
	"github.com/exgate/exgate/exchange/gateio"
	"github.com/exgate/exgate/exchange/kraken"
	"github.com/exgate/exgate/exchange/sim"
	"github.com/exgate/exgate/journal"
	"github.com/exgate/exgate/sqlite"
)

// clock is a fake clock that moves only when told.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type env struct {
	st        exgate.Store
	exchanges map[string]exgate.Exchange
	jr        *journal.Service
	clock     *clock
	srv       *httptest.Server
	secrets   []string
}

func newEnv(t *testing.T) *env { return newEnvWith(t, nil) }

// newEnvWith is newEnv with the console's options changed by mod.
func newEnvWith(t *testing.T, mod func(*console.Options)) *env {
	t.Helper()
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "exgate.db"), make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	// Wrapped as the gateway wraps it: the console finds the order
	// lifecycle through the wrapper.
	exchanges := map[string]exgate.Exchange{"sim": coalesce.New(sim.New(sim.Options{Ledger: st}), coalesce.Options{})}
	jr := journal.New(journal.Options{Store: st, Exchanges: exchanges})
	e := &env{st: st, jr: jr, clock: &clock{now: time.Now()}, exchanges: exchanges}
	opts := console.Options{
		Store: st, Exchanges: exchanges, Journal: jr, Now: e.clock.Now,
		// The gateway's exchanges and credential check (its adapter
		// list), sim alone enabled here.
		ExchangeNames: []string{"binance", "kraken", "gateio", "sim"},
		CheckCredential: func(c exgate.Credential) error {
			return exchange.CheckCredential([]exchange.Adapter{binance.Adapter(), kraken.Adapter(), gateio.Adapter(), sim.Adapter()}, c)
		},
		NewClientKey: func(ctx context.Context, label string) (exgate.ClientKey, error) {
			k := exgate.ClientKey{APIKey: "k" + strings.ToLower(exgate.NewID('x')), Secret: "SECRET-" + exgate.NewID('s'), Label: label}
			e.secrets = append(e.secrets, k.Secret)
			return k, st.CreateClientKey(ctx, k)
		},
		Health: func(context.Context) []console.HealthCheck {
			return []console.HealthCheck{{Name: "sim reachability", State: console.HealthOK, Detail: "in process"}}
		},
	}
	if mod != nil {
		mod(&opts)
	}
	h, err := console.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	e.srv = httptest.NewServer(h)
	t.Cleanup(e.srv.Close)
	return e
}

// browser is a client with a cookie jar that sends what a browser sends
// with a same-origin form post.
type browser struct {
	t    *testing.T
	e    *env
	c    *http.Client
	csrf string
}

func (e *env) browser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, e: e, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) get(path string) (int, http.Header, string) {
	b.t.Helper()
	resp, err := b.c.Get(b.e.srv.URL + path)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if m := csrfField.FindStringSubmatch(string(body)); m != nil {
		b.csrf = m[1]
	}
	return resp.StatusCode, resp.Header, string(body)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// post sends a form; headers adds or, with an empty value, removes
// request headers (the same-origin ones are set by default).
func (b *browser) post(path string, form url.Values, headers map[string]string) (int, http.Header, string) {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, b.e.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", b.e.srv.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(body)
}

func (b *browser) loginWith(link string) int {
	b.t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		b.t.Fatal(err)
	}
	code, _, _ := b.post("/login", url.Values{"token": {u.Query().Get("token")}}, nil)
	return code
}

func (e *env) link(t *testing.T) string {
	t.Helper()
	link, err := console.NewLoginURL(t.Context(), e.st, e.srv.URL, e.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	return link
}

func (e *env) loggedIn(t *testing.T) *browser {
	t.Helper()
	b := e.browser(t)
	if code := b.loginWith(e.link(t)); code != http.StatusSeeOther {
		t.Fatalf("login = %d, want 303", code)
	}
	b.get("/keys")
	if b.csrf == "" {
		t.Fatal("the keys page has no CSRF field")
	}
	return b
}

func TestLoginLink(t *testing.T) {
	e := newEnv(t)
	link := e.link(t)
	if !strings.HasPrefix(link, e.srv.URL+"/login?token=") {
		t.Fatalf("link = %q", link)
	}
	// GET shows the button and does not use the link up.
	b := e.browser(t)
	if code, _, body := b.get(strings.TrimPrefix(link, e.srv.URL)); code != 200 || !strings.Contains(body, `action="/login"`) {
		t.Fatalf("GET login link = %d", code)
	}
	if code := b.loginWith(link); code != http.StatusSeeOther {
		t.Fatalf("first use = %d, want 303", code)
	}
	if code, _, _ := b.get("/keys"); code != 200 {
		t.Fatalf("keys after login = %d, want 200", code)
	}
	// Second use, by anyone: refused.
	if code := e.browser(t).loginWith(link); code != http.StatusForbidden {
		t.Fatalf("second use = %d, want 403", code)
	}
	// An expired link: refused.
	old := e.link(t)
	e.clock.Advance(console.LoginValidity)
	if code := e.browser(t).loginWith(old); code != http.StatusForbidden {
		t.Fatalf("expired link = %d, want 403", code)
	}
	// A forged token: refused.
	if code := e.browser(t).loginWith(e.srv.URL + "/login?token=forged"); code != http.StatusForbidden {
		t.Fatalf("forged token = %d, want 403", code)
	}
	// A login posted from another origin: refused, and the link stays usable.
	fresh := e.link(t)
	tok, _ := url.Parse(fresh)
	if code, _, _ := e.browser(t).post("/login", url.Values{"token": {tok.Query().Get("token")}},
		map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}); code != http.StatusForbidden {
		t.Fatalf("cross-site login = %d, want 403", code)
	}
	if code := e.browser(t).loginWith(fresh); code != http.StatusSeeOther {
		t.Fatalf("link after a refused cross-site post = %d, want 303", code)
	}
}

func TestSessionCookieAndExpiry(t *testing.T) {
	e := newEnv(t)
	b := e.browser(t)
	u, _ := url.Parse(e.link(t))
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/login", strings.NewReader(url.Values{"token": {u.Query().Get("token")}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cookie := resp.Header.Get("Set-Cookie")
	for _, want := range []string{"HttpOnly", "SameSite=Strict", "Path=/"} {
		if !strings.Contains(cookie, want) {
			t.Errorf("Set-Cookie %q lacks %s", cookie, want)
		}
	}
	if code, _, _ := b.get("/health"); code != 200 {
		t.Fatalf("health = %d", code)
	}
	// Idle for the whole session: logged out.
	e.clock.Advance(console.SessionIdle)
	if code, hd, _ := b.get("/health"); code != http.StatusSeeOther || hd.Get("Location") != "/login" {
		t.Fatalf("after the idle expiry = %d %q, want 303 to /login", code, hd.Get("Location"))
	}
}

func TestLogout(t *testing.T) {
	e := newEnv(t)
	b := e.loggedIn(t)
	if code, _, _ := b.post("/logout", url.Values{"csrf": {b.csrf}}, nil); code != http.StatusSeeOther {
		t.Fatalf("logout = %d", code)
	}
	if code, _, _ := b.get("/keys"); code != http.StatusSeeOther {
		t.Fatalf("keys after logout = %d, want 303", code)
	}
}

func TestWithoutSession(t *testing.T) {
	e := newEnv(t)
	b := e.browser(t)
	for _, path := range []string{"/", "/keys", "/keys/k1", "/keys/k1/exchange-keys/main", "/market", "/health"} {
		code, hd, _ := b.get(path)
		if code != http.StatusSeeOther || hd.Get("Location") != "/login" {
			t.Errorf("GET %s without a session = %d %q, want 303 to /login", path, code, hd.Get("Location"))
		}
	}
	for _, path := range []string{"/api/market/klines", "/api/market/book", "/api/market/live", "/api/nope"} {
		code, hd, body := b.get(path)
		if code != http.StatusUnauthorized || hd.Get("Content-Type") != "application/problem+json" || !strings.Contains(body, `"status":401`) {
			t.Errorf("GET %s without a session = %d %s %s, want a 401 problem", path, code, hd.Get("Content-Type"), body)
		}
	}
	for _, path := range []string{"/keys", "/keys/k1/revoke", "/logout"} {
		if code, _, _ := b.post(path, url.Values{"csrf": {"x"}}, nil); code != http.StatusForbidden {
			t.Errorf("POST %s without a session = %d, want 403", path, code)
		}
	}
}

func TestSecurityHeaders(t *testing.T) {
	e := newEnv(t)
	b := e.loggedIn(t)
	for _, path := range []string{"/login", "/keys", "/market", "/health", "/assets/console.css", "/api/market/book"} {
		_, hd, _ := b.get(path)
		csp := hd.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'", "form-action 'self'", "base-uri 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: CSP %q lacks %s", path, csp, want)
			}
		}
		if hd.Get("X-Content-Type-Options") != "nosniff" || hd.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("%s: headers %v", path, hd)
		}
	}
	// No inline script or style in any page.
	for _, path := range []string{"/keys", "/market", "/health", "/login"} {
		_, _, body := b.get(path)
		if regexp.MustCompile(`<script>|<script [^>]*>[^<]|<style|style="|\son[a-z]+="`).MatchString(body) {
			t.Errorf("%s has inline script or style", path)
		}
	}
}

func TestCSRF(t *testing.T) {
	e := newEnv(t)
	b := e.loggedIn(t)
	other := e.loggedIn(t)
	tests := []struct {
		name    string
		form    url.Values
		headers map[string]string
	}{
		{"no token", url.Values{}, nil},
		{"wrong token", url.Values{"csrf": {"nope"}}, nil},
		{"another session's token", url.Values{"csrf": {other.csrf}}, nil},
		{"cross-site origin", url.Values{"csrf": {b.csrf}}, map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}},
		{"same-site other origin", url.Values{"csrf": {b.csrf}}, map[string]string{"Origin": "http://127.0.0.1:1", "Sec-Fetch-Site": "same-site"}},
		{"origin null, no fetch metadata", url.Values{"csrf": {b.csrf}}, map[string]string{"Origin": "null", "Sec-Fetch-Site": ""}},
		{"no origin, referer or fetch metadata", url.Values{"csrf": {b.csrf}}, map[string]string{"Origin": "", "Sec-Fetch-Site": ""}},
		{"foreign referer", url.Values{"csrf": {b.csrf}}, map[string]string{"Origin": "", "Sec-Fetch-Site": "", "Referer": "https://evil.example/x"}},
	}
	for _, tc := range tests {
		tc.form.Set("label", "csrf-"+tc.name)
		if code, _, _ := b.post("/keys", tc.form, tc.headers); code != http.StatusForbidden {
			t.Errorf("%s: POST /keys = %d, want 403", tc.name, code)
		}
	}
	keys, _ := e.st.ListClientKeys(t.Context())
	if len(keys) != 0 {
		t.Fatalf("refused posts created %d keys", len(keys))
	}
	// The same form with the token and the console's origin works, also
	// from a browser without fetch metadata (Origin or Referer only).
	for _, h := range []map[string]string{nil, {"Sec-Fetch-Site": ""}, {"Sec-Fetch-Site": "", "Origin": "", "Referer": e.srv.URL + "/keys"}} {
		if code, _, _ := b.post("/keys", url.Values{"csrf": {b.csrf}, "label": {"ok"}}, h); code != 200 {
			t.Errorf("POST /keys with %v = %d, want 200", h, code)
		}
	}
}

// TestSecretsNeverShownAgain creates keys and an exchange key, then reads
// every page: no secret appears after the answer that created it.
func TestSecretsNeverShownAgain(t *testing.T) {
	e := newEnv(t)
	b := e.loggedIn(t)
	code, _, created := b.post("/keys", url.Values{"csrf": {b.csrf}, "label": {"bot"}}, nil)
	if code != 200 || len(e.secrets) != 1 || !strings.Contains(created, e.secrets[0]) {
		t.Fatalf("create = %d; the answer must show the new secret once", code)
	}
	keys, _ := e.st.ListClientKeys(t.Context())
	api := keys[0].APIKey
	const exchangeSecret = "EXCHANGE-SECRET-never-echoed"
	form := url.Values{"csrf": {b.csrf}, "name": {"main"}, "exchange": {"sim"}, "key": {"ek"}, "secret": {exchangeSecret}, "passphrase": {"PASSPHRASE-x"}, "permissions": {"trade"}}
	if code, hd, _ := b.post("/keys/"+api+"/exchange-keys", form, nil); code != http.StatusSeeOther {
		t.Fatalf("add exchange key = %d %v", code, hd)
	}
	// A refused add does not echo the secret either.
	form.Set("name", "bad name")
	if code, _, body := b.post("/keys/"+api+"/exchange-keys", form, nil); code != http.StatusBadRequest || strings.Contains(body, exchangeSecret) {
		t.Fatalf("refused add = %d, echoes the secret: %v", code, strings.Contains(body, exchangeSecret))
	}
	cred, err := e.st.Credential(t.Context(), api, "main")
	if err != nil || cred.Secret != exchangeSecret || !cred.Allows(exgate.PermissionTrade) {
		t.Fatalf("stored credential = %+v, %v", cred.Permissions, err)
	}
	pages := []string{"/keys", "/keys/" + api, "/keys/" + api + "/exchange-keys/main", "/market", "/health",
		"/api/market/klines?symbol=BTC/USDT", "/api/market/book"}
	for _, p := range pages {
		code, _, body := b.get(p)
		if code != 200 {
			t.Errorf("GET %s = %d", p, code)
		}
		for _, s := range append([]string{exchangeSecret, "PASSPHRASE-x"}, e.secrets...) {
			if strings.Contains(body, s) {
				t.Errorf("GET %s contains the secret %q", p, s)
			}
		}
	}
	// Every change is in the audit trail, with the console as actor and
	// without the secrets.
	entries, _ := e.st.AuditLog(t.Context(), exgate.AuditFilter{})
	var actions []string
	for _, en := range entries {
		if en.Actor == exgate.AuditActorConsole {
			actions = append(actions, en.Action)
		}
		for _, v := range en.Details {
			if strings.Contains(v, "SECRET") {
				t.Errorf("audit entry %s holds a secret", en.Action)
			}
		}
	}
	if got := strings.Join(actions, ","); got != "exchange-keys add,keys create,console login" {
		t.Errorf("console audit actions = %s", got)
	}
}

func TestAdminActions(t *testing.T) {
	e := newEnv(t)
	b := e.loggedIn(t)
	b.post("/keys", url.Values{"csrf": {b.csrf}, "label": {"bot"}}, nil)
	keys, _ := e.st.ListClientKeys(t.Context())
	api := keys[0].APIKey
	steps := []struct {
		path string
		form url.Values
		want int
	}{
		{"/keys/" + api + "/allow-ip", url.Values{"allowIps": {"10.0.0.0/8"}}, http.StatusSeeOther},
		{"/keys/" + api + "/allow-ip", url.Values{"allowIps": {"10.0.0.1/8"}}, http.StatusBadRequest},
		{"/keys/" + api + "/exchange-keys", url.Values{"name": {"main"}, "exchange": {"sim"}}, http.StatusSeeOther},
		{"/keys/" + api + "/exchange-keys", url.Values{"name": {"main"}, "exchange": {"sim"}}, http.StatusConflict},
		{"/keys/" + api + "/exchange-keys", url.Values{"name": {"bn"}, "exchange": {"binance"}}, http.StatusBadRequest},
		{"/keys/" + api + "/exchange-keys/main/allow-address", url.Values{"asset": {"btc"}, "network": {"btc"}, "address": {"bc1qshort"}, "hold": {"1h"}}, http.StatusSeeOther}, // refused: under 24 h
		{"/keys/" + api + "/exchange-keys/main/allow-address", url.Values{"asset": {"btc"}, "network": {"btc"}, "address": {"bc1qexample"}, "hold": {"48h"}}, http.StatusSeeOther},
		{"/keys/" + api + "/exchange-keys/main/deny-address", url.Values{"asset": {"BTC"}, "network": {"BTC"}, "address": {"bc1qexample"}}, http.StatusSeeOther},
		{"/keys/" + api + "/revoke", url.Values{}, http.StatusSeeOther},
		{"/keys/nope/revoke", url.Values{}, http.StatusNotFound},
	}
	for _, s := range steps {
		s.form.Set("csrf", b.csrf)
		if code, _, _ := b.post(s.path, s.form, nil); code != s.want {
			t.Errorf("POST %s %v = %d, want %d", s.path, s.form, code, s.want)
		}
	}
	ips, _ := e.st.AllowedIPs(t.Context(), api)
	if exgate.FormatIPAllowlist(ips) != "10.0.0.0/8" {
		t.Errorf("allowlist = %v", ips)
	}
	addrs, _ := e.st.AllowedAddresses(t.Context(), api, "main")
	if len(addrs) != 1 || addrs[0].DeniedAt.IsZero() {
		t.Errorf("addresses = %+v, want one denied", addrs)
	}
	k, _ := e.st.ClientKey(t.Context(), api)
	if k.Active() {
		t.Error("key not revoked")
	}
	entries, _ := e.st.AuditLog(t.Context(), exgate.AuditFilter{APIKey: api})
	if len(entries) != 6 {
		t.Errorf("audit entries of the key = %d, want 6 (create, allow-ip, add, allow-address, deny-address, revoke)", len(entries))
	}
}

// TestCancelThroughJournal: the account page lists an open order with its
// exact decimals; its cancel button cancels through the journal.
func TestCancelThroughJournal(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	b := e.loggedIn(t)
	b.post("/keys", url.Values{"csrf": {b.csrf}, "label": {"bot"}}, nil)
	keys, _ := e.st.ListClientKeys(ctx)
	api := keys[0].APIKey
	b.post("/keys/"+api+"/exchange-keys", url.Values{"csrf": {b.csrf}, "name": {"main"}, "exchange": {"sim"}}, nil)
	cred, err := e.st.Credential(ctx, api, "main")
	if err != nil {
		t.Fatal(err)
	}
	o, err := e.jr.PlaceLimitOrder(ctx, cred, exgate.LimitOrderRequest{Symbol: console.DefaultSymbol, Side: exgate.SideBuy,
		Quantity: decimal.RequireFromString("0.01000"), Price: decimal.RequireFromString("10000.50"), TimeInForce: exgate.GTC}, "my-1")
	if err != nil {
		t.Fatal(err)
	}
	account := "/keys/" + api + "/exchange-keys/main"
	_, _, page := b.get(account)
	if !strings.Contains(page, `data-order-id="`+o.ID+`"`) || !strings.Contains(page, "10000.5") || !strings.Contains(page, "my-1") {
		t.Fatalf("the account page does not list the open order %s", o.ID)
	}
	code, hd, _ := b.post(account+"/cancel", url.Values{"csrf": {b.csrf}, "id": {o.ID}}, nil)
	if code != http.StatusSeeOther || !strings.Contains(hd.Get("Location"), "CANCELED") {
		t.Fatalf("cancel = %d %q", code, hd.Get("Location"))
	}
	got, err := e.jr.Order(ctx, api, o.ID, "")
	if err != nil || got.Status != exgate.OrderCanceled {
		t.Fatalf("order after cancel = %s, %v", got.Status, err)
	}
	cancels, _ := e.st.RecentIntents(ctx, cred.ID, exgate.IntentCancel, 0)
	if len(cancels) != 1 {
		t.Errorf("journaled cancels = %d, want 1", len(cancels))
	}
	_, _, page = b.get(account)
	_, open, _ := strings.Cut(page, `id="open-orders"`)
	open, _, _ = strings.Cut(open, "</table>")
	if strings.Contains(open, `data-order-id="`+o.ID+`"`) {
		t.Error("the canceled order is still listed as open")
	}
	if !regexp.MustCompile(`(?s)id="journal-orders".*` + o.ID + `.*CANCELED.*final: nothing to do`).MatchString(page) {
		t.Error("the journal table does not show the order CANCELED and final")
	}
	entries, _ := e.st.AuditLog(ctx, exgate.AuditFilter{APIKey: api, Limit: 1})
	if len(entries) != 1 || entries[0].Action != "order cancel" || entries[0].IntentID != o.ID || entries[0].Status != 200 {
		t.Errorf("last audit entry = %+v", entries)
	}
}

func TestMarketEndpoints(t *testing.T) {
	e := newEnv(t)
	b := e.loggedIn(t)
	tests := []struct {
		path string
		code int
		has  string
	}{
		{"/api/market/klines?symbol=BTC/USDT&interval=1m", 200, `"openPrice":"`},
		{"/api/market/book?symbol=ETH/USDT", 200, `"bids":[{"price":"`},
		{"/api/market/klines?symbol=BTCUSDT", 400, "INVALID_PARAMETER"},
		{"/api/market/klines?interval=7m", 400, "INVALID_PARAMETER"},
		{"/api/market/book?exchange=binance", 400, "not enabled"},
		{"/api/market/book?symbol=NOPE/USDT", 400, "UNKNOWN_SYMBOL"},
		{"/market?symbol=ETH/USDT&interval=1h", 200, `data-symbol="ETH/USDT"`},
		// The exchange's pairs are offered in the pair field.
		{"/market?symbol=ETH/USDT", 200, `<option value="SOL/USDT">`},
		// An unknown pair is said once, with the pairs to pick from, and
		// the page starts no reads of it (issue 25).
		{"/market?symbol=NOPE/USDT", 200, "NOPE/USDT is not listed on sim: pick one of its"},
		{"/market?symbol=USDT/BTC", 200, "(it lists BTC/USDT)"},
	}
	for _, tc := range tests {
		code, _, body := b.get(tc.path)
		if code != tc.code || !strings.Contains(body, tc.has) {
			t.Errorf("GET %s = %d %.200s, want %d with %s", tc.path, code, body, tc.code, tc.has)
		}
	}
	if _, _, body := b.get("/market?symbol=NOPE/USDT"); strings.Contains(body, `id="market"`) {
		t.Errorf("the page of an unknown pair starts the charts' reads")
	}
}

// TestPaperExchangeKey adds a paper key from the console: it is stored
// with its starting balances and labeled paper on both pages; bad
// balances, or balances without paper, are refused and add nothing.
func TestPaperExchangeKey(t *testing.T) {
	e := newEnv(t)
	b := e.loggedIn(t)
	if code, _, _ := b.post("/keys", url.Values{"csrf": {b.csrf}, "label": {"bot"}}, nil); code != 200 {
		t.Fatalf("create key = %d", code)
	}
	keys, _ := e.st.ListClientKeys(t.Context())
	api := keys[0].APIKey
	add := func(name, paper, balances string) int {
		form := url.Values{"csrf": {b.csrf}, "name": {name}, "exchange": {"binance"}, "permissions": {"trade"}, "balances": {balances}}
		if paper != "" {
			form.Set("paper", paper)
		}
		code, _, _ := b.post("/keys/"+api+"/exchange-keys", form, nil)
		return code
	}
	if code := add("bad", "on", "BTC=-1"); code != http.StatusBadRequest {
		t.Errorf("negative balance = %d, want 400", code)
	}
	if code := add("nopaper", "", "BTC=1"); code != http.StatusBadRequest {
		t.Errorf("balances without paper = %d, want 400", code)
	}
	if code := add("rehearsal", "on", "BTC=1,USDT=5000"); code != http.StatusSeeOther {
		t.Fatalf("add paper key = %d", code)
	}
	creds, err := e.st.ListCredentials(t.Context(), api)
	if err != nil || len(creds) != 1 || !creds[0].Paper || exgate.FormatPaperBalances(creds[0].PaperBalances) != "BTC=1,USDT=5000" {
		t.Fatalf("stored credentials = %+v, %v", creds, err)
	}
	for _, p := range []string{"/keys/" + api, "/keys/" + api + "/exchange-keys/rehearsal"} {
		if code, _, body := b.get(p); code != 200 || !strings.Contains(body, `class="badge warn"`) || !strings.Contains(body, ">paper</span>") {
			t.Errorf("GET %s = %d, without the paper label", p, code)
		}
	}
}
