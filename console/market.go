package console

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/httpapi"
)

// MarketFeed is what the market page draws: klines and the order book of
// a pair on an exchange. PollingFeed reads them from the adapters on each
// call; a live feed (the stream hub of docs/contract.md 2.5) can take its
// place without the page changing.
type MarketFeed interface {
	Klines(ctx context.Context, exchange string, sym exgate.Symbol, iv exgate.Interval, limit int) ([]exgate.Kline, error)
	OrderBook(ctx context.Context, exchange string, sym exgate.Symbol, limit int) (exgate.OrderBook, error)
}

// PollingFeed reads market data from the exchange adapters
// (exgate.Exchange RecentKlines and OrderBook) on every call; the page
// polls it every two seconds. Market data is public: no credential is
// needed.
type PollingFeed struct {
	Exchanges map[string]exgate.Exchange
}

func (f PollingFeed) exchange(name string) (exgate.Exchange, error) {
	ex := f.Exchanges[name]
	if ex == nil {
		return nil, exgate.Errorf(exgate.CodeInvalidParameter, "exchange %q is not enabled on this gateway", name)
	}
	return ex, nil
}

// Klines implements MarketFeed.
func (f PollingFeed) Klines(ctx context.Context, exchange string, sym exgate.Symbol, iv exgate.Interval, limit int) ([]exgate.Kline, error) {
	ex, err := f.exchange(exchange)
	if err != nil {
		return nil, err
	}
	return ex.RecentKlines(ctx, exgate.Credential{Exchange: exchange}, exgate.KlineRequest{Symbol: sym, Interval: iv, Limit: limit})
}

// OrderBook implements MarketFeed.
func (f PollingFeed) OrderBook(ctx context.Context, exchange string, sym exgate.Symbol, limit int) (exgate.OrderBook, error) {
	ex, err := f.exchange(exchange)
	if err != nil {
		return exgate.OrderBook{}, err
	}
	return ex.OrderBook(ctx, exgate.Credential{Exchange: exchange}, exgate.OrderBookRequest{Symbol: sym, Limit: limit})
}

// DefaultSymbol is the market page's pair when none is asked for.
var DefaultSymbol = exgate.Symbol{Base: "BTC", Quote: "USDT"}

var assetCode = regexp.MustCompile(`^[A-Z0-9]{1,20}$`)

// defaultMarketExchange is the market page's exchange when the query
// names none: the simulated one, which needs no exchange key.
const defaultMarketExchange = "sim"

// marketQuery reads exchange, symbol (BASE/QUOTE) and interval.
type marketQuery struct {
	Exchange string
	Symbol   exgate.Symbol
	Interval exgate.Interval
	Err      string
}

func readMarketQuery(r *http.Request, exchanges map[string]exgate.Exchange) marketQuery {
	q := r.URL.Query()
	m := marketQuery{Exchange: strings.ToLower(q.Get("exchange")), Symbol: DefaultSymbol, Interval: exgate.Interval1m}
	if m.Exchange == "" {
		m.Exchange = defaultMarketExchange
	}
	if _, ok := exchanges[m.Exchange]; !ok {
		m.Err = "exchange " + m.Exchange + " is not enabled on this gateway"
	}
	if s := strings.ToUpper(strings.TrimSpace(q.Get("symbol"))); s != "" {
		base, quote, ok := strings.Cut(s, "/")
		if !ok || !assetCode.MatchString(base) || !assetCode.MatchString(quote) {
			m.Err = "symbol must be BASE/QUOTE, such as BTC/USDT"
		} else {
			m.Symbol = exgate.Symbol{Base: base, Quote: quote}
		}
	}
	if v := q.Get("interval"); v != "" {
		iv, err := exgate.ParseInterval(v)
		if err != nil {
			m.Err = err.Error()
		} else {
			m.Interval = iv
		}
	}
	return m
}

type marketData struct {
	Query     marketQuery
	Exchanges []string
	Intervals []string
	// Symbols are the exchange's pairs as BASE/QUOTE, offered in the
	// pair field; empty when the exchange cannot list them.
	Symbols []string
}

// symbolsTimeout bounds the market page's wait for the exchange's pairs.
const symbolsTimeout = 5 * time.Second

// listSymbols returns the exchange's pairs as BASE/QUOTE, or nil when it
// cannot list them (no SymbolLister, or an error: the page then goes on
// without the list).
func (h *Handler) listSymbols(ctx context.Context, exchange string) []string {
	sl, ok := exgate.Ability[exgate.SymbolLister](h.o.Exchanges[exchange])
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, symbolsTimeout)
	defer cancel()
	infos, err := sl.Symbols(ctx, exgate.Credential{Exchange: exchange}, exgate.SymbolFilter{})
	if err != nil {
		h.o.Logger.Warn("console: the exchange's pairs", "exchange", exchange, "err", err)
		return nil
	}
	out := make([]string, 0, len(infos))
	for _, in := range infos {
		out = append(out, exgate.Symbol{Base: in.Asset1, Quote: in.Asset2}.String())
	}
	return out
}

func (h *Handler) marketPage(w http.ResponseWriter, r *http.Request, s session) {
	m := readMarketQuery(r, h.o.Exchanges)
	var names []string
	for _, n := range h.o.ExchangeNames {
		if _, ok := h.o.Exchanges[n]; ok {
			names = append(names, n)
		}
	}
	status := http.StatusOK
	if m.Err != "" {
		status = http.StatusBadRequest
	}
	var symbols []string
	if m.Err == "" {
		symbols = h.listSymbols(r.Context(), m.Exchange)
		// A pair the exchange does not list is said once, here, with
		// the list to pick from: the page does not start polling it (a
		// refused read every 2 seconds). It is a page to choose from, not
		// a failed request.
		if len(symbols) > 0 && !slices.Contains(symbols, m.Symbol.String()) {
			m.Err = m.Symbol.String() + " is not listed on " + m.Exchange
			if slices.Contains(symbols, m.Symbol.Inverse().String()) {
				m.Err += " (it lists " + m.Symbol.Inverse().String() + ")"
			}
			m.Err += ": pick one of its " + strconv.Itoa(len(symbols)) + " pairs"
		}
	}
	h.render(w, r, status, "market", page{Title: "Market " + m.Symbol.String(), Nav: "market", CSRF: s.csrf, LoggedIn: true,
		Error: m.Err, Scripts: []string{"vendor/lightweight-charts.standalone.production.js", "market.js"},
		Data: marketData{Query: m, Exchanges: names, Intervals: []string{"1m", "5m", "15m", "1h", "4h", "1d"}, Symbols: symbols}})
}

// klines answers the market page's poll for candles: the API's own kline
// JSON (docs/contract.md 2.3), prices as exact decimal strings.
func (h *Handler) klines(w http.ResponseWriter, r *http.Request, _ session) {
	m := readMarketQuery(r, h.o.Exchanges)
	if m.Err != "" {
		writeProblem(w, http.StatusBadRequest, string(exgate.CodeInvalidParameter), m.Err)
		return
	}
	ks, err := h.feed.Klines(r.Context(), m.Exchange, m.Symbol, m.Interval, 200)
	if err != nil {
		h.apiError(w, err)
		return
	}
	writeJSON(w, ks)
}

// book answers the market page's poll for the order book (50 levels a
// side).
func (h *Handler) book(w http.ResponseWriter, r *http.Request, _ session) {
	m := readMarketQuery(r, h.o.Exchanges)
	if m.Err != "" {
		writeProblem(w, http.StatusBadRequest, string(exgate.CodeInvalidParameter), m.Err)
		return
	}
	b, err := h.feed.OrderBook(r.Context(), m.Exchange, m.Symbol, 50)
	if err != nil {
		h.apiError(w, err)
		return
	}
	writeJSON(w, b)
}

func (h *Handler) apiError(w http.ResponseWriter, err error) {
	if e, ok := errors.AsType[*exgate.Error](err); ok {
		writeProblem(w, httpapi.Status(e.Code), string(e.Code), e.Detail)
		return
	}
	h.o.Logger.Error("console: market data", "err", err)
	writeProblem(w, http.StatusBadGateway, string(exgate.CodeExchangeUnavailable), "the exchange did not answer")
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
