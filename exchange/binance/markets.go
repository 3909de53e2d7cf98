package binance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/shopspring/decimal"
	"golang.org/x/sync/singleflight"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

// market is what the adapter needs of one exchangeInfo symbol.
type market struct {
	symbol         string // BTCUSDT
	pair           exgate.Symbol
	status         string
	basePrecision  int32
	quotePrecision int32
	marketAllowed  bool
	// quoteOrderAllowed is quoteOrderQtyMarketAllowed: MARKET orders may
	// be sized in the quote asset.
	quoteOrderAllowed bool

	// Quantity rules for MARKET orders: LOT_SIZE and MARKET_LOT_SIZE
	// together (a zero step or limit is no constraint).
	lotStep, mktStep decimal.Decimal
	minQty, maxQty   decimal.Decimal

	// minNotional applies to MARKET orders only when applyMin is set
	// (MIN_NOTIONAL applyToMarket, NOTIONAL applyMinToMarket).
	minNotional decimal.Decimal
	applyMin    bool
	notionalBy  string // the filter the minimum comes from

	// Rules for LIMIT orders: PRICE_FILTER's tickSize, LOT_SIZE alone
	// (MARKET_LOT_SIZE is for MARKET orders only) and the notional
	// minimum whatever its apply-to-market flag (filters.md).
	tick                  decimal.Decimal
	limitMin, limitMax    decimal.Decimal
	limitNotional         decimal.Decimal
	limitNotionalBy       string
	orderTypes            []string
	limitAllowed, makerOK bool
}

// marketSet is one load of exchangeInfo.
type marketSet struct {
	byPair map[exgate.Symbol]*market
	// bySymbol finds a market by Binance's symbol (BTCUSDT), for answers
	// that name only that.
	bySymbol map[string]*market
	limits   rateLimits
	fetched  time.Time
}

// markets caches exchangeInfo for all requests: loaded on first use,
// refreshed in the background once older than ttl, one fetch at a time.
type markets struct {
	c   *client
	ttl time.Duration
	// cache, when not nil, holds the last exchangeInfo answer for other
	// instances under cacheKey (which names the base URL: the testnet's
	// markets are not the exchange's).
	cache    MetadataCache
	cacheKey string
	cur      atomic.Pointer[marketSet]
	group    singleflight.Group
	// nextTry (unix ms) spaces background refreshes, so that a failing
	// exchangeInfo is not asked again by every request.
	nextTry atomic.Int64
}

// get returns the current markets, loading them if there are none yet and
// starting a background refresh when they are stale.
func (m *markets) get(ctx context.Context) (*marketSet, error) {
	if set := m.cur.Load(); set != nil {
		if now := m.c.Now(); now.Sub(set.fetched) > m.ttl && startRefresh(&m.nextTry, now) {
			go m.load(context.WithoutCancel(ctx), set) //nolint:errcheck // logged in load
		}
		return set, nil
	}
	return m.load(ctx, nil)
}

// refreshSpacing is the least time between two background refreshes.
const refreshSpacing = time.Minute

// startRefresh reports whether a background refresh may start now, and if
// so holds the next one back for refreshSpacing.
func startRefresh(nextTry *atomic.Int64, now time.Time) bool {
	next := nextTry.Load()
	if now.UnixMilli() < next {
		return false
	}
	return nextTry.CompareAndSwap(next, now.Add(refreshSpacing).UnixMilli())
}

// load fetches exchangeInfo once for every concurrent caller; a caller
// whose ctx ends stops waiting but not the fetch. seen is the set the
// caller found stale (nil: none); if another fetch has replaced it in the
// meantime, that one is used.
func (m *markets) load(ctx context.Context, seen *marketSet) (*marketSet, error) {
	ch := m.group.DoChan("exchangeInfo", func() (any, error) {
		if cur := m.cur.Load(); cur != seen {
			return cur, nil
		}
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if set := m.fromCache(fctx, seen); set != nil {
			m.c.limits.Store(&set.limits)
			m.cur.Store(set)
			return set, nil
		}
		body, err := m.c.do(fctx, request{ep: epExchangeInfo, params: rest.Params{{"permissions", "SPOT"}}})
		if err != nil {
			m.c.Log.ErrorContext(fctx, "binance exchangeInfo load failed", "err", err)
			return nil, err
		}
		set, err := parseExchangeInfo(body)
		if err != nil {
			m.c.Log.ErrorContext(fctx, "binance exchangeInfo unreadable", "err", err)
			return nil, badAnswer(epExchangeInfo, err)
		}
		set.fetched = m.c.Now()
		m.c.limits.Store(&set.limits)
		m.cur.Store(set)
		m.toCache(fctx, set.fetched, body)
		return set, nil
	})
	return rest.Await[*marketSet](ctx, ch, "binance market list")
}

// MetadataCache holds byte values for a time, shared by instances; the
// redis package's Cache implements it.
type MetadataCache interface {
	// Get returns key's value, or an error (wrapping exgate.ErrNotFound
	// when there is none).
	Get(ctx context.Context, key string) ([]byte, error)
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
}

// fromCache returns the markets another instance fetched, if the cache
// holds an answer newer than seen's and younger than the ttl; nil
// otherwise. The cache is only a saving: when it fails, exchangeInfo is
// fetched.
func (m *markets) fromCache(ctx context.Context, seen *marketSet) *marketSet {
	if m.cache == nil {
		return nil
	}
	v, err := m.cache.Get(ctx, m.cacheKey)
	if err != nil {
		if !errors.Is(err, exgate.ErrNotFound) {
			m.c.Log.WarnContext(ctx, "binance exchangeInfo cache unavailable; fetching", "err", err)
		}
		return nil
	}
	// The value is the fetch time in Unix milliseconds, a newline, and
	// the answer as Binance sent it.
	stamp, body, ok := bytes.Cut(v, []byte{'\n'})
	ms, err := strconv.ParseInt(string(stamp), 10, 64)
	if !ok || err != nil {
		m.c.Log.WarnContext(ctx, "binance exchangeInfo cache entry unreadable; fetching")
		return nil
	}
	fetched := time.UnixMilli(ms)
	if m.c.Now().Sub(fetched) > m.ttl || (seen != nil && !fetched.After(seen.fetched)) {
		return nil
	}
	set, err := parseExchangeInfo(body)
	if err != nil {
		m.c.Log.WarnContext(ctx, "binance exchangeInfo cache entry unreadable; fetching", "err", err)
		return nil
	}
	set.fetched = fetched
	return set
}

// toCache shares an answer just fetched with the other instances.
func (m *markets) toCache(ctx context.Context, fetched time.Time, body []byte) {
	if m.cache == nil {
		return
	}
	v := make([]byte, 0, len(body)+20)
	v = strconv.AppendInt(v, fetched.UnixMilli(), 10)
	v = append(v, '\n')
	v = append(v, body...)
	if err := m.cache.Set(ctx, m.cacheKey, v, m.ttl); err != nil {
		m.c.Log.WarnContext(ctx, "binance exchangeInfo not shared through the cache", "err", err)
	}
}

// lookup finds the market of sym, or UNKNOWN_SYMBOL naming the inverse
// pair when only that one is listed.
func (m *markets) lookup(ctx context.Context, sym exgate.Symbol) (*market, error) {
	set, err := m.get(ctx)
	if err != nil {
		return nil, err
	}
	if mk, ok := set.byPair[sym]; ok {
		return mk, nil
	}
	if _, ok := set.byPair[sym.Inverse()]; ok {
		return nil, &exgate.Error{Code: exgate.CodeUnknownSymbol, Param: "asset1",
			Detail: fmt.Sprintf("%s is not listed on binance; the inverse pair %s is (asset1=%s, asset2=%s)", sym, sym.Inverse(), sym.Quote, sym.Base)}
	}
	return nil, &exgate.Error{Code: exgate.CodeUnknownSymbol, Param: "asset1", Detail: fmt.Sprintf("%s is not listed on binance", sym)}
}

// exchangeInfo is the part of GET /api/v3/exchangeInfo the adapter reads.
type exchangeInfo struct {
	RateLimits []struct {
		RateLimitType string `json:"rateLimitType"`
		Interval      string `json:"interval"`
		IntervalNum   int    `json:"intervalNum"`
		Limit         int    `json:"limit"`
	} `json:"rateLimits"`
	Symbols []struct {
		Symbol                     string       `json:"symbol"`
		Status                     string       `json:"status"`
		BaseAsset                  string       `json:"baseAsset"`
		BaseAssetPrecision         int32        `json:"baseAssetPrecision"`
		QuoteAsset                 string       `json:"quoteAsset"`
		QuoteAssetPrecision        int32        `json:"quoteAssetPrecision"`
		OrderTypes                 []string     `json:"orderTypes"`
		QuoteOrderQtyMarketAllowed bool         `json:"quoteOrderQtyMarketAllowed"`
		Filters                    []filterJSON `json:"filters"`
	} `json:"symbols"`
}

// filterJSON holds the fields of the filters the adapter applies.
// Source: binance-spot-api-docs filters.md.
type filterJSON struct {
	FilterType       string `json:"filterType"`
	MinQty           string `json:"minQty"`
	MaxQty           string `json:"maxQty"`
	StepSize         string `json:"stepSize"`
	MinNotional      string `json:"minNotional"`
	TickSize         string `json:"tickSize"`
	ApplyToMarket    *bool  `json:"applyToMarket"`
	ApplyMinToMarket *bool  `json:"applyMinToMarket"`
}

var intervalUnits = map[string]time.Duration{"SECOND": time.Second, "MINUTE": time.Minute, "HOUR": time.Hour, "DAY": 24 * time.Hour}

// parseExchangeInfo reads an exchangeInfo answer.
func parseExchangeInfo(body []byte) (*marketSet, error) {
	var info exchangeInfo
	if err := json.Unmarshal(body, &info); err != nil {
		return nil, fmt.Errorf("exchangeInfo: %w", err)
	}
	set := &marketSet{byPair: make(map[exgate.Symbol]*market, len(info.Symbols)), bySymbol: make(map[string]*market, len(info.Symbols)), limits: defaultLimitSet}
	var ordersSet bool
	for _, rl := range info.RateLimits {
		unit, ok := intervalUnits[rl.Interval]
		if !ok || rl.IntervalNum <= 0 || rl.Limit <= 0 {
			continue
		}
		spec := limitSpec{limit: rl.Limit, window: unit * time.Duration(rl.IntervalNum)}
		switch rl.RateLimitType {
		case "REQUEST_WEIGHT":
			if spec.window == time.Minute || set.limits.weight.window != time.Minute {
				set.limits.weight = spec
			}
		case "ORDERS":
			if !ordersSet || spec.window < set.limits.ordersWin.window {
				set.limits.ordersWin, ordersSet = spec, true
			}
		}
	}
	for _, s := range info.Symbols {
		if s.Symbol == "" || s.BaseAsset == "" || s.QuoteAsset == "" {
			return nil, fmt.Errorf("exchangeInfo: symbol %q without assets", s.Symbol)
		}
		mk := &market{
			symbol:            s.Symbol,
			pair:              exgate.Symbol{Base: exgate.NormalizeAsset(s.BaseAsset), Quote: exgate.NormalizeAsset(s.QuoteAsset)},
			status:            s.Status,
			basePrecision:     s.BaseAssetPrecision,
			quotePrecision:    s.QuoteAssetPrecision,
			quoteOrderAllowed: s.QuoteOrderQtyMarketAllowed,
		}
		mk.orderTypes = s.OrderTypes
		for _, t := range s.OrderTypes {
			switch t {
			case "MARKET":
				mk.marketAllowed = true
			case "LIMIT":
				mk.limitAllowed = true
			case "LIMIT_MAKER":
				mk.makerOK = true
			}
		}
		if err := mk.applyFilters(s.Filters); err != nil {
			return nil, fmt.Errorf("exchangeInfo: %s: %w", s.Symbol, err)
		}
		set.byPair[mk.pair] = mk
		set.bySymbol[mk.symbol] = mk
	}
	return set, nil
}

// applyFilters reads LOT_SIZE, MARKET_LOT_SIZE, MIN_NOTIONAL and NOTIONAL.
// A MARKET order must pass both lot filters, so the minimum is the larger
// of the two and the maximum the smaller non-zero one.
func (mk *market) applyFilters(fs []filterJSON) error {
	for _, f := range fs {
		switch f.FilterType {
		case "LOT_SIZE", "MARKET_LOT_SIZE":
			minQty, err1 := optDecimal(f.MinQty)
			maxQty, err2 := optDecimal(f.MaxQty)
			step, err3 := optDecimal(f.StepSize)
			if err := firstErr(err1, err2, err3); err != nil {
				return fmt.Errorf("%s: %w", f.FilterType, err)
			}
			if f.FilterType == "LOT_SIZE" {
				mk.lotStep, mk.limitMin, mk.limitMax = step, minQty, maxQty
			} else {
				mk.mktStep = step
			}
			if minQty.GreaterThan(mk.minQty) {
				mk.minQty = minQty
			}
			if maxQty.IsPositive() && (mk.maxQty.IsZero() || maxQty.LessThan(mk.maxQty)) {
				mk.maxQty = maxQty
			}
		case "PRICE_FILTER":
			tick, err := optDecimal(f.TickSize)
			if err != nil {
				return fmt.Errorf("%s: %w", f.FilterType, err)
			}
			mk.tick = tick
		case "MIN_NOTIONAL", "NOTIONAL":
			n, err := optDecimal(f.MinNotional)
			if err != nil {
				return fmt.Errorf("%s: %w", f.FilterType, err)
			}
			if n.GreaterThan(mk.limitNotional) {
				mk.limitNotional, mk.limitNotionalBy = n, f.FilterType
			}
			apply := f.ApplyToMarket
			if f.FilterType == "NOTIONAL" {
				apply = f.ApplyMinToMarket
			}
			if apply != nil && *apply && n.GreaterThan(mk.minNotional) {
				mk.minNotional, mk.applyMin, mk.notionalBy = n, true, f.FilterType
			}
		}
	}
	return nil
}

// optDecimal parses an optional decimal string ("" is zero).
func optDecimal(s string) (decimal.Decimal, error) {
	if s == "" {
		return decimal.Zero, nil
	}
	d, err := exgate.ParseDecimal(s)
	if err != nil {
		return decimal.Zero, fmt.Errorf("bad decimal %q", s)
	}
	if d.IsNegative() {
		return decimal.Zero, fmt.Errorf("negative decimal %q", s)
	}
	return d, nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// roundBase rounds a base quantity down to both lot steps.
func (mk *market) roundBase(q decimal.Decimal) decimal.Decimal {
	q = roundDownStep(q, mk.lotStep)
	return roundDownStep(q, mk.mktStep)
}

// roundDownStep rounds q down to a multiple of step; a zero step leaves q.
func roundDownStep(q, step decimal.Decimal) decimal.Decimal {
	if !step.IsPositive() {
		return q
	}
	n, _ := q.QuoRem(step, 0) // exact integer quotient, truncated
	return n.Mul(step)
}

// Symbols lists the markets of exchangeInfo (cached, see markets): the
// steps are PRICE_FILTER tickSize and LOT_SIZE stepSize, the minimums
// LOT_SIZE minQty and the NOTIONAL (or MIN_NOTIONAL) minNotional a LIMIT
// order must meet. A symbol in any status but TRADING (BREAK, HALT,
// END_OF_DAY, CANCEL_ONLY; enums.md "Symbol status") is HALTED.
func (e *Exchange) Symbols(ctx context.Context, cred exgate.Credential, f exgate.SymbolFilter) ([]exgate.SymbolInfo, error) {
	set, err := e.markets.get(ctx)
	if err != nil {
		return nil, err
	}
	out := []exgate.SymbolInfo{}
	if (f.Symbol != exgate.Symbol{}) {
		if mk, ok := set.byPair[f.Symbol]; ok {
			out = append(out, mk.info())
		}
		return out, nil
	}
	for _, mk := range set.byPair {
		out = append(out, mk.info())
	}
	exgate.SortSymbols(out)
	return out, nil
}

// info is the market as GET /v1/market/symbols shows it.
func (mk *market) info() exgate.SymbolInfo {
	status := exgate.SymbolHalted
	if mk.status == "TRADING" {
		status = exgate.SymbolTrading
	}
	types := []string{}
	if mk.marketAllowed {
		types = append(types, exgate.OrderTypeMarket)
	}
	if mk.limitAllowed {
		types = append(types, exgate.OrderTypeLimit)
	}
	return exgate.SymbolInfo{
		Asset1: mk.pair.Base, Asset2: mk.pair.Quote, Status: status,
		QuantityStep: mk.lotStep.String(), PriceStep: mk.tick.String(),
		MinQuantity: mk.limitMin.String(), MinNotional: mk.limitNotional.String(),
		OrderTypes: types,
	}
}
