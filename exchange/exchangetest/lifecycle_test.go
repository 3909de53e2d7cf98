package exchangetest_test

import (
	"context"

	"github.com/exgate/exgate"
)

func (m *mutant) om() exgate.OrderManager { return m.Exchange.(exgate.OrderManager) }

func (m *mutant) PlaceLimitOrder(ctx context.Context, c exgate.Credential, r exgate.LimitOrderRequest) (exgate.Order, error) {
	if m.limit != nil {
		r = m.limit(r)
	}
	return m.om().PlaceLimitOrder(ctx, c, r)
}

func (m *mutant) TestOrder(ctx context.Context, c exgate.Credential, r exgate.TestOrderRequest) (exgate.Order, error) {
	return m.om().TestOrder(ctx, c, r)
}

func (m *mutant) CancelOrder(ctx context.Context, c exgate.Credential, r exgate.CancelRequest) (exgate.Order, error) {
	if m.cancel != nil {
		return m.cancel(r)
	}
	return m.om().CancelOrder(ctx, c, r)
}

func (m *mutant) OpenOrders(ctx context.Context, c exgate.Credential, f exgate.OrderFilter) ([]exgate.Order, error) {
	return m.om().OpenOrders(ctx, c, f)
}

func (m *mutant) RecentOrders(ctx context.Context, c exgate.Credential, f exgate.OrderFilter) ([]exgate.Order, error) {
	return m.om().RecentOrders(ctx, c, f)
}

func (m *mutant) Fills(ctx context.Context, c exgate.Credential, f exgate.OrderFilter) ([]exgate.Fill, error) {
	return m.om().Fills(ctx, c, f)
}

func (m *mutant) Symbols(ctx context.Context, c exgate.Credential, f exgate.SymbolFilter) ([]exgate.SymbolInfo, error) {
	return m.om().Symbols(ctx, c, f)
}

func (m *mutant) RecentWithdrawals(ctx context.Context, c exgate.Credential, f exgate.WithdrawalFilter) ([]exgate.Withdrawal, error) {
	return m.om().RecentWithdrawals(ctx, c, f)
}
