package main

import (
	"context"
	"time"

	"github.com/exgate/exgate"
	"github.com/shopspring/decimal"
)

// appStore is everything the commands use of a store; sqlite.Store and
// postgres.Store both provide it.
type appStore interface {
	Close() error
	Ping(ctx context.Context) error

	CreateClientKey(ctx context.Context, k exgate.ClientKey) error
	ClientKey(ctx context.Context, apiKey string) (exgate.ClientKey, error)
	ListClientKeys(ctx context.Context) ([]exgate.ClientKey, error)
	RevokeClientKey(ctx context.Context, apiKey string) error

	AddCredential(ctx context.Context, c exgate.Credential) (exgate.Credential, error)
	Credential(ctx context.Context, apiKey, name string) (exgate.Credential, error)
	ListCredentials(ctx context.Context, apiKey string) ([]exgate.Credential, error)
	RemoveCredential(ctx context.Context, apiKey, name string) error

	CreateIntent(ctx context.Context, it exgate.Intent) error
	Intent(ctx context.Context, id string) (exgate.Intent, error)
	IntentByClientRef(ctx context.Context, apiKey string, kind exgate.IntentKind, ref string) (exgate.Intent, error)
	UpdateIntent(ctx context.Context, id string, state exgate.IntentState, status int, response []byte) error
	UnfinishedIntents(ctx context.Context, limit int) ([]exgate.Intent, error)

	EnsureSimAccount(ctx context.Context, credentialID int64, initial []exgate.BalanceChange) error
	SimBalances(ctx context.Context, credentialID int64) (map[string]decimal.Decimal, error)
	ApplySimOperation(ctx context.Context, credentialID int64, op exgate.SimOperation) error
	SimOperation(ctx context.Context, credentialID int64, id string) (exgate.SimOperation, error)
}

// keyOutput is how keys list prints a client key: never its secret.
type keyOutput struct {
	APIKey    string     `json:"apiKey"`
	Label     string     `json:"label"`
	CreatedAt time.Time  `json:"createdAt"`
	RevokedAt *time.Time `json:"revokedAt,omitempty"`
	// LegacySigning: the key may send POSTs without a timestamp.
	LegacySigning bool `json:"legacySigning,omitempty"`
}

// credentialOutput is how exchange-keys prints a credential: never its
// secrets.
type credentialOutput struct {
	Name        string              `json:"name"`
	Exchange    string              `json:"exchange"`
	Key         string              `json:"key,omitempty"`
	Permissions []exgate.Permission `json:"permissions"`
	CreatedAt   time.Time           `json:"createdAt"`
}

func toCredentialOutput(c exgate.Credential) credentialOutput {
	perms := append([]exgate.Permission{exgate.PermissionRead}, c.Permissions...)
	seen := map[exgate.Permission]bool{}
	out := perms[:0]
	for _, p := range perms {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return credentialOutput{Name: c.Name, Exchange: c.Exchange, Key: c.Key, Permissions: out, CreatedAt: c.CreatedAt}
}
