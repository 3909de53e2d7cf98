// Package loadtest is exgate's load tool: closed-loop signed load against a
// running gateway with latency percentiles, and a bare reverse proxy that
// serves the gateway's market-data routes straight from a Binance-shaped
// upstream, the floor the gateway is measured against.
package loadtest

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Target is one request to repeat.
type Target struct {
	// URL is the full URL without the signature, e.g.
	// http://127.0.0.1:8080/v1/market/recent-klines?asset1=BTC&asset2=USDT.
	URL string
	// APIKey, Secret and ExchangeKey sign the request as a gateway client;
	// empty APIKey sends it unsigned (upstream, bare proxy).
	APIKey      string
	Secret      string
	ExchangeKey string
	// New, when set, builds request number seq of the run (from 0)
	// instead of a GET of URL: a POST whose body must differ from one
	// request to the next (a fresh client order id, a fresh signature).
	// It signs the request itself; APIKey and the rest are not used.
	New func(ctx context.Context, seq int64) (*http.Request, error)
}

// Config is one load run.
type Config struct {
	Target      Target
	Concurrency int
	// Duration or Requests ends the run, whichever comes first; at least
	// one must be set.
	Duration time.Duration
	Requests int
	// Progress, when set, gets a line per second while the run lasts.
	Progress io.Writer
	// Client is the HTTP client; a keep-alive client sized for
	// Concurrency when nil.
	Client *http.Client
}

// Result summarizes a run.
type Result struct {
	Requests int
	Errors   int
	// Statuses counts answers by HTTP status.
	Statuses map[int]int
	Elapsed  time.Duration
	P50      time.Duration
	P90      time.Duration
	P99      time.Duration
	P999     time.Duration
	Max      time.Duration
}

// RPS is the throughput of successful and failed requests together.
func (r Result) RPS() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Requests) / r.Elapsed.Seconds()
}

func (r Result) String() string {
	return fmt.Sprintf("%d requests in %s: %.0f req/s, %d errors, p50 %s p90 %s p99 %s p99.9 %s max %s",
		r.Requests, r.Elapsed.Round(time.Millisecond), r.RPS(), r.Errors,
		roundLatency(r.P50), roundLatency(r.P90), roundLatency(r.P99), roundLatency(r.P999), roundLatency(r.Max))
}

func roundLatency(d time.Duration) time.Duration {
	if d < time.Millisecond {
		return d.Round(time.Microsecond)
	}
	return d.Round(10 * time.Microsecond)
}

// NewClient returns a keep-alive client for n concurrent workers.
func NewClient(n int) *http.Client {
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        n * 2,
			MaxIdleConnsPerHost: n * 2,
			MaxConnsPerHost:     0,
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  true,
			ReadBufferSize:      64 << 10,
		},
	}
}

// SignedURL appends the gateway signature (docs/contract.md 2.1) to a GET URL: the
// HMAC-SHA256 of the raw query as written.
func SignedURL(rawURL, secret string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", err
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(u.RawQuery))
	sig := hex.EncodeToString(m.Sum(nil))
	if u.RawQuery == "" {
		u.RawQuery = "signature=" + sig
	} else {
		u.RawQuery += "&signature=" + sig
	}
	return u.String(), nil
}

// Run drives closed-loop load: Concurrency workers each send the next
// request as soon as the previous answer has been read.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if cfg.Concurrency <= 0 {
		return Result{}, fmt.Errorf("concurrency must be positive")
	}
	if cfg.Duration <= 0 && cfg.Requests <= 0 {
		return Result{}, fmt.Errorf("set a duration or a request count")
	}
	target := cfg.Target.URL
	if cfg.Target.APIKey != "" && cfg.Target.New == nil {
		var err error
		if target, err = SignedURL(target, cfg.Target.Secret); err != nil {
			return Result{}, err
		}
	}
	client := cfg.Client
	if client == nil {
		client = NewClient(cfg.Concurrency)
	}
	if cfg.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Duration)
		defer cancel()
	}
	var issued, done, failed, seq atomic.Int64
	type workerResult struct {
		lat      []time.Duration
		statuses map[int]int
	}
	results := make([]workerResult, cfg.Concurrency)
	stopProgress := make(chan struct{})
	var progressDone sync.WaitGroup
	start := time.Now()
	if cfg.Progress != nil {
		progressDone.Go(func() {
			t := time.NewTicker(time.Second)
			defer t.Stop()
			last := int64(0)
			for {
				select {
				case <-stopProgress:
					return
				case <-t.C:
					n := done.Load()
					fmt.Fprintf(cfg.Progress, "  %5.0fs  %8d requests  %7d req/s  %d errors\n",
						time.Since(start).Seconds(), n, n-last, failed.Load())
					last = n
				}
			}
		})
	}
	var wg sync.WaitGroup
	for w := range cfg.Concurrency {
		wg.Go(func() {
			res := workerResult{lat: make([]time.Duration, 0, 4096), statuses: map[int]int{}}
			// Answers are read into one large buffer and dropped: io.Discard
			// would read them in 8 KB pieces, a system call each, and the
			// load tool shares the machine with what it measures.
			buf := make([]byte, 256<<10)
			for n := 0; ctx.Err() == nil; n++ {
				if cfg.Requests > 0 && issued.Add(1) > int64(cfg.Requests) {
					break
				}
				var req *http.Request
				if cfg.Target.New != nil {
					var err error
					if req, err = cfg.Target.New(ctx, seq.Add(1)-1); err != nil {
						done.Add(1)
						failed.Add(1)
						res.statuses[0]++
						continue
					}
				} else {
					req, _ = http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
				}
				if cfg.Target.APIKey != "" && cfg.Target.New == nil {
					req.Header.Set("X-API-KEY", cfg.Target.APIKey)
					req.Header.Set("X-API-EXCHANGE-KEY", cfg.Target.ExchangeKey)
				}
				t0 := time.Now()
				resp, err := client.Do(req)
				if err == nil {
					err = drain(resp.Body, buf)
					resp.Body.Close()
				}
				lat := time.Since(t0)
				if ctx.Err() != nil && err != nil {
					break // the run ended mid-request: not counted
				}
				done.Add(1)
				if err != nil {
					failed.Add(1)
					res.statuses[0]++
					continue
				}
				res.statuses[resp.StatusCode]++
				if resp.StatusCode != http.StatusOK {
					failed.Add(1)
				}
				res.lat = append(res.lat, lat)
			}
			results[w] = res
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(stopProgress)
	progressDone.Wait()

	r := Result{Statuses: map[int]int{}, Elapsed: elapsed}
	var all []time.Duration
	for _, wr := range results {
		all = append(all, wr.lat...)
		for s, n := range wr.statuses {
			r.Statuses[s] += n
			r.Requests += n
			if s != http.StatusOK {
				r.Errors += n
			}
		}
	}
	slices.Sort(all)
	r.P50, r.P90, r.P99, r.P999 = quantile(all, 0.50), quantile(all, 0.90), quantile(all, 0.99), quantile(all, 0.999)
	if len(all) > 0 {
		r.Max = all[len(all)-1]
	}
	return r, nil
}

// quantile of sorted latencies (nearest rank).
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// drain reads r to its end through buf.
func drain(r io.Reader, buf []byte) error {
	for {
		if _, err := r.Read(buf); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

// Pair is one member of a flat JSON body, in order; Value is written as a
// JSON string.
type Pair struct{ Name, Value string }

// SignedBody is the JSON body of a gateway POST (docs/contract.md 2.1): the pairs
// in order, then timestamp, then the signature over `name=value` joined by
// `&` (strings unquoted, the timestamp as written).
func SignedBody(secret string, pairs []Pair, timestamp int64) []byte {
	var params, body []byte
	body = append(body, '{')
	for i, p := range pairs {
		if i > 0 {
			params = append(params, '&')
		}
		params = append(append(append(params, p.Name...), '='), p.Value...)
		body = append(append(append(append(append(body, '"'), p.Name...), `":"`...), p.Value...), `",`...)
	}
	ts := strconv.FormatInt(timestamp, 10)
	if len(params) > 0 {
		params = append(params, '&')
	}
	params = append(append(params, "timestamp="...), ts...)
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(params)
	body = append(append(body, `"timestamp":`...), ts...)
	body = append(append(append(body, `,"signature":"`...), hex.EncodeToString(m.Sum(nil))...), `"}`...)
	return body
}

// SignedPosts is a Target.New that sends signed JSON POSTs of pairs to
// url, each with a client order id of its own (run id and sequence number)
// and a fresh timestamp, so that every request is a new order with a
// signature accepted once.
func SignedPosts(url, apiKey, secret, exchangeKey string, pairs []Pair) func(ctx context.Context, seq int64) (*http.Request, error) {
	run := strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
	return func(ctx context.Context, seq int64) (*http.Request, error) {
		ps := append(pairs[:len(pairs):len(pairs)], Pair{Name: "clientOrderId", Value: "lt" + run + "x" + strconv.FormatInt(seq, 10)})
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(SignedBody(secret, ps, time.Now().UnixMilli())))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-API-KEY", apiKey)
		req.Header.Set("X-API-EXCHANGE-KEY", exchangeKey)
		return req, nil
	}
}

// BinanceOrder is a signed POST /api/v3/order of form (url-encoded
// parameters without timestamp and signature) to a Binance-shaped upstream
// (rest-api.md, "SIGNED Endpoint security": the HMAC of the body).
func BinanceOrder(ctx context.Context, upstream, apiKey, secret, form string) *http.Request {
	form += "&timestamp=" + strconv.FormatInt(time.Now().UnixMilli(), 10)
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(form))
	form += "&signature=" + hex.EncodeToString(m.Sum(nil))
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, upstream+"/api/v3/order", strings.NewReader(form))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-MBX-APIKEY", apiKey)
	return req
}

// Proxy is the bare-proxy baseline: the gateway's klines and order-book
// routes mapped onto Binance's /api/v3/klines and /api/v3/depth, and its
// market and limit order routes onto one signed POST /api/v3/order with
// the account of APIKey and Secret, bytes streamed back as they come, with
// no authentication of the client, no journal and no normalization.
type Proxy struct {
	Upstream string
	Client   *http.Client
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		p.order(w, r)
		return
	}
	q := r.URL.Query()
	symbol := strings.ToUpper(q.Get("asset1") + q.Get("asset2"))
	var target string
	switch r.URL.Path {
	case "/v1/market/recent-klines":
		interval := q.Get("interval")
		if interval == "" {
			interval = "1m"
		}
		target = p.Upstream + "/api/v3/klines?symbol=" + symbol + "&interval=" + interval + "&limit=" + q.Get("limit")
	case "/v1/market/order-book":
		target = p.Upstream + "/api/v3/depth?symbol=" + symbol + "&limit=" + q.Get("limit")
	default:
		http.NotFound(w, r)
		return
	}
	req, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, target, nil)
	p.forward(w, req)
}

// order maps POST /v1/order/market and /v1/order/limit (a flat JSON body)
// onto Binance's new-order parameters.
func (p *Proxy) order(w http.ResponseWriter, r *http.Request) {
	var b map[string]any
	dec := json.NewDecoder(io.LimitReader(r.Body, 64<<10))
	dec.UseNumber()
	if err := dec.Decode(&b); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	str := func(name string) string { return fmt.Sprint(b[name]) }
	form := url.Values{}
	form.Set("symbol", strings.ToUpper(str("asset1")+str("asset2")))
	form.Set("side", strings.ToUpper(str("side")))
	form.Set("newClientOrderId", str("clientOrderId"))
	form.Set("newOrderRespType", "FULL")
	switch r.URL.Path {
	case "/v1/order/market":
		form.Set("type", "MARKET")
		if strings.EqualFold(str("quantityIn"), "asset2") {
			form.Set("quoteOrderQty", str("quantity"))
		} else {
			form.Set("quantity", str("quantity"))
		}
	case "/v1/order/limit":
		form.Set("type", "LIMIT")
		form.Set("timeInForce", "GTC")
		form.Set("quantity", str("quantity"))
		form.Set("price", str("price"))
	default:
		http.NotFound(w, r)
		return
	}
	p.forward(w, BinanceOrder(r.Context(), p.Upstream, r.Header.Get("X-Upstream-Key"), r.Header.Get("X-Upstream-Secret"), form.Encode()))
}

func (p *Proxy) forward(w http.ResponseWriter, req *http.Request) {
	resp, err := p.Client.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}
