package binance

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/exgate/exgate"
)

// epAPIRestrictions reads an API key's rights: GET
// /sapi/v1/account/apiRestrictions, weight 1 (IP).
// Source: developers.binance.com wallet/account/api-key-permission.
var epAPIRestrictions = endpoint{name: "apiRestrictions", method: http.MethodGet, path: "/sapi/v1/account/apiRestrictions", signed: true, budget: budgetSapiIP, weight: 1}

// ServerTime is Binance's clock: GET /api/v3/time.
func (e *Exchange) ServerTime(ctx context.Context) (time.Time, error) {
	body, err := e.c.do(ctx, request{ep: epTime})
	if err != nil {
		return time.Time{}, err
	}
	var st struct {
		ServerTime int64 `json:"serverTime"`
	}
	if err := json.Unmarshal(body, &st); err != nil || st.ServerTime <= 0 {
		return time.Time{}, badAnswer(epTime, fmt.Errorf("server time answer %q", body))
	}
	return time.UnixMilli(st.ServerTime), nil
}

// KeyRights reads cred's rights from GET /sapi/v1/account/apiRestrictions:
// enableReading, enableSpotAndMarginTrading, enableWithdrawals and
// ipRestrict.
func (e *Exchange) KeyRights(ctx context.Context, cred exgate.Credential) (exgate.KeyRights, error) {
	body, err := e.c.do(ctx, request{ep: epAPIRestrictions, cred: &cred})
	if err != nil {
		return exgate.KeyRights{}, err
	}
	var r struct {
		IPRestrict                 *bool `json:"ipRestrict"`
		EnableReading              *bool `json:"enableReading"`
		EnableWithdrawals          *bool `json:"enableWithdrawals"`
		EnableSpotAndMarginTrading *bool `json:"enableSpotAndMarginTrading"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return exgate.KeyRights{}, badAnswer(epAPIRestrictions, err)
	}
	return exgate.KeyRights{Read: r.EnableReading, Trade: r.EnableSpotAndMarginTrading, Withdraw: r.EnableWithdrawals, IPRestricted: r.IPRestrict}, nil
}
