package binance

import (
	"net/http"
	"strings"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

// orderStatuses maps Binance order states to normalized ones.
// Source: binance-spot-api-docs enums.md, "Order status (status)".
// PENDING_CANCEL is documented as unused; it is kept PENDING (not final) so
// that an order in that state is looked at again.
var orderStatuses = map[string]exgate.OrderStatus{
	"NEW":              exgate.OrderPending,
	"PENDING_NEW":      exgate.OrderPending,
	"PARTIALLY_FILLED": exgate.OrderPartiallyFilled,
	"FILLED":           exgate.OrderFilled,
	"CANCELED":         exgate.OrderCanceled,
	"PENDING_CANCEL":   exgate.OrderPending,
	"REJECTED":         exgate.OrderRejected,
	"EXPIRED":          exgate.OrderExpired,
	"EXPIRED_IN_MATCH": exgate.OrderExpired,
}

// orderStatus maps a Binance order status; an unknown one is PENDING so that
// the gateway keeps reconciling rather than treating it as final.
func orderStatus(raw string) exgate.OrderStatus {
	if s, ok := orderStatuses[raw]; ok {
		return s
	}
	return exgate.OrderPending
}

// depositStatuses maps the deposit history status codes.
// Source: developers.binance.com/docs/wallet/capital/deposite-history
// ("0:pending, 6:credited but cannot withdraw, 7:Wrong Deposit, 8:Waiting
// User confirm, 1:success, 2:rejected"). Status 6 is completed: the funds
// are on the account (tradable) even though they cannot be withdrawn yet.
var depositStatuses = map[int]exgate.TransferStatus{
	0: exgate.TransferPending,
	1: exgate.TransferCompleted,
	2: exgate.TransferFailed,
	6: exgate.TransferCompleted,
	7: exgate.TransferFailed,
	8: exgate.TransferPending,
}

// withdrawStatuses maps the withdraw history status codes; they are a
// different table from the deposit codes.
// Source: developers.binance.com/docs/wallet/capital/withdraw-history
// ("0:Email Sent, 1:Cancelled, 2:Awaiting Approval, 3:Rejected,
// 4:Processing, 5:Failure, 6:Completed").
var withdrawStatuses = map[int]exgate.TransferStatus{
	0: exgate.TransferPending,
	1: exgate.TransferCanceled,
	2: exgate.TransferPending,
	3: exgate.TransferFailed,
	4: exgate.TransferPending,
	5: exgate.TransferFailed,
	6: exgate.TransferCompleted,
}

// transferStatus looks code up in table; an unknown code is pending (not
// final), so nothing is reported as settled that Binance did not say is.
func transferStatus(table map[int]exgate.TransferStatus, code int) exgate.TransferStatus {
	if s, ok := table[code]; ok {
		return s
	}
	return exgate.TransferPending
}

// klineIntervals maps normalized intervals to Binance's names. Binance
// serves every normalized interval natively, with the same spelling (1M is
// the month, 1w the week starting Monday 00:00 UTC).
// Source: binance-spot-api-docs enums.md, "Kline/Candlestick chart intervals".
var klineIntervals = map[exgate.Interval]string{
	exgate.Interval1m:  "1m",
	exgate.Interval3m:  "3m",
	exgate.Interval5m:  "5m",
	exgate.Interval15m: "15m",
	exgate.Interval30m: "30m",
	exgate.Interval1h:  "1h",
	exgate.Interval2h:  "2h",
	exgate.Interval4h:  "4h",
	exgate.Interval6h:  "6h",
	exgate.Interval8h:  "8h",
	exgate.Interval12h: "12h",
	exgate.Interval1d:  "1d",
	exgate.Interval3d:  "3d",
	exgate.Interval1w:  "1w",
	exgate.Interval1M:  "1M",
}

// depthLimits are the order book depths GET /api/v3/depth was documented to
// accept. Any value from 1 to 5000 is accepted since 2022-02-24
// (CHANGELOG.md), but asking for the next listed depth costs the same weight
// (the weight bands below end on listed depths) and works with both
// versions, so the adapter asks for it and trims.
// Source: binance-spot-api-docs rest-api.md, "Order book".
var depthLimits = []int{5, 10, 20, 50, 100, 500, 1000, 5000}

// depthLimit returns the smallest listed depth at or above limit.
func depthLimit(limit int) int {
	for _, l := range depthLimits {
		if l >= limit {
			return l
		}
	}
	return depthLimits[len(depthLimits)-1]
}

// depthWeight is the request weight of GET /api/v3/depth for a limit:
// 1-100 -> 5, 101-500 -> 25, 501-1000 -> 50, 1001-5000 -> 250.
// Source: binance-spot-api-docs rest-api.md, "Order book" (2023-10-19).
func depthWeight(limit int) int {
	switch {
	case limit <= 100:
		return 5
	case limit <= 500:
		return 25
	case limit <= 1000:
		return 50
	}
	return 250
}

// budget names a request budget Binance counts against.
type budget int

// Budgets. Source: binance-spot-api-docs rest-api.md "LIMITS" (REQUEST_WEIGHT
// per IP, ORDERS per account) and developers.binance.com "Limits" for /sapi
// (IP-limited endpoints 12,000 per minute, UID-limited 180,000 per minute,
// withdraw history 180,000 per second per IP).
const (
	budgetWeight   budget = iota // /api REQUEST_WEIGHT, per IP
	budgetSapiIP                 // /sapi Weight(IP), per IP
	budgetSapiUID                // /sapi Weight(UID), per account
	budgetSapiIP1s               // /sapi per-second IP limit (withdraw history)
)

// endpoint describes one Binance REST call: where it goes, how it is
// authenticated, what it costs and whether it may be retried.
type endpoint struct {
	name   string
	method string
	path   string
	signed bool
	budget budget
	weight int
	// write marks calls that change state (orders, withdrawals): never
	// retried, and an ambiguous outcome is EXCHANGE_TIMEOUT.
	write bool
	// order marks calls counted against the account's ORDERS limit.
	order bool
}

// Endpoints and their weights.
// Source: binance-spot-api-docs rest-api.md (each endpoint's "Weight") and
// developers.binance.com/docs/wallet/capital/* ("Request Weight(IP)" /
// "Request Weight(UID)"). POST /api/v3/order costs 0 when it succeeds since
// 2026-04-02 (CHANGELOG.md); it is reserved at its failure weight of 1.
var (
	epTime         = endpoint{name: "time", method: http.MethodGet, path: "/api/v3/time", budget: budgetWeight, weight: 1}
	epExchangeInfo = endpoint{name: "exchangeInfo", method: http.MethodGet, path: "/api/v3/exchangeInfo", budget: budgetWeight, weight: 20}
	epKlines       = endpoint{name: "klines", method: http.MethodGet, path: "/api/v3/klines", budget: budgetWeight, weight: 2}
	epDepth        = endpoint{name: "depth", method: http.MethodGet, path: "/api/v3/depth", budget: budgetWeight, weight: 5} // weight by limit: depthWeight
	epAccount      = endpoint{name: "account", method: http.MethodGet, path: "/api/v3/account", signed: true, budget: budgetWeight, weight: 20}
	epNewOrder     = endpoint{name: "newOrder", method: http.MethodPost, path: "/api/v3/order", signed: true, budget: budgetWeight, weight: 1, write: true, order: true}
	epQueryOrder   = endpoint{name: "queryOrder", method: http.MethodGet, path: "/api/v3/order", signed: true, budget: budgetWeight, weight: 4}
	epMyTrades     = endpoint{name: "myTrades", method: http.MethodGet, path: "/api/v3/myTrades", signed: true, budget: budgetWeight, weight: 5}  // with orderId
	epMyTradesAll  = endpoint{name: "myTrades", method: http.MethodGet, path: "/api/v3/myTrades", signed: true, budget: budgetWeight, weight: 20} // without orderId
	// POST /api/v3/order/test changes nothing, so it is a read: retried
	// like one. Weight 1 (20 with computeCommissionRates, not sent).
	epTestOrder = endpoint{name: "testOrder", method: http.MethodPost, path: "/api/v3/order/test", signed: true, budget: budgetWeight, weight: 1}
	// DELETE /api/v3/order costs 0 when it succeeds since 2026-04-02
	// (CHANGELOG.md); reserved at its failure weight of 1. Not counted
	// against ORDERS (only new orders are).
	epCancelOrder = endpoint{name: "cancelOrder", method: http.MethodDelete, path: "/api/v3/order", signed: true, budget: budgetWeight, weight: 1, write: true}
	// GET /api/v3/openOrders: 6 with symbol, 80 without (set per call).
	epOpenOrders   = endpoint{name: "openOrders", method: http.MethodGet, path: "/api/v3/openOrders", signed: true, budget: budgetWeight, weight: 6}
	epAllOrders    = endpoint{name: "allOrders", method: http.MethodGet, path: "/api/v3/allOrders", signed: true, budget: budgetWeight, weight: 20}
	epDepositHist  = endpoint{name: "depositHistory", method: http.MethodGet, path: "/sapi/v1/capital/deposit/hisrec", signed: true, budget: budgetSapiIP, weight: 1}
	epDepositAddr  = endpoint{name: "depositAddress", method: http.MethodGet, path: "/sapi/v1/capital/deposit/address", signed: true, budget: budgetSapiIP, weight: 10}
	epCoinConfig   = endpoint{name: "coinConfig", method: http.MethodGet, path: "/sapi/v1/capital/config/getall", signed: true, budget: budgetSapiIP, weight: 10}
	epWithdraw     = endpoint{name: "withdraw", method: http.MethodPost, path: "/sapi/v1/capital/withdraw/apply", signed: true, budget: budgetSapiUID, weight: 900, write: true}
	epWithdrawHist = endpoint{name: "withdrawHistory", method: http.MethodGet, path: "/sapi/v1/capital/withdraw/history", signed: true, budget: budgetSapiIP1s, weight: 18000}
	// The wallet transfers (transfer.go). Source:
	// developers.binance.com/docs/wallet/asset/user-universal-transfer
	// ("Weight(UID): 900"), .../query-user-universal-transfer ("Weight(IP):
	// 1") and .../funding-wallet ("Weight(IP): 1"; a POST that reads, so
	// retried like a read).
	epTransfer      = endpoint{name: "universalTransfer", method: http.MethodPost, path: "/sapi/v1/asset/transfer", signed: true, budget: budgetSapiUID, weight: 900, write: true}
	epTransferHist  = endpoint{name: "transferHistory", method: http.MethodGet, path: "/sapi/v1/asset/transfer", signed: true, budget: budgetSapiIP, weight: 1}
	epFundingAssets = endpoint{name: "fundingAsset", method: http.MethodPost, path: "/sapi/v1/asset/get-funding-asset", signed: true, budget: budgetSapiIP, weight: 1}
	defaultLimitSet = rateLimits{
		weight:    limitSpec{limit: 6000, window: minute},
		ordersWin: limitSpec{limit: 50, window: 10 * second},
	}
)

// Documented /sapi budgets (not published in exchangeInfo).
var (
	sapiIPLimit   = limitSpec{limit: 12000, window: minute}
	sapiUIDLimit  = limitSpec{limit: 180000, window: minute}
	sapiIP1sLimit = limitSpec{limit: 180000, window: second}
)

// networkToBinance maps a network code (docs/contract.md 2.3), or one of
// its aliases (rest.NetworkCode), to Binance's network name: Binance names
// the networks by the normalized codes (BTC, ETH, BSC, TRX, SOL, XRP, LTC,
// DOGE, MATIC, ARBITRUM, OPTIMISM, AVAXC, ...).
// Source: GET /sapi/v1/capital/config/getall networkList[].network values.
func networkToBinance(n string) string { return rest.NetworkCode(n) }

// networkFromBinance maps Binance's network name back to the normalized
// code. Binance's names are the normalized codes (the aliases above are
// input conveniences only).
func networkFromBinance(n string) string { return exgate.NormalizeAsset(n) }

// timesInForce maps the gateway's times in force to Binance's, which
// spell them the same way. LIMIT_MAKER (postOnly) takes none.
// Source: binance-spot-api-docs enums.md, "Time in force (timeInForce)":
// GTC "Good Til Canceled", IOC "Immediate Or Cancel" (fill what can be
// filled, the rest expires), FOK "Fill or Kill" (expires unfilled unless
// it fills completely).
var timesInForce = map[exgate.TimeInForce]string{
	exgate.GTC: "GTC",
	exgate.IOC: "IOC",
	exgate.FOK: "FOK",
}

// timesInForceFrom maps Binance's times in force back.
var timesInForceFrom = map[string]exgate.TimeInForce{
	"GTC": exgate.GTC,
	"IOC": exgate.IOC,
	"FOK": exgate.FOK,
}

// cancelRefused lists the codes of a cancel Binance refused without
// canceling: the order is read to tell an unknown order from one that
// ended first. Source: errors.md, -2011 CANCEL_REJECTED ("Unknown order
// sent.", also for an order already filled, canceled or expired;
// "Order was not canceled due to cancel restrictions.") and -2013.
var cancelRefused = map[int]bool{
	codeCancelRejected: true,
	codeNoSuchOrder:    true,
}

// Binance error codes the adapter branches on.
// Source: binance-spot-api-docs errors.md.
const (
	codeUnknown         = -1000
	codeDisconnected    = -1001
	codeUnauthorized    = -1002
	codeTooManyRequests = -1003
	codeUnexpectedResp  = -1006
	codeTimeout         = -1007
	codeServerBusy      = -1008
	codeInvalidMessage  = -1013
	codeTooManyOrders   = -1015
	codeShuttingDown    = -1016
	codeInvalidTime     = -1021
	codeBadSignature    = -1022
	codeBadInterval     = -1120
	codeBadSymbol       = -1121
	codeOrderRejected   = -2010
	codeCancelRejected  = -2011
	codeNoSuchOrder     = -2013
	codeBadAPIKeyFormat = -2014
	codeRejectedKey     = -2015
	codeOrderArchived   = -2026
)

// errorCodes maps Binance error codes to gateway codes. Codes missing here
// are EXCHANGE_ERROR with Binance's message in the detail; -2010 and -1013
// are refined by message in classify, and the "outcome unknown" codes
// (-1000, -1001, -1006, -1007) depend on whether the call was a write.
// Source: binance-spot-api-docs errors.md; the -4xxx wallet codes from the
// Binance wallet error list (UNCONFIRMED: see docs/exchanges/binance.md).
var errorCodes = map[int]exgate.Code{
	codeUnauthorized:    exgate.CodeExchangeAuthFailed,
	codeTooManyRequests: exgate.CodeExchangeUnavailable,
	codeServerBusy:      exgate.CodeExchangeUnavailable,
	codeTooManyOrders:   exgate.CodeExchangeUnavailable,
	codeShuttingDown:    exgate.CodeExchangeUnavailable,
	codeBadSignature:    exgate.CodeExchangeAuthFailed,
	codeBadAPIKeyFormat: exgate.CodeExchangeAuthFailed,
	codeRejectedKey:     exgate.CodeExchangeAuthFailed,
	codeBadInterval:     exgate.CodeInvalidParameter,
	codeBadSymbol:       exgate.CodeUnknownSymbol,
	codeInvalidMessage:  exgate.CodeOrderRejected,
	codeOrderRejected:   exgate.CodeOrderRejected,
	-4026:               exgate.CodeInsufficientFunds,  // withdraw: insufficient balance
	-4106:               exgate.CodeInvalidParameter,   // TAG_NOT_SUPPORTED_FOR_NETWORK
	-4007:               exgate.CodeInvalidParameter,   // address validation failed
	-4008:               exgate.CodeInvalidParameter,   // address tag validation failed
	-4019:               exgate.CodeWithdrawalRejected, // asset not open for withdrawal
	-4021:               exgate.CodeWithdrawalRejected, // amount not a multiple
	-4022:               exgate.CodeWithdrawalRejected, // under the minimum
	-4028:               exgate.CodeWithdrawalRejected, // amount not above the fee
	// The universal transfer's refusals (transfer.go), from the /sapi
	// error list (UNCONFIRMED: see docs/exchanges/binance.md).
	-5002: exgate.CodeInsufficientFunds, // "You have insufficient balance."
	-5003: exgate.CodeInsufficientFunds, // "You don't have this asset."
	-5013: exgate.CodeInsufficientFunds, // "Asset transfer failed: insufficient balance"
	-5007: exgate.CodeInvalidParameter,  // "Quantity must be greater than zero."
	-5010: exgate.CodeTransferRejected,  // "Asset transfer fail."
	-5012: exgate.CodeTransferRejected,  // "Asset transfer is in progress."
	-9000: exgate.CodeInsufficientFunds, // USER_OUT_OF_TRANSFER_FLOAT: the wallet holds less
}

// unknownOutcome lists the codes whose message says the execution status is
// unknown: a write answered with one of them may have been executed.
// Source: binance-spot-api-docs errors.md (-1006 "Execution status unknown",
// -1007 "Send status unknown; execution status unknown"); -1000 and -1001
// do not say it was not executed, so they are treated the same way.
var unknownOutcome = map[int]bool{
	codeUnknown:        true,
	codeDisconnected:   true,
	codeUnexpectedResp: true,
	codeTimeout:        true,
}

// errorParams names the request parameter an error code is about, for the
// problem's param field.
var errorParams = map[int]string{
	codeBadInterval: "interval",
	-4106:           "tag",
	-4007:           "address",
	-4008:           "tag",
	-5002:           "amount",
	-5003:           "amount",
	-5013:           "amount",
	-5007:           "amount",
	-9000:           "amount",
}

// transferTypes are the universal transfer types between the two wallets
// the gateway names (docs/contract.md 2.10): Binance's MAIN is the spot
// wallet. Source: developers.binance.com/docs/wallet/asset/user-universal-transfer.
var transferTypes = map[[2]exgate.WalletKind]string{
	{exgate.WalletSpot, exgate.WalletFunding}: "MAIN_FUNDING",
	{exgate.WalletFunding, exgate.WalletSpot}: "FUNDING_MAIN",
}

// transferStatuses maps the transfer history's status. Source:
// developers.binance.com/docs/wallet/asset/query-user-universal-transfer
// ("status: CONFIRMED / FAILED / PENDING"). An unknown one is pending.
var transferStatuses = map[string]exgate.TransferStatus{
	"CONFIRMED": exgate.TransferCompleted,
	"FAILED":    exgate.TransferFailed,
	"PENDING":   exgate.TransferPending,
}

// rejectMessages are the -2010 NEW_ORDER_REJECTED reasons the adapter
// tells apart, by a lower-case part of the message. Source: errors.md,
// "Messages for -1010 ERROR_MSG_RECEIVED, -2010 NEW_ORDER_REJECTED, and
// -2011 CANCEL_REJECTED". "Order would immediately match and take." is
// the answer to a LIMIT_MAKER (postOnly) order that would trade.
var rejectMessages = []struct {
	text string
	code exgate.Code
}{
	{"insufficient balance", exgate.CodeInsufficientFunds},
	{"order would immediately match and take", exgate.CodeOrderRejected},
	{"duplicate order sent", exgate.CodeOrderRejected},
	{"market is closed", exgate.CodeOrderRejected},
}

// refineByMessage sharpens the code of -2010 and -1013 answers, whose
// messages carry the engine's reason. Source: errors.md "Messages for
// -1010 ERROR_MSG_RECEIVED, -2010 NEW_ORDER_REJECTED" and filters.md.
func refineByMessage(code int, msg string) (exgate.Code, bool) {
	m := strings.ToLower(msg)
	switch code {
	case codeOrderRejected:
		for _, r := range rejectMessages {
			if strings.Contains(m, r.text) {
				return r.code, true
			}
		}
	case codeInvalidMessage:
		if strings.Contains(m, "min_notional") || strings.Contains(m, "filter failure: notional") {
			return exgate.CodeQuantityTooSmall, true
		}
	}
	return "", false
}
