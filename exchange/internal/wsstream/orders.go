package wsstream

import (
	"context"
	"time"

	"github.com/exgate/exgate"
)

// CatchUpSlack widens the outage window when recent orders are compared
// with the time the stream last heard from the exchange (Orders.CatchUp).
const CatchUpSlack = time.Minute

// maxMarks bounds the orders an Orders remembers; past it the finished
// ones are forgotten.
const maxMarks = 10000

// orderMark is what the stream last emitted of an order.
type orderMark struct {
	status   exgate.OrderStatus
	executed string
	fees     string
}

// Orders is the emitting side of an order stream (exgate.Streamer's
// WatchOrders) whose exchange pushes order objects and whose gaps are
// filled from the REST API: it keeps each order's emissions in order
// across the live stream and the catch-up (nothing after a final status,
// nothing with less executed than already emitted, nothing unchanged),
// and remembers the pairs the stream has seen orders of. Like Book, it
// belongs to one stream goroutine.
type Orders struct {
	emit    func(exgate.Order)
	marks   map[string]orderMark
	symbols map[exgate.Symbol]bool
}

// NewOrders returns an Orders that emits through emit.
func NewOrders(emit func(exgate.Order)) *Orders {
	return &Orders{emit: emit, marks: map[string]orderMark{}, symbols: map[exgate.Symbol]bool{}}
}

// Send emits o unless an emission already made supersedes it.
func (t *Orders) Send(o exgate.Order) {
	if t.admit(o) {
		t.emit(o)
	}
}

// admit reports whether o is to be emitted, and records it.
func (t *Orders) admit(o exgate.Order) bool {
	key := o.ExchangeOrderID
	if key == "" {
		key = o.ID
	}
	t.symbols[exgate.Symbol{Base: o.Asset1, Quote: o.Asset2}] = true
	m := orderMark{status: o.Status, executed: numText(o.ExecutedQuantity), fees: numText(o.Fees)}
	prev, seen := t.marks[key]
	if seen {
		if prev == m || prev.status.Final() {
			return false
		}
		if o.ExecutedQuantity != nil && prev.executed != "" {
			if was, err := exgate.ParseDecimal(prev.executed); err == nil && o.ExecutedQuantity.LessThan(was) {
				return false
			}
		}
	}
	if len(t.marks) >= maxMarks {
		for k, v := range t.marks {
			if v.status.Final() {
				delete(t.marks, k)
			}
		}
	}
	t.marks[key] = m
	return true
}

func numText(n *exgate.Number) string {
	if n == nil {
		return ""
	}
	return n.String()
}

// OrderLister reads a key's orders from the exchange's REST API (the
// adapter's exgate.OrderManager methods).
type OrderLister interface {
	OpenOrders(ctx context.Context, cred exgate.Credential, f exgate.OrderFilter) ([]exgate.Order, error)
	RecentOrders(ctx context.Context, cred exgate.Credential, f exgate.OrderFilter) ([]exgate.Order, error)
}

// CatchUp sends the open orders of cred and, after a reconnect, the recent
// orders of every pair seen that changed since heard (the last time the
// stream heard from the exchange, widened by CatchUpSlack), that are
// still open or that the stream knows: what changed while the stream was
// down. The adapter calls it once its subscription is live, before it
// sends what the subscription pushes.
func (t *Orders) CatchUp(ctx context.Context, om OrderLister, cred exgate.Credential, reconnect bool, heard time.Time) error {
	open, err := om.OpenOrders(ctx, cred, exgate.OrderFilter{})
	if err != nil {
		return err
	}
	for _, o := range open {
		t.symbols[exgate.Symbol{Base: o.Asset1, Quote: o.Asset2}] = true
	}
	if reconnect {
		since := heard.Add(-CatchUpSlack).UnixMilli()
		for sym := range t.symbols {
			recent, err := om.RecentOrders(ctx, cred, exgate.OrderFilter{Symbol: sym, Limit: exgate.MaxRecentLimit})
			if err != nil {
				return err
			}
			// Oldest first, so that the emissions follow the exchange's
			// order.
			for i := len(recent) - 1; i >= 0; i-- {
				o := recent[i]
				_, known := t.marks[o.ExchangeOrderID]
				if known || !o.Status.Final() || o.CloseAt >= since {
					t.Send(o)
				}
			}
		}
	}
	for i := len(open) - 1; i >= 0; i-- {
		t.Send(open[i])
	}
	return nil
}
