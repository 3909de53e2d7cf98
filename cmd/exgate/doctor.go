package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/cmd/internal/gateway"
)

// rightsReader is an adapter that can read an API key's rights from the
// exchange (exchange/<x>/doctor.go), where the exchange publishes such a
// call; found through any wrapper (exgate.Ability).
type rightsReader interface {
	KeyRights(ctx context.Context, cred exgate.Credential) (exgate.KeyRights, error)
}

// doctorCheckTimeout bounds each check.
const doctorCheckTimeout = 10 * time.Second

// doctor prints one line per check and counts the failures.
type doctor struct {
	out   io.Writer
	fails int
}

func (d *doctor) ok(what, format string, args ...any) {
	fmt.Fprintf(d.out, "ok    %-28s %s\n", what, fmt.Sprintf(format, args...))
}

func (d *doctor) warn(what, format string, args ...any) {
	fmt.Fprintf(d.out, "warn  %-28s %s\n", what, fmt.Sprintf(format, args...))
}

func (d *doctor) fail(what, format string, args ...any) {
	d.fails++
	fmt.Fprintf(d.out, "FAIL  %-28s %s\n", what, fmt.Sprintf(format, args...))
}

// runDoctor checks the store, Redis, each exchange's reachability and
// clock, and each exchange key's credential and rights (docs/contract.md 2.6).
func runDoctor(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, cfg := gateway.NewFlagSet("doctor", getenv, stderr, true)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("doctor: unexpected argument %q", fs.Arg(0))
	}
	d := &doctor{out: stdout}
	st, err := gateway.OpenStore(ctx, cfg)
	if err != nil {
		d.fail("store", "%v", err)
		return errors.New("doctor: 1 check failed; the store is needed for the others")
	}
	defer st.Close()
	if err := checkWithin(ctx, st.Ping); err != nil {
		d.fail("store", "%s unreachable: %v", storeName(cfg), err)
	} else {
		d.ok("store", "%s reachable, master key matches", storeName(cfg))
	}

	state, err := gateway.OpenState(ctx, cfg)
	if err != nil {
		d.fail("redis", "%v", err)
		state = nil
	} else {
		defer state.Close()
		if cfg.RedisURL == "" {
			d.ok("redis", "not configured")
		} else {
			d.ok("redis", "reachable")
		}
	}
	d.checkSharedState(ctx, cfg, st)
	if state == nil {
		// The exchanges are still checked, on in-process state.
		cfg.RedisURL = ""
		if state, err = gateway.OpenState(ctx, cfg); err != nil {
			return err
		}
		defer state.Close()
	}
	g, err := gateway.Build(cfg, st, state, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}

	creds, err := allCredentials(ctx, st)
	if err != nil {
		d.fail("exchange keys", "cannot be listed: %v", err)
	}
	used := map[string]bool{}
	for _, c := range creds {
		used[c.Exchange] = true
	}
	inProcess := map[string]bool{}
	for _, a := range g.Adapters {
		if inProcess[a.Name] = a.InProcess; !a.InProcess {
			d.checkClock(ctx, a.Name, g.Exchanges[a.Name], used[a.Name])
		}
	}
	for _, c := range creds {
		d.checkCredential(ctx, c, g.Exchanges[c.Exchange], inProcess[c.Exchange])
	}
	if d.fails > 0 {
		return fmt.Errorf("doctor: %d check(s) failed", d.fails)
	}
	return nil
}

// checkSharedState says how instances on this configuration share their
// state, and whether the instances live on the store can run together
// (docs/contract.md section 4).
func (d *doctor) checkSharedState(ctx context.Context, cfg *gateway.Config, st exgate.Store) {
	const what = "shared state"
	now := time.Now()
	var live []exgate.Instance
	err := checkWithin(ctx, func(ctx context.Context) error {
		var err error
		live, err = st.LiveInstances(ctx, now.Add(-exgate.InstanceLiveFor))
		return err
	})
	if err != nil {
		d.fail(what, "the instances' heartbeats cannot be read: %v", err)
		return
	}
	desc := liveText(live, now)
	mode, err := cfg.SharedStateMode()
	if err != nil {
		d.fail(what, "serve would refuse to start: %v; %s", err, desc)
		return
	}
	inProcess := 0
	for _, in := range live {
		if in.Single {
			inProcess++
		}
	}
	switch {
	case inProcess > 0 && len(live) > 1:
		d.fail(what, "%d of the live instances keep their replay guard in process, yet %s: they would accept each other's replays", inProcess, desc)
	case mode == gateway.ModeRedis:
		d.ok(what, "Redis: rate limits, the replay guard and exchange pacing are shared by every instance; %s", desc)
	default:
		d.ok(what, "in process (--single-instance or SQLite): this must be the only instance on the store, and serve refuses to start while another is live; %s", desc)
	}
}

// liveText says how many instances are live on the store, and which.
func liveText(live []exgate.Instance, now time.Time) string {
	if len(live) == 0 {
		return "no instance is live on the store"
	}
	parts := make([]string, len(live))
	for i, in := range live {
		parts[i] = fmt.Sprintf("%s pid %d (%s, heartbeat %s ago)", in.Host, in.PID, in.SharedState, now.Sub(in.HeartbeatAt).Round(time.Second))
	}
	return fmt.Sprintf("%d instance(s) live on the store: %s", len(live), strings.Join(parts, ", "))
}

// checkWithin runs check with doctorCheckTimeout.
func checkWithin(ctx context.Context, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, doctorCheckTimeout)
	defer cancel()
	return check(ctx)
}

// checkClock reads the exchange's clock: unreachable is a failure when an
// exchange key uses the exchange, else a warning.
func (d *doctor) checkClock(ctx context.Context, name string, ex exgate.Exchange, used bool) {
	what := name + " reachability"
	c, ok, err := gateway.ProbeClock(ctx, ex, doctorCheckTimeout)
	if !ok {
		d.warn(what, "not available: the adapter cannot read the exchange's clock")
		return
	}
	if err != nil {
		if used {
			d.fail(what, "unreachable: %v", err)
		} else {
			d.warn(what, "unreachable (no exchange key uses it): %v", err)
		}
		return
	}
	if c.Skew > gateway.MaxClockSkew || c.Skew < -gateway.MaxClockSkew {
		d.warn(name+" clock", "the exchange's clock is %s from ours (more than %s): synchronize this host's clock (NTP)", c.Skew, gateway.MaxClockSkew)
		return
	}
	d.ok(what, "reachable in %s, clock skew %s", c.RoundTrip, c.Skew)
}

// checkCredential calls the exchange with the credential (a balance read)
// and, where the exchange tells, compares its rights with exgate's. An
// exchange simulated in process has nothing to check.
func (d *doctor) checkCredential(ctx context.Context, c exgate.Credential, ex exgate.Exchange, inProcess bool) {
	what := "key " + clipKey(c.ClientAPIKey) + "/" + c.Name
	if inProcess {
		d.ok(what, "%s: nothing to check", c.Exchange)
		return
	}
	if c.Paper {
		// A paper key has no exchange key: nothing signed to check.
		d.ok(what, "paper key on %s: nothing signed to check (market data only)", c.Exchange)
		return
	}
	if ex == nil {
		d.fail(what, "exchange %q is not enabled on this gateway", c.Exchange)
		return
	}
	if err := checkWithin(ctx, func(ctx context.Context) error {
		_, err := ex.Balances(ctx, c)
		return err
	}); err != nil {
		d.fail(what, "%s refused the credential: %v", c.Exchange, err)
		return
	}
	rr, ok := exgate.Ability[rightsReader](ex)
	if !ok {
		d.ok(what, "%s accepts the credential; its permissions: not available from %s", c.Exchange, c.Exchange)
		return
	}
	var rights exgate.KeyRights
	if err := checkWithin(ctx, func(ctx context.Context) (err error) {
		rights, err = rr.KeyRights(ctx, c)
		return err
	}); err != nil {
		d.warn(what, "%s accepts the credential; its permissions could not be read: %v", c.Exchange, err)
		return
	}
	warned := false
	if rights.IPRestricted != nil && !*rights.IPRestricted {
		d.warn(what, "the %s key is not restricted to this gateway's IP addresses on %s", c.Exchange, c.Exchange)
		warned = true
	}
	if rights.Trade == nil && rights.Withdraw == nil {
		restricted := ""
		if rights.IPRestricted != nil && *rights.IPRestricted {
			restricted = ", IP-restricted"
		}
		d.ok(what, "%s accepts the credential%s; its permissions: not available from %s", c.Exchange, restricted, c.Exchange)
		return
	}
	compare := func(p exgate.Permission, exchangeHas *bool) {
		if exchangeHas == nil {
			return
		}
		switch {
		case c.Allows(p) && !*exchangeHas:
			d.warn(what, "exgate allows %s but the %s key cannot: such requests will fail", p, c.Exchange)
			warned = true
		case !c.Allows(p) && *exchangeHas:
			d.warn(what, "the %s key can %s but exgate never needs it: turn it off on %s", c.Exchange, p, c.Exchange)
			warned = true
		}
	}
	compare(exgate.PermissionTrade, rights.Trade)
	compare(exgate.PermissionWithdraw, rights.Withdraw)
	if !warned {
		d.ok(what, "%s accepts the credential; its permissions match exgate's (%s)", c.Exchange, permText(c))
	}
}

func permText(c exgate.Credential) string {
	s := ""
	for i, p := range c.Permissions {
		if i > 0 {
			s += ","
		}
		s += string(p)
	}
	return s
}

// clipKey shows the start of a client key, enough to tell keys apart.
func clipKey(k string) string {
	if len(k) > 8 {
		return k[:8] + "…"
	}
	return k
}

// allCredentials is every active client key's exchange keys, with their
// secrets (to call the exchange).
func allCredentials(ctx context.Context, st exgate.Store) ([]exgate.Credential, error) {
	keys, err := st.ListClientKeys(ctx)
	if err != nil {
		return nil, err
	}
	var out []exgate.Credential
	for _, k := range keys {
		if !k.Active() {
			continue
		}
		list, err := st.ListCredentials(ctx, k.APIKey)
		if err != nil {
			return nil, err
		}
		for _, c := range list {
			full, err := st.Credential(ctx, k.APIKey, c.Name)
			if err != nil {
				return nil, fmt.Errorf("exchange key %s/%s: %w", clipKey(k.APIKey), c.Name, err)
			}
			out = append(out, full)
		}
	}
	return out, nil
}
