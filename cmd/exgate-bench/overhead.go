package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/cmd/internal/gateway"
	"github.com/exgate/exgate/exchange/binance/binancefake"
	"github.com/exgate/exgate/internal/loadtest"
	"github.com/exgate/exgate/metrics"
)

// benchOverhead measures what metrics and the audit trail cost: the same
// gateway without either and with both, side by side against one fake
// Binance, on signed klines reads (metrics only: reads are not audited)
// and on market orders on sim (metrics, the journal and an audit record
// each).
func benchOverhead(ctx context.Context, conc int, dur time.Duration, rounds int, stdout, stderr io.Writer) error {
	up := binancefake.New(binancefake.Options{WeightLimit: -1})
	defer up.Close()
	const apiKey, secret = "benchupstreamkey", "benchupstreamsecret"
	up.AddAccount(binancefake.Account{APIKey: apiKey, Secret: secret, Balances: map[string]string{"USDT": "1000000000", "BTC": "10"}})
	dataDir, err := os.MkdirTemp("", "exgate-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dataDir)

	start := func(observed bool, dir string) (string, []exgate.ClientKey, func(), error) {
		cfg := &gateway.Config{DataDir: dir, ExchangeSettings: benchExchanges(up.URL), LogFormat: "text"}
		st, err := gateway.OpenStore(ctx, cfg)
		if err != nil {
			return "", nil, nil, err
		}
		state, _ := gateway.OpenState(ctx, cfg)
		keys, err := newBenchClientKeys(ctx, st)
		for _, key := range keys {
			if err == nil {
				_, err = st.AddCredential(ctx, exgate.Credential{ClientAPIKey: key.APIKey, Name: "bench", Exchange: "binance",
					Key: apiKey, Secret: secret, Permissions: []exgate.Permission{exgate.PermissionRead, exgate.PermissionTrade}})
			}
			if err == nil {
				// Orders go to sim: Binance (and its fake) allow an account 100
				// orders per 10 s, which would measure the exchange's limit.
				_, err = st.AddCredential(ctx, exgate.Credential{ClientAPIKey: key.APIKey, Name: "sim", Exchange: "sim",
					Permissions: []exgate.Permission{exgate.PermissionRead, exgate.PermissionTrade}})
			}
		}
		if err != nil {
			st.Close()
			return "", nil, nil, err
		}
		var m *metrics.Metrics
		if observed {
			m = metrics.New()
		}
		opts := []gateway.Option{gateway.WithMetrics(m)}
		if !observed {
			opts = append(opts, gateway.WithoutAudit())
		}
		g, err := gateway.Build(cfg, st, state, slog.New(slog.DiscardHandler), opts...)
		if err != nil {
			st.Close()
			return "", nil, nil, err
		}
		h, jr := g.API, g.Journal
		runCtx, cancel := context.WithCancel(ctx)
		go jr.Run(runCtx)
		u, stop, err := serveLoopback(h)
		if err != nil {
			cancel()
			st.Close()
			return "", nil, nil, err
		}
		return u, keys, func() { stop(); cancel(); st.Close() }, nil
	}
	bareURL, bareKey, stopBare, err := start(false, dataDir+"/bare")
	if err != nil {
		return err
	}
	defer stopBare()
	obsURL, obsKey, stopObs, err := start(true, dataDir+"/observed")
	if err != nil {
		return err
	}
	defer stopObs()

	const q = "asset1=BTC&asset2=USDT&interval=1m&limit=100"
	order := []loadtest.Pair{{Name: "asset1", Value: "BTC"}, {Name: "asset2", Value: "USDT"}, {Name: "side", Value: "BUY"},
		{Name: "quantity", Value: "10"}, {Name: "quantityIn", Value: "asset2"}}
	targets := func(u string, keys []exgate.ClientKey) (reads, orders loadtest.Target) {
		reads = loadtest.Target{URL: u + "/v1/market/recent-klines?" + q, APIKey: keys[0].APIKey, Secret: keys[0].Secret, ExchangeKey: "bench"}
		// The orders take turns among the client keys (newBenchClientKeys).
		posts := make([]func(context.Context, int64) (*http.Request, error), len(keys))
		for i, k := range keys {
			posts[i] = loadtest.SignedPosts(u+"/v1/order/market", k.APIKey, k.Secret, "sim", order)
		}
		orders = loadtest.Target{URL: u + "/v1/order/market", New: func(ctx context.Context, seq int64) (*http.Request, error) {
			return posts[seq%int64(len(posts))](ctx, seq)
		}}
		return reads, orders
	}
	bareReads, bareOrders := targets(bareURL, bareKey)
	obsReads, obsOrders := targets(obsURL, obsKey)
	for _, t := range []loadtest.Target{bareReads, obsReads, bareOrders, obsOrders} {
		if r, err := loadtest.Run(ctx, loadtest.Config{Target: t, Concurrency: conc, Requests: conc * 20}); err != nil {
			return err
		} else if r.Errors > 0 {
			return fmt.Errorf("warm-up of %s: %d errors %v", t.URL, r.Errors, r.Statuses)
		}
	}
	measure := func(name string, t loadtest.Target) (loadtest.Result, error) {
		fmt.Fprintf(stderr, "%s: %d clients for %s\n", name, conc, dur)
		r, err := loadtest.Run(ctx, loadtest.Config{Target: t, Concurrency: conc, Duration: dur, Progress: stderr})
		if err == nil {
			fmt.Fprintf(stdout, "%-34s %s\n", name, r)
			if r.Errors > 0 {
				err = fmt.Errorf("%s: %d errors %v", name, r.Errors, r.Statuses)
			}
		}
		return r, err
	}
	fmt.Fprintf(stdout, "metrics and audit overhead: signed klines (limit 100) and market orders, %d concurrent clients, %s per run\n", conc, dur)
	var sumReads, sumOrders float64
	for round := range rounds {
		// Alternate which goes first, so that neither always runs warmer.
		pairs := [][2]struct {
			name string
			t    loadtest.Target
		}{
			{{"klines, no metrics, no audit", bareReads}, {"klines, metrics + audit", obsReads}},
			{{"orders, no metrics, no audit", bareOrders}, {"orders, metrics + audit", obsOrders}},
		}
		var ratios [2]float64
		for i, p := range pairs {
			if round%2 == 1 {
				p[0], p[1] = p[1], p[0]
			}
			a, err := measure(p[0].name, p[0].t)
			if err != nil {
				return err
			}
			b, err := measure(p[1].name, p[1].t)
			if err != nil {
				return err
			}
			bare, obs := a, b
			if round%2 == 1 {
				bare, obs = b, a
			}
			if bare.RPS() == 0 {
				return errors.New("no requests answered")
			}
			ratios[i] = 1 - obs.RPS()/bare.RPS()
		}
		fmt.Fprintf(stdout, "round %d: throughput cost of metrics + audit: klines %.1f%%, orders %.1f%% (target < 5%%)\n", round+1, 100*ratios[0], 100*ratios[1])
		sumReads += ratios[0]
		sumOrders += ratios[1]
	}
	if rounds > 1 {
		fmt.Fprintf(stdout, "mean over %d rounds: klines %.1f%%, orders %.1f%%\n", rounds, 100*sumReads/float64(rounds), 100*sumOrders/float64(rounds))
	}
	return nil
}
