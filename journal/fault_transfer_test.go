package journal_test

import (
	"bytes"
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
	"github.com/exgate/exgate/exchange/binance"
	"github.com/exgate/exgate/exchange/binance/binancefake"
	"github.com/exgate/exgate/journal"
	"github.com/exgate/exgate/sqlite"
)

// transferAmount is the amount of the i-th client id's transfer: Binance's
// universal transfer takes no client id, so each one is told apart by its
// amount (docs/contract.md 2.10).
func transferAmount(i int) decimal.Decimal {
	return decimal.New(int64(i+1), -3)
}

// TestTransferFaultInjection sends transfers (spot to funding, and back
// for odd client ids) through the journal to the Binance fake while it
// injects timeouts before and after it executes, 5xx answers, resets and
// slow answers, with clients retrying under the same client id. The fake
// must hold at most one transfer per client id and every intent must be
// reconciled, from the transfer history, to what the fake holds: never
// two transfers, never a lost one.
func TestTransferFaultInjection(t *testing.T) {
	if testing.Short() {
		t.Skip("fault injection runs hundreds of requests; skipped with -short")
	}
	ctx := t.Context()
	fake := binancefake.New(binancefake.Options{WeightLimit: -1})
	t.Cleanup(fake.Close)
	fake.AddAccount(binancefake.Account{APIKey: "k", Secret: "s",
		Balances: map[string]string{"BTC": "1000"}, Funding: map[string]string{"BTC": "1000"}})
	fc := newFaultClient(t)
	ex := binance.New(binance.Options{BaseURL: fake.URL, HTTPClient: fc.client(), Limiter: unlimited{}})

	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "exgate.db"), bytes.Repeat([]byte{1}, 32))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.CreateClientKey(ctx, exgate.ClientKey{APIKey: "client", Secret: "x", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	cred, err := st.AddCredential(ctx, exgate.Credential{ClientAPIKey: "client", Name: "main", Exchange: binance.Name,
		Key: "k", Secret: "s", Permissions: []exgate.Permission{exgate.PermissionTrade}})
	if err != nil {
		t.Fatal(err)
	}
	clk := &shiftClock{}
	jr := journal.New(journal.Options{Store: st, Exchanges: map[string]exgate.Exchange{cred.Exchange: ex},
		Now: clk.Now, CallTimeout: 3 * time.Second, NotFoundGrace: time.Minute})

	rng := rand.New(rand.NewPCG(7, 28))
	var rngMu sync.Mutex
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
	fc.set(func(r *http.Request) fault {
		rngMu.Lock()
		defer rngMu.Unlock()
		submit := r.Method == http.MethodPost && r.URL.Path == "/sapi/v1/asset/transfer"
		if !submit && rng.IntN(4) != 0 {
			return faultNone
		}
		return randomFault(rng)
	})

	attempts, distinct := 300, 120
	if raceEnabled {
		attempts, distinct = 100, 40
	}
	request := func(i int) exgate.TransferRequest {
		req := exgate.TransferRequest{Asset: "BTC", Amount: transferAmount(i), From: exgate.WalletSpot, To: exgate.WalletFunding}
		if i%2 == 1 {
			req.From, req.To = req.To, req.From
		}
		return req
	}
	var next, answered atomic.Int64
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
				case err == nil:
					answered.Add(1)
				case c == exgate.CodeExchangeTimeout, c == exgate.CodeExchangeError, c == exgate.CodeExchangeUnavailable,
					c == exgate.CodeTransferRejected:
				default:
					t.Errorf("attempt %d: unexpected %v", n, err)
				}
			}
		})
	}
	wg.Wait()
	fc.set(func(*http.Request) fault { return faultNone })
	// A slow request may still be held by the fake (see runFaults).
	fc.waitIdle(t, fake.Busy)

	clk.Add(2 * time.Minute)
	left := -1
	for i := 0; i < 20 && left != 0; i++ {
		left = jr.ReconcileAll(ctx)
		clk.Add(time.Minute)
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
		n := fake.TransfersOf("k", "BTC", transferAmount(i).String())
		if n > 1 {
			t.Errorf("%s (%s): the exchange holds %d transfers of it", ref, it.ID, n)
		}
		if it.State != exgate.IntentFinal {
			t.Errorf("%s: state %s", ref, it.State)
		}
		switch {
		case n == 1 && it.Answer == exgate.AnswerRecord:
			held++
			var tr exgate.Transfer
			if err := jsonUnmarshal(it.Response, &tr); err != nil || tr.ID != it.ID || tr.ClientTransferID != ref ||
				tr.Status != exgate.TransferCompleted || tr.ExchangeID == "" || !tr.Amount.Equal(transferAmount(i)) {
				t.Errorf("%s: recorded transfer %s (%v)", ref, it.Response, err)
			}
		case n == 0 && it.Answer != exgate.AnswerRecord:
			never++
		default:
			t.Errorf("%s (%s): the exchange holds %d, the journal says %q %s", ref, it.ID, n, it.Answer, it.Response)
		}
	}
	t.Logf("binance transfers: %d attempts over %d client ids: %d held by the exchange, %d never sent; %d answered at once",
		attempts, distinct, held, never, answered.Load())
	if held == 0 || never == 0 {
		t.Error("the faults were too weak or too strong for the test to mean anything")
	}
}
