package gateio

import (
	"context"
	"time"
)

// ServerTime is Gate.io's clock: GET /api/v4/spot/time.
func (e *Exchange) ServerTime(ctx context.Context) (time.Time, error) {
	body, err := e.c.do(ctx, request{ep: epTime})
	if err != nil {
		return time.Time{}, err
	}
	ms, err := parseServerTime(body)
	if err != nil {
		return time.Time{}, badAnswer(epTime, err)
	}
	return time.UnixMilli(ms), nil
}
