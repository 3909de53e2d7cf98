package wsstream

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

func order(id string, st exgate.OrderStatus, executed string) exgate.Order {
	return exgate.Order{ID: "c" + id, ExchangeOrderID: id, Asset1: "BTC", Asset2: "USDT", Status: st,
		ExecutedQuantity: exgate.NumberPtr(decimal.RequireFromString(executed))}
}

// sent collects what an Orders emits, as "id status executed".
type sent []string

func (s *sent) emit(o exgate.Order) {
	*s = append(*s, o.ExchangeOrderID+" "+string(o.Status)+" "+o.ExecutedQuantity.String())
}

// TestOrdersSend: one order's emissions stay in order: nothing
// unchanged, nothing with less executed, nothing after a final status.
func TestOrdersSend(t *testing.T) {
	var got sent
	tr := NewOrders(got.emit)
	steps := []struct {
		o    exgate.Order
		want bool
		why  string
	}{
		{order("1", exgate.OrderPending, "0"), true, "new"},
		{order("1", exgate.OrderPending, "0"), false, "unchanged"},
		{order("1", exgate.OrderPartiallyFilled, "0.5"), true, "filled in part"},
		{order("1", exgate.OrderPartiallyFilled, "0.2"), false, "less executed: an older state"},
		{order("1", exgate.OrderFilled, "1"), true, "filled"},
		{order("1", exgate.OrderPartiallyFilled, "0.7"), false, "after a final status"},
		{order("2", exgate.OrderPending, "0"), true, "another order"},
	}
	for _, s := range steps {
		n := len(got)
		tr.Send(s.o)
		if emitted := len(got) > n; emitted != s.want {
			t.Errorf("%s: emitted %v, want %v", s.why, emitted, s.want)
		}
	}
	if !tr.symbols[exgate.Symbol{Base: "BTC", Quote: "USDT"}] {
		t.Error("the pair was not noted")
	}
}

// lister is an OrderLister with fixed answers, newest first as the
// adapters list them.
type lister struct {
	open   []exgate.Order
	recent map[exgate.Symbol][]exgate.Order
	asked  []exgate.Symbol
}

func (l *lister) OpenOrders(context.Context, exgate.Credential, exgate.OrderFilter) ([]exgate.Order, error) {
	return l.open, nil
}

func (l *lister) RecentOrders(_ context.Context, _ exgate.Credential, f exgate.OrderFilter) ([]exgate.Order, error) {
	l.asked = append(l.asked, f.Symbol)
	return l.recent[f.Symbol], nil
}

// TestOrdersCatchUp: the open orders, oldest first; after a reconnect
// first the recent orders of every pair seen that are open, known to the
// stream or closed since it last heard from the exchange (less
// CatchUpSlack).
func TestOrdersCatchUp(t *testing.T) {
	heard := time.UnixMilli(1_700_000_000_000)
	closedAt := func(o exgate.Order, at time.Time) exgate.Order { o.CloseAt = at.UnixMilli(); return o }
	eth := exgate.Symbol{Base: "ETH", Quote: "USDT"}
	btc := exgate.Symbol{Base: "BTC", Quote: "USDT"}
	openETH := order("e1", exgate.OrderPending, "0")
	openETH.Asset1 = "ETH"
	l := &lister{
		open: []exgate.Order{openETH, order("b2", exgate.OrderPending, "0")},
		recent: map[exgate.Symbol][]exgate.Order{
			btc: {
				order("b2", exgate.OrderPending, "0"),
				closedAt(order("b4", exgate.OrderCanceled, "0"), heard.Add(-2*CatchUpSlack)),              // closed long before: not sent
				closedAt(order("b3", exgate.OrderFilled, "1"), heard.Add(-CatchUpSlack+time.Millisecond)), // closed during the outage
				closedAt(order("b1", exgate.OrderFilled, "1"), heard.Add(-3*CatchUpSlack)),                // known to the stream: sent
			},
		},
	}
	var got sent
	tr := NewOrders(got.emit)
	if err := tr.CatchUp(t.Context(), l, exgate.Credential{}, false, heard); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sent{"b2 PENDING 0", "e1 PENDING 0"}, got); diff != "" {
		t.Errorf("first catch-up (-want +got):\n%s", diff)
	}
	if len(l.asked) != 0 {
		t.Errorf("recent orders read without a reconnect: %v", l.asked)
	}
	tr.Send(order("b1", exgate.OrderPending, "0"))
	got = nil
	if err := tr.CatchUp(t.Context(), l, exgate.Credential{}, true, heard); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sent{"b1 FILLED 1", "b3 FILLED 1"}, got); diff != "" {
		t.Errorf("catch-up after a reconnect (-want +got):\n%s", diff)
	}
	if len(l.asked) != 2 || !slices.Contains(l.asked, btc) || !slices.Contains(l.asked, eth) {
		t.Errorf("recent orders read for %v, want BTC/USDT and ETH/USDT", l.asked)
	}
}
