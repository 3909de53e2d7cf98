package okx

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/exgate/exgate"
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

// epAccountConfig reads the account's configuration, including the key's
// permissions and IP allow-list: GET /api/v5/account/config (OKX API v5
// docs, "Get account configuration",
// https://www.okx.com/docs-v5/en/#trading-account-rest-api-get-account-configuration:
// perm "read_only", "trade", "withdraw" comma-separated; ip the key's
// allowed addresses, "" when none), 5 requests / 2 s per user.
var epAccountConfig = endpoint{name: "account/config", method: http.MethodGet, path: "/api/v5/account/config", private: true, limit: per2s(5, scopeUser)}

// KeyRights reads cred's permissions and whether it is IP-restricted from
// GET /api/v5/account/config.
func (e *Exchange) KeyRights(ctx context.Context, cred exgate.Credential) (exgate.KeyRights, error) {
	return rest.Fetch(ctx, e.c.do, request{ep: epAccountConfig, cred: &cred}, parseKeyRights)
}

// parseKeyRights reads the perm and ip of GET /account/config.
func parseKeyRights(data []byte) (exgate.KeyRights, error) {
	var rows []struct {
		Perm *string `json:"perm"`
		IP   *string `json:"ip"`
	}
	if err := json.Unmarshal(data, &rows); err != nil || len(rows) != 1 {
		return exgate.KeyRights{}, fmt.Errorf("account config answer: %v (%d items)", err, len(rows))
	}
	var out exgate.KeyRights
	if p := rows[0].Perm; p != nil {
		perms := strings.Split(*p, ",")
		has := func(name string) *bool { v := slices.Contains(perms, name); return &v }
		out.Read, out.Trade, out.Withdraw = has("read_only"), has("trade"), has("withdraw")
	}
	if ip := rows[0].IP; ip != nil {
		restricted := strings.TrimSpace(*ip) != ""
		out.IPRestricted = &restricted
	}
	return out, nil
}
