package bybit

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/shopspring/decimal"
	"golang.org/x/sync/singleflight"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

// pair is one of Bybit's spot instruments with the rules the adapter
// checks before sending an order. Source:
// https://bybit-exchange.github.io/docs/v5/market/instrument (spot:
// lotSizeFilter.basePrecision is the step of base quantities,
// quotePrecision that of quote amounts, minOrderAmt the smallest order
// value in quote, maxLimitOrderQty and maxMarketOrderQty the largest base
// quantities; priceFilter.tickSize the price step; minOrderQty is
// deprecated and no longer checked).
type pair struct {
	id  string // BTCUSDT
	sym exgate.Symbol
	// baseStep, quoteStep and tick are the steps of base quantities,
	// quote amounts and prices.
	baseStep, quoteStep, tick decimal.Decimal
	// minAmt is the smallest order value in quote; maxLimit and
	// maxMarket the largest base quantities (zero: no limit).
	minAmt, maxLimit, maxMarket decimal.Decimal
	status                      string
}

// roundBase rounds a base quantity down to the base step.
func (p *pair) roundBase(d decimal.Decimal) decimal.Decimal { return roundDown(d, p.baseStep) }

// roundQuote rounds a quote amount down to the quote step.
func (p *pair) roundQuote(d decimal.Decimal) decimal.Decimal { return roundDown(d, p.quoteStep) }

// roundDown rounds d down to a multiple of step.
func roundDown(d, step decimal.Decimal) decimal.Decimal {
	if !step.IsPositive() {
		return d
	}
	return d.Div(step).Floor().Mul(step)
}

// trading reports whether the instrument takes orders (status Trading;
// spot has no other status in the docs, a pre-listing one is halted).
func (p *pair) trading() bool { return p.status == "Trading" }

// info is the pair as the gateway lists it (docs/contract.md 2.4):
// quantityStep basePrecision, priceStep tickSize, minNotional minOrderAmt,
// minQuantity the base step (Bybit checks no minimum base quantity since
// minOrderQty was deprecated; the notional minimum is what binds).
func (p *pair) info() exgate.SymbolInfo {
	status := exgate.SymbolHalted
	if p.trading() {
		status = exgate.SymbolTrading
	}
	return exgate.SymbolInfo{
		Asset1: p.sym.Base, Asset2: p.sym.Quote, Status: status,
		QuantityStep: p.baseStep.String(), PriceStep: p.tick.String(),
		MinQuantity: p.baseStep.String(), MinNotional: p.minAmt.String(),
		OrderTypes: []string{exgate.OrderTypeMarket, exgate.OrderTypeLimit},
	}
}

// pairOf reads one instrument; a zero quote step (not sent) is the tick.
func pairOf(r instrumentJSON) *pair {
	lf := r.LotSizeFilter
	p := &pair{
		id:        r.Symbol,
		sym:       exgate.Symbol{Base: exgate.NormalizeAsset(r.BaseCoin), Quote: exgate.NormalizeAsset(r.QuoteCoin)},
		baseStep:  lf.BasePrecision.Decimal,
		quoteStep: lf.QuotePrecision.Decimal,
		tick:      r.PriceFilter.TickSize.Decimal,
		minAmt:    lf.MinOrderAmt.Decimal,
		maxLimit:  lf.MaxLimitOrderQty.Decimal,
		maxMarket: lf.MaxMarketOrderQty.Decimal,
		status:    r.Status,
	}
	if !p.quoteStep.IsPositive() {
		p.quoteStep = p.tick
	}
	return p
}

// pairSet is one fetch of the instrument list.
type pairSet struct {
	bySym   map[exgate.Symbol]*pair
	byID    map[string]*pair
	fetched time.Time
}

// markets caches the spot instrument list, shared by all requests and
// credentials: loaded on first use, refreshed in the background once older
// than ttl, reloaded at once when a pair is not found and the list is
// older than minRefresh (a new listing).
type markets struct {
	c          *client
	ttl        time.Duration
	minRefresh time.Duration
	set        atomic.Pointer[pairSet]
	group      singleflight.Group
	refreshing atomic.Bool
}

// load fetches the instrument list (one fetch in flight at a time). Spot
// instruments come in one page: limit and cursor do not apply to spot.
func (m *markets) load(ctx context.Context) (*pairSet, error) {
	ch := m.group.DoChan("instruments", func() (any, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		var ps rest.Params
		ps.Add("category", "spot")
		rows, err := rest.Fetch(ctx, m.c.do, request{ep: epInstruments, params: ps}, parseInstruments)
		if err != nil {
			return nil, err
		}
		set := &pairSet{bySym: make(map[exgate.Symbol]*pair, len(rows)), byID: make(map[string]*pair, len(rows)), fetched: m.c.Now()}
		for _, r := range rows {
			p := pairOf(r)
			set.bySym[p.sym] = p
			set.byID[p.id] = p
		}
		m.set.Store(set)
		return set, nil
	})
	return rest.Await[*pairSet](ctx, ch, "bybit instruments")
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
				m.c.Log.WarnContext(ctx, "bybit instruments not refreshed; keeping the cached list", "err", err)
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
			"bybit does not list %s; it lists the inverse pair %s (asset1 %s, asset2 %s)", sym, inv.sym, inv.sym.Base, inv.sym.Quote)
	}
	return nil, exgate.Errorf(exgate.CodeUnknownSymbol, "bybit does not list %s", sym)
}

// byID finds a pair by Bybit's symbol (BTCUSDT), for orders and fills
// listed across pairs; nil when the cached list does not hold it.
func (m *markets) byID(ctx context.Context, id string) (*pair, error) {
	set, err := m.current(ctx)
	if err != nil {
		return nil, err
	}
	return set.byID[id], nil
}

// Symbols lists Bybit's spot instruments (GET /v5/market/instruments-info
// category=spot, cached) with their steps and minimums; of f.Symbol only
// when it is set (none when Bybit does not list it that way round).
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
