package bybit_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/bybit"
	"github.com/exgate/exgate/exchange/bybit/bybitfake"
	"github.com/exgate/exgate/journal"
	"github.com/exgate/exgate/sqlite"
)

// Transfers (spot to funding, and back for odd client ids) through the
// journal while the fake times out before and after executing, answers
// 5xx and resets connections, with clients retrying under the same client
// id: Bybit holds at most one transfer per client id (its transferId is
// derived from the id), and every intent is reconciled, by reading the
// transfer back, to what Bybit holds. The same mix as journal/fault_test.go.
func TestTransferFaultInjection(t *testing.T) {
	if testing.Short() {
		t.Skip("fault injection runs hundreds of requests; skipped with -short")
	}
	ctx := t.Context()
	fake := bybitfake.New(bybitfake.Options{NoRateLimits: true})
	t.Cleanup(fake.Close)
	if err := fake.AddAccount(bybitfake.Account{APIKey: "k", Secret: "s", Unified: map[string]string{"BTC": "1000"}, Fund: map[string]string{"BTC": "1000"}}); err != nil {
		t.Fatal(err)
	}
	const callTimeout = 75 * time.Millisecond
	ex := bybit.New(bybit.Options{BaseURL: fake.URL, HTTPClient: &http.Client{Timeout: callTimeout}, Limiter: noLimits{}, RetryBackoff: time.Millisecond})
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "exgate.db"), bytes.Repeat([]byte{1}, 32))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.CreateClientKey(ctx, exgate.ClientKey{APIKey: "client", Secret: "x", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	cred, err := st.AddCredential(ctx, exgate.Credential{ClientAPIKey: "client", Name: "main", Exchange: bybit.Name,
		Key: "k", Secret: "s", Permissions: []exgate.Permission{exgate.PermissionTrade}})
	if err != nil {
		t.Fatal(err)
	}
	var shift atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(shift.Load())) }
	jr := journal.New(journal.Options{Store: st, Exchanges: map[string]exgate.Exchange{bybit.Name: ex},
		Now: now, CallTimeout: 3 * time.Second, NotFoundGrace: time.Minute})

	rng := rand.New(rand.NewPCG(7, 30))
	var rngMu sync.Mutex
	fake.SetFault(func(r *http.Request) bybitfake.Fault {
		rngMu.Lock()
		defer rngMu.Unlock()
		if r.URL.Path != "/v5/asset/transfer/inter-transfer" && rng.IntN(4) != 0 {
			return bybitfake.Fault{}
		}
		switch n := rng.IntN(100); {
		case n < 40:
			return bybitfake.Fault{}
		case n < 55:
			return bybitfake.Fault{Delay: 4 * callTimeout}
		case n < 65:
			return bybitfake.Fault{Delay: 20 * time.Millisecond}
		case n < 75:
			return bybitfake.Fault{Status: 500, Body: "Internal Server Error"}
		case n < 85:
			return bybitfake.Fault{Drop: true}
		}
		return bybitfake.Fault{DropAfter: true}
	})
	amount := func(i int) decimal.Decimal { return decimal.New(int64(i+1), -3) }
	request := func(i int) exgate.TransferRequest {
		req := exgate.TransferRequest{Asset: "BTC", Amount: amount(i), From: exgate.WalletSpot, To: exgate.WalletFunding}
		if i%2 == 1 {
			req.From, req.To = req.To, req.From
		}
		return req
	}
	attempts, distinct := 300, 120
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				n := int(next.Add(1)) - 1
				if n >= attempts {
					return
				}
				i := n % distinct
				_, err := jr.Transfer(ctx, cred, request(i), fmt.Sprintf("ref-%d", i))
				switch c := exgate.ErrorCode(err); {
				case err == nil, c == exgate.CodeExchangeTimeout, c == exgate.CodeExchangeError, c == exgate.CodeExchangeUnavailable,
					c == exgate.CodeTransferRejected:
				default:
					t.Errorf("attempt %d: unexpected %v", n, err)
				}
			}
		})
	}
	wg.Wait()
	fake.SetFault(nil)
	time.Sleep(8 * callTimeout) // a slow request may still be sleeping in the fake
	shift.Add(int64(2 * time.Minute))
	left := -1
	for i := 0; i < 20 && left != 0; i++ {
		left = jr.ReconcileAll(ctx)
		shift.Add(int64(time.Minute))
	}
	if left != 0 {
		t.Fatalf("%d intents still unfinished after reconciliation", left)
	}
	held, never := 0, 0
	for i := range distinct {
		ref := fmt.Sprintf("ref-%d", i)
		it, err := st.IntentByClientRef(ctx, "client", exgate.IntentTransfer, ref)
		if err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		n := fake.TransfersOf("k", "BTC", amount(i).String())
		switch {
		case n > 1:
			t.Errorf("%s: Bybit holds %d transfers of it", ref, n)
		case n == 1 && it.Answer == exgate.AnswerRecord:
			held++
			var tr exgate.Transfer
			if err := json.Unmarshal(it.Response, &tr); err != nil || tr.Status != exgate.TransferCompleted || !tr.Amount.Equal(amount(i)) {
				t.Errorf("%s: recorded %s (%v)", ref, it.Response, err)
			}
		case n == 0 && it.Answer != exgate.AnswerRecord:
			never++
		default:
			t.Errorf("%s (%s): Bybit holds %d, the journal says %q %s", ref, it.ID, n, it.Answer, it.Response)
		}
	}
	t.Logf("bybit transfers: %d attempts over %d client ids: %d held, %d never sent", attempts, distinct, held, never)
	if held == 0 || never == 0 {
		t.Error("the faults were too weak or too strong for the test to mean anything")
	}
}
