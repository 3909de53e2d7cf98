package kraken

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

// assetInfo is one row of GET /0/public/Assets.
type assetInfo struct {
	Aclass   string `json:"aclass"`
	Altname  string `json:"altname"`
	Decimals int    `json:"decimals"`
	Status   string `json:"status"`
}

// pairInfo is one row of GET /0/public/AssetPairs.
type pairInfo struct {
	Altname      string       `json:"altname"`
	Wsname       string       `json:"wsname"`
	Base         string       `json:"base"`
	Quote        string       `json:"quote"`
	LotDecimals  *int32       `json:"lot_decimals"`
	CostDecimals *int32       `json:"cost_decimals"`
	PairDecimals *int32       `json:"pair_decimals"`
	OrderMin     rest.Decimal `json:"ordermin"`
	CostMin      rest.Decimal `json:"costmin"`
	TickSize     rest.Decimal `json:"tick_size"`
	Status       string       `json:"status"`
}

// market is a Kraken pair with its trading rules.
type market struct {
	key, altname, wsname string
	baseID, quoteID      string
	symbol               exgate.Symbol
	lotDecimals          int32
	costDecimals         int32
	pairDecimals         int32
	orderMin, costMin    decimal.Decimal
	// tick is the price step: tick_size, or 10^-pair_decimals where a
	// row has none.
	tick decimal.Decimal
	// status is online, cancel_only, post_only, limit_only or
	// reduce_only; a missing status is online.
	status string
}

// markets is Kraken's asset and pair metadata, immutable once built.
type markets struct {
	// commonByName maps Kraken asset ids and altnames to common codes.
	commonByName map[string]string
	// idByCommon maps common codes to Kraken asset ids.
	idByCommon map[string]string
	// decimalsByID is each asset's ledger precision.
	decimalsByID map[string]int32
	bySymbol     map[exgate.Symbol]*market
	// byName maps pair keys, altnames and wsnames to pairs.
	byName   map[string]*market
	loadedAt time.Time
}

// buildMarkets builds the name tables from the Assets and AssetPairs
// results.
func buildMarkets(assets map[string]assetInfo, pairs map[string]pairInfo, loadedAt time.Time) *markets {
	m := &markets{
		commonByName: make(map[string]string),
		idByCommon:   make(map[string]string),
		decimalsByID: make(map[string]int32),
		bySymbol:     make(map[exgate.Symbol]*market),
		byName:       make(map[string]*market),
		loadedAt:     loadedAt,
	}
	ids := make([]string, 0, len(assets))
	for id := range assets {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		alt := assets[id].Altname
		if alt == "" {
			alt = id
		}
		common := commonAsset(alt)
		m.commonByName[id] = common
		m.decimalsByID[id] = int32(assets[id].Decimals)
		if !isSuffixedBalance(id) {
			if _, taken := m.idByCommon[common]; !taken {
				m.idByCommon[common] = id
			}
		}
	}
	// Altnames resolve too, unless an altname is another asset's id.
	for _, id := range ids {
		alt := assets[id].Altname
		if _, isID := assets[alt]; alt != "" && !isID {
			m.commonByName[alt] = m.commonByName[id]
		}
	}
	keys := make([]string, 0, len(pairs))
	for k := range pairs {
		keys = append(keys, k)
	}
	// Plain keys before keys with a dot (dark-pool ".d" pairs), then by name.
	slices.SortFunc(keys, func(a, b string) int {
		da, db := strings.Contains(a, "."), strings.Contains(b, ".")
		if da != db {
			if da {
				return 1
			}
			return -1
		}
		return strings.Compare(a, b)
	})
	for _, k := range keys {
		if strings.HasSuffix(k, ".d") {
			continue
		}
		p := pairs[k]
		mk := &market{
			key: k, altname: p.Altname, wsname: p.Wsname,
			baseID: p.Base, quoteID: p.Quote,
			symbol:       exgate.Symbol{Base: m.common(p.Base), Quote: m.common(p.Quote)},
			lotDecimals:  intOr(p.LotDecimals, 8),
			costDecimals: intOr(p.CostDecimals, 8),
			pairDecimals: intOr(p.PairDecimals, 8),
			orderMin:     p.OrderMin.Decimal,
			costMin:      p.CostMin.Decimal,
			tick:         p.TickSize.Decimal,
			status:       p.Status,
		}
		if !mk.tick.IsPositive() {
			mk.tick = decimal.New(1, -mk.pairDecimals)
		}
		if mk.status == "" {
			mk.status = "online"
		}
		if _, dup := m.bySymbol[mk.symbol]; !dup {
			m.bySymbol[mk.symbol] = mk
		}
		for _, name := range []string{k, p.Altname, p.Wsname} {
			if _, dup := m.byName[name]; name != "" && !dup {
				m.byName[name] = mk
			}
		}
	}
	return m
}

func intOr(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}

// common returns the common code of a Kraken asset id or altname: from
// the Assets table, else the fixed legacy table, else the name unchanged
// (never a prefix rule).
func (m *markets) common(name string) string {
	if c, ok := m.commonByName[name]; ok {
		return c
	}
	if c, ok := legacyAssetIDs[name]; ok {
		return c
	}
	return commonAsset(name)
}

// assetID returns the Kraken asset id of a common code.
func (m *markets) assetID(common string) (string, bool) {
	id, ok := m.idByCommon[common]
	return id, ok
}

// market returns the pair of sym, or UNKNOWN_SYMBOL (naming the inverse
// pair when only that one is listed).
func (m *markets) market(sym exgate.Symbol) (*market, error) {
	if mk, ok := m.bySymbol[sym]; ok {
		return mk, nil
	}
	if _, ok := m.bySymbol[sym.Inverse()]; ok {
		return nil, exgate.Errorf(exgate.CodeUnknownSymbol, "Kraken does not list %s; the inverse pair %s is listed", sym, sym.Inverse())
	}
	return nil, exgate.Errorf(exgate.CodeUnknownSymbol, "Kraken does not list %s", sym)
}

// marketsTTL is how long loaded metadata is used before it is reloaded.
const defaultMarketsTTL = time.Hour

// loadMarkets returns the cached metadata, loading it on first use and
// reloading it when older than the TTL (one load in flight at a time,
// shared by all callers). A failed reload keeps the old metadata.
func (e *Exchange) loadMarkets(ctx context.Context) (*markets, error) {
	e.mu.Lock()
	cur := e.markets
	e.mu.Unlock()
	if cur != nil && e.now().Sub(cur.loadedAt) < e.marketsTTL {
		return cur, nil
	}
	ch := e.flight.DoChan("markets", func() (any, error) {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		m, err := e.fetchMarkets(lctx)
		if err != nil {
			return nil, err
		}
		e.mu.Lock()
		e.markets = m
		e.mu.Unlock()
		return m, nil
	})
	m, err := rest.Await[*markets](ctx, ch, "kraken market metadata")
	if err != nil && cur != nil {
		e.log.WarnContext(ctx, "kraken: reloading markets failed; using the previous ones", "err", err)
		return cur, nil
	}
	return m, err
}

// fetchMarkets reads Assets and AssetPairs.
func (e *Exchange) fetchMarkets(ctx context.Context) (*markets, error) {
	var assets map[string]assetInfo
	if err := e.c.public(ctx, "Assets", nil, &assets); err != nil {
		return nil, fmt.Errorf("kraken: load assets: %w", err)
	}
	var pairs map[string]pairInfo
	if err := e.c.public(ctx, "AssetPairs", nil, &pairs); err != nil {
		return nil, fmt.Errorf("kraken: load asset pairs: %w", err)
	}
	if len(assets) == 0 || len(pairs) == 0 {
		return nil, &exgate.Error{Code: exgate.CodeExchangeError, Detail: "Kraken returned no assets or pairs", Err: errors.New("empty metadata")}
	}
	return buildMarkets(assets, pairs, e.now()), nil
}

// parseAssetPairs decodes an AssetPairs result (for tests and fuzzing).
func parseAssetPairs(raw []byte) (map[string]pairInfo, error) {
	var pairs map[string]pairInfo
	if err := json.Unmarshal(raw, &pairs); err != nil {
		return nil, err
	}
	return pairs, nil
}

// Symbols lists Kraken's pairs (AssetPairs, cached) with their rules:
// quantityStep 10^-lot_decimals, priceStep tick_size, minQuantity
// ordermin (base), minNotional costmin (quote). A pair given the other way
// round is not listed: the answer is empty.
func (e *Exchange) Symbols(ctx context.Context, _ exgate.Credential, f exgate.SymbolFilter) ([]exgate.SymbolInfo, error) {
	m, err := e.loadMarkets(ctx)
	if err != nil {
		return nil, err
	}
	out := []exgate.SymbolInfo{}
	for sym, mk := range m.bySymbol {
		if (f.Symbol != exgate.Symbol{} && f.Symbol != sym) {
			continue
		}
		out = append(out, mk.info())
	}
	exgate.SortSymbols(out)
	return out, nil
}

// info is the market as a SymbolInfo.
func (mk *market) info() exgate.SymbolInfo {
	st, ok := pairStates[mk.status]
	if !ok {
		st = pairStates["cancel_only"]
	}
	return exgate.SymbolInfo{
		Asset1: mk.symbol.Base, Asset2: mk.symbol.Quote, Status: st.status,
		QuantityStep: decimal.New(1, -mk.lotDecimals).String(),
		PriceStep:    mk.tick.String(),
		MinQuantity:  mk.orderMin.String(),
		MinNotional:  mk.costMin.String(),
		OrderTypes:   slices.Clone(st.types),
	}
}
