package gateio

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/shopspring/decimal"
	"golang.org/x/sync/singleflight"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

// pair is one of Gate's currency pairs with the rules the adapter checks
// before sending an order.
type pair struct {
	id  string // BTC_USDT
	sym exgate.Symbol
	// minBase and minQuote are the smallest order amounts in base and
	// quote; maxBase and maxQuote the largest (zero: no limit).
	minBase, minQuote, maxBase, maxQuote decimal.Decimal
	// amountPrecision is the number of decimals of base amounts,
	// precision that of prices, also used for the quote amount of market
	// buys.
	amountPrecision, precision int32
	// tradeStatus is untradable, buyable, sellable or tradable.
	tradeStatus string
	// buyStart and sellStart are when buying and selling open (ms, 0 =
	// no restriction).
	buyStart, sellStart int64
}

// roundBase rounds a base amount down to the pair's amount precision.
func (p *pair) roundBase(d decimal.Decimal) decimal.Decimal { return d.RoundDown(p.amountPrecision) }

// roundQuote rounds a quote amount down to the pair's price precision.
func (p *pair) roundQuote(d decimal.Decimal) decimal.Decimal { return d.RoundDown(p.precision) }

// canTrade says why side cannot be traded on the pair now, or "".
// Source: Gate API v4 docs, "CurrencyPair" trade_status (untradable,
// buyable, sellable, tradable), buy_start and sell_start.
func (p *pair) canTrade(side exgate.Side, now time.Time) string {
	switch p.tradeStatus {
	case "tradable":
	case "buyable":
		if side == exgate.SideSell {
			return "only buying is open (trade_status buyable)"
		}
	case "sellable":
		if side == exgate.SideBuy {
			return "only selling is open (trade_status sellable)"
		}
	default:
		return fmt.Sprintf("trading is closed (trade_status %s)", p.tradeStatus)
	}
	start := p.buyStart
	if side == exgate.SideSell {
		start = p.sellStart
	}
	if start > 0 && now.UnixMilli() < start {
		return fmt.Sprintf("%s opens at %s", map[exgate.Side]string{exgate.SideBuy: "buying", exgate.SideSell: "selling"}[side],
			time.UnixMilli(start).UTC().Format(time.RFC3339))
	}
	return ""
}

// pairSet is one fetch of the pair list.
type pairSet struct {
	bySym   map[exgate.Symbol]*pair
	byID    map[string]*pair
	fetched time.Time
}

// markets caches the pair list, shared by all requests and credentials.
// It is loaded on first use, refreshed in the background once older than
// ttl (one fetch in flight at a time), and reloaded at once when a pair is
// not found and the list is older than minRefresh (a new listing).
type markets struct {
	c          *client
	ttl        time.Duration
	minRefresh time.Duration
	set        atomic.Pointer[pairSet]
	group      singleflight.Group
	refreshing atomic.Bool
}

// load fetches the pair list (one fetch in flight at a time).
func (m *markets) load(ctx context.Context) (*pairSet, error) {
	ch := m.group.DoChan("pairs", func() (any, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		rows, err := rest.Fetch(ctx, m.c.do, request{ep: epPairs}, parsePairs)
		if err != nil {
			return nil, err
		}
		set := &pairSet{bySym: make(map[exgate.Symbol]*pair, len(rows)), byID: make(map[string]*pair, len(rows)), fetched: m.c.Now()}
		for _, r := range rows {
			p := &pair{
				id:              r.ID,
				sym:             exgate.Symbol{Base: exgate.NormalizeAsset(r.Base), Quote: exgate.NormalizeAsset(r.Quote)},
				minBase:         r.MinBaseAmount.Decimal,
				minQuote:        r.MinQuoteAmount.Decimal,
				maxBase:         r.MaxBaseAmount.Decimal,
				maxQuote:        r.MaxQuoteAmount.Decimal,
				amountPrecision: *r.AmountPrecision,
				precision:       *r.Precision,
				tradeStatus:     r.TradeStatus,
			}
			p.buyStart, _ = millis(r.BuyStart, 1000)
			p.sellStart, _ = millis(r.SellStart, 1000)
			set.bySym[p.sym] = p
			set.byID[p.id] = p
		}
		m.set.Store(set)
		return set, nil
	})
	return rest.Await[*pairSet](ctx, ch, "gateio currency pairs")
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
				m.c.Log.WarnContext(ctx, "gateio currency pairs not refreshed; keeping the cached list", "err", err)
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
			"gateio does not list %s; it lists the inverse pair %s (asset1 %s, asset2 %s)", sym, inv.sym, inv.sym.Base, inv.sym.Quote)
	}
	return nil, exgate.Errorf(exgate.CodeUnknownSymbol, "gateio does not list %s", sym)
}

// byID finds a pair by Gate's id (BTC_USDT), for orders and fills listed
// across pairs. A pair missing from the cached list (a new listing) gets
// its symbol from the id and no rules.
func (m *markets) byID(ctx context.Context, id string) (*pair, error) {
	set, err := m.current(ctx)
	if err != nil {
		return nil, err
	}
	if p, ok := set.byID[id]; ok {
		return p, nil
	}
	base, quote, _ := strings.Cut(id, "_")
	return &pair{id: id, sym: exgate.Symbol{Base: exgate.NormalizeAsset(base), Quote: exgate.NormalizeAsset(quote)}, amountPrecision: 8, precision: 8}, nil
}

// tick is the pair's price step, 10^-precision.
func (p *pair) tick() decimal.Decimal { return decimal.New(1, -p.precision) }

// step is the pair's quantity step, 10^-amount_precision.
func (p *pair) step() decimal.Decimal { return decimal.New(1, -p.amountPrecision) }

// info is the pair as the gateway lists it (docs/contract.md 2.4): steps from
// the precisions, minQuantity from min_base_amount (the step when Gate sets
// none), minNotional from min_quote_amount. Only trade_status tradable is
// TRADING; buyable, sellable and untradable are HALTED, since the pair
// does not take every order.
func (p *pair) info() exgate.SymbolInfo {
	status := exgate.SymbolHalted
	if p.tradeStatus == "tradable" {
		status = exgate.SymbolTrading
	}
	minQty := p.minBase
	if !minQty.IsPositive() {
		minQty = p.step()
	}
	return exgate.SymbolInfo{
		Asset1: p.sym.Base, Asset2: p.sym.Quote, Status: status,
		QuantityStep: p.step().String(), PriceStep: p.tick().String(),
		MinQuantity: minQty.String(), MinNotional: p.minQuote.String(),
		OrderTypes: []string{exgate.OrderTypeMarket, exgate.OrderTypeLimit},
	}
}

// Symbols lists Gate's currency pairs (GET /spot/currency_pairs, cached)
// with their steps and minimums; of f.Symbol only when it is set (none
// when Gate does not list it that way round).
func (e *Exchange) Symbols(ctx context.Context, cred exgate.Credential, f exgate.SymbolFilter) ([]exgate.SymbolInfo, error) {
	out := []exgate.SymbolInfo{}
	if (f.Symbol != exgate.Symbol{}) {
		// lookup reloads a list too old to know a new listing.
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
