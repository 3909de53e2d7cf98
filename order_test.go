package exgate

import (
	"testing"

	"github.com/shopspring/decimal"
)

func TestOrderAdvances(t *testing.T) {
	o := func(s OrderStatus, executed string) Order {
		out := Order{Status: s}
		if executed != "" {
			out.ExecutedQuantity = NumberPtr(decimal.RequireFromString(executed))
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		prev, next Order
		want       bool
	}{
		{"pending to partly filled", o(OrderPending, "0"), o(OrderPartiallyFilled, "1"), true},
		{"pending to filled", o(OrderPending, ""), o(OrderFilled, "2"), true},
		{"pending to canceled", o(OrderPending, ""), o(OrderCanceled, ""), true},
		{"partly filled, more", o(OrderPartiallyFilled, "1"), o(OrderPartiallyFilled, "1.5"), true},
		{"partly filled, the same", o(OrderPartiallyFilled, "1"), o(OrderPartiallyFilled, "1.0"), false},
		{"partly filled, less", o(OrderPartiallyFilled, "1"), o(OrderPartiallyFilled, "0.5"), false},
		{"partly filled back to pending", o(OrderPartiallyFilled, "1"), o(OrderPending, "0"), false},
		{"pending, the same", o(OrderPending, ""), o(OrderPending, ""), false},
		{"pending, a fill without a status change", o(OrderPending, ""), o(OrderPending, "0.1"), true},
		{"filled to canceled", o(OrderFilled, "2"), o(OrderCanceled, "2"), false},
		{"filled again", o(OrderFilled, "2"), o(OrderFilled, "2"), false},
		{"canceled to filled", o(OrderCanceled, "1"), o(OrderFilled, "2"), false},
	} {
		if got := tc.prev.Advances(tc.next); got != tc.want {
			t.Errorf("%s: Advances = %v, want %v", tc.name, got, tc.want)
		}
	}
}
