// Package risk is the gateway's pre-trade risk engine and kill switch
// (docs/contract.md 2.8, docs/risk.md): it checks an order or withdrawal
// against its client key's limits and halts before the journal records
// it, values amounts in USD from the exchange's order books (failing
// closed), and prepares the reservation that the store checks and makes
// atomically with the intent (exgate.RiskReservation). Limits and halts
// are read from the store at most every Poll, so a change made by
// `exgate risk` on any instance holds everywhere within a second.
package risk

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// Store is what the engine reads of the store.
type Store interface {
	AllRiskLimits(ctx context.Context) (map[string]exgate.RiskLimits, error)
	RiskHalts(ctx context.Context) ([]exgate.RiskHalt, error)
	RiskUsage(ctx context.Context, apiKey, day string) (exgate.RiskUsage, error)
}

// Options configures an Engine. Store is required.
type Options struct {
	Store  Store
	Logger *slog.Logger
	// Now is the clock; the UTC day of its reading is the day daily
	// figures count for. Default time.Now.
	Now func() time.Time
	// Poll is how long limits and halts read from the store are used
	// before they are read again, and the period of Run. Default 500 ms:
	// a change holds on every instance within a second.
	Poll time.Duration
	// Halted and Resumed, when set, hear from Run of each halt that
	// starts or ends (APIKey exgate.RiskHaltAll for the global one).
	Halted  func(h exgate.RiskHalt)
	Resumed func(apiKey string)
	// BookDepth is how many levels of the order book a market order's
	// expected price is walked over. Default 100.
	BookDepth int
	// Books, when set, is where the checks read the order books they
	// price from while Run runs: a live subscription held to the book of
	// each pair they price (the gateway's stream hub), kept BookHold
	// (default DefaultBookHold) after the last order that needed it.
	// Without it, or before a pair's subscription has a book, the books
	// are read from the exchange's REST API, one read per order.
	Books    LiveBooks
	BookHold time.Duration
}

// Engine checks orders and withdrawals against the risk controls. It is
// safe for concurrent use.
type Engine struct {
	store   Store
	log     *slog.Logger
	now     func() time.Time
	poll    time.Duration
	halted  func(exgate.RiskHalt)
	resumed func(string)
	depth   int
	books   *heldBooks // nil without Options.Books

	mu   sync.Mutex // serializes reloads
	snap *snapshot  // guarded by mu
}

type snapshot struct {
	at     time.Time
	limits map[string]exgate.RiskLimits
	halts  []exgate.RiskHalt
}

// New builds an Engine.
func New(opts Options) *Engine {
	e := &Engine{store: opts.Store, log: opts.Logger, now: opts.Now, poll: opts.Poll,
		halted: opts.Halted, resumed: opts.Resumed, depth: opts.BookDepth}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if e.now == nil {
		e.now = time.Now
	}
	if e.poll <= 0 {
		e.poll = 500 * time.Millisecond
	}
	if e.depth <= 0 {
		e.depth = 100
	}
	if opts.Books != nil {
		e.books = &heldBooks{books: opts.Books, hold: opts.BookHold, now: e.now, held: map[bookKey]*heldBook{}}
		if e.books.hold <= 0 {
			e.books.hold = DefaultBookHold
		}
	}
	return e
}

// state returns the limits and halts, read from the store when the last
// reading is older than Poll. When the store cannot be read, the checks
// fail closed.
func (e *Engine) state(ctx context.Context) (*snapshot, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	if e.snap != nil && now.Sub(e.snap.at) < e.poll && !now.Before(e.snap.at) {
		return e.snap, nil
	}
	snap, err := e.load(ctx)
	if err != nil {
		return nil, &exgate.Error{Code: exgate.CodeExchangeUnavailable, RetryAfter: time.Second,
			Detail: "the risk limits cannot be read from the gateway's store; nothing was sent", Err: err}
	}
	e.snap = snap
	return snap, nil
}

func (e *Engine) load(ctx context.Context) (*snapshot, error) {
	limits, err := e.store.AllRiskLimits(ctx)
	if err != nil {
		return nil, fmt.Errorf("risk: limits: %w", err)
	}
	halts, err := e.store.RiskHalts(ctx)
	if err != nil {
		return nil, fmt.Errorf("risk: halts: %w", err)
	}
	return &snapshot{at: e.now(), limits: limits, halts: halts}, nil
}

// Run reads the limits and halts every Poll until ctx is done, and tells
// Halted and Resumed of every halt that starts or ends. While it runs, the
// checks hold live subscriptions to the books they price (Options.Books).
func (e *Engine) Run(ctx context.Context) {
	t := time.NewTicker(e.poll)
	defer t.Stop()
	e.books.start(ctx)
	defer e.books.stop()
	var prev []exgate.RiskHalt
	first := true
	for {
		snap, err := e.load(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			e.log.WarnContext(ctx, "risk: limits and halts not read", "err", err)
		} else {
			e.mu.Lock()
			e.snap = snap
			e.mu.Unlock()
			if !first {
				e.announce(prev, snap.halts)
			}
			prev, first = snap.halts, false
		}
		e.books.sweep()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// announce tells of the halts in next that were not in prev (or whose
// reason changed), and of those of prev no longer in next.
func (e *Engine) announce(prev, next []exgate.RiskHalt) {
	for _, h := range next {
		i := slices.IndexFunc(prev, func(p exgate.RiskHalt) bool { return p.APIKey == h.APIKey })
		if (i < 0 || prev[i].Reason != h.Reason || !prev[i].CreatedAt.Equal(h.CreatedAt)) && e.halted != nil {
			e.halted(h)
		}
	}
	for _, p := range prev {
		if !slices.ContainsFunc(next, func(h exgate.RiskHalt) bool { return h.APIKey == p.APIKey }) && e.resumed != nil {
			e.resumed(p.APIKey)
		}
	}
}

// Halted returns the halt that holds for apiKey, or nil.
func (e *Engine) Halted(ctx context.Context, apiKey string) (*exgate.RiskHalt, error) {
	snap, err := e.state(ctx)
	if err != nil {
		return nil, err
	}
	return exgate.HaltOf(snap.halts, apiKey), nil
}

// Account returns a key's risk state as `exgate risk show` prints it,
// read from the store.
func (e *Engine) Account(ctx context.Context, apiKey string) (exgate.RiskAccount, error) {
	return Account(ctx, e.store, apiKey, e.now())
}

// Account reads a key's risk state at now from st.
func Account(ctx context.Context, st Store, apiKey string, now time.Time) (exgate.RiskAccount, error) {
	limits, err := st.AllRiskLimits(ctx)
	if err != nil {
		return exgate.RiskAccount{}, err
	}
	halts, err := st.RiskHalts(ctx)
	if err != nil {
		return exgate.RiskAccount{}, err
	}
	u, err := st.RiskUsage(ctx, apiKey, exgate.RiskDay(now))
	if err != nil {
		return exgate.RiskAccount{}, err
	}
	return exgate.NewRiskAccount(apiKey, limits[apiKey], exgate.HaltOf(halts, apiKey), u), nil
}

// Order is an order as the checks see it.
type Order struct {
	// Symbol, Side, Quantity and QuantityIn are those sent to the
	// exchange (a market order named the other way round already turned
	// to the listed pair); ClientSymbol is the pair as the client named it.
	Symbol       exgate.Symbol
	ClientSymbol exgate.Symbol
	Side         exgate.Side
	Quantity     decimal.Decimal
	QuantityIn   exgate.QuantityIn
	// Price is a limit order's price; nil for a market order.
	Price *decimal.Decimal
}

// MarketOrder is the Order of a market order request.
func MarketOrder(req exgate.OrderRequest) Order {
	o := Order{Symbol: req.Symbol, ClientSymbol: req.Symbol, Side: req.Side, Quantity: req.Quantity, QuantityIn: req.QuantityIn}
	if req.Inverted {
		o.ClientSymbol = req.Symbol.Inverse()
	}
	return o
}

// LimitOrder is the Order of a limit order request.
func LimitOrder(req exgate.LimitOrderRequest) Order {
	p := req.Price
	return Order{Symbol: req.Symbol, ClientSymbol: req.Symbol, Side: req.Side, Quantity: req.Quantity, QuantityIn: exgate.InBase, Price: &p}
}

// CheckOrder checks an order of cred's client key on ex. It returns ctx
// carrying the reservation to make with the order's intent
// (exgate.ContextWithRisk), ctx itself when the key has no limits, or the
// refusal: TRADING_HALTED, RISK_LIMIT_EXCEEDED, or EXCHANGE_UNAVAILABLE
// when a price needed cannot be had. A test order (test) is checked
// against the usage as it is, and reserves nothing.
func (e *Engine) CheckOrder(ctx context.Context, cred exgate.Credential, ex exgate.Exchange, o Order, test bool) (context.Context, error) {
	snap, err := e.state(ctx)
	if err != nil {
		return ctx, err
	}
	if h := exgate.HaltOf(snap.halts, cred.ClientAPIKey); h != nil {
		return ctx, exgate.TradingHalted(*h)
	}
	limits, ok := snap.limits[cred.ClientAPIKey]
	if !ok || limits.Empty() {
		return ctx, nil
	}
	if !limits.AllowsSymbol(o.ClientSymbol) {
		return ctx, exgate.RiskRefusal(exgate.LimitSymbols, o.ClientSymbol.String(), "",
			"%s is not on this API key's list of pairs", o.ClientSymbol)
	}
	p := pricer{ex: ex, cred: cred, depth: e.depth, live: e.books}
	// The notional in the quote asset, and the quote's USD value.
	var notional decimal.Decimal
	switch {
	case o.Price != nil:
		notional = o.Quantity.Mul(*o.Price)
	case o.QuantityIn == exgate.InQuote:
		notional = o.Quantity
	default:
		mid, err := p.mid(ctx, o.Symbol)
		if err != nil {
			return ctx, err
		}
		notional = o.Quantity.Mul(mid)
	}
	quoteUSD, err := p.usd(ctx, o.Symbol.Quote)
	if err != nil {
		return ctx, err
	}
	usd := notional.Mul(quoteUSD)
	if m := limits.MaxOrderNotional; m != nil && usd.GreaterThan(*m) {
		return ctx, exgate.RiskRefusal(exgate.LimitMaxOrderNotional, usd.String(), m.String(),
			"this order's notional is %s USD, over this API key's limit of %s USD per order", usd, m)
	}
	if band := limits.PriceBand; band != nil {
		if err := p.checkBand(ctx, o, *band); err != nil {
			return ctx, err
		}
	}
	r := &exgate.RiskReservation{
		Day: exgate.RiskDay(e.now()), Notional: usd, Quote: o.Symbol.Quote, QuoteUSD: quoteUSD,
		Open: o.Price != nil, MaxDailyNotional: limits.DailyNotional, MaxOpenOrders: limits.MaxOpenOrders,
	}
	if o.Price != nil {
		r.Price = *o.Price
	}
	if test {
		u, err := e.store.RiskUsage(ctx, cred.ClientAPIKey, r.Day)
		if err != nil {
			return ctx, storeDown(err)
		}
		return ctx, r.Check(exgate.IntentOrder, u)
	}
	return exgate.ContextWithRisk(ctx, r), nil
}

// CheckWithdrawal checks a withdrawal as CheckOrder checks an order.
func (e *Engine) CheckWithdrawal(ctx context.Context, cred exgate.Credential, ex exgate.Exchange, req exgate.WithdrawalRequest) (context.Context, error) {
	snap, err := e.state(ctx)
	if err != nil {
		return ctx, err
	}
	if h := exgate.HaltOf(snap.halts, cred.ClientAPIKey); h != nil {
		return ctx, exgate.TradingHalted(*h)
	}
	limits, ok := snap.limits[cred.ClientAPIKey]
	if !ok || limits.DailyWithdrawal == nil {
		return ctx, nil
	}
	p := pricer{ex: ex, cred: cred, depth: e.depth, live: e.books}
	rate, err := p.usd(ctx, req.Asset)
	if err != nil {
		return ctx, err
	}
	return exgate.ContextWithRisk(ctx, &exgate.RiskReservation{
		Day: exgate.RiskDay(e.now()), Notional: req.Amount.Mul(rate), Quote: req.Asset, QuoteUSD: rate,
		MaxDailyWithdrawal: limits.DailyWithdrawal,
	}), nil
}

func storeDown(err error) error {
	return &exgate.Error{Code: exgate.CodeExchangeUnavailable, RetryAfter: time.Second,
		Detail: "the risk usage cannot be read from the gateway's store; nothing was sent", Err: err}
}

// IsRefusal reports whether err is a refusal of the risk controls.
func IsRefusal(err error) bool {
	e, ok := errors.AsType[*exgate.Error](err)
	return ok && (e.Code == exgate.CodeRiskLimitExceeded || e.Code == exgate.CodeTradingHalted)
}

// CheckMarketOrder is CheckOrder for a market order request.
func (e *Engine) CheckMarketOrder(ctx context.Context, cred exgate.Credential, ex exgate.Exchange, req exgate.OrderRequest, test bool) (context.Context, error) {
	return e.CheckOrder(ctx, cred, ex, MarketOrder(req), test)
}

// CheckLimitOrder is CheckOrder for a limit order request.
func (e *Engine) CheckLimitOrder(ctx context.Context, cred exgate.Credential, ex exgate.Exchange, req exgate.LimitOrderRequest, test bool) (context.Context, error) {
	return e.CheckOrder(ctx, cred, ex, LimitOrder(req), test)
}

// HaltCount is the number of halts in force as last read (a global halt
// counts as one), for metrics.
func (e *Engine) HaltCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.snap == nil {
		return 0
	}
	return len(e.snap.halts)
}
