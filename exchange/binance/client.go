package binance

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

// sign returns the hex HMAC-SHA256 of the query string concatenated with
// the request body (no separator), keyed by the API secret: Binance's
// signature of a SIGNED request (rest-api.md, "SIGNED Endpoint security").
// Both parts are the exact percent-encoded bytes sent, without the
// signature parameter itself.
func sign(secret, query, body string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(query))
	mac.Write([]byte(body))
	return hex.EncodeToString(mac.Sum(nil))
}

const (
	second = time.Second
	minute = time.Minute

	// maxBody caps an answer read into memory; exchangeInfo of every
	// symbol is the largest answer (several MB).
	maxBody = 64 << 20
	// weightHeadroom is the share of a budget the adapter leaves unused
	// according to the exchange's own usage header (other processes on
	// the same IP count against it too).
	weightHeadroomPercent = 90
)

// limitSpec is one of Binance's budgets: limit units per window.
type limitSpec struct {
	limit  int
	window time.Duration
}

// rateLimit expresses the budget for the Limiter: a burst of a fifth of the
// budget and a steady rate of the other four fifths, so that no window of
// the budget's length ever holds more than the limit.
func (l limitSpec) rateLimit() exgate.RateLimit {
	burst := max(l.limit/5, 1)
	return exgate.RateLimit{Rate: max(l.limit-burst, 1), Period: l.window, Burst: burst}
}

// rateLimits are the budgets exchangeInfo publishes.
type rateLimits struct {
	weight    limitSpec // REQUEST_WEIGHT, per IP
	ordersWin limitSpec // ORDERS, the shortest window, per account
}

// request is one call to make.
type request struct {
	ep     endpoint
	params rest.Params
	// cred signs the call; nil for public endpoints.
	cred *exgate.Credential
	// weight overrides ep.weight when not zero (depth).
	weight int
	// sizeHint estimates the answer's size in bytes when Binance does not
	// announce it (klines and depth, which are read as text).
	sizeHint int
	// into, when set, receives a successful answer (appended to it)
	// instead of the returned text: for answers read into reused buffers.
	into *[]byte
}

// apiError is a non-2xx answer: the HTTP status and Binance's code and
// message when the body had them.
type apiError struct {
	status     int
	code       int
	msg        string
	retryAfter time.Duration
}

func (e *apiError) Error() string {
	if e.code != 0 {
		return fmt.Sprintf("binance: HTTP %d: code %d: %s", e.status, e.code, e.msg)
	}
	return fmt.Sprintf("binance: HTTP %d: %s", e.status, e.msg)
}

// client builds, signs, paces and sends Binance REST calls.
type client struct {
	rest.Transport
	recvWindow int64

	// offset is Binance's clock minus ours, in ms, learned from
	// GET /api/v3/time after a -1021.
	offset atomic.Int64
	limits atomic.Pointer[rateLimits]
	group  singleflight.Group
}

func (c *client) rateLimits() rateLimits {
	if l := c.limits.Load(); l != nil {
		return *l
	}
	return defaultLimitSet
}

// serverNow is our estimate of Binance's clock.
func (c *client) serverNow() time.Time {
	return c.Now().Add(time.Duration(c.offset.Load()) * time.Millisecond)
}

// reservation is a cost to take from one budget before a call.
type reservation struct {
	key   string
	cost  int
	limit exgate.RateLimit
	spec  limitSpec
}

// budgetOf returns the limiter key and budget a call counts against.
func (c *client) budgetOf(b budget, cred *exgate.Credential) (string, limitSpec) {
	switch b {
	case budgetSapiIP:
		return "binance/ip/sapi", sapiIPLimit
	case budgetSapiIP1s:
		return "binance/ip/sapi-1s", sapiIP1sLimit
	case budgetSapiUID:
		return "binance/uid/" + rest.AccountKey(cred), sapiUIDLimit
	}
	return "binance/ip/weight", c.rateLimits().weight
}

func (c *client) reservations(r request) []reservation {
	key, spec := c.budgetOf(r.ep.budget, r.cred)
	w := r.ep.weight
	if r.weight != 0 {
		w = r.weight
	}
	limit := spec.rateLimit()
	limit.Burst = max(limit.Burst, w) // a budget must be able to take its heaviest call
	out := []reservation{{key: key, cost: w, limit: limit, spec: spec}}
	if r.ep.order && r.cred != nil {
		spec := c.rateLimits().ordersWin
		out = append(out, reservation{key: "binance/orders/" + rest.AccountKey(r.cred), cost: 1, limit: spec.rateLimit(), spec: spec})
	}
	return out
}

// budgets are the costs the call takes before it is sent.
func (c *client) budgets(r request) []rest.Budget {
	rvs := c.reservations(r)
	out := make([]rest.Budget, len(rvs))
	for i, rv := range rvs {
		out[i] = rest.Budget{Key: rv.key, Cost: rv.cost, Limit: rv.limit, What: "request budget"}
	}
	return out
}

// do sends the call. A -1021 (timestamp outside recvWindow) resynchronizes
// the clock offset and sends the call once more: Binance checks the
// timestamp before it forwards a request to the matching engine, so a call
// refused with -1021 was not executed (rest-api.md, "Timing security").
// Reads are retried up to rest.ReadRetries more times on connection errors
// and 5xx answers; writes never are. Errors are *exgate.Error.
func (c *client) do(ctx context.Context, r request) ([]byte, error) {
	text, err := c.doText(ctx, r)
	if err != nil {
		return nil, err
	}
	return []byte(text), nil
}

// doText is do for the answers that are scanned as text (klines and
// depth): they are read straight into a string, whose substrings the
// scanner returns, without a copy of the answer.
func (c *client) doText(ctx context.Context, r request) (string, error) {
	var body string
	resynced := false
	err := c.Retry(ctx, r.ep.write, retryable, func() error {
		var err error
		body, err = c.once(ctx, r)
		if ae, ok := errors.AsType[*apiError](err); ok && ae.code == codeInvalidTime && r.ep.signed && !resynced {
			resynced = true
			c.Log.WarnContext(ctx, "binance timestamp refused; resynchronizing clock", "endpoint", r.ep.name, "msg", ae.msg)
			if serr := c.syncTime(ctx); serr != nil {
				return c.classify(epTime, serr)
			}
			return rest.ErrAgain
		}
		return err
	})
	if err != nil {
		return "", c.classify(r.ep, err)
	}
	return body, nil
}

// retryable reports whether a failed read may be sent again.
func retryable(err error) bool {
	if _, ok := errors.AsType[*rest.TransportError](err); ok {
		return true
	}
	if ae, ok := errors.AsType[*apiError](err); ok {
		return ae.status >= 500 || unknownOutcome[ae.code] || ae.code == codeServerBusy
	}
	return false
}

// once paces, signs and sends the call one time.
func (c *client) once(ctx context.Context, r request) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", &rest.TransportError{Exchange: "binance", Err: err}
	}
	if err := c.Pacer().Take(ctx, c.budgets(r)...); err != nil {
		return "", err
	}
	p := r.params
	if r.ep.signed {
		p = append(rest.Params(nil), r.params...)
		p.Add("recvWindow", strconv.FormatInt(c.recvWindow, 10))
		p.Add("timestamp", strconv.FormatInt(c.serverNow().UnixMilli(), 10))
	}
	var query, body string
	if r.ep.method == http.MethodPost {
		body = p.Encode()
	} else {
		query = p.Encode()
	}
	if r.ep.signed {
		sig := "signature=" + sign(r.cred.Secret, query, body)
		if r.ep.method == http.MethodPost {
			body = rest.Join(body, sig)
		} else {
			query = rest.Join(query, sig)
		}
	}
	u := c.BaseURL + r.ep.path
	if query != "" {
		u += "?" + query
	}
	req, err := http.NewRequestWithContext(ctx, r.ep.method, u, strings.NewReader(body))
	if err != nil {
		return "", &rest.TransportError{Exchange: "binance", Err: err}
	}
	if r.ep.method == http.MethodPost {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if r.cred != nil {
		req.Header.Set("X-MBX-APIKEY", r.cred.Key)
	}
	resp, err := rest.Send(c.HTTP, "binance", req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if r.into != nil && resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if *r.into, err = rest.AppendAnswer(*r.into, resp, maxBody, r.sizeHint); err != nil {
			return "", rest.ReadError("binance", r.ep.name, err)
		}
		c.observeWeight(ctx, r, resp.Header)
		return "", nil
	}
	data, err := rest.ReadAnswerText(resp, maxBody, r.sizeHint)
	if err != nil {
		return "", rest.ReadError("binance", r.ep.name, err)
	}
	c.observeWeight(ctx, r, resp.Header)
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return data, nil
	}
	ae := &apiError{status: resp.StatusCode}
	var eb struct {
		Code int    `json:"code"`
		Msg  string `json:"msg"`
	}
	if json.Unmarshal([]byte(data), &eb) == nil && eb.Code != 0 {
		ae.code, ae.msg = eb.Code, eb.Msg
	} else {
		ae.msg = strings.TrimSpace(data[:min(len(data), 200)])
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusTeapot {
		c.backOff(ctx, r, ae, resp.Header.Get("Retry-After"))
	}
	return "", ae
}

// backOff pauses the budget a 429 or 418 answer was about until its
// Retry-After (seconds). Without the header (the ORDERS limit answers
// without it) the budget's own window is waited out.
func (c *client) backOff(ctx context.Context, r request, ae *apiError, retryAfter string) {
	rvs := c.reservations(r)
	rv := rvs[0]
	if ae.code == codeTooManyOrders && len(rvs) > 1 {
		rv = rvs[1] // the account's ORDERS budget
	}
	d := rv.spec.window
	if s, err := strconv.Atoi(strings.TrimSpace(retryAfter)); err == nil && s >= 0 {
		d = time.Duration(s) * time.Second
	}
	ae.retryAfter = d
	until := c.Now().Add(d)
	if err := c.Limiter.Pause(ctx, rv.key, until); err != nil {
		c.Log.ErrorContext(ctx, "binance pause not recorded", "key", rv.key, "err", err)
	}
	c.Log.WarnContext(ctx, "binance rate limit answer; pausing", "status", ae.status, "code", ae.code, "key", rv.key, "until", until)
}

// usageHeaders names the headers that report a budget's usage.
// Source: rest-api.md "IP Limits" (X-MBX-USED-WEIGHT-(intervalNum)(intervalLetter))
// and the /sapi limits page (X-SAPI-USED-IP-WEIGHT-1M).
func usageHeader(b budget, spec limitSpec) string {
	switch b {
	case budgetWeight:
		return "X-MBX-USED-WEIGHT-" + intervalSuffix(spec.window)
	case budgetSapiIP:
		return "X-SAPI-USED-IP-WEIGHT-1M"
	case budgetSapiUID:
		return "X-SAPI-USED-UID-WEIGHT-1M"
	}
	return ""
}

// intervalSuffix writes a window as Binance's (intervalNum)(intervalLetter).
func intervalSuffix(d time.Duration) string {
	switch {
	case d%(24*time.Hour) == 0:
		return strconv.Itoa(int(d/(24*time.Hour))) + "D"
	case d%time.Hour == 0:
		return strconv.Itoa(int(d/time.Hour)) + "H"
	case d%time.Minute == 0:
		return strconv.Itoa(int(d/time.Minute)) + "M"
	}
	return strconv.Itoa(int(d/time.Second)) + "S"
}

// observeWeight reads the usage Binance reports for the budget the call
// counted against; when it is within the headroom of the limit (other
// processes share the IP), the budget is paused until Binance's window
// turns over.
func (c *client) observeWeight(ctx context.Context, r request, h http.Header) {
	key, spec := c.budgetOf(r.ep.budget, r.cred)
	name := usageHeader(r.ep.budget, spec)
	if name == "" {
		return
	}
	used, err := strconv.Atoi(h.Get(name))
	if err != nil || used*100 < spec.limit*weightHeadroomPercent {
		return
	}
	server := c.serverNow()
	next := server.Truncate(spec.window).Add(spec.window)
	until := c.Now().Add(next.Sub(server))
	if err := c.Limiter.Pause(ctx, key, until); err != nil {
		c.Log.ErrorContext(ctx, "binance pause not recorded", "key", key, "err", err)
		return
	}
	c.Log.WarnContext(ctx, "binance budget nearly used; pausing until the window turns", "key", key, "used", used, "limit", spec.limit, "until", until)
}

// syncTime learns the clock offset from GET /api/v3/time; concurrent
// callers share one request.
func (c *client) syncTime(ctx context.Context) error {
	ch := c.group.DoChan("time", func() (any, error) {
		return nil, c.LearnOffset(ctx, &c.offset, c.serverMillis)
	})
	select {
	case <-ctx.Done():
		return &rest.TransportError{Exchange: "binance", Err: ctx.Err()}
	case res := <-ch:
		return res.Err
	}
}

// serverMillis reads GET /api/v3/time: Binance's clock in Unix
// milliseconds.
func (c *client) serverMillis(ctx context.Context) (int64, error) {
	body, err := c.once(ctx, request{ep: epTime})
	if err != nil {
		return 0, err
	}
	var st struct {
		ServerTime int64 `json:"serverTime"`
	}
	if err := json.Unmarshal([]byte(body), &st); err != nil || st.ServerTime <= 0 {
		return 0, fmt.Errorf("binance: bad server time answer %q", rest.Truncate([]byte(body)))
	}
	return st.ServerTime, nil
}

// classify turns a failed call into the *exgate.Error the gateway answers
// with. For writes, anything that leaves the outcome unknown (a connection
// lost after the request was written, a 5xx, a message saying the
// execution status is unknown) is EXCHANGE_TIMEOUT, never a failure: the
// gateway then reconciles by client id.
func (c *client) classify(ep endpoint, err error) *exgate.Error {
	settled, ae := rest.ClassifyAs[*apiError](err, "binance", ep.name, ep.write)
	if settled != nil {
		return settled
	}
	detail := "binance: " + ae.msg
	if ae.code != 0 {
		detail = fmt.Sprintf("binance: %s (code %d)", ae.msg, ae.code)
	}
	switch {
	case ae.status == http.StatusTooManyRequests || ae.status == http.StatusTeapot:
		return &exgate.Error{Code: exgate.CodeExchangeUnavailable, Detail: detail, RetryAfter: ae.retryAfter, Err: err}
	case unknownOutcome[ae.code] || (ae.status >= 500 && ae.code != codeServerBusy):
		if ep.write {
			return &exgate.Error{Code: exgate.CodeExchangeTimeout, Detail: detail + "; the outcome is unknown", Err: err}
		}
		return &exgate.Error{Code: exgate.CodeExchangeUnavailable, Detail: detail, Err: err}
	case ae.code == 0 && ae.status == http.StatusForbidden:
		return &exgate.Error{Code: exgate.CodeExchangeUnavailable, Detail: "binance refused the request (WAF)", Err: err}
	case ae.code == codeInvalidTime:
		return &exgate.Error{Code: exgate.CodeExchangeError, Detail: detail + "; the clock offset could not be corrected", Err: err}
	}
	code, ok := refineByMessage(ae.code, ae.msg)
	if !ok {
		code, ok = errorCodes[ae.code]
	}
	if !ok {
		code = exgate.CodeExchangeError
	}
	return &exgate.Error{Code: code, Detail: detail, Param: errorParams[ae.code], Err: err}
}

// badAnswer is the error for a 2xx answer to ep that the adapter cannot
// read (rest.BadAnswer). After a write it means the outcome is unknown.
func badAnswer(ep endpoint, err error) *exgate.Error {
	return rest.BadAnswer("binance", ep.name, ep.write, err)
}

// Unreadable is badAnswer for r's endpoint: r as a rest.Request, for
// rest.Fetch and rest.SendOrder.
func (r request) Unreadable(err error) *exgate.Error { return badAnswer(r.ep, err) }
