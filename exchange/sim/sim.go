// Package sim is the simulated exchange: a real exgate.Exchange with no
// network behind it, the embedded default of `exgate demo`, for paper
// trading and for client integration tests (docs/contract.md section 3).
//
// Market data is a pure function of (seed, symbol, time): every call and
// every instance with the same seed sees the same klines and books.
// Balances are paper balances kept per exchange credential in a Ledger (the
// SQLite and PostgreSQL stores implement it; NewMemoryLedger keeps them in
// memory). A market order walks the simulated book of the current second
// and moves the balances atomically with a 0.1% fee in the asset received;
// a withdrawal checks the address format of its network and debits amount
// plus fee. Deposits are a seeded history per credential, newest first.
//
// docs/exchanges/sim.md lists the markets, steps, minimums, fees, networks
// and address formats.
package sim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// Ledger keeps the paper balances and operations of sim accounts, keyed by
// exchange credential id. The SQLite and PostgreSQL stores implement it.
type Ledger interface {
	// EnsureSimAccount opens the account of a credential with the initial
	// balances, once: when the account exists it changes nothing.
	EnsureSimAccount(ctx context.Context, credentialID int64, initial []exgate.BalanceChange) error
	// SimBalances returns the balances of an account by asset. Returns an
	// error wrapping exgate.ErrNotFound when the account is not open.
	SimBalances(ctx context.Context, credentialID int64) (map[string]decimal.Decimal, error)
	// SimWalletBalances is SimBalances for one wallet (spot or funding).
	SimWalletBalances(ctx context.Context, credentialID int64, wallet exgate.WalletKind) (map[string]decimal.Decimal, error)
	// ApplySimOperation records op and applies its balance changes
	// atomically. Nothing changes when it fails: exgate.ErrConflict when
	// the account already has an operation with op.ID,
	// exgate.ErrInsufficientFunds when a balance would go negative.
	ApplySimOperation(ctx context.Context, credentialID int64, op exgate.SimOperation) error
	// SimOperation reads an operation back by id. Returns an error
	// wrapping exgate.ErrNotFound when there is none.
	SimOperation(ctx context.Context, credentialID int64, id string) (exgate.SimOperation, error)
	// SimOperations returns up to limit operations of a kind, newest
	// first; limit <= 0 means all.
	SimOperations(ctx context.Context, credentialID int64, kind exgate.IntentKind, limit int) ([]exgate.SimOperation, error)
	// SimOpenOperations returns the operations applied with Open that no
	// operation has closed (exgate.SimOperation.Closes), newest first.
	SimOpenOperations(ctx context.Context, credentialID int64) ([]exgate.SimOperation, error)
}

// Options configures the simulated exchange.
type Options struct {
	// Ledger keeps the balances; nil means a new NewMemoryLedger(), whose
	// balances live only as long as the Exchange.
	Ledger Ledger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Seed selects the market data, deposit histories and addresses.
	// Every instance that must agree (all gateways sharing a store) uses
	// the same seed; the zero value is the documented default.
	Seed uint64
	// Tick, when set, replaces time.NewTicker in the streams (stream.go):
	// it returns the ticks of period d and a stop function. Tests use it
	// with Now to step the streams.
	Tick func(d time.Duration) (<-chan time.Time, func())
}

// Exchange is the simulated exchange. It is safe for concurrent use.
type Exchange struct {
	ledger Ledger
	now    func() time.Time
	seed   uint64
	tables
	noise map[string]*noise
	// opened caches the credentials whose account is known to be open.
	opened sync.Map
	// scanned caches, per resting limit order, how far its price path
	// was found quiet (lifecycle.go), so a read looks at new seconds only.
	scanned sync.Map
	// tick and notices serve the streams (stream.go).
	tick    func(time.Duration) (<-chan time.Time, func())
	notices notices
}

var _ exgate.Exchange = (*Exchange)(nil)

// New returns the simulated exchange.
func New(opts Options) *Exchange {
	e := &Exchange{
		ledger: opts.Ledger,
		now:    opts.Now,
		seed:   opts.Seed,
		tables: newTables(),
		noise:  map[string]*noise{},
		tick:   opts.Tick,
	}
	if e.ledger == nil {
		e.ledger = NewMemoryLedger()
	}
	if e.now == nil {
		e.now = time.Now
	}
	for code, a := range e.assets {
		e.noise[code] = newNoise(e.seed, a)
	}
	return e
}

// Name returns "sim".
func (e *Exchange) Name() string { return Name }

// InitialBalances returns what a new sim account holds.
func InitialBalances() []exgate.BalanceChange {
	out := make([]exgate.BalanceChange, len(assetTable))
	for i, a := range assetTable {
		out[i] = exgate.BalanceChange{Asset: a.Code, Delta: decimal.RequireFromString(a.Initial)}
	}
	return out
}

// open makes sure the credential's account exists, once per credential
// and Exchange.
func (e *Exchange) open(ctx context.Context, cred exgate.Credential) error {
	if _, ok := e.opened.Load(cred.ID); ok {
		return nil
	}
	initial := InitialBalances()
	if cred.Paper && cred.PaperBalances != nil {
		// A paper key given --balances (docs/contract.md 2.9).
		initial = cred.PaperBalances
	}
	err := e.ledger.EnsureSimAccount(ctx, cred.ID, initial)
	if errors.Is(err, exgate.ErrNotFound) {
		// The exchange key was removed while this request was under way
		// (the gateway caches keys briefly): refused as the next request
		// will be.
		return &exgate.Error{
			Code:   exgate.CodeUnknownExchangeKey,
			Detail: fmt.Sprintf("exchange key %q no longer exists", cred.Name),
			Err:    fmt.Errorf("sim: open account of credential %d: %w", cred.ID, err),
		}
	}
	if err != nil {
		return &exgate.Error{
			Code:   exgate.CodeExchangeError,
			Detail: "sim could not open the paper account",
			Err:    fmt.Errorf("sim: open account of credential %d: %w", cred.ID, err),
		}
	}
	e.opened.Store(cred.ID, true)
	return nil
}

// withAccount runs f after opening the account, and once more after
// reopening it when f finds it missing (a store reset under a running
// gateway). f must change nothing when it fails with exgate.ErrNotFound.
func (e *Exchange) withAccount(ctx context.Context, cred exgate.Credential, f func() error) error {
	if err := e.open(ctx, cred); err != nil {
		return err
	}
	err := f()
	if errors.Is(err, exgate.ErrNotFound) {
		e.opened.Delete(cred.ID)
		if err := e.open(ctx, cred); err != nil {
			return err
		}
		err = f()
	}
	return err
}

// RecentKlines returns the last req.Limit klines of the pair (default 100
// of 1m, at most 1000), the last one still open.
func (e *Exchange) RecentKlines(ctx context.Context, cred exgate.Credential, req exgate.KlineRequest) ([]exgate.Kline, error) {
	p, err := e.market(req.Symbol)
	if err != nil {
		return nil, err
	}
	if req.Interval == "" {
		req.Interval = exgate.Interval1m
	}
	if _, err := exgate.ParseInterval(string(req.Interval)); err != nil {
		return nil, exgate.ParamError("interval", "%v", err)
	}
	limit := req.Limit
	if limit <= 0 {
		limit = exgate.DefaultKlineLimit
	}
	limit = min(limit, exgate.MaxKlineLimit)
	now := e.now()
	starts := make([]time.Time, limit)
	start := req.Interval.Start(now)
	for i := limit - 1; i >= 0; i-- {
		starts[i] = start
		start = req.Interval.Previous(start)
	}
	ivKey := hashString("interval/" + string(req.Interval))
	out := make([]exgate.Kline, limit)
	for i, s := range starts {
		out[i] = e.kline(p, req.Interval, ivKey, s, now)
	}
	return out, nil
}

// OrderBook returns the book of the current second, req.Limit levels a
// side.
func (e *Exchange) OrderBook(ctx context.Context, cred exgate.Credential, req exgate.OrderBookRequest) (exgate.OrderBook, error) {
	p, err := e.market(req.Symbol)
	if err != nil {
		return exgate.OrderBook{}, err
	}
	limit := req.Limit
	if limit <= 0 {
		limit = exgate.DefaultOrderBookLimit
	}
	limit = min(limit, exgate.MaxOrderBookLimit)
	bids, asks := e.book(p, floorDiv(e.now().UnixMilli(), 1000))
	return exgate.OrderBook{Bids: bids.levels(limit), Asks: asks.levels(limit)}, nil
}
