package journal_test

import (
	"net/http"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/bybit"
	"github.com/exgate/exgate/exchange/bybit/bybitfake"
)

// bybitVenue is Bybit for the fault tests (venues, fault_test.go).
// Withdrawals of each client id differ in amount: Bybit's records carry no
// requestId, so a lost answer is matched by its details (exchange/bybit
// QueryWithdrawal).
func bybitVenue(t *testing.T) venue {
	fake := bybitfake.New(bybitfake.Options{NoRateLimits: true})
	t.Cleanup(fake.Close)
	const addr = "TXkZ5Ff4qgSBVRrfBMfxcDxUrW5g1mDtKf"
	if err := fake.AddAccount(bybitfake.Account{APIKey: "k", Secret: "s",
		Unified: map[string]string{"USDT": "10000000", "BTC": "1000"}, Fund: map[string]string{"USDT": "10000000"},
		AddressBook: []bybitfake.BookAddress{{Coin: "USDT", Chain: "TRX", Address: addr}}}); err != nil {
		t.Fatal(err)
	}
	fc := newFaultClient(t)
	ex := bybit.New(bybit.Options{BaseURL: fake.URL, HTTPClient: fc.client(), Limiter: unlimited{}, RetryBackoff: readBackoff})
	return venue{
		idle:  func(t *testing.T) { fc.waitIdle(t, fake.Busy) },
		name:  "bybit",
		ex:    ex,
		cred:  exgate.Credential{Exchange: bybit.Name, Key: "k", Secret: "s", Permissions: []exgate.Permission{exgate.PermissionTrade, exgate.PermissionWithdraw}},
		order: exgate.OrderRequest{Symbol: exgate.Symbol{Base: "BTC", Quote: "USDT"}, Side: exgate.SideBuy, Quantity: decimal.RequireFromString("20"), QuantityIn: exgate.InQuote},
		wdFor: func(i int) exgate.WithdrawalRequest {
			return exgate.WithdrawalRequest{Asset: "USDT", Network: "TRX", Address: addr,
				Amount: decimal.RequireFromString("100").Add(decimal.New(int64(i), -4))}
		},
		inject: func(f func(r *http.Request) fault) {
			fake.SetFault(func(r *http.Request) bybitfake.Fault {
				switch fc.faultOf(r) {
				case faultSlow:
					return bybitfake.Fault{Delay: slowDelay}
				case faultSlowOK:
					return bybitfake.Fault{Delay: slowOKDelay}
				case faultStatus500:
					return bybitfake.Fault{Status: 500, Body: "Internal Server Error"}
				case faultDrop:
					return bybitfake.Fault{Drop: true}
				case faultDropAfter:
					return bybitfake.Fault{DropAfter: true}
				}
				return bybitfake.Fault{}
			})
			fc.set(f)
		},
		orders:  func(id string) int { return fake.OrdersByLinkID("k", id) },
		withdrs: func(it exgate.Intent) int { return fake.WithdrawalsByRequestID("k", it.ID) },
		isSubmit: func(r *http.Request) bool {
			return r.URL.Path == "/v5/order/create" || r.URL.Path == "/v5/asset/withdraw/create"
		},
		isCancel: func(r *http.Request) bool { return r.URL.Path == "/v5/order/cancel" },
		limitQty: "0.01",
	}
}
