package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/client"
	"github.com/exgate/exgate/cmd/internal/gateway"
	"github.com/exgate/exgate/exchange/sim"
)

// demoLabel marks the client key demo creates and reuses.
const demoLabel = "demo"

// demoExchangeKey is the name of the demo's sim exchange key.
const demoExchangeKey = "demo"

// ensureDemo returns the demo client key (created on first run) and its
// sim exchange key named demo, with every permission.
func ensureDemo(ctx context.Context, st exgate.Store) (exgate.ClientKey, exgate.Credential, error) {
	var key exgate.ClientKey
	keys, err := st.ListClientKeys(ctx)
	if err != nil {
		return key, exgate.Credential{}, fmt.Errorf("demo: list keys: %w", err)
	}
	for _, k := range keys {
		if k.Label == demoLabel && k.Active() {
			if key, err = st.ClientKey(ctx, k.APIKey); err != nil {
				return key, exgate.Credential{}, fmt.Errorf("demo: read key: %w", err)
			}
			break
		}
	}
	if key.APIKey == "" {
		if key, err = gateway.NewClientKey(ctx, st, demoLabel, false); err != nil {
			return key, exgate.Credential{}, fmt.Errorf("demo: %w", err)
		}
		if err := auditAdmin(ctx, st, "demo keys create", key.APIKey, "", map[string]string{"label": key.Label}); err != nil {
			return key, exgate.Credential{}, err
		}
	}
	cred, err := st.Credential(ctx, key.APIKey, demoExchangeKey)
	if errors.Is(err, exgate.ErrNotFound) {
		cred, err = st.AddCredential(ctx, exgate.Credential{
			ClientAPIKey: key.APIKey, Name: demoExchangeKey, Exchange: sim.Name,
			Permissions: []exgate.Permission{exgate.PermissionRead, exgate.PermissionTrade, exgate.PermissionWithdraw},
		})
		if err == nil {
			err = auditAdmin(ctx, st, "demo exchange-keys add", key.APIKey, cred.Name, map[string]string{
				"exchange": cred.Exchange, "permissions": exgate.FormatPermissions(cred.Permissions)})
		}
	}
	if err != nil {
		return key, cred, fmt.Errorf("demo: exchange key: %w", err)
	}
	return key, cred, nil
}

// demoRecvWindow is the receive window of demo's curl command: the
// gateway's longest, in milliseconds (docs/contract.md 2.1).
const demoRecvWindow = 60000

// printDemo ensures the demo keys and prints them, the sim balances and a
// curl command that fetches the balances, signature included.
func printDemo(ctx context.Context, st exgate.Store, simEx exgate.Exchange, w io.Writer, baseURL string, now func() time.Time) error {
	key, cred, err := ensureDemo(ctx, st)
	if err != nil {
		return err
	}
	bals, err := simEx.Balances(ctx, cred)
	if err != nil {
		return fmt.Errorf("demo: balances: %w", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "exgate demo: a simulated exchange with paper balances, no account or network needed.\n\n")
	fmt.Fprintf(&b, "  export EXGATE_URL=%s\n  export EXGATE_API_KEY=%s\n  export EXGATE_SECRET_KEY=%s\n  export EXGATE_EXCHANGE_KEY=%s\n\n",
		baseURL, key.APIKey, key.Secret, cred.Name)
	fmt.Fprintf(&b, "Balances of the sim exchange key %q:\n", cred.Name)
	for _, bal := range bals {
		fmt.Fprintf(&b, "  %-6s %s\n", bal.Asset, bal.Available.String())
	}
	// The gateway requires a signed timestamp on every request
	// (docs/contract.md 2.1): the command carries one with the longest
	// receive window, so it works for a minute after it is printed.
	params := "timestamp=" + strconv.FormatInt(now().UnixMilli(), 10) + "&recvWindow=" + strconv.Itoa(demoRecvWindow)
	sig := client.Sign(key.Secret, params)
	fmt.Fprintf(&b, "\nFetch them from another terminal within a minute (the signature is HMAC-SHA256 of %q):\n\n", params)
	fmt.Fprintf(&b, "curl -s -H 'X-API-KEY: %s' -H 'X-API-EXCHANGE-KEY: %s' \\\n  '%s/v1/wallet/account-balance?%s&signature=%s'\n\n",
		key.APIKey, cred.Name, baseURL, params, sig)
	fmt.Fprintf(&b, "Or paste the four exports above and run (call signs a fresh timestamp into every request, which the gateway requires):\n\n  go run ./cmd/exgate call GET /v1/wallet/account-balance\n  go run ./cmd/exgate call POST /v1/order/market asset1=BTC asset2=USDT side=BUY quantity=100 quantityIn=asset2\n\n")
	_, err = io.WriteString(w, b.String())
	return err
}
