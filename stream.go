package exgate

import "context"

// Streamer is the live-stream capability of docs/contract.md 2.5: an
// adapter that implements it feeds GET /v1/stream from its exchange's own
// push API instead of being polled. Like OrderManager it is found by type
// assertion; the stream route refuses a channel of an exchange whose
// adapter lacks it with NOT_IMPLEMENTED.
//
// Each Watch call holds one upstream subscription until ctx ends. The
// stream hub (package stream) makes one call per (exchange, channel, pair)
// for the market channels and one per exchange credential for orders, and
// fans each out to every client that listens, so an adapter never sees two
// calls for the same thing from one instance.
//
// The rules common to the three methods:
//   - emit is called from one goroutine at a time, in order, and must not
//     block for long; the value passed is the callee's to keep (an adapter
//     never changes a book or an order after passing it).
//   - A Watch returns nil only when ctx ends. A transient upstream failure
//     (a dropped connection, a gap in the sequence, a bad checksum, a
//     timeout) is handled inside: the adapter reconnects with backoff and
//     jitter, resynchronizes and goes on emitting. It returns an *Error
//     only for what retrying cannot mend: EXCHANGE_AUTH_FAILED (the key is
//     refused), PERMISSION_DENIED, UNKNOWN_SYMBOL.
//   - The first value is emitted as soon as the subscription is live: the
//     book as it stands, the current kline, and for orders the open
//     orders, so a client never waits for the first change to learn the
//     state.
//   - When the upstream connection drops and the adapter reconnects on its
//     own, it calls StreamLost(ctx) first: until it emits again, what it
//     emitted last may no longer hold.
type Streamer interface {
	// WatchOrders emits every change of the credential's orders: placed,
	// partly or fully filled, canceled, expired; orders placed outside the
	// gateway too (their ID is then the exchange's id). After a reconnect
	// it brings every order that changed while the connection was down up
	// to date from the exchange's REST API before emitting live changes
	// again, so no change is lost; an order may then be emitted twice with
	// the same state, never out of order for one order.
	WatchOrders(ctx context.Context, cred Credential, emit func(Order)) error

	// WatchBook emits the order book of sym, up to MaxStreamDepth levels
	// per side (fewer when the book is shallower), on every change, kept
	// from the exchange's snapshot plus updates with its sequence or
	// checksum checks and resynchronized on a gap. The hub cuts it to each
	// client's depth and paces it to StreamBookRate.
	WatchBook(ctx context.Context, cred Credential, sym Symbol, emit func(OrderBook)) error

	// WatchKlines emits the current kline of sym and iv on every change
	// and, once, each kline as it closes (KlineUpdate.Closed).
	WatchKlines(ctx context.Context, cred Credential, sym Symbol, iv Interval, emit func(KlineUpdate)) error
}

// streamLostKey is the context key of ContextWithStreamLost.
type streamLostKey struct{}

// ContextWithStreamLost returns ctx carrying lost, for a Watch call whose
// caller wants to know when the upstream connection drops (StreamLost):
// the stream hub then stops treating the last book as the exchange's
// current one until the next arrives.
func ContextWithStreamLost(ctx context.Context, lost func()) context.Context {
	return context.WithValue(ctx, streamLostKey{}, lost)
}

// StreamLost tells the caller of a Watch that the upstream connection
// dropped (ContextWithStreamLost); without such a caller it does nothing.
func StreamLost(ctx context.Context) {
	if lost, ok := ctx.Value(streamLostKey{}).(func()); ok {
		lost()
	}
}

// KlineUpdate is one message of the klines channel: the kline as it is
// now. Closed is true exactly once per kline, when its interval has ended.
type KlineUpdate struct {
	Kline  Kline
	Closed bool
}

// Limits of the streams (docs/contract.md 2.5).
const (
	// DefaultStreamDepth and MaxStreamDepth bound a book subscription's
	// levels per side.
	DefaultStreamDepth = 20
	MaxStreamDepth     = 100
	// StreamBookRate is the most book snapshots a second a client gets
	// per subscription.
	StreamBookRate = 10
)
