package gateio

import (
	"context"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

// apiPrefix is part of every request path and of the signed path.
const apiPrefix = "/api/v4"

// sign returns Gate's APIv4 SIGN header: the lowercase hex HMAC-SHA512,
// keyed by the raw secret, of
//
//	METHOD "\n" PATH "\n" QUERY "\n" hex(SHA512(BODY)) "\n" TIMESTAMP
//
// where PATH includes /api/v4, QUERY is the URL-decoded query string as
// sent (empty when there is none), BODY the exact body bytes (the hash of
// the empty string when there is none, GET included) and TIMESTAMP the
// Timestamp header value. Source: Gate API v4 docs, "API Signature string
// generation".
func sign(secret, method, path, query string, body []byte, timestamp string) string {
	bodyHash := sha512.Sum512(body)
	mac := hmac.New(sha512.New, []byte(secret))
	mac.Write([]byte(method))
	mac.Write([]byte{'\n'})
	mac.Write([]byte(path))
	mac.Write([]byte{'\n'})
	mac.Write([]byte(query))
	mac.Write([]byte{'\n'})
	mac.Write([]byte(hex.EncodeToString(bodyHash[:])))
	mac.Write([]byte{'\n'})
	mac.Write([]byte(timestamp))
	return hex.EncodeToString(mac.Sum(nil))
}

const (
	// maxBody caps an answer read into memory; the list of every
	// currency pair is the largest (a few MB).
	maxBody = 32 << 20
	// maxOrderExpiry caps the x-gate-exptime window of an order.
	maxOrderExpiry = 30 * time.Second
)

// request is one call to make.
type request struct {
	ep endpoint
	// id completes ep.path for routes with an id (spot/orders/{order_id}).
	id     string
	params rest.Params
	body   []byte
	// cred signs the call; nil for public endpoints.
	cred *exgate.Credential
	// pair keys the per-market order budget.
	pair string
	// expires, when set, is sent as x-gate-exptime: Gate refuses the
	// request if it arrives later.
	expires time.Time
}

func (r request) path() string { return apiPrefix + r.ep.path + url.PathEscape(r.id) }

// apiError is a non-2xx answer: the HTTP status and Gate's label and
// message when the body had them.
type apiError struct {
	status     int
	label      string
	msg        string
	retryAfter time.Duration
	date       time.Time
}

func (e *apiError) Error() string {
	if e.label != "" {
		return fmt.Sprintf("gateio: HTTP %d: %s: %s", e.status, e.label, e.msg)
	}
	return fmt.Sprintf("gateio: HTTP %d: %s", e.status, e.msg)
}

// client builds, signs, paces and sends Gate REST calls.
type client struct {
	rest.Transport

	// offset is Gate's clock minus ours, in ms, learned after a
	// REQUEST_EXPIRED answer.
	offset atomic.Int64
	group  singleflight.Group
}

// serverNow is our estimate of Gate's clock.
func (c *client) serverNow() time.Time {
	return c.Now().Add(time.Duration(c.offset.Load()) * time.Millisecond)
}

// budgetKey returns the limiter key and budget a call counts against.
func budgetKey(r request) (string, limitSpec) {
	spec := budgets[r.ep.budget]
	switch {
	case r.ep.budget == budgetOrder && r.cred != nil:
		return "gateio/uid/" + rest.AccountKey(r.cred) + "/orders/" + r.pair, spec
	case r.ep.budget == budgetWithdraw && r.cred != nil:
		return "gateio/uid/" + rest.AccountKey(r.cred) + "/withdrawals", spec
	case r.cred != nil:
		return "gateio/uid/" + rest.AccountKey(r.cred) + "/" + r.ep.name, spec
	}
	return "gateio/ip/" + r.ep.name, spec
}

// cost is what the call takes before it is sent.
func cost(r request) rest.Budget {
	key, spec := budgetKey(r)
	return rest.Budget{Key: key, Cost: 1, Limit: spec.rateLimit(), What: "request budget of " + r.ep.name}
}

// do sends the call. A REQUEST_EXPIRED answer (Timestamp more than 60 s
// from Gate's clock) resynchronizes the clock offset; a read is then sent
// once more, a write is not (Gate refused it before acting on it, so the
// caller may send it again). Reads are retried up to rest.ReadRetries more
// times on connection errors and 5xx answers; writes never are. Errors
// are *exgate.Error, wrapping the *apiError when Gate answered.
func (c *client) do(ctx context.Context, r request) ([]byte, error) {
	var body []byte
	resynced := false
	err := c.Retry(ctx, r.ep.write, retryable, func() error {
		var err error
		body, err = c.once(ctx, r)
		if ae, ok := errors.AsType[*apiError](err); ok && ae.label == labelRequestExpired && r.ep.private && !resynced {
			resynced = true
			c.Log.WarnContext(ctx, "gateio timestamp refused; resynchronizing clock", "endpoint", r.ep.name, "msg", ae.msg)
			c.resync(ctx, ae)
			if !r.ep.write {
				return rest.ErrAgain
			}
			return &exgate.Error{Code: exgate.CodeExchangeUnavailable, RetryAfter: time.Second,
				Detail: "gateio refused the " + r.ep.name + " request's timestamp (not executed); the clock was resynchronized, send it again", Err: err}
		}
		return err
	})
	if err != nil {
		return nil, c.classify(r.ep, err)
	}
	return body, nil
}

// retryable reports whether a failed read may be sent again.
func retryable(err error) bool {
	if _, ok := errors.AsType[*rest.TransportError](err); ok {
		return true
	}
	if ae, ok := errors.AsType[*apiError](err); ok {
		return ae.status >= 500 || serverLabels[ae.label]
	}
	return false
}

// once paces, signs and sends the call one time.
func (c *client) once(ctx context.Context, r request) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, &rest.TransportError{Exchange: "gateio", Err: err}
	}
	if err := c.Pacer().Take(ctx, cost(r)); err != nil {
		return nil, err
	}
	path := r.path()
	query := r.params.Encode()
	u := c.BaseURL + path
	if query != "" {
		u += "?" + query
	}
	var bodyReader io.Reader
	if r.body != nil {
		bodyReader = strings.NewReader(string(r.body))
	}
	req, err := http.NewRequestWithContext(ctx, r.ep.method, u, bodyReader)
	if err != nil {
		return nil, &rest.TransportError{Exchange: "gateio", Err: err}
	}
	req.Header.Set("Accept", "application/json")
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.ep.private {
		if r.cred == nil {
			return nil, &exgate.Error{Code: exgate.CodeInternal, Detail: "gateio: private call without a credential"}
		}
		// Gate signs the URL-decoded form of the query it receives.
		signedQuery, err := url.QueryUnescape(query)
		if err != nil {
			return nil, &rest.TransportError{Exchange: "gateio", Err: err}
		}
		ts := strconv.FormatInt(c.serverNow().Unix(), 10)
		req.Header.Set("KEY", r.cred.Key)
		req.Header.Set("Timestamp", ts)
		req.Header.Set("SIGN", sign(r.cred.Secret, r.ep.method, path, signedQuery, r.body, ts))
	}
	if !r.expires.IsZero() {
		req.Header.Set("x-gate-exptime", strconv.FormatInt(r.expires.UnixMilli(), 10))
	}
	resp, err := rest.Send(c.HTTP, "gateio", req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := rest.ReadAnswer(resp, maxBody)
	if err != nil {
		return nil, rest.ReadError("gateio", r.ep.name, err)
	}
	c.observe(ctx, r, resp.Header)
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return data, nil
	}
	ae := parseError(resp.StatusCode, data)
	if d, err := http.ParseTime(resp.Header.Get("Date")); err == nil {
		ae.date = d
	}
	if resp.StatusCode == http.StatusTooManyRequests || ae.label == labelTooManyRequests {
		c.backOff(ctx, r, ae, resp.Header)
	}
	return nil, ae
}

// parseError reads Gate's {"label","message"} error body (some endpoints
// say "detail" instead of "message").
func parseError(status int, data []byte) *apiError {
	ae := &apiError{status: status}
	var eb struct {
		Label   string `json:"label"`
		Message string `json:"message"`
		Detail  string `json:"detail"`
	}
	if json.Unmarshal(data, &eb) == nil && eb.Label != "" {
		ae.label, ae.msg = eb.Label, strings.TrimSpace(eb.Message)
		if ae.msg == "" {
			ae.msg = strings.TrimSpace(eb.Detail)
		}
	} else {
		ae.msg = strings.TrimSpace(rest.Truncate(data))
	}
	if ae.msg == "" {
		ae.msg = statusMessage(status, ae.label)
	}
	return ae
}

// statusMessage is the message of an error answer whose body said nothing
// readable: the label when Gate sent one, else the HTTP status.
func statusMessage(status int, label string) string {
	if label != "" {
		return label
	}
	if text := http.StatusText(status); text != "" {
		return text
	}
	return "HTTP status " + strconv.Itoa(status)
}

// backOff pauses the budget a 429 answer was about until Retry-After
// (seconds) or, without it, Gate's X-Gate-RateLimit-Reset-Timestamp (the
// Unix second the next window opens); failing both, the budget's window.
func (c *client) backOff(ctx context.Context, r request, ae *apiError, h http.Header) {
	key, spec := budgetKey(r)
	d := spec.window
	if s, err := strconv.Atoi(strings.TrimSpace(h.Get("Retry-After"))); err == nil && s >= 0 {
		d = time.Duration(s) * time.Second
	} else if reset, ok := resetTime(h); ok {
		if w := reset.Sub(c.serverNow()); w > 0 && w <= time.Hour {
			d = w
		}
	}
	ae.retryAfter = d
	until := c.Now().Add(d)
	if err := c.Limiter.Pause(ctx, key, until); err != nil {
		c.Log.ErrorContext(ctx, "gateio pause not recorded", "key", key, "err", err)
	}
	c.Log.WarnContext(ctx, "gateio rate limit answer; pausing", "status", ae.status, "label", ae.label, "key", key, "until", until)
}

// resetTime reads X-Gate-RateLimit-Reset-Timestamp (Unix seconds; some
// answers carry milliseconds).
func resetTime(h http.Header) (time.Time, bool) {
	v, err := strconv.ParseInt(strings.TrimSpace(h.Get("X-Gate-RateLimit-Reset-Timestamp")), 10, 64)
	if err != nil || v <= 0 {
		return time.Time{}, false
	}
	if v > 1e11 {
		return time.UnixMilli(v), true
	}
	return time.Unix(v, 0), true
}

// observe pauses an endpoint's budget when Gate says none of it is left
// (X-Gate-RateLimit-Requests-Remain: 0) until the window it names opens:
// other processes may share the IP or the account.
func (c *client) observe(ctx context.Context, r request, h http.Header) {
	remain := strings.TrimSpace(h.Get("X-Gate-RateLimit-Requests-Remain"))
	if remain != "0" {
		return
	}
	reset, ok := resetTime(h)
	if !ok {
		return
	}
	w := reset.Sub(c.serverNow())
	if w <= 0 || w > time.Hour {
		return
	}
	key, _ := budgetKey(r)
	until := c.Now().Add(w)
	if err := c.Limiter.Pause(ctx, key, until); err != nil {
		c.Log.ErrorContext(ctx, "gateio pause not recorded", "key", key, "err", err)
		return
	}
	c.Log.WarnContext(ctx, "gateio budget used up; pausing until the window turns", "key", key, "until", until)
}

// resync learns the clock offset from GET /spot/time (milliseconds);
// failing that, from the Date header of the refused answer (seconds).
// Concurrent callers share one request.
func (c *client) resync(ctx context.Context, ae *apiError) {
	ch := c.group.DoChan("time", func() (any, error) {
		return nil, c.LearnOffset(ctx, &c.offset, c.serverMillis)
	})
	var err error
	select {
	case <-ctx.Done():
		err = ctx.Err()
	case res := <-ch:
		err = res.Err
	}
	if err == nil {
		return
	}
	if !ae.date.IsZero() {
		c.offset.Store(ae.date.Add(500*time.Millisecond).UnixMilli() - c.Now().UnixMilli())
		c.Log.WarnContext(ctx, "gateio clock offset taken from the Date header", "offsetMs", c.offset.Load(), "timeErr", err)
		return
	}
	c.Log.ErrorContext(ctx, "gateio clock offset not learned", "err", err)
}

// serverMillis reads GET /spot/time: Gate's clock in Unix milliseconds.
func (c *client) serverMillis(ctx context.Context) (int64, error) {
	body, err := c.once(ctx, request{ep: epTime})
	if err != nil {
		return 0, err
	}
	return parseServerTime(body)
}

// parseServerTime reads {"server_time": ms}.
func parseServerTime(body []byte) (int64, error) {
	var st struct {
		ServerTime int64 `json:"server_time"`
	}
	if err := json.Unmarshal(body, &st); err != nil || st.ServerTime <= 0 {
		return 0, fmt.Errorf("gateio: bad server time answer %q", rest.Truncate(body))
	}
	return st.ServerTime, nil
}

// classify turns a failed call into the *exgate.Error the gateway answers
// with. For writes, anything that leaves the outcome unknown (a connection
// lost after the request was written, a 5xx, a server-side label) is
// EXCHANGE_TIMEOUT, never a failure: the gateway then reconciles by client
// id.
func (c *client) classify(ep endpoint, err error) *exgate.Error {
	settled, ae := rest.ClassifyAs[*apiError](err, "gateio", ep.name, ep.write)
	if settled != nil {
		return settled
	}
	return classifyAPI(ep, ae)
}

// classifyAPI maps one of Gate's error answers through errorLabels.
func classifyAPI(ep endpoint, ae *apiError) *exgate.Error {
	detail := "gateio: " + ae.msg
	if ae.label != "" {
		detail = fmt.Sprintf("gateio: %s (%s)", ae.msg, ae.label)
	}
	switch {
	case ae.status == http.StatusTooManyRequests || ae.label == labelTooManyRequests:
		return &exgate.Error{Code: exgate.CodeExchangeUnavailable, Detail: detail, RetryAfter: ae.retryAfter, Err: ae}
	case ae.status >= 500 || serverLabels[ae.label]:
		if ep.write {
			return &exgate.Error{Code: exgate.CodeExchangeTimeout, Detail: detail + "; the outcome is unknown", Err: ae}
		}
		return &exgate.Error{Code: exgate.CodeExchangeUnavailable, Detail: detail, Err: ae}
	case ae.label == labelRequestExpired:
		return &exgate.Error{Code: exgate.CodeExchangeError, Detail: detail + "; the clock offset could not be corrected", Err: ae}
	case ae.label == labelOrderNotFound || ae.label == labelClientIDNotFound:
		return &exgate.Error{Code: exgate.CodeNotFound, Detail: detail, Err: fmt.Errorf("%w: %w", exgate.ErrNotFound, ae)}
	}
	rule, ok := errorLabels[ae.label]
	if !ok {
		return &exgate.Error{Code: exgate.CodeExchangeError, Detail: detail, Err: ae}
	}
	code := rule.code
	switch {
	case ep == epCreateOrder && ae.label == labelInvalidParam && tooSmall(ae.msg):
		code = exgate.CodeQuantityTooSmall
	case ep == epCreateOrder && rule.orderCode != "":
		code = rule.orderCode
	case ep == epWithdraw && rule.withdrawCode != "":
		code = rule.withdrawCode
	}
	out := &exgate.Error{Code: code, Detail: detail, Param: rule.param, Err: ae}
	if ae.label == "TOO_FAST" {
		out.RetryAfter = budgets[budgetWithdraw].window
	}
	return out
}

// badAnswer is the error for a 2xx answer to ep that the adapter cannot
// read (rest.BadAnswer). After a write it means the outcome is unknown.
func badAnswer(ep endpoint, err error) *exgate.Error {
	return rest.BadAnswer("gateio", ep.name, ep.write, err)
}

// Unreadable is badAnswer for r's endpoint: r as a rest.Request, for
// rest.Fetch and rest.SendOrder.
func (r request) Unreadable(err error) *exgate.Error { return badAnswer(r.ep, err) }
