package e2e

import (
	"context"
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
