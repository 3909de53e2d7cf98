package bybit

import (
	"context"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

// ServerTime is Bybit's clock: GET /v5/market/time.
func (e *Exchange) ServerTime(ctx context.Context) (time.Time, error) {
	ms, err := rest.Fetch(ctx, e.c.do, request{ep: epTime}, parseServerTime)
	if err != nil {
		return time.Time{}, err
	}
	return time.UnixMilli(ms), nil
}

// KeyRights reads the key's permissions and IP binding from
// GET /v5/user/query-api: readOnly (1: no trading), permissions.Spot
// (SpotTrade), permissions.Wallet (Withdraw) and ips ("*" or empty: any
// address). Source: https://bybit-exchange.github.io/docs/v5/user/apikey-info.
func (e *Exchange) KeyRights(ctx context.Context, cred exgate.Credential) (exgate.KeyRights, error) {
	info, err := rest.Fetch(ctx, e.c.do, request{ep: epQueryAPI, cred: &cred}, parseKeyInfo)
	if err != nil {
		return exgate.KeyRights{}, err
	}
	read := true
	trade := info.ReadOnly == 0 && contains(info.Permissions.Spot, "SpotTrade")
	withdraw := info.ReadOnly == 0 && contains(info.Permissions.Wallet, "Withdraw")
	restricted := false
	for _, ip := range info.IPs {
		if ip != "" && ip != "*" {
			restricted = true
		}
	}
	return exgate.KeyRights{Read: &read, Trade: &trade, Withdraw: &withdraw, IPRestricted: &restricted}, nil
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
