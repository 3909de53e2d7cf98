package exgate

import (
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// Code is a stable machine-readable error code of the API. Codes are
// never renamed; new ones may be added (with their line in Codes and
// their HTTP status in httpapi's Status).
type Code string

// Error codes (docs/contract.md 2.2).
const (
	CodeMissingAPIKey          Code = "MISSING_API_KEY"
	CodeInvalidAPIKey          Code = "INVALID_API_KEY"
	CodeMissingSignature       Code = "MISSING_SIGNATURE"
	CodeInvalidSignature       Code = "INVALID_SIGNATURE"
	CodeMissingTimestamp       Code = "MISSING_TIMESTAMP"
	CodeTimestampOutsideWindow Code = "TIMESTAMP_OUTSIDE_WINDOW"
	CodeReplayedRequest        Code = "REPLAYED_REQUEST"
	CodeMissingExchangeKey     Code = "MISSING_EXCHANGE_KEY"
	CodeUnknownExchangeKey     Code = "UNKNOWN_EXCHANGE_KEY"
	CodePermissionDenied       Code = "PERMISSION_DENIED"
	CodeIPNotAllowed           Code = "IP_NOT_ALLOWED"
	CodeAddressNotAllowed      Code = "ADDRESS_NOT_ALLOWED"
	CodeRiskLimitExceeded      Code = "RISK_LIMIT_EXCEEDED" // a risk limit (docs/contract.md 2.8; risk.go)
	CodeTradingHalted          Code = "TRADING_HALTED"      // the kill switch (docs/contract.md 2.8)
	CodeInvalidParameter       Code = "INVALID_PARAMETER"
	CodeUnknownSymbol          Code = "UNKNOWN_SYMBOL"
	CodeQuantityTooSmall       Code = "QUANTITY_TOO_SMALL"
	CodeInsufficientFunds      Code = "INSUFFICIENT_FUNDS"
	CodeOrderRejected          Code = "ORDER_REJECTED"
	CodeWithdrawalRejected     Code = "WITHDRAWAL_REJECTED"
	CodeRateLimited            Code = "RATE_LIMITED"
	CodeExchangeError          Code = "EXCHANGE_ERROR"
	CodeExchangeAuthFailed     Code = "EXCHANGE_AUTH_FAILED"
	CodeExchangeUnavailable    Code = "EXCHANGE_UNAVAILABLE"
	CodeExchangeTimeout        Code = "EXCHANGE_TIMEOUT"
	CodePayloadTooLarge        Code = "PAYLOAD_TOO_LARGE"
	CodeMethodNotAllowed       Code = "METHOD_NOT_ALLOWED"
	CodeUnsupportedMediaType   Code = "UNSUPPORTED_MEDIA_TYPE"
	CodeNotFound               Code = "NOT_FOUND"
	CodeIdempotencyConflict    Code = "IDEMPOTENCY_CONFLICT"
	CodeInternal               Code = "INTERNAL"
	// CodeNotImplemented: the exchange's adapter does not offer the
	// route yet (an order lifecycle route on an adapter without
	// OrderManager).
	CodeNotImplemented Code = "NOT_IMPLEMENTED"
	// CodeTransferRejected: the exchange refused a transfer between an
	// account's wallets, or never received it (docs/contract.md 2.10).
	CodeTransferRejected Code = "TRANSFER_REJECTED"
	// CodeTransferInFlight: a transfer of the same asset and amount on
	// the same exchange key is still waiting for its outcome; the gateway
	// sends the next one once that outcome is known (docs/contract.md
	// 2.10: an exchange without client transfer ids is reconciled by
	// matching asset and amount in its history).
	CodeTransferInFlight Code = "TRANSFER_IN_FLIGHT"
)

// Codes lists every code, for documentation and tests. The HTTP status
// each is answered with is the API's business (httpapi.Status).
func Codes() []Code {
	return []Code{
		CodeMissingAPIKey,
		CodeInvalidAPIKey,
		CodeMissingSignature,
		CodeInvalidSignature,
		CodeMissingTimestamp,
		CodeTimestampOutsideWindow,
		CodeReplayedRequest,
		CodeMissingExchangeKey,
		CodeUnknownExchangeKey,
		CodePermissionDenied,
		CodeIPNotAllowed,
		CodeAddressNotAllowed,
		CodeRiskLimitExceeded,
		CodeTradingHalted,
		CodeInvalidParameter,
		CodeUnknownSymbol,
		CodeQuantityTooSmall,
		CodeInsufficientFunds,
		CodeOrderRejected,
		CodeWithdrawalRejected,
		CodeRateLimited,
		CodeExchangeError,
		CodeExchangeAuthFailed,
		CodeExchangeUnavailable,
		CodeExchangeTimeout,
		CodePayloadTooLarge,
		CodeMethodNotAllowed,
		CodeUnsupportedMediaType,
		CodeNotFound,
		CodeIdempotencyConflict,
		CodeInternal,
		CodeNotImplemented,
		CodeTransferRejected,
		CodeTransferInFlight,
	}
}

// Error is an error the client may see: a code, a human-readable detail, the
// offending parameter for parameter errors, and when to retry for rate and
// availability errors. Err is the underlying cause; it is logged, never
// shown to the client.
type Error struct {
	Code       Code
	Detail     string
	Param      string
	RetryAfter time.Duration
	Err        error
	// Risk holds the members a risk refusal adds to its problem
	// (RISK_LIMIT_EXCEEDED, TRADING_HALTED; risk.go).
	Risk *RiskProblem
}

func (e *Error) Error() string {
	msg := string(e.Code) + ": " + e.Detail
	if e.Param != "" {
		msg += " (param " + e.Param + ")"
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with a formatted detail.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Detail: fmt.Sprintf(format, args...)}
}

// ParamError returns an INVALID_PARAMETER error about param.
func ParamError(param, format string, args ...any) *Error {
	return &Error{Code: CodeInvalidParameter, Param: param, Detail: fmt.Sprintf(format, args...)}
}

// Clip cuts s to at most max bytes, on a rune boundary, and marks the cut
// with "…": client input quoted in an error's detail stays bounded and
// valid UTF-8.
func Clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// ErrorCode returns the code of the first *Error in err's chain, or
// CodeInternal when there is none.
func ErrorCode(err error) Code {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Code
	}
	return CodeInternal
}

// Sentinels that stores and adapters wrap and callers test with errors.Is.
var (
	// ErrNotFound: no such record (store) or no such order or withdrawal
	// on the exchange (QueryOrder, QueryWithdrawal).
	ErrNotFound = errors.New("not found")
	// ErrConflict: a record with the same unique key already exists.
	ErrConflict = errors.New("already exists")
	// ErrInsufficientFunds: a balance would go negative.
	ErrInsufficientFunds = errors.New("insufficient funds")
	// ErrOverQuota: one owner (a client key) holds as many entries as it
	// may, so a new one is refused.
	ErrOverQuota = errors.New("over quota")
)
