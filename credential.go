package exgate

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
)

// Permission is what an exchange credential allows through the gateway.
type Permission string

// Permissions of an exchange credential. read is implied by every
// credential; trade allows market orders; withdraw allows withdrawals.
const (
	PermissionRead     Permission = "read"
	PermissionTrade    Permission = "trade"
	PermissionWithdraw Permission = "withdraw"
)

// ParsePermissions parses a comma-separated permission list such as
// "read,trade". Unknown names are an error.
func ParsePermissions(s string) ([]Permission, error) {
	var out []Permission
	for p := range strings.SplitSeq(s, ",") {
		p = strings.TrimSpace(strings.ToLower(p))
		if p == "" {
			continue
		}
		switch Permission(p) {
		case PermissionRead, PermissionTrade, PermissionWithdraw:
			if !slices.Contains(out, Permission(p)) {
				out = append(out, Permission(p))
			}
		default:
			return nil, fmt.Errorf("unknown permission %q (want read, trade or withdraw)", p)
		}
	}
	return out, nil
}

// FormatPermissions writes ps as the comma-separated list
// ParsePermissions reads, as the stores keep it.
func FormatPermissions(ps []Permission) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = string(p)
	}
	return strings.Join(parts, ",")
}

// ClientKey is a gateway client's key pair. Secret is the HMAC key the
// client signs with; it is stored encrypted and shown only at creation.
type ClientKey struct {
	APIKey    string
	Secret    string `json:"-"`
	Label     string
	CreatedAt time.Time
	// RevokedAt is the zero time while the key is active.
	RevokedAt time.Time
	// LegacySigning accepts state-changing requests signed without a
	// timestamp, exactly as the interface spec describes (docs/contract.md 2.1).
	// Such a request can be replayed by whoever captures it.
	LegacySigning bool
}

// Active reports whether the key has not been revoked.
func (k ClientKey) Active() bool { return k.RevokedAt.IsZero() }

// LogValue keeps the secret out of logs.
func (k ClientKey) LogValue() slog.Value {
	return slog.GroupValue(slog.String("apiKey", k.APIKey), slog.String("label", k.Label))
}

// Credential is an exchange account registered under a name for one client
// key. Key, Secret and Passphrase are the exchange's own API credentials
// (empty for sim).
type Credential struct {
	// ID identifies the credential across renames and instances; the
	// simulated exchange keys its paper balances by it.
	ID           int64
	ClientAPIKey string
	Name         string
	Exchange     string
	Key          string
	Secret       string `json:"-"`
	Passphrase   string `json:"-"`
	Permissions  []Permission
	CreatedAt    time.Time
	// Paper marks a paper key (docs/contract.md 2.9): market data from
	// Exchange's public API, everything else simulated by the gateway;
	// it has no exchange key or secret, and nothing signed is ever sent
	// for it. PaperBalances are its starting balances (nil: sim's).
	Paper         bool
	PaperBalances []BalanceChange
}

// Allows reports whether the credential carries permission p. Every
// credential may read.
func (c Credential) Allows(p Permission) bool {
	return p == PermissionRead || slices.Contains(c.Permissions, p)
}

// LogValue keeps secrets out of logs.
func (c Credential) LogValue() slog.Value {
	return slog.GroupValue(
		slog.Int64("id", c.ID),
		slog.String("name", c.Name),
		slog.String("exchange", c.Exchange),
	)
}

// String keeps secrets out of fmt output.
func (c Credential) String() string {
	return fmt.Sprintf("credential %d %q (%s)", c.ID, c.Name, c.Exchange)
}

// Check refuses a credential whose name no store would keep: the
// INVALID_PARAMETER *Error names the field. The exchange and its own rules
// (key, secret, passphrase) are checked by the gateway against its
// registered adapters (cmd/internal/gateway CheckCredential).
func (c Credential) Check() error {
	if c.Name == "" || len(c.Name) > 64 || strings.ContainsAny(c.Name, " \t\r\n") {
		return ParamError("name", "the name is required: 1 to 64 characters without spaces")
	}
	return nil
}
