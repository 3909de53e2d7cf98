package bybit

import (
	"net/http"
	"strings"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

// limitSpec is one of Bybit's budgets: limit requests per window.
type limitSpec struct {
	limit  int
	window time.Duration
}

// rateLimit expresses a window budget for the Limiter: a burst of a fifth
// of the budget and a steady rate of three fifths, so that no window of
// the budget's length ever holds more than four fifths of the limit: Bybit
// counts requests as they arrive, in rolling windows, and requests paced
// apart may arrive closer together (a slow connection, a busy machine); a
// fifth of the window's length of such jitter still stays within the
// limit.
func (l limitSpec) rateLimit() exgate.RateLimit {
	burst := max(l.limit/5, 1)
	return exgate.RateLimit{Rate: max(l.limit-2*burst, 1), Period: l.window, Burst: burst}
}

// The per-IP limit: 600 requests per 5-second window for all traffic to
// the host; beyond it Bybit answers HTTP 403 "access too frequent" and
// bans the address for at least 10 minutes. Source:
// https://bybit-exchange.github.io/docs/v5/rate-limit ("IP Limit").
const (
	ipLimit         = 600
	ipWindow        = 5 * time.Second
	defaultIPBudget = 500
	// ipBanPause is how long the adapter stops every call after a 403:
	// "wait for at least 10 minutes", plus a margin.
	ipBanPause = 11 * time.Minute
)

// endpoint is one Bybit REST route the adapter calls, with its per-UID
// limit (zero for public routes, which only count against the IP).
type endpoint struct {
	name    string
	method  string
	path    string
	private bool
	// write marks calls that change state (orders, cancels, withdrawals,
	// transfers): never retried, and an unknown outcome is
	// EXCHANGE_TIMEOUT.
	write bool
	uid   limitSpec
}

// The endpoints and their per-UID limits (unified account 2.0, spot).
// Source: https://bybit-exchange.github.io/docs/v5/rate-limit ("API Rate
// Limit Table"): order/create, order/cancel, order/cancel-all 20/s;
// order/realtime, order/history, execution/list 50/s;
// account/wallet-balance 50/s; user/query-api 10/s;
// asset/coin/query-info 5/s; deposit/query-record 100/min;
// deposit/query-address 300/min; withdraw/query-record 300/min;
// withdraw/create 5/s; transfer/query-account-coins-balance 5/s;
// transfer/inter-transfer and query-inter-transfer-list 60/min.
var (
	epTime        = endpoint{name: "market/time", method: http.MethodGet, path: "/v5/market/time"}
	epInstruments = endpoint{name: "market/instruments-info", method: http.MethodGet, path: "/v5/market/instruments-info"}
	epKline       = endpoint{name: "market/kline", method: http.MethodGet, path: "/v5/market/kline"}
	epBook        = endpoint{name: "market/orderbook", method: http.MethodGet, path: "/v5/market/orderbook"}

	epCreateOrder = endpoint{name: "order/create", method: http.MethodPost, path: "/v5/order/create", private: true, write: true, uid: limitSpec{20, time.Second}}
	epCancelOrder = endpoint{name: "order/cancel", method: http.MethodPost, path: "/v5/order/cancel", private: true, write: true, uid: limitSpec{20, time.Second}}
	epRealtime    = endpoint{name: "order/realtime", method: http.MethodGet, path: "/v5/order/realtime", private: true, uid: limitSpec{50, time.Second}}
	epHistory     = endpoint{name: "order/history", method: http.MethodGet, path: "/v5/order/history", private: true, uid: limitSpec{50, time.Second}}
	epExecutions  = endpoint{name: "execution/list", method: http.MethodGet, path: "/v5/execution/list", private: true, uid: limitSpec{50, time.Second}}

	epWalletBalance = endpoint{name: "account/wallet-balance", method: http.MethodGet, path: "/v5/account/wallet-balance", private: true, uid: limitSpec{50, time.Second}}
	epQueryAPI      = endpoint{name: "user/query-api", method: http.MethodGet, path: "/v5/user/query-api", private: true, uid: limitSpec{10, time.Second}}
	epFundBalance   = endpoint{name: "asset/transfer/query-account-coins-balance", method: http.MethodGet, path: "/v5/asset/transfer/query-account-coins-balance", private: true, uid: limitSpec{5, time.Second}}
	epCoinInfo      = endpoint{name: "asset/coin/query-info", method: http.MethodGet, path: "/v5/asset/coin/query-info", private: true, uid: limitSpec{5, time.Second}}
	epDeposits      = endpoint{name: "asset/deposit/query-record", method: http.MethodGet, path: "/v5/asset/deposit/query-record", private: true, uid: limitSpec{100, time.Minute}}
	epDepositAddr   = endpoint{name: "asset/deposit/query-address", method: http.MethodGet, path: "/v5/asset/deposit/query-address", private: true, uid: limitSpec{300, time.Minute}}
	epWithdraw      = endpoint{name: "asset/withdraw/create", method: http.MethodPost, path: "/v5/asset/withdraw/create", private: true, write: true, uid: limitSpec{5, time.Second}}
	epWithdrawals   = endpoint{name: "asset/withdraw/query-record", method: http.MethodGet, path: "/v5/asset/withdraw/query-record", private: true, uid: limitSpec{300, time.Minute}}
	epTransfer      = endpoint{name: "asset/transfer/inter-transfer", method: http.MethodPost, path: "/v5/asset/transfer/inter-transfer", private: true, write: true, uid: limitSpec{60, time.Minute}}
	epTransfers     = endpoint{name: "asset/transfer/query-inter-transfer-list", method: http.MethodGet, path: "/v5/asset/transfer/query-inter-transfer-list", private: true, uid: limitSpec{60, time.Minute}}
)

// The retCodes the adapter branches on. Source:
// https://bybit-exchange.github.io/docs/v5/error.
const (
	codeOK               = 0
	codeServerTimeout    = 10000
	codeParam            = 10001
	codeTimestamp        = 10002
	codeTooManyVisits    = 10006
	codeServerError      = 10016
	codeIPRateLimit      = 10018
	codeOrderNotExists   = 170213
	codeUTAOrderNotFound = 110001
	codeTransferIDExists = 131214
)

// errorRule is what a Bybit retCode means for the gateway. withdraw
// overrides code on asset/withdraw/create, param names the parameter of a
// parameter error, and detail adds an explanation of the gateway's.
type errorRule struct {
	code     exgate.Code
	withdraw exgate.Code
	param    string
	detail   string
}

// addressBook is what the gateway says when Bybit refuses a withdrawal
// address: Bybit withdraws through the API only to addresses saved in the
// account's withdrawal address book. Source:
// https://bybit-exchange.github.io/docs/v5/asset/withdraw ("Make sure you
// have whitelisted your wallet address").
const addressBook = "; Bybit withdraws through the API only to an address saved in the account's withdrawal address book " +
	"(Assets > Withdraw > Address Book on bybit.com, with the same chain and tag): add it there first"

// errorCodes maps Bybit's retCodes to gateway codes. A code missing here is
// EXCHANGE_ERROR with Bybit's message in the detail; the server-side codes
// (serverCodes), 10002, 10006 and the not-found codes are decided in
// classify. Source: https://bybit-exchange.github.io/docs/v5/error
// ("HTTP Code", "General", "Spot Trade", "Asset"), with ccxt's mapping of
// the same codes as a cross-check.
var errorCodes = map[int]errorRule{
	codeParam: {code: exgate.CodeInvalidParameter},
	10003:     {code: exgate.CodeExchangeAuthFailed, detail: "; the API key is invalid (or belongs to another host: testnet keys do not work on mainnet)"},
	10004:     {code: exgate.CodeExchangeAuthFailed, detail: "; the signature was refused (check the exchange key's secret)"},
	10005:     {code: exgate.CodeExchangeAuthFailed, detail: "; the API key lacks the permission for this call"},
	10007:     {code: exgate.CodeExchangeAuthFailed},
	10008:     {code: exgate.CodeExchangeAuthFailed},
	10009:     {code: exgate.CodeExchangeAuthFailed},
	10010:     {code: exgate.CodeExchangeAuthFailed, detail: "; the API key is bound to other IP addresses"},
	10017:     {code: exgate.CodeExchangeError},
	10024:     {code: exgate.CodeExchangeAuthFailed},
	10027:     {code: exgate.CodeOrderRejected},
	10028:     {code: exgate.CodeExchangeAuthFailed, detail: "; the account is not a unified trading account"},
	10029:     {code: exgate.CodeUnknownSymbol},
	33004:     {code: exgate.CodeExchangeAuthFailed, detail: "; the API key has expired"},

	// Spot trading.
	170121:             {code: exgate.CodeUnknownSymbol},
	170130:             {code: exgate.CodeInvalidParameter},
	170131:             {code: exgate.CodeInsufficientFunds},
	170132:             {code: exgate.CodeOrderRejected},
	170133:             {code: exgate.CodeOrderRejected},
	170134:             {code: exgate.CodeInvalidParameter, param: "price"},
	170135:             {code: exgate.CodeOrderRejected},
	170136:             {code: exgate.CodeQuantityTooSmall},
	170137:             {code: exgate.CodeOrderRejected},
	170139:             {code: exgate.CodeOrderRejected},
	170140:             {code: exgate.CodeQuantityTooSmall},
	170141:             {code: exgate.CodeOrderRejected, detail: "; the orderLinkId was used before"},
	170142:             {code: exgate.CodeOrderRejected},
	170148:             {code: exgate.CodeOrderRejected},
	170124:             {code: exgate.CodeOrderRejected},
	170218:             {code: exgate.CodeOrderRejected, detail: "; the postOnly order would have traded at once"},
	170371:             {code: exgate.CodeOrderRejected},
	170372:             {code: exgate.CodeOrderRejected},
	170381:             {code: exgate.CodeOrderRejected},
	170382:             {code: exgate.CodeOrderRejected},
	110007:             {code: exgate.CodeInsufficientFunds},
	110072:             {code: exgate.CodeOrderRejected, detail: "; the orderLinkId was used before"},
	codeOrderNotExists: {code: exgate.CodeNotFound},

	// Asset: withdrawals and transfers.
	131001:               {code: exgate.CodeInsufficientFunds, detail: "; the funding wallet cannot cover the withdrawal and its fee (Bybit withdraws from the funding wallet: transfer from spot to funding first)"},
	131085:               {code: exgate.CodeInsufficientFunds, detail: "; the funding wallet cannot cover the withdrawal (Bybit withdraws from the funding wallet: transfer from spot to funding first)"},
	131002:               {code: exgate.CodeWithdrawalRejected, detail: addressBook},
	131083:               {code: exgate.CodeWithdrawalRejected, detail: addressBook},
	131093:               {code: exgate.CodeWithdrawalRejected, detail: addressBook},
	131081:               {code: exgate.CodeInvalidParameter, param: "tag", detail: "; this chain takes no tag"},
	131082:               {code: exgate.CodeWithdrawalRejected},
	131084:               {code: exgate.CodeWithdrawalRejected},
	131004:               {code: exgate.CodeWithdrawalRejected},
	131065:               {code: exgate.CodeWithdrawalRejected},
	131096:               {code: exgate.CodeWithdrawalRejected},
	131097:               {code: exgate.CodeWithdrawalRejected},
	131203:               {code: exgate.CodeInvalidParameter},
	131206:               {code: exgate.CodeTransferRejected},
	131208:               {code: exgate.CodeTransferRejected},
	131210:               {code: exgate.CodeInvalidParameter, param: "amount"},
	131211:               {code: exgate.CodeInvalidParameter, param: "to"},
	131212:               {code: exgate.CodeInsufficientFunds, param: "amount"},
	131215:               {code: exgate.CodeInvalidParameter, param: "amount"},
	131228:               {code: exgate.CodeInsufficientFunds},
	131229:               {code: exgate.CodeTransferRejected},
	131231:               {code: exgate.CodeTransferRejected},
	131232:               {code: exgate.CodeTransferRejected},
	codeTransferIDExists: {code: exgate.CodeInvalidParameter, param: "clientTransferId"},
}

// serverCodes are Bybit's server-side failures: the outcome of a write is
// unknown (reconcile before anything is sent again); a read may be retried.
// Source: https://bybit-exchange.github.io/docs/v5/error (10000 "Server
// Timeout", 10016 "Internal server error", 170007 "Timeout waiting for
// response from backend server", 170146 "Order creation timeout", 170147
// "Order cancellation timeout").
var serverCodes = map[int]bool{
	codeServerTimeout: true,
	codeServerError:   true,
	170007:            true,
	170146:            true,
	170147:            true,
}

// orderStatus maps Bybit's orderStatus (and cancelType) to the gateway's.
// Source: https://bybit-exchange.github.io/docs/v5/enum#orderstatus:
// open New, PartiallyFilled, Untriggered; closed Filled, Cancelled,
// PartiallyFilledCanceled (spot: some fill, the rest cancelled), Rejected,
// Triggered, Deactivated.
//
//   - Cancelled or PartiallyFilledCanceled by the user (cancelType
//     CancelByUser) is CANCELED; cancelled by the matching engine (an
//     IOC, FOK or PostOnly order, the rest of a market order) is EXPIRED.
//   - Deactivated (a conditional order cancelled before it triggered) is
//     CANCELED; Triggered and Untriggered are PENDING.
func orderStatus(status, cancelType string, filled bool) exgate.OrderStatus {
	switch status {
	case "New", "Untriggered", "Triggered", "Created":
		if filled {
			return exgate.OrderPartiallyFilled
		}
		return exgate.OrderPending
	case "PartiallyFilled":
		return exgate.OrderPartiallyFilled
	case "Filled":
		return exgate.OrderFilled
	case "Cancelled", "PartiallyFilledCanceled":
		if byUser(cancelType) {
			return exgate.OrderCanceled
		}
		return exgate.OrderExpired
	case "Deactivated":
		return exgate.OrderCanceled
	case "Rejected":
		return exgate.OrderRejected
	}
	return exgate.OrderPending
}

// byUser reports whether a cancelType names a cancel the account asked for.
// Source: https://bybit-exchange.github.io/docs/v5/enum#canceltype
// (CancelByUser, CancelAllBeforeLiq...; spot shows CancelByUser or
// UNKNOWN).
func byUser(cancelType string) bool {
	switch cancelType {
	case "CancelByUser", "CancelBySmp", "CancelByAdmin":
		return true
	}
	return false
}

// rawOrderStatus keeps Bybit's status and, when it says more, its cancel
// type or reject reason: "Cancelled/EC_PostOnlyWillTakeLiquidity".
func rawOrderStatus(status, cancelType, reason string) string {
	if reason != "" && reason != "EC_NoError" {
		return status + "/" + reason
	}
	if cancelType != "" && cancelType != "UNKNOWN" {
		return status + "/" + cancelType
	}
	return status
}

// depositStatuses maps Bybit's deposit status codes. Source:
// https://bybit-exchange.github.io/docs/v5/enum#depositstatus (0 unknown,
// 1 toBeConfirmed, 2 processing, 3 success, 4 deposit failed, 10011
// pending to be credited to the funding pool, 10012 credited to the
// funding pool) and the changelog of 2026-07-16
// (https://bybit-exchange.github.io/docs/changelog/v5): 7 rollback
// processing, 70011 rolled back, 70012 successful after the rollback
// review, 70013 rollback failed, pending manual review. A code not listed
// is pending.
var depositStatuses = map[string]exgate.TransferStatus{
	"0":     exgate.TransferPending,
	"1":     exgate.TransferPending,
	"2":     exgate.TransferPending,
	"3":     exgate.TransferCompleted,
	"4":     exgate.TransferFailed,
	"7":     exgate.TransferPending,
	"10011": exgate.TransferPending,
	"10012": exgate.TransferCompleted,
	"70011": exgate.TransferFailed,
	"70012": exgate.TransferCompleted,
	"70013": exgate.TransferPending,
}

// withdrawalStatuses maps Bybit's withdrawal status. Source:
// https://bybit-exchange.github.io/docs/v5/enum#withdrawstatus
// (SecurityCheck, Pending, success, CancelByUser, Reject, Fail,
// BlockchainConfirmed, MoreInformationRequired, Unknown). BlockchainConfirmed
// is taken as final (ccxt does the same); Unknown ("a rare status") and
// a status not listed are pending.
var withdrawalStatuses = map[string]exgate.TransferStatus{
	"SecurityCheck":           exgate.TransferPending,
	"Pending":                 exgate.TransferPending,
	"success":                 exgate.TransferCompleted,
	"BlockchainConfirmed":     exgate.TransferCompleted,
	"CancelByUser":            exgate.TransferCanceled,
	"Reject":                  exgate.TransferFailed,
	"Fail":                    exgate.TransferFailed,
	"MoreInformationRequired": exgate.TransferPending,
	"Unknown":                 exgate.TransferPending,
}

// transferStatuses maps an inter-transfer's status. Source:
// https://bybit-exchange.github.io/docs/v5/asset/transfer/create-inter-transfer
// (STATUS_UNKNOWN, SUCCESS, PENDING, FAILED).
var transferStatuses = map[string]exgate.TransferStatus{
	"SUCCESS":        exgate.TransferCompleted,
	"PENDING":        exgate.TransferPending,
	"FAILED":         exgate.TransferFailed,
	"STATUS_UNKNOWN": exgate.TransferPending,
}

// statusOf looks a raw status up in a table; unknown statuses are pending,
// so that nothing unknown is ever reported as final.
func statusOf(table map[string]exgate.TransferStatus, raw string) exgate.TransferStatus {
	if st, ok := table[raw]; ok {
		return st
	}
	return exgate.TransferPending
}

// accountTypes are the wallets of exgate (docs/contract.md 2.10) as Bybit
// names them. Source: https://bybit-exchange.github.io/docs/v5/enum#accounttype
// (UNIFIED: unified trading account; FUND: funding account).
var accountTypes = map[exgate.WalletKind]string{
	exgate.WalletSpot:    "UNIFIED",
	exgate.WalletFunding: "FUND",
}

// walletOf reads an account type back.
func walletOf(accountType string) exgate.WalletKind {
	if accountType == "FUND" {
		return exgate.WalletFunding
	}
	return exgate.WalletSpot
}

// bybitChains maps normalized network codes (docs/contract.md 2.3) to
// Bybit's chain ids where they differ; every other code is sent as it is,
// because Bybit names most chains by the usual codes (BTC, ETH, TRX, BSC,
// SOL, XRP...). Source: `chain` values of GET /v5/asset/coin/query-info
// (https://bybit-exchange.github.io/docs/v5/asset/coin-info) as ccxt's
// network table lists them (ARBI, OP, MATIC, CAVAX, BASE).
var bybitChains = map[string]string{
	"ARBITRUM": "ARBI",
	"OPTIMISM": "OP",
	"AVAXC":    "CAVAX",
}

// networkCodes is bybitChains the other way round.
var networkCodes = func() map[string]string {
	out := map[string]string{}
	for n, c := range bybitChains {
		out[c] = n
	}
	return out
}()

// chainOf maps a network code (or an alias) to Bybit's chain id.
func chainOf(network string) string {
	n := rest.NetworkCode(network)
	if c, ok := bybitChains[n]; ok {
		return c
	}
	return n
}

// networkOf maps Bybit's chain id to the network code.
func networkOf(chain string) string {
	c := exgate.NormalizeAsset(chain)
	if n, ok := networkCodes[c]; ok {
		return n
	}
	return c
}

// klinePlan says how a normalized interval is served: natively with one of
// Bybit's intervals (d is its length, 0 for the calendar month), or built
// from a finer normalized interval.
type klinePlan struct {
	native string
	d      time.Duration
	source exgate.Interval
}

// klinePlans maps every normalized interval to Bybit's. Source:
// https://bybit-exchange.github.io/docs/v5/enum#interval (1 3 5 15 30 60
// 120 240 360 720 minutes, D, W, M). 8h does not exist and is built from
// 4h; 3d is built from 1d. W is checked to start on Monday 00:00 UTC and M
// on the first of the month (else they are built from 1d too, see
// market.go).
var klinePlans = map[exgate.Interval]klinePlan{
	exgate.Interval1m:  {native: "1", d: time.Minute},
	exgate.Interval3m:  {native: "3", d: 3 * time.Minute},
	exgate.Interval5m:  {native: "5", d: 5 * time.Minute},
	exgate.Interval15m: {native: "15", d: 15 * time.Minute},
	exgate.Interval30m: {native: "30", d: 30 * time.Minute},
	exgate.Interval1h:  {native: "60", d: time.Hour},
	exgate.Interval2h:  {native: "120", d: 2 * time.Hour},
	exgate.Interval4h:  {native: "240", d: 4 * time.Hour},
	exgate.Interval6h:  {native: "360", d: 6 * time.Hour},
	exgate.Interval8h:  {source: exgate.Interval4h},
	exgate.Interval12h: {native: "720", d: 12 * time.Hour},
	exgate.Interval1d:  {native: "D", d: 24 * time.Hour},
	exgate.Interval3d:  {source: exgate.Interval1d},
	exgate.Interval1w:  {native: "W", d: 7 * 24 * time.Hour, source: exgate.Interval1d},
	exgate.Interval1M:  {native: "M", source: exgate.Interval1d},
}

// Kline and book caps. Source:
// https://bybit-exchange.github.io/docs/v5/market/kline (limit [1, 1000])
// and https://bybit-exchange.github.io/docs/v5/market/orderbook (spot
// limit [1, 1000], default 1).
const (
	maxKlinesPerRequest = 1000
	maxBookLimit        = 1000
)

// timesInForce maps the gateway's time in force to Bybit's. Source:
// https://bybit-exchange.github.io/docs/v5/enum#timeinforce (GTC, IOC,
// FOK, PostOnly).
func bybitTimeInForce(tif exgate.TimeInForce, postOnly bool) string {
	if postOnly {
		return "PostOnly"
	}
	return string(tif)
}

// fromBybitTimeInForce reads Bybit's timeInForce back: PostOnly is a GTC
// post-only order.
func fromBybitTimeInForce(s string) (exgate.TimeInForce, bool) {
	switch strings.ToUpper(s) {
	case "IOC":
		return exgate.IOC, false
	case "FOK":
		return exgate.FOK, false
	case "POSTONLY":
		return exgate.GTC, true
	}
	return exgate.GTC, false
}
