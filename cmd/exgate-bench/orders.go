package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/cmd/internal/gateway"
	"github.com/exgate/exgate/internal/loadtest"
)

// orderBench is bench compare --route market|limit: POST /v1/order/market
// or /v1/order/limit through the gateway against the fake Binance, side by
// side with the bare proxy's order path (one signed POST /api/v3/order per
// request) and the upstream called directly.
type orderBench struct {
	route                string // "market" or "limit"
	conc, rounds         int
	dur                  time.Duration
	upstream             string
	accounts             []upstreamAccount
	proxyURL, gatewayURL string
	// keys are the gateway's client keys; accounts[i] is an exchange key
	// of keys[i%len(keys)].
	keys []exgate.ClientKey
	// syncDir is a directory on the store's disk, where each round
	// measures fdatasync.
	syncDir string
	// variants are more gateways measured beside the first (--risk).
	variants []orderVariant
	// profileDir, when set, receives a CPU profile of each of the round's
	// measurements of direct, proxy and gateway (--profile-dir).
	profileDir string
}

// orderVariant is a gateway measured beside the plain one, the same way.
type orderVariant struct {
	name string
	url  string
	keys []exgate.ClientKey
}

// The orders: a market BUY of 0.001 BTC, or a GTC limit BUY of 0.001 BTC
// at 30000 USDT, half the fake's market, so that it rests (and 30 USDT is
// above BTCUSDT's minimum notional of 5, which 1000 USDT was not). Every
// request carries a client order id of its own (the gateway journals it;
// the same id again would answer the first order without placing one).
const (
	benchQuantity   = "0.001"
	benchLimitPrice = "30000"
)

// orderAccounts is how many upstream accounts the order routes spread
// their orders over.
const orderAccounts = 512

// benchClientKeys is how many client keys the gateway's orders are spread
// over: each client key may hold 10 000 live signatures in the replay guard
// (docs/contract.md 2.1), which one key would pass in a few seconds of
// closed-loop orders.
const benchClientKeys = 8

// newBenchClientKeys creates the client keys of a benchmark's gateway.
func newBenchClientKeys(ctx context.Context, st exgate.Store) ([]exgate.ClientKey, error) {
	keys := make([]exgate.ClientKey, benchClientKeys)
	for i := range keys {
		var err error
		if keys[i], err = gateway.NewClientKey(ctx, st, "bench"+strconv.Itoa(i), false); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// upstreamAccount is an API key of the fake Binance.
type upstreamAccount struct{ key, secret string }

// exchangeKeyName is the gateway's name of the exchange key of accounts[i].
func exchangeKeyName(i int) string {
	if i == 0 {
		return "bench"
	}
	return "bench" + strconv.Itoa(i)
}

func compareOrders(ctx context.Context, b orderBench, stdout, stderr io.Writer) error {
	var nonce [4]byte
	_, _ = rand.Read(nonce[:])
	run := 0
	// ids are unique across warm-up, scenarios and rounds.
	id := func(seq int64) string {
		return "b" + hex.EncodeToString(nonce[:]) + "r" + strconv.Itoa(run) + "n" + strconv.FormatInt(seq, 10)
	}
	pairs := func(seq int64) []loadtest.Pair {
		p := []loadtest.Pair{{Name: "asset1", Value: "BTC"}, {Name: "asset2", Value: "USDT"}, {Name: "side", Value: "BUY"}, {Name: "quantity", Value: benchQuantity}}
		if b.route == "limit" {
			p = append(p, loadtest.Pair{Name: "price", Value: benchLimitPrice}, loadtest.Pair{Name: "timeInForce", Value: "GTC"})
		} else {
			p = append(p, loadtest.Pair{Name: "quantityIn", Value: "asset1"})
		}
		return append(p, loadtest.Pair{Name: "clientOrderId", Value: id(seq)})
	}
	path := "/v1/order/" + b.route
	post := func(ctx context.Context, u string, body []byte) *http.Request {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		return req
	}
	direct := loadtest.Target{New: func(ctx context.Context, seq int64) (*http.Request, error) {
		form := url.Values{"symbol": {"BTCUSDT"}, "side": {"BUY"}, "quantity": {benchQuantity}, "newClientOrderId": {id(seq)}, "newOrderRespType": {"FULL"}}
		if b.route == "limit" {
			form.Set("type", "LIMIT")
			form.Set("timeInForce", "GTC")
			form.Set("price", benchLimitPrice)
		} else {
			form.Set("type", "MARKET")
		}
		a := b.accounts[seq%int64(len(b.accounts))]
		return loadtest.BinanceOrder(ctx, b.upstream, a.key, a.secret, form.Encode()), nil
	}}
	proxy := loadtest.Target{New: func(ctx context.Context, seq int64) (*http.Request, error) {
		req := post(ctx, b.proxyURL+path, loadtest.SignedBody("", pairs(seq), time.Now().UnixMilli()))
		a := b.accounts[seq%int64(len(b.accounts))]
		req.Header.Set("X-Upstream-Key", a.key)
		req.Header.Set("X-Upstream-Secret", a.secret)
		return req, nil
	}}
	gatewayAt := func(base string, keys []exgate.ClientKey) loadtest.Target {
		return loadtest.Target{New: func(ctx context.Context, seq int64) (*http.Request, error) {
			i := int(seq % int64(len(b.accounts)))
			key := keys[i%len(keys)]
			req := post(ctx, base+path, loadtest.SignedBody(key.Secret, pairs(seq), time.Now().UnixMilli()))
			req.Header.Set("X-API-KEY", key.APIKey)
			req.Header.Set("X-API-EXCHANGE-KEY", exchangeKeyName(i))
			return req, nil
		}}
	}
	gateway := gatewayAt(b.gatewayURL, b.keys)
	variants := make([]loadtest.Target, len(b.variants))
	for i, v := range b.variants {
		variants[i] = gatewayAt(v.url, v.keys)
	}
	measure := func(name string, t loadtest.Target, cfg loadtest.Config) (loadtest.Result, error) {
		run++
		cfg.Target, cfg.Concurrency = t, b.conc
		if name != "" {
			fmt.Fprintf(stderr, "%s: %d clients for %s\n", name, b.conc, b.dur)
			cfg.Duration, cfg.Progress = b.dur, stderr
		}
		if b.profileDir != "" && name != "" {
			stop, err := startCPUProfile(filepath.Join(b.profileDir, fmt.Sprintf("%02d-%s.prof", run, strings.ReplaceAll(name, " ", "-"))))
			if err != nil {
				return loadtest.Result{}, err
			}
			defer stop()
		}
		r, err := loadtest.Run(ctx, cfg)
		if err == nil && name != "" {
			fmt.Fprintf(stdout, "%-16s %s\n", name, r)
		}
		return r, err
	}
	// Warm up connections and the adapter's market metadata.
	for _, t := range append([]loadtest.Target{direct, proxy, gateway}, variants...) {
		if r, err := measure("", t, loadtest.Config{Requests: b.conc * 20}); err != nil {
			return err
		} else if r.Errors > 0 {
			return fmt.Errorf("warm-up of POST %s: %d errors %v (limit orders need the Binance adapter's and binancefake's LIMIT support)", path, r.Errors, r.Statuses)
		}
	}
	fmt.Fprintf(stdout, "POST %s (BUY %s BTC%s), a fresh clientOrderId each, %d concurrent clients, %s per run, GOMAXPROCS shared by all\n",
		path, benchQuantity, map[bool]string{true: " at " + benchLimitPrice + " GTC", false: ""}[b.route == "limit"], b.conc, b.dur)
	var sumRatio, sumLat, sumFloor float64
	// vsControl sums, per variant, its added latency and throughput
	// against the control's of the same round (variant 0, --risk).
	vsControl := make([]struct{ lat, thr float64 }, len(b.variants))
	for round := range b.rounds {
		d, err := measure("direct upstream", direct, loadtest.Config{})
		if err != nil {
			return err
		}
		p, err := measure("bare proxy", proxy, loadtest.Config{})
		if err != nil {
			return err
		}
		g, err := measure("gateway", gateway, loadtest.Config{})
		if err != nil {
			return err
		}
		// The disk's own floor, measured between the runs it is compared
		// with: one durable append, what the gateway's intent must cost.
		sync, err := measureSync(b.syncDir, fsyncSamples)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%-16s %s (in %s)\n", "store disk", sync, b.syncDir)
		if d.Errors+p.Errors+g.Errors > 0 {
			return errors.New("errors during the measurement; the ratios would mean nothing")
		}
		proxyAdded, gwAdded := p.P50-d.P50, g.P50-d.P50
		// The variants take turns: the round's time is cut into
		// variantTurns turns, and in each turn every variant runs for its
		// share, in an order that moves by one each turn (and each round),
		// so that all of them see the same machine, whose speed drifts by
		// more than the few percent compared here within seconds. Each is
		// compared with the plain gateway and with the control (a second
		// gateway without limits) of the same round.
		vres, err := b.measureTurns(round, variants, measure, stderr)
		if err != nil {
			return err
		}
		for i, v := range b.variants {
			r := vres[i]
			fmt.Fprintf(stdout, "%-16s %s (means of %d turns)\n", v.name, r, variantTurns)
			added := r.P50 - d.P50
			fmt.Fprintf(stdout, "round %d: %s: added over direct %s vs the gateway's %s = %+.1f%%; throughput %.3fx the gateway's\n",
				round+1, v.name, roundDur(added), roundDur(gwAdded), 100*(float64(added)/float64(max(gwAdded, time.Microsecond))-1), r.RPS()/g.RPS())
			if i == 0 {
				continue
			}
			ctl := vres[0]
			ctlAdded := ctl.P50 - d.P50
			lat := float64(added)/float64(max(ctlAdded, time.Microsecond)) - 1
			thr := r.RPS()/ctl.RPS() - 1
			vsControl[i].lat += lat
			vsControl[i].thr += thr
			fmt.Fprintf(stdout, "round %d: %s against the control: added latency %+.1f%%, throughput %+.1f%% (target: at most 5%% cost)\n",
				round+1, v.name, 100*lat, 100*thr)
		}
		latRatio := float64(gwAdded) / float64(max(proxyAdded, time.Microsecond))
		floor := proxyAdded + sync.P50
		floorRatio := float64(gwAdded) / float64(max(floor, time.Microsecond))
		ratio := g.RPS() / p.RPS()
		fmt.Fprintf(stdout, "round %d: median latency direct %s, proxy %s, gateway %s; added over direct: gateway %s vs proxy %s = %.2fx; "+
			"gateway / (proxy + one fdatasync p50 %s = %s) = %.2fx (target <= 1.5 at 1 client); gateway/proxy throughput %.2fx (target >= 0.35 at 32 clients)\n",
			round+1, roundDur(d.P50), roundDur(p.P50), roundDur(g.P50), roundDur(gwAdded), roundDur(proxyAdded), latRatio,
			roundDur(sync.P50), roundDur(floor), floorRatio, ratio)
		sumRatio += ratio
		sumLat += latRatio
		sumFloor += floorRatio
	}
	if b.rounds > 1 {
		n := float64(b.rounds)
		fmt.Fprintf(stdout, "mean over %d rounds: added latency %.2fx the proxy's, %.2fx (proxy + one fdatasync), throughput %.2fx\n",
			b.rounds, sumLat/n, sumFloor/n, sumRatio/n)
		for i := 1; i < len(b.variants); i++ {
			fmt.Fprintf(stdout, "mean over %d rounds: %s against the control: added latency %+.1f%%, throughput %+.1f%% (target: at most 5%% cost)\n",
				b.rounds, b.variants[i].name, 100*vsControl[i].lat/n, 100*vsControl[i].thr/n)
		}
	}
	return nil
}

// variantTurns is how many turns the variants take in each round.
const variantTurns = 8

// measureTurns measures the variants in turns (variantTurns of them, each
// variant running for its share of b.dur per turn, the order moving by
// one each turn) and returns each variant's requests and errors summed
// over its turns, with, as its latencies, the means of its turns'.
func (b orderBench) measureTurns(round int, targets []loadtest.Target,
	measure func(string, loadtest.Target, loadtest.Config) (loadtest.Result, error), stderr io.Writer) ([]loadtest.Result, error) {
	n := len(targets)
	slice := max(b.dur/variantTurns, 50*time.Millisecond)
	for k := range n {
		i := (k + round) % n
		fmt.Fprintf(stderr, "%s: %d clients, %d turns of %s\n", b.variants[i].name, b.conc, variantTurns, slice)
	}
	out := make([]loadtest.Result, n)
	for turn := range variantTurns {
		for k := range n {
			i := (k + round + turn) % n
			r, err := measure("", targets[i], loadtest.Config{Duration: slice})
			if err != nil {
				return nil, err
			}
			if r.Errors > 0 {
				return nil, fmt.Errorf("%s: %d errors %v during the measurement", b.variants[i].name, r.Errors, r.Statuses)
			}
			o := &out[i]
			o.Requests += r.Requests
			o.Elapsed += r.Elapsed
			o.P50 += r.P50 / variantTurns
			o.P90 += r.P90 / variantTurns
			o.P99 += r.P99 / variantTurns
			o.P999 += r.P999 / variantTurns
			o.Max = max(o.Max, r.Max)
		}
	}
	return out, nil
}

// riskVariants are the gateways --risk measures, taking turns (see
// measureTurns): a second gateway without limits (the control: what a
// gateway measured beside the others gets without any risk check); every
// client key with the limits an order needs no market data for (a USDT
// pair); the same with a price band, which reads the pair's book for each
// order; and the band again on a gateway that shares books at most
// --max-age old (--market-data-max-age).
var riskVariants = []struct {
	name, dir string
	limits    exgate.RiskLimits
	// shareBooks starts the gateway with --market-data-max-age (the
	// bench's --max-age) and coalescing, so that the band's book reads
	// share a book at most that old.
	shareBooks bool
}{
	{"gateway (control)", "control", exgate.RiskLimits{}, false},
	{"gateway (limits)", "risk", benchLimits(false), false},
	{"gateway (+band)", "band", benchLimits(true), false},
	{"gateway (+band, max-age)", "band-age", benchLimits(true), true},
}

// benchLimits are limits no bench order passes: BTC/USDT only, 1000 USD
// an order, a billion open orders and a trillion USD a day (and a 50 %
// band around the mid).
func benchLimits(band bool) exgate.RiskLimits {
	maxOrder, daily := decimal.NewFromInt(1000), decimal.NewFromInt(1_000_000_000_000)
	open := int64(1_000_000_000)
	l := exgate.RiskLimits{Symbols: []exgate.Symbol{{Base: "BTC", Quote: "USDT"}}, MaxOrderNotional: &maxOrder,
		MaxOpenOrders: &open, DailyNotional: &daily}
	if band {
		pct := decimal.NewFromInt(50)
		l.PriceBand = &pct
	}
	return l
}

// setBenchLimits sets limits on every client key of a gateway's store.
func setBenchLimits(ctx context.Context, cfg *gateway.Config, keys []exgate.ClientKey, limits exgate.RiskLimits) error {
	st, err := gateway.OpenStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	if limits.Empty() {
		return nil
	}
	for _, k := range keys {
		if _, err := st.SetRiskLimits(ctx, k.APIKey, limits, nil); err != nil {
			return err
		}
	}
	return nil
}
