package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/cmd/internal/gateway"
	"github.com/exgate/exgate/risk"
)

// The risk controls (docs/contract.md 2.8, docs/risk.md): exgate risk set,
// show, halt and resume. Every change goes to the store, which every
// instance reads at least once a second, and to the audit trail.

const riskUsage = "usage: exgate risk set --api-key K [--max-order-notional USD] [--max-open-orders N] [--price-band PCT] [--daily-notional USD] [--daily-withdrawal USD] [--symbols BASE/QUOTE,...] [--clear NAME,...]\n" +
	"       exgate risk show [--api-key K]\n" +
	"       exgate risk halt (--api-key K | --all) [--cancel-open] [--reason TEXT]\n" +
	"       exgate risk resume (--api-key K | --all)"

func runRisk(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New(strings.ReplaceAll(riskUsage, "\n      ", ";"))
	}
	sub := args[0]
	if isHelp(sub) {
		fmt.Fprintln(stdout, riskUsage)
		return nil
	}
	switch sub {
	case "set":
		return runRiskSet(ctx, args[1:], getenv, stdout, stderr)
	case "show":
		return runRiskShow(ctx, args[1:], getenv, stdout, stderr)
	case "halt", "resume":
		return runRiskHalt(ctx, sub, args[1:], getenv, stdout, stderr)
	}
	return fmt.Errorf("unknown risk command %q (want set, show, halt or resume)", sub)
}

// riskFlags parses the limits of `risk set`; every value is checked
// before anything is changed.
func riskFlags(fs *flag.FlagSet, args []string) (set exgate.RiskLimits, clear []string, err error) {
	maxOrder := fs.String("max-order-notional", "", "the most one order may be worth, in USD")
	maxOpen := fs.String("max-open-orders", "", "the most open orders the key may have on all its exchange keys")
	band := fs.String("price-band", "", "the most, in percent, a limit price or a market order's expected price may be from the mid")
	daily := fs.String("daily-notional", "", "the most the key's orders of a UTC day may be worth, in USD")
	dailyWd := fs.String("daily-withdrawal", "", "the most the key may withdraw in a UTC day, in USD")
	symbols := fs.String("symbols", "", "the only pairs the key may trade, BASE/QUOTE,...")
	clearText := fs.String("clear", "", "limits to remove: "+strings.Join(exgate.RiskLimitNames, ","))
	if err = fs.Parse(args); err != nil {
		return
	}
	if fs.NArg() > 0 {
		return set, nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	amount := func(flagName, text string) (*decimal.Decimal, error) {
		if !given[flagName] {
			return nil, nil
		}
		d, err := exgate.ParseRiskAmount("--"+flagName, text)
		if err != nil {
			return nil, err
		}
		return &d, nil
	}
	if set.MaxOrderNotional, err = amount("max-order-notional", *maxOrder); err != nil {
		return
	}
	if set.PriceBand, err = amount("price-band", *band); err != nil {
		return
	}
	if set.DailyNotional, err = amount("daily-notional", *daily); err != nil {
		return
	}
	if set.DailyWithdrawal, err = amount("daily-withdrawal", *dailyWd); err != nil {
		return
	}
	if given["max-open-orders"] {
		n, perr := exgate.ParseRiskCount("--max-open-orders", *maxOpen)
		if perr != nil {
			return set, nil, perr
		}
		set.MaxOpenOrders = &n
	}
	if given["symbols"] {
		if set.Symbols, err = exgate.ParseRiskSymbols(*symbols); err != nil {
			return set, nil, fmt.Errorf("--%w", err)
		}
		if set.Symbols == nil {
			return set, nil, errors.New(`--symbols needs at least one pair (--clear symbols removes the list)`)
		}
	}
	for name := range strings.SplitSeq(*clearText, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		if _, err := (exgate.RiskLimits{}).Merge(exgate.RiskLimits{}, []string{name}); err != nil {
			return set, nil, err
		}
		if given[flagOf(name)] {
			return set, nil, fmt.Errorf("--clear %s and --%s contradict each other", name, flagOf(name))
		}
		clear = append(clear, name)
	}
	if set.Empty() && len(clear) == 0 {
		return set, nil, errors.New("give a limit to set or --clear")
	}
	return set, clear, nil
}

// flagOf is the `risk set` flag of a limit name.
func flagOf(limit string) string {
	var b strings.Builder
	for _, r := range limit {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('-')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

func runRiskSet(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, cfg := gateway.NewFlagSet("risk set", getenv, stderr, false)
	apiKey := fs.String("api-key", "", "the client API key")
	set, clear, err := riskFlags(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("risk set: %w", err)
	}
	if *apiKey == "" {
		return errors.New("risk set: --api-key is required")
	}
	st, err := gateway.OpenStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	limits, err := st.SetRiskLimits(ctx, *apiKey, set, clear)
	if errors.Is(err, exgate.ErrNotFound) {
		return fmt.Errorf("risk set: no key %q", *apiKey)
	}
	if err != nil {
		return fmt.Errorf("risk set: %w", err)
	}
	details := map[string]string{}
	if b, err := limits.MarshalJSON(); err == nil {
		details["limits"] = string(b)
	}
	if len(clear) > 0 {
		details["clear"] = strings.Join(clear, ",")
	}
	if err := auditAdmin(ctx, st, "risk set", *apiKey, "", details); err != nil {
		return err
	}
	a, err := risk.Account(ctx, st, *apiKey, time.Now())
	if err != nil {
		return fmt.Errorf("risk set: done, but the key's state cannot be read: %w", err)
	}
	return writeJSONLine(stdout, a)
}

func runRiskShow(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, cfg := gateway.NewFlagSet("risk show", getenv, stderr, false)
	apiKey := fs.String("api-key", "", "the client API key; every key when not given")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("risk show: unexpected argument %q", fs.Arg(0))
	}
	st, err := gateway.OpenStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	keys := []string{*apiKey}
	if *apiKey == "" {
		all, err := st.ListClientKeys(ctx)
		if err != nil {
			return fmt.Errorf("risk show: %w", err)
		}
		keys = keys[:0]
		for _, k := range all {
			keys = append(keys, k.APIKey)
		}
	} else if _, err := st.ClientKey(ctx, *apiKey); errors.Is(err, exgate.ErrNotFound) {
		return fmt.Errorf("risk show: no key %q", *apiKey)
	}
	now := time.Now()
	for _, k := range keys {
		a, err := risk.Account(ctx, st, k, now)
		if err != nil {
			return fmt.Errorf("risk show: %w", err)
		}
		if err := writeJSONLine(stdout, a); err != nil {
			return err
		}
	}
	return nil
}

// runRiskHalt is `risk halt` and `risk resume`.
func runRiskHalt(ctx context.Context, sub string, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	// halt --cancel-open talks to the exchanges: the server's settings
	// (exchange URLs and the rest) apply.
	fs, cfg := gateway.NewFlagSet("risk "+sub, getenv, stderr, sub == "halt")
	apiKey := fs.String("api-key", "", "the client API key")
	all := fs.Bool("all", false, "every client key")
	var cancelOpen *bool
	var reason *string
	if sub == "halt" {
		cancelOpen = fs.Bool("cancel-open", false, "also cancel every open order of the halted keys, on every exchange key, through the journal")
		reason = fs.String("reason", "halted by the operator", "why, for the refusals and the audit trail")
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("risk %s: unexpected argument %q", sub, fs.Arg(0))
	}
	if (*apiKey == "") == !*all {
		return fmt.Errorf("risk %s: give either --api-key K or --all", sub)
	}
	if reason != nil && (strings.TrimSpace(*reason) == "" || len(*reason) > 500) {
		return fmt.Errorf("risk %s: --reason must be 1 to 500 characters", sub)
	}
	target := *apiKey
	if *all {
		target = exgate.RiskHaltAll
	}
	st, err := gateway.OpenStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	if sub == "resume" {
		n, err := st.ResumeTrading(ctx, target)
		if err != nil {
			return fmt.Errorf("risk resume: %w", err)
		}
		if err := auditAdmin(ctx, st, "risk resume", *apiKey, "", map[string]string{"target": target, "resumed": fmt.Sprint(n)}); err != nil {
			return err
		}
		return writeJSONLine(stdout, map[string]any{"apiKey": target, "state": exgate.RiskStateActive, "haltsEnded": n})
	}
	at := time.Now()
	if err := st.HaltTrading(ctx, exgate.RiskHalt{APIKey: target, Reason: *reason, CreatedAt: at}); err != nil {
		if errors.Is(err, exgate.ErrNotFound) {
			return fmt.Errorf("risk halt: no key %q", target)
		}
		return fmt.Errorf("risk halt: %w", err)
	}
	details := map[string]string{"target": target, "reason": *reason, "cancelOpen": fmt.Sprint(*cancelOpen)}
	if err := auditAdmin(ctx, st, "risk halt", *apiKey, "", details); err != nil {
		return err
	}
	out := map[string]any{"apiKey": target, "state": exgate.RiskStateHalted, "reason": *reason}
	if !*cancelOpen {
		return writeJSONLine(stdout, out)
	}
	n, cerr := cancelOpenOrders(ctx, cfg, st, target, at)
	out["canceled"] = n
	if err := writeJSONLine(stdout, out); err != nil {
		return err
	}
	if err := auditAdmin(ctx, st, "risk halt cancel-open", *apiKey, "", map[string]string{"target": target, "canceled": fmt.Sprint(n)}); err != nil {
		return err
	}
	if cerr != nil {
		return fmt.Errorf("risk halt: halted, %d open orders canceled, but not every one: %w", n, cerr)
	}
	return nil
}

// cancelOpenOrders cancels every open order of target's keys (every key
// for exgate.RiskHaltAll) on every exchange key, through the journal
// (CancelAll per pair: the gateway's orders by their journaled cancel, the
// others by the exchange's ids), and returns how many were canceled. It
// looks twice: once at once, and again once every instance has seen the
// halt (within a second of it), for an order accepted meanwhile.
func cancelOpenOrders(ctx context.Context, cfg *gateway.Config, st exgate.Store, target string, haltedAt time.Time) (int, error) {
	state, err := gateway.OpenState(ctx, cfg)
	if err != nil {
		return 0, err
	}
	defer state.Close()
	g, err := gateway.Build(cfg, st, state, slog.New(slog.DiscardHandler))
	if err != nil {
		return 0, err
	}
	keys := []string{target}
	if target == exgate.RiskHaltAll {
		all, err := st.ListClientKeys(ctx)
		if err != nil {
			return 0, err
		}
		keys = keys[:0]
		for _, k := range all {
			if k.Active() {
				keys = append(keys, k.APIKey)
			}
		}
	}
	canceled := 0
	var errs []error
	pass := func() {
		for _, k := range keys {
			creds, err := st.ListCredentials(ctx, k)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			for _, listed := range creds {
				n, err := cancelCredential(ctx, g, st, listed)
				canceled += n
				if err != nil {
					errs = append(errs, fmt.Errorf("exchange key %s of %s: %w", listed.Name, k, err))
				}
			}
		}
	}
	pass()
	select {
	case <-ctx.Done():
		return canceled, ctx.Err()
	case <-time.After(time.Until(haltedAt.Add(time.Second + 100*time.Millisecond))):
	}
	pass()
	return canceled, errors.Join(errs...)
}

// cancelCredential cancels the open orders of one exchange key.
func cancelCredential(ctx context.Context, g *gateway.Gateway, st exgate.Store, listed exgate.Credential) (int, error) {
	if !listed.Allows(exgate.PermissionTrade) {
		return 0, nil
	}
	cred, err := st.Credential(ctx, listed.ClientAPIKey, listed.Name)
	if err != nil {
		return 0, err
	}
	ex, ok := g.Exchanges[cred.Exchange]
	if !ok {
		return 0, fmt.Errorf("exchange %q is not enabled", cred.Exchange)
	}
	om, ok := exgate.Ability[exgate.OrderManager](ex)
	if !ok {
		return 0, nil
	}
	open, err := om.OpenOrders(ctx, cred, exgate.OrderFilter{})
	if err != nil {
		return 0, err
	}
	var pairs []exgate.Symbol
	for _, o := range open {
		sym := exgate.Symbol{Base: o.Asset1, Quote: o.Asset2}
		if !containsSymbol(pairs, sym) {
			pairs = append(pairs, sym)
		}
	}
	n := 0
	var errs []error
	for _, sym := range pairs {
		out, err := g.Journal.CancelAll(ctx, cred, sym)
		for _, o := range out {
			if o.Status == exgate.OrderCanceled {
				n++
			}
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return n, errors.Join(errs...)
}

func containsSymbol(list []exgate.Symbol, s exgate.Symbol) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
