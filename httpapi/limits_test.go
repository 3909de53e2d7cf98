package httpapi_test

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/httpapi"
	"github.com/exgate/exgate/localstate"
	"github.com/exgate/exgate/redis"
)

// limiterOr is l, or an in-process limiter on now.
func limiterOr(l exgate.Limiter, now func() time.Time) exgate.Limiter {
	if l != nil {
		return l
	}
	return localstate.NewLimiter(now)
}

func per10s(n int) exgate.RateLimit {
	return exgate.RateLimit{Rate: n, Period: 10 * time.Second, Burst: n}
}

const limitWithdrawBody = `"asset":"BTC","network":"BTC","address":"bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh","amount":"0.01"`

// Issue 16: market data, orders (cancels included) and withdrawals are
// limited separately per client key; spending one budget leaves the others
// and the routes without one untouched.
func TestRouteLimitsIndependent(t *testing.T) {
	g := newGateway(t, options{routeLimits: httpapi.RouteLimits{MarketData: per10s(2), Orders: per10s(2), Withdrawals: per10s(1)}})
	book := request{path: "/v1/market/order-book", query: "asset1=BTC&asset2=USDT&limit=5"}
	order := request{method: "POST", path: "/v1/order/market", body: marketBuy}
	cancel := request{method: "POST", path: "/v1/order/cancel", body: `"clientOrderId":"nope"`}
	withdraw := request{method: "POST", path: "/v1/wallet/withdraw", body: limitWithdrawBody}
	balance := request{path: "/v1/wallet/account-balance"}
	steps := []struct {
		name    string
		req     request
		limited bool
	}{
		{"market data 1", book, false},
		{"market data 2", book, false},
		{"market data over", book, true},
		{"order 1", order, false},
		{"cancel counts as an order", cancel, false},
		{"order over", order, true},
		{"withdrawal 1", withdraw, false},
		{"withdrawal over", withdraw, true},
		{"a route without its own budget", balance, false},
		{"market data still over", book, true},
	}
	for _, st := range steps {
		r := g.do(st.req)
		if got := r.status == 429; got != st.limited {
			t.Fatalf("%s: %d %s; want limited %v", st.name, r.status, r.body, st.limited)
		}
		if st.limited && (r.problem(t)["code"] != "RATE_LIMITED" || r.header.Get("Retry-After") == "") {
			t.Fatalf("%s: %v %s", st.name, r.header, r.body)
		}
	}
	// Another client key has budgets of its own.
	other, otherSecret := g.addClient("client-b")
	g.addCredential(other, "demo")
	if r := g.do(request{path: book.path, query: book.query, apiKey: &other, secret: otherSecret}); r.status != 200 {
		t.Fatalf("another key's market data: %d %s", r.status, r.body)
	}
	g.clock.Add(10 * time.Second)
	if r := g.do(book); r.status != 200 {
		t.Fatalf("market data after 10 s: %d %s", r.status, r.body)
	}
}

// A request refused by a route's limit does not use up its signature: the
// same signed order is accepted once the budget refills, then is a replay
// (docs/contract.md 2.1).
func TestRouteLimitKeepsSignature(t *testing.T) {
	g := newGateway(t, options{routeLimits: httpapi.RouteLimits{Orders: per10s(1)}})
	if r := g.do(request{method: "POST", path: "/v1/order/market", body: marketBuy}); r.status != 200 {
		t.Fatalf("first order: %d %s", r.status, r.body)
	}
	body := marketBuy + `,"timestamp":` + strconv.FormatInt(g.clock.Now().UnixMilli(), 10) + `,"recvWindow":60000`
	steps := []struct {
		advance    time.Duration
		wantStatus int
		wantCode   string
	}{
		{0, 429, "RATE_LIMITED"},
		{10 * time.Second, 200, ""},
		{10 * time.Second, 401, "REPLAYED_REQUEST"},
	}
	for i, st := range steps {
		g.clock.Add(st.advance)
		r := g.do(request{method: "POST", path: "/v1/order/market", body: body})
		if r.status != st.wantStatus {
			t.Fatalf("step %d: %d %s; want %d", i, r.status, r.body, st.wantStatus)
		}
		if st.wantCode != "" && r.problem(t)["code"] != st.wantCode {
			t.Fatalf("step %d: %s; want %s", i, r.body, st.wantCode)
		}
	}
}

// Two instances sharing Redis share each client key's route budgets.
func TestRouteLimitsSharedThroughRedis(t *testing.T) {
	u := os.Getenv("EXGATE_TEST_REDIS_URL")
	if u == "" {
		t.Skip("set EXGATE_TEST_REDIS_URL=redis://127.0.0.1:6379/0 to run the Redis test")
	}
	rc, err := redis.Open(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rc.Close() })
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	shared := redis.NewLimiter(rc, "exgatetest:"+hex.EncodeToString(b)+":")
	opts := options{routeLimits: httpapi.RouteLimits{MarketData: per10s(2)}, limiter: shared}
	a, bb := newGateway(t, opts), newGateway(t, opts) // the same client key name in both stores
	book := request{path: "/v1/market/order-book", query: "asset1=BTC&asset2=USDT&limit=5"}
	for i, g := range []*gateway{a, bb, a, bb} {
		r := g.do(book)
		if want := i < 2; (r.status == 200) != want {
			t.Fatalf("request %d: %d %s; want served %v", i, r.status, r.body, want)
		}
	}
}
