package kraken

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

// Nonces hands out Kraken nonces; localstate.Nonces (in process) and the
// redis package's nonces (shared by instances) implement it.
type Nonces interface {
	// Next returns a value greater than every value it returned before for
	// key and at least floor. The adapter passes the Kraken API key as key
	// and the current time in microseconds since the Unix epoch as floor.
	Next(ctx context.Context, key string, floor int64) (int64, error)
}

// KeyLocks are locks shared by instances; the redis package's Locks
// implements it.
type KeyLocks interface {
	// Lock takes key's lock for at most ttl, waiting until ctx is done
	// while another holder has it. unlock releases it.
	Lock(ctx context.Context, key string, ttl time.Duration) (unlock func(), err error)
}

// sign computes Kraken's API-Sign header: base64 of HMAC-SHA512, keyed with
// the base64-decoded API secret, over the URI path followed by
// SHA256(nonce + body), where body is the exact POST body sent.
func sign(secret, path, nonce, body string) (string, error) {
	key, err := base64.StdEncoding.DecodeString(secret)
	if err != nil {
		return "", fmt.Errorf("kraken: API secret is not base64: %w", err)
	}
	sum := sha256.Sum256([]byte(nonce + body))
	mac := hmac.New(sha512.New, key)
	mac.Write([]byte(path))
	mac.Write(sum[:])
	return base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// callKind says what a call does, which decides retries and how an
// ambiguous failure is reported.
type callKind int

const (
	// kindRead is idempotent: retried on connection errors, 5xx and nonce
	// refusals.
	kindRead callKind = iota
	// kindOrder places an order: never retried; an ambiguous failure is
	// EXCHANGE_TIMEOUT.
	kindOrder
	// kindWithdraw submits a withdrawal: as kindOrder.
	kindWithdraw
	// kindCancel cancels an order: as kindOrder (never retried, an
	// ambiguous failure is EXCHANGE_TIMEOUT), paced on the trading
	// counter.
	kindCancel
	// kindValidate is AddOrder with validate=true: nothing is placed, so
	// it is retried as a read, but it is paced on the trading counter.
	kindValidate
)

func (k callKind) mutation() bool { return k != kindRead && k != kindValidate }

// trading reports whether the call counts against Kraken's per-pair
// trading counter instead of the REST call counter.
func (k callKind) trading() bool { return k == kindOrder || k == kindCancel || k == kindValidate }

// callCost is what a private call adds to the REST call counter: 2 for
// the ledger and trade history calls, 1 for the others. Source:
// docs.kraken.com "Spot REST API rate limits".
func callCost(method string) int {
	switch method {
	case "Ledgers", "QueryLedgers", "TradesHistory":
		return 2
	}
	return 1
}

// maxBody bounds the size of an answer the client reads (AssetPairs is
// the largest, about 1 MB).
const maxBody = 16 << 20

// publicPaceKey is the limiter key of public calls (Kraken limits them per
// IP, that is per gateway instance).
const publicPaceKey = "kraken:public"

// client sends requests to Kraken's REST API.
type client struct {
	rest.Transport
	nonces Nonces
	tier   Tier
	locks  keyLocks
	shared KeyLocks // nil: calls are serialized in this process only
}

// statusError is an answer with an HTTP status other than 200 (Kraken
// answers its own errors with 200; other statuses come from its edge).
type statusError struct {
	status     int
	retryAfter time.Duration
	body       string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("kraken: HTTP %d: %s", e.status, e.body)
}

// apiError is Kraken's error envelope.
type apiError struct{ messages []string }

func (e *apiError) Error() string { return "kraken: " + strings.Join(e.messages, ", ") }

// decodeError is an answer that could not be parsed.
type decodeError struct{ err error }

func (e *decodeError) Error() string { return "kraken: unparseable answer: " + e.err.Error() }
func (e *decodeError) Unwrap() error { return e.err }

// envelope is Kraken's answer: {"error":[...],"result":...}.
type envelope struct {
	Error  []string        `json:"error"`
	Result json.RawMessage `json:"result"`
}

// parseEnvelope returns the result of a Kraken answer, or an *apiError
// when it carries errors. Warnings (W...) alone do not fail the call.
func parseEnvelope(body []byte) (json.RawMessage, error) {
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, &decodeError{err}
	}
	var errs []string
	for _, m := range env.Error {
		if !strings.HasPrefix(m, "W") {
			errs = append(errs, m)
		}
	}
	if len(errs) > 0 {
		return nil, &apiError{messages: errs}
	}
	if len(env.Result) == 0 || string(env.Result) == "null" {
		return nil, &decodeError{errors.New("no result")}
	}
	return env.Result, nil
}

// public calls GET /0/public/<method> and decodes the result into out.
func (c *client) public(ctx context.Context, method string, q url.Values, out any) error {
	u := c.BaseURL + "/0/public/" + method
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	err := c.Retry(ctx, false, retryable, func() error {
		if err := c.Pacer().Take(ctx, rest.Budget{Key: publicPaceKey, Cost: 1, Limit: publicLimit, What: "public call budget"}); err != nil {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		req.Header.Set("User-Agent", userAgent)
		body, err := c.do(req)
		if err != nil {
			return err
		}
		return decodeResult(body, out)
	})
	if err != nil {
		return c.classify(ctx, kindRead, publicPaceKey, publicLimit, method, err)
	}
	return nil
}

// private calls POST /0/private/<method> with form (nonce added) signed
// with cred, and decodes the result into out. pair names the pair of an
// AddOrder for the trading counter. Calls on one API key are serialized:
// the nonce is taken and the request sent and answered under a per-key
// lock, so a smaller nonce never reaches Kraken after a larger one from
// this process.
func (c *client) private(ctx context.Context, cred exgate.Credential, method string, form url.Values, kind callKind, pair string, out any) error {
	if cred.Key == "" || cred.Secret == "" {
		return &exgate.Error{Code: exgate.CodeExchangeAuthFailed, Detail: "the exchange credential has no Kraken API key or secret"}
	}
	if _, err := base64.StdEncoding.DecodeString(cred.Secret); err != nil {
		return &exgate.Error{Code: exgate.CodeExchangeAuthFailed, Detail: "the Kraken API secret is not base64", Err: err}
	}
	paceKey, limit, cost := "kraken:rest:"+cred.Key, restCounter[c.tier], callCost(method)
	if kind.trading() {
		paceKey, limit, cost = "kraken:trade:"+cred.Key+":"+pair, tradingCounter[c.tier], 1
	}
	path := "/0/private/" + method
	err := c.Retry(ctx, kind.mutation(), retryable, func() error {
		if err := c.Pacer().Take(ctx, rest.Budget{Key: paceKey, Cost: cost, Limit: limit, What: "call counter of this key"}); err != nil {
			return err
		}
		unlock, err := c.locks.lock(ctx, cred.Key)
		if err != nil {
			return &rest.TransportError{Exchange: "kraken", Err: err}
		}
		defer unlock()
		if c.shared != nil {
			// Held from taking the nonce until the answer is read, so
			// that Kraken has processed this nonce before any instance
			// sends a larger one.
			unlockShared, err := c.shared.Lock(ctx, "kraken:"+cred.Key, c.lockTTL(ctx))
			if err != nil {
				return &exgate.Error{Code: exgate.CodeExchangeUnavailable, RetryAfter: time.Second, Err: err,
					Detail: "kraken: another instance is using this API key and did not finish in time; nothing was sent"}
			}
			defer unlockShared()
		}
		nonce, err := c.nonces.Next(ctx, "kraken:"+cred.Key, c.Now().UnixMicro())
		if err != nil {
			return &exgate.Error{Code: exgate.CodeExchangeUnavailable, Detail: "kraken: cannot allocate a nonce; nothing was sent", RetryAfter: time.Second, Err: err}
		}
		f := url.Values{}
		for k, v := range form {
			f[k] = v
		}
		ns := strconv.FormatInt(nonce, 10)
		f.Set("nonce", ns)
		body := f.Encode()
		sig, err := sign(cred.Secret, path, ns, body)
		if err != nil {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.BaseURL+path, strings.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("API-Key", cred.Key)
		req.Header.Set("API-Sign", sig)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
		req.Header.Set("User-Agent", userAgent)
		answer, err := c.do(req)
		if err != nil {
			return err
		}
		return decodeResult(answer, out)
	})
	if err != nil {
		return c.classify(ctx, kind, paceKey, limit, method, err)
	}
	return nil
}

// userAgent is sent on every request, as Kraken asks.
const userAgent = "exgate-kraken/1"

// decodeResult parses the envelope and decodes the result into out.
func decodeResult(body []byte, out any) error {
	res, err := parseEnvelope(body)
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(res, out); err != nil {
		return &decodeError{err}
	}
	return nil
}

// do sends req and returns the body of a 200 answer.
func (c *client) do(req *http.Request) ([]byte, error) {
	resp, err := rest.Send(c.HTTP, "kraken", req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := rest.ReadAnswer(resp, maxBody)
	if errors.Is(err, rest.ErrAnswerTooLarge) {
		return nil, &decodeError{err}
	}
	if err != nil {
		return nil, rest.ReadError("kraken", req.URL.Path, err)
	}
	if resp.StatusCode != http.StatusOK {
		se := &statusError{status: resp.StatusCode, body: string(bytes.TrimSpace(body[:min(len(body), 200)]))}
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			se.retryAfter = time.Duration(s) * time.Second
		}
		return nil, se
	}
	return body, nil
}

// retryable reports whether a read may be sent again after err.
func retryable(err error) bool {
	var te *rest.TransportError
	var se *statusError
	var ae *apiError
	switch {
	case errors.As(err, &te):
		return true
	case errors.As(err, &se):
		return se.status >= 500
	case errors.As(err, &ae):
		return strings.HasPrefix(ae.messages[0], "EAPI:Invalid nonce")
	}
	return false
}

// classify turns a failed call into an *exgate.Error. An order or
// withdrawal whose outcome is unknown (no answer after the request was
// written, 5xx, unparseable answer, a Kraken internal error) is
// EXCHANGE_TIMEOUT. Rate-limit answers pause paceKey.
func (c *client) classify(ctx context.Context, kind callKind, paceKey string, limit exgate.RateLimit, method string, err error) error {
	if xe, ok := rest.Classify(err, method, kind.mutation()); ok {
		return xe
	}
	var (
		se *statusError
		ae *apiError
		de *decodeError
	)
	switch {
	case errors.As(err, &se):
		if se.status == http.StatusTooManyRequests {
			ra := se.retryAfter
			if ra <= 0 {
				ra = 5 * time.Second
			}
			c.pause(ctx, paceKey, ra)
			return &exgate.Error{Code: exgate.CodeExchangeUnavailable, Detail: "Kraken answered HTTP 429 (too many requests)", RetryAfter: ra, Err: err}
		}
		if se.status >= 500 {
			if kind.mutation() {
				return &exgate.Error{Code: exgate.CodeExchangeTimeout, Detail: fmt.Sprintf("Kraken answered %s with HTTP %d; the outcome is unknown", method, se.status), Err: err}
			}
			return &exgate.Error{Code: exgate.CodeExchangeUnavailable, Detail: fmt.Sprintf("Kraken answered HTTP %d", se.status), RetryAfter: max(se.retryAfter, time.Second), Err: err}
		}
		return &exgate.Error{Code: exgate.CodeExchangeError, Detail: fmt.Sprintf("Kraken answered HTTP %d", se.status), Err: err}
	case errors.As(err, &de):
		if kind.mutation() {
			return &exgate.Error{Code: exgate.CodeExchangeTimeout, Detail: "unparseable answer from Kraken to " + method + "; the outcome is unknown", Err: err}
		}
		return &exgate.Error{Code: exgate.CodeExchangeError, Detail: "unparseable answer from Kraken to " + method, Err: err}
	case errors.As(err, &ae):
		return c.apiErrorToExgate(ctx, kind, paceKey, limit, method, ae)
	}
	if ctx.Err() != nil {
		return &exgate.Error{Code: exgate.CodeExchangeUnavailable, Detail: "kraken: " + method + " was not sent in time", Err: err}
	}
	return &exgate.Error{Code: exgate.CodeExchangeError, Detail: "kraken: " + method + " failed", Err: err}
}

// apiErrorToExgate maps Kraken's error strings by errorRules.
func (c *client) apiErrorToExgate(ctx context.Context, kind callKind, paceKey string, limit exgate.RateLimit, method string, ae *apiError) error {
	msg := ae.messages[0]
	rule, ok := matchError(msg)
	if !ok {
		return &exgate.Error{Code: exgate.CodeExchangeError, Detail: "Kraken: " + msg, Err: ae}
	}
	if rule.ambiguous && kind.mutation() {
		return &exgate.Error{Code: exgate.CodeExchangeTimeout, Detail: "Kraken answered " + method + " with " + msg + "; the outcome is unknown", Err: ae}
	}
	code := rule.code
	switch {
	case (kind == kindOrder || kind == kindValidate) && rule.orderCode != "":
		code = rule.orderCode
	case kind == kindWithdraw && rule.withdrawCode != "":
		code = rule.withdrawCode
	}
	xe := &exgate.Error{Code: code, Param: rule.param, Detail: rule.detail + " (" + msg + ")", Err: ae}
	if code == exgate.CodeNotFound {
		xe.Err = fmt.Errorf("%w: %w", exgate.ErrNotFound, ae)
	}
	backoff := rule.backoff
	if rule.drain > 0 && limit.Rate > 0 {
		backoff = time.Duration(rule.drain) * limit.Period / time.Duration(limit.Rate)
	}
	if t := throttledUntil(msg); !t.IsZero() {
		backoff = max(t.Sub(c.Now()), time.Second)
	}
	if backoff > 0 {
		xe.RetryAfter = backoff
		if !rule.noPause {
			c.pause(ctx, paceKey, backoff)
		}
	}
	return xe
}

// pause stops calls for key for d; a failure is only logged (the answer
// already says to back off).
func (c *client) pause(ctx context.Context, key string, d time.Duration) {
	if err := c.Limiter.Pause(context.WithoutCancel(ctx), key, c.Now().Add(d)); err != nil {
		c.Log.WarnContext(ctx, "kraken: cannot record pause", "key", key, "err", err)
	}
}

// keyLocks serializes private calls per Kraken API key.
// lockTTL is how long the shared lock of a call with ctx may be held: as
// long as the call can last (its deadline, or the HTTP client's timeout)
// and a margin. An instance that dies holding it blocks the key's calls on
// the other instances for at most that long.
func (c *client) lockTTL(ctx context.Context) time.Duration {
	const margin = 2 * time.Second
	limit := c.HTTP.Timeout
	if limit <= 0 {
		limit = 30 * time.Second
	}
	if deadline, ok := ctx.Deadline(); ok {
		limit = min(limit, time.Until(deadline))
	}
	return max(limit, 0) + margin
}

type keyLocks struct {
	mu sync.Mutex
	m  map[string]chan struct{}
}

// lock takes key's lock, giving up when ctx is done.
func (l *keyLocks) lock(ctx context.Context, key string) (unlock func(), err error) {
	l.mu.Lock()
	if l.m == nil {
		l.m = make(map[string]chan struct{})
	}
	ch := l.m[key]
	if ch == nil {
		ch = make(chan struct{}, 1)
		l.m[key] = ch
	}
	l.mu.Unlock()
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
