package exgate_test

import (
	"encoding/json"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// TestSettleRiskRecord: the journal's settlement from the answer it holds
// decoded is the store's from the answer as recorded, for every kind of
// answer SettleRisk tells apart.
func TestSettleRiskRecord(t *testing.T) {
	d := decimal.RequireFromString
	limit := exgate.RiskReservation{Day: "2030-01-02", Notional: d("600"), Quote: "USDT", QuoteUSD: d("1"), Price: d("100"), Open: true}
	inverted := limit
	inverted.Quote = "BTC"
	market := exgate.RiskReservation{Day: "2030-01-02", Notional: d("300"), Quote: "USDT", QuoteUSD: d("1.5")}
	withdrawal := exgate.RiskReservation{Day: "2030-01-02", Notional: d("50"), QuoteUSD: d("1")}
	order := func(typ string, status exgate.OrderStatus, qty, executed, quote string) exgate.Order {
		o := exgate.Order{Asset1: "BTC", Asset2: "USDT", Type: typ, Status: status, Quantity: exgate.NewNumber(d(qty))}
		if typ == exgate.OrderTypeLimit {
			o.Price = exgate.NumberPtr(d("100"))
		}
		if executed != "" {
			o.ExecutedQuantity = exgate.NumberPtr(d(executed))
		}
		if quote != "" {
			o.QuoteQuantity = exgate.NumberPtr(d(quote))
		}
		return o
	}
	tests := []struct {
		name   string
		kind   exgate.IntentKind
		r      exgate.RiskReservation
		state  exgate.IntentState
		answer exgate.IntentAnswer
		record any
		want   string
	}{
		{"resting", exgate.IntentOrder, limit, exgate.IntentAccepted, exgate.AnswerRecord, order(exgate.OrderTypeLimit, exgate.OrderPending, "6", "0", "0"), "600 true true"},
		{"partly filled", exgate.IntentOrder, limit, exgate.IntentAccepted, exgate.AnswerRecord, order(exgate.OrderTypeLimit, exgate.OrderPartiallyFilled, "6", "2", "190"), "590 true true"},
		{"canceled", exgate.IntentOrder, limit, exgate.IntentFinal, exgate.AnswerRecord, order(exgate.OrderTypeLimit, exgate.OrderCanceled, "6", "1", "100"), "100 false true"},
		{"named the other way round", exgate.IntentOrder, inverted, exgate.IntentFinal, exgate.AnswerRecord, order(exgate.OrderTypeLimit, exgate.OrderFilled, "6", "6", "600"), "6 false true"},
		{"market not yet filled", exgate.IntentOrder, market, exgate.IntentAccepted, exgate.AnswerRecord, order(exgate.OrderTypeMarket, exgate.OrderPending, "3", "", ""), "300 false true"},
		{"market filled", exgate.IntentOrder, market, exgate.IntentFinal, exgate.AnswerRecord, order(exgate.OrderTypeMarket, exgate.OrderFilled, "3", "3", "240"), "360 false true"},
		{"refused", exgate.IntentOrder, limit, exgate.IntentFinal, exgate.AnswerError, map[string]string{"code": "ORDER_REJECTED"}, "0 false true"},
		{"unknown", exgate.IntentOrder, limit, exgate.IntentUnknown, exgate.AnswerPending, order(exgate.OrderTypeLimit, exgate.OrderPending, "6", "", ""), "600 true false"},
		{"withdrawal sent", exgate.IntentWithdrawal, withdrawal, exgate.IntentAccepted, exgate.AnswerRecord, exgate.Withdrawal{Status: exgate.TransferPending}, "50 false true"},
		{"withdrawal failed", exgate.IntentWithdrawal, withdrawal, exgate.IntentFinal, exgate.AnswerRecord, exgate.Withdrawal{Status: exgate.TransferFailed}, "0 false true"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body, err := json.Marshal(tc.record)
			if err != nil {
				t.Fatal(err)
			}
			charge, open, known := exgate.SettleRisk(tc.kind, tc.r, tc.state, tc.answer, body)
			fromBody := charge.String() + " " + boolString(open) + " " + boolString(known)
			if fromBody != tc.want {
				t.Fatalf("SettleRisk = %s, want %s", fromBody, tc.want)
			}
			s, ok := exgate.SettleRiskRecord(tc.kind, tc.r, tc.state, tc.answer, tc.record)
			if !ok {
				t.Fatalf("SettleRiskRecord of a %T: not settled", tc.record)
			}
			got := s.Charge.String() + " " + boolString(s.Open) + " " + boolString(s.Known)
			if got != tc.want || !s.Reserved.Notional.Equal(tc.r.Notional) {
				t.Fatalf("SettleRiskRecord = %s (reserved %s), want %s (reserved %s)", got, s.Reserved.Notional, tc.want, tc.r.Notional)
			}
		})
	}
	// A record of another type is not settled.
	if _, ok := exgate.SettleRiskRecord(exgate.IntentOrder, limit, exgate.IntentAccepted, exgate.AnswerRecord, exgate.Withdrawal{}); ok {
		t.Fatal("SettleRiskRecord settled an order from a withdrawal")
	}
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
