package e2e

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/client"
	"github.com/exgate/exgate/exchange/kraken/krakenfake"
)

// balancePath is the read every scale-out test sends: cheap, signed, and
// served from the shared store for a sim key.
const balancePath = "/v1/wallet/account-balance"

// TestScaleOutReplay: a request signed once with a timestamp is accepted
// by one instance and refused as REPLAYED_REQUEST by every instance after
// it, and the same request sent to all three at the same moment is
// accepted exactly once.
func TestScaleOutReplay(t *testing.T) {
	d := newDeployment(t)
	insts := d.startN(3)
	key := d.createKey("replay")
	d.addExchangeKey(key.APIKey, "paper", "sim", "--permissions", "read,trade")
	clients := make([]*client.Client, len(insts))
	for i, inst := range insts {
		clients[i] = inst.client(key, "paper")
	}
	ctx := t.Context()

	signed := func(extra ...client.Param) []client.Param {
		return append(extra,
			client.Param{Name: "timestamp", Value: strconv.FormatInt(time.Now().UnixMilli(), 10)},
			client.Param{Name: "recvWindow", Value: "10000"})
	}
	order := func(ref string) []client.Param {
		return signed(
			client.Param{Name: "asset1", Value: "BTC"}, client.Param{Name: "asset2", Value: "USDT"},
			client.Param{Name: "side", Value: "BUY"}, client.Param{Name: "quantity", Value: "100"},
			client.Param{Name: "quantityIn", Value: "asset2"}, client.Param{Name: "clientOrderId", Value: ref})
	}
	usdt := func() decimal.Decimal {
		t.Helper()
		bals, err := clients[0].AccountBalance(ctx)
		if err != nil {
			t.Fatalf("balance: %v", err)
		}
		for _, b := range bals {
			if b.Asset == "USDT" {
				return b.Available
			}
		}
		return decimal.Zero
	}

	t.Run("sequential", func(t *testing.T) {
		cases := []struct {
			name, method, path string
			params             []client.Param
		}{
			{"GET balance", http.MethodGet, balancePath, signed()},
			{"POST market order", http.MethodPost, "/v1/order/market", order("replay-seq")},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				before := usdt()
				if status, body, err := clients[0].Do(ctx, tc.method, tc.path, tc.params); err != nil {
					t.Fatalf("first send to %s: %d %v %s", insts[0].name, status, err, body)
				}
				after := usdt()
				// The same signed request to every instance, the first
				// one included.
				for _, i := range []int{1, 2, 0} {
					_, _, err := clients[i].Do(ctx, tc.method, tc.path, tc.params)
					if code := problemCode(err); code != string(exgate.CodeReplayedRequest) {
						t.Errorf("replay to %s: code %q (%v); want %s", insts[i].name, code, err, exgate.CodeReplayedRequest)
					}
				}
				if got := usdt(); !got.Equal(after) {
					t.Errorf("USDT balance moved from %s to %s after the replays (before the first send: %s)", after, got, before)
				}
			})
		}
	})

	t.Run("simultaneous", func(t *testing.T) {
		for round := range 5 {
			params := order(fmt.Sprintf("replay-sim-%d", round))
			codes := make([]string, len(clients))
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i, c := range clients {
				wg.Go(func() {
					<-start
					_, _, err := c.Do(ctx, http.MethodPost, "/v1/order/market", params)
					codes[i] = problemCode(err)
				})
			}
			close(start)
			wg.Wait()
			accepted, replayed := 0, 0
			for _, code := range codes {
				switch code {
				case "":
					accepted++
				case string(exgate.CodeReplayedRequest):
					replayed++
				}
			}
			if accepted != 1 || replayed != len(clients)-1 {
				t.Errorf("round %d: answers %q; want one success and %d REPLAYED_REQUEST", round, codes, len(clients)-1)
			}
		}
	})
}

// TestScaleOutRateLimit: a client key's limit of N requests per second
// with a burst of N holds across three instances together, not N per
// instance.
func TestScaleOutRateLimit(t *testing.T) {
	const n = 10
	d := newDeployment(t)
	insts := d.startN(3, "--client-rate-limit", strconv.Itoa(n), "--client-burst", strconv.Itoa(n))
	key := d.createKey("limited")
	d.addExchangeKey(key.APIKey, "paper", "sim")
	// Another key, to show that the limit is per key.
	other := d.createKey("other")
	d.addExchangeKey(other.APIKey, "paper", "sim")
	ctx := t.Context()

	// Load each instance's key cache first, so that the burst below is
	// not stretched by the first store reads.
	warm := make([]*client.Client, len(insts))
	for i, inst := range insts {
		warm[i] = inst.client(other, "paper")
		if _, err := warm[i].AccountBalance(ctx); err != nil {
			t.Fatalf("warm-up on %s: %v", inst.name, err)
		}
	}

	clients := make([]*client.Client, len(insts))
	for i, inst := range insts {
		clients[i] = inst.client(key, "paper")
	}
	const total = 3 * n
	codes := make([]string, total)
	retryAfter := make([]time.Duration, total)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for j := range total {
		wg.Go(func() {
			<-start
			_, err := clients[j%len(clients)].AccountBalance(ctx)
			codes[j] = problemCode(err)
			if ce, ok := errors.AsType[*client.Error](err); ok {
				retryAfter[j] = ce.RetryAfter
			}
		})
	}
	began := time.Now()
	close(start)
	wg.Wait()
	elapsed := time.Since(began)

	ok, limited := 0, 0
	for j, code := range codes {
		switch code {
		case "":
			ok++
		case string(exgate.CodeRateLimited):
			limited++
			if retryAfter[j] <= 0 {
				t.Errorf("request %d: RATE_LIMITED without a Retry-After", j)
			}
		default:
			t.Errorf("request %d to %s: %q; want success or RATE_LIMITED", j, insts[j%len(insts)].name, code)
		}
	}
	// The burst, what the rate refills while the requests run, and one
	// for rounding.
	most := n + int(math.Ceil(elapsed.Seconds()*n)) + 1
	t.Logf("%d requests over 3 instances in %s: %d answered, %d RATE_LIMITED (limit %d/s, burst %d)", total, elapsed.Round(time.Millisecond), ok, limited, n, n)
	if ok > most {
		t.Errorf("%d of %d requests succeeded in %s; the shared limit allows at most %d", ok, total, elapsed, most)
	}
	if ok < n {
		t.Errorf("%d of %d requests succeeded; the burst alone allows %d", ok, total, n)
	}

	// The other key's budget is its own.
	for i, c := range warm {
		if _, err := c.AccountBalance(ctx); err != nil {
			t.Errorf("other key on %s: %v; want success", insts[i].name, err)
		}
	}
}

// TestScaleOutKrakenNonces: one Kraken API key used through three
// instances at once never produces a nonce error at the fake. Nonces come
// from Redis, unique and increasing across instances, and the calls on the
// key are one at a time across all instances (a Redis lock held from
// taking the nonce until the answer is read), so no smaller nonce reaches
// the fake after a larger one; the fake refuses a nonce not above the last
// one it accepted for the key, as Kraken does.
func TestScaleOutKrakenNonces(t *testing.T) {
	d := newDeployment(t)
	fake := krakenfake.New(krakenfake.Options{})
	t.Cleanup(fake.Close)
	d.extra = append(d.extra, "EXGATE_KRAKEN_URL="+fake.URL)
	insts := d.startN(3, "--client-rate-limit", "0")
	key := d.createKey("kraken")
	ctx := t.Context()

	// account registers a Kraken account at the fake and, with the CLI,
	// as the exchange key name. Each subtest has its own, so that each
	// has Kraken's Starter REST counter (15, then one every 3 s) to
	// itself; the instances share it through Redis.
	account := func(t *testing.T, name string) string {
		t.Helper()
		var secret [64]byte
		_, _ = rand.Read(secret[:])
		k, s := "e2e-"+rand.Text(), base64.StdEncoding.EncodeToString(secret[:])
		if err := fake.AddAccount(krakenfake.Account{Key: k, Secret: s,
			Balances: map[string]string{"XXBT": "1.5", "ZUSD": "2500"}}); err != nil {
			t.Fatal(err)
		}
		d.addExchangeKey(key.APIKey, name, "kraken", "--key", k, "--secret", s, "--permissions", "read,trade")
		return k
	}
	clientsFor := func(name string) []*client.Client {
		cs := make([]*client.Client, len(insts))
		for i, inst := range insts {
			cs[i] = inst.client(key, name)
		}
		return cs
	}
	const invalidNonce = "EAPI:Invalid nonce"

	t.Run("balances", func(t *testing.T) {
		account(t, "kr-read")
		clients := clientsFor("kr-read")
		refusedBefore, sentBefore := fake.Refused(invalidNonce), fake.Requests("/0/private/BalanceEx")
		// Four per instance, all at once: with the retries of refused
		// nonces this stays within the REST counter's 15.
		const total = 12
		errs := make([]error, total)
		bals := make([][]exgate.Balance, total)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for j := range total {
			wg.Go(func() {
				<-start
				bals[j], errs[j] = clients[j%len(clients)].AccountBalance(ctx)
			})
		}
		close(start)
		wg.Wait()

		want := map[string]string{"BTC": "1.5", "USD": "2500"}
		for j, err := range errs {
			if err != nil {
				t.Errorf("request %d via %s: %v; want 200", j, insts[j%len(insts)].name, err)
				continue
			}
			got := map[string]string{}
			for _, b := range bals[j] {
				got[b.Asset] = b.Available.String()
			}
			for asset, amount := range want {
				if got[asset] != amount {
					t.Errorf("request %d: %s balance %q; want %s (all: %v)", j, asset, got[asset], amount, got)
				}
			}
		}
		refused := fake.Refused(invalidNonce) - refusedBefore
		sent := fake.Requests("/0/private/BalanceEx") - sentBefore
		t.Logf("%d balance reads over 3 instances: %d BalanceEx calls reached the fake, %d refused for their nonce", total, sent, refused)
		if refused != 0 || sent != total {
			t.Errorf("%d BalanceEx calls for %d answers, %d refused for their nonce; want one call per answer and no refusal", sent, total, refused)
		}
	})

	t.Run("orders", func(t *testing.T) {
		krakenKey := account(t, "kr-trade")
		clients := clientsFor("kr-trade")
		refusedBefore, sentBefore := fake.Refused(invalidNonce), fake.Requests("/0/private/AddOrder")
		// Two per instance, all at once: each is an AddOrder and a
		// QueryOrders on the key, one call at a time across the three
		// instances; some wait seconds for the REST counter (an order not
		// read back in time is answered 504 PENDING).
		const total = 6
		orders := make([]exgate.Order, total)
		errs := make([]error, total)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for j := range total {
			wg.Go(func() {
				<-start
				orders[j], errs[j] = clients[j%len(clients)].PlaceMarketOrder(ctx, client.MarketOrder{
					Asset1: "BTC", Asset2: "USD", Side: "BUY", Quantity: "0.001", QuantityIn: "asset1",
					ClientOrderID: fmt.Sprintf("kraken-e2e-%d", j)})
			})
		}
		close(start)
		wg.Wait()

		placed, pending := 0, 0
		for j, err := range errs {
			id := orders[j].ID
			switch code := problemCode(err); code {
			case "":
				placed++
			case string(exgate.CodeExchangeTimeout):
				// Placed, but not read back before the order's deadline:
				// the REST counter made the QueryOrders wait.
				pending++
				if ce, ok := errors.AsType[*client.Error](err); ok {
					id = ce.ID
				}
				t.Logf("order %d via %s: %v", j, insts[j%len(insts)].name, err)
			default:
				t.Errorf("order %d via %s: %v; want 200 (or 504 PENDING)", j, insts[j%len(insts)].name, err)
				continue
			}
			if n := fake.OrdersByClientID(krakenKey, id); n != 1 {
				t.Errorf("order %d (%s) is %d times at the fake; want once", j, id, n)
			}
		}
		refused := fake.Refused(invalidNonce) - refusedBefore
		sent := fake.Requests("/0/private/AddOrder") - sentBefore
		t.Logf("%d market orders over 3 instances: %d placed, %d pending; %d AddOrder calls reached the fake; %d private calls refused for their nonce",
			total, placed, pending, sent, refused)
		if refused != 0 {
			t.Errorf("%d private calls refused for their nonce; want none", refused)
		}
		if sent != total {
			t.Errorf("%d AddOrder calls for %d orders; want exactly one each (never re-sent)", sent, total)
		}
	})
}

// TestScaleOutRevocation: a client key revoked, or an exchange key
// removed, with the CLI is refused by all three instances within a second,
// without a restart.
func TestScaleOutRevocation(t *testing.T) {
	d := newDeployment(t)
	insts := d.startN(3)
	ctx := t.Context()

	// untilRefused sends through every client until each answers want,
	// and fails when a read sent more than a second after since did not
	// (the time a read was sent counts, not when its answer came: on a
	// busy machine an answer can take longer than the key cache lasts).
	// Answers other than success and want on the way are logged.
	untilRefused := func(t *testing.T, clients []*client.Client, want exgate.Code, since time.Time) {
		t.Helper()
		const limit = time.Second
		refusedAt := make([]time.Duration, len(clients))
		for i, c := range clients {
			for {
				sent := time.Now()
				_, err := c.AccountBalance(ctx)
				code := problemCode(err)
				if code == string(want) {
					refusedAt[i] = time.Since(since)
					break
				}
				if code != "" {
					t.Logf("%s %s after the CLI returned: %v", insts[i].name, time.Since(since).Round(time.Millisecond), err)
				}
				if sent.Sub(since) > limit {
					t.Fatalf("%s still accepts the key in a read sent %s after the CLI returned", insts[i].name, sent.Sub(since).Round(time.Millisecond))
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		t.Logf("refused with %s after %v", want, refusedAt)
		// And stays refused.
		for i, c := range clients {
			if _, err := c.AccountBalance(ctx); problemCode(err) != string(want) {
				t.Errorf("%s after revocation: %v; want %s", insts[i].name, err, want)
			}
		}
	}

	t.Run("client key revoked", func(t *testing.T) {
		key := d.createKey("revoked")
		d.addExchangeKey(key.APIKey, "paper", "sim")
		clients := make([]*client.Client, len(insts))
		for i, inst := range insts {
			clients[i] = inst.client(key, "paper")
			if _, err := clients[i].AccountBalance(ctx); err != nil {
				t.Fatalf("%s before revocation: %v", inst.name, err)
			}
		}
		d.admin("keys", "revoke", "--api-key", key.APIKey)
		untilRefused(t, clients, exgate.CodeInvalidAPIKey, time.Now())
	})

	t.Run("exchange key removed", func(t *testing.T) {
		key := d.createKey("removed")
		d.addExchangeKey(key.APIKey, "paper", "sim")
		clients := make([]*client.Client, len(insts))
		for i, inst := range insts {
			clients[i] = inst.client(key, "paper")
			if _, err := clients[i].AccountBalance(ctx); err != nil {
				t.Fatalf("%s before removal: %v", inst.name, err)
			}
		}
		d.admin("exchange-keys", "remove", "--api-key", key.APIKey, "--name", "paper")
		untilRefused(t, clients, exgate.CodeUnknownExchangeKey, time.Now())
	})
}

// TestScaleOutInstanceKilled: one instance killed with SIGKILL under load;
// every request to the two others succeeds, before, during and after, and
// a replacement started on the same store serves at once.
func TestScaleOutInstanceKilled(t *testing.T) {
	d := newDeployment(t)
	insts := d.startN(3, "--client-rate-limit", "0")
	key := d.createKey("load")
	d.addExchangeKey(key.APIKey, "paper", "sim", "--permissions", "read,trade")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()

	const workersPerInstance = 3
	victim := insts[0]
	var (
		survivorOK   [3]atomic.Int64
		survivorFail [3]atomic.Int64
		killed       atomic.Bool
		afterKill    [3]atomic.Int64
		mu           sync.Mutex
		failures     []string
	)
	var wg sync.WaitGroup
	for i, inst := range insts {
		for w := range workersPerInstance {
			c := inst.client(key, "paper")
			wg.Go(func() {
				for n := 0; ctx.Err() == nil; n++ {
					var err error
					if n%4 == 3 {
						_, err = c.PlaceMarketOrder(ctx, client.MarketOrder{Asset1: "BTC", Asset2: "USDT", Side: "BUY",
							Quantity: "10", QuantityIn: "asset2", ClientOrderID: fmt.Sprintf("load-%d-%d-%d", i, w, n)})
					} else {
						_, err = c.AccountBalance(ctx)
					}
					if inst == victim {
						if killed.Load() {
							return
						}
						continue
					}
					if ctx.Err() != nil {
						return
					}
					if err != nil {
						survivorFail[i].Add(1)
						mu.Lock()
						failures = append(failures, fmt.Sprintf("%s: %v", inst.name, err))
						mu.Unlock()
						continue
					}
					survivorOK[i].Add(1)
					if killed.Load() {
						afterKill[i].Add(1)
					}
				}
			})
		}
	}

	// Kill the victim once the survivors are busy, and let them serve a
	// good number of requests after it.
	const enough = 30
	waitUntil(t, 10*time.Second, func() bool { return survivorOK[1].Load() >= enough && survivorOK[2].Load() >= enough })
	victim.kill(t)
	killed.Store(true)
	waitUntil(t, 10*time.Second, func() bool { return afterKill[1].Load() >= enough && afterKill[2].Load() >= enough })
	cancel()
	wg.Wait()

	for i := 1; i < len(insts); i++ {
		t.Logf("%s: %d answered, %d after the kill, %d failed", insts[i].name, survivorOK[i].Load(), afterKill[i].Load(), survivorFail[i].Load())
	}
	if len(failures) > 0 {
		t.Errorf("%d requests to the surviving instances failed; first: %s", len(failures), failures[0])
	}

	// The survivors are still ready; a replacement joins at once.
	hc := &http.Client{Timeout: 2 * time.Second}
	for _, inst := range insts[1:] {
		if status, err := inst.ready(hc); err != nil || status != http.StatusOK {
			t.Errorf("%s /readyz after the kill: %d %v", inst.name, status, err)
		}
	}
	repl := d.start("exgate-replacement")
	if _, err := repl.client(key, "paper").AccountBalance(t.Context()); err != nil {
		t.Errorf("replacement instance: %v", err)
	}
	for _, inst := range append(insts[1:], repl) {
		inst.stop(t)
	}
}

// waitUntil polls cond until it holds, and fails the test when it does not
// within timeout.
func waitUntil(t *testing.T, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s", timeout)
		}
		<-tick.C
	}
}
