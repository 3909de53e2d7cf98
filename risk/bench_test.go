package risk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/risk"
	"github.com/exgate/exgate/sqlite"
)

// limitedStore is a risk.Store where key "k" has every limit but a band.
type limitedStore struct{ *memStore }

func (*limitedStore) AllRiskLimits(context.Context) (map[string]exgate.RiskLimits, error) {
	maxOrder, daily := decimal.NewFromInt(1000), decimal.NewFromInt(1_000_000)
	open := int64(1000)
	return map[string]exgate.RiskLimits{"k": {Symbols: []exgate.Symbol{{Base: "BTC", Quote: "USDT"}},
		MaxOrderNotional: &maxOrder, MaxOpenOrders: &open, DailyNotional: &daily}}, nil
}

// bandedStore is limitedStore with a 50 % price band.
type bandedStore struct{ *memStore }

func (*bandedStore) AllRiskLimits(ctx context.Context) (map[string]exgate.RiskLimits, error) {
	all, _ := (&limitedStore{}).AllRiskLimits(ctx)
	l := all["k"]
	band := decimal.NewFromInt(50)
	l.PriceBand = &band
	return map[string]exgate.RiskLimits{"k": l}, nil
}

// staticBooks is a risk.LiveBooks with one live book of 100 levels a side
// around 30000 for every pair.
type staticBooks struct{ book exgate.OrderBook }

func newStaticBooks() *staticBooks {
	var b exgate.OrderBook
	for i := range exgate.MaxStreamDepth {
		b.Bids = append(b.Bids, exgate.Level{Price: fmt.Sprintf("%d.5", 29999-i), Quantity: "1.25"})
		b.Asks = append(b.Asks, exgate.Level{Price: fmt.Sprintf("%d.5", 30000+i), Quantity: "1.25"})
	}
	return &staticBooks{book: b}
}

func (s *staticBooks) LiveBook(string, exgate.Symbol) (exgate.OrderBook, bool) { return s.book, true }

func (s *staticBooks) HoldBook(ctx context.Context, _ string, _ exgate.Symbol) error {
	<-ctx.Done()
	return nil
}

// BenchmarkCheckLimitOrder is the engine's cost of one limit order on a
// USDT pair: without limits (the halt check and a map lookup), with every
// limit that needs no market data, and with those and a price band read
// from a live book (risk.Options.Books).
func BenchmarkCheckLimitOrder(b *testing.B) {
	req := exgate.LimitOrderRequest{Symbol: exgate.Symbol{Base: "BTC", Quote: "USDT"}, Side: exgate.SideBuy,
		Quantity: decimal.RequireFromString("0.001"), Price: decimal.NewFromInt(30000)}
	for _, tc := range []struct {
		name  string
		st    risk.Store
		books risk.LiveBooks
	}{{"none", &memStore{}, nil}, {"limits", &limitedStore{&memStore{}}, nil}, {"limits+band", &bandedStore{&memStore{}}, newStaticBooks()}} {
		b.Run(tc.name, func(b *testing.B) {
			eng := risk.New(risk.Options{Store: tc.st, Poll: time.Hour, Books: tc.books})
			cred := exgate.Credential{ClientAPIKey: "k", Exchange: "binance"}
			for b.Loop() {
				if _, err := eng.CheckLimitOrder(b.Context(), cred, nil, req, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkIntentWithReservation is the store's cost of an order's two
// writes (the intent, then its answer) on SQLite, without and with a
// reservation: one statement more in the intent's transaction (a
// conditional write of the key's row as the store knows it), none in
// the answer's when it changes nothing. Both pay the same synced commits.
// The answer is recorded as the journal records it, with the settlement
// worked out beforehand (exgate.IntentOutcome.Risk).
func BenchmarkIntentWithReservation(b *testing.B) {
	for _, withRisk := range []bool{false, true} {
		b.Run(map[bool]string{false: "none", true: "reserved"}[withRisk], func(b *testing.B) {
			st, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "x.db"), bytes.Repeat([]byte{7}, 32))
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			max, open := decimal.NewFromInt(1e12), int64(1e9)
			resp := []byte(`{"id":"x","asset1":"BTC","asset2":"USDT","status":"PENDING","type":"LIMIT","side":"BUY","quantity":0.001,"executedQuantity":0,"price":30000}`)
			var order exgate.Order
			if err := json.Unmarshal(resp, &order); err != nil {
				b.Fatal(err)
			}
			for i := 0; b.Loop(); i++ {
				in := exgate.Intent{ID: fmt.Sprintf("i%d", i), Kind: exgate.IntentOrder, ClientAPIKey: "k", CredentialID: 1, CredentialName: "m",
					Exchange: "binance", Fingerprint: "f", Request: []byte(`{}`), State: exgate.IntentSubmitting}
				if withRisk {
					in.Risk = &exgate.RiskReservation{Day: "2026-11-27", Notional: decimal.NewFromInt(30), Quote: "USDT", QuoteUSD: decimal.NewFromInt(1),
						Open: true, Price: decimal.NewFromInt(30000), MaxDailyNotional: &max, MaxOpenOrders: &open}
				}
				if err := st.CreateIntent(b.Context(), in); err != nil {
					b.Fatal(err)
				}
				// As the journal records its own outcomes: with the
				// settlement worked out from the answer it holds decoded.
				o := exgate.IntentOutcome{State: exgate.IntentAccepted, Answer: exgate.AnswerRecord, Response: resp}
				if in.Risk != nil {
					if st, ok := exgate.SettleRiskRecord(in.Kind, *in.Risk, o.State, o.Answer, order); ok {
						o.Risk = &st
					}
				}
				if err := st.UpdateIntent(b.Context(), in.ID, o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
