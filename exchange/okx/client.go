package okx

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

// sign returns OKX's OK-ACCESS-SIGN: the Base64 of the HMAC-SHA256, keyed
// by the secret's bytes, of timestamp + METHOD + requestPath + body, where
// requestPath carries the query string of a GET ("?..." as sent) and body
// is the exact JSON text of a POST ("" for a GET). Source: OKX API v5
// docs, "REST Authentication", "Signature"
// (https://www.okx.com/docs-v5/en/#overview-rest-authentication-signature).
// The WebSocket login signs timestamp + "GET" + "/users/self/verify" the
// same way (https://www.okx.com/docs-v5/en/#overview-websocket-login).
func sign(secret, timestamp, method, requestPath string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(timestamp))
	mac.Write([]byte(method))
	mac.Write([]byte(requestPath))
	mac.Write(body)
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// isoMillis is OK-ACCESS-TIMESTAMP's format: UTC ISO 8601 with
// milliseconds, "2020-12-08T09:08:57.715Z".
const isoMillis = "2006-01-02T15:04:05.000Z"

const (
	// maxBody caps an answer read into memory; the instrument list is
	// the largest (about a megabyte).
	maxBody = 16 << 20
	// maxOrderExpiry caps the expTime window of a trading request.
	maxOrderExpiry = 30 * time.Second
)

// request is one call to make.
type request struct {
	ep     endpoint
	params rest.Params
	body   []byte
	// cred signs the call; nil for public endpoints.
	cred *exgate.Credential
	// inst keys the per-instrument budget (trading endpoints), ccy the
	// per-currency one (transfers).
	inst, ccy string
	// expires, when set, is sent as expTime: OKX discards the request if
	// it arrives later.
	expires time.Time
}

// apiError is one of OKX's error answers: the HTTP status, OKX's code
// (the item's sCode for an order or cancel refused item by item) and
// message.
type apiError struct {
	status     int
	code       string
	msg        string
	retryAfter time.Duration
}

func (e *apiError) Error() string {
	if e.code != "" {
		return fmt.Sprintf("okx: HTTP %d: code %s: %s", e.status, e.code, e.msg)
	}
	return fmt.Sprintf("okx: HTTP %d: %s", e.status, e.msg)
}

// client builds, signs, paces and sends OKX REST calls.
type client struct {
	rest.Transport
	// simulated sends x-simulated-trading: 1 (OKX's demo trading).
	simulated bool

	// offset is OKX's clock minus ours, in ms, learned at the first
	// signed call and again after a refused timestamp.
	offset  atomic.Int64
	learned atomic.Bool
	group   singleflight.Group
}

// serverNow is our estimate of OKX's clock.
func (c *client) serverNow() time.Time {
	return c.Now().Add(time.Duration(c.offset.Load()) * time.Millisecond)
}

// budget returns the limiter key and budget a call counts against.
func budget(r request) (string, limitSpec) {
	spec := r.ep.limit
	if r.cred == nil || spec.scope == scopeIP {
		return "okx/ip/" + r.ep.name, spec
	}
	key := "okx/uid/" + rest.AccountKey(r.cred) + "/" + r.ep.name
	switch spec.scope {
	case scopeUserInst:
		key += "/" + r.inst
	case scopeUserCcy:
		key += "/" + r.ccy
	}
	return key, spec
}

// cost is what the call takes before it is sent.
func cost(r request) rest.Budget {
	key, spec := budget(r)
	return rest.Budget{Key: key, Cost: 1, Limit: spec.rateLimit(), What: "request budget of " + r.ep.name}
}

// do sends the call and returns the data array of OKX's envelope. The
// first signed call learns the clock offset from GET /public/time; a
// 50102 answer (timestamp expired) learns it again, after which a read is
// sent once more and a write is not (OKX refused it before acting on it,
// so the caller may send it again). Reads are retried up to
// rest.ReadRetries more times on connection errors and server failures;
// writes never are. Errors are *exgate.Error, wrapping the *apiError when
// OKX answered.
func (c *client) do(ctx context.Context, r request) ([]byte, error) {
	if r.ep.private && !c.learned.Load() {
		c.resync(ctx)
	}
	var data []byte
	resynced := false
	err := c.Retry(ctx, r.ep.write, retryable, func() error {
		var err error
		data, err = c.once(ctx, r)
		if ae, ok := errors.AsType[*apiError](err); ok && ae.code == codeTimestampExpired && !resynced {
			resynced = true
			c.Log.WarnContext(ctx, "okx timestamp refused; resynchronizing clock", "endpoint", r.ep.name, "msg", ae.msg)
			c.learned.Store(false)
			c.resync(ctx)
			if !r.ep.write {
				return rest.ErrAgain
			}
			return &exgate.Error{Code: exgate.CodeExchangeUnavailable, RetryAfter: time.Second,
				Detail: "okx refused the " + r.ep.name + " request's timestamp (not executed); the clock was resynchronized, send it again", Err: err}
		}
		return err
	})
	if err != nil {
		return nil, c.classify(r.ep, err)
	}
	return data, nil
}

// retryable reports whether a failed read may be sent again.
func retryable(err error) bool {
	if _, ok := errors.AsType[*rest.TransportError](err); ok {
		return true
	}
	if ae, ok := errors.AsType[*apiError](err); ok {
		return ae.status >= 500 || errorCodes[ae.code].server
	}
	return false
}

// once paces, signs and sends the call one time.
func (c *client) once(ctx context.Context, r request) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, &rest.TransportError{Exchange: "okx", Err: err}
	}
	if err := c.Pacer().Take(ctx, cost(r)); err != nil {
		return nil, err
	}
	requestPath := r.ep.path
	if q := r.params.Encode(); q != "" {
		requestPath += "?" + q
	}
	var bodyReader io.Reader
	if r.body != nil {
		bodyReader = strings.NewReader(string(r.body))
	}
	req, err := http.NewRequestWithContext(ctx, r.ep.method, c.BaseURL+requestPath, bodyReader)
	if err != nil {
		return nil, &rest.TransportError{Exchange: "okx", Err: err}
	}
	req.Header.Set("Accept", "application/json")
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.simulated {
		req.Header.Set("x-simulated-trading", "1")
	}
	if r.ep.private {
		if r.cred == nil {
			return nil, &exgate.Error{Code: exgate.CodeInternal, Detail: "okx: private call without a credential"}
		}
		// OKX signs the request path with its query exactly as sent.
		ts := c.serverNow().UTC().Format(isoMillis)
		req.Header.Set("OK-ACCESS-KEY", r.cred.Key)
		req.Header.Set("OK-ACCESS-SIGN", sign(r.cred.Secret, ts, r.ep.method, requestPath, r.body))
		req.Header.Set("OK-ACCESS-TIMESTAMP", ts)
		req.Header.Set("OK-ACCESS-PASSPHRASE", r.cred.Passphrase)
	}
	if !r.expires.IsZero() {
		req.Header.Set("expTime", strconv.FormatInt(r.expires.UnixMilli(), 10))
	}
	resp, err := rest.Send(c.HTTP, "okx", req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := rest.ReadAnswer(resp, maxBody)
	if err != nil {
		return nil, rest.ReadError("okx", r.ep.name, err)
	}
	data, ae, err := parseEnvelope(resp.StatusCode, body)
	if err != nil {
		return nil, badAnswer(r.ep, err)
	}
	if ae == nil {
		return data, nil
	}
	if ae.status == http.StatusTooManyRequests || ae.code == codeRateLimit {
		c.backOff(ctx, r, ae, resp.Header)
	}
	return nil, ae
}

// backOff pauses the budget a rate-limit answer was about until
// Retry-After (seconds) when OKX sends one (it documents none), else for
// the budget's window.
func (c *client) backOff(ctx context.Context, r request, ae *apiError, h http.Header) {
	key, spec := budget(r)
	d := spec.window
	if s, err := strconv.Atoi(strings.TrimSpace(h.Get("Retry-After"))); err == nil && s >= 0 && s <= 3600 {
		d = time.Duration(s) * time.Second
	}
	ae.retryAfter = d
	until, err := c.Pacer().Pause(ctx, key, d)
	if err != nil {
		c.Log.ErrorContext(ctx, "okx pause not recorded", "key", key, "err", err)
	}
	c.Log.WarnContext(ctx, "okx rate limit answer; pausing", "status", ae.status, "code", ae.code, "key", key, "until", until)
}

// resync learns the clock offset from GET /api/v5/public/time. Concurrent
// callers share one request; a failure is logged and the offset kept. It
// is tried once either way: a clock still off shows as a 50102 answer,
// which tries again, so an outage of the time endpoint costs each signed
// call nothing more.
func (c *client) resync(ctx context.Context) {
	ch := c.group.DoChan("time", func() (any, error) {
		defer c.learned.Store(true)
		return nil, c.LearnOffset(ctx, &c.offset, c.serverMillis)
	})
	select {
	case <-ctx.Done():
	case res := <-ch:
		if res.Err != nil {
			c.Log.WarnContext(ctx, "okx clock offset not learned", "err", res.Err)
		}
	}
}

// serverMillis reads GET /api/v5/public/time: OKX's clock in Unix ms.
func (c *client) serverMillis(ctx context.Context) (int64, error) {
	data, err := c.once(ctx, request{ep: epTime})
	if err != nil {
		return 0, err
	}
	return parseServerTime(data)
}

// classify turns a failed call into the *exgate.Error the gateway answers
// with. For writes, anything that leaves the outcome unknown (a connection
// lost after the request was written, a 5xx, a server-side code) is
// EXCHANGE_TIMEOUT: the gateway then reconciles by client id.
func (c *client) classify(ep endpoint, err error) *exgate.Error {
	settled, ae := rest.ClassifyAs[*apiError](err, "okx", ep.name, ep.write)
	if settled != nil {
		return settled
	}
	return classifyAPI(ep, ae)
}

// classifyAPI maps one of OKX's error answers through errorCodes.
func classifyAPI(ep endpoint, ae *apiError) *exgate.Error {
	detail := "okx: " + ae.msg
	if ae.code != "" {
		detail = fmt.Sprintf("okx: %s (code %s)", ae.msg, ae.code)
	}
	rule, known := errorCodes[ae.code]
	switch {
	case ae.status == http.StatusTooManyRequests || ae.code == codeRateLimit:
		return &exgate.Error{Code: exgate.CodeExchangeUnavailable, Detail: detail, RetryAfter: max(ae.retryAfter, time.Second), Err: ae}
	case ae.status >= 500 || rule.server:
		if ep.write {
			return &exgate.Error{Code: exgate.CodeExchangeTimeout, Detail: detail + "; the outcome is unknown", Err: ae}
		}
		return &exgate.Error{Code: exgate.CodeExchangeUnavailable, Detail: detail, RetryAfter: time.Second, Err: ae}
	case ae.code == codeTimestampExpired:
		return &exgate.Error{Code: exgate.CodeExchangeError, Detail: detail + "; the clock offset could not be corrected", Err: ae}
	case rule.notFound:
		return &exgate.Error{Code: exgate.CodeNotFound, Detail: detail, Err: fmt.Errorf("%w: %w", exgate.ErrNotFound, ae)}
	case !known && ae.status == http.StatusUnauthorized:
		return &exgate.Error{Code: exgate.CodeExchangeAuthFailed, Detail: detail, Err: ae}
	case !known:
		return &exgate.Error{Code: exgate.CodeExchangeError, Detail: detail, Err: ae}
	}
	code := rule.code
	switch {
	case (ep == epPlaceOrder || ep == epCancelOrder) && rule.orderCode != "":
		code = rule.orderCode
	case ep == epWithdraw && rule.withdrawCode != "":
		code = rule.withdrawCode
	}
	if ep == epWithdraw && code == exgate.CodeInsufficientFunds {
		detail += withdrawDetail
	}
	return &exgate.Error{Code: code, Detail: detail, Param: rule.param, Err: ae}
}

// badAnswer is the error for a 2xx answer to ep that the adapter cannot
// read (rest.BadAnswer). After a write it means the outcome is unknown.
func badAnswer(ep endpoint, err error) *exgate.Error {
	return rest.BadAnswer("okx", ep.name, ep.write, err)
}

// Unreadable is badAnswer for r's endpoint: r as a rest.Request, for
// rest.Fetch and rest.SendOrder.
func (r request) Unreadable(err error) *exgate.Error { return badAnswer(r.ep, err) }
