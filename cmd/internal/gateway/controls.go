package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	"github.com/exgate/exgate"
)

// checkSharedState refuses Redis without a database: instances sharing
// limits and the replay guard through Redis while each keeps its own
// SQLite file would each have their own keys, orders and allowlists.
func (c *Config) checkSharedState() error {
	if c.RedisURL != "" && c.DatabaseURL == "" {
		return errors.New("EXGATE_REDIS_URL is set but EXGATE_DATABASE_URL is not: instances that share Redis must share " +
			"one PostgreSQL store too (each would otherwise keep its own SQLite keys, orders and allowlists); " +
			"set EXGATE_DATABASE_URL, quoted in an env file since it may contain &")
	}
	return nil
}

// parseTrustedProxies reads --trusted-proxies.
func parseTrustedProxies(s string) ([]netip.Prefix, error) {
	ps, err := exgate.ParseIPAllowlist(s)
	if err != nil {
		return nil, fmt.Errorf("--trusted-proxies (EXGATE_TRUSTED_PROXIES): %w", err)
	}
	return ps, nil
}

// checkMasterKey verifies the master key against the store.
func checkMasterKey(ctx context.Context, st exgate.Store) error {
	if err := st.CheckMasterKey(ctx); err != nil {
		if errors.Is(err, exgate.ErrWrongMasterKey) {
			return fmt.Errorf("wrong master key: %w", exgate.ErrWrongMasterKey)
		}
		return fmt.Errorf("check the master key: %w", err)
	}
	return nil
}
