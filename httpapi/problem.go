package httpapi

import (
	"encoding/json"
	"errors"

	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/exgate/exgate"
)

// problemTypeBase is where each error code is documented; a problem's type
// is this URL with the lower-case code as fragment.
const problemTypeBase = "https://github.com/exgate/exgate/blob/main/docs/errors.md#"

// problem is an RFC 9457 problem details body.
type problem struct {
	Type      string `json:"type"`
	Title     string `json:"title"`
	Status    int    `json:"status"`
	Detail    string `json:"detail"`
	Code      string `json:"code"`
	Param     string `json:"param,omitempty"`
	RequestID string `json:"requestId,omitempty"`
	// Extension members of an EXCHANGE_TIMEOUT answer about an order or
	// withdrawal: its gateway id and the PENDING record itself.
	ID         string             `json:"id,omitempty"`
	Order      *exgate.Order      `json:"order,omitempty"`
	Withdrawal *exgate.Withdrawal `json:"withdrawal,omitempty"`
	Transfer   *exgate.Transfer   `json:"transfer,omitempty"`
	// Extension members of a risk refusal (docs/contract.md 2.8):
	// RISK_LIMIT_EXCEEDED's limit, value and max, TRADING_HALTED's reason.
	Limit  string  `json:"limit,omitempty"`
	Value  string  `json:"value,omitempty"`
	Max    string  `json:"max,omitempty"`
	Reason *string `json:"reason,omitempty"`
}

// pendingError is a failure about an order or withdrawal the journal
// recorded (a 504's PENDING record): the problem carries the record.
type pendingError struct {
	err        error
	order      *exgate.Order
	withdrawal *exgate.Withdrawal
	transfer   *exgate.Transfer
}

func (e *pendingError) Error() string { return e.err.Error() }
func (e *pendingError) Unwrap() error { return e.err }

// withPending is the journal's failure err, carrying the order or
// withdrawal v it recorded when it has an id (a zero v: err alone).
func withPending[T exgate.Order | exgate.Withdrawal | exgate.Transfer](err error, v T) error {
	switch v := any(v).(type) {
	case exgate.Order:
		if v.ID != "" {
			return &pendingError{err: err, order: &v}
		}
	case exgate.Withdrawal:
		if v.ID != "" {
			return &pendingError{err: err, withdrawal: &v}
		}
	case exgate.Transfer:
		if v.ID != "" {
			return &pendingError{err: err, transfer: &v}
		}
	}
	return err
}

// writeProblem is the one place errors become HTTP answers. Details of
// errors that are not *exgate.Error are logged, never shown.
func (s *Server) writeProblem(w http.ResponseWriter, r *http.Request, err error) {
	e, ok := errors.AsType[*exgate.Error](err)
	if !ok {
		s.log.ErrorContext(r.Context(), "internal error", "requestId", requestID(r.Context()), "err", clipLog(err))
		e = &exgate.Error{Code: exgate.CodeInternal, Detail: "the gateway failed to handle the request; it has been logged"}
	} else if e.Err != nil || e.Code == exgate.CodeInternal {
		s.log.WarnContext(r.Context(), "request failed", "requestId", requestID(r.Context()), "code", string(e.Code), "err", clipLog(err))
	}
	status := Status(e.Code)
	if e.RetryAfter > 0 {
		secs := int64((e.RetryAfter + time.Second - 1) / time.Second)
		w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	} else if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	p := problem{
		Type:      problemTypeBase + strings.ToLower(string(e.Code)),
		Title:     titleOf(e.Code, status),
		Status:    status,
		Detail:    clipDetail(e.Detail),
		Code:      string(e.Code),
		Param:     e.Param,
		RequestID: requestID(r.Context()),
	}
	if e.Risk != nil {
		p.Limit, p.Value, p.Max, p.Reason = e.Risk.Limit, e.Risk.Value, e.Risk.Max, e.Risk.Reason
		s.noteRiskRefusal(e)
	}
	if rec, ok := errors.AsType[*pendingError](err); ok {
		p.Order, p.Withdrawal, p.Transfer = rec.order, rec.withdrawal, rec.transfer
		switch {
		case rec.order != nil:
			p.ID = rec.order.ID
		case rec.withdrawal != nil:
			p.ID = rec.withdrawal.ID
		case rec.transfer != nil:
			p.ID = rec.transfer.ID
		}
	}
	body, _ := json.Marshal(p)
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

var codeTitles = map[exgate.Code]string{
	exgate.CodeMissingAPIKey:          "Missing API key",
	exgate.CodeInvalidAPIKey:          "Invalid API key",
	exgate.CodeMissingSignature:       "Missing signature",
	exgate.CodeInvalidSignature:       "Invalid signature",
	exgate.CodeMissingTimestamp:       "Missing timestamp",
	exgate.CodeTimestampOutsideWindow: "Timestamp outside the receive window",
	exgate.CodeReplayedRequest:        "Replayed request",
	exgate.CodeMissingExchangeKey:     "Missing exchange key",
	exgate.CodeUnknownExchangeKey:     "Unknown exchange key",
	exgate.CodePermissionDenied:       "Permission denied",
	exgate.CodeIPNotAllowed:           "IP address not allowed",
	exgate.CodeAddressNotAllowed:      "Withdrawal address not allowed",
	exgate.CodeRiskLimitExceeded:      "Risk limit exceeded",
	exgate.CodeTradingHalted:          "Trading halted",
	exgate.CodeInvalidParameter:       "Invalid parameter",
	exgate.CodeUnknownSymbol:          "Unknown symbol",
	exgate.CodeQuantityTooSmall:       "Quantity too small",
	exgate.CodeInsufficientFunds:      "Insufficient funds",
	exgate.CodeOrderRejected:          "Order rejected",
	exgate.CodeWithdrawalRejected:     "Withdrawal rejected",
	exgate.CodeRateLimited:            "Rate limited",
	exgate.CodeExchangeError:          "Exchange error",
	exgate.CodeExchangeAuthFailed:     "Exchange authentication failed",
	exgate.CodeExchangeUnavailable:    "Exchange unavailable",
	exgate.CodeExchangeTimeout:        "Exchange timeout",
	exgate.CodePayloadTooLarge:        "Payload too large",
	exgate.CodeMethodNotAllowed:       "Method not allowed",
	exgate.CodeUnsupportedMediaType:   "Unsupported media type",
	exgate.CodeNotFound:               "Not found",
	exgate.CodeIdempotencyConflict:    "Idempotency conflict",
	exgate.CodeInternal:               "Internal error",
	exgate.CodeNotImplemented:         "Not implemented",
}

func titleOf(c exgate.Code, status int) string {
	if t, ok := codeTitles[c]; ok {
		return t
	}
	return http.StatusText(status)
}

// writeJSON writes v with status 200; an error (v cannot be encoded)
// writes nothing.
func writeJSON(w http.ResponseWriter, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(body)
	return nil
}

// maxDetail bounds a problem's detail; details quote client input, which
// is clipped where it is quoted, and this is the last guard.
const maxDetail = 1024

func clipDetail(d string) string { return exgate.Clip(d, maxDetail) }

// clipLog is an error's text for a log line, clipped like a detail.
func clipLog(err error) string { return clipDetail(err.Error()) }
