package okx

import (
	"context"
	"strings"
	"time"

	"github.com/shopspring/decimal"

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

// newMarkets caches OKX's SPOT instrument list (rest.Markets): loaded on
// first use, refreshed in the background once older than ttl, reloaded at
// once for a pair it does not hold when older than a minute.
func newMarkets(c *client, ttl time.Duration) *rest.Markets[*pair] {
	return &rest.Markets[*pair]{
		Exchange: "okx", What: "okx instruments", TTL: ttl, MinRefresh: time.Minute, Now: c.Now, Log: c.Log,
		Key: func(p *pair) (exgate.Symbol, string) { return p.sym, p.id },
		Fetch: func(ctx context.Context) ([]*pair, error) {
			var ps rest.Params
			ps.Add("instType", "SPOT")
			rows, err := rest.Fetch(ctx, c.do, request{ep: epInstruments, params: ps}, parseInstruments)
			if err != nil {
				return nil, err
			}
			out := make([]*pair, 0, len(rows))
			for _, r := range rows {
				if r.InstType != "" && r.InstType != "SPOT" {
					continue
				}
				out = append(out, &pair{
					id:       r.InstID,
					sym:      exgate.Symbol{Base: exgate.NormalizeAsset(r.BaseCcy), Quote: exgate.NormalizeAsset(r.QuoteCcy)},
					tick:     r.TickSz.Decimal,
					lot:      r.LotSz.Decimal,
					minSz:    r.MinSz.Decimal,
					maxLmtSz: r.MaxLmtSz.Decimal,
					state:    r.State,
				})
			}
			return out, nil
		},
	}
}

// pairByID finds a pair by OKX's instId (BTC-USDT), for orders and fills
// listed across pairs. An instrument missing from the cached list gets its
// symbol from the id and no rules.
func (e *Exchange) pairByID(ctx context.Context, id string) (*pair, error) {
	p, found, err := e.markets.ByID(ctx, id)
	if err != nil || found {
		return p, err
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
	return e.markets.Symbols(ctx, f.Symbol, (*pair).info)
}
