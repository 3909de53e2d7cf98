package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/cmd/internal/gateway"
)

// The operator's controls (docs/contract.md 2.6): keys set-allow-ip,
// exchange-keys allow-address / deny-address / list-addresses, audit, and
// the audit entry every admin change leaves.

// auditAdmin records an admin change made by this command. The change is
// made already; when its record cannot be written the command fails
// saying so, so that the operator knows the trail has a gap.
func auditAdmin(ctx context.Context, st exgate.Store, action, apiKey, exchangeKey string, details map[string]string) error {
	_, err := st.AppendAudit(ctx, exgate.AuditEntry{
		Actor:       exgate.AuditActorCLI,
		Action:      action,
		APIKey:      apiKey,
		ExchangeKey: exchangeKey,
		Details:     details,
	})
	if err != nil {
		return fmt.Errorf("%s: done, but the audit trail could not record it: %w", action, err)
	}
	return nil
}

// parseAllowIP reads --allow-ip.
func parseAllowIP(s string) ([]netip.Prefix, error) {
	ps, err := exgate.ParseIPAllowlist(s)
	if err != nil {
		return nil, fmt.Errorf("--allow-ip: %w", err)
	}
	return ps, nil
}

// setAllowIP sets a key's IP allowlist and records the change.
func setAllowIP(ctx context.Context, st exgate.Store, apiKey string, prefixes []netip.Prefix) error {
	if err := st.SetAllowedIPs(ctx, apiKey, prefixes); err != nil {
		if errors.Is(err, exgate.ErrNotFound) {
			return fmt.Errorf("keys set-allow-ip: no key %q", apiKey)
		}
		return fmt.Errorf("keys set-allow-ip: %w", err)
	}
	return auditAdmin(ctx, st, "keys set-allow-ip", apiKey, "", map[string]string{"allowIps": exgate.FormatIPAllowlist(prefixes)})
}

// runSetAllowIP is `exgate keys set-allow-ip --api-key K --allow-ip
// CIDR,...`; an empty --allow-ip removes the allowlist.
func runSetAllowIP(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, cfg := gateway.NewFlagSet("keys set-allow-ip", getenv, stderr, false)
	apiKey := fs.String("api-key", "", "the client API key")
	allowIP := fs.String("allow-ip", "", "comma-separated CIDR prefixes or addresses the key may be used from; empty: any address")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("keys set-allow-ip: unexpected argument %q", fs.Arg(0))
	}
	if *apiKey == "" {
		return errors.New("keys set-allow-ip: --api-key is required")
	}
	explicit := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "allow-ip" {
			explicit = true
		}
	})
	if !explicit {
		return errors.New(`keys set-allow-ip: --allow-ip is required (--allow-ip "" removes the allowlist)`)
	}
	prefixes, err := parseAllowIP(*allowIP)
	if err != nil {
		return fmt.Errorf("keys set-allow-ip: %w", err)
	}
	st, err := gateway.OpenStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := setAllowIP(ctx, st, *apiKey, prefixes); err != nil {
		return err
	}
	return writeJSONLine(stdout, map[string]any{"apiKey": *apiKey, "allowIps": prefixStrings(prefixes)})
}

func prefixStrings(ps []netip.Prefix) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}

// addressOutput is how list-addresses prints an allowlist entry.
type addressOutput struct {
	Asset      string     `json:"asset"`
	Network    string     `json:"network"`
	Address    string     `json:"address"`
	Tag        string     `json:"tag,omitempty"`
	UsableFrom time.Time  `json:"usableFrom"`
	CreatedAt  time.Time  `json:"createdAt"`
	DeniedAt   *time.Time `json:"deniedAt,omitempty"`
	Status     string     `json:"status"`
}

func toAddressOutput(a exgate.AllowedAddress, now time.Time) addressOutput {
	o := addressOutput{Asset: a.Asset, Network: a.Network, Address: a.Address, Tag: a.Tag,
		UsableFrom: a.UsableFrom, CreatedAt: a.CreatedAt, Status: "allowed"}
	switch {
	case !a.DeniedAt.IsZero():
		o.DeniedAt, o.Status = &a.DeniedAt, "denied"
	case now.Before(a.UsableFrom):
		o.Status = "held"
	}
	return o
}

// runAddresses is `exgate exchange-keys allow-address | deny-address |
// list-addresses`.
func runAddresses(ctx context.Context, sub string, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, cfg := gateway.NewFlagSet("exchange-keys "+sub, getenv, stderr, false)
	apiKey := fs.String("api-key", "", "the client API key the exchange key belongs to")
	name := fs.String("name", "", "the exchange key's name")
	asset := fs.String("asset", "", "the asset withdrawn, e.g. BTC")
	network := fs.String("network", "", "the network, e.g. BTC, ETH, TRX")
	address := fs.String("address", "", "the destination address, exactly as clients will send it")
	tag := fs.String("tag", "", "the destination tag or memo, where the network has one")
	hold := fs.Duration("hold", exgate.DefaultAddressHold, "allow-address: the address becomes usable only after this long (0: at once)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("exchange-keys %s: unexpected argument %q", sub, fs.Arg(0))
	}
	if *apiKey == "" || *name == "" {
		return fmt.Errorf("exchange-keys %s: --api-key and --name are required", sub)
	}
	a := exgate.AllowedAddress{ClientAPIKey: *apiKey, CredentialName: *name,
		Asset: strings.ToUpper(*asset), Network: strings.ToUpper(*network), Address: *address, Tag: *tag}
	if sub != "list-addresses" {
		if a.Asset == "" || a.Network == "" || a.Address == "" {
			return fmt.Errorf("exchange-keys %s: --asset, --network and --address are required", sub)
		}
		if strings.ContainsAny(a.Address+a.Tag, " \t\r\n") {
			return fmt.Errorf("exchange-keys %s: --address and --tag must not contain spaces", sub)
		}
	}
	if *hold < 0 || (flagSet(fs, "hold") && sub != "allow-address") {
		return fmt.Errorf("exchange-keys %s: --hold must be a duration of 0 or more, and only for allow-address", sub)
	}
	st, err := gateway.OpenStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	details := func(a exgate.AllowedAddress) map[string]string {
		d := map[string]string{"asset": a.Asset, "network": a.Network, "address": a.Address, "tag": a.Tag}
		if sub == "allow-address" {
			d["hold"] = hold.String()
			d["usableFrom"] = a.UsableFrom.Format(time.RFC3339)
		}
		return d
	}
	now := time.Now().UTC()
	switch sub {
	case "allow-address":
		a.UsableFrom = now.Add(*hold)
		got, err := st.AllowAddress(ctx, a)
		switch {
		case errors.Is(err, exgate.ErrConflict):
			return fmt.Errorf("exchange-keys allow-address: already allowed (deny-address first to restart its hold)")
		case errors.Is(err, exgate.ErrNotFound):
			return fmt.Errorf("exchange-keys allow-address: no exchange key %q for API key %q", *name, *apiKey)
		case err != nil:
			return fmt.Errorf("exchange-keys allow-address: %w", err)
		}
		if err := auditAdmin(ctx, st, "exchange-keys allow-address", *apiKey, *name, details(got)); err != nil {
			return err
		}
		return writeJSONLine(stdout, toAddressOutput(got, now))
	case "deny-address":
		if err := st.DenyAddress(ctx, a); err != nil {
			if errors.Is(err, exgate.ErrNotFound) {
				return errors.New("exchange-keys deny-address: that asset, network, address and tag are not allowed for this exchange key")
			}
			return fmt.Errorf("exchange-keys deny-address: %w", err)
		}
		if err := auditAdmin(ctx, st, "exchange-keys deny-address", *apiKey, *name, details(a)); err != nil {
			return err
		}
		return writeJSONLine(stdout, map[string]string{"asset": a.Asset, "network": a.Network, "address": a.Address, "tag": a.Tag, "status": "denied"})
	default: // list-addresses
		if _, err := st.ClientKey(ctx, *apiKey); err != nil {
			return fmt.Errorf("exchange-keys list-addresses: no client key %q", *apiKey)
		}
		list, err := st.AllowedAddresses(ctx, *apiKey, *name)
		if err != nil {
			return fmt.Errorf("exchange-keys list-addresses: %w", err)
		}
		for _, a := range list {
			if err := writeJSONLine(stdout, toAddressOutput(a, now)); err != nil {
				return err
			}
		}
		return nil
	}
}

// auditOutput is how exgate audit prints an entry.
type auditOutput struct {
	Seq         int64             `json:"seq"`
	Time        time.Time         `json:"time"`
	Actor       string            `json:"actor"`
	Action      string            `json:"action"`
	APIKey      string            `json:"apiKey,omitempty"`
	ExchangeKey string            `json:"exchangeKey,omitempty"`
	Details     map[string]string `json:"details,omitempty"`
	Status      int               `json:"status,omitempty"`
	Code        string            `json:"code,omitempty"`
	IntentID    string            `json:"intentId,omitempty"`
	RequestID   string            `json:"requestId,omitempty"`
	// ClientRequestID is the client's own X-Request-ID, apart from the
	// gateway's requestId.
	ClientRequestID string `json:"clientRequestId,omitempty"`
	Remote          string `json:"remote,omitempty"`
}

// runAudit is `exgate audit [--api-key K] [--since RFC3339] [--limit N]`:
// one JSON object per line, newest first.
func runAudit(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, cfg := gateway.NewFlagSet("audit", getenv, stderr, false)
	apiKey := fs.String("api-key", "", "only the entries of this client key")
	since := fs.String("since", "", "only entries at or after this time (RFC 3339, e.g. 2026-11-24T00:00:00Z)")
	limit := fs.Int("limit", 100, "at most this many entries, newest first (0: all)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("audit: unexpected argument %q", fs.Arg(0))
	}
	f := exgate.AuditFilter{APIKey: *apiKey, Limit: *limit}
	if *since != "" {
		t, err := time.Parse(time.RFC3339Nano, *since)
		if err != nil {
			return fmt.Errorf("audit: --since must be an RFC 3339 time such as 2026-11-24T00:00:00Z, not %q", *since)
		}
		f.Since = t
	}
	if *limit < 0 {
		return errors.New("audit: --limit must not be negative")
	}
	st, err := gateway.OpenStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	entries, err := st.AuditLog(ctx, f)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	for _, e := range entries {
		o := auditOutput{Seq: e.Seq, Time: e.Time, Actor: e.Actor, Action: e.Action, APIKey: e.APIKey,
			ExchangeKey: e.ExchangeKey, Details: e.Details, Status: e.Status, Code: e.Code, IntentID: e.IntentID,
			RequestID: e.RequestID, ClientRequestID: e.ClientRequestID, Remote: e.Remote}
		if err := writeJSONLine(stdout, o); err != nil {
			return err
		}
	}
	return nil
}
