package main

import (
	"time"

	"github.com/exgate/exgate"
)

// keyOutput is how keys list prints a client key: never its secret.
type keyOutput struct {
	APIKey    string     `json:"apiKey"`
	Label     string     `json:"label"`
	CreatedAt time.Time  `json:"createdAt"`
	RevokedAt *time.Time `json:"revokedAt,omitempty"`
	AllowIPs  []string   `json:"allowIps,omitempty"`
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
	// Paper marks a paper key (docs/contract.md 2.9), with the starting
	// balances it was given ("BTC=1,USDT=10000"; absent: sim's).
	Paper         bool   `json:"paper,omitempty"`
	PaperBalances string `json:"paperBalances,omitempty"`
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
	return credentialOutput{Name: c.Name, Exchange: c.Exchange, Key: c.Key, Permissions: out, CreatedAt: c.CreatedAt,
		Paper: c.Paper, PaperBalances: exgate.FormatPaperBalances(c.PaperBalances)}
}
