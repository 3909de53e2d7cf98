package okx

import (
	"context"
	"strings"
	"sync/atomic"
	"time"

	"github.com/shopspring/decimal"
	"golang.org/x/sync/singleflight"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

// pair is one of OKX's SPOT instruments with the rules the adapter checks
// before sending an order. Source: OKX API v5 docs, "Get instruments"
// (https://www.okx.com/docs-v5/en/#public-data-rest-api-get-instruments):
// tickSz the price step, lotSz the size step (base), minSz the minimum
// order size (base), maxLmtSz the largest limit order (base), maxMktSz the
// largest market order (USDT for SPOT); there is no minimum notional.
type pair struct {
	id               string // BTC-USDT
	sym              exgate.Symbol
	tick, lot, minSz decimal.Decimal
	maxLmtSz         decimal.Decimal
	// state is live, suspend, preopen or test.
	state string
}

// roundBase rounds a base size down to the lot size.
func (p *pair) roundBase(d decimal.Decimal) decimal.Decimal { return roundDown(d, p.lot) }

// roundQuote rounds a quote amount (a market order's sz in quote_ccy) down
// to the decimals of the price step: OKX documents no separate step for
// it, and the quote currency is quoted at the tick's precision.
func (p *pair) roundQuote(d decimal.Decimal) decimal.Decimal {
	return d.RoundDown(max(-p.tick.Exponent(), 0))
}

// roundDown rounds d down to a multiple of step.
func roundDown(d, step decimal.Decimal) decimal.Decimal {
	if !step.IsPositive() {
		return d
	}
	return d.Div(step).Floor().Mul(step)
}

// canTrade says why the pair takes no order now, or "".
func (p *pair) canTrade() string {
	if p.state == "live" {
		return ""
	}
	return "the instrument's state is " + p.state
}

// info is the pair as the gateway lists it (docs/contract.md 2.4).
func (p *pair) info() exgate.SymbolInfo {
	status := exgate.SymbolHalted
	if p.state == "live" {
		status = exgate.SymbolTrading
	}
	minQty := p.minSz
	if !minQty.IsPositive() {
		minQty = p.lot
	}
	return exgate.SymbolInfo{
		Asset1: p.sym.Base, Asset2: p.sym.Quote, Status: status,
		QuantityStep: p.lot.String(), PriceStep: p.tick.String(),
		MinQuantity: minQty.String(), MinNotional: "0",
		OrderTypes: []string{exgate.OrderTypeMarket, exgate.OrderTypeLimit},
	}
}

// pairSet is one fetch of the instrument list.
type pairSet struct {
	bySym   map[exgate.Symbol]*pair
	byID    map[string]*pair
	fetched time.Time
}

// markets caches the SPOT instrument list, shared by every request and
// credential: loaded on first use, refreshed in the background once older
// than ttl, and reloaded at once when a pair is not found and the list is
// older than minRefresh (a new listing).
type markets struct {
	c          *client
	ttl        time.Duration
	minRefresh time.Duration
	set        atomic.Pointer[pairSet]
	group      singleflight.Group
	refreshing atomic.Bool
}

// load fetches the instrument list (one fetch in flight at a time).
func (m *markets) load(ctx context.Context) (*pairSet, error) {
	ch := m.group.DoChan("instruments", func() (any, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		var ps rest.Params
		ps.Add("instType", "SPOT")
		rows, err := rest.Fetch(ctx, m.c.do, request{ep: epInstruments, params: ps}, parseInstruments)
		if err != nil {
			return nil, err
		}
		set := &pairSet{bySym: make(map[exgate.Symbol]*pair, len(rows)), byID: make(map[string]*pair, len(rows)), fetched: m.c.Now()}
		for _, r := range rows {
			if r.InstType != "" && r.InstType != "SPOT" {
				continue
			}
			p := &pair{
				id:       r.InstID,
				sym:      exgate.Symbol{Base: exgate.NormalizeAsset(r.BaseCcy), Quote: exgate.NormalizeAsset(r.QuoteCcy)},
				tick:     r.TickSz.Decimal,
				lot:      r.LotSz.Decimal,
				minSz:    r.MinSz.Decimal,
				maxLmtSz: r.MaxLmtSz.Decimal,
				state:    r.State,
			}
			set.bySym[p.sym] = p
			set.byID[p.id] = p
		}
		m.set.Store(set)
		return set, nil
	})
	return rest.Await[*pairSet](ctx, ch, "okx instruments")
}

// current returns the cached list, loading it on first use and starting a
// background refresh when it is older than ttl.
func (m *markets) current(ctx context.Context) (*pairSet, error) {
	set := m.set.Load()
	if set == nil {
		return m.load(ctx)
	}
	if m.c.Now().Sub(set.fetched) > m.ttl && m.refreshing.CompareAndSwap(false, true) {
		go func() {
			defer m.refreshing.Store(false)
			if _, err := m.load(context.WithoutCancel(ctx)); err != nil {
				m.c.Log.WarnContext(ctx, "okx instruments not refreshed; keeping the cached list", "err", err)
			}
		}()
	}
	return set, nil
}

// lookup finds the pair of sym. A pair that exists only the other way
// round is UNKNOWN_SYMBOL naming the inverse.
func (m *markets) lookup(ctx context.Context, sym exgate.Symbol) (*pair, error) {
	set, err := m.current(ctx)
	if err != nil {
		return nil, err
	}
	if p, ok := set.bySym[sym]; ok {
		return p, nil
	}
	if m.c.Now().Sub(set.fetched) > m.minRefresh {
		if set, err = m.load(ctx); err != nil {
			return nil, err
		}
		if p, ok := set.bySym[sym]; ok {
			return p, nil
		}
	}
	if inv, ok := set.bySym[sym.Inverse()]; ok {
		return nil, exgate.Errorf(exgate.CodeUnknownSymbol,
			"okx does not list %s; it lists the inverse pair %s (asset1 %s, asset2 %s)", sym, inv.sym, inv.sym.Base, inv.sym.Quote)
	}
	return nil, exgate.Errorf(exgate.CodeUnknownSymbol, "okx does not list %s", sym)
}

// byID finds a pair by OKX's instId (BTC-USDT), for orders and fills
// listed across pairs. An instrument missing from the cached list gets its
// symbol from the id and no rules.
func (m *markets) byID(ctx context.Context, id string) (*pair, error) {
	set, err := m.current(ctx)
	if err != nil {
		return nil, err
	}
	if p, ok := set.byID[id]; ok {
		return p, nil
	}
	return unlisted(id), nil
}

// unlisted is the pair of an instId missing from the list: its symbol
// from the id, no rules.
func unlisted(id string) *pair {
	base, quote, _ := strings.Cut(id, "-")
	return &pair{id: id, sym: exgate.Symbol{Base: exgate.NormalizeAsset(base), Quote: exgate.NormalizeAsset(quote)}, state: "live"}
}

// Symbols lists OKX's SPOT instruments (cached) with their steps and
// minimums; of f.Symbol only when it is set (none when OKX does not list
// it that way round).
func (e *Exchange) Symbols(ctx context.Context, cred exgate.Credential, f exgate.SymbolFilter) ([]exgate.SymbolInfo, error) {
	out := []exgate.SymbolInfo{}
	if (f.Symbol != exgate.Symbol{}) {
		p, err := e.markets.lookup(ctx, f.Symbol)
		switch {
		case exgate.ErrorCode(err) == exgate.CodeUnknownSymbol:
			return out, nil
		case err != nil:
			return nil, err
		}
		return append(out, p.info()), nil
	}
	set, err := e.markets.current(ctx)
	if err != nil {
		return nil, err
	}
	for _, p := range set.bySym {
		out = append(out, p.info())
	}
	exgate.SortSymbols(out)
	return out, nil
}
