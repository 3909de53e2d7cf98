package sqlite_test

import (
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/sqlite"
)

// BenchmarkOrderWrites is the store's share of an order as the journal
// writes it (docs/PERFORMANCE.md, "One synced commit per order"): the
// intent, committed while the client waits, then its outcome and its
// audit record, committed after the answer in a later shared commit.
// Clients of 512 exchange keys of 64 client keys, as exgate-bench's; one
// client, or 32 concurrent ones. ns/op is the wall time per order over
// all clients; intent-us is an intent's commit as its client waits.
func BenchmarkOrderWrites(b *testing.B) {
	for _, clients := range []int{1, 32} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			st, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "x.db"), testKey())
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			ctx := b.Context()
			var (
				next, waited atomic.Int64
				saving       sync.WaitGroup
				failed       atomic.Pointer[error]
			)
			order := func() {
				n := next.Add(1)
				id, ref := exgate.NewID('o'), fmt.Sprintf("bench-%d", n)
				key := fmt.Sprintf("client-%d", n%64)
				in := exgate.Intent{ID: id, Kind: exgate.IntentOrder, ClientAPIKey: key, CredentialID: n % 512, CredentialName: fmt.Sprintf("ex-%d", n%512),
					Exchange: "binance", ClientRef: ref, Fingerprint: "4f1bd0a6c1d7e2a9b8f3c5d4e6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5",
					Request: []byte(`{"symbol":{"base":"BTC","quote":"USDT"},"side":"BUY","quantity":"0.001","price":"30000","timeInForce":"GTC","clientOrderId":"` + id + `"}`),
					State:   exgate.IntentSubmitting, NextDue: time.Now().Add(time.Minute)}
				start := time.Now()
				if err := st.CreateIntent(ctx, in); err != nil {
					failed.Store(&err)
					return
				}
				waited.Add(int64(time.Since(start)))
				resp := []byte(`{"id":"` + id + `","exchange":"binance","asset1":"BTC","asset2":"USDT","side":"BUY","type":"LIMIT","status":"PENDING","quantity":0.001,"executedQuantity":0,"price":30000,"clientOrderId":"` + ref + `","createdAt":"2026-11-27T00:00:00Z"}`)
				saving.Add(2)
				go func() {
					defer saving.Done()
					if err := st.RecordOutcome(ctx, id, exgate.IntentOutcome{State: exgate.IntentAccepted, Answer: exgate.AnswerRecord, Response: resp, NextDue: time.Now().Add(time.Second)}); err != nil {
						failed.Store(&err)
					}
				}()
				go func() {
					defer saving.Done()
					err := st.AppendAudits(ctx, []exgate.AuditEntry{{Actor: "api", Action: "POST /v1/order/limit", APIKey: key, ExchangeKey: in.CredentialName,
						Details: map[string]string{"symbol": "BTC/USDT", "side": "BUY"}, Status: 200, IntentID: id, RequestID: exgate.NewID('r'), Remote: "127.0.0.1"}})
					if err != nil {
						failed.Store(&err)
					}
				}()
			}
			b.ResetTimer()
			var wg sync.WaitGroup
			var left atomic.Int64
			left.Store(int64(b.N))
			for range clients {
				wg.Go(func() {
					for left.Add(-1) >= 0 {
						order()
					}
				})
			}
			wg.Wait()
			saving.Wait()
			b.StopTimer()
			if p := failed.Load(); p != nil {
				b.Fatal(*p)
			}
			b.ReportMetric(float64(waited.Load())/float64(b.N)/1e3, "intent-us")
		})
	}
}
