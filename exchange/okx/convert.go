package okx

import (
	"net/http"
	"strings"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

// scope is who an OKX rate limit counts: the IP, the user (the API key's
// account), the user per instrument, or the user per currency.
// Source: OKX API v5 docs, "Rate Limits"
// (https://www.okx.com/docs-v5/en/#overview-rate-limits): public endpoints
// are limited per IP, private ones per user ID, trading endpoints per
// user ID and instrument ID.
type scope int

const (
	scopeIP scope = iota
	scopeUser
	scopeUserInst
	scopeUserCcy
)

// limitSpec is one endpoint's budget: limit requests per window.
type limitSpec struct {
	limit  int
	window time.Duration
	scope  scope
}

// rateLimit expresses a window budget for the Limiter: a burst of a fifth
// of the budget and a steady rate of the rest, so that no window of the
// budget's length holds more than the limit.
func (l limitSpec) rateLimit() exgate.RateLimit {
	burst := max(l.limit/5, 1)
	return exgate.RateLimit{Rate: max(l.limit-burst, 1), Period: l.window, Burst: burst}
}

// endpoint is one OKX REST route the adapter calls, with its budget.
type endpoint struct {
	name    string
	method  string
	path    string
	private bool
	// write marks calls that change state (orders, cancels, withdrawals,
	// transfers): never retried, and an unknown outcome is
	// EXCHANGE_TIMEOUT.
	write bool
	// trade marks the trading endpoints that take the expTime header.
	trade bool
	limit limitSpec
}

func per2s(n int, s scope) limitSpec { return limitSpec{limit: n, window: 2 * time.Second, scope: s} }
func per1s(n int, s scope) limitSpec { return limitSpec{limit: n, window: time.Second, scope: s} }

// The endpoints and their documented limits. Source: OKX API v5 docs,
// each endpoint's "Rate Limit" and "Rate limit rule"
// (https://www.okx.com/docs-v5/en/#public-data-rest-api-get-system-time,
// #public-data-rest-api-get-instruments, #order-book-trading-market-data-get-candlesticks,
// #order-book-trading-market-data-get-candlesticks-history,
// #order-book-trading-market-data-get-order-book,
// #trading-account-rest-api-get-balance, #order-book-trading-trade-post-place-order,
// #order-book-trading-trade-post-cancel-order, #order-book-trading-trade-get-order-details,
// #order-book-trading-trade-get-order-list, #order-book-trading-trade-get-order-history-last-7-days,
// #order-book-trading-trade-get-transaction-details-last-3-days,
// #funding-account-rest-api-get-currencies, #funding-account-rest-api-get-balance,
// #funding-account-rest-api-funds-transfer, #funding-account-rest-api-get-funds-transfer-state,
// #funding-account-rest-api-asset-bills-details, #funding-account-rest-api-get-deposit-address,
// #funding-account-rest-api-get-deposit-history, #funding-account-rest-api-withdrawal,
// #funding-account-rest-api-get-withdrawal-history).
var (
	epTime           = endpoint{name: "public/time", method: http.MethodGet, path: "/api/v5/public/time", limit: per2s(10, scopeIP)}
	epInstruments    = endpoint{name: "public/instruments", method: http.MethodGet, path: "/api/v5/public/instruments", limit: per2s(20, scopeIP)}
	epCandles        = endpoint{name: "market/candles", method: http.MethodGet, path: "/api/v5/market/candles", limit: per2s(40, scopeIP)}
	epHistoryCandles = endpoint{name: "market/history-candles", method: http.MethodGet, path: "/api/v5/market/history-candles", limit: per2s(20, scopeIP)}
	epBooks          = endpoint{name: "market/books", method: http.MethodGet, path: "/api/v5/market/books", limit: per2s(40, scopeIP)}
	epBalance        = endpoint{name: "account/balance", method: http.MethodGet, path: "/api/v5/account/balance", private: true, limit: per2s(10, scopeUser)}
	epPlaceOrder     = endpoint{name: "trade/order", method: http.MethodPost, path: "/api/v5/trade/order", private: true, write: true, trade: true, limit: per2s(60, scopeUserInst)}
	epCancelOrder    = endpoint{name: "trade/cancel-order", method: http.MethodPost, path: "/api/v5/trade/cancel-order", private: true, write: true, trade: true, limit: per2s(60, scopeUserInst)}
	epGetOrder       = endpoint{name: "trade/order get", method: http.MethodGet, path: "/api/v5/trade/order", private: true, limit: per2s(60, scopeUserInst)}
	epOrdersPending  = endpoint{name: "trade/orders-pending", method: http.MethodGet, path: "/api/v5/trade/orders-pending", private: true, limit: per2s(60, scopeUser)}
	epOrdersHistory  = endpoint{name: "trade/orders-history", method: http.MethodGet, path: "/api/v5/trade/orders-history", private: true, limit: per2s(40, scopeUser)}
	epFills          = endpoint{name: "trade/fills", method: http.MethodGet, path: "/api/v5/trade/fills", private: true, limit: per2s(60, scopeUser)}
	epCurrencies     = endpoint{name: "asset/currencies", method: http.MethodGet, path: "/api/v5/asset/currencies", private: true, limit: per1s(6, scopeUser)}
	epAssetBalances  = endpoint{name: "asset/balances", method: http.MethodGet, path: "/api/v5/asset/balances", private: true, limit: per1s(6, scopeUser)}
	epDepositAddress = endpoint{name: "asset/deposit-address", method: http.MethodGet, path: "/api/v5/asset/deposit-address", private: true, limit: per1s(6, scopeUser)}
	epDeposits       = endpoint{name: "asset/deposit-history", method: http.MethodGet, path: "/api/v5/asset/deposit-history", private: true, limit: per1s(6, scopeUser)}
	epWithdraw       = endpoint{name: "asset/withdrawal", method: http.MethodPost, path: "/api/v5/asset/withdrawal", private: true, write: true, limit: per1s(6, scopeUser)}
	epWithdrawals    = endpoint{name: "asset/withdrawal-history", method: http.MethodGet, path: "/api/v5/asset/withdrawal-history", private: true, limit: per1s(6, scopeUser)}
	epTransfer       = endpoint{name: "asset/transfer", method: http.MethodPost, path: "/api/v5/asset/transfer", private: true, write: true, limit: per1s(2, scopeUserCcy)}
	epTransferState  = endpoint{name: "asset/transfer-state", method: http.MethodGet, path: "/api/v5/asset/transfer-state", private: true, limit: per1s(10, scopeUser)}
	epAssetBills     = endpoint{name: "asset/bills", method: http.MethodGet, path: "/api/v5/asset/bills", private: true, limit: per1s(6, scopeUser)}
)

// Order types of OKX spot (ordType). Source: OKX API v5 docs, "Place
// order" (https://www.okx.com/docs-v5/en/#order-book-trading-trade-post-place-order):
// market, limit, post_only, fok, ioc.
const (
	ordMarket   = "market"
	ordLimit    = "limit"
	ordPostOnly = "post_only"
	ordFOK      = "fok"
	ordIOC      = "ioc"
)

// ordTypeOf is OKX's ordType of a limit order: the time in force and the
// post-only flag become one order type.
func ordTypeOf(tif exgate.TimeInForce, postOnly bool) string {
	switch {
	case postOnly:
		return ordPostOnly
	case tif == exgate.IOC:
		return ordIOC
	case tif == exgate.FOK:
		return ordFOK
	}
	return ordLimit
}

// fromOrdType reads an ordType back: the order type, time in force and
// post-only flag.
func fromOrdType(t string) (typ string, tif exgate.TimeInForce, postOnly bool) {
	switch t {
	case ordMarket:
		return exgate.OrderTypeMarket, "", false
	case ordPostOnly:
		return exgate.OrderTypeLimit, exgate.GTC, true
	case ordIOC:
		return exgate.OrderTypeLimit, exgate.IOC, false
	case ordFOK:
		return exgate.OrderTypeLimit, exgate.FOK, false
	}
	return exgate.OrderTypeLimit, exgate.GTC, false
}

// Cancel sources the status mapping reads. Source: OKX API v5 docs, "Order
// channel" cancelSource (https://www.okx.com/docs-v5/en/#order-book-trading-trade-ws-order-channel):
// 13 FOK not fully filled, 14 IOC not fully filled, 31 post-only order
// would have taken liquidity.
const (
	cancelSourceFOK      = "13"
	cancelSourceIOC      = "14"
	cancelSourcePostOnly = "31"
)

// orderStatus maps OKX's order state. Source: OKX API v5 docs, "Get
// order details" state (https://www.okx.com/docs-v5/en/#order-book-trading-trade-get-order-details):
// live, partially_filled, filled, canceled, mmp_canceled.
//
//   - live: PENDING; partially_filled: PARTIALLY_FILLED; filled: FILLED.
//   - canceled by the engine because a post-only order would trade
//     (cancelSource 31) with nothing filled: REJECTED.
//   - canceled by the engine as an IOC or FOK order (cancelSource 13,
//     14), or a market order's unfillable rest: EXPIRED, with what filled
//     in executedQuantity.
//   - canceled otherwise (by the user, by self-trade prevention,
//     mmp_canceled): CANCELED.
func orderStatus(state, cancelSource, ordType string, filled bool) exgate.OrderStatus {
	switch state {
	case "live":
		return exgate.OrderPending
	case "partially_filled":
		return exgate.OrderPartiallyFilled
	case "filled":
		return exgate.OrderFilled
	case "canceled", "mmp_canceled":
		switch {
		case cancelSource == cancelSourcePostOnly && !filled:
			return exgate.OrderRejected
		case cancelSource == cancelSourceFOK || cancelSource == cancelSourceIOC:
			return exgate.OrderExpired
		case ordType == ordIOC || ordType == ordFOK || ordType == ordMarket:
			return exgate.OrderExpired
		}
		return exgate.OrderCanceled
	}
	return exgate.OrderPending
}

// rawOrderStatus keeps the state and, for a cancel, its source:
// "canceled/14".
func rawOrderStatus(state, cancelSource string) string {
	if cancelSource == "" || (state != "canceled" && state != "mmp_canceled") {
		return state
	}
	return state + "/" + cancelSource
}

// depositStatuses maps OKX's deposit states. Source: OKX API v5 docs,
// "Get deposit history" state
// (https://www.okx.com/docs-v5/en/#funding-account-rest-api-get-deposit-history):
// 0 waiting for confirmation, 1 deposit credited (not yet withdrawable),
// 2 deposit successful, 8 pending because deposits of the currency are
// suspended, 11 the address is blacklisted, 12 the account or the deposit
// is frozen, 13 sub-account deposit interception, 14 KYC limit, 17
// pending response from the Travel Rule vendor. 1 counts as completed:
// the funds are in the account. 11 to 14 are failed: the funds do not
// reach the account without OKX support acting. An unknown state is
// pending, so that nothing unknown is reported final.
var depositStatuses = map[string]exgate.TransferStatus{
	"0":  exgate.TransferPending,
	"1":  exgate.TransferCompleted,
	"2":  exgate.TransferCompleted,
	"8":  exgate.TransferPending,
	"11": exgate.TransferFailed,
	"12": exgate.TransferFailed,
	"13": exgate.TransferFailed,
	"14": exgate.TransferFailed,
	"17": exgate.TransferPending,
}

// withdrawalStatuses maps OKX's withdrawal states. Source: OKX API v5
// docs, "Get withdrawal history" state
// (https://www.okx.com/docs-v5/en/#funding-account-rest-api-get-withdrawal-history):
// pending 19 17 10 0 4 5 6 8 9 12 7, in progress 1 15 16 -3 (canceling),
// final -2 canceled, -1 failed, 2 success. Every state not final is
// pending; an unknown state too.
var withdrawalStatuses = map[string]exgate.TransferStatus{
	"2":  exgate.TransferCompleted,
	"-1": exgate.TransferFailed,
	"-2": exgate.TransferCanceled,
}

// transferStatus looks a raw state up in a table; unknown states are
// pending.
func transferStatus(table map[string]exgate.TransferStatus, raw string) exgate.TransferStatus {
	if st, ok := table[strings.TrimSpace(raw)]; ok {
		return st
	}
	return exgate.TransferPending
}

// fundsTransferStates maps the state of GET /asset/transfer-state
// (success, pending, failed).
func fundsTransferState(s string) exgate.TransferStatus {
	switch s {
	case "success":
		return exgate.TransferCompleted
	case "failed":
		return exgate.TransferFailed
	}
	return exgate.TransferPending
}

// Account types of /asset/transfer. Source: OKX API v5 docs, "Funds
// transfer" from/to: 6 funding account, 18 trading account.
const (
	accountFunding = "6"
	accountTrading = "18"
)

// accountOf is OKX's account type of a wallet.
func accountOf(w exgate.WalletKind) string {
	if w == exgate.WalletFunding {
		return accountFunding
	}
	return accountTrading
}

// walletOf reads an account type back.
func walletOf(a string) exgate.WalletKind {
	if a == accountFunding {
		return exgate.WalletFunding
	}
	return exgate.WalletSpot
}

// Funding bill types of a transfer between the trading and the funding
// account. Source: OKX API v5 docs, "Asset bills details" type
// (https://www.okx.com/docs-v5/en/#funding-account-rest-api-asset-bills-details):
// 130 transferred from the trading account, 131 transferred to the
// trading account.
const (
	billFromTrading = "130"
	billToTrading   = "131"
)

// chainNetworks maps the network part of OKX's chain names
// ("USDT-TRC20" → "TRC20") to the gateway's network codes. Source: OKX
// API v5 docs, "Get currencies" chain ("USDT-ERC20", "USDT-TRC20",
// "BTC-Bitcoin"), and the chain names of ccxt's OKX network table.
var chainNetworks = map[string]string{
	"BITCOIN":           "BTC",
	"ERC20":             "ETH",
	"ETHEREUM":          "ETH",
	"TRC20":             "TRX",
	"TRON":              "TRX",
	"SOLANA":            "SOL",
	"RIPPLE":            "XRP",
	"BSC":               "BSC",
	"BEP20":             "BSC",
	"POLYGON":           "MATIC",
	"ARBITRUM ONE":      "ARBITRUM",
	"ARBITRUMONE":       "ARBITRUM",
	"OPTIMISM":          "OPTIMISM",
	"AVALANCHE C-CHAIN": "AVAXC",
	"LITECOIN":          "LTC",
	"DOGECOIN":          "DOGE",
	"TON":               "TON",
	"BASE":              "BASE",
}

// networkOf maps OKX's chain name ("USDT-TRC20") to the network code
// ("TRX"); a chain not in the table gives its own network part,
// upper-cased.
func networkOf(chain string) string {
	_, net, ok := strings.Cut(chain, "-")
	if !ok {
		net = chain
	}
	n := strings.ToUpper(strings.TrimSpace(net))
	if code, ok := chainNetworks[n]; ok {
		return code
	}
	return n
}

// sameNetwork reports whether OKX's chain is on the network a client
// named (any alias rest.NetworkCode knows).
func sameNetwork(chain, network string) bool {
	return networkOf(chain) == rest.NetworkCode(network)
}

// bar is one of OKX's candlestick bars.
type bar struct {
	name string
	d    time.Duration // 0 for a month
}

// klinePlan says how a normalized interval is served: with one of OKX's
// bars (UTC aligned), or built from a finer normalized interval.
type klinePlan struct {
	native bar
	source exgate.Interval
}

// klinePlans maps every normalized interval. Source: OKX API v5 docs,
// "Get candlesticks" bar
// (https://www.okx.com/docs-v5/en/#order-book-trading-market-data-get-candlesticks):
// 1m 3m 5m 15m 30m 1H 2H 4H, HK-time bars 6H 12H 1D 2D 3D 1W 1M 3M and
// their UTC forms 6Hutc 12Hutc 1Dutc 2Dutc 3Dutc 1Wutc 1Mutc 3Mutc. The
// gateway's klines are UTC aligned, so the utc forms are used. There is
// no 8h bar: 8h is built from 4H. 3d is built from 1Dutc because OKX's
// 3-day buckets are not documented to start where the gateway's (every
// third day since the epoch) do. 1Wutc and 1Mutc are checked to start on
// a Monday and on the first of the month (UTC); a bucket that does not is
// built from 1Dutc instead.
var klinePlans = map[exgate.Interval]klinePlan{
	exgate.Interval1m:  {native: bar{"1m", time.Minute}},
	exgate.Interval3m:  {native: bar{"3m", 3 * time.Minute}},
	exgate.Interval5m:  {native: bar{"5m", 5 * time.Minute}},
	exgate.Interval15m: {native: bar{"15m", 15 * time.Minute}},
	exgate.Interval30m: {native: bar{"30m", 30 * time.Minute}},
	exgate.Interval1h:  {native: bar{"1H", time.Hour}},
	exgate.Interval2h:  {native: bar{"2H", 2 * time.Hour}},
	exgate.Interval4h:  {native: bar{"4H", 4 * time.Hour}},
	exgate.Interval6h:  {native: bar{"6Hutc", 6 * time.Hour}},
	exgate.Interval8h:  {source: exgate.Interval4h},
	exgate.Interval12h: {native: bar{"12Hutc", 12 * time.Hour}},
	exgate.Interval1d:  {native: bar{"1Dutc", 24 * time.Hour}},
	exgate.Interval3d:  {source: exgate.Interval1d},
	exgate.Interval1w:  {native: bar{"1Wutc", 7 * 24 * time.Hour}, source: exgate.Interval1d},
	exgate.Interval1M:  {native: bar{"1Mutc", 0}, source: exgate.Interval1d},
}

// Candle caps. Source: OKX API v5 docs, "Get candlesticks" (limit at most
// 300; only the latest 1,440 bars) and "Get candlesticks history" (limit
// at most 100).
const (
	maxCandles        = 300
	maxHistoryCandles = 100
	recentCandleBars  = 1440
)

// maxBookDepth is the deepest book GET /market/books serves (sz at most
// 400). Source: OKX API v5 docs, "Get order book".
const maxBookDepth = 400

// errorRule is what an OKX error code means for the gateway. orderCode,
// withdrawCode and transferCode override code for calls of that kind.
type errorRule struct {
	code         exgate.Code
	orderCode    exgate.Code
	withdrawCode exgate.Code
	param        string
	// server marks a failure on OKX's side: a write's outcome is then
	// unknown (EXCHANGE_TIMEOUT), a read is EXCHANGE_UNAVAILABLE.
	server bool
	// notFound wraps exgate.ErrNotFound.
	notFound bool
}

// Codes the adapter branches on.
const (
	codeRateLimit        = "50011"
	codeTimestampExpired = "50102"
	codeOrderNotFound    = "51603"
	codeCancelFailed     = "51400"
	codeInsufficientFund = "58350"
)

// errorCodes maps OKX's error codes to the gateway's codes; a code missing
// here is EXCHANGE_ERROR with OKX's message in the detail. Source: OKX
// API v5 docs, "Error Code" (https://www.okx.com/docs-v5/en/#error-code):
// the REST codes 50000-50115 (common, with their HTTP status), 51000-51603
// (trade) and 58000-58350 (funding).
var errorCodes = map[string]errorRule{
	// 50000 body empty, 50002 JSON syntax, 50006 Content-Type, 50014
	// parameter empty, 50015 either parameter required: the adapter sent
	// a bad request.
	"50000":       {code: exgate.CodeExchangeError},
	"50001":       {code: exgate.CodeExchangeUnavailable, server: true}, // service temporarily unavailable (503)
	"50002":       {code: exgate.CodeExchangeError},
	"50004":       {code: exgate.CodeExchangeUnavailable, server: true}, // endpoint request timeout: not success, not failure
	"50005":       {code: exgate.CodeExchangeUnavailable},               // endpoint inactive
	"50006":       {code: exgate.CodeExchangeError},
	codeRateLimit: {code: exgate.CodeExchangeUnavailable},               // rate limit reached (429 or 200)
	"50013":       {code: exgate.CodeExchangeUnavailable, server: true}, // systems are busy (429)
	"50014":       {code: exgate.CodeExchangeError},
	"50015":       {code: exgate.CodeExchangeError},
	"50026":       {code: exgate.CodeExchangeUnavailable, server: true}, // system error (500)
	// 50100-50114: authentication (401).
	"50100": {code: exgate.CodeExchangeAuthFailed}, // API frozen
	"50101": {code: exgate.CodeExchangeAuthFailed}, // key does not match the environment (demo vs live)
	"50103": {code: exgate.CodeExchangeAuthFailed}, // OK-ACCESS-KEY empty
	"50104": {code: exgate.CodeExchangeAuthFailed}, // OK-ACCESS-PASSPHRASE empty
	"50105": {code: exgate.CodeExchangeAuthFailed}, // passphrase incorrect
	"50106": {code: exgate.CodeExchangeAuthFailed}, // OK-ACCESS-SIGN empty
	"50107": {code: exgate.CodeExchangeAuthFailed}, // OK-ACCESS-TIMESTAMP empty
	"50110": {code: exgate.CodeExchangeAuthFailed}, // IP not on the key's allow-list
	"50111": {code: exgate.CodeExchangeAuthFailed}, // invalid OK-ACCESS-KEY
	"50113": {code: exgate.CodeExchangeAuthFailed}, // invalid signature
	"50114": {code: exgate.CodeExchangeAuthFailed}, // invalid authorization
	"50120": {code: exgate.CodeExchangeAuthFailed}, // key lacks the permission
	// Trade.
	"51000":           {code: exgate.CodeInvalidParameter, orderCode: exgate.CodeOrderRejected}, // parameter error
	"51001":           {code: exgate.CodeUnknownSymbol},                                         // instrument does not exist
	"51008":           {code: exgate.CodeInsufficientFunds},                                     // insufficient balance
	"51010":           {code: exgate.CodeOrderRejected},                                         // account mode does not support it
	"51016":           {code: exgate.CodeOrderRejected},                                         // duplicate clOrdId
	"51020":           {code: exgate.CodeQuantityTooSmall},                                      // below the minimum order amount
	"51121":           {code: exgate.CodeOrderRejected},                                         // not a multiple of the lot size
	"51149":           {code: exgate.CodeExchangeUnavailable, server: true},                     // order timed out: outcome unknown
	"51155":           {code: exgate.CodeOrderRejected},                                         // local compliance restrictions
	"51201":           {code: exgate.CodeOrderRejected},                                         // market order value too large
	"51202":           {code: exgate.CodeOrderRejected},                                         // market order amount too large
	"51204":           {code: exgate.CodeOrderRejected},                                         // limit price empty
	codeCancelFailed:  {code: exgate.CodeOrderRejected},                                         // cancel failed: filled, canceled or absent
	codeOrderNotFound: {code: exgate.CodeNotFound, notFound: true},                              // order does not exist
	// Funding.
	"58200":              {code: exgate.CodeWithdrawalRejected},                   // withdrawals of the currency/chain not supported
	"58201":              {code: exgate.CodeWithdrawalRejected},                   // over the daily withdrawal limit
	"58203":              {code: exgate.CodeWithdrawalRejected},                   // add a withdrawal address first
	"58206":              {code: exgate.CodeWithdrawalRejected},                   // below the minimum withdrawal
	"58207":              {code: exgate.CodeWithdrawalRejected, param: "address"}, // address not on the verified allow-list
	"58213":              {code: exgate.CodeInvalidParameter, param: "address"},   // invalid internal address
	"58214":              {code: exgate.CodeWithdrawalRejected},                   // chain in maintenance
	"58221":              {code: exgate.CodeInvalidParameter, param: "tag"},       // tag chain without address:tag
	"58222":              {code: exgate.CodeInvalidParameter, param: "address"},   // invalid address
	codeInsufficientFund: {code: exgate.CodeInsufficientFunds},                    // insufficient balance (funding)
}

// withdrawDetail is added to a funding refusal of a withdrawal: OKX
// withdraws only from the funding account.
const withdrawDetail = "; OKX withdraws from the funding wallet only: move funds there first with POST /v1/wallet/transfer (from spot to funding)"
