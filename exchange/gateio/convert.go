package gateio

import (
	"net/http"
	"strings"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

// budget names one of Gate's rate-limit families.
type budget int

const (
	// budgetPublic: every public endpoint, per endpoint, per IP.
	budgetPublic budget = iota
	// budgetSpotPrivate: private spot reads (accounts, orders), per
	// endpoint, per account.
	budgetSpotPrivate
	// budgetOrder: spot order placement, per account and per pair.
	budgetOrder
	// budgetWallet: wallet reads (deposits, withdrawals, addresses,
	// fees), per endpoint, per account.
	budgetWallet
	// budgetWithdraw: POST /withdrawals, per account.
	budgetWithdraw
	// budgetCancel: spot order cancellation, per account.
	budgetCancel
)

// limitSpec is one of Gate's budgets: limit requests per window.
type limitSpec struct {
	limit  int
	window time.Duration
}

// budgets are Gate's documented limits.
// Source: Gate API v4 docs, "Frequency limit rule" (v4.99): public
// endpoints 200 requests / 10 s per endpoint per IP; spot order placement
// and amendment 10 requests / s per UID per market; other spot private
// endpoints 200 / 10 s per endpoint; POST /withdrawals 1 request / 3 s;
// other wallet endpoints 200 / 10 s per endpoint; spot cancellation 200
// requests / s.
var budgets = map[budget]limitSpec{
	budgetPublic:      {limit: 200, window: 10 * time.Second},
	budgetSpotPrivate: {limit: 200, window: 10 * time.Second},
	budgetOrder:       {limit: 10, window: time.Second},
	budgetWallet:      {limit: 200, window: 10 * time.Second},
	budgetWithdraw:    {limit: 1, window: 3 * time.Second},
	budgetCancel:      {limit: 200, window: time.Second},
}

// rateLimit expresses a window budget for the Limiter: a burst of a fifth
// of the budget and a steady rate of the rest, so that no window of the
// budget's length ever holds more than the limit.
func (l limitSpec) rateLimit() exgate.RateLimit {
	burst := max(l.limit/5, 1)
	return exgate.RateLimit{Rate: max(l.limit-burst, 1), Period: l.window, Burst: burst}
}

// endpoint is one Gate REST route the adapter calls. path is relative to
// /api/v4; routes with an id in the path get it per request.
type endpoint struct {
	name    string
	method  string
	path    string
	private bool
	// write marks calls that change state (orders, withdrawals): never
	// retried, and an unknown outcome is EXCHANGE_TIMEOUT.
	write  bool
	budget budget
}

// The endpoints. Source: Gate API v4 docs, Spot and Wallet sections.
var (
	epTime           = endpoint{name: "spot/time", method: http.MethodGet, path: "/spot/time", budget: budgetPublic}
	epPairs          = endpoint{name: "spot/currency_pairs", method: http.MethodGet, path: "/spot/currency_pairs", budget: budgetPublic}
	epCandles        = endpoint{name: "spot/candlesticks", method: http.MethodGet, path: "/spot/candlesticks", budget: budgetPublic}
	epBook           = endpoint{name: "spot/order_book", method: http.MethodGet, path: "/spot/order_book", budget: budgetPublic}
	epChains         = endpoint{name: "wallet/currency_chains", method: http.MethodGet, path: "/wallet/currency_chains", budget: budgetPublic}
	epAccounts       = endpoint{name: "spot/accounts", method: http.MethodGet, path: "/spot/accounts", private: true, budget: budgetSpotPrivate}
	epCreateOrder    = endpoint{name: "spot/orders create", method: http.MethodPost, path: "/spot/orders", private: true, write: true, budget: budgetOrder}
	epGetOrder       = endpoint{name: "spot/orders/{order_id}", method: http.MethodGet, path: "/spot/orders/", private: true, budget: budgetSpotPrivate}
	epListOrders     = endpoint{name: "spot/orders list", method: http.MethodGet, path: "/spot/orders", private: true, budget: budgetSpotPrivate}
	epDeposits       = endpoint{name: "wallet/deposits", method: http.MethodGet, path: "/wallet/deposits", private: true, budget: budgetWallet}
	epDepositAddress = endpoint{name: "wallet/deposit_address", method: http.MethodGet, path: "/wallet/deposit_address", private: true, budget: budgetWallet}
	epWithdrawals    = endpoint{name: "wallet/withdrawals", method: http.MethodGet, path: "/wallet/withdrawals", private: true, budget: budgetWallet}
	epWithdrawStatus = endpoint{name: "wallet/withdraw_status", method: http.MethodGet, path: "/wallet/withdraw_status", private: true, budget: budgetWallet}
	epWithdraw       = endpoint{name: "withdrawals", method: http.MethodPost, path: "/withdrawals", private: true, write: true, budget: budgetWithdraw}
	// The order lifecycle (docs/contract.md 2.4). A cancel is a write: never
	// retried, and a lost answer is EXCHANGE_TIMEOUT, settled by reading
	// the order.
	epCancelOrder = endpoint{name: "spot/orders/{order_id} cancel", method: http.MethodDelete, path: "/spot/orders/", private: true, write: true, budget: budgetCancel}
	epOpenOrders  = endpoint{name: "spot/open_orders", method: http.MethodGet, path: "/spot/open_orders", private: true, budget: budgetSpotPrivate}
	epMyTrades    = endpoint{name: "spot/my_trades", method: http.MethodGet, path: "/spot/my_trades", private: true, budget: budgetSpotPrivate}
)

// timesInForce maps the gateway's time in force to Gate's `time_in_force`
// of a limit order. Source: Gate API v4 docs, "Create an order"
// time_in_force: gtc (GoodTillCancelled, the default), ioc
// (ImmediateOrCancelled, taker only), poc (PendingOrCancelled, maker only:
// the post-only order), fok (FillOrKill). postOnly is poc, only with GTC.
var timesInForce = map[exgate.TimeInForce]string{
	exgate.GTC: "gtc",
	exgate.IOC: "ioc",
	exgate.FOK: "fok",
}

// gateTimeInForce returns Gate's time_in_force of a limit order.
func gateTimeInForce(tif exgate.TimeInForce, postOnly bool) string {
	if postOnly {
		return "poc"
	}
	return timesInForce[tif]
}

// fromGateTimeInForce reads Gate's time_in_force back: poc is a GTC
// post-only order; an unknown value is reported as GTC.
func fromGateTimeInForce(s string) (exgate.TimeInForce, bool) {
	switch s {
	case "ioc":
		return exgate.IOC, false
	case "fok":
		return exgate.FOK, false
	case "poc":
		return exgate.GTC, true
	}
	return exgate.GTC, false
}

// orderStatus maps Gate's order status and finish_as to the gateway's
// status. filled reports whether anything was executed.
// Source: Gate API v4 docs, Spot "Order" model (status: open, closed,
// cancelled; finish_as: open, filled, cancelled, liquidate_cancelled,
// small, depth_not_enough, trader_not_enough, ioc, poc, fok, stp,
// price_protect_cancelled, unknown).
//
//   - open: PENDING, or PARTIALLY_FILLED once something filled.
//   - closed: FILLED (a market buy may leave unspendable quote dust in
//     `left` and still be closed).
//   - cancelled by the matching engine (ioc, depth_not_enough,
//     trader_not_enough, fok, poc, price_protect_cancelled): EXPIRED, with
//     the executed part in executedQuantity; "small" (the rest was too small
//     to trade) after a fill is FILLED, since nothing more can execute.
//   - cancelled otherwise (by the user, stp, liquidation, unknown):
//     CANCELED.
func orderStatus(status, finishAs string, filled bool) exgate.OrderStatus {
	switch status {
	case "open":
		if filled {
			return exgate.OrderPartiallyFilled
		}
		return exgate.OrderPending
	case "closed":
		return exgate.OrderFilled
	case "cancelled":
		switch finishAs {
		case "small":
			if filled {
				return exgate.OrderFilled
			}
			return exgate.OrderExpired
		case "ioc", "depth_not_enough", "trader_not_enough", "fok", "poc", "price_protect_cancelled":
			return exgate.OrderExpired
		}
		return exgate.OrderCanceled
	}
	return exgate.OrderPending
}

// rawOrderStatus keeps both of Gate's fields: "cancelled/ioc".
func rawOrderStatus(status, finishAs string) string {
	if finishAs == "" || finishAs == status {
		return status
	}
	return status + "/" + finishAs
}

// depositStatuses maps Gate's deposit status codes.
// Source: Gate API v4 docs, Wallet "Get deposit records" (v4.99: REVIEW,
// PEND, DONE, INVALID, TRACK, BLOCKED, DEP_CREDITED) and the older shared
// deposit/withdrawal status list (CANCEL, REQUEST, MANUAL, BCODE, EXTPEND,
// FAIL, VERIFY, PROCES, DMOVE, SPLITPEND). DONE means credited to the spot
// account; DEP_CREDITED means credited but not yet withdrawable. A code not
// listed is pending (see transferStatus).
var depositStatuses = map[string]exgate.TransferStatus{
	"DONE":         exgate.TransferCompleted,
	"DEP_CREDITED": exgate.TransferCompleted,
	"BCODE":        exgate.TransferCompleted,
	"PEND":         exgate.TransferPending,
	"TRACK":        exgate.TransferPending,
	"REVIEW":       exgate.TransferPending,
	"MANUAL":       exgate.TransferPending,
	"REQUEST":      exgate.TransferPending,
	"VERIFY":       exgate.TransferPending,
	"PROCES":       exgate.TransferPending,
	"EXTPEND":      exgate.TransferPending,
	"DMOVE":        exgate.TransferPending,
	"SPLITPEND":    exgate.TransferPending,
	"INVALID":      exgate.TransferFailed,
	"BLOCKED":      exgate.TransferFailed,
	"FAIL":         exgate.TransferFailed,
	"CANCEL":       exgate.TransferCanceled,
}

// withdrawalStatuses maps Gate's withdrawal status codes.
// Source: Gate API v4 docs, Wallet "Get withdrawal records" (v4.99: DONE,
// CANCEL, REQUEST, MANUAL, BCODE, EXTPEND, FAIL, INVALID, VERIFY, PROCES,
// PEND, DMOVE, REVIEW) and the SDK's WithdrawalRecord model (CANCELPEND,
// FVERIFY, LOCKED, REJECT). FAIL is "failed on chain, pending
// confirmation": still pending until Gate settles it as CANCEL or DONE.
// DONE is completed only once block_number > 0 when the record carries a
// block number (withdrawalStatus). A code not listed is pending.
var withdrawalStatuses = map[string]exgate.TransferStatus{
	"DONE":       exgate.TransferCompleted,
	"BCODE":      exgate.TransferCompleted,
	"CANCEL":     exgate.TransferCanceled,
	"INVALID":    exgate.TransferFailed,
	"REJECT":     exgate.TransferFailed,
	"REQUEST":    exgate.TransferPending,
	"MANUAL":     exgate.TransferPending,
	"EXTPEND":    exgate.TransferPending,
	"FAIL":       exgate.TransferPending,
	"VERIFY":     exgate.TransferPending,
	"FVERIFY":    exgate.TransferPending,
	"PROCES":     exgate.TransferPending,
	"PEND":       exgate.TransferPending,
	"DMOVE":      exgate.TransferPending,
	"REVIEW":     exgate.TransferPending,
	"CANCELPEND": exgate.TransferPending,
	"LOCKED":     exgate.TransferPending,
}

// transferStatus looks a raw code up in a table; unknown codes are
// pending, so that nothing unknown is ever reported as final.
func transferStatus(table map[string]exgate.TransferStatus, raw string) exgate.TransferStatus {
	if st, ok := table[strings.ToUpper(raw)]; ok {
		return st
	}
	return exgate.TransferPending
}

// withdrawalStatus maps a withdrawal record: DONE with a block number of
// 0 is not yet on chain (docs: "DONE: Completed (block_number > 0 is
// considered to be truly completed)"), so it stays pending.
func withdrawalStatus(raw, blockNumber string) exgate.TransferStatus {
	st := transferStatus(withdrawalStatuses, raw)
	if st == exgate.TransferCompleted && strings.ToUpper(raw) == "DONE" && strings.TrimSpace(blockNumber) == "0" {
		return exgate.TransferPending
	}
	return st
}

// gateChains maps normalized network codes (docs/contract.md 2.3) to Gate's chain
// codes where they differ; every other code is sent as it is, because Gate
// names most chains by the usual codes (BTC, ETH, TRX, BSC, SOL, XRP, LTC,
// DOGE, ...). Source: GET /wallet/currency_chains `chain` values as listed
// in Gate's docs and the chain table of ccxt's Gate adapter (POL, OPETH,
// ARBEVM, BASEEVM, AVAX_C).
var gateChains = map[string]string{
	"MATIC":    "POL",
	"OPTIMISM": "OPETH",
	"ARBITRUM": "ARBEVM",
	"BASE":     "BASEEVM",
	"AVAXC":    "AVAX_C",
}

// networkCodes is gateChains the other way round, plus Gate's older
// Polygon chain code.
var networkCodes = func() map[string]string {
	out := map[string]string{"MATIC": "MATIC"}
	for n, c := range gateChains {
		out[c] = n
	}
	return out
}()

// chainOf maps a network code (or an alias) to Gate's chain code.
func chainOf(network string) string {
	n := rest.NetworkCode(network)
	if c, ok := gateChains[n]; ok {
		return c
	}
	return n
}

// networkOf maps Gate's chain code to the network code.
func networkOf(chain string) string {
	c := exgate.NormalizeAsset(chain)
	if n, ok := networkCodes[c]; ok {
		return n
	}
	return c
}

// gateInterval is one of Gate's candlestick intervals.
type gateInterval struct {
	name string
	// d is the bucket length; 0 for 30d, a calendar month.
	d time.Duration
}

// klinePlan says how a normalized interval is served: natively with one
// of Gate's intervals, or built from a finer normalized interval.
type klinePlan struct {
	native gateInterval
	source exgate.Interval
}

// klinePlans maps every normalized interval to Gate's.
// Source: Gate API v4 docs, "Market candlesticks" `interval`: 10s 1m 5m
// 15m 30m 1h 4h 8h 1d 7d 30d ("30d represents a calendar month"). 3m, 2h,
// 6h, 12h and 3d do not exist and are built from 1m, 1h, 1h, 4h and 1d;
// 1w is built from 1d because the weekday Gate's 7d buckets start on is
// not documented; 1M uses 30d, checked to start on the first of the month
// UTC (else it is built from 1d too).
var klinePlans = map[exgate.Interval]klinePlan{
	exgate.Interval1m:  {native: gateInterval{"1m", time.Minute}},
	exgate.Interval3m:  {source: exgate.Interval1m},
	exgate.Interval5m:  {native: gateInterval{"5m", 5 * time.Minute}},
	exgate.Interval15m: {native: gateInterval{"15m", 15 * time.Minute}},
	exgate.Interval30m: {native: gateInterval{"30m", 30 * time.Minute}},
	exgate.Interval1h:  {native: gateInterval{"1h", time.Hour}},
	exgate.Interval2h:  {source: exgate.Interval1h},
	exgate.Interval4h:  {native: gateInterval{"4h", 4 * time.Hour}},
	exgate.Interval6h:  {source: exgate.Interval1h},
	exgate.Interval8h:  {native: gateInterval{"8h", 8 * time.Hour}},
	exgate.Interval12h: {source: exgate.Interval4h},
	exgate.Interval1d:  {native: gateInterval{"1d", 24 * time.Hour}},
	exgate.Interval3d:  {source: exgate.Interval1d},
	exgate.Interval1w:  {source: exgate.Interval1d},
	exgate.Interval1M:  {native: gateInterval{"30d", 0}, source: exgate.Interval1d},
}

// Candlestick caps. Source: Gate API v4 docs ("a maximum of 1000 points
// per request"), and Gate's INVALID_PARAM_VALUE answers quoted in ccxt
// issues ("Maximum 1000 data points are allowed per request", "Maximum
// 10000 points ago are allowed").
const (
	maxCandlesPerRequest = 1000
	maxCandlesAgo        = 10000
)

// maxBookLimit is the deepest order book Gate serves on spot (limit=1000
// accepted, 1001 refused, per ccxt PR #26664).
const maxBookLimit = 1000

// errorRule is what a Gate error label means for the gateway. orderCode
// and withdrawCode override code for calls of that kind.
type errorRule struct {
	code         exgate.Code
	orderCode    exgate.Code
	withdrawCode exgate.Code
	param        string
}

// Labels the adapter branches on.
const (
	labelRequestExpired   = "REQUEST_EXPIRED"
	labelTooManyRequests  = "TOO_MANY_REQUESTS"
	labelOrderNotFound    = "ORDER_NOT_FOUND"
	labelClientIDNotFound = "CLIENT_ID_NOT_FOUND"
	labelInvalidParam     = "INVALID_PARAM_VALUE"
	labelOrderClosed      = "ORDER_CLOSED"
	labelOrderCancelled   = "ORDER_CANCELLED"
)

// errorLabels maps Gate's error labels to gateway codes. A label missing
// here is EXCHANGE_ERROR with Gate's message in the detail. 5xx answers and
// the server-side labels are EXCHANGE_UNAVAILABLE for reads and
// EXCHANGE_TIMEOUT (outcome unknown) for orders and withdrawals; that is
// decided in classify, as are REQUEST_EXPIRED and the two not-found labels.
// Source: Gate API v4 docs, "Error Handling" label list (v4.99), plus
// CLIENT_ID_NOT_FOUND and TOO_MANY_REQUESTS seen in real answers.
var errorLabels = map[string]errorRule{
	"BALANCE_NOT_ENOUGH":      {code: exgate.CodeInsufficientFunds},
	"INVALID_CURRENCY_PAIR":   {code: exgate.CodeUnknownSymbol},
	"INVALID_CURRENCY":        {code: exgate.CodeInvalidParameter, param: "asset"},
	"INVALID_KEY":             {code: exgate.CodeExchangeAuthFailed},
	"INVALID_CREDENTIALS":     {code: exgate.CodeExchangeAuthFailed},
	"INVALID_SIGNATURE":       {code: exgate.CodeExchangeAuthFailed},
	"IP_FORBIDDEN":            {code: exgate.CodeExchangeAuthFailed},
	"READ_ONLY":               {code: exgate.CodeExchangeAuthFailed},
	"FORBIDDEN":               {code: exgate.CodeExchangeAuthFailed},
	"ACCOUNT_LOCKED":          {code: exgate.CodeExchangeAuthFailed},
	"MISSING_REQUIRED_HEADER": {code: exgate.CodeExchangeAuthFailed},
	labelTooManyRequests:      {code: exgate.CodeExchangeUnavailable},
	"TOO_FAST":                {code: exgate.CodeExchangeUnavailable},
	"AMOUNT_TOO_LITTLE":       {code: exgate.CodeQuantityTooSmall, withdrawCode: exgate.CodeWithdrawalRejected},
	"QUANTITY_NOT_ENOUGH":     {code: exgate.CodeQuantityTooSmall, withdrawCode: exgate.CodeWithdrawalRejected},
	"AMOUNT_TOO_MUCH":         {code: exgate.CodeOrderRejected, withdrawCode: exgate.CodeWithdrawalRejected},
	"INVALID_PRECISION":       {code: exgate.CodeInvalidParameter, orderCode: exgate.CodeOrderRejected},
	labelInvalidParam:         {code: exgate.CodeInvalidParameter},
	"ORDER_BOOK_NOT_FOUND":    {code: exgate.CodeOrderRejected},
	"FOK_NOT_FILL":            {code: exgate.CodeOrderRejected},
	"POC_FILL_IMMEDIATELY":    {code: exgate.CodeOrderRejected},
	"TRADE_RESTRICTED":        {code: exgate.CodeOrderRejected},
	labelOrderClosed:          {code: exgate.CodeOrderRejected},
	labelOrderCancelled:       {code: exgate.CodeOrderRejected},
	"CANCEL_FAIL":             {code: exgate.CodeOrderRejected},
	"WITHDRAWAL_OVER_LIMIT":   {code: exgate.CodeWithdrawalRejected},
	"API_WITHDRAW_DISABLED":   {code: exgate.CodeWithdrawalRejected},
	"ADDRESS_NOT_USED":        {code: exgate.CodeWithdrawalRejected},
	"DUPLICATE_REQUEST":       {code: exgate.CodeWithdrawalRejected},
	"INVALID_WITHDRAW_ID":     {code: exgate.CodeWithdrawalRejected},
}

// serverLabels are Gate's server-side failures: the outcome of a write is
// unknown.
var serverLabels = map[string]bool{
	"INTERNAL":     true,
	"SERVER_ERROR": true,
	"TOO_BUSY":     true,
}

// tooSmall reports whether an INVALID_PARAM_VALUE message is Gate's
// minimum-size refusal ("Your order size 0.5 USDT is too small. The
// minimum is 1 USDT").
func tooSmall(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "too small") || strings.Contains(m, "minimum")
}
