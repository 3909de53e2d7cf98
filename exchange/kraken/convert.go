package kraken

import (
	"strconv"
	"strings"
	"time"

	"github.com/exgate/exgate"
)

// commonByAltname renames the Kraken altnames that differ from the codes
// people write. Every other asset keeps its Assets altname unchanged: no
// X/Z prefix is ever stripped by rule (XTZ, XRP, XLM, ZEC and ZRX are real
// codes). Source: docs.kraken.com "Get Asset Info" (ids and altnames) and
// Kraken's own naming of bitcoin (XBT, ISO 4217 style) and dogecoin (XDG).
var commonByAltname = map[string]string{
	"XBT": "BTC",
	"XDG": "DOGE",
}

// legacyAssetIDs names the legacy X/Z-prefixed Kraken asset ids. It is used
// only when an id is missing from the Assets answer (a delisted asset still
// in a balance, for instance), so that the answer never depends on a
// prefix rule. Source: docs.kraken.com "Get Asset Info" example and
// "Get Account Balance" example.
var legacyAssetIDs = map[string]string{
	"XXBT": "BTC",
	"XETH": "ETH",
	"XXDG": "DOGE",
	"XLTC": "LTC",
	"XXRP": "XRP",
	"XXLM": "XLM",
	"XXMR": "XMR",
	"XZEC": "ZEC",
	"XETC": "ETC",
	"XMLN": "MLN",
	"XREP": "REP",
	"ZUSD": "USD",
	"ZEUR": "EUR",
	"ZGBP": "GBP",
	"ZCAD": "CAD",
	"ZJPY": "JPY",
	"ZAUD": "AUD",
}

// commonAsset returns the common code of a Kraken altname.
func commonAsset(altname string) string {
	if c, ok := commonByAltname[altname]; ok {
		return c
	}
	return altname
}

// Balance keys with a suffix are holdings other than the spot balance:
// .S staked, .M opt-in rewards, .P parachain, .F auto-earn, .B
// yield-bearing, .T tokenized (and .HOLD seen in the wild). They are
// separate holdings and are never added to the spot balance; since no spot
// asset id contains a dot, any key with a dot is treated as one. Source:
// docs.kraken.com "Get Account Balance" and Kraken support "What is
// Asset.S and Asset.M?".
func isSuffixedBalance(key string) bool { return strings.Contains(key, ".") }

// klineSource says how a normalized interval is served: natively with
// Kraken's interval in minutes, or built from the finer interval From.
type klineSource struct {
	minutes int             // Kraken OHLC interval to request
	from    exgate.Interval // the normalized interval of those rows
	native  bool            // the rows are the answer (no aggregation)
}

// krakenIntervals maps normalized intervals to Kraken's OHLC intervals
// (minutes: 1, 5, 15, 30, 60, 240, 1440, 10080, 21600). Intervals Kraken
// lacks are built from the largest finer Kraken interval that divides them,
// aligned to UTC. Source: docs.kraken.com "Get OHLC Data".
var krakenIntervals = map[exgate.Interval]klineSource{
	exgate.Interval1m:  {minutes: 1, from: exgate.Interval1m, native: true},
	exgate.Interval3m:  {minutes: 1, from: exgate.Interval1m},
	exgate.Interval5m:  {minutes: 5, from: exgate.Interval5m, native: true},
	exgate.Interval15m: {minutes: 15, from: exgate.Interval15m, native: true},
	exgate.Interval30m: {minutes: 30, from: exgate.Interval30m, native: true},
	exgate.Interval1h:  {minutes: 60, from: exgate.Interval1h, native: true},
	exgate.Interval2h:  {minutes: 60, from: exgate.Interval1h},
	exgate.Interval4h:  {minutes: 240, from: exgate.Interval4h, native: true},
	exgate.Interval6h:  {minutes: 60, from: exgate.Interval1h},
	exgate.Interval8h:  {minutes: 240, from: exgate.Interval4h},
	exgate.Interval12h: {minutes: 240, from: exgate.Interval4h},
	exgate.Interval1d:  {minutes: 1440, from: exgate.Interval1d, native: true},
	exgate.Interval3d:  {minutes: 1440, from: exgate.Interval1d},
	// 1w is requested natively and used as is when Kraken's weeks start on
	// Monday 00:00 UTC; otherwise it is rebuilt from days (klines.go).
	exgate.Interval1w: {minutes: 10080, from: exgate.Interval1w, native: true},
	exgate.Interval1M: {minutes: 1440, from: exgate.Interval1d},
}

// maxDepthCount is the largest `count` Kraken's Depth endpoint accepts.
// Source: docs.kraken.com "Get Order Book".
const maxDepthCount = 500

// orderStatuses maps Kraken order states to normalized ones; an open or
// pending order with vol_exec > 0 is PARTIALLY_FILLED (see orderStatus).
// A canceled order stays CANCELED even when partly filled (its
// ExecutedQuantity says how much), because PARTIALLY_FILLED is not final.
// Source: docs.kraken.com "Query Orders Info", field status.
var orderStatuses = map[string]exgate.OrderStatus{
	"pending":  exgate.OrderPending,
	"open":     exgate.OrderPending,
	"closed":   exgate.OrderFilled,
	"canceled": exgate.OrderCanceled,
	"expired":  exgate.OrderExpired,
}

// orderStatus normalizes a Kraken order status given whether anything
// executed. Unknown states are PENDING so that the reconciler looks again.
func orderStatus(raw string, executed bool) exgate.OrderStatus {
	st, ok := orderStatuses[raw]
	if !ok {
		return exgate.OrderPending
	}
	if st == exgate.OrderPending && executed {
		return exgate.OrderPartiallyFilled
	}
	return st
}

// transferStatuses maps Kraken's funding states (IFEX: Initial, Pending,
// Settled, Success, Failure) for deposits and withdrawals. Settled means
// the funds moved on Kraken's side but are not final yet. Source:
// docs.kraken.com "Get Status of Recent Deposits" and "Get Status of
// Recent Withdrawals", field status.
var transferStatuses = map[string]exgate.TransferStatus{
	"Initial": exgate.TransferPending,
	"Pending": exgate.TransferPending,
	"Settled": exgate.TransferPending,
	"Success": exgate.TransferCompleted,
	"Failure": exgate.TransferFailed,
}

// depositStatus normalizes a deposit's status and status-prop: on hold
// (under review) is pending whatever the status, a returned deposit
// failed. Unknown states are pending.
func depositStatus(status, prop string) exgate.TransferStatus {
	switch prop {
	case "onhold", "on-hold":
		return exgate.TransferPending
	case "return":
		return exgate.TransferFailed
	}
	if st, ok := transferStatuses[status]; ok {
		return st
	}
	return exgate.TransferPending
}

// withdrawalStatus normalizes a withdrawal's status and status-prop: a
// canceled withdrawal (status-prop canceled) is canceled, a Failure
// failed, Success completed, everything else (Initial, Pending, Settled,
// cancel-pending, cancel-denied, onhold) pending.
func withdrawalStatus(status, prop string) exgate.TransferStatus {
	if prop == "canceled" {
		return exgate.TransferCanceled
	}
	if st, ok := transferStatuses[status]; ok {
		return st
	}
	return exgate.TransferPending
}

// rawTransferStatus keeps Kraken's status and status-prop in RawStatus as
// "status" or "status/status-prop".
func rawTransferStatus(status, prop string) string {
	if prop == "" {
		return status
	}
	return status + "/" + prop
}

// networksByMethod maps Kraken funding method names (DepositMethods,
// WithdrawAddresses, DepositStatus, WithdrawStatus) to network codes. A
// method not listed here is matched through methodSuffixNetworks and then
// krakenNetworks (its chain name); a method none of them knows cannot be
// selected by network. Source: docs.kraken.com "Get Deposit Methods" and
// the method names Kraken shows in its funding pages.
var networksByMethod = map[string]string{
	"Bitcoin":             "BTC",
	"Bitcoin Lightning":   "LIGHTNING",
	"Ether (Hex)":         "ETH",
	"Ethereum":            "ETH",
	"Solana":              "SOL",
	"Ripple XRP":          "XRP",
	"XRP":                 "XRP",
	"Dogecoin":            "DOGE",
	"Litecoin":            "LTC",
	"Stellar XLM":         "XLM",
	"Tezos":               "XTZ",
	"Zcash":               "ZEC",
	"Zcash (Transparent)": "ZEC",
	"Polkadot":            "DOT",
	"Monero":              "XMR",
	"Cardano":             "ADA",
	"Tron":                "TRX",
}

// methodSuffixNetworks maps the token-standard suffix Kraken puts in
// parentheses after a token's method name ("Tether USD (TRC20)") to the
// network code. Source: Kraken's funding method names.
var methodSuffixNetworks = map[string]string{
	"ERC20":             "ETH",
	"TRC20":             "TRX",
	"SPL":               "SOL",
	"BEP20":             "BSC",
	"Polygon":           "MATIC",
	"Arbitrum One":      "ARBITRUM",
	"Optimism":          "OPTIMISM",
	"Base":              "BASE",
	"Avalanche C-Chain": "AVAXC",
}

// krakenNetworks maps the chain names of WithdrawMethods/WithdrawStatus's
// `network` field to network codes. Source: docs.kraken.com "Get
// Withdrawal Methods" (network field) and Kraken's funding pages.
var krakenNetworks = map[string]string{
	"Bitcoin":             "BTC",
	"Lightning":           "LIGHTNING",
	"Ethereum":            "ETH",
	"Tron":                "TRX",
	"Solana":              "SOL",
	"Ripple":              "XRP",
	"XRP":                 "XRP",
	"Dogecoin":            "DOGE",
	"Litecoin":            "LTC",
	"Stellar":             "XLM",
	"Tezos":               "XTZ",
	"Zcash":               "ZEC",
	"Polkadot":            "DOT",
	"BNB Smart Chain":     "BSC",
	"Binance Smart Chain": "BSC",
	"Polygon":             "MATIC",
	"Arbitrum One":        "ARBITRUM",
	"Optimism":            "OPTIMISM",
	"Base":                "BASE",
	"Avalanche C-Chain":   "AVAXC",
}

// methodNetwork returns the network code of a Kraken funding method, or ""
// when the method is not known.
func methodNetwork(method string) string {
	if n, ok := networksByMethod[method]; ok {
		return n
	}
	if i := strings.LastIndexByte(method, '('); i >= 0 && strings.HasSuffix(method, ")") {
		if n, ok := methodSuffixNetworks[method[i+1:len(method)-1]]; ok {
			return n
		}
	}
	if n, ok := krakenNetworks[method]; ok {
		return n
	}
	return ""
}

// transferNetwork returns the network code of a funding record from its
// `network` field when present, else from its method; failing both, the
// method name itself so that nothing is lost.
func transferNetwork(method, network string) string {
	if n, ok := krakenNetworks[network]; ok {
		return n
	}
	if n := methodNetwork(method); n != "" {
		return n
	}
	if network != "" {
		return network
	}
	return method
}

// errorRule maps Kraken error strings starting with prefix. orderCode and
// withdrawCode, when set, replace code for AddOrder and Withdraw calls.
type errorRule struct {
	prefix       string
	code         exgate.Code
	orderCode    exgate.Code
	withdrawCode exgate.Code
	// ambiguous is set when Kraken may have acted on the request despite
	// the error (a server fault mid-request): an order or withdrawal that
	// got it is EXCHANGE_TIMEOUT and is reconciled.
	ambiguous bool
	// backoff is how long to stop calling for the key after this answer
	// (0: do not pause).
	backoff time.Duration
	// drain, when set, pauses the key until this many points of the
	// counter that refused the call have decayed (rate-limit answers).
	drain int
	// noPause keeps other calls on the key going (the answer concerns
	// this request only).
	noPause bool
	// param names the request parameter an INVALID_PARAMETER refusal is
	// about.
	param  string
	detail string
}

// errorRules maps Kraken's error strings (`<severity><category>:<message>
// [:<field>]`) to exgate codes, matched by prefix, first match wins.
// Anything else is EXCHANGE_ERROR with Kraken's text. Sources:
// docs.kraken.com "Spot REST API: errors" guide, Kraken support "API error
// messages" (360001491786), "REST API rate limits" guide.
var errorRules = []errorRule{
	{prefix: "EAPI:Invalid key", code: exgate.CodeExchangeAuthFailed, detail: "Kraken refused the API key"},
	{prefix: "EAPI:Invalid signature", code: exgate.CodeExchangeAuthFailed, detail: "Kraken refused the request signature (check the API secret)"},
	{prefix: "EAPI:Invalid nonce", code: exgate.CodeExchangeUnavailable, backoff: time.Second, noPause: true,
		detail: "Kraken refused the nonce: another client or gateway instance used this API key with a larger nonce; nothing was placed, retry (if it persists, give exgate its own Kraken API key)"},
	{prefix: "EAPI:Permission denied", code: exgate.CodeExchangeAuthFailed, detail: "the Kraken API key lacks the permission for this call"},
	{prefix: "EGeneral:Permission denied", code: exgate.CodeExchangeAuthFailed, detail: "the Kraken API key lacks the permission for this call"},
	{prefix: "ESession:Invalid session", code: exgate.CodeExchangeAuthFailed, detail: "Kraken refused the session"},
	{prefix: "EAPI:Rate limit exceeded", code: exgate.CodeExchangeUnavailable, drain: 3, detail: "Kraken's API call counter for this key is full"},
	{prefix: "EOrder:Rate limit exceeded", code: exgate.CodeExchangeUnavailable, drain: 3, detail: "Kraken's trading rate limit for this pair is reached"},
	{prefix: "EOrder:Domain rate limit exceeded", code: exgate.CodeExchangeUnavailable, drain: 3, detail: "Kraken's account-wide trading rate limit is reached"},
	{prefix: "EService:Throttled", code: exgate.CodeExchangeUnavailable, backoff: time.Second, detail: "Kraken throttled concurrent requests"},
	{prefix: "EGeneral:Too many requests", code: exgate.CodeExchangeUnavailable, backoff: 5 * time.Second, detail: "Kraken throttled requests"},
	{prefix: "EGeneral:Temporary lockout", code: exgate.CodeExchangeUnavailable, backoff: 15 * time.Minute, detail: "Kraken locked the key or address out temporarily"},
	{prefix: "EService:Unavailable", code: exgate.CodeExchangeUnavailable, backoff: 5 * time.Second, detail: "Kraken's service is unavailable"},
	{prefix: "EService:Market in cancel_only mode", code: exgate.CodeOrderRejected, detail: "the Kraken market only accepts cancellations now"},
	{prefix: "EService:Market in post_only mode", code: exgate.CodeOrderRejected, detail: "the Kraken market only accepts post-only limit orders now"},
	{prefix: "EService:Market in limit_only mode", code: exgate.CodeOrderRejected, detail: "the Kraken market only accepts limit orders now"},
	{prefix: "EService:Deadline elapsed", code: exgate.CodeExchangeUnavailable, detail: "Kraken did not process the request before its deadline; nothing was placed"},
	{prefix: "EService:Busy", code: exgate.CodeExchangeUnavailable, ambiguous: true, backoff: 5 * time.Second, detail: "Kraken is busy"},
	{prefix: "EGeneral:Internal error", code: exgate.CodeExchangeUnavailable, ambiguous: true, backoff: time.Second, detail: "Kraken reported an internal error"},
	{prefix: "EDatabase:Internal error", code: exgate.CodeExchangeUnavailable, ambiguous: true, backoff: time.Second, detail: "Kraken reported an internal error"},
	{prefix: "EGeneral:Invalid arguments", code: exgate.CodeInvalidParameter, orderCode: exgate.CodeOrderRejected, withdrawCode: exgate.CodeWithdrawalRejected, detail: "Kraken refused an argument"},
	{prefix: "EQuery:Unknown asset pair", code: exgate.CodeUnknownSymbol, detail: "Kraken does not list this pair"},
	{prefix: "EQuery:Unknown asset", code: exgate.CodeInvalidParameter, detail: "Kraken does not know this asset"},
	{prefix: "EFunding:Unknown asset", code: exgate.CodeInvalidParameter, detail: "Kraken does not know this asset"},
	{prefix: "EOrder:Insufficient funds", code: exgate.CodeInsufficientFunds, detail: "insufficient funds on Kraken"},
	{prefix: "EOrder:Insufficient margin", code: exgate.CodeInsufficientFunds, detail: "insufficient margin on Kraken"},
	{prefix: "EOrder:Order minimum not met", code: exgate.CodeQuantityTooSmall, detail: "the volume is below Kraken's minimum order size for this pair"},
	{prefix: "EOrder:Cost minimum not met", code: exgate.CodeQuantityTooSmall, detail: "the cost is below Kraken's minimum order cost for this pair"},
	{prefix: "EOrder:Orders limit exceeded", code: exgate.CodeOrderRejected, detail: "too many open orders on Kraken"},
	{prefix: "EOrder:Trading agreement required", code: exgate.CodeOrderRejected, detail: "the Kraken account must accept the trading agreement"},
	{prefix: "EOrder:Unknown order", code: exgate.CodeNotFound, detail: "Kraken has no such order"},
	{prefix: "EOrder:Invalid order", code: exgate.CodeNotFound, detail: "Kraken has no such order"},
	// A price off the pair's tick_size (the adapter checks it before
	// sending; these answer a tick that changed since AssetPairs was
	// read). Texts from ccxt's map and a third-party catalog of Kraken's
	// errors: not established from Kraken's own pages.
	{prefix: "EOrder:Tick size check failed", code: exgate.CodeInvalidParameter, param: "price", detail: "the price is not a multiple of Kraken's tick size for this pair"},
	{prefix: "EOrder:Invalid price", code: exgate.CodeInvalidParameter, param: "price", detail: "Kraken refused the price"},
	{prefix: "EOrder:", code: exgate.CodeOrderRejected, detail: "Kraken refused the order"},
	{prefix: "EFunding:Unknown withdraw key", code: exgate.CodeWithdrawalRejected, detail: "no such withdrawal key in the Kraken account"},
	{prefix: "EFunding:Insufficient funds", code: exgate.CodeInsufficientFunds, detail: "insufficient funds on Kraken"},
	{prefix: "EFunding:Invalid amount", code: exgate.CodeWithdrawalRejected, detail: "Kraken refused the withdrawal amount"},
	{prefix: "EFunding:Max fee exceeded", code: exgate.CodeWithdrawalRejected, detail: "Kraken's withdrawal fee rose above the fee quoted"},
	{prefix: "EFunding:No funding method", code: exgate.CodeInvalidParameter, detail: "Kraken has no funding method for this asset and network"},
	{prefix: "EFunding:Too many addresses", code: exgate.CodeExchangeError, detail: "Kraken refused to create another deposit address"},
	{prefix: "EFunding:", code: exgate.CodeWithdrawalRejected, detail: "Kraken refused the funding request"},
}

// matchError returns the rule for a Kraken error string.
func matchError(msg string) (errorRule, bool) {
	for _, r := range errorRules {
		if strings.HasPrefix(msg, r.prefix) {
			return r, true
		}
	}
	return errorRule{}, false
}

// throttledUntil parses the unix time in "EService:Throttled: <ts>" (also
// without the space); zero when absent.
func throttledUntil(msg string) time.Time {
	rest, ok := strings.CutPrefix(msg, "EService:Throttled:")
	if !ok {
		return time.Time{}
	}
	ts, err := strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
	if err != nil || ts <= 0 {
		return time.Time{}
	}
	return time.Unix(ts, 0)
}

// Tier is a Kraken account verification tier; it sets the REST call
// counter and the trading counter the adapter paces against.
type Tier string

// Kraken verification tiers. Source: docs.kraken.com "Spot REST API rate
// limits" and "Spot trading rate limits".
const (
	TierStarter      Tier = "starter"
	TierIntermediate Tier = "intermediate"
	TierPro          Tier = "pro"
)

// restCounter is Kraken's REST API call counter per API key: maximum and
// decay by tier (Starter 15, -0.33/s; Intermediate 20, -0.5/s; Pro 20,
// -1/s). Every private call costs 1 (AddOrder costs nothing here: it counts
// against the trading counter instead). Source: docs.kraken.com "Spot REST
// API rate limits".
var restCounter = map[Tier]exgate.RateLimit{
	TierStarter:      {Rate: 1, Period: 3 * time.Second, Burst: 15},
	TierIntermediate: {Rate: 1, Period: 2 * time.Second, Burst: 20},
	TierPro:          {Rate: 1, Period: time.Second, Burst: 20},
}

// tradingCounter is Kraken's per-pair trading counter per account:
// threshold and decay by tier (Starter 60, -1/s; Intermediate 125,
// -2.34/s; Pro 180, -3.75/s); a market order costs 1. Source:
// docs.kraken.com "Spot trading rate limits".
var tradingCounter = map[Tier]exgate.RateLimit{
	TierStarter:      {Rate: 1, Period: time.Second, Burst: 60},
	TierIntermediate: {Rate: 234, Period: 100 * time.Second, Burst: 125},
	TierPro:          {Rate: 375, Period: 100 * time.Second, Burst: 180},
}

// publicLimit paces public market-data calls per gateway instance (Kraken
// limits them per IP; about one call per second is safe). Source: Kraken
// support "REST API public endpoint rate limits" (206548367).
var publicLimit = exgate.RateLimit{Rate: 1, Period: time.Second, Burst: 10}

// pairStates maps an AssetPairs status to the market's normalized status
// and the order types it takes now: online takes everything, limit_only
// and post_only only limit orders (post_only only with postOnly), and
// cancel_only and reduce_only nothing new. A row without a status is
// online. Source: docs.kraken.com "Get Tradable Asset Pairs", field
// status.
var pairStates = map[string]struct {
	status exgate.SymbolStatus
	types  []string
}{
	"online":      {exgate.SymbolTrading, []string{exgate.OrderTypeMarket, exgate.OrderTypeLimit}},
	"limit_only":  {exgate.SymbolTrading, []string{exgate.OrderTypeLimit}},
	"post_only":   {exgate.SymbolTrading, []string{exgate.OrderTypeLimit}},
	"cancel_only": {exgate.SymbolHalted, []string{}},
	"reduce_only": {exgate.SymbolHalted, []string{}},
}

// timesInForce maps the gateway's time in force to AddOrder's
// timeinforce. Kraken Spot's REST AddOrder documents GTC (the default),
// IOC and GTD only; there is no fill-or-kill, so FOK is refused before
// anything is sent (400 INVALID_PARAMETER naming timeInForce). Source:
// docs.kraken.com "Add Order", field timeinforce.
var timesInForce = map[exgate.TimeInForce]string{
	exgate.GTC: "GTC",
	exgate.IOC: "IOC",
}

// orderReasons maps the reason Kraken gives an order its engine canceled
// at once to what the gateway answers the order's placement with. A
// post-only limit order that would take liquidity is accepted by AddOrder
// (it has a txid) and canceled by the engine with reason "Post only
// order"; the gateway answers ORDER_REJECTED. Matched by prefix. Source:
// docs.kraken.com "Add Order" (oflags post: "post-only order, available
// when ordertype = limit") and "Query Orders Info" (reason).
var orderReasons = []struct {
	prefix string
	code   exgate.Code
	detail string
}{
	{"Post only order", exgate.CodeOrderRejected, "the postOnly order would have traded at once; Kraken canceled it"},
}
