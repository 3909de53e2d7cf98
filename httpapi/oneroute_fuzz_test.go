package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/sim"
	"github.com/exgate/exgate/httpapi"
	"github.com/exgate/exgate/journal"
	"github.com/exgate/exgate/localstate"
	"github.com/exgate/exgate/sqlite"
)

// claimLog wraps the replay guard and records, per signature, the routes
// on which a claim was granted.
type claimLog struct {
	*localstate.ReplayGuard
	mu      sync.Mutex
	granted map[string]map[string]bool
}

func (c *claimLog) Claim(ctx context.Context, owner, key, route string, expiry time.Time, quota int) (bool, string, error) {
	first, bound, err := c.ReplayGuard.Claim(ctx, owner, key, route, expiry, quota)
	if first {
		c.mu.Lock()
		if c.granted[key] == nil {
			c.granted[key] = map[string]bool{}
		}
		c.granted[key][route] = true
		c.mu.Unlock()
	}
	return first, bound, err
}

// FuzzSignatureOneRoute: a signature accepted on one (method, path,
// exchange key) is never accepted on another (docs/contract.md 2.1), whatever the
// parameters, the routes, and whether the first request was refused by
// the client rate limit.
func FuzzSignatureOneRoute(f *testing.F) {
	f.Add("asset1=BTC&asset2=USDT", uint8(9), uint8(3), false, false, true)
	f.Add("id=abc", uint8(5), uint8(2), false, false, true)
	f.Add("asset1=BTC&asset2=USDT&side=BUY&quantity=100&quantityIn=asset2", uint8(0), uint8(0), false, true, false)
	f.Add("", uint8(12), uint8(12), true, false, true)
	f.Add("asset=ETH&network=ETH&address=0x1&amount=1", uint8(4), uint8(14), true, true, false)

	ctx := f.Context()
	clk := &clock{t: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	st, err := sqlite.Open(ctx, filepath.Join(f.TempDir(), "exgate.db"), bytes.Repeat([]byte{7}, 32))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	const apiKey, secret = "keyfuzz", "secret-of-fuzz"
	if err := st.CreateClientKey(ctx, exgate.ClientKey{APIKey: apiKey, Secret: secret, CreatedAt: clk.Now()}); err != nil {
		f.Fatal(err)
	}
	for _, name := range []string{"demo", "live"} {
		if _, err := st.AddCredential(ctx, exgate.Credential{ClientAPIKey: apiKey, Name: name, Exchange: sim.Name,
			Permissions: []exgate.Permission{exgate.PermissionTrade, exgate.PermissionWithdraw}}); err != nil {
			f.Fatal(err)
		}
	}
	exchanges := map[string]exgate.Exchange{sim.Name: sim.New(sim.Options{Ledger: st, Now: clk.Now})}
	guard := &claimLog{ReplayGuard: localstate.NewReplayGuard(clk.Now), granted: map[string]map[string]bool{}}
	srv := httpapi.New(httpapi.Config{
		Keys: st, Exchanges: exchanges, Ledger: journal.New(journal.Options{Store: st, Exchanges: exchanges, Now: clk.Now}),
		Replay: guard, Limiter: localstate.NewLimiter(clk.Now), RequireTimestamp: true, Now: clk.Now,
		ClientLimit: exgate.RateLimit{Rate: 1, Period: time.Second, Burst: 1},
	})
	send := func(method, path, exKey, params, sig string) (int, string) {
		var req *http.Request
		if method == "GET" {
			q := params
			if q != "" {
				q += "&"
			}
			target := path + "?" + q + "signature=" + sig
			if _, err := url.ParseRequestURI(target); err != nil {
				// No HTTP client can send it (a control character in
				// the query): nothing to grant.
				return http.StatusBadRequest, ""
			}
			req = httptest.NewRequestWithContext(ctx, method, target, nil)
		} else {
			var members []string
			for seg := range strings.SplitSeq(params, "&") {
				k, v, _ := strings.Cut(seg, "=")
				if dk, err := url.QueryUnescape(k); err == nil {
					k = dk
				}
				if dv, err := url.QueryUnescape(v); err == nil {
					v = dv
				}
				kj, _ := json.Marshal(k)
				vj, _ := json.Marshal(v)
				members = append(members, string(kj)+":"+string(vj))
			}
			members = append(members, `"signature":"`+sig+`"`)
			req = httptest.NewRequestWithContext(ctx, method, path, strings.NewReader("{"+strings.Join(members, ",")+"}"))
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("X-API-KEY", apiKey)
		req.Header.Set("X-API-EXCHANGE-KEY", exKey)
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		var p struct{ Code string }
		_ = json.Unmarshal(rec.Body.Bytes(), &p)
		return rec.Code, p.Code
	}

	// Every signed route of the server's table but the stream handshake,
	// which a recorder cannot upgrade.
	var routes []httpapi.Route
	for _, rt := range httpapi.Routes() {
		if rt.Signed && rt.Path != "/v1/stream" {
			routes = append(routes, rt)
		}
	}
	f.Fuzz(func(t *testing.T, params string, r1, r2 uint8, live1, live2, limited bool) {
		if strings.ContainsAny(params, "# \t\r\n") || len(params) > 512 {
			return
		}
		clk.Add(time.Minute) // every earlier signature's window has passed, the budget is full
		ts := strconv.FormatInt(clk.Now().UnixMilli(), 10)
		if params != "" {
			params += "&"
		}
		params += "timestamp=" + ts
		first, second := routes[int(r1)%len(routes)], routes[int(r2)%len(routes)]
		key := func(live bool) string {
			if live {
				return "live"
			}
			return "demo"
		}
		k1, k2 := key(live1), key(live2)
		sig := sign(secret, params)
		if limited {
			// Use up the second's budget, so that the first request is 429.
			send("GET", "/v1/wallet/account-balance", "demo", "timestamp="+strconv.FormatInt(clk.Now().UnixMilli()-1, 10),
				sign(secret, "timestamp="+strconv.FormatInt(clk.Now().UnixMilli()-1, 10)))
		}
		send(first.Method, first.Path, k1, params, sig)
		clk.Add(time.Second)
		status, code := send(second.Method, second.Path, k2, params, sig)

		guardKey := "replay:" + apiKey + ":" + sig
		guard.mu.Lock()
		granted := guard.granted[guardKey]
		routes := make([]string, 0, len(granted))
		for r := range granted {
			routes = append(routes, r)
		}
		delete(guard.granted, guardKey)
		guard.mu.Unlock()
		if len(routes) > 1 {
			t.Fatalf("signature of %q granted on %d routes: %v", params, len(routes), routes)
		}
		route1 := first.Method + " " + first.Path + " " + k1
		route2 := second.Method + " " + second.Path + " " + k2
		if granted[route1] && route1 != route2 && status < 300 {
			t.Fatalf("signature of %q accepted on %s, then on %s: %d %s", params, route1, route2, status, code)
		}
	})
}
