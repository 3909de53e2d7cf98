package exchangetest_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/exchangetest"
	"github.com/exgate/exgate/exchange/sim"
)

// mutantEnv names the mutant TestMutant runs the suite against.
const mutantEnv = "EXCHANGETEST_MUTANT"

var now = time.Date(2026, 11, 22, 12, 34, 56, 789_000_000, time.UTC)

func setup(ex exgate.Exchange) exchangetest.Setup {
	return exchangetest.Setup{
		Exchange:       ex,
		Credential:     exgate.Credential{ID: 1, Name: "paper", Exchange: "sim"},
		Symbol:         exgate.Symbol{Base: "BTC", Quote: "USDT"},
		BaseQuantity:   decimal.RequireFromString("0.01"),
		QuoteQuantity:  decimal.RequireFromString("100"),
		Withdrawal:     exgate.WithdrawalRequest{Asset: "ETH", Network: "ETH", Address: "0x52908400098527886E0F7030069857D2E4169EE7", Amount: decimal.RequireFromString("1")},
		DepositAddress: exgate.DepositAddressRequest{Asset: "BTC", Network: "BTC"},
	}
}

// TestSim runs the whole suite against the unmodified simulated exchange.
func TestSim(t *testing.T) {
	exchangetest.Run(t, func(t *testing.T) exchangetest.Setup {
		return setup(sim.New(sim.Options{Now: func() time.Time { return now }}))
	})
}

// mutant is the simulated exchange with one answer broken.
type mutant struct {
	exgate.Exchange
	klines   func([]exgate.Kline, error) ([]exgate.Kline, error)
	book     func(exgate.OrderBook) exgate.OrderBook
	balances func([]exgate.Balance) []exgate.Balance
	place    func(exgate.OrderRequest, exgate.Order, error) (exgate.Order, error)
	query    func(exgate.Order, error) (exgate.Order, error)
	deposits func(exgate.DepositFilter) ([]exgate.Deposit, error)
	withdraw func(exgate.Withdrawal) exgate.Withdrawal
	// limit rewrites a limit order before it is placed; cancel replaces
	// the cancel.
	limit  func(exgate.LimitOrderRequest) exgate.LimitOrderRequest
	cancel func(exgate.CancelRequest) (exgate.Order, error)
	// transfer replaces the transfer; queryTransfer rewrites a
	// transfer read back.
	transfer      func(exgate.TransferRequest) (exgate.Transfer, error)
	queryTransfer func(exgate.Transfer, error) (exgate.Transfer, error)
}

// The mutant has the sim's two wallets, so the Transfers cases run
// against it.
var _ exgate.WalletTransfers = (*mutant)(nil)

func (m *mutant) wallets() exgate.WalletTransfers {
	wt, _ := exgate.Ability[exgate.WalletTransfers](m.Exchange)
	return wt
}

func (m *mutant) WalletBalances(ctx context.Context, c exgate.Credential, w exgate.WalletKind) ([]exgate.Balance, error) {
	return m.wallets().WalletBalances(ctx, c, w)
}

func (m *mutant) Transfer(ctx context.Context, c exgate.Credential, r exgate.TransferRequest) (exgate.Transfer, error) {
	if m.transfer != nil {
		return m.transfer(r)
	}
	return m.wallets().Transfer(ctx, c, r)
}

func (m *mutant) QueryTransfer(ctx context.Context, c exgate.Credential, q exgate.TransferQuery) (exgate.Transfer, error) {
	t, err := m.wallets().QueryTransfer(ctx, c, q)
	if m.queryTransfer != nil {
		return m.queryTransfer(t, err)
	}
	return t, err
}

func (m *mutant) RecentTransfers(ctx context.Context, c exgate.Credential, f exgate.TransferFilter) ([]exgate.Transfer, error) {
	return m.wallets().RecentTransfers(ctx, c, f)
}

// The mutant has the sim's order lifecycle (lifecycle_test.go), so the
// Lifecycle cases run against it.
var _ exgate.OrderManager = (*mutant)(nil)

func (m *mutant) RecentKlines(ctx context.Context, c exgate.Credential, r exgate.KlineRequest) ([]exgate.Kline, error) {
	ks, err := m.Exchange.RecentKlines(ctx, c, r)
	if m.klines != nil {
		return m.klines(ks, err)
	}
	return ks, err
}

func (m *mutant) OrderBook(ctx context.Context, c exgate.Credential, r exgate.OrderBookRequest) (exgate.OrderBook, error) {
	b, err := m.Exchange.OrderBook(ctx, c, r)
	if m.book != nil && err == nil {
		b = m.book(b)
	}
	return b, err
}

func (m *mutant) Balances(ctx context.Context, c exgate.Credential) ([]exgate.Balance, error) {
	bs, err := m.Exchange.Balances(ctx, c)
	if m.balances != nil && err == nil {
		bs = m.balances(bs)
	}
	return bs, err
}

func (m *mutant) PlaceMarketOrder(ctx context.Context, c exgate.Credential, r exgate.OrderRequest) (exgate.Order, error) {
	o, err := m.Exchange.PlaceMarketOrder(ctx, c, r)
	if m.place != nil {
		return m.place(r, o, err)
	}
	return o, err
}

func (m *mutant) QueryOrder(ctx context.Context, c exgate.Credential, q exgate.OrderQuery) (exgate.Order, error) {
	o, err := m.Exchange.QueryOrder(ctx, c, q)
	if m.query != nil {
		return m.query(o, err)
	}
	return o, err
}

func (m *mutant) RecentDeposits(ctx context.Context, c exgate.Credential, f exgate.DepositFilter) ([]exgate.Deposit, error) {
	if m.deposits != nil {
		return m.deposits(f)
	}
	return m.Exchange.RecentDeposits(ctx, c, f)
}

func (m *mutant) Withdraw(ctx context.Context, c exgate.Credential, r exgate.WithdrawalRequest) (exgate.Withdrawal, error) {
	w, err := m.Exchange.Withdraw(ctx, c, r)
	if m.withdraw != nil && err == nil {
		w = m.withdraw(w)
	}
	return w, err
}

// mutation breaks one rule; the suite's subtest run must fail saying want.
type mutation struct {
	name  string
	run   string
	want  string
	apply func(m *mutant)
}

var mutations = []mutation{
	{"transfer moves nothing", "Transfers/InsufficientFunds", "want a refusal", func(m *mutant) {
		m.transfer = func(r exgate.TransferRequest) (exgate.Transfer, error) {
			return exgate.Transfer{ID: r.ClientTransferID, ClientTransferID: r.ClientTransferID, Asset: r.Asset,
				Amount: exgate.NewNumber(r.Amount), From: r.From, To: r.To, Status: exgate.TransferCompleted, Timestamp: 1, Exchange: "sim"}, nil
		}
	}},
	{"unknown transfer found", "Transfers/QueryUnknown", "want an error wrapping exgate.ErrNotFound", func(m *mutant) {
		m.queryTransfer = func(exgate.Transfer, error) (exgate.Transfer, error) {
			return exgate.Transfer{Status: exgate.TransferPending}, nil
		}
	}},
	{"cancel does nothing", "Lifecycle/RestAndCancel", "OpenOrders after the cancel", func(m *mutant) {
		m.cancel = func(r exgate.CancelRequest) (exgate.Order, error) {
			return exgate.Order{ID: r.ClientOrderID, ClientOrderID: r.ClientOrderID, Status: exgate.OrderCanceled}, nil
		}
	}},
	{"postOnly ignored", "Lifecycle/PostOnlyCrossing", "with code ORDER_REJECTED", func(m *mutant) {
		m.limit = func(r exgate.LimitOrderRequest) exgate.LimitOrderRequest { r.PostOnly = false; return r }
	}},
	{"price moved onto the tick", "Lifecycle/PriceOffTick", "with code INVALID_PARAMETER", func(m *mutant) {
		m.limit = func(r exgate.LimitOrderRequest) exgate.LimitOrderRequest { r.Price = r.Price.RoundDown(2); return r }
	}},
	{"klines descending", "Klines/1h/limit=10", "want strictly ascending", func(m *mutant) {
		m.klines = func(ks []exgate.Kline, err error) ([]exgate.Kline, error) { slices.Reverse(ks); return ks, err }
	}},
	{"kline closeTime", "Klines/1M/limit=1", "closeTime = ", func(m *mutant) {
		m.klines = func(ks []exgate.Kline, err error) ([]exgate.Kline, error) { ks[0].CloseTime++; return ks, err }
	}},
	{"kline not aligned", "Klines/1w/limit=1", "is not aligned to 1w", func(m *mutant) {
		m.klines = func(ks []exgate.Kline, err error) ([]exgate.Kline, error) {
			ks[0].OpenTime += 24 * 3600 * 1000
			ks[0].CloseTime += 24 * 3600 * 1000
			return ks, err
		}
	}},
	{"kline exponent", "Klines/1m/limit=1", "want a plain decimal", func(m *mutant) {
		m.klines = func(ks []exgate.Kline, err error) ([]exgate.Kline, error) { ks[0].Volume = "1e3"; return ks, err }
	}},
	{"kline high under close", "Klines/5m/limit=10", "want low <= open, close <= high", func(m *mutant) {
		m.klines = func(ks []exgate.Kline, err error) ([]exgate.Kline, error) {
			ks[3].HighPrice = ks[3].LowPrice
			return ks, err
		}
	}},
	{"klines over the limit", "Klines/1d/limit=1", "want 1..1", func(m *mutant) {
		m.klines = func(ks []exgate.Kline, err error) ([]exgate.Kline, error) {
			return append([]exgate.Kline{{}}, ks...), err
		}
	}},
	{"bids ascending", "OrderBook/limit=5", "want bids strictly descending", func(m *mutant) {
		m.book = func(b exgate.OrderBook) exgate.OrderBook { slices.Reverse(b.Bids); return b }
	}},
	{"crossed book", "OrderBook/limit=1", "want best bid < best ask", func(m *mutant) {
		m.book = func(b exgate.OrderBook) exgate.OrderBook { b.Bids, b.Asks = b.Asks, b.Bids; return b }
	}},
	{"zero quantity level", "OrderBook/limit=100", "quantity 0, want > 0", func(m *mutant) {
		m.book = func(b exgate.OrderBook) exgate.OrderBook { b.Asks[7].Quantity = "0.000"; return b }
	}},
	{"zero balance row", "Balances", "zero rows must be left out", func(m *mutant) {
		m.balances = func(bs []exgate.Balance) []exgate.Balance { return append(bs, exgate.Balance{Asset: "DOGE"}) }
	}},
	{"order id", "MarketOrder/BUY_in_base", "want the client order id sent", func(m *mutant) {
		m.place = func(_ exgate.OrderRequest, o exgate.Order, err error) (exgate.Order, error) {
			o.ID = "x"
			return o, err
		}
	}},
	{"quantityIn name", "MarketOrder/SELL_in_quote", `quantityIn "asset2", want the asset code "USDT"`, func(m *mutant) {
		m.place = func(_ exgate.OrderRequest, o exgate.Order, err error) (exgate.Order, error) {
			o.QuantityIn = "asset2"
			return o, err
		}
	}},
	{"quantity over the request", "MarketOrder/BUY_in_quote", "want > 0 and <= the requested 100", func(m *mutant) {
		m.place = func(_ exgate.OrderRequest, o exgate.Order, err error) (exgate.Order, error) {
			o.Quantity = exgate.NewNumber(decimal.RequireFromString("100.01"))
			return o, err
		}
	}},
	{"pending closed", "MarketOrder/SELL_in_base", "PENDING with closeAt", func(m *mutant) {
		m.place = func(_ exgate.OrderRequest, o exgate.Order, err error) (exgate.Order, error) {
			o.Status, o.CloseAt = exgate.OrderPending, o.OpenAt+1
			return o, err
		}
	}},
	{"status goes back", "MarketOrder/BUY_in_base", "want the same final status or a later one", func(m *mutant) {
		m.query = func(o exgate.Order, err error) (exgate.Order, error) {
			o.Status, o.CloseAt = exgate.OrderPending, o.OpenAt
			return o, err
		}
	}},
	{"unknown order not ErrNotFound", "QueryOrderUnknown", "want an error wrapping exgate.ErrNotFound", func(m *mutant) {
		m.query = func(o exgate.Order, err error) (exgate.Order, error) {
			if errors.Is(err, exgate.ErrNotFound) {
				err = errors.New("order does not exist")
			}
			return o, err
		}
	}},
	{"inverse pair not named", "InverseSymbol", "want it to name BTC/USDT", func(m *mutant) {
		m.klines = func(ks []exgate.Kline, err error) ([]exgate.Kline, error) {
			if err != nil {
				err = exgate.Errorf(exgate.CodeUnknownSymbol, "no such pair")
			}
			return ks, err
		}
	}},
	{"unknown symbol code", "UnknownSymbol", "want UNKNOWN_SYMBOL", func(m *mutant) {
		m.place = func(_ exgate.OrderRequest, o exgate.Order, err error) (exgate.Order, error) {
			if err != nil {
				err = exgate.Errorf(exgate.CodeOrderRejected, "refused")
			}
			return o, err
		}
	}},
	{"tiny order sent", "QuantityTooSmall", "want QUANTITY_TOO_SMALL", func(m *mutant) {
		m.place = func(r exgate.OrderRequest, o exgate.Order, err error) (exgate.Order, error) {
			return exgate.Order{ID: r.ClientOrderID, Status: exgate.OrderRejected}, nil
		}
	}},
	{"deposits oldest first", "Deposits", "want newest first", func(m *mutant) {
		inner := m.Exchange
		m.deposits = func(f exgate.DepositFilter) ([]exgate.Deposit, error) {
			ds, err := inner.RecentDeposits(context.Background(), exgate.Credential{ID: 1}, f)
			slices.Reverse(ds)
			return ds, err
		}
	}},
	{"deposit filter ignored", "Deposits", "does not match the filter", func(m *mutant) {
		inner := m.Exchange
		m.deposits = func(exgate.DepositFilter) ([]exgate.Deposit, error) {
			return inner.RecentDeposits(context.Background(), exgate.Credential{ID: 1}, exgate.DepositFilter{})
		}
	}},
	{"deposit raw status dropped", "Deposits", "empty rawStatus", func(m *mutant) {
		inner := m.Exchange
		m.deposits = func(f exgate.DepositFilter) ([]exgate.Deposit, error) {
			ds, err := inner.RecentDeposits(context.Background(), exgate.Credential{ID: 1}, f)
			for i := range ds {
				ds[i].RawStatus = ""
			}
			return ds, err
		}
	}},
	{"total without fees", "Withdraw", "want amount + fees", func(m *mutant) {
		m.withdraw = func(w exgate.Withdrawal) exgate.Withdrawal { w.TotalAmount = w.Amount; return w }
	}},
	{"withdrawal status not normalized", "Withdraw", `status "COMPLETED", want one of`, func(m *mutant) {
		m.withdraw = func(w exgate.Withdrawal) exgate.Withdrawal { w.Status = "COMPLETED"; return w }
	}},
}

// TestMutant runs the suite against the mutant named in the environment;
// TestSuiteCatchesMutants starts it in a child process, where failing is
// the point.
func TestMutant(t *testing.T) {
	name := os.Getenv(mutantEnv)
	if name == "" {
		t.Skip("run by TestSuiteCatchesMutants")
	}
	i := slices.IndexFunc(mutations, func(m mutation) bool { return m.name == name })
	if i < 0 {
		t.Fatalf("no mutation %q", name)
	}
	exchangetest.Run(t, func(t *testing.T) exchangetest.Setup {
		m := &mutant{Exchange: sim.New(sim.Options{Now: func() time.Time { return now }})}
		mutations[i].apply(m)
		return setup(m)
	})
}

// TestSuiteCatchesMutants checks that the suite fails each broken adapter
// with a message naming the exchange and the rule.
func TestSuiteCatchesMutants(t *testing.T) {
	if os.Getenv(mutantEnv) != "" {
		t.Skip("inside a mutant run")
	}
	for _, mu := range mutations {
		t.Run(mu.name, func(t *testing.T) {
			t.Parallel()
			pattern := "^TestMutant$"
			for part := range strings.SplitSeq(mu.run, "/") {
				pattern += "/^" + part + "$"
			}
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run="+pattern, "-test.count=1")
			cmd.Env = append(os.Environ(), mutantEnv+"="+mu.name)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed the mutant:\n%s", out)
			}
			if !strings.Contains(string(out), "sim: ") || !strings.Contains(string(out), mu.want) {
				t.Fatalf("the suite failed without saying %q:\n%s", mu.want, out)
			}
			if !strings.Contains(string(out), "--- FAIL: TestMutant/"+strings.ReplaceAll(mu.run, " ", "_")) {
				t.Fatalf("the failure is not in %s:\n%s", mu.run, out)
			}
		})
	}
}
