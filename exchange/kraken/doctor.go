package kraken

import (
	"context"
	"fmt"
	"time"
)

// ServerTime is Kraken's clock: GET /0/public/Time (unixtime, seconds).
func (e *Exchange) ServerTime(ctx context.Context) (time.Time, error) {
	var r struct {
		Unixtime int64 `json:"unixtime"`
	}
	if err := e.c.public(ctx, "Time", nil, &r); err != nil {
		return time.Time{}, err
	}
	if r.Unixtime <= 0 {
		return time.Time{}, fmt.Errorf("kraken: bad server time %d", r.Unixtime)
	}
	return time.Unix(r.Unixtime, 0), nil
}
