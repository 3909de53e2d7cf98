package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/cmd/internal/gateway"
)

func runKeys(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: exgate keys create|list|revoke|set-allow-ip")
	}
	sub := args[0]
	if isHelp(sub) {
		fmt.Fprintln(stdout, "usage: exgate keys create [--label L] [--legacy-signing] [--allow-ip CIDR,...] | list | revoke --api-key K | set-allow-ip --api-key K --allow-ip CIDR,...")
		return nil
	}
	if sub == "set-allow-ip" {
		return runSetAllowIP(ctx, args[1:], getenv, stdout, stderr)
	}
	fs, cfg := gateway.NewFlagSet("keys "+sub, getenv, stderr, false)
	label := fs.String("label", "", "a label for the key (create)")
	allowIP := fs.String("allow-ip", "", "comma-separated CIDR prefixes or addresses the key may be used from (create); default any")
	apiKey := fs.String("api-key", "", "the client API key (revoke)")
	legacy := fs.Bool("legacy-signing", false, "accept POSTs signed without a timestamp, as the interface spec describes (create); a captured request can then be replayed")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("keys %s: unexpected argument %q", sub, fs.Arg(0))
	}
	switch sub {
	case "create", "list", "revoke":
	default:
		return fmt.Errorf("unknown keys command %q (want create, list, revoke or set-allow-ip)", sub)
	}
	if *allowIP != "" && sub != "create" {
		return fmt.Errorf("keys %s: --allow-ip is for create (keys set-allow-ip changes it)", sub)
	}
	allowIPs, err := parseAllowIP(*allowIP)
	if err != nil {
		return fmt.Errorf("keys %s: %w", sub, err)
	}
	st, err := gateway.OpenStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	switch sub {
	case "create":
		k, err := gateway.NewClientKey(ctx, st, *label, *legacy)
		if err != nil {
			return err
		}
		if err := auditAdmin(ctx, st, "keys create", k.APIKey, "", map[string]string{"label": k.Label, "legacySigning": strconv.FormatBool(k.LegacySigning)}); err != nil {
			return err
		}
		if len(allowIPs) > 0 {
			// The secret has not been shown: should this fail, nobody
			// holds the key, and it is revoked all the same.
			if err := setAllowIP(ctx, st, k.APIKey, allowIPs); err != nil {
				return errors.Join(err, st.RevokeClientKey(ctx, k.APIKey))
			}
		}
		return writeJSONLine(stdout, map[string]string{"apiKey": k.APIKey, "secretKey": k.Secret, "label": k.Label})
	case "list":
		keys, err := st.ListClientKeys(ctx)
		if err != nil {
			return fmt.Errorf("list keys: %w", err)
		}
		out := make([]keyOutput, 0, len(keys))
		for _, k := range keys {
			o := keyOutput{APIKey: k.APIKey, Label: k.Label, CreatedAt: k.CreatedAt, LegacySigning: k.LegacySigning}
			ips, err := st.AllowedIPs(ctx, k.APIKey)
			if err != nil {
				return fmt.Errorf("list keys: %w", err)
			}
			o.AllowIPs = prefixStrings(ips)
			if !k.Active() {
				o.RevokedAt = &k.RevokedAt
			}
			out = append(out, o)
		}
		return writeJSONLine(stdout, out)
	default: // revoke
		if *apiKey == "" {
			return errors.New("keys revoke: --api-key is required")
		}
		if err := st.RevokeClientKey(ctx, *apiKey); err != nil {
			if errors.Is(err, exgate.ErrNotFound) {
				return fmt.Errorf("keys revoke: no key %q", *apiKey)
			}
			return fmt.Errorf("keys revoke: %w", err)
		}
		if err := auditAdmin(ctx, st, "keys revoke", *apiKey, "", nil); err != nil {
			return err
		}
		return writeJSONLine(stdout, map[string]string{"apiKey": *apiKey, "status": "revoked"})
	}
}

func runExchangeKeys(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: exgate exchange-keys add|list|remove|allow-address|deny-address|list-addresses")
	}
	sub := args[0]
	if isHelp(sub) {
		fmt.Fprintln(stdout, "usage: exgate exchange-keys add --api-key K --name N --exchange "+gateway.ExchangeList("|")+" [--key EK --secret-stdin | --paper [--balances A=N,…]] [--permissions P] | list --api-key K | remove --api-key K --name N | allow-address | deny-address | list-addresses")
		return nil
	}
	switch sub {
	case "allow-address", "deny-address", "list-addresses":
		return runAddresses(ctx, sub, args[1:], getenv, stdout, stderr)
	}
	fs, cfg := gateway.NewFlagSet("exchange-keys "+sub, getenv, stderr, false)
	apiKey := fs.String("api-key", "", "the client API key the exchange key belongs to")
	name := fs.String("name", "", "the exchange key's name, sent by clients in X-API-EXCHANGE-KEY")
	exchange := fs.String("exchange", "", gateway.ExchangeList(""))
	key := fs.String("key", "", "the exchange API key (optional for sim)")
	secret := fs.String("secret", "", "the exchange API secret (optional for sim); prefer --secret-stdin, which keeps it out of the process list and shell history")
	passphrase := fs.String("passphrase", "", "the exchange API passphrase, where the exchange has one; prefer --secret-stdin")
	secretStdin := fs.Bool("secret-stdin", false, "read the exchange secret from the first line of standard input and the passphrase, if any, from the second")
	perms := fs.String("permissions", "read,trade", "comma-separated: read, trade, withdraw (read is always included: every exchange key reads)")
	paperKey := fs.Bool("paper", false, "a paper key of a real exchange: its market data, simulated orders and balances; no --key or --secret (docs/paper.md)")
	paperBalances := fs.String("balances", "", "with --paper: the starting balances, ASSET=AMOUNT,… (default: sim's)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("exchange-keys %s: unexpected argument %q", sub, fs.Arg(0))
	}
	if *apiKey == "" {
		return fmt.Errorf("exchange-keys %s: --api-key is required", sub)
	}
	var cred exgate.Credential
	switch sub {
	case "add":
		if *secretStdin {
			if *secret != "" || *passphrase != "" {
				return errors.New("exchange-keys add: give the secret either with --secret-stdin or with --secret/--passphrase, not both")
			}
			var err error
			if *secret, *passphrase, err = readSecrets(stdin); err != nil {
				return fmt.Errorf("exchange-keys add: --secret-stdin: %w", err)
			}
		}
		ps, err := exgate.ParsePermissions(*perms)
		if err != nil {
			return fmt.Errorf("exchange-keys add: --permissions: %w", err)
		}
		if !slices.Contains(ps, exgate.PermissionRead) {
			// Every exchange key reads (docs/contract.md 2.4): say so
			// rather than add it silently.
			fmt.Fprintf(stderr, "exchange-keys add: every exchange key has read; its permissions are %s\n",
				exgate.FormatPermissions(append([]exgate.Permission{exgate.PermissionRead}, ps...)))
		}
		if *paperBalances != "" && !*paperKey {
			return errors.New("exchange-keys add: --balances goes with --paper")
		}
		balances, err := exgate.ParsePaperBalances(*paperBalances)
		if err != nil {
			return fmt.Errorf("exchange-keys add: --balances: %w", err)
		}
		cred = exgate.Credential{ClientAPIKey: *apiKey, Name: *name, Exchange: strings.ToLower(*exchange),
			Key: *key, Secret: *secret, Passphrase: *passphrase, Permissions: ps, Paper: *paperKey, PaperBalances: balances}
		if err := gateway.CheckCredential(cred); err != nil {
			if e, ok := errors.AsType[*exgate.Error](err); ok && e.Param != "" {
				return fmt.Errorf("exchange-keys add: --%s: %s", e.Param, e.Detail)
			}
			return fmt.Errorf("exchange-keys add: %w", err)
		}
	case "remove":
		if *name == "" {
			return errors.New("exchange-keys remove: --name is required")
		}
	case "list":
	default:
		return fmt.Errorf("unknown exchange-keys command %q (want add, list or remove)", sub)
	}
	st, err := gateway.OpenStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	switch sub {
	case "add":
		c, err := st.AddCredential(ctx, cred)
		switch {
		case errors.Is(err, exgate.ErrConflict):
			return fmt.Errorf("exchange-keys add: %q already exists for this API key", cred.Name)
		case errors.Is(err, exgate.ErrNotFound):
			return fmt.Errorf("exchange-keys add: no active client key %q", cred.ClientAPIKey)
		case err != nil:
			return fmt.Errorf("exchange-keys add: %w", err)
		}
		// The exchange's key, secret and passphrase stay out of the trail.
		if err := auditAdmin(ctx, st, "exchange-keys add", c.ClientAPIKey, c.Name, map[string]string{
			"exchange": c.Exchange, "permissions": exgate.FormatPermissions(c.Permissions), "paper": strconv.FormatBool(c.Paper)}); err != nil {
			return err
		}
		return writeJSONLine(stdout, toCredentialOutput(c))
	case "list":
		if _, err := st.ClientKey(ctx, *apiKey); err != nil {
			return fmt.Errorf("exchange-keys list: no client key %q", *apiKey)
		}
		cs, err := st.ListCredentials(ctx, *apiKey)
		if err != nil {
			return fmt.Errorf("exchange-keys list: %w", err)
		}
		out := make([]credentialOutput, 0, len(cs))
		for _, c := range cs {
			out = append(out, toCredentialOutput(c))
		}
		return writeJSONLine(stdout, out)
	default:
		if err := st.RemoveCredential(ctx, *apiKey, *name); err != nil {
			if errors.Is(err, exgate.ErrNotFound) {
				return fmt.Errorf("exchange-keys remove: no exchange key %q for this API key", *name)
			}
			return fmt.Errorf("exchange-keys remove: %w", err)
		}
		if err := auditAdmin(ctx, st, "exchange-keys remove", *apiKey, *name, nil); err != nil {
			return err
		}
		return writeJSONLine(stdout, map[string]string{"name": *name, "status": "removed"})
	}
}

func writeJSONLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

func isHelp(arg string) bool {
	return arg == "-h" || arg == "--help" || arg == "-help" || arg == "help"
}

// maxSecretInput bounds what --secret-stdin reads.
const maxSecretInput = 64 << 10

// readSecrets reads an exchange secret from the first line of r and a
// passphrase from the second, if any; surrounding spaces and the line
// ends (\n or \r\n) are not part of either.
func readSecrets(r io.Reader) (secret, passphrase string, err error) {
	if r == nil {
		return "", "", errors.New("no standard input")
	}
	b, err := io.ReadAll(io.LimitReader(r, maxSecretInput+1))
	if err != nil {
		return "", "", fmt.Errorf("read standard input: %w", err)
	}
	if len(b) > maxSecretInput {
		return "", "", fmt.Errorf("standard input is larger than %d bytes", maxSecretInput)
	}
	lines := strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n")
	secret = strings.TrimSpace(lines[0])
	if len(lines) > 1 {
		passphrase = strings.TrimSpace(lines[1])
	}
	for _, extra := range lines[min(2, len(lines)):] {
		if strings.TrimSpace(extra) != "" {
			return "", "", errors.New("standard input holds more than two lines (the secret, then the passphrase)")
		}
	}
	if secret == "" {
		return "", "", errors.New("the first line of standard input (the secret) is empty")
	}
	return secret, passphrase, nil
}
