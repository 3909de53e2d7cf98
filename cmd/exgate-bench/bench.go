package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/cmd/internal/gateway"
	"github.com/exgate/exgate/exchange"
	"github.com/exgate/exgate/exchange/binance"
	"github.com/exgate/exgate/exchange/binance/binancefake"
	"github.com/exgate/exgate/internal/loadtest"
)

// benchRun drives load against a running gateway.
func benchRun(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("exgate-bench run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	base := fs.String("url", env("EXGATE_URL", "http://127.0.0.1:8080"), "gateway base URL (env EXGATE_URL)")
	apiKey := fs.String("api-key", getenv("EXGATE_API_KEY"), "client API key (env EXGATE_API_KEY)")
	secret := fs.String("secret-key", getenv("EXGATE_SECRET_KEY"), "client secret key (env EXGATE_SECRET_KEY)")
	exKey := fs.String("exchange-key", getenv("EXGATE_EXCHANGE_KEY"), "exchange key name (env EXGATE_EXCHANGE_KEY)")
	path := fs.String("path", "/v1/market/recent-klines", "GET route to load")
	query := fs.String("query", "asset1=BTC&asset2=USDT&interval=1m&limit=500", "its parameters, signed as written")
	conc := fs.Int("concurrency", 32, "concurrent clients (closed loop)")
	dur := fs.Duration("duration", 10*time.Second, "how long to run")
	n := fs.Int("requests", 0, "stop after this many requests (0: run for --duration)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	target := strings.TrimRight(*base, "/") + *path
	if *query != "" {
		target += "?" + *query
	}
	res, err := loadtest.Run(ctx, loadtest.Config{
		Target:      loadtest.Target{URL: target, APIKey: *apiKey, Secret: *secret, ExchangeKey: *exKey},
		Concurrency: *conc, Duration: *dur, Requests: *n, Progress: stderr,
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s\nstatuses: %v\n", res, res.Statuses)
	return nil
}

// benchCompare measures direct upstream, bare proxy and gateway in one run,
// then the gateway with market-data coalescing against the proxy.
func benchCompare(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("exgate-bench compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	conc := fs.Int("concurrency", 32, "concurrent clients (closed loop)")
	dur := fs.Duration("duration", 10*time.Second, "how long each measurement runs")
	limit := fs.Int("limit", 500, "klines per request")
	rounds := fs.Int("rounds", 1, "measure direct, proxy and gateway this many times, interleaved")
	maxAge := fs.Duration("max-age", 250*time.Millisecond, "market-data max age of the hot-data gateway (--market-data-max-age)")
	overhead := fs.Bool("overhead", false, "measure only what metrics and the audit trail cost: the gateway without and with them, side by side")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run (load tool, proxy, gateway and upstream) to this file")
	profileDir := fs.String("profile-dir", "", "order routes: write a CPU profile of each measurement of direct, proxy and gateway (the whole process while it runs) to this directory, as NN-name.prof")
	databaseURL := fs.String("database-url", "", "postgres://… (with search_path set to a schema of its own) to give the gateways a PostgreSQL store instead of SQLite in a temporary directory")
	withRisk := fs.Bool("risk", false, "order routes: also measure gateways whose client keys have risk limits (docs/risk.md), side by side with the one without")
	syncDir := fs.String("sync-dir", "", "a directory on the store's disk, where the order routes measure fdatasync (default: the SQLite store's temporary directory; give PostgreSQL's data directory's disk when it is another)")
	route := fs.String("route", "klines", "what to measure: klines (signed GET recent-klines), market (POST /v1/order/market) or limit (POST /v1/order/limit)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *route != "klines" && *route != "market" && *route != "limit" {
		return fmt.Errorf("--route %q: want klines, market or limit", *route)
	}
	if *profileDir != "" && (*cpuProfile != "" || *route == "klines") {
		return errors.New("--profile-dir: for the order routes (market, limit), and not with --cpuprofile (one CPU profile at a time)")
	}
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	if *overhead {
		return benchOverhead(ctx, *conc, *dur, *rounds, stdout, stderr)
	}
	up := binancefake.New(binancefake.Options{WeightLimit: -1})
	defer up.Close()
	const apiKey, secret = "benchupstreamkey", "benchupstreamsecret"
	// The order routes spread their orders over many upstream accounts
	// (exchange keys bench, bench1, bench2, ...): the Binance adapter paces
	// each account's orders at its ORDERS limit (100 per 10 s), which a
	// closed loop on one account would hit in a fraction of a second.
	accounts := []upstreamAccount{{apiKey, secret}}
	if *route != "klines" {
		for i := 1; i < orderAccounts; i++ {
			accounts = append(accounts, upstreamAccount{apiKey + strconv.Itoa(i), secret + strconv.Itoa(i)})
		}
	}
	for _, a := range accounts {
		// Enough of both for every order a run places.
		up.AddAccount(binancefake.Account{APIKey: a.key, Secret: a.secret, Balances: map[string]string{"USDT": "1000000000000", "BTC": "10000000"}})
	}
	// As on a live market, the current kline changes on every call.
	up.TickCurrentKline(true)

	proxyURL, stopProxy, err := serveLoopback(&loadtest.Proxy{Upstream: up.URL, Client: loadtest.NewClient(*conc)})
	if err != nil {
		return err
	}
	defer stopProxy()

	dataDir, err := os.MkdirTemp("", "exgate-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dataDir)
	// One master key for every gateway sharing the PostgreSQL schema.
	var mk [32]byte
	_, _ = rand.Read(mk[:])
	masterKey := base64.StdEncoding.EncodeToString(mk[:])
	startGateway := func(coalescing bool, age time.Duration, klineMemory int, dir string) (string, []exgate.ClientKey, func(), error) {
		cfg := &gateway.Config{DataDir: dir, ExchangeSettings: benchExchanges(up.URL),
			Coalesce: coalescing, MarketDataMaxAge: age, LogFormat: "text"}
		if *databaseURL != "" {
			cfg.DatabaseURL, cfg.MasterKey = *databaseURL, masterKey
		}
		st, err := gateway.OpenStore(ctx, cfg)
		if err != nil {
			return "", nil, nil, err
		}
		state, _ := gateway.OpenState(ctx, cfg)
		keys, err := newBenchClientKeys(ctx, st)
		for i, a := range accounts {
			if err != nil {
				break
			}
			_, err = st.AddCredential(ctx, exgate.Credential{ClientAPIKey: keys[i%len(keys)].APIKey, Name: exchangeKeyName(i), Exchange: "binance",
				Key: a.key, Secret: a.secret, Permissions: []exgate.Permission{exgate.PermissionRead, exgate.PermissionTrade}})
		}
		if err != nil {
			st.Close()
			return "", nil, nil, err
		}
		g, err := gateway.Build(cfg, st, state, slog.New(slog.DiscardHandler),
			gateway.WithAdapters(binance.AdapterWith(binance.Options{KlineMemory: klineMemory})))
		if err != nil {
			st.Close()
			return "", nil, nil, err
		}
		u, stop, err := serveLoopback(g.API)
		if err != nil {
			st.Close()
			return "", nil, nil, err
		}
		// As serve runs it: the risk engine reads limits and halts in the
		// background and holds the books it prices live.
		riskCtx, stopRisk := context.WithCancel(ctx)
		riskDone := make(chan struct{})
		go func() { defer close(riskDone); g.Risk.Run(riskCtx) }()
		return u, keys, func() { stopRisk(); <-riskDone; stop(); st.Close() }, nil
	}
	gwURL, gwKeys, stopGW, err := startGateway(false, 0, 0, dataDir+"/plain")
	if err != nil {
		return err
	}
	defer stopGW()
	if *route != "klines" {
		var variants []orderVariant
		if *withRisk {
			for _, v := range riskVariants {
				dir := dataDir + "/" + v.dir
				var age time.Duration
				if v.shareBooks {
					age = *maxAge
				}
				u, keys, stop, err := startGateway(v.shareBooks, age, 0, dir)
				if err != nil {
					return err
				}
				defer stop()
				sc := &gateway.Config{DataDir: dir}
				if *databaseURL != "" {
					sc.DatabaseURL, sc.MasterKey = *databaseURL, masterKey
				}
				if err := setBenchLimits(ctx, sc, keys, v.limits); err != nil {
					return err
				}
				variants = append(variants, orderVariant{name: v.name, url: u, keys: keys})
			}
		}
		return compareOrders(ctx, orderBench{
			route: *route, conc: *conc, dur: *dur, rounds: *rounds,
			upstream: up.URL, accounts: accounts,
			proxyURL: proxyURL, gatewayURL: gwURL, keys: gwKeys, variants: variants,
			syncDir: cmp.Or(*syncDir, dataDir), profileDir: *profileDir,
		}, stdout, stderr)
	}
	fullURL, fullKey, stopFull, err := startGateway(false, 0, -1, dataDir+"/full")
	if err != nil {
		return err
	}
	defer stopFull()
	hotURL, hotKey, stopHot, err := startGateway(true, 0, 0, dataDir+"/hot")
	if err != nil {
		return err
	}
	defer stopHot()
	agedURL, agedKey, stopAged, err := startGateway(true, *maxAge, 0, dataDir+"/aged")
	if err != nil {
		return err
	}
	defer stopAged()

	q := "asset1=BTC&asset2=USDT&interval=1m&limit=" + strconv.Itoa(*limit)
	measure := func(name string, t loadtest.Target) (loadtest.Result, error) {
		fmt.Fprintf(stderr, "%s: %d clients for %s\n", name, *conc, *dur)
		r, err := loadtest.Run(ctx, loadtest.Config{Target: t, Concurrency: *conc, Duration: *dur, Progress: stderr})
		if err == nil {
			fmt.Fprintf(stdout, "%-26s %s\n", name, r)
		}
		return r, err
	}
	direct := loadtest.Target{URL: up.URL + "/api/v3/klines?symbol=BTCUSDT&interval=1m&limit=" + strconv.Itoa(*limit)}
	proxy := loadtest.Target{URL: proxyURL + "/v1/market/recent-klines?" + q}
	gateway := loadtest.Target{URL: gwURL + "/v1/market/recent-klines?" + q, APIKey: gwKeys[0].APIKey, Secret: gwKeys[0].Secret, ExchangeKey: "bench"}
	full := loadtest.Target{URL: fullURL + "/v1/market/recent-klines?" + q, APIKey: fullKey[0].APIKey, Secret: fullKey[0].Secret, ExchangeKey: "bench"}
	hot := loadtest.Target{URL: hotURL + "/v1/market/recent-klines?" + q, APIKey: hotKey[0].APIKey, Secret: hotKey[0].Secret, ExchangeKey: "bench"}
	aged := loadtest.Target{URL: agedURL + "/v1/market/recent-klines?" + q, APIKey: agedKey[0].APIKey, Secret: agedKey[0].Secret, ExchangeKey: "bench"}

	// Warm up connections, caches and the adapters' market metadata.
	for _, t := range []loadtest.Target{direct, proxy, gateway, full, hot, aged} {
		if r, err := loadtest.Run(ctx, loadtest.Config{Target: t, Concurrency: *conc, Requests: *conc * 20}); err != nil {
			return err
		} else if r.Errors > 0 {
			return fmt.Errorf("warm-up of %s: %d errors %v", t.URL, r.Errors, r.Statuses)
		}
	}
	fmt.Fprintf(stdout, "signed recent-klines limit %d, %d concurrent clients, %s per run, GOMAXPROCS shared by all\n", *limit, *conc, *dur)
	var sumRatio, sumLat float64
	var hotRatio float64
	for round := range *rounds {
		d, err := measure("direct upstream", direct)
		if err != nil {
			return err
		}
		p, err := measure("bare proxy", proxy)
		if err != nil {
			return err
		}
		g, err := measure("gateway", gateway)
		if err != nil {
			return err
		}
		f, err := measure("gateway (every row)", full)
		if err != nil {
			return err
		}
		h, err := measure("gateway (coalescing)", hot)
		if err != nil {
			return err
		}
		a, err := measure("gateway (max-age "+maxAge.String()+")", aged)
		if err != nil {
			return err
		}
		if p.Errors+g.Errors+f.Errors+h.Errors+d.Errors+a.Errors > 0 {
			return errors.New("errors during the measurement; the ratios would mean nothing")
		}
		ratio := g.RPS() / p.RPS()
		proxyAdded := p.P50 - d.P50
		gwAdded := g.P50 - d.P50
		latRatio := float64(gwAdded) / float64(max(proxyAdded, time.Microsecond))
		hotRatio = h.RPS() / p.RPS()
		fmt.Fprintf(stdout, "round %d: gateway/proxy throughput %.2fx (target >= 0.80); median added latency gateway %s vs proxy %s = %.2fx (target <= 1.25); converting every row %.2fx and %.2fx; coalescing gateway/proxy throughput %.2fx, with max-age %s %.2fx (target >= 3)\n",
			round+1, ratio, roundDur(gwAdded), roundDur(proxyAdded), latRatio, f.RPS()/p.RPS(), float64(f.P50-d.P50)/float64(max(proxyAdded, time.Microsecond)), hotRatio, maxAge, a.RPS()/p.RPS())
		sumRatio += ratio
		sumLat += latRatio
	}
	if *rounds > 1 {
		fmt.Fprintf(stdout, "mean over %d rounds: throughput %.2fx, added latency %.2fx\n", *rounds, sumRatio/float64(*rounds), sumLat/float64(*rounds))
	}
	return nil
}

func roundDur(d time.Duration) time.Duration { return d.Round(time.Microsecond) }

// serveLoopback serves h on a fresh loopback port.
func serveLoopback(h http.Handler) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 120 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
}

// benchIdle opens idle keep-alive connections to a gateway (each makes one
// request first) and reports the gateway's resident memory when --pid is
// given.
func benchIdle(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("exgate-bench idle", flag.ContinueOnError)
	fs.SetOutput(stderr)
	base := fs.String("url", "http://127.0.0.1:8080", "gateway base URL")
	n := fs.Int("connections", 1000, "idle connections to hold")
	pid := fs.Int("pid", 0, "the gateway's process id, to read its resident memory")
	hold := fs.Duration("hold", 2*time.Second, "how long to hold the connections before measuring")
	if err := fs.Parse(args); err != nil {
		return err
	}
	u, err := url.Parse(*base)
	if err != nil {
		return err
	}
	before := ""
	if *pid > 0 {
		before = readRSS(*pid)
	}
	conns := make([]net.Conn, 0, *n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	req := "GET /healthz HTTP/1.1\r\nHost: " + u.Host + "\r\n\r\n"
	buf := make([]byte, 4096)
	for i := range *n {
		c, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
		if err != nil {
			return fmt.Errorf("connection %d: %w", i, err)
		}
		conns = append(conns, c)
		if _, err := io.WriteString(c, req); err != nil {
			return fmt.Errorf("connection %d: %w", i, err)
		}
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Read(buf); err != nil {
			return fmt.Errorf("connection %d: %w", i, err)
		}
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(*hold):
	}
	fmt.Fprintf(stdout, "%d idle keep-alive connections open\n", len(conns))
	if *pid > 0 {
		fmt.Fprintf(stdout, "gateway resident memory: before %s, with the connections %s\n", before, readRSS(*pid))
	}
	return nil
}

// readRSS returns VmRSS of a process from /proc.
func readRSS(pid int) string {
	kb, err := rssKB(pid)
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return strconv.FormatInt(kb, 10) + " kB"
}

// rssKB returns VmRSS of a process in kB from /proc.
func rssKB(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		}
	}
	return 0, errors.New("no VmRSS line")
}

// startCPUProfile profiles the whole process into path until stop.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// benchExchanges points Binance, its REST API and its streams, at the
// upstream under test and the other exchanges at a closed port (the bench
// calls only Binance).
func benchExchanges(binanceURL string) map[string]exchange.Settings {
	ws := "ws" + strings.TrimPrefix(binanceURL, "http")
	return map[string]exchange.Settings{"binance": {"url": binanceURL, "ws-url": ws, "ws-api-url": ws + "/ws-api/v3"},
		"kraken": {"url": "http://127.0.0.1:1", "ws-url": "ws://127.0.0.1:1"}, "gateio": {"url": "http://127.0.0.1:1", "ws-url": "ws://127.0.0.1:1"}}
}
