// Package paper is paper trading on live market data (docs/contract.md
// 2.9): a paper exchange key of a real exchange reads that exchange's
// public market data, and the gateway simulates everything else (orders,
// fills, balances, deposits, addresses, withdrawals, transfers) in the
// store, where every instance sees it.
//
// An Exchange wraps one real adapter (already coalesced, so paper keys
// share its market data with every other key) and dispatches per call on
// the credential: a paper credential goes to the simulation, any other
// goes to the real adapter unchanged. This one switch is the guarantee
// that nothing signed leaves for a paper key: the real adapter receives a
// paper credential only for public market data, and then without any key
// material (publicCred).
//
// The simulation reuses the sim ledger and its record formats (package
// sim, docs/contract.md section 3): a market order is one operation; a
// limit order is a chain "cid" (placed, holding its funds), "cid.1",
// "cid.2"… (its fills and its end). Balances, deposits, addresses,
// withdrawals and transfers are the sim wallet's, over the same ledger.
// Only the prices differ: fills come from the real exchange's live order
// book (fill.go), and a watcher checks resting orders against it every
// second (watch.go). docs/paper.md says how that differs from the real
// exchange.
package paper

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// Store is the ledger of paper accounts: the sim ledger (exgate.Store
// implements it) and the list of paper keys with resting orders.
type Store interface {
	SimBalances(ctx context.Context, credentialID int64) (map[string]decimal.Decimal, error)
	ApplySimOperation(ctx context.Context, credentialID int64, op exgate.SimOperation) error
	SimOperation(ctx context.Context, credentialID int64, id string) (exgate.SimOperation, error)
	SimOperations(ctx context.Context, credentialID int64, kind exgate.IntentKind, limit int) ([]exgate.SimOperation, error)
	SimOpenOperations(ctx context.Context, credentialID int64) ([]exgate.SimOperation, error)
	PaperCredentialsResting(ctx context.Context, exchange string) ([]exgate.Credential, error)
}

// Wallet is the simulated wallet paper keys share with sim over the same
// ledger: balances (which count what resting orders hold), deposits,
// addresses, withdrawals and, where it has them, transfers between its
// two wallets (exgate.WalletTransfers). It opens an account with the
// credential's PaperBalances.
type Wallet interface {
	exgate.Wallet
	RecentWithdrawals(ctx context.Context, cred exgate.Credential, f exgate.WithdrawalFilter) ([]exgate.Withdrawal, error)
}

// Options configures a paper Exchange.
type Options struct {
	// Live is the real exchange: market data, symbols and market streams
	// for paper keys, everything for the others.
	Live exgate.Exchange
	// Wallet is the simulated wallet (the gateway's sim adapter).
	Wallet Wallet
	// Store keeps the paper ledger.
	Store Store
	// Fees are the rates paper keys pay; zero means the real adapter's
	// exgate.FeeSchedule, and DefaultFees when it has none.
	Fees exgate.FeeRates
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Tick, when set, replaces time.NewTicker in the watcher and the
	// orders stream: it returns the ticks of period d and a stop function.
	Tick func(d time.Duration) (<-chan time.Time, func())
	// Logger reports what the watcher could not do; nil discards.
	Logger *slog.Logger
}

// DefaultFees are the rates of an adapter that states none: 0.1% maker
// and taker, the most common standard spot rate.
var DefaultFees = exgate.FeeRates{Maker: decimal.New(1, -3), Taker: decimal.New(1, -3)}

// CheckInterval is how often resting paper orders are checked against
// the live book (docs/contract.md 2.9: at least once a second).
const CheckInterval = time.Second

// Exchange is the paper switch in front of one real adapter. It is safe
// for concurrent use.
type Exchange struct {
	live   exgate.Exchange
	wallet Wallet
	store  Store
	fees   exgate.FeeRates
	now    func() time.Time
	tick   func(time.Duration) (<-chan time.Time, func())
	log    *slog.Logger

	mu      sync.Mutex
	notices map[int64][]chan exgate.Order
}

var (
	_ exgate.Exchange          = (*Exchange)(nil)
	_ exgate.OrderManager      = (*Exchange)(nil)
	_ exgate.Streamer          = (*Exchange)(nil)
	_ exgate.WalletTransfers   = (*Exchange)(nil)
	_ exgate.Unwrapper         = (*Exchange)(nil)
	_ exgate.KlinesAppender    = (*Exchange)(nil)
	_ exgate.CredentialWallets = (*Exchange)(nil)
)

// New returns the paper switch in front of opts.Live.
func New(opts Options) *Exchange {
	e := &Exchange{
		live: opts.Live, wallet: opts.Wallet, store: opts.Store, fees: opts.Fees,
		now: opts.Now, tick: opts.Tick, log: opts.Logger, notices: map[int64][]chan exgate.Order{},
	}
	if e.fees == (exgate.FeeRates{}) {
		e.fees = DefaultFees
		if fs, ok := exgate.Ability[exgate.FeeSchedule](opts.Live); ok {
			e.fees = fs.StandardFees()
		}
	}
	if e.now == nil {
		e.now = time.Now
	}
	if e.tick == nil {
		e.tick = func(d time.Duration) (<-chan time.Time, func()) {
			t := time.NewTicker(d)
			return t.C, t.Stop
		}
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	return e
}

// Name is the real exchange's name: a paper key belongs to it.
func (e *Exchange) Name() string { return e.live.Name() }

// Unwrap returns the real adapter, so that its other abilities (its
// clock, its pre-encoded market data) are found through the switch.
func (e *Exchange) Unwrap() exgate.Exchange { return e.live }

// Fees returns the rates paper keys pay.
func (e *Exchange) Fees() exgate.FeeRates { return e.fees }

// publicCred is what the real adapter gets for a paper key's market
// data: the credential without any key material, so that nothing can be
// signed with it.
func publicCred(cred exgate.Credential) exgate.Credential {
	cred.Key, cred.Secret, cred.Passphrase = "", "", ""
	return cred
}

// ability finds an ability of the real adapter, or a NOT_IMPLEMENTED
// error naming what it lacks.
func ability[T any](e *Exchange, what string) (T, error) {
	t, ok := exgate.Ability[T](e.live)
	if !ok {
		return t, exgate.Errorf(exgate.CodeNotImplemented, "%s has no %s", e.live.Name(), what)
	}
	return t, nil
}

// RecentKlines reads the real exchange's klines.
func (e *Exchange) RecentKlines(ctx context.Context, cred exgate.Credential, req exgate.KlineRequest) ([]exgate.Kline, error) {
	if cred.Paper {
		cred = publicCred(cred)
	}
	return e.live.RecentKlines(ctx, cred, req)
}

// OrderBook reads the real exchange's order book.
func (e *Exchange) OrderBook(ctx context.Context, cred exgate.Credential, req exgate.OrderBookRequest) (exgate.OrderBook, error) {
	if cred.Paper {
		cred = publicCred(cred)
	}
	return e.live.OrderBook(ctx, cred, req)
}

// Symbols lists the real exchange's markets.
func (e *Exchange) Symbols(ctx context.Context, cred exgate.Credential, f exgate.SymbolFilter) ([]exgate.SymbolInfo, error) {
	sl, err := ability[exgate.SymbolLister](e, "market list")
	if err != nil {
		return nil, err
	}
	if cred.Paper {
		cred = publicCred(cred)
	}
	return sl.Symbols(ctx, cred, f)
}

// Balances are the paper balances of a paper key, else the exchange's.
func (e *Exchange) Balances(ctx context.Context, cred exgate.Credential) ([]exgate.Balance, error) {
	if cred.Paper {
		return e.wallet.Balances(ctx, cred)
	}
	return e.live.Balances(ctx, cred)
}

// RecentDeposits are the simulated deposits of a paper key.
func (e *Exchange) RecentDeposits(ctx context.Context, cred exgate.Credential, f exgate.DepositFilter) ([]exgate.Deposit, error) {
	if cred.Paper {
		return e.wallet.RecentDeposits(ctx, cred, f)
	}
	return e.live.RecentDeposits(ctx, cred, f)
}

// DepositAddress is the simulated address of a paper key.
func (e *Exchange) DepositAddress(ctx context.Context, cred exgate.Credential, req exgate.DepositAddressRequest) (exgate.DepositAddress, error) {
	if cred.Paper {
		return e.wallet.DepositAddress(ctx, cred, req)
	}
	return e.live.DepositAddress(ctx, cred, req)
}

// Withdraw simulates a paper key's withdrawal.
func (e *Exchange) Withdraw(ctx context.Context, cred exgate.Credential, req exgate.WithdrawalRequest) (exgate.Withdrawal, error) {
	if !cred.Paper {
		return e.live.Withdraw(ctx, cred, req)
	}
	w, err := e.wallet.Withdraw(ctx, cred, req)
	return e.paperWithdrawal(w), err
}

// QueryWithdrawal reads a paper key's simulated withdrawal.
func (e *Exchange) QueryWithdrawal(ctx context.Context, cred exgate.Credential, q exgate.WithdrawalQuery) (exgate.Withdrawal, error) {
	if !cred.Paper {
		return e.live.QueryWithdrawal(ctx, cred, q)
	}
	w, err := e.wallet.QueryWithdrawal(ctx, cred, q)
	return e.paperWithdrawal(w), err
}

// RecentWithdrawals lists a paper key's simulated withdrawals.
func (e *Exchange) RecentWithdrawals(ctx context.Context, cred exgate.Credential, f exgate.WithdrawalFilter) ([]exgate.Withdrawal, error) {
	if !cred.Paper {
		om, err := ability[exgate.OrderManager](e, "withdrawal history")
		if err != nil {
			return nil, err
		}
		return om.RecentWithdrawals(ctx, cred, f)
	}
	ws, err := e.wallet.RecentWithdrawals(ctx, cred, f)
	for i := range ws {
		ws[i] = e.paperWithdrawal(ws[i])
	}
	return ws, err
}

// paperWithdrawal names the real exchange on a simulated withdrawal.
func (e *Exchange) paperWithdrawal(w exgate.Withdrawal) exgate.Withdrawal {
	if w.Exchange != "" {
		w.Exchange = e.live.Name()
	}
	return w
}

// transfers finds the wallet transfers of the sim wallet (for a paper
// key) or of the real adapter; an exchange without them has one wallet,
// spot, and a transfer there names the parameter that is not spot
// (docs/contract.md 2.10).
func (e *Exchange) transfers(cred exgate.Credential) (exgate.WalletTransfers, bool) {
	var from exgate.Exchange = e.live
	if cred.Paper {
		w, ok := e.wallet.(exgate.WalletTransfers)
		return w, ok
	}
	return exgate.Ability[exgate.WalletTransfers](from)
}

// WalletTransfersFor answers exgate.TransfersFor: a paper key has the
// sim wallet's two wallets, a real key those of the exchange, if it has
// two (docs/contract.md 2.10).
func (e *Exchange) WalletTransfersFor(cred exgate.Credential) (exgate.WalletTransfers, bool) {
	if _, ok := e.transfers(cred); ok {
		return e, true
	}
	return nil, false
}

// WalletBalances reads one wallet.
func (e *Exchange) WalletBalances(ctx context.Context, cred exgate.Credential, wallet exgate.WalletKind) ([]exgate.Balance, error) {
	wt, ok := e.transfers(cred)
	switch {
	case ok:
		return wt.WalletBalances(ctx, cred, wallet)
	case wallet == exgate.WalletSpot:
		return e.Balances(ctx, cred)
	}
	return nil, exgate.OneWallet(e.live.Name(), "wallet")
}

// Transfer moves funds between the two wallets.
func (e *Exchange) Transfer(ctx context.Context, cred exgate.Credential, req exgate.TransferRequest) (exgate.Transfer, error) {
	wt, ok := e.transfers(cred)
	if !ok {
		return exgate.Transfer{}, exgate.OneWalletTransfer(e.live.Name(), req)
	}
	t, err := wt.Transfer(ctx, cred, req)
	if cred.Paper && t.Exchange != "" {
		t.Exchange = e.live.Name()
	}
	return t, err
}

// QueryTransfer reads a transfer back.
func (e *Exchange) QueryTransfer(ctx context.Context, cred exgate.Credential, q exgate.TransferQuery) (exgate.Transfer, error) {
	wt, ok := e.transfers(cred)
	if !ok {
		return exgate.Transfer{}, fmt.Errorf("%s has no transfers: %w", e.live.Name(), exgate.ErrNotFound)
	}
	t, err := wt.QueryTransfer(ctx, cred, q)
	if cred.Paper && t.Exchange != "" {
		t.Exchange = e.live.Name()
	}
	return t, err
}

// RecentTransfers lists transfers, newest first.
func (e *Exchange) RecentTransfers(ctx context.Context, cred exgate.Credential, f exgate.TransferFilter) ([]exgate.Transfer, error) {
	wt, ok := e.transfers(cred)
	if !ok {
		return []exgate.Transfer{}, nil
	}
	ts, err := wt.RecentTransfers(ctx, cred, f)
	for i := range ts {
		if cred.Paper {
			ts[i].Exchange = e.live.Name()
		}
	}
	return ts, err
}

// WatchOrders streams a paper key's orders from the simulation, any other
// key's from the real exchange.
func (e *Exchange) WatchOrders(ctx context.Context, cred exgate.Credential, emit func(exgate.Order)) error {
	if cred.Paper {
		return e.watchPaperOrders(ctx, cred, emit)
	}
	st, err := ability[exgate.Streamer](e, "streams")
	if err != nil {
		return err
	}
	return st.WatchOrders(ctx, cred, emit)
}

// WatchBook streams the real exchange's book.
func (e *Exchange) WatchBook(ctx context.Context, cred exgate.Credential, sym exgate.Symbol, emit func(exgate.OrderBook)) error {
	st, err := ability[exgate.Streamer](e, "streams")
	if err != nil {
		return err
	}
	if cred.Paper {
		cred = publicCred(cred)
	}
	return st.WatchBook(ctx, cred, sym, emit)
}

// WatchKlines streams the real exchange's klines.
func (e *Exchange) WatchKlines(ctx context.Context, cred exgate.Credential, sym exgate.Symbol, iv exgate.Interval, emit func(exgate.KlineUpdate)) error {
	st, err := ability[exgate.Streamer](e, "streams")
	if err != nil {
		return err
	}
	if cred.Paper {
		cred = publicCred(cred)
	}
	return st.WatchKlines(ctx, cred, sym, iv, emit)
}

// ledgerError is the API error of a ledger failure, as sim's: refused
// funds are INSUFFICIENT_FUNDS, an id already used ORDER_REJECTED, and any
// other failure leaves the outcome unknown (EXCHANGE_TIMEOUT: the journal
// reads the order back).
func ledgerError(id string, err error) error {
	if _, ok := errors.AsType[*exgate.Error](err); ok {
		return err
	}
	switch {
	case errors.Is(err, exgate.ErrInsufficientFunds):
		return &exgate.Error{Code: exgate.CodeInsufficientFunds, Detail: "the paper account cannot pay for the order", Err: err}
	case errors.Is(err, exgate.ErrConflict):
		return &exgate.Error{Code: exgate.CodeOrderRejected, Detail: "the paper account already has an order with client id " + id, Err: err}
	}
	return &exgate.Error{Code: exgate.CodeExchangeTimeout,
		Detail: "the paper ledger failed; the order " + id + " may or may not have been applied", Err: err}
}

// AppendRecentKlinesJSON is the real exchange's klines answer, already
// encoded where the real adapter (or its coalescer) has it so: the paper
// switch hides no fast path of the market data it passes on.
func (e *Exchange) AppendRecentKlinesJSON(ctx context.Context, dst []byte, cred exgate.Credential, req exgate.KlineRequest) ([]byte, error) {
	if cred.Paper {
		cred = publicCred(cred)
	}
	return exgate.AppendRecentKlinesJSON(ctx, e.live, dst, cred, req)
}

// bookEncoder is a real adapter (or its coalescer) that answers the
// order book already encoded.
type bookEncoder interface {
	OrderBookJSON(ctx context.Context, cred exgate.Credential, req exgate.OrderBookRequest) ([]byte, error)
}

// OrderBookJSON is the real exchange's order book, encoded as the API
// answers it.
func (e *Exchange) OrderBookJSON(ctx context.Context, cred exgate.Credential, req exgate.OrderBookRequest) ([]byte, error) {
	if cred.Paper {
		cred = publicCred(cred)
	}
	if enc, ok := exgate.Ability[bookEncoder](e.live); ok {
		return enc.OrderBookJSON(ctx, cred, req)
	}
	book, err := e.live.OrderBook(ctx, cred, req)
	if err != nil {
		return nil, err
	}
	return exgate.AppendOrderBookJSON(nil, book), nil
}

// CheckWithdrawal refuses a malformed withdrawal before the journal
// records it (exgate.WithdrawalChecker): a paper key's by the sim
// wallet's rules (its networks and address formats), any other key's by
// the real adapter's, where it has them.
func (e *Exchange) CheckWithdrawal(ctx context.Context, cred exgate.Credential, req exgate.WithdrawalRequest) error {
	var from exgate.Exchange = e.live
	if cred.Paper {
		if c, ok := e.wallet.(exgate.WithdrawalChecker); ok {
			return c.CheckWithdrawal(ctx, cred, req)
		}
		return nil
	}
	if c, ok := exgate.Ability[exgate.WithdrawalChecker](from); ok {
		return c.CheckWithdrawal(ctx, cred, req)
	}
	return nil
}

// CheckTransferRequest refuses bad transfer input before the journal
// records it (exgate.TransferChecker): a paper key's by the sim wallet's
// rules, any other key's by the real adapter's, where it has them.
func (e *Exchange) CheckTransferRequest(ctx context.Context, cred exgate.Credential, req exgate.TransferRequest) error {
	if cred.Paper {
		if c, ok := e.wallet.(exgate.TransferChecker); ok {
			return c.CheckTransferRequest(ctx, cred, req)
		}
		return nil
	}
	if c, ok := exgate.Ability[exgate.TransferChecker](e.live); ok {
		return c.CheckTransferRequest(ctx, cred, req)
	}
	return nil
}
