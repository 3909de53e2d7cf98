package rest

import (
	"context"
	"log/slog"

	"github.com/exgate/exgate"
)

// Request is an adapter's request as Fetch and SendOrder need to know it:
// the error for a 2xx answer to it that cannot be read (the adapter's
// BadAnswer for the request's endpoint).
type Request interface {
	Unreadable(err error) *exgate.Error
}

// Fetch sends r with do (the adapter's client) and reads the answer with
// parse. A call that fails is answered with do's error as it is (do has
// classified it already); an answer parse cannot read with
// r.Unreadable. B is the answer as do returns it: bytes, or a string for
// the answers that are scanned as text.
func Fetch[R Request, B, T any](ctx context.Context, do func(context.Context, R) (B, error), r R, parse func(B) (T, error)) (T, error) {
	var zero T
	body, err := do(ctx, r)
	if err != nil {
		return zero, err
	}
	v, err := parse(body)
	if err != nil {
		return zero, r.Unreadable(err)
	}
	return v, nil
}

// SendOrder is Fetch for an order placement, logged on log as every adapter
// logs one: a placement that failed at Warn ("<exchange> <what> not
// placed", with the client order id, then the attributes where names the
// market by, then the error), an answer that cannot be read at Error
// ("<exchange> order answer unreadable": the order may stand, and the
// gateway reconciles by its client id).
func SendOrder[R Request, T any](ctx context.Context, log *slog.Logger, exchange, what string, do func(context.Context, R) ([]byte, error), r R, parse func([]byte) (T, error), clientOrderID string, where ...any) (T, error) {
	var zero T
	body, err := do(ctx, r)
	if err != nil {
		attrs := append(append([]any{"clientOrderId", clientOrderID}, where...), "err", err)
		log.WarnContext(ctx, exchange+" "+what+" not placed", attrs...)
		return zero, err
	}
	v, err := parse(body)
	if err != nil {
		log.ErrorContext(ctx, exchange+" order answer unreadable", "clientOrderId", clientOrderID, "err", err)
		return zero, r.Unreadable(err)
	}
	return v, nil
}
