package journal_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/journal"
	"github.com/exgate/exgate/sqlite"
)

// manualClock moves only when told.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

// newManualClock starts at the real time: the store stamps UpdatedAt with
// its own (real) clock.
func newManualClock() *manualClock {
	return &manualClock{now: time.Now()}
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// heldExchange is a fake exchange whose submissions can be held until the
// test releases them, and whose reads answer what the test says the
// exchange holds. Only the order and withdrawal methods are called.
type heldExchange struct {
	exgate.Exchange

	// submitted receives the client id of every submission as it arrives.
	submitted chan string
	// release, when not nil, holds every submission until it is closed.
	release chan struct{}

	mu sync.Mutex
	// submitErr, when set, is answered to a submission (after it is held).
	submitErr error
	submits   int
	queries   int
	// filled and pending are the records the exchange holds, by client
	// id; any other id is not found.
	filled  map[string]bool
	pending map[string]bool
}

func newHeldExchange() *heldExchange {
	return &heldExchange{submitted: make(chan string, 100), filled: map[string]bool{}, pending: map[string]bool{}}
}

func (f *heldExchange) submit(ctx context.Context, id string) error {
	f.mu.Lock()
	f.submits++
	f.mu.Unlock()
	f.submitted <- id
	if f.release != nil {
		select {
		case <-f.release:
		case <-ctx.Done():
			return exgate.Errorf(exgate.CodeExchangeTimeout, "no answer")
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.submitErr != nil {
		return f.submitErr
	}
	f.filled[id] = true
	return nil
}

// read counts a query and says what the exchange holds for id.
func (f *heldExchange) read(id string) (filled, pending bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries++
	return f.filled[id], f.pending[id]
}

func (f *heldExchange) counts() (submits, queries int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.submits, f.queries
}

func (f *heldExchange) hold(id string, filled bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if filled {
		f.filled[id] = true
	} else {
		f.pending[id] = true
	}
}

func (f *heldExchange) PlaceMarketOrder(ctx context.Context, _ exgate.Credential, req exgate.OrderRequest) (exgate.Order, error) {
	if err := f.submit(ctx, req.ClientOrderID); err != nil {
		return exgate.Order{}, err
	}
	return exgate.Order{Status: exgate.OrderFilled, Asset1: req.Symbol.Base, Asset2: req.Symbol.Quote, Side: req.Side}, nil
}

func (f *heldExchange) QueryOrder(_ context.Context, _ exgate.Credential, q exgate.OrderQuery) (exgate.Order, error) {
	switch filled, pending := f.read(q.ClientOrderID); {
	case filled:
		return exgate.Order{Status: exgate.OrderFilled, Asset1: q.Symbol.Base, Asset2: q.Symbol.Quote}, nil
	case pending:
		return exgate.Order{Status: exgate.OrderPending, Asset1: q.Symbol.Base, Asset2: q.Symbol.Quote}, nil
	}
	return exgate.Order{}, fmt.Errorf("order %s: %w", q.ClientOrderID, exgate.ErrNotFound)
}

func (f *heldExchange) Withdraw(ctx context.Context, _ exgate.Credential, req exgate.WithdrawalRequest) (exgate.Withdrawal, error) {
	if err := f.submit(ctx, req.ClientWithdrawalID); err != nil {
		return exgate.Withdrawal{}, err
	}
	return exgate.Withdrawal{Status: exgate.TransferCompleted, Asset: req.Asset, Amount: exgate.NewNumber(req.Amount)}, nil
}

func (f *heldExchange) QueryWithdrawal(_ context.Context, _ exgate.Credential, q exgate.WithdrawalQuery) (exgate.Withdrawal, error) {
	switch filled, pending := f.read(q.ClientWithdrawalID); {
	case filled:
		return exgate.Withdrawal{Status: exgate.TransferCompleted, Asset: q.Asset}, nil
	case pending:
		return exgate.Withdrawal{Status: exgate.TransferPending, Asset: q.Asset}, nil
	}
	return exgate.Withdrawal{}, fmt.Errorf("withdrawal %s: %w", q.ClientWithdrawalID, exgate.ErrNotFound)
}

// foundRefs is a store that tells the test when a client id was found
// recorded: a duplicate request has met the first one.
type foundRefs struct {
	*sqlite.Store
	found chan string
}

func (s foundRefs) IntentByClientRef(ctx context.Context, apiKey string, kind exgate.IntentKind, ref string) (exgate.Intent, error) {
	it, err := s.Store.IntentByClientRef(ctx, apiKey, kind, ref)
	if err == nil {
		s.found <- ref
	}
	return it, err
}

// openJournalStore opens a SQLite store with one client key and its
// exchange key "main" on the fake.
func openJournalStore(t *testing.T) (*sqlite.Store, exgate.Credential) {
	t.Helper()
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "exgate.db"), bytes.Repeat([]byte{1}, 32))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.CreateClientKey(ctx, exgate.ClientKey{APIKey: "client", Secret: "x", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	cred, err := st.AddCredential(ctx, exgate.Credential{ClientAPIKey: "client", Name: "main", Exchange: "binance",
		Key: "k", Secret: "s", Permissions: []exgate.Permission{exgate.PermissionTrade, exgate.PermissionWithdraw}})
	if err != nil {
		t.Fatal(err)
	}
	return st, cred
}

var (
	testOrder = exgate.OrderRequest{Symbol: exgate.Symbol{Base: "BTC", Quote: "USDT"}, Side: exgate.SideBuy,
		Quantity: decimal.RequireFromString("20"), QuantityIn: exgate.InQuote}
	testWithdrawal = exgate.WithdrawalRequest{Asset: "USDT", Network: "TRX",
		Address: "TN3W4H6rK2ce4vX9YnFQHwKENnHjoxb3m9", Amount: decimal.RequireFromString("25")}
)

// outcome is what a client got for an order or a withdrawal.
type outcome struct {
	id, status string
	err        error
}

func send(ctx context.Context, jr *journal.Service, kind exgate.IntentKind, cred exgate.Credential, ref string) outcome {
	if kind == exgate.IntentOrder {
		o, err := jr.PlaceOrder(ctx, cred, testOrder, ref)
		return outcome{o.ID, string(o.Status), err}
	}
	w, err := jr.Withdraw(ctx, cred, testWithdrawal, ref)
	return outcome{w.ID, string(w.Status), err}
}

func finalStatus(kind exgate.IntentKind) string {
	if kind == exgate.IntentOrder {
		return string(exgate.OrderFilled)
	}
	return string(exgate.TransferCompleted)
}

// TestDuplicateInFlightWaits sends a request and, while the exchange holds
// it, the same request again, from the same instance or from another one
// sharing the store: the duplicate waits and answers with the filled
// order (completed withdrawal), never EXCHANGE_TIMEOUT, and nothing is
// sent or read twice.
func TestDuplicateInFlightWaits(t *testing.T) {
	tests := []struct {
		name          string
		kind          exgate.IntentKind
		otherInstance bool
	}{
		{"order, same instance", exgate.IntentOrder, false},
		{"order, other instance", exgate.IntentOrder, true},
		{"withdrawal, same instance", exgate.IntentWithdrawal, false},
		{"withdrawal, other instance", exgate.IntentWithdrawal, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			st, cred := openJournalStore(t)
			f := newHeldExchange()
			f.release = make(chan struct{})
			clk := newManualClock()
			found := make(chan string, 10)
			opts := journal.Options{Store: foundRefs{st, found}, Exchanges: map[string]exgate.Exchange{"binance": f},
				Now: clk.Now, CallTimeout: time.Minute, WaitPoll: time.Millisecond}
			first := journal.New(opts)
			second := first
			if tc.otherInstance {
				second = journal.New(opts)
			}

			firstDone := make(chan outcome, 1)
			go func() { firstDone <- send(ctx, first, tc.kind, cred, "ref-1") }()
			<-f.submitted
			secondDone := make(chan outcome, 1)
			go func() { secondDone <- send(ctx, second, tc.kind, cred, "ref-1") }()
			<-found // the duplicate has met the first, still with the exchange
			close(f.release)

			a, b := <-firstDone, <-secondDone
			for i, got := range []outcome{a, b} {
				if got.err != nil || got.status != finalStatus(tc.kind) || got.id != a.id {
					t.Errorf("request %d = %+v, want %s %s with no error", i+1, got, a.id, finalStatus(tc.kind))
				}
			}
			if submits, queries := f.counts(); submits != 1 || queries != 0 {
				t.Errorf("the exchange got %d submissions and %d reads, want 1 and 0", submits, queries)
			}
		})
	}
}

// expiringContext is a context whose deadline passes when the test closes
// done, not by the clock.
type expiringContext struct {
	context.Context
	deadline time.Time
	done     chan struct{}
}

func (c *expiringContext) Deadline() (time.Time, bool) { return c.deadline, true }
func (c *expiringContext) Done() <-chan struct{}       { return c.done }
func (c *expiringContext) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// TestDuplicateWaitLimits: a duplicate waits for the first request as long
// as the first may take (the call deadline), not merely its own context's
// deadline (the HTTP layer's, for reads); it gives up, with the pending
// record and EXCHANGE_TIMEOUT, when its client goes away or its call
// deadline passes, without asking the exchange about a request still
// being sent. Once the first is answered, a retry gets the outcome.
func TestDuplicateWaitLimits(t *testing.T) {
	tests := []struct {
		name          string
		otherInstance bool
		// secondTimeout is the CallTimeout of the other instance.
		secondTimeout time.Duration
		// ctx returns the duplicate's context and what to do once it
		// has met the first request.
		ctx      func(context.Context) (context.Context, func())
		wantWait bool // the duplicate answers with the outcome
	}{
		{"context deadline shorter than the call's", false, 0, func(ctx context.Context) (context.Context, func()) {
			// The deadline passes once the duplicate has met the first
			// request: a 10 ms timeout could pass before, on a busy
			// machine, and the test then waited for ever.
			short := &expiringContext{Context: ctx, deadline: time.Now().Add(30 * time.Second), done: make(chan struct{})}
			return short, func() { close(short.done) }
		}, true},
		{"client gone", false, 0, func(ctx context.Context) (context.Context, func()) {
			gone, cancel := context.WithCancel(ctx)
			return gone, cancel
		}, false},
		{"client gone, other instance", true, time.Minute, func(ctx context.Context) (context.Context, func()) {
			gone, cancel := context.WithCancel(ctx)
			return gone, cancel
		}, false},
		{"call deadline, other instance", true, 20 * time.Millisecond, func(ctx context.Context) (context.Context, func()) {
			return ctx, func() {}
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			st, cred := openJournalStore(t)
			f := newHeldExchange()
			f.release = make(chan struct{})
			found := make(chan string, 10)
			opts := journal.Options{Store: foundRefs{st, found}, Exchanges: map[string]exgate.Exchange{"binance": f},
				Now: newManualClock().Now, CallTimeout: time.Minute, WaitPoll: time.Millisecond}
			first := journal.New(opts)
			second := first
			if tc.otherInstance {
				opts.CallTimeout = tc.secondTimeout
				second = journal.New(opts)
			}
			firstDone := make(chan outcome, 1)
			go func() { firstDone <- send(ctx, first, exgate.IntentOrder, cred, "ref-1") }()
			<-f.submitted

			dctx, then := tc.ctx(ctx)
			secondDone := make(chan outcome, 1)
			go func() { secondDone <- send(dctx, second, exgate.IntentOrder, cred, "ref-1") }()
			<-found
			then()
			if !tc.wantWait {
				got := <-secondDone
				if exgate.ErrorCode(got.err) != exgate.CodeExchangeTimeout || got.status != string(exgate.OrderPending) {
					t.Errorf("duplicate = %+v, want PENDING with EXCHANGE_TIMEOUT", got)
				}
			}
			close(f.release)
			if a := <-firstDone; a.err != nil || a.status != string(exgate.OrderFilled) {
				t.Fatalf("first = %+v", a)
			}
			if tc.wantWait {
				if got := <-secondDone; got.err != nil || got.status != string(exgate.OrderFilled) {
					t.Errorf("duplicate = %+v, want FILLED", got)
				}
			}
			// The answer reaches the store in the first instance's next
			// commit, after the client has it; the other instance reads
			// the store, and waits for it no longer than its own 20 ms
			// call deadline here (15 s by default).
			if err := first.Drain(ctx); err != nil {
				t.Fatal(err)
			}
			if got := send(ctx, second, exgate.IntentOrder, cred, "ref-1"); got.err != nil || got.status != string(exgate.OrderFilled) {
				t.Errorf("retry after the answer = %+v, want FILLED", got)
			}
			if submits, queries := f.counts(); submits != 1 || queries != 0 {
				t.Errorf("the exchange got %d submissions and %d reads, want 1 and 0", submits, queries)
			}
		})
	}
}

// logCapture counts the log records by message.
type logCapture struct {
	mu   sync.Mutex
	msgs map[string]int
}

func (c *logCapture) Enabled(context.Context, slog.Level) bool { return true }
func (c *logCapture) Handle(_ context.Context, r slog.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.msgs[r.Message]++
	return nil
}
func (c *logCapture) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *logCapture) WithGroup(string) slog.Handler      { return c }

func (c *logCapture) count(msg string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.msgs[msg]
}

// TestReconcilerIsFair records 2000 intents that cannot progress (1000
// orders whose exchange key was removed, 1000 withdrawals the exchange
// keeps pending) and then one order whose outcome is unknown: it is
// reconciled within two reconcile periods, and the stuck intents make one
// warning, not thousands.
func TestReconcilerIsFair(t *testing.T) {
	ctx := t.Context()
	st, cred := openJournalStore(t)
	f := newHeldExchange()
	clk := newManualClock()
	logs := &logCapture{msgs: map[string]int{}}
	jr := journal.New(journal.Options{Store: st, Exchanges: map[string]exgate.Exchange{"binance": f},
		Now: clk.Now, Logger: slog.New(logs), ReconcileEvery: time.Second, CallTimeout: 15 * time.Second})

	const stuck = 2000
	created := clk.Now().Add(-time.Hour)
	// The intents are written by 16 writers at once, so that the store
	// commits them in groups rather than syncing 2000 times.
	its := make(chan exgate.Intent)
	var writers sync.WaitGroup
	for range 16 {
		writers.Go(func() {
			for it := range its {
				if err := st.CreateIntent(ctx, it); err != nil {
					t.Error(err)
				}
			}
		})
	}
	for i := range stuck {
		it := exgate.Intent{ID: fmt.Sprintf("ostuck%012d", i), Kind: exgate.IntentOrder, ClientAPIKey: "client",
			CredentialID: 999, CredentialName: "removed", Exchange: "binance",
			Request: []byte(`{"Symbol":{"Base":"BTC","Quote":"USDT"}}`), State: exgate.IntentUnknown,
			CreatedAt: created.Add(time.Duration(i) * time.Millisecond)}
		if i%2 == 1 {
			it.ID = fmt.Sprintf("wstuck%012d", i)
			it.Kind, it.CredentialID, it.CredentialName = exgate.IntentWithdrawal, cred.ID, cred.Name
			it.Request, it.State = []byte(`{"Asset":"USDT"}`), exgate.IntentAccepted
			f.hold(it.ID, false)
		}
		its <- it
	}
	close(its)
	writers.Wait()
	if t.Failed() {
		t.FailNow()
	}
	clk.Add(3 * time.Second)

	f.submitErr = exgate.Errorf(exgate.CodeExchangeTimeout, "no answer")
	got := send(ctx, jr, exgate.IntentOrder, cred, "new")
	if exgate.ErrorCode(got.err) != exgate.CodeExchangeTimeout {
		t.Fatalf("new order = %+v, want EXCHANGE_TIMEOUT", got)
	}
	<-f.submitted
	f.hold(got.id, true) // the exchange did fill it

	passes := 0
	for range 2 {
		passes++
		jr.ReconcileAll(ctx)
		if it, err := st.Intent(ctx, got.id); err != nil || it.State.Done() {
			break
		}
		clk.Add(time.Second)
	}
	o, err := jr.Order(ctx, "client", got.id, "")
	if err != nil || o.Status != exgate.OrderFilled {
		t.Fatalf("new order after %d reconcile passes = %s %v, want FILLED", passes, o.Status, err)
	}
	if n := logs.count("reconcile: still unfinished"); n != 1 {
		t.Errorf("%d warnings about the stuck intents within a minute, want 1", n)
	}
	left, err := st.UnfinishedIntents(ctx, 0)
	if err != nil || len(left) != stuck {
		t.Fatalf("unfinished = %d, %v; want the %d stuck ones", len(left), err, stuck)
	}
	for _, it := range left {
		if it.Attempts == 0 || !it.NextDue.After(clk.Now()) {
			t.Fatalf("stuck %s: attempts %d, next due %s; want read and scheduled after now (%s)", it.ID, it.Attempts, it.NextDue, clk.Now())
		}
	}
}

// TestReconcileBackoff: an intent that stays unfinished is read after 1 s,
// then 2 s, 4 s... up to MaxBackoff.
func TestReconcileBackoff(t *testing.T) {
	ctx := t.Context()
	st, cred := openJournalStore(t)
	f := newHeldExchange()
	clk := newManualClock()
	jr := journal.New(journal.Options{Store: st, Exchanges: map[string]exgate.Exchange{"binance": f},
		Now: clk.Now, ReconcileEvery: time.Second, MaxBackoff: 8 * time.Second})
	it := exgate.Intent{ID: "wpending", Kind: exgate.IntentWithdrawal, ClientAPIKey: "client", CredentialID: cred.ID,
		CredentialName: cred.Name, Exchange: "binance", Request: []byte(`{"Asset":"USDT"}`),
		State: exgate.IntentAccepted, CreatedAt: clk.Now()}
	if err := st.CreateIntent(ctx, it); err != nil {
		t.Fatal(err)
	}
	f.hold(it.ID, false)
	var reads []int // seconds at which the exchange was read
	for sec := range 40 {
		_, before := f.counts()
		jr.ReconcileAll(ctx)
		if _, q := f.counts(); q != before {
			reads = append(reads, sec)
		}
		clk.Add(time.Second)
	}
	want := []int{0, 1, 3, 7, 15, 23, 31, 39}
	if fmt.Sprint(reads) != fmt.Sprint(want) {
		t.Errorf("reads at seconds %v, want %v", reads, want)
	}
}

// TestOrphanedIntentEnds: an intent whose exchange key was removed, or
// replaced by another under the same name, stays unfinished (the key may
// come back) until it has gone OrphanAfter without a reading; then it is
// ended with EXCHANGE_ERROR saying why, and a read answers that.
func TestOrphanedIntentEnds(t *testing.T) {
	tests := []struct {
		name    string
		replace bool
	}{
		{"removed", false},
		{"replaced", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			st, cred := openJournalStore(t)
			f := newHeldExchange()
			f.submitErr = exgate.Errorf(exgate.CodeExchangeTimeout, "no answer")
			clk := newManualClock()
			jr := journal.New(journal.Options{Store: st, Exchanges: map[string]exgate.Exchange{"binance": f},
				Now: clk.Now, OrphanAfter: 24 * time.Hour})
			got := send(ctx, jr, exgate.IntentOrder, cred, "ref")
			if exgate.ErrorCode(got.err) != exgate.CodeExchangeTimeout {
				t.Fatalf("order = %+v", got)
			}
			if err := st.RemoveCredential(ctx, "client", "main"); err != nil {
				t.Fatal(err)
			}
			if tc.replace {
				again := cred
				again.ID = 0
				if _, err := st.AddCredential(ctx, again); err != nil {
					t.Fatal(err)
				}
			}
			for _, step := range []time.Duration{0, time.Hour, 23*time.Hour - time.Second} {
				clk.Add(step)
				if left := jr.ReconcileAll(ctx); left > 1 {
					t.Fatalf("left = %d", left)
				}
				if it, err := st.Intent(ctx, got.id); err != nil || it.State.Done() {
					t.Fatalf("after %s: %s %v; want still unfinished", step, it.State, err)
				}
			}
			clk.Add(2 * time.Second)
			if left := jr.ReconcileAll(ctx); left != 0 {
				t.Fatalf("after OrphanAfter: %d left", left)
			}
			_, err := jr.Order(ctx, "client", got.id, "")
			if exgate.ErrorCode(err) != exgate.CodeExchangeError || !strings.Contains(err.Error(), "removed or replaced") ||
				!strings.Contains(err.Error(), got.id) {
				t.Fatalf("Order after OrphanAfter = %v, want EXCHANGE_ERROR naming the key's removal and the client id", err)
			}
			if _, queries := f.counts(); queries != 0 {
				t.Errorf("%d exchange reads without a key", queries)
			}
		})
	}
}

// TestReconcilerLeavesInFlightToItsSender: another instance's reconciler
// does not ask the exchange about an intent still inside its sender's
// call deadline; once that deadline has passed (the sender died), it does.
func TestReconcilerLeavesInFlightToItsSender(t *testing.T) {
	ctx := t.Context()
	st, cred := openJournalStore(t)
	f := newHeldExchange()
	f.release = make(chan struct{})
	clk := newManualClock()
	opts := journal.Options{Store: st, Exchanges: map[string]exgate.Exchange{"binance": f},
		Now: clk.Now, CallTimeout: 15 * time.Second}
	sender, other := journal.New(opts), journal.New(opts)
	done := make(chan outcome, 1)
	go func() { done <- send(ctx, sender, exgate.IntentOrder, cred, "ref") }()
	id := <-f.submitted
	for _, step := range []time.Duration{0, time.Second, 15 * time.Second} {
		clk.Add(step)
		other.ReconcileAll(ctx)
		if _, queries := f.counts(); queries != 0 {
			t.Fatalf("%s after sending: the other instance read the exchange %d times", step, queries)
		}
	}
	clk.Add(2 * time.Second) // past the deadline and the margin to record it
	f.hold(id, true)
	if left := other.ReconcileAll(ctx); left != 0 {
		t.Errorf("left = %d after the sender's deadline", left)
	}
	if _, queries := f.counts(); queries != 1 {
		t.Errorf("%d exchange reads after the sender's deadline, want 1", queries)
	}
	close(f.release)
	if got := <-done; got.err != nil || got.status != string(exgate.OrderFilled) {
		t.Errorf("sender = %+v", got)
	}
}

// TestDuplicateOfDeadSender: when the instance sending a request has died
// (its intent stays submitting), a duplicate on another instance waits
// until the sender's deadline has passed and then reads the outcome from
// the exchange.
func TestDuplicateOfDeadSender(t *testing.T) {
	ctx := t.Context()
	st, cred := openJournalStore(t)
	f := newHeldExchange()
	f.release = make(chan struct{})
	t.Cleanup(func() { close(f.release) })
	clk := newManualClock()
	found := make(chan string, 10)
	opts := journal.Options{Store: foundRefs{st, found}, Exchanges: map[string]exgate.Exchange{"binance": f},
		Now: clk.Now, CallTimeout: 15 * time.Second, WaitPoll: time.Millisecond}
	dead, other := journal.New(opts), journal.New(opts)
	go send(context.WithoutCancel(ctx), dead, exgate.IntentOrder, cred, "ref-1") // never answered: as good as dead
	id := <-f.submitted
	f.hold(id, true) // the exchange filled it

	done := make(chan outcome, 1)
	go func() { done <- send(ctx, other, exgate.IntentOrder, cred, "ref-1") }()
	<-found
	select {
	case got := <-done:
		t.Fatalf("duplicate answered %+v inside the sender's deadline", got)
	case <-time.After(20 * time.Millisecond):
	}
	if _, queries := f.counts(); queries != 0 {
		t.Fatalf("%d exchange reads inside the sender's deadline", queries)
	}
	clk.Add(17 * time.Second)
	if got := <-done; got.err != nil || got.status != string(exgate.OrderFilled) || got.id != id {
		t.Errorf("duplicate after the sender's deadline = %+v, want %s FILLED", got, id)
	}
	if submits, queries := f.counts(); submits != 1 || queries != 1 {
		t.Errorf("the exchange got %d submissions and %d reads, want 1 and 1", submits, queries)
	}
}
