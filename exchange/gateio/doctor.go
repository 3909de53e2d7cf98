package gateio

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

// ServerTime is Gate.io's clock: GET /api/v4/spot/time.
func (e *Exchange) ServerTime(ctx context.Context) (time.Time, error) {
	ms, err := rest.Fetch(ctx, e.c.do, request{ep: epTime}, parseServerTime)
	if err != nil {
		return time.Time{}, err
	}
	return time.UnixMilli(ms), nil
}

// epAccountDetail reads the account and the key's IP whitelist: GET
// /api/v4/account/detail (Gate.io API v4, Account). Gate.io publishes no
// call that reads a key's permissions, so KeyRights reports only whether
// the key is IP-restricted.
var epAccountDetail = endpoint{name: "account/detail", method: http.MethodGet, path: "/account/detail", private: true, budget: budgetSpotPrivate}

// KeyRights reports whether cred's key is restricted to a whitelist of IP
// addresses; its permissions are not available from Gate.io.
func (e *Exchange) KeyRights(ctx context.Context, cred exgate.Credential) (exgate.KeyRights, error) {
	body, err := e.c.do(ctx, request{ep: epAccountDetail, cred: &cred})
	if err != nil {
		return exgate.KeyRights{}, err
	}
	var d struct {
		IPWhitelist *[]string `json:"ip_whitelist"`
	}
	if err := json.Unmarshal(body, &d); err != nil {
		return exgate.KeyRights{}, badAnswer(epAccountDetail, err)
	}
	if d.IPWhitelist == nil {
		return exgate.KeyRights{}, nil
	}
	restricted := len(*d.IPWhitelist) > 0
	return exgate.KeyRights{IPRestricted: &restricted}, nil
}
