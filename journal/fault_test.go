package journal_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/binance"
	"github.com/exgate/exgate/exchange/binance/binancefake"
	"github.com/exgate/exgate/exchange/gateio"
	"github.com/exgate/exgate/exchange/gateio/gateiofake"
	"github.com/exgate/exgate/exchange/kraken"
	"github.com/exgate/exgate/exchange/kraken/krakenfake"
	"github.com/exgate/exgate/exchange/okx"
	"github.com/exgate/exgate/exchange/okx/okxfake"
	"github.com/exgate/exgate/journal"
	"github.com/exgate/exgate/localstate"
	"github.com/exgate/exgate/sqlite"
	"github.com/shopspring/decimal"
)

// fault is what the fake does with one request, in terms every fake offers.
type fault int

const (
	faultNone      fault = iota
	faultSlow            // answered after the adapter gave up: outcome unknown
	faultSlowOK          // slow, but inside the deadline
	faultStatus500       // a 5xx without processing
	faultDrop            // connection reset before processing
	faultDropAfter       // processed (order placed), answer lost
)

func randomFault(r *rand.Rand) fault {
	switch n := r.IntN(100); {
	case n < 40:
		return faultNone
	case n < 55:
		return faultSlow
	case n < 65:
		return faultSlowOK
	case n < 75:
		return faultStatus500
	case n < 85:
		return faultDrop
	default:
		return faultDropAfter
	}
}

// Timing of the suite: a request given faultSlow gets the adapter's
// deadline, callTimeout, and is held by the fake past it; every other
// request has no deadline but the journal's, so only the faults make a
// call time out, never a busy machine (a loaded CI runner made loopback
// answers take longer than 75 ms, and reads the test expected to work
// timed out). Each answer held past callTimeout costs the suite
// callTimeout (the fake stops holding a request when its client gives
// up, if it notices), one after another on Kraken, whose adapter sends a
// key's calls in turn.
const (
	callTimeout = 75 * time.Millisecond
	slowDelay   = 4 * callTimeout
	slowOKDelay = 20 * time.Millisecond
	// readBackoff is the adapters' first pause before a failed read is
	// sent again.
	readBackoff = time.Millisecond
)

// faultHeader carries the fault chosen on the client's side
// (faultClient) to the fake's hook (faultOf).
const faultHeader = "X-Exgate-Test-Fault"

// faultClient is the HTTP transport of the adapters in the fault tests.
// It chooses each request's fault and tells the fake in faultHeader, and
// gives the request the adapter's deadline (callTimeout) only when the
// fault is faultSlow. It counts the slow requests it wrote (sent) so the
// test can wait until the fake has received them all (arrived, counted
// by faultOf's caller) and handled them (idle).
type faultClient struct {
	choose  atomic.Pointer[func(*http.Request) fault]
	base    *http.Transport
	sent    atomic.Int64
	arrived atomic.Int64
}

func newFaultClient(t *testing.T) *faultClient {
	c := &faultClient{base: http.DefaultTransport.(*http.Transport).Clone()}
	t.Cleanup(c.base.CloseIdleConnections)
	return c
}

// client is the adapter's *http.Client. Its Timeout only keeps a hung
// test from waiting for ever; the journal's CallTimeout comes first.
func (c *faultClient) client() *http.Client { return &http.Client{Transport: c, Timeout: time.Minute} }

// set makes choose decide the fault of every request from now on.
func (c *faultClient) set(choose func(*http.Request) fault) { c.choose.Store(&choose) }

func (c *faultClient) RoundTrip(r *http.Request) (*http.Response, error) {
	f := faultNone
	if choose := c.choose.Load(); choose != nil {
		f = (*choose)(r)
	}
	ctx := r.Context()
	if f != faultSlow {
		r = r.Clone(ctx)
		r.Header.Set(faultHeader, strconv.Itoa(int(f)))
		return c.base.RoundTrip(r)
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteHeaders: func() { c.sent.Add(1) }})
	r = r.Clone(ctx)
	r.Header.Set(faultHeader, strconv.Itoa(int(f)))
	resp, err := c.base.RoundTrip(r)
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = cancelOnClose{resp.Body, cancel}
	return resp, nil
}

// faultOf is the fault the client chose for r, counting r's arrival when
// it is slow.
func (c *faultClient) faultOf(r *http.Request) fault {
	n, _ := strconv.Atoi(r.Header.Get(faultHeader))
	if fault(n) == faultSlow {
		c.arrived.Add(1)
	}
	return fault(n)
}

// waitIdle waits, after the faults stopped and every client call
// returned, until the fake has received every slow request that was
// written and handled them all: a request held past its client's
// deadline may still be processed, as an exchange would, and reconciling
// before it lands would record as never placed an intent the exchange is
// about to hold. A request written but never received (its connection
// closed first) cannot land; after a minute the test goes on.
func (c *faultClient) waitIdle(t *testing.T, busy func() int) {
	t.Helper()
	for end := time.Now().Add(time.Minute); c.arrived.Load() < c.sent.Load() || busy() > 0; time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Logf("the fake received %d of %d slow requests and handles %d after a minute; going on", c.arrived.Load(), c.sent.Load(), busy())
			return
		}
	}
}

// cancelOnClose ends a request's context when its answer is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// venue is one exchange's fake with an adapter pointed at it.
type venue struct {
	name  string
	ex    exgate.Exchange
	cred  exgate.Credential
	order exgate.OrderRequest
	wd    exgate.WithdrawalRequest
	// wdFor, when set, is the withdrawal of the i-th client id, in place
	// of wd (Kraken's withdrawals are told apart by amount).
	wdFor  func(i int) exgate.WithdrawalRequest
	inject func(f func(r *http.Request) fault)
	// idle waits until the fake has received and handled every request
	// sent to it (faultClient.waitIdle).
	idle func(t *testing.T)
	// settle, when set, makes the fake finish what is still in progress
	// (Kraken's fake keeps withdrawals pending until told).
	settle  func()
	orders  func(clientID string) int
	withdrs func(it exgate.Intent) int
	// isSubmit tells the order and withdrawal submissions apart from
	// reads, which get faults less often.
	isSubmit func(r *http.Request) bool
	// isCancel tells an order cancel (fault_lifecycle_test.go).
	isCancel func(r *http.Request) bool
	// limitQty is the base quantity of the lifecycle tests' limit
	// orders, at the market's step and above its minimum.
	limitQty string
}

// venues are the exchanges the fault tests run on, one line each.
func venues() []func(*testing.T) venue {
	return []func(*testing.T) venue{binanceVenue, krakenVenue, gateioVenue, okxVenue, bybitVenue}
}

func binanceVenue(t *testing.T) venue {
	fake := binancefake.New(binancefake.Options{WeightLimit: -1})
	t.Cleanup(fake.Close)
	fake.AddAccount(binancefake.Account{APIKey: "k", Secret: "s", Balances: map[string]string{"USDT": "10000000", "BTC": "1000"}})
	// A read the fake failed is retried after readBackoff, not the
	// adapter's 200 ms and 400 ms: backoff has its own tests in
	// exchange/internal/rest, and here it only made the suite wait.
	fc := newFaultClient(t)
	ex := binance.New(binance.Options{BaseURL: fake.URL, HTTPClient: fc.client(), Limiter: unlimited{},
		RetryBackoff: readBackoff})
	return venue{
		idle:  func(t *testing.T) { fc.waitIdle(t, fake.Busy) },
		name:  "binance",
		ex:    ex,
		cred:  exgate.Credential{Exchange: "binance", Key: "k", Secret: "s", Permissions: []exgate.Permission{exgate.PermissionTrade, exgate.PermissionWithdraw}},
		order: exgate.OrderRequest{Symbol: exgate.Symbol{Base: "BTC", Quote: "USDT"}, Side: exgate.SideBuy, Quantity: decimal.RequireFromString("20"), QuantityIn: exgate.InQuote},
		wd:    exgate.WithdrawalRequest{Asset: "USDT", Network: "TRX", Address: "TN3W4H6rK2ce4vX9YnFQHwKENnHjoxb3m9", Amount: decimal.RequireFromString("25")},
		inject: func(f func(r *http.Request) fault) {
			fake.SetFault(func(r *http.Request) binancefake.Fault {
				switch fc.faultOf(r) {
				case faultSlow:
					return binancefake.Fault{Delay: slowDelay}
				case faultSlowOK:
					return binancefake.Fault{Delay: slowOKDelay}
				case faultStatus500:
					return binancefake.Fault{Status: 500, Body: `{"code":-1000,"msg":"An unknown error occured while processing the request."}`}
				case faultDrop:
					return binancefake.Fault{Drop: true}
				case faultDropAfter:
					return binancefake.Fault{DropAfter: true}
				}
				return binancefake.Fault{}
			})
			fc.set(f)
		},
		orders:  fake.OrdersWithClientID,
		withdrs: func(it exgate.Intent) int { return fake.WithdrawalsWithClientID(it.ID) },
		isSubmit: func(r *http.Request) bool {
			return (r.Method == http.MethodPost && r.URL.Path == "/api/v3/order") || r.URL.Path == "/sapi/v1/capital/withdraw/apply"
		},
		isCancel: func(r *http.Request) bool { return r.Method == http.MethodDelete && r.URL.Path == "/api/v3/order" },
		limitQty: "0.001",
	}
}

func krakenVenue(t *testing.T) venue {
	fake := krakenfake.New(krakenfake.Options{})
	t.Cleanup(fake.Close)
	const addr = "bc1qxdsh4sdd29h6ldehz0se5c61asq8cgwyjf2y3z"
	secret := "c2VjcmV0LW9mLXRoZS1rcmFrZW4ta2V5"
	if err := fake.AddAccount(krakenfake.Account{Key: "k", Secret: secret,
		Balances:     map[string]string{"XXBT": "1000", "USDT": "10000000"},
		WithdrawKeys: []krakenfake.WithdrawKey{{Name: "cold", Asset: "XXBT", Method: "Bitcoin", Address: addr, Verified: true}},
	}); err != nil {
		t.Fatal(err)
	}
	// Kraken's call counter would pace this test to one call a second;
	// pacing has its own tests, so it is lifted here.
	fc := newFaultClient(t)
	ex := kraken.New(kraken.Options{BaseURL: fake.URL, HTTPClient: fc.client(), Limiter: unlimited{},
		Nonces: localstate.NewNonces(), RetryDelay: readBackoff, Tier: kraken.TierPro})
	return venue{
		idle:  func(t *testing.T) { fc.waitIdle(t, fake.Busy) },
		name:  "kraken",
		ex:    ex,
		cred:  exgate.Credential{Exchange: "kraken", Key: "k", Secret: secret, Permissions: []exgate.Permission{exgate.PermissionTrade, exgate.PermissionWithdraw}},
		order: exgate.OrderRequest{Symbol: exgate.Symbol{Base: "BTC", Quote: "USDT"}, Side: exgate.SideBuy, Quantity: decimal.RequireFromString("0.001"), QuantityIn: exgate.InBase},
		wd:    exgate.WithdrawalRequest{Asset: "BTC", Network: "BTC", Address: addr, Amount: decimal.RequireFromString("0.01")},
		inject: func(f func(r *http.Request) fault) {
			fake.SetFault(func(r *http.Request) krakenfake.Fault {
				switch fc.faultOf(r) {
				case faultSlow:
					return krakenfake.Fault{Delay: slowDelay}
				case faultSlowOK:
					return krakenfake.Fault{Delay: slowOKDelay}
				case faultStatus500:
					return krakenfake.Fault{Status: 500, Body: "Internal Server Error"}
				case faultDrop:
					return krakenfake.Fault{Drop: true}
				case faultDropAfter:
					return krakenfake.Fault{DropAfter: true}
				}
				return krakenfake.Fault{}
			})
			fc.set(f)
		},
		orders: func(id string) int { return fake.OrdersByClientID("k", id) },
		// Kraken has no client withdrawal id: the adapter finds a
		// withdrawal whose answer was lost by asset, destination and amount
		// among those this process sent (docs/exchanges/kraken.md), and the
		// fake can only count withdrawals by amount, so every client id
		// withdraws its own amount.
		settle: func() { fake.SettleWithdrawals("k") },
		wdFor: func(i int) exgate.WithdrawalRequest {
			return exgate.WithdrawalRequest{Asset: "BTC", Network: "BTC", Address: addr,
				Amount: decimal.RequireFromString("0.01").Add(decimal.New(int64(i), -6))}
		},
		withdrs: func(it exgate.Intent) int {
			var req exgate.WithdrawalRequest
			if err := jsonUnmarshal(it.Request, &req); err != nil {
				t.Fatalf("%s: %v", it.ID, err)
			}
			return fake.WithdrawalsOf("k", "XXBT", req.Amount)
		},
		isSubmit: func(r *http.Request) bool {
			return r.URL.Path == "/0/private/AddOrder" || r.URL.Path == "/0/private/Withdraw"
		},
		isCancel: func(r *http.Request) bool { return r.URL.Path == "/0/private/CancelOrder" },
		limitQty: "0.001",
	}
}

func gateioVenue(t *testing.T) venue {
	fake := gateiofake.New(gateiofake.Options{NoRateLimits: true})
	t.Cleanup(fake.Close)
	if err := fake.AddAccount(gateiofake.Account{APIKey: "k", Secret: "s", Balances: map[string]string{"USDT": "10000000", "BTC": "1000"}}); err != nil {
		t.Fatal(err)
	}
	fc := newFaultClient(t)
	ex := gateio.New(gateio.Options{BaseURL: fake.URL, HTTPClient: fc.client(), Limiter: unlimited{},
		RetryBackoff: readBackoff})
	return venue{
		idle:  func(t *testing.T) { fc.waitIdle(t, fake.Busy) },
		name:  "gateio",
		ex:    ex,
		cred:  exgate.Credential{Exchange: "gateio", Key: "k", Secret: "s", Permissions: []exgate.Permission{exgate.PermissionTrade, exgate.PermissionWithdraw}},
		order: exgate.OrderRequest{Symbol: exgate.Symbol{Base: "BTC", Quote: "USDT"}, Side: exgate.SideBuy, Quantity: decimal.RequireFromString("20"), QuantityIn: exgate.InQuote},
		wd:    exgate.WithdrawalRequest{Asset: "USDT", Network: "TRX", Address: "TXkZ5Ff4qgSBVRrfBMfxcDxUrW5g1mDtKf", Amount: decimal.RequireFromString("100")},
		inject: func(f func(r *http.Request) fault) {
			fake.SetFault(func(r *http.Request) gateiofake.Fault {
				switch fc.faultOf(r) {
				case faultSlow:
					return gateiofake.Fault{Delay: slowDelay}
				case faultSlowOK:
					return gateiofake.Fault{Delay: slowOKDelay}
				case faultStatus500:
					return gateiofake.Fault{Status: 500, Body: `{"label":"SERVER_ERROR","message":"Internal server error"}`}
				case faultDrop:
					return gateiofake.Fault{Drop: true}
				case faultDropAfter:
					return gateiofake.Fault{DropAfter: true}
				}
				return gateiofake.Fault{}
			})
			fc.set(f)
		},
		orders:  func(id string) int { return fake.OrdersByText("k", "t-"+id) },
		withdrs: func(it exgate.Intent) int { return fake.Withdrawals("k", it.ID) },
		isSubmit: func(r *http.Request) bool {
			return (r.Method == http.MethodPost && r.URL.Path == "/api/v4/spot/orders") || r.URL.Path == "/api/v4/withdrawals"
		},
		isCancel: func(r *http.Request) bool { return r.Method == http.MethodDelete },
		limitQty: "0.01",
	}
}

// shiftClock is real time plus an offset the test moves forward, so the
// journal's grace period can pass without waiting for it.
type shiftClock struct{ offset atomic.Int64 }

func (c *shiftClock) Now() time.Time      { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *shiftClock) Add(d time.Duration) { c.offset.Add(int64(d)) }

// TestFaultInjection places many orders (then withdrawals) through the
// journal while the fake injects timeouts before and after it accepts, 5xx
// answers, resets and slow answers, with clients retrying under the same
// client id. Afterwards the fake must hold at most one order per client id
// and every intent must be reconciled to what the fake really holds.
//
// The fault tests spend their time waiting (for answers held past the
// adapter's deadline, for a key's calls in turn on Kraken, for synced
// commits), not computing, so every one of them runs in parallel with the
// others: each has its own fake, store and clock.
func TestFaultInjection(t *testing.T) {
	if testing.Short() {
		t.Skip("fault injection runs thousands of requests; skipped with -short")
	}
	t.Parallel()
	// The eight runs go at once whatever -parallel says (it defaults to
	// the number of CPUs, and they hardly use one).
	var wg sync.WaitGroup
	for _, newVenue := range venues() {
		for _, kind := range []exgate.IntentKind{exgate.IntentOrder, exgate.IntentWithdrawal} {
			v := newVenue(t)
			wg.Go(func() {
				t.Run(v.name+"/"+string(kind), func(t *testing.T) { runFaults(t, v, kind) })
			})
		}
	}
	wg.Wait()
}

func runFaults(t *testing.T, v venue, kind exgate.IntentKind) {
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "exgate.db"), bytes.Repeat([]byte{1}, 32))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.CreateClientKey(ctx, exgate.ClientKey{APIKey: "client", Secret: "x", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	cred := v.cred
	cred.ClientAPIKey, cred.Name = "client", "main"
	if cred, err = st.AddCredential(ctx, cred); err != nil {
		t.Fatal(err)
	}
	clk := &shiftClock{}
	jr := journal.New(journal.Options{Store: st, Exchanges: map[string]exgate.Exchange{cred.Exchange: v.ex},
		Now: clk.Now, CallTimeout: 3 * time.Second, NotFoundGrace: time.Minute})

	rng := rand.New(rand.NewPCG(1, uint64(len(v.name))))
	var rngMu sync.Mutex
	v.inject(func(r *http.Request) fault {
		rngMu.Lock()
		defer rngMu.Unlock()
		if !v.isSubmit(r) && rng.IntN(4) != 0 {
			return faultNone // reads fail less often
		}
		return randomFault(rng)
	})

	attempts, distinct := 1000, 400
	if raceEnabled {
		attempts, distinct = 200, 80
	}
	var next atomic.Int64
	var placed atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				n := int(next.Add(1)) - 1
				if n >= attempts {
					return
				}
				// Attempt n retries ref n % distinct: every ref is
				// tried two or three times, often concurrently.
				ref := fmt.Sprintf("ref-%d", n%distinct)
				var err error
				if kind == exgate.IntentOrder {
					_, err = jr.PlaceOrder(ctx, cred, v.order, ref)
				} else {
					wd := v.wd
					if v.wdFor != nil {
						wd = v.wdFor(n % distinct)
					}
					_, err = jr.Withdraw(ctx, cred, wd, ref)
				}
				if err == nil {
					placed.Add(1)
				} else if c := exgate.ErrorCode(err); c != exgate.CodeExchangeTimeout && c != exgate.CodeExchangeError &&
					c != exgate.CodeExchangeUnavailable && c != exgate.CodeOrderRejected && c != exgate.CodeWithdrawalRejected {
					t.Errorf("attempt %d: unexpected %v", n, err)
				}
			}
		})
	}
	wg.Wait()
	v.inject(func(*http.Request) fault { return faultNone })
	// A slow request may still be held by the fake, to be processed
	// after its client gave up, as an exchange would. Shifting the clock
	// past the grace period before it lands would record as never placed
	// an intent the fake is about to hold (a real 2-minute grace covers
	// it), so the test waits until the fake has handled every one.
	v.idle(t)
	if v.settle != nil {
		v.settle()
	}

	// Reconcile until nothing is left; intents the exchange never saw
	// are settled once the grace period has passed. Each pass reads the
	// intents whose backoff (at most a minute) has run out.
	clk.Add(2 * time.Minute)
	left := -1
	for i := 0; i < 20 && left != 0; i++ {
		left = jr.ReconcileAll(ctx)
		clk.Add(time.Minute)
	}
	if left != 0 {
		its, _ := st.UnfinishedIntents(ctx, 10)
		for _, it := range its {
			var req exgate.OrderRequest
			_ = jsonUnmarshal(it.Request, &req)
			_, err := v.ex.QueryOrder(ctx, cred, exgate.OrderQuery{Symbol: req.Symbol, ClientOrderID: it.ID})
			t.Logf("unfinished %s %s %s: query: %v", it.ID, it.State, it.Response, err)
		}
		t.Fatalf("%d intents still unfinished after reconciliation", left)
	}

	count := func(it exgate.Intent) int { return v.orders(it.ID) }
	if kind == exgate.IntentWithdrawal {
		count = v.withdrs
	}
	held, never := 0, 0
	for i := range distinct {
		ref := fmt.Sprintf("ref-%d", i)
		it, err := st.IntentByClientRef(ctx, "client", kind, ref)
		if err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		n := count(it)
		if n > 1 {
			t.Errorf("%s (%s): the exchange holds %d of it", ref, it.ID, n)
		}
		if it.State != exgate.IntentFinal {
			t.Errorf("%s: state %s", ref, it.State)
		}
		switch {
		case n == 1 && it.Answer == exgate.AnswerRecord:
			held++
			checkRecorded(t, kind, it)
		case n == 0 && it.Answer != exgate.AnswerRecord:
			never++
		default:
			t.Errorf("%s (%s): the exchange holds %d, the journal says %q %s", ref, it.ID, n, it.Answer, it.Response)
		}
	}
	t.Logf("%s %ss: %d attempts over %d client ids: %d held by the exchange, %d never placed; %d answered at once",
		v.name, kind, attempts, distinct, held, never, placed.Load())
	if held == 0 {
		t.Error("no intent reached the exchange: the faults are too strong for the test to mean anything")
	}
}

// checkRecorded checks the journal holds the exchange's final record.
func checkRecorded(t *testing.T, kind exgate.IntentKind, it exgate.Intent) {
	t.Helper()
	if kind == exgate.IntentOrder {
		var o exgate.Order
		if err := jsonUnmarshal(it.Response, &o); err != nil || !o.Status.Final() || o.ID != it.ID {
			t.Errorf("%s: recorded order %s (%v)", it.ID, it.Response, err)
		}
		return
	}
	var w exgate.Withdrawal
	if err := jsonUnmarshal(it.Response, &w); err != nil || w.ID != it.ID {
		t.Errorf("%s: recorded withdrawal %s (%v)", it.ID, it.Response, err)
	}
}

var errEmpty = errors.New("empty response")

// unlimited is a limiter that never waits.
type unlimited struct{}

func (unlimited) Reserve(context.Context, string, int, exgate.RateLimit) (time.Duration, error) {
	return 0, nil
}
func (unlimited) Pause(context.Context, string, time.Time) error { return nil }
func (unlimited) PausedUntil(context.Context, string) (time.Time, error) {
	return time.Time{}, nil
}

// okxVenue is OKX's fake with an adapter pointed at it: orders from the
// trading account, withdrawals from the funding account.
func okxVenue(t *testing.T) venue {
	fake := okxfake.New(okxfake.Options{NoRateLimits: true})
	t.Cleanup(fake.Close)
	if err := fake.AddAccount(okxfake.Account{APIKey: "k", Secret: "s", Passphrase: "p",
		Balances: map[string]string{"USDT": "10000000", "BTC": "1000"}, Funding: map[string]string{"USDT": "10000000"}}); err != nil {
		t.Fatal(err)
	}
	fc := newFaultClient(t)
	ex := okx.New(okx.Options{BaseURL: fake.URL, HTTPClient: fc.client(), Limiter: unlimited{}})
	return venue{
		idle:  func(t *testing.T) { fc.waitIdle(t, fake.Busy) },
		name:  "okx",
		ex:    ex,
		cred:  exgate.Credential{Exchange: okx.Name, Key: "k", Secret: "s", Passphrase: "p", Permissions: []exgate.Permission{exgate.PermissionTrade, exgate.PermissionWithdraw}},
		order: exgate.OrderRequest{Symbol: exgate.Symbol{Base: "BTC", Quote: "USDT"}, Side: exgate.SideBuy, Quantity: decimal.RequireFromString("20"), QuantityIn: exgate.InQuote},
		wd:    exgate.WithdrawalRequest{Asset: "USDT", Network: "TRX", Address: "TXkZ5Ff4qgSBVRrfBMfxcDxUrW5g1mDtKf", Amount: decimal.RequireFromString("100")},
		inject: func(f func(r *http.Request) fault) {
			fake.SetFault(func(r *http.Request) okxfake.Fault {
				switch fc.faultOf(r) {
				case faultSlow:
					return okxfake.Fault{Delay: slowDelay}
				case faultSlowOK:
					return okxfake.Fault{Delay: slowOKDelay}
				case faultStatus500:
					return okxfake.Fault{Status: 500, Body: `{"code":"50026","msg":"System error","data":[]}`}
				case faultDrop:
					return okxfake.Fault{Drop: true}
				case faultDropAfter:
					return okxfake.Fault{DropAfter: true}
				}
				return okxfake.Fault{}
			})
			fc.set(f)
		},
		orders:  func(id string) int { return fake.OrdersByClOrdID("k", id) },
		withdrs: func(it exgate.Intent) int { return fake.Withdrawals("k", it.ID) },
		isSubmit: func(r *http.Request) bool {
			return r.Method == http.MethodPost && (r.URL.Path == "/api/v5/trade/order" || r.URL.Path == "/api/v5/asset/withdrawal")
		},
		isCancel: func(r *http.Request) bool { return r.URL.Path == "/api/v5/trade/cancel-order" },
		limitQty: "0.01",
	}
}
