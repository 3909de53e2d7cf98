package httpapi

import (
	"net/http"

	"github.com/exgate/exgate"
)

// Status is the HTTP status the API answers an error code with
// (docs/contract.md 2.2, docs/errors.md): the one table of it, at the edge,
// for the API's problems and the console's. A code it does not know is
// 500.
func Status(c exgate.Code) int {
	switch c {
	case exgate.CodeMissingAPIKey,
		exgate.CodeInvalidAPIKey,
		exgate.CodeMissingSignature,
		exgate.CodeInvalidSignature,
		exgate.CodeMissingTimestamp,
		exgate.CodeTimestampOutsideWindow,
		exgate.CodeReplayedRequest:
		return http.StatusUnauthorized
	case exgate.CodeMissingExchangeKey,
		exgate.CodeInvalidParameter,
		exgate.CodeUnknownSymbol:
		return http.StatusBadRequest
	case exgate.CodeUnknownExchangeKey,
		exgate.CodeNotFound:
		return http.StatusNotFound
	case exgate.CodePermissionDenied,
		exgate.CodeIPNotAllowed,
		exgate.CodeAddressNotAllowed,
		exgate.CodeRiskLimitExceeded,
		exgate.CodeTradingHalted:
		return http.StatusForbidden
	case exgate.CodeQuantityTooSmall,
		exgate.CodeInsufficientFunds,
		exgate.CodeOrderRejected,
		exgate.CodeWithdrawalRejected,
		exgate.CodeTransferRejected:
		return http.StatusUnprocessableEntity
	case exgate.CodeRateLimited:
		return http.StatusTooManyRequests
	case exgate.CodeExchangeError,
		exgate.CodeExchangeAuthFailed:
		return http.StatusBadGateway
	case exgate.CodeExchangeUnavailable:
		return http.StatusServiceUnavailable
	case exgate.CodeExchangeTimeout:
		return http.StatusGatewayTimeout
	case exgate.CodePayloadTooLarge:
		return http.StatusRequestEntityTooLarge
	case exgate.CodeMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case exgate.CodeUnsupportedMediaType:
		return http.StatusUnsupportedMediaType
	case exgate.CodeIdempotencyConflict,
		exgate.CodeTransferInFlight:
		return http.StatusConflict
	case exgate.CodeInternal:
		return http.StatusInternalServerError
	case exgate.CodeNotImplemented:
		return http.StatusNotImplemented
	}
	return http.StatusInternalServerError
}
