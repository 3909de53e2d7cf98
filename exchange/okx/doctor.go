package okx

import (
	"context"
	"time"

	"github.com/exgate/exgate/exchange/internal/rest"
)

// ServerTime is OKX's clock: GET /api/v5/public/time.
func (e *Exchange) ServerTime(ctx context.Context) (time.Time, error) {
	ms, err := rest.Fetch(ctx, e.c.do, request{ep: epTime}, parseServerTime)
	if err != nil {
		return time.Time{}, err
	}
	return time.UnixMilli(ms), nil
}
