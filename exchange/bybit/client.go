package bybit

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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

// sign returns Bybit's X-BAPI-SIGN: the lowercase hex HMAC-SHA256, keyed
// by the raw secret, of timestamp + apiKey + recvWindow + payload, where
// payload is the query string exactly as sent (GET) or the body exactly
// as sent (POST), empty when there is none. Source:
// https://bybit-exchange.github.io/docs/v5/guide ("Authentication").
func sign(secret, timestamp, apiKey, recvWindow, payload string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(timestamp))
	mac.Write([]byte(apiKey))
	mac.Write([]byte(recvWindow))
	mac.Write([]byte(payload))
	return hex.EncodeToString(mac.Sum(nil))
}

// maxBody caps an answer read into memory (the spot instrument list is
// the largest, a few MB).
const maxBody = 32 << 20

// request is one call to make.
type request struct {
	ep     endpoint
	params rest.Params
	body   []byte
	// cred signs the call; nil for public endpoints.
	cred *exgate.Credential
}

// apiError is an answer that is not a success: the HTTP status, and
// Bybit's retCode and retMsg when the body had them.
type apiError struct {
	status     int
	code       int
	msg        string
	retryAfter time.Duration
}

func (e *apiError) Error() string {
	if e.code != 0 {
		return fmt.Sprintf("bybit: retCode %d: %s", e.code, e.msg)
	}
	return fmt.Sprintf("bybit: HTTP %d: %s", e.status, e.msg)
}

// client builds, signs, paces and sends Bybit REST calls.
type client struct {
	rest.Transport
	recvWindow time.Duration
	ipBudget   int

	// offset is Bybit's clock minus ours, in ms.
	offset atomic.Int64
	group  singleflight.Group
}

// serverNow is our estimate of Bybit's clock.
func (c *client) serverNow() time.Time {
	return c.Now().Add(time.Duration(c.offset.Load()) * time.Millisecond)
}

// ipKey is the limiter key of the per-IP budget: every call to the host.
const ipKey = "bybit/ip"

// uidKey is the limiter key of an endpoint's per-UID budget. Bybit counts
// per account (UID); the adapter cannot see the UID behind a key, so it
// counts per API key, by a hash of the key rather than the credential's
// id: two exchange keys of the gateway holding the same API key share one
// budget.
func uidKey(r request) string {
	c := *r.cred
	c.ID = 0
	return "bybit/uid/" + rest.AccountKey(&c) + "/" + r.ep.name
}

// costs are the budgets a call takes before it is sent: the per-IP budget
// always, and the endpoint's per-UID budget for signed calls.
func (c *client) costs(r request) []rest.Budget {
	ip := rest.Budget{Key: ipKey, Cost: 1, Limit: limitSpec{c.ipBudget, ipWindow}.rateLimit(), What: "per-IP request budget"}
	if r.cred == nil || r.ep.uid.limit == 0 {
		return []rest.Budget{ip}
	}
	return []rest.Budget{
		{Key: uidKey(r), Cost: 1, Limit: r.ep.uid.rateLimit(), What: "request budget of " + r.ep.name},
		ip,
	}
}

// envelope is every answer of the v5 API.
type envelope struct {
	RetCode *int            `json:"retCode"`
	RetMsg  string          `json:"retMsg"`
	Result  json.RawMessage `json:"result"`
	Time    int64           `json:"time"`
}

// do sends the call and returns the `result` of a successful answer. A
// 10002 answer (timestamp outside the receive window) resynchronizes the
// clock offset; a read is then sent once more, a write is not (Bybit
// refused it before acting on it, so the caller may send it again). Reads
// are retried up to rest.ReadRetries more times on connection errors,
// 5xx and Bybit's server-side codes; writes never are. Errors are
// *exgate.Error, wrapping the *apiError when Bybit answered.
func (c *client) do(ctx context.Context, r request) ([]byte, error) {
	var result []byte
	resynced := false
	err := c.Retry(ctx, r.ep.write, retryable, func() error {
		var err error
		result, err = c.once(ctx, r)
		if ae, ok := errors.AsType[*apiError](err); ok && ae.code == codeTimestamp && !resynced {
			resynced = true
			c.Log.WarnContext(ctx, "bybit timestamp refused; resynchronizing clock", "endpoint", r.ep.name, "msg", ae.msg)
			if err := c.resync(ctx); err != nil {
				c.Log.ErrorContext(ctx, "bybit clock offset not learned", "err", err)
			}
			if !r.ep.write {
				return rest.ErrAgain
			}
			return &exgate.Error{Code: exgate.CodeExchangeUnavailable, RetryAfter: time.Second,
				Detail: "bybit refused the " + r.ep.name + " request's timestamp (not executed); the clock was resynchronized, send it again", Err: err}
		}
		return err
	})
	if err != nil {
		return nil, c.classify(r.ep, err)
	}
	return result, nil
}

// retryable reports whether a failed read may be sent again.
func retryable(err error) bool {
	if _, ok := errors.AsType[*rest.TransportError](err); ok {
		return true
	}
	if ae, ok := errors.AsType[*apiError](err); ok {
		return ae.status >= 500 || serverCodes[ae.code]
	}
	return false
}

// once paces, signs and sends the call one time.
func (c *client) once(ctx context.Context, r request) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, &rest.TransportError{Exchange: Name, Err: err}
	}
	if err := c.Pacer().Take(ctx, c.costs(r)...); err != nil {
		return nil, err
	}
	query := r.params.Encode()
	u := c.BaseURL + r.ep.path
	if query != "" {
		u += "?" + query
	}
	var bodyReader io.Reader
	if r.body != nil {
		bodyReader = strings.NewReader(string(r.body))
	}
	req, err := http.NewRequestWithContext(ctx, r.ep.method, u, bodyReader)
	if err != nil {
		return nil, &rest.TransportError{Exchange: Name, Err: err}
	}
	req.Header.Set("Accept", "application/json")
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.ep.private {
		if r.cred == nil {
			return nil, &exgate.Error{Code: exgate.CodeInternal, Detail: "bybit: private call without a credential"}
		}
		payload := query
		if r.ep.method == http.MethodPost {
			payload = string(r.body)
		}
		ts := strconv.FormatInt(c.serverNow().UnixMilli(), 10)
		recv := strconv.FormatInt(c.recvWindow.Milliseconds(), 10)
		req.Header.Set("X-BAPI-API-KEY", r.cred.Key)
		req.Header.Set("X-BAPI-TIMESTAMP", ts)
		req.Header.Set("X-BAPI-RECV-WINDOW", recv)
		req.Header.Set("X-BAPI-SIGN", sign(r.cred.Secret, ts, r.cred.Key, recv, payload))
	}
	resp, err := rest.Send(c.HTTP, Name, req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := rest.ReadAnswer(resp, maxBody)
	if err != nil {
		return nil, rest.ReadError(Name, r.ep.name, err)
	}
	if r.cred != nil {
		c.observe(ctx, r, resp.Header)
	}
	if resp.StatusCode == http.StatusForbidden {
		// The IP ban ("access too frequent"), a GET with a body, or a
		// country Bybit does not serve: stop every call from here
		// rather than prolong a ban.
		ae := &apiError{status: resp.StatusCode, msg: strings.TrimSpace(rest.Truncate(data))}
		c.pause(ctx, ipKey, ipBanPause, "bybit answered 403 (IP ban or refused address); pausing every call", ae)
		return nil, ae
	}
	var env envelope
	if resp.StatusCode != http.StatusOK {
		ae := &apiError{status: resp.StatusCode, msg: http.StatusText(resp.StatusCode)}
		if json.Unmarshal(data, &env) == nil && env.RetCode != nil {
			ae.code, ae.msg = *env.RetCode, env.RetMsg
		} else if t := strings.TrimSpace(rest.Truncate(data)); t != "" {
			ae.msg = t
		}
		if resp.StatusCode == http.StatusTooManyRequests {
			ae.retryAfter = time.Second
		}
		return nil, ae
	}
	if err := json.Unmarshal(data, &env); err != nil || env.RetCode == nil {
		return nil, badAnswer(r.ep, fmt.Errorf("no retCode in %q", rest.Truncate(data)))
	}
	if *env.RetCode != codeOK {
		ae := &apiError{status: resp.StatusCode, code: *env.RetCode, msg: strings.TrimSpace(env.RetMsg)}
		switch ae.code {
		case codeTooManyVisits:
			d := time.Second
			if reset, ok := resetTime(resp.Header); ok {
				if w := reset.Sub(c.serverNow()); w > 0 && w <= time.Hour {
					d = w
				}
			}
			ae.retryAfter = d
			if r.cred != nil {
				c.pause(ctx, uidKey(r), d, "bybit answered 10006 (too many visits); pausing the endpoint", ae)
			}
		case codeIPRateLimit:
			ae.retryAfter = ipBanPause
			c.pause(ctx, ipKey, ipBanPause, "bybit answered 10018 (IP rate limit); pausing every call", ae)
		}
		return nil, ae
	}
	return env.Result, nil
}

// pause stops calls of key for d, logging why.
func (c *client) pause(ctx context.Context, key string, d time.Duration, msg string, ae *apiError) {
	until, err := c.Pacer().Pause(ctx, key, d)
	if err != nil {
		c.Log.ErrorContext(ctx, "bybit pause not recorded", "key", key, "err", err)
		return
	}
	c.Log.WarnContext(ctx, msg, "key", key, "until", until, "answer", ae.Error())
}

// resetTime reads X-Bapi-Limit-Reset-Timestamp (ms).
func resetTime(h http.Header) (time.Time, bool) {
	v, err := strconv.ParseInt(strings.TrimSpace(h.Get("X-Bapi-Limit-Reset-Timestamp")), 10, 64)
	if err != nil || v <= 0 {
		return time.Time{}, false
	}
	return time.UnixMilli(v), true
}

// observe pauses an endpoint's per-UID budget when Bybit says none of it
// is left (X-Bapi-Limit-Status: 0) until X-Bapi-Limit-Reset-Timestamp:
// another process may use the same account. Headers that are absent (the
// public endpoints may not send them) change nothing. Source:
// https://bybit-exchange.github.io/docs/v5/rate-limit ("API Rate Limit
// Rules for VIPs": X-Bapi-Limit, X-Bapi-Limit-Status,
// X-Bapi-Limit-Reset-Timestamp).
func (c *client) observe(ctx context.Context, r request, h http.Header) {
	if strings.TrimSpace(h.Get("X-Bapi-Limit-Status")) != "0" {
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
	c.pause(ctx, uidKey(r), w, "bybit endpoint budget used up; pausing until it frees up", &apiError{status: http.StatusOK, msg: "X-Bapi-Limit-Status 0"})
}

// resync learns the clock offset from GET /v5/market/time; concurrent
// callers share one request.
func (c *client) resync(ctx context.Context) error {
	ch := c.group.DoChan("time", func() (any, error) {
		return nil, c.LearnOffset(ctx, &c.offset, c.serverMillis)
	})
	select {
	case <-ctx.Done():
		return ctx.Err()
	case res := <-ch:
		return res.Err
	}
}

// serverMillis reads GET /v5/market/time: Bybit's clock in Unix ms.
func (c *client) serverMillis(ctx context.Context) (int64, error) {
	result, err := c.once(ctx, request{ep: epTime})
	if err != nil {
		return 0, err
	}
	return parseServerTime(result)
}

// classify turns a failed call into the *exgate.Error the gateway answers
// with. For writes, anything that leaves the outcome unknown (a connection
// lost after the request was written, a 5xx, a server-side retCode) is
// EXCHANGE_TIMEOUT, never a failure: the gateway then reconciles by
// client id.
func (c *client) classify(ep endpoint, err error) *exgate.Error {
	settled, ae := rest.ClassifyAs[*apiError](err, Name, ep.name, ep.write)
	if settled != nil {
		return settled
	}
	return classifyAPI(ep, ae)
}

// classifyAPI maps one of Bybit's error answers through errorCodes.
func classifyAPI(ep endpoint, ae *apiError) *exgate.Error {
	detail := "bybit: " + ae.msg
	if ae.code != 0 {
		detail = fmt.Sprintf("bybit: %s (retCode %d)", ae.msg, ae.code)
	}
	switch {
	case ae.status == http.StatusForbidden:
		return &exgate.Error{Code: exgate.CodeExchangeUnavailable, RetryAfter: ipBanPause,
			Detail: detail + "; Bybit refused this address (its per-IP limit or region rules); the gateway stops calling it for " + ipBanPause.String(), Err: ae}
	case ae.status == http.StatusTooManyRequests || ae.code == codeTooManyVisits || ae.code == codeIPRateLimit:
		return &exgate.Error{Code: exgate.CodeExchangeUnavailable, Detail: detail, RetryAfter: max(ae.retryAfter, time.Second), Err: ae}
	case ae.status >= 500 || serverCodes[ae.code]:
		if ep.write {
			return &exgate.Error{Code: exgate.CodeExchangeTimeout, Detail: detail + "; the outcome is unknown", Err: ae}
		}
		return &exgate.Error{Code: exgate.CodeExchangeUnavailable, Detail: detail, RetryAfter: time.Second, Err: ae}
	case ae.status == http.StatusUnauthorized && errorCodes[ae.code].code == "":
		return &exgate.Error{Code: exgate.CodeExchangeAuthFailed, Detail: detail, Err: ae}
	case ae.code == codeTimestamp:
		return &exgate.Error{Code: exgate.CodeExchangeError, Detail: detail + "; the clock offset could not be corrected", Err: ae}
	case ae.code == codeOrderNotExists || ae.code == codeUTAOrderNotFound:
		return &exgate.Error{Code: exgate.CodeNotFound, Detail: detail, Err: fmt.Errorf("%w: %w", exgate.ErrNotFound, ae)}
	case ae.code == codeParam && strings.Contains(strings.ToLower(ae.msg), "symbol"):
		return &exgate.Error{Code: exgate.CodeUnknownSymbol, Detail: detail, Err: ae}
	case ae.code == 131203 && strings.Contains(strings.ToLower(ae.msg), "coin"):
		// "request parameter err: coin invalid"
		return &exgate.Error{Code: exgate.CodeInvalidParameter, Param: "asset", Detail: detail, Err: ae}
	}
	rule, ok := errorCodes[ae.code]
	if !ok {
		return &exgate.Error{Code: exgate.CodeExchangeError, Detail: detail, Err: ae}
	}
	code := rule.code
	if ep == epWithdraw && rule.withdraw != "" {
		code = rule.withdraw
	}
	return &exgate.Error{Code: code, Detail: detail + rule.detail, Param: rule.param, Err: ae}
}

// badAnswer is the error for a successful answer to ep that the adapter
// cannot read (rest.BadAnswer). After a write it means the outcome is
// unknown.
func badAnswer(ep endpoint, err error) *exgate.Error {
	return rest.BadAnswer(Name, ep.name, ep.write, err)
}

// Unreadable is badAnswer for r's endpoint: r as a rest.Request.
func (r request) Unreadable(err error) *exgate.Error { return badAnswer(r.ep, err) }
