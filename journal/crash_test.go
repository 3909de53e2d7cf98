package journal_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/binance"
	"github.com/exgate/exgate/exchange/binance/binancefake"
	"github.com/exgate/exgate/journal"
	"github.com/exgate/exgate/sqlite"
)

// The crash test's child process: TestCrashChild, run by
// TestCrashKilledAtRandom with these variables set.
const (
	crashChildEnv = "EXGATE_JOURNAL_CRASH_CHILD" // the store's file
	crashURLEnv   = "EXGATE_JOURNAL_CRASH_URL"   // the fake Binance
	crashFromEnv  = "EXGATE_JOURNAL_CRASH_FROM"  // the first client id to send
	crashSeedEnv  = "EXGATE_JOURNAL_CRASH_SEED"
)

// crashOrders is how many client ids the crash test places, and
// crashWorkers how many at once.
const (
	crashOrders  = 200
	crashWorkers = 4
)

var crashKey = bytes.Repeat([]byte{7}, 32)

func crashRef(i int) string { return fmt.Sprintf("crash-%03d", i) }

func crashOrder() exgate.OrderRequest {
	return exgate.OrderRequest{Symbol: exgate.Symbol{Base: "BTC", Quote: "USDT"}, Side: exgate.SideBuy,
		Quantity: decimal.RequireFromString("20"), QuantityIn: exgate.InQuote}
}

// slowOutcomes holds each outcome back for a few milliseconds before the
// store records it, as a loaded disk would: it widens the window between
// an answer and its outcome on disk, where the crash test kills the
// process.
type slowOutcomes struct {
	*sqlite.Store
	mu  sync.Mutex
	rng *rand.Rand
}

func (s *slowOutcomes) RecordOutcome(ctx context.Context, id string, o exgate.IntentOutcome) error {
	s.mu.Lock()
	d := time.Duration(5+s.rng.IntN(20)) * time.Millisecond
	s.mu.Unlock()
	time.Sleep(d)
	return s.Store.RecordOutcome(ctx, id, o)
}

// TestCrashChild is the process TestCrashKilledAtRandom kills: it places
// market orders through the journal, client ids from crashFromEnv up,
// crashWorkers at a time, and prints "send <ref>" before each and
// "answered <ref> <status>" once the journal answered it.
func TestCrashChild(t *testing.T) {
	path := os.Getenv(crashChildEnv)
	if path == "" {
		t.Skip("run by TestCrashKilledAtRandom")
	}
	from, _ := strconv.Atoi(os.Getenv(crashFromEnv))
	seed, _ := strconv.ParseUint(os.Getenv(crashSeedEnv), 10, 64)
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path, crashKey)
	if err != nil {
		t.Fatal(err)
	}
	cred, err := st.Credential(ctx, "client", "main")
	if err != nil {
		t.Fatal(err)
	}
	ex := binance.New(binance.Options{BaseURL: os.Getenv(crashURLEnv), Limiter: unlimited{}})
	jr := journal.New(journal.Options{Store: &slowOutcomes{Store: st, rng: rand.New(rand.NewPCG(seed, 1))},
		Exchanges: map[string]exgate.Exchange{cred.Exchange: ex}})
	var out sync.Mutex
	say := func(format string, args ...any) {
		out.Lock()
		defer out.Unlock()
		fmt.Fprintf(os.Stdout, format+"\n", args...)
	}
	refs := make(chan int)
	go func() {
		for i := from; i < crashOrders; i++ {
			refs <- i
		}
		close(refs)
	}()
	var wg sync.WaitGroup
	for range crashWorkers {
		wg.Go(func() {
			for i := range refs {
				say("send %s", crashRef(i))
				o, err := jr.PlaceOrder(ctx, cred, crashOrder(), crashRef(i))
				if err != nil {
					say("failed %s %v", crashRef(i), exgate.ErrorCode(err))
					continue
				}
				say("answered %s %s", crashRef(i), o.Status)
			}
		})
	}
	wg.Wait()
	if err := jr.Drain(ctx); err != nil {
		t.Error(err)
	}
	st.Close()
}

// TestCrashKilledAtRandom places 200 orders through the journal in child
// processes and kills each child with SIGKILL at a random point: while
// orders are with the exchange, and right after the journal answered one,
// before its outcome is on disk (the outcome is recorded after the answer,
// in the store's next commit). Each child sends the client ids after the
// last one its predecessor sent; the ones it was sending when it died are
// left as a client that gave up would leave them. Afterwards the
// reconciler runs: every order the exchange holds is found in the journal
// under its client id, none is there twice, every answer the client got
// is recorded, and every intent has its outcome.
func TestCrashKilledAtRandom(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills processes; skipped with -short")
	}
	ctx := t.Context()
	fake := binancefake.New(binancefake.Options{WeightLimit: -1})
	t.Cleanup(fake.Close)
	fake.AddAccount(binancefake.Account{APIKey: "k", Secret: "s", Balances: map[string]string{"USDT": "10000000", "BTC": "1000"}})
	path := filepath.Join(t.TempDir(), "exgate.db")
	st, err := sqlite.Open(ctx, path, crashKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateClientKey(ctx, exgate.ClientKey{APIKey: "client", Secret: "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddCredential(ctx, exgate.Credential{ClientAPIKey: "client", Name: "main", Exchange: "binance", Key: "k", Secret: "s",
		Permissions: []exgate.Permission{exgate.PermissionTrade}}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	rng := rand.New(rand.NewPCG(26, 200))
	answered := map[string]exgate.OrderStatus{}
	// unsaved counts the answered orders whose intent was still
	// submitting on disk when their process died.
	unsaved, kills := 0, 0
	for next := 0; next < crashOrders; {
		// Half the kills right after an answer, half at a random moment
		// after a send.
		afterAnswer := rng.IntN(2) == 0
		killAt := 1 + rng.IntN(25)
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+path, crashURLEnv+"="+fake.URL,
			crashFromEnv+"="+strconv.Itoa(next), crashSeedEnv+"="+strconv.FormatUint(rng.Uint64(), 10))
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var runAnswered []string
		sent, killed := 0, false
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			f := strings.Fields(lines.Text())
			if len(f) < 2 {
				continue
			}
			switch f[0] {
			case "send":
				i, _ := strconv.Atoi(strings.TrimPrefix(f[1], "crash-"))
				next = max(next, i+1)
				sent++
				if !afterAnswer && !killed && sent == killAt {
					time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond)
					_ = cmd.Process.Kill()
					killed = true
				}
			case "answered":
				if len(f) == 3 {
					answered[f[1]] = exgate.OrderStatus(f[2])
					runAnswered = append(runAnswered, f[1])
				}
				if afterAnswer && !killed && len(runAnswered) == killAt {
					_ = cmd.Process.Kill() // SIGKILL
					killed = true
				}
			}
		}
		err = cmd.Wait()
		if !killed && err != nil {
			t.Fatalf("child process: %v", err)
		}
		if !killed {
			continue
		}
		kills++
		st, err := sqlite.Open(ctx, path, crashKey)
		if err != nil {
			t.Fatal(err)
		}
		for _, ref := range runAnswered {
			if it, err := st.IntentByClientRef(ctx, "client", exgate.IntentOrder, ref); err == nil && it.State == exgate.IntentSubmitting {
				unsaved++
			}
		}
		st.Close()
	}
	t.Logf("%d kills, %d answers given, %d of them not on disk when their process died", kills, len(answered), unsaved)
	if kills == 0 || unsaved == 0 {
		t.Fatalf("%d kills, %d answered orders killed before their outcome was on disk: the test missed the window it is for", kills, unsaved)
	}

	// Restart: the reconciler settles what the crashes left, with its
	// clock moved past the senders' deadlines and the grace for orders
	// the exchange never saw.
	st, err = sqlite.Open(ctx, path, crashKey)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	clk := &shiftClock{}
	clk.Add(time.Hour)
	ex := binance.New(binance.Options{BaseURL: fake.URL, HTTPClient: &http.Client{Timeout: 5 * time.Second}, Limiter: unlimited{}})
	jr := journal.New(journal.Options{Store: st, Exchanges: map[string]exgate.Exchange{"binance": ex}, Now: clk.Now})
	for pass := 0; jr.ReconcileAll(ctx) != 0; pass++ {
		if pass == 10 {
			t.Fatal("intents still unfinished after 10 reconciliations")
		}
		clk.Add(time.Minute)
	}

	held, never := 0, 0
	for i := range crashOrders {
		ref := crashRef(i)
		it, err := st.IntentByClientRef(ctx, "client", exgate.IntentOrder, ref)
		if err != nil {
			if _, ok := answered[ref]; ok {
				t.Errorf("%s was answered %s and is not in the journal: %v", ref, answered[ref], err)
			}
			continue // never recorded, so never sent
		}
		if it.State != exgate.IntentFinal {
			t.Errorf("%s (%s): %s after the reconciler ran", ref, it.ID, it.State)
			continue
		}
		switch n := fake.OrdersWithClientID(it.ID); n {
		case 1:
			held++
			var o exgate.Order
			if err := jsonUnmarshal(it.Response, &o); err != nil || it.Answer != exgate.AnswerRecord || o.Status != exgate.OrderFilled || o.ID != it.ID {
				t.Errorf("%s (%s): Binance filled it, the journal has %q %s", ref, it.ID, it.Answer, it.Response)
			}
		case 0:
			never++
			if it.Answer != exgate.AnswerError {
				t.Errorf("%s (%s): never placed, the journal has %q %s", ref, it.ID, it.Answer, it.Response)
			}
			if s, ok := answered[ref]; ok {
				t.Errorf("%s (%s) was answered %s, Binance does not have it", ref, it.ID, s)
			}
		default:
			t.Errorf("%s (%s): Binance holds %d orders: sent more than once", ref, it.ID, n)
		}
	}
	if got := fake.OrderCount("k"); got != held {
		t.Errorf("Binance holds %d orders, the journal %d: an order the exchange holds is not in the journal", got, held)
	}
	t.Logf("%d orders held by Binance and recorded, %d recorded as never placed", held, never)
}
