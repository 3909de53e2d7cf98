package rest

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/exgate/exgate"
)

// Markets caches an exchange's list of pairs, shared by every request and
// credential: loaded on first use, refreshed in the background once older
// than TTL (one fetch in flight at a time, the cached list served
// meanwhile), and fetched again at once when a pair is not found and the
// list is older than MinRefresh (a new listing). P is the adapter's own
// pair, with the rules it checks before sending an order.
type Markets[P any] struct {
	// Exchange names the exchange in UNKNOWN_SYMBOL ("okx"); What names
	// the list in errors and logs ("okx instruments").
	Exchange, What  string
	TTL, MinRefresh time.Duration
	Now             func() time.Time
	Log             *slog.Logger
	// Fetch reads the whole list.
	Fetch func(ctx context.Context) ([]P, error)
	// Key is a pair's symbol and the exchange's own id for it (BTC-USDT).
	Key func(P) (exgate.Symbol, string)

	list       atomic.Pointer[MarketList[P]]
	group      singleflight.Group
	refreshing atomic.Bool
}

// MarketList is one fetch of the list.
type MarketList[P any] struct {
	BySym   map[exgate.Symbol]P
	ByID    map[string]P
	Fetched time.Time
}

// Load fetches the list now (one fetch in flight at a time, which outlives
// a caller who stops waiting) and keeps it.
func (m *Markets[P]) Load(ctx context.Context) (*MarketList[P], error) {
	ch := m.group.DoChan("list", func() (any, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		pairs, err := m.Fetch(ctx)
		if err != nil {
			return nil, err
		}
		l := &MarketList[P]{BySym: make(map[exgate.Symbol]P, len(pairs)), ByID: make(map[string]P, len(pairs)), Fetched: m.Now()}
		for _, p := range pairs {
			sym, id := m.Key(p)
			l.BySym[sym] = p
			l.ByID[id] = p
		}
		m.list.Store(l)
		return l, nil
	})
	return Await[*MarketList[P]](ctx, ch, m.What)
}

// Current returns the cached list, loading it on first use and starting a
// background refresh when it is older than TTL.
func (m *Markets[P]) Current(ctx context.Context) (*MarketList[P], error) {
	l := m.list.Load()
	if l == nil {
		return m.Load(ctx)
	}
	if m.Now().Sub(l.Fetched) > m.TTL && m.refreshing.CompareAndSwap(false, true) {
		go func() {
			defer m.refreshing.Store(false)
			if _, err := m.Load(context.WithoutCancel(ctx)); err != nil {
				m.Log.WarnContext(ctx, m.What+" not refreshed; keeping the cached list", "err", err)
			}
		}()
	}
	return l, nil
}

// Lookup finds the pair of sym. A pair listed only the other way round is
// UNKNOWN_SYMBOL naming the inverse.
func (m *Markets[P]) Lookup(ctx context.Context, sym exgate.Symbol) (P, error) {
	var zero P
	l, err := m.Current(ctx)
	if err != nil {
		return zero, err
	}
	if p, ok := l.BySym[sym]; ok {
		return p, nil
	}
	if m.Now().Sub(l.Fetched) > m.MinRefresh {
		if l, err = m.Load(ctx); err != nil {
			return zero, err
		}
		if p, ok := l.BySym[sym]; ok {
			return p, nil
		}
	}
	if inv := sym.Inverse(); hasKey(l.BySym, inv) {
		return zero, exgate.Errorf(exgate.CodeUnknownSymbol,
			"%s does not list %s; it lists the inverse pair %s (asset1 %s, asset2 %s)", m.Exchange, sym, inv, inv.Base, inv.Quote)
	}
	return zero, exgate.Errorf(exgate.CodeUnknownSymbol, "%s does not list %s", m.Exchange, sym)
}

// ByID finds a pair by the exchange's id, for orders and fills listed
// across pairs; found is false when the cached list does not hold it.
func (m *Markets[P]) ByID(ctx context.Context, id string) (p P, found bool, err error) {
	l, err := m.Current(ctx)
	if err != nil {
		return p, false, err
	}
	p, found = l.ByID[id]
	return p, found, nil
}

func hasKey[K comparable, V any](m map[K]V, k K) bool {
	_, ok := m[k]
	return ok
}

// Symbols lists the pairs as the gateway lists them (docs/contract.md
// 2.4), sorted; of sym only when it is set (none when the exchange does
// not list it that way round), after a reload when the list is too old to
// know a new listing.
func (m *Markets[P]) Symbols(ctx context.Context, sym exgate.Symbol, info func(P) exgate.SymbolInfo) ([]exgate.SymbolInfo, error) {
	out := []exgate.SymbolInfo{}
	if (sym != exgate.Symbol{}) {
		p, err := m.Lookup(ctx, sym)
		switch {
		case exgate.ErrorCode(err) == exgate.CodeUnknownSymbol:
			return out, nil
		case err != nil:
			return nil, err
		}
		return append(out, info(p)), nil
	}
	l, err := m.Current(ctx)
	if err != nil {
		return nil, err
	}
	for _, p := range l.BySym {
		out = append(out, info(p))
	}
	exgate.SortSymbols(out)
	return out, nil
}
