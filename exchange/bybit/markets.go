package bybit

import (
	"context"
	"time"

	"github.com/shopspring/decimal"

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

// newMarkets caches Bybit's spot instrument list (rest.Markets): loaded on
// first use, refreshed in the background once older than ttl, reloaded at
// once for a pair it does not hold when older than a minute. Spot
// instruments come in one page: limit and cursor do not apply to spot.
func newMarkets(c *client, ttl time.Duration) *rest.Markets[*pair] {
	return &rest.Markets[*pair]{
		Exchange: "bybit", What: "bybit instruments", TTL: ttl, MinRefresh: time.Minute, Now: c.Now, Log: c.Log,
		Key: func(p *pair) (exgate.Symbol, string) { return p.sym, p.id },
		Fetch: func(ctx context.Context) ([]*pair, error) {
			var ps rest.Params
			ps.Add("category", "spot")
			rows, err := rest.Fetch(ctx, c.do, request{ep: epInstruments, params: ps}, parseInstruments)
			if err != nil {
				return nil, err
			}
			out := make([]*pair, 0, len(rows))
			for _, r := range rows {
				out = append(out, pairOf(r))
			}
			return out, nil
		},
	}
}

// pairByID finds a pair by Bybit's symbol (BTCUSDT), for orders and fills
// listed across pairs; nil when the cached list does not hold it.
func (e *Exchange) pairByID(ctx context.Context, id string) (*pair, error) {
	p, _, err := e.markets.ByID(ctx, id)
	return p, err
}

// Symbols lists Bybit's spot instruments (GET /v5/market/instruments-info
// category=spot, cached) with their steps and minimums; of f.Symbol only
// when it is set (none when Bybit does not list it that way round).
func (e *Exchange) Symbols(ctx context.Context, cred exgate.Credential, f exgate.SymbolFilter) ([]exgate.SymbolInfo, error) {
	return e.markets.Symbols(ctx, f.Symbol, (*pair).info)
}
