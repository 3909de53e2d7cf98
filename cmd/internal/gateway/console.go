package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/console"
	"github.com/exgate/exgate/metrics"
)

// BuildConsole builds the web console (docs/contract.md 2.7) over the same
// store, exchanges and journal as the API; m (nil: none) feeds the health
// page's pacing headroom.
func BuildConsole(cfg *Config, st exgate.Store, g *Gateway, m *metrics.Metrics, log *slog.Logger) (http.Handler, error) {
	public := cfg.ConsoleURL
	exchanges := g.Exchanges
	var names []string
	for _, a := range g.Adapters {
		names = append(names, a.Name)
	}
	return console.New(console.Options{
		Store:           st,
		Exchanges:       exchanges,
		ExchangeNames:   names,
		CheckCredential: CheckCredential,
		Journal:         g.Journal,
		Live:            g.Hub,
		NewClientKey: func(ctx context.Context, label string) (exgate.ClientKey, error) {
			return NewClientKey(ctx, st, label, false)
		},
		Health:    func(ctx context.Context) []console.HealthCheck { return consoleHealth(ctx, st, g, m) },
		PublicURL: public,
		Logger:    log.With("component", "console"),
	})
}

// ClockReader is an adapter that can read the exchange's clock
// (exchange/<x>/doctor.go); found through any wrapper (exgate.Ability).
type ClockReader interface {
	ServerTime(ctx context.Context) (time.Time, error)
}

// Clock is what ProbeClock found.
type Clock struct {
	// RoundTrip is how long the exchange took to answer.
	RoundTrip time.Duration
	// Skew is the exchange's clock minus ours at the middle of the call.
	Skew time.Duration
}

// MaxClockSkew is the clock difference worth a warning: Binance refuses a
// request stamped more than 1 s ahead of its clock, and its default
// recvWindow is 5 s.
const MaxClockSkew = time.Second

// ProbeClock reads the exchange's clock once, within timeout: whether it
// is reachable and how far its clock is from ours. ok is false when the
// adapter cannot read its exchange's clock. Used by `exgate doctor` and
// the console's health page.
func ProbeClock(ctx context.Context, ex exgate.Exchange, timeout time.Duration) (c Clock, ok bool, err error) {
	cr, ok := exgate.Ability[ClockReader](ex)
	if !ok {
		return Clock{}, false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t0 := time.Now()
	server, err := cr.ServerTime(ctx)
	t1 := time.Now()
	if err != nil {
		return Clock{}, true, err
	}
	return Clock{RoundTrip: t1.Sub(t0).Round(time.Millisecond), Skew: server.Sub(t0.Add(t1.Sub(t0) / 2)).Round(time.Millisecond)}, true, nil
}

// consoleHealth is the gateway's part of the console's health page: each
// exchange an exchange key uses (reachable, clock skew) and the pacing
// headroom the metrics saw.
func consoleHealth(ctx context.Context, st exgate.Store, g *Gateway, m *metrics.Metrics) []console.HealthCheck {
	var out []console.HealthCheck
	used := map[string]bool{}
	keys, err := st.ListClientKeys(ctx)
	if err != nil {
		return append(out, console.HealthCheck{Name: "exchange keys", State: console.HealthFail, Detail: err.Error()})
	}
	for _, k := range keys {
		if !k.Active() {
			continue
		}
		creds, err := st.ListCredentials(ctx, k.APIKey)
		if err != nil {
			return append(out, console.HealthCheck{Name: "exchange keys", State: console.HealthFail, Detail: err.Error()})
		}
		for _, c := range creds {
			used[c.Exchange] = true
		}
	}
	for _, a := range g.Adapters {
		name := a.Name
		ex := g.Exchanges[name]
		if ex == nil {
			continue
		}
		what := name + " reachability"
		if a.InProcess {
			out = append(out, console.HealthCheck{Name: what, State: console.HealthOK, Detail: "simulated in process: always reachable, no clock to compare"})
			continue
		}
		if !used[name] {
			out = append(out, console.HealthCheck{Name: what, State: console.HealthUnchecked, Detail: "not checked: no exchange key uses it"})
			continue
		}
		c, ok, err := ProbeClock(ctx, ex, 5*time.Second)
		switch {
		case !ok:
			out = append(out, console.HealthCheck{Name: what, State: console.HealthWarn, Detail: "the adapter cannot read the exchange's clock"})
		case err != nil:
			out = append(out, console.HealthCheck{Name: what, State: console.HealthFail, Detail: "unreachable: " + err.Error()})
		case c.Skew > MaxClockSkew || c.Skew < -MaxClockSkew:
			out = append(out, console.HealthCheck{Name: what, State: console.HealthWarn,
				Detail: fmt.Sprintf("reachable in %s; clock skew %s (more than %s): synchronize this host's clock (NTP)", c.RoundTrip, c.Skew, MaxClockSkew)})
		default:
			out = append(out, console.HealthCheck{Name: what, State: console.HealthOK, Detail: fmt.Sprintf("reachable in %s, clock skew %s", c.RoundTrip, c.Skew)})
		}
	}
	if m == nil {
		return append(out, console.HealthCheck{Name: "pacing headroom", State: console.HealthWarn, Detail: "no metrics collected in this process"})
	}
	seen := false
	for _, h := range m.Headroom() {
		seen = true
		state, detail := console.HealthOK, ""
		switch {
		case h.HasWeight && h.WeightLimit > 0:
			used := h.WeightUsed / h.WeightLimit
			detail = fmt.Sprintf("request weight %s of %s used in the exchange's window (%.0f%% headroom)", num(h.WeightUsed), num(h.WeightLimit), math.Max(0, 100*(1-used)))
			if used > 0.8 {
				state = console.HealthWarn
			}
		case h.WeightLimit > 0:
			detail = fmt.Sprintf("request weight limit %s; no use reported yet", num(h.WeightLimit))
		default:
			detail = "the exchange reports no request weight; exgate paces its call counter"
		}
		detail += fmt.Sprintf("; calls held back by pacing since start: %s waited, %s refused (503)", num(h.Waited), num(h.Refused))
		if h.Refused > 0 {
			state = console.HealthWarn
		}
		if h.HasSkew {
			detail += fmt.Sprintf("; clock skew from its answers' Date header: %ss", num(h.ClockSkew))
		}
		if !used[h.Exchange] && h.Waited == 0 && h.Refused == 0 && !h.HasWeight {
			// Its limits are registered, but nothing of ours calls it.
			state, detail = console.HealthUnchecked, "not checked: no exchange key uses it and no call was paced"
		}
		out = append(out, console.HealthCheck{Name: h.Exchange + " pacing headroom", State: state, Detail: detail})
	}
	if !seen {
		out = append(out, console.HealthCheck{Name: "pacing headroom", State: console.HealthUnchecked, Detail: "not checked yet: no exchange calls paced"})
	}
	return out
}

func num(f float64) string { return fmt.Sprintf("%g", f) }
