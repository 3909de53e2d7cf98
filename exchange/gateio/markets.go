package gateio

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"

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

// newMarkets caches Gate's currency pairs (rest.Markets): loaded on first
// use, refreshed in the background once older than ttl, reloaded at once
// for a pair it does not hold when older than a minute.
func newMarkets(c *client, ttl time.Duration) *rest.Markets[*pair] {
	return &rest.Markets[*pair]{
		Exchange: "gateio", What: "gateio currency pairs", TTL: ttl, MinRefresh: time.Minute, Now: c.Now, Log: c.Log,
		Key: func(p *pair) (exgate.Symbol, string) { return p.sym, p.id },
		Fetch: func(ctx context.Context) ([]*pair, error) {
			rows, err := rest.Fetch(ctx, c.do, request{ep: epPairs}, parsePairs)
			if err != nil {
				return nil, err
			}
			out := make([]*pair, 0, len(rows))
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
				out = append(out, p)
			}
			return out, nil
		},
	}
}

// pairByID finds a pair by Gate's id (BTC_USDT), for orders and fills
// listed across pairs. A pair missing from the cached list (a new listing)
// gets its symbol from the id and no rules.
func (e *Exchange) pairByID(ctx context.Context, id string) (*pair, error) {
	p, found, err := e.markets.ByID(ctx, id)
	if err != nil || found {
		return p, err
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
	return e.markets.Symbols(ctx, f.Symbol, (*pair).info)
}
