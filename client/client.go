// Package client is the Go SDK of the exgate HTTP API: it signs requests
// the way the gateway verifies them (docs/contract.md section 2.1), sends them and
// decodes the answers into the root package's types, or into an *Error for
// an RFC 9457 problem.
//
// Every request carries a signed timestamp, which the gateway requires
// (docs/contract.md 2.1); WithTimestamps sets its clock and receive window,
// and WithLegacySigning (for a key created with
// `exgate keys create --legacy-signing`) adds none.
//
// A Client never retries. Reads may be retried by the caller; an order or a
// withdrawal whose call failed without an answer (a timeout, a dropped
// connection) may or may not have been placed, so give it a client id
// (MarketOrder.ClientOrderID, WithdrawRequest.ClientWithdrawalID): sending
// the same id again returns the first order instead of placing a second,
// and Order or Withdrawal read it back.
package client

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/exgate/exgate"
)

// DefaultTimeout bounds a whole request of the default HTTP client.
const DefaultTimeout = 30 * time.Second

// maxResponseBytes bounds the answer read into memory; the largest answer
// of the API (1000 klines) is well under 1 MiB.
const maxResponseBytes = 32 << 20

// Client calls one gateway with one client key pair and one exchange key.
// It is safe for concurrent use.
type Client struct {
	baseURL     string
	apiKey      string
	secret      string
	exchangeKey string
	httpClient  *http.Client

	// now is the clock for timestamps and Retry-After dates.
	now func() time.Time
	// legacy: no timestamp is added by itself, not even to a POST.
	legacy     bool
	recvWindow time.Duration
	// lastTimestamp keeps the timestamps this client sends strictly
	// increasing, so that two identical requests in the same millisecond
	// do not carry the same signature (the gateway refuses replays).
	lastTimestamp atomic.Int64
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sends requests through hc instead of a default client with
// a DefaultTimeout overall timeout.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) {
		if hc != nil {
			c.httpClient = hc
		}
	}
}

// WithTimestamps sets the gateway's replay protection that every request
// carries: a signed timestamp parameter (milliseconds since the Unix epoch, from now,
// or time.Now when now is nil) and, when recvWindow is positive, a
// recvWindow parameter in milliseconds (the gateway's default is 5 s, its
// maximum 60 s). Timestamps from one Client strictly increase: a request
// in the same millisecond as the previous one carries the previous
// timestamp plus one. Parameters named timestamp or recvWindow given to Do
// are sent as given instead.
func WithTimestamps(now func() time.Time, recvWindow time.Duration) Option {
	return func(c *Client) {
		if now != nil {
			c.now = now
		}
		c.recvWindow = recvWindow
	}
}

// WithLegacySigning signs requests exactly as the interface spec
// describes, without adding a timestamp even to a POST, for a client key
// created with `exgate keys create --legacy-signing`. A captured request
// signed so can be replayed; prefer the default.
func WithLegacySigning() Option {
	return func(c *Client) { c.legacy = true }
}

// New returns a Client for the gateway at baseURL (its root, such as
// http://127.0.0.1:8080; a trailing /v1 is dropped since every path carries
// it), signing with the client key pair apiKey/secretKey and naming the
// exchange credential exchangeKey in X-API-EXCHANGE-KEY (omitted when
// empty).
func New(baseURL, apiKey, secretKey, exchangeKey string, opts ...Option) *Client {
	base := strings.TrimRight(baseURL, "/")
	base = strings.TrimSuffix(base, "/v1")
	c := &Client{
		baseURL:     base,
		apiKey:      apiKey,
		secret:      secretKey,
		exchangeKey: exchangeKey,
		httpClient:  &http.Client{Timeout: DefaultTimeout},
		now:         time.Now,
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

// String describes the client without its secret.
func (c *Client) String() string {
	return fmt.Sprintf("exgate client %s (api key %s, exchange key %q)", c.baseURL, c.apiKey, c.exchangeKey)
}

// GoString is String, so that %#v does not print the secret either.
func (c *Client) GoString() string { return c.String() }

// Param is one request parameter, sent in the order given.
type Param struct {
	Name, Value string
}

// Sign returns the signature of a parameter string: the lower-case hex
// HMAC-SHA256 of paramString keyed with the raw bytes of secret.
func Sign(secret, paramString string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(paramString))
	return hex.EncodeToString(mac.Sum(nil))
}

// numberParams are the parameters whose decimal values Do sends as JSON
// numbers in a body (the spec's Float64 inputs).
var numberParams = map[string]bool{"quantity": true, "amount": true, "price": true}

// boolParams are the parameters Do sends as JSON booleans in a body when
// their value is true or false.
var boolParams = map[string]bool{"postOnly": true, "test": true}

// Do signs and sends one request and returns the answer's status and body.
// path is appended to the base URL (for example "/v1/order/market") and
// must not hold a query.
//
// For GET and HEAD the parameters go in the query string in the order
// given, percent-encoded; the signature covers the pairs name=value
// unencoded, joined by &. For every other method they go in a JSON object
// in the order given. Each value is a JSON string, except that a value of
// a parameter named quantity, amount or price that is a valid JSON number
// (such as 0.1 or 1e-3, but not .5 or 01) is sent as that number,
// literally, and postOnly or test of true or false as a boolean; the
// signature covers name=value with the value as given either way. The
// signature is added last, as the signature parameter.
//
// With WithTimestamps, timestamp and recvWindow follow the given
// parameters.
//
// err is an *Error when the gateway answered with a status outside 2xx (the
// status and body are returned too), and another error when no answer
// arrived; the outcome of an order or withdrawal is then unknown.
func (c *Client) Do(ctx context.Context, method, path string, params []Param) (status int, body []byte, err error) {
	method = strings.ToUpper(method)
	if strings.ContainsAny(path, "?#") {
		return 0, nil, fmt.Errorf("exgate: %s %s: the path must not hold a query; pass parameters instead", method, path)
	}
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	params = c.withTimestamp(params)

	var sig strings.Builder
	for i, p := range params {
		if i > 0 {
			sig.WriteByte('&')
		}
		sig.WriteString(p.Name)
		sig.WriteByte('=')
		sig.WriteString(p.Value)
	}
	signature := Sign(c.secret, sig.String())

	target := c.baseURL + path
	var reqBody io.Reader
	query := method == http.MethodGet || method == http.MethodHead
	if query {
		var q strings.Builder
		for _, p := range params {
			q.WriteString(url.QueryEscape(p.Name))
			q.WriteByte('=')
			q.WriteString(url.QueryEscape(p.Value))
			q.WriteByte('&')
		}
		q.WriteString("signature=")
		q.WriteString(signature)
		target += "?" + q.String()
	} else {
		b, err := jsonBody(params, signature)
		if err != nil {
			return 0, nil, fmt.Errorf("exgate: %s %s: %w", method, path, err)
		}
		reqBody = bytes.NewReader(b)
	}

	req, err := http.NewRequestWithContext(ctx, method, target, reqBody)
	if err != nil {
		return 0, nil, fmt.Errorf("exgate: %s %s: %w", method, path, err)
	}
	req.Header.Set("X-API-KEY", c.apiKey)
	if c.exchangeKey != "" {
		req.Header.Set("X-API-EXCHANGE-KEY", c.exchangeKey)
	}
	req.Header.Set("Accept", "application/json, application/problem+json")
	if !query {
		req.Header.Set("Content-Type", "application/json")
	}

	resp, err := c.httpClient.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("exgate: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return resp.StatusCode, nil, fmt.Errorf("exgate: %s %s: read answer: %w", method, path, err)
	}
	if len(body) > maxResponseBytes {
		return resp.StatusCode, nil, fmt.Errorf("exgate: %s %s: answer larger than %d bytes", method, path, maxResponseBytes)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, body, parseError(resp.StatusCode, resp.Header, body, c.now())
	}
	return resp.StatusCode, body, nil
}

// withTimestamp appends timestamp and recvWindow when the caller did not:
// the gateway requires a timestamp on every request (docs/contract.md 2.1),
// unless the key signs the legacy way (WithLegacySigning).
func (c *Client) withTimestamp(params []Param) []Param {
	if c.legacy {
		return params
	}
	haveTS, haveWindow := false, false
	for _, p := range params {
		switch p.Name {
		case "timestamp":
			haveTS = true
		case "recvWindow":
			haveWindow = true
		}
	}
	out := append(make([]Param, 0, len(params)+2), params...)
	if !haveTS {
		out = append(out, Param{"timestamp", strconv.FormatInt(c.nextTimestamp(), 10)})
	}
	if !haveWindow && c.recvWindow > 0 {
		ms := max(c.recvWindow.Milliseconds(), 1)
		out = append(out, Param{"recvWindow", strconv.FormatInt(ms, 10)})
	}
	return out
}

// nextTimestamp returns the clock in milliseconds, or one more than the
// last timestamp sent when the clock has not moved past it. The clock is
// read after the last timestamp, so that clients sharing a clock that
// never repeats a reading (the clients of one key on several gateway
// instances) never send the same timestamp: a reading taken before
// another request's could otherwise be raised to a value the clock
// gives another client next.
func (c *Client) nextTimestamp() int64 {
	for {
		last := c.lastTimestamp.Load()
		ts := max(c.now().UnixMilli(), last+1)
		if c.lastTimestamp.CompareAndSwap(last, ts) {
			return ts
		}
	}
}

// jsonBody writes params and the signature as one JSON object, members in
// order.
func jsonBody(params []Param, signature string) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for _, p := range params {
		if !utf8.ValidString(p.Name) || !utf8.ValidString(p.Value) {
			return nil, fmt.Errorf("parameter %q is not valid UTF-8", p.Name)
		}
		writeJSONString(&b, p.Name)
		b.WriteByte(':')
		if numberParams[p.Name] && isJSONNumber(p.Value) ||
			boolParams[p.Name] && (p.Value == "true" || p.Value == "false") {
			b.WriteString(p.Value)
		} else {
			writeJSONString(&b, p.Value)
		}
		b.WriteByte(',')
	}
	b.WriteString(`"signature":`)
	writeJSONString(&b, signature)
	b.WriteByte('}')
	return b.Bytes(), nil
}

func writeJSONString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)       // a valid UTF-8 string always encodes
	b.Truncate(b.Len() - 1) // Encode adds a newline
}

// isJSONNumber reports whether s is a number in JSON's grammar (RFC 8259
// section 6): -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?.
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		start := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == start {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == start {
			return false
		}
	}
	return i == len(s)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// call sends a request and decodes a 2xx JSON answer into out.
func (c *Client) call(ctx context.Context, method, path string, params []Param, out any) error {
	_, body, err := c.Do(ctx, method, path, params)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("exgate: %s %s: decode answer: %w", method, path, err)
	}
	return nil
}

// Error is an answer of the gateway with a status outside 2xx, decoded
// from its RFC 9457 problem body when it has one. Callers test for it with
// errors.AsType[*client.Error](err) and branch on Code, which is stable
// (exgate.Code values).
type Error struct {
	// Status is the HTTP status of the answer.
	Status int
	// Type, Title, Detail, Code, Param and RequestID are the problem's
	// members; Title is the status text when the body is not a problem.
	Type, Title, Detail, Code, Param, RequestID string
	// RetryAfter is the Retry-After header (seconds or an HTTP date), zero
	// when absent; set on 429 and 503 answers.
	RetryAfter time.Duration
	// ID names the order, withdrawal or transfer a 504 EXCHANGE_TIMEOUT
	// answer is about, and Order, Withdrawal or Transfer is that record as
	// the gateway knows it (PENDING, pending) while it reconciles the
	// outcome; empty when the answer names no record. Read it again with
	// Client.Order, Client.Withdrawal or Client.Transfer.
	ID         string
	Order      *exgate.Order
	Withdrawal *exgate.Withdrawal
	Transfer   *exgate.Transfer
	// Limit, Value and Max are a RISK_LIMIT_EXCEEDED refusal's members
	// (the limit, what the request would bring it to, the limit's value;
	// Max empty for symbols), Reason a TRADING_HALTED refusal's
	// (docs/risk.md).
	Limit, Value, Max, Reason string
	// Body is the answer's body as received.
	Body []byte
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "exgate: %d", e.Status)
	if e.Code != "" {
		b.WriteString(" " + e.Code)
	} else if e.Title != "" {
		b.WriteString(" " + e.Title)
	}
	if e.Detail != "" {
		b.WriteString(": " + e.Detail)
	}
	if e.Param != "" {
		b.WriteString(" (param " + e.Param + ")")
	}
	switch {
	case e.Order != nil:
		fmt.Fprintf(&b, " (order %s %s)", e.Order.ID, e.Order.Status)
	case e.Withdrawal != nil:
		fmt.Fprintf(&b, " (withdrawal %s %s)", e.Withdrawal.ID, e.Withdrawal.Status)
	case e.Transfer != nil:
		fmt.Fprintf(&b, " (transfer %s %s)", e.Transfer.ID, e.Transfer.Status)
	case e.ID != "":
		fmt.Fprintf(&b, " (record %s)", e.ID)
	}
	return b.String()
}

// problemBody is the wire form of a problem. The records are decoded on
// their own, so that a malformed one does not hide the rest.
type problemBody struct {
	Type       string          `json:"type"`
	Title      string          `json:"title"`
	Detail     string          `json:"detail"`
	Code       string          `json:"code"`
	Param      string          `json:"param"`
	RequestID  string          `json:"requestId"`
	ID         string          `json:"id"`
	Order      json.RawMessage `json:"order"`
	Withdrawal json.RawMessage `json:"withdrawal"`
	Transfer   json.RawMessage `json:"transfer"`
	Limit      string          `json:"limit"`
	Value      string          `json:"value"`
	Max        string          `json:"max"`
	Reason     string          `json:"reason"`
}

// parseError builds the *Error of a non-2xx answer. Status is the HTTP
// status, whatever the body says. A body that is not a JSON problem leaves
// the problem fields empty; Body keeps it.
func parseError(status int, header http.Header, body []byte, now time.Time) *Error {
	e := &Error{Status: status, Body: body, RequestID: header.Get("X-Request-ID")}
	var p problemBody
	if json.Unmarshal(body, &p) == nil {
		e.Type, e.Title, e.Detail, e.Code, e.Param, e.ID = p.Type, p.Title, p.Detail, p.Code, p.Param, p.ID
		e.Limit, e.Value, e.Max, e.Reason = p.Limit, p.Value, p.Max, p.Reason
		if p.RequestID != "" {
			e.RequestID = p.RequestID
		}
		if len(p.Order) > 0 && string(p.Order) != "null" {
			var o exgate.Order
			if json.Unmarshal(p.Order, &o) == nil {
				e.Order = &o
			}
		}
		if len(p.Withdrawal) > 0 && string(p.Withdrawal) != "null" {
			var w exgate.Withdrawal
			if json.Unmarshal(p.Withdrawal, &w) == nil {
				e.Withdrawal = &w
			}
		}
		if len(p.Transfer) > 0 && string(p.Transfer) != "null" {
			var t exgate.Transfer
			if json.Unmarshal(p.Transfer, &t) == nil {
				e.Transfer = &t
			}
		}
	}
	if e.Title == "" {
		e.Title = http.StatusText(status)
	}
	e.RetryAfter = parseRetryAfter(header.Get("Retry-After"), now)
	return e
}

// maxRetryAfter bounds a believable Retry-After; larger values are ignored.
const maxRetryAfter = 365 * 24 * time.Hour

// parseRetryAfter reads delay-seconds or an HTTP date (RFC 9110 section
// 10.2.3); anything else, or a date in the past, is zero.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 || secs > int64(maxRetryAfter/time.Second) {
			return 0
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}
