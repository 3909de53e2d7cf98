package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/client"
	"github.com/exgate/exgate/exchange/binance/binancefake"
)

// TestCrashWhileOrdersInFlight kills `exgate serve` with SIGKILL while 20
// orders have reached Binance but their answers have not come back. After
// a restart every order is reconciled to what Binance holds, and none is
// sent a second time.
func TestCrashWhileOrdersInFlight(t *testing.T) {
	fake := binancefake.New(binancefake.Options{WeightLimit: -1})
	t.Cleanup(fake.Close)
	fake.AddAccount(binancefake.Account{APIKey: "crash-key", Secret: "crash-secret", Balances: map[string]string{"USDT": "1000000"}})

	// In front of the fake: order submissions are forwarded at once, and
	// their answers held until the test releases them (never, for the
	// ones in flight when the gateway dies).
	target, _ := url.Parse(fake.URL)
	rp := httputil.NewSingleHostReverseProxy(target)
	var submitted atomic.Int64
	forwarded := make(chan struct{}, 100)
	var holdMu sync.Mutex
	hold := false
	release := make(chan struct{})
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/api/v3/order" {
			rp.ServeHTTP(w, r)
			return
		}
		submitted.Add(1)
		rec := httptest.NewRecorder()
		rp.ServeHTTP(rec, r) // the order is placed now
		holdMu.Lock()
		h := hold
		holdMu.Unlock()
		if h {
			forwarded <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
				return // the gateway died waiting
			}
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = io.Copy(w, rec.Body)
	}))
	t.Cleanup(front.Close)
	t.Cleanup(func() { close(release) })

	d := newDeployment(t, "EXGATE_BINANCE_URL="+front.URL)
	k := d.createKey("crash")
	d.addExchangeKey(k.APIKey, "main", "binance", "--key", "crash-key", "--secret", "crash-secret", "--permissions", "read,trade")
	inst := d.start("gw1")
	c := inst.client(k, "main")
	ctx := t.Context()
	order := func(ref string) client.MarketOrder {
		return client.MarketOrder{Asset1: "BTC", Asset2: "USDT", Side: "BUY", Quantity: "20", QuantityIn: "asset2", ClientOrderID: ref}
	}
	if _, err := c.PlaceMarketOrder(ctx, order("warm-up")); err != nil {
		t.Fatalf("warm-up order: %v", err)
	}

	holdMu.Lock()
	hold = true
	holdMu.Unlock()
	const n = 20
	for i := range n {
		go func() {
			octx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_, _ = c.PlaceMarketOrder(octx, order(fmt.Sprintf("crash-%d", i)))
		}()
	}
	for range n {
		select {
		case <-forwarded:
		case <-time.After(20 * time.Second):
			t.Fatal("orders did not reach the exchange")
		}
	}
	inst.signal(syscall.SIGKILL)
	<-inst.exited
	holdMu.Lock()
	hold = false
	holdMu.Unlock()

	restarted := d.start("gw2")
	c2 := restarted.client(k, "main")
	for i := range n {
		ref := fmt.Sprintf("crash-%d", i)
		var o exgate.Order
		deadline := time.Now().Add(20 * time.Second)
		for {
			var err error
			o, err = c2.Order(ctx, client.OrderRef{ClientOrderID: ref})
			if err == nil && o.Status.Final() {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s not reconciled: %+v %v", ref, o, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if o.Status != exgate.OrderFilled {
			t.Errorf("%s reconciled as %s, Binance filled it", ref, o.Status)
		}
		if got := fake.OrdersWithClientID(o.ID); got != 1 {
			t.Errorf("%s (%s): Binance holds %d orders", ref, o.ID, got)
		}
	}
	// A client retrying after the crash gets the reconciled order.
	o, err := c2.PlaceMarketOrder(ctx, order("crash-0"))
	if err != nil || o.Status != exgate.OrderFilled {
		t.Errorf("retry of crash-0 after the restart: %+v %v", o, err)
	}
	if got := submitted.Load(); got != n+1 {
		t.Errorf("%d order submissions reached Binance, want %d: an order was sent twice", got, n+1)
	}
}

// TestCrashAfterAnswers kills `exgate serve` with SIGKILL right after it
// answered orders, when their outcomes are still on their way to
// PostgreSQL (an outcome is recorded after the answer, in the store's
// next commit). After a restart the reconciler, left alone, records every
// order the exchange holds as it holds it: the answers the client got, and
// the orders still with the exchange when the instance died.
func TestCrashAfterAnswers(t *testing.T) {
	fake := binancefake.New(binancefake.Options{WeightLimit: -1})
	t.Cleanup(fake.Close)
	fake.AddAccount(binancefake.Account{APIKey: "crash-key", Secret: "crash-secret", Balances: map[string]string{"USDT": "1000000"}})
	d := newDeployment(t, "EXGATE_BINANCE_URL="+fake.URL)
	k := d.createKey("crash")
	d.addExchangeKey(k.APIKey, "main", "binance", "--key", "crash-key", "--secret", "crash-secret", "--permissions", "read,trade")
	inst := d.start("gw1")
	c := inst.client(k, "main")
	order := func(ref string) client.MarketOrder {
		return client.MarketOrder{Asset1: "BTC", Asset2: "USDT", Side: "BUY", Quantity: "20", QuantityIn: "asset2", ClientOrderID: ref}
	}
	const n, killAt = 40, 12
	var mu sync.Mutex
	answered := map[string]string{} // client id -> gateway id
	killed := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	refs := make(chan int)
	go func() {
		defer close(refs)
		for i := range n {
			select {
			case refs <- i:
			case <-killed:
				return
			}
		}
	}()
	for range 8 {
		wg.Go(func() {
			for i := range refs {
				ref := fmt.Sprintf("after-%d", i)
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				o, err := c.PlaceMarketOrder(ctx, order(ref))
				cancel()
				if err != nil {
					continue
				}
				mu.Lock()
				answered[ref] = o.ID
				if len(answered) == killAt {
					once.Do(func() { inst.signal(syscall.SIGKILL); close(killed) })
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	<-inst.exited

	conn, err := pgx.Connect(t.Context(), d.databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	type stored struct{ id, state string }
	states := func() map[string]stored {
		rows, err := conn.Query(t.Context(), `SELECT client_ref, id, state FROM intents WHERE kind = 'order'`)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]stored{}
		for rows.Next() {
			var ref string
			var it stored
			if err := rows.Scan(&ref, &it.id, &it.state); err != nil {
				t.Fatal(err)
			}
			out[ref] = it
		}
		return out
	}
	unsaved := 0
	for ref, it := range states() {
		if _, ok := answered[ref]; ok && it.state == "submitting" {
			unsaved++
		}
	}
	t.Logf("%d orders answered before the kill, %d of them not on disk yet", len(answered), unsaved)

	d.start("gw2")
	// No client reads: the reconciler alone, once the dead sender's
	// deadline (15 s + 2 s) has passed, records every order Binance
	// holds. (An intent whose order never left the dead instance is
	// recorded as never placed two minutes after it was written, which
	// this test does not wait for: journal/crash_test.go does, on a
	// clock it moves.)
	deadline := time.Now().Add(60 * time.Second)
	for {
		open := 0
		for _, it := range states() {
			if it.state != "final" && fake.OrdersWithClientID(it.id) > 0 {
				open++
			}
		}
		if open == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d intents unfinished a minute after the restart", open)
		}
		time.Sleep(200 * time.Millisecond)
	}
	rows, err := conn.Query(t.Context(), `SELECT id, client_ref, answer, response FROM intents WHERE kind = 'order'`)
	if err != nil {
		t.Fatal(err)
	}
	held, never := 0, 0
	for rows.Next() {
		var id, ref, answer string
		var response []byte
		if err := rows.Scan(&id, &ref, &answer, &response); err != nil {
			t.Fatal(err)
		}
		var o exgate.Order
		_ = json.Unmarshal(response, &o)
		switch got := fake.OrdersWithClientID(id); {
		case got > 1:
			t.Errorf("%s (%s): Binance holds %d orders", ref, id, got)
		case got == 1:
			held++
			if answer != "record" || o.Status != exgate.OrderFilled {
				t.Errorf("%s (%s): Binance filled it, the journal has %s %s", ref, id, answer, response)
			}
		case answered[ref] != "":
			t.Errorf("%s (%s): answered, and Binance does not hold it", ref, id)
		default:
			never++
		}
	}
	if got := fake.OrderCount("crash-key"); got != held {
		t.Errorf("Binance holds %d orders, the journal %d", got, held)
	}
	for ref, id := range answered {
		if fake.OrdersWithClientID(id) != 1 {
			t.Errorf("%s: answered as %s, Binance holds %d", ref, id, fake.OrdersWithClientID(id))
		}
	}
	t.Logf("%d orders held by Binance and recorded; %d intents that never reached it", held, never)
}
