package httpapi

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"sync"
	"time"

	"github.com/exgate/exgate"
)

// Replay window rules (docs/contract.md 2.1).
const (
	defaultRecvWindow = 5000 * time.Millisecond
	maxRecvWindow     = 60000 * time.Millisecond
	// clockSkew is how far in the future a client's timestamp may be.
	clockSkew = time.Second
	// secondsLike: a timestamp below this (11 digits or fewer, before
	// 1973 in milliseconds) is most likely in seconds.
	secondsLike = 100_000_000_000
)

// keyStore is what authentication needs from the store.
type keyStore interface {
	ClientKey(ctx context.Context, apiKey string) (exgate.ClientKey, error)
	Credential(ctx context.Context, apiKey, name string) (exgate.Credential, error)
}

// replayGuard remembers signatures inside their window, each bound to the
// route it was first seen on (docs/contract.md 2.1). Claim records key for
// owner (a client key) bound to route and reports whether this is its
// first use; a key already claimed is not, and boundTo names the route it
// is bound to. Claim fails with exgate.ErrOverQuota, recording nothing,
// when owner already holds quota live keys. Release gives a claim back on
// its own route, keeping the binding: a request refused by the rate limit
// may be sent again as itself, and only as itself.
type replayGuard interface {
	Claim(ctx context.Context, owner, key, route string, expiry time.Time, quota int) (first bool, boundTo string, err error)
	Release(ctx context.Context, owner, key, route string) error
}

// keyCache keeps client keys and credentials for at most ttl, so that the
// hot path does not reach the store on every request while a key added or
// revoked with the CLI still takes effect within a second.
type keyCache struct {
	store keyStore
	ttl   time.Duration
	now   func() time.Time

	mu    sync.Mutex
	keys  map[string]cachedKey
	creds map[[2]string]cachedCred
}

type cachedKey struct {
	key     exgate.ClientKey
	mac     *macPool
	err     error
	fetched time.Time
}

type cachedCred struct {
	cred    exgate.Credential
	err     error
	fetched time.Time
}

// maxCacheEntries bounds the caches; they are cleared when full.
const maxCacheEntries = 100_000

func newKeyCache(store keyStore, ttl time.Duration, now func() time.Time) *keyCache {
	return &keyCache{store: store, ttl: ttl, now: now, keys: map[string]cachedKey{}, creds: map[[2]string]cachedCred{}}
}

// clientKey returns the key and a pool of HMAC states keyed with its secret.
// Not-found answers are cached too, so a flood of unknown keys does not
// reach the store more than once per ttl per key.
func (c *keyCache) clientKey(ctx context.Context, apiKey string) (exgate.ClientKey, *macPool, error) {
	now := c.now()
	c.mu.Lock()
	e, ok := c.keys[apiKey]
	c.mu.Unlock()
	if ok && now.Sub(e.fetched) < c.ttl {
		return e.key, e.mac, e.err
	}
	k, err := c.store.ClientKey(ctx, apiKey)
	if err != nil && !errors.Is(err, exgate.ErrNotFound) {
		return k, nil, err // store trouble is not cached
	}
	prev := e
	e = cachedKey{key: k, err: err, fetched: now}
	if err == nil {
		if ok && prev.mac != nil && prev.key.Secret == k.Secret {
			e.mac = prev.mac // keep the warmed HMAC states
		} else {
			e.mac = newMACPool([]byte(k.Secret))
		}
	}
	c.mu.Lock()
	if len(c.keys) >= maxCacheEntries {
		clear(c.keys)
	}
	c.keys[apiKey] = e
	c.mu.Unlock()
	return e.key, e.mac, e.err
}

func (c *keyCache) credential(ctx context.Context, apiKey, name string) (exgate.Credential, error) {
	now := c.now()
	id := [2]string{apiKey, name}
	c.mu.Lock()
	e, ok := c.creds[id]
	c.mu.Unlock()
	if ok && now.Sub(e.fetched) < c.ttl {
		return e.cred, e.err
	}
	cred, err := c.store.Credential(ctx, apiKey, name)
	if err != nil && !errors.Is(err, exgate.ErrNotFound) {
		return cred, err
	}
	c.mu.Lock()
	if len(c.creds) >= maxCacheEntries {
		clear(c.creds)
	}
	c.creds[id] = cachedCred{cred: cred, err: err, fetched: now}
	c.mu.Unlock()
	return cred, err
}

// macPool reuses HMAC-SHA256 states keyed with one secret: keying HMAC
// costs two hash blocks and several allocations per request otherwise.
type macPool struct{ pool sync.Pool }

// macState is one keyed HMAC with scratch space, so that a verification
// allocates nothing.
type macState struct {
	h   hash.Hash
	buf []byte
	sum [sha256.Size]byte
}

func newMACPool(secret []byte) *macPool {
	p := &macPool{}
	key := append([]byte(nil), secret...)
	p.pool.New = func() any { return &macState{h: hmac.New(sha256.New, key), buf: make([]byte, 0, 512)} }
	return p
}

// verify reports whether sig is the HMAC of msg, in constant time.
func (p *macPool) verify(msg string, sig *[sha256.Size]byte) bool {
	st := p.pool.Get().(*macState)
	st.h.Reset()
	st.buf = append(st.buf[:0], msg...)
	st.h.Write(st.buf)
	ok := hmac.Equal(st.h.Sum(st.sum[:0]), sig[:])
	if cap(st.buf) > 64<<10 {
		st.buf = make([]byte, 0, 512) // do not keep a huge body's buffer
	}
	p.pool.Put(st)
	return ok
}

// decodeSignature decodes 64 hex characters, upper or lower case.
func decodeSignature(s string, dst *[sha256.Size]byte) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	for i := 0; i < sha256.Size; i++ {
		hi, ok1 := fromHex(s[2*i])
		lo, ok2 := fromHex(s[2*i+1])
		if !ok1 || !ok2 {
			return false
		}
		dst[i] = hi<<4 | lo
	}
	return true
}

func fromHex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// checkTimestamp applies the optional replay window. It returns the time
// until which the signature must be remembered, or the zero time when the
// request carries no timestamp. required, when not empty, says why this
// request must carry a timestamp: the MISSING_TIMESTAMP detail.
func checkTimestamp(sr *signedRequest, now time.Time, required string) (time.Time, error) {
	var tsText, windowText string
	var haveTS, haveWindow bool
	for _, p := range sr.params {
		switch p.name {
		case "timestamp":
			if haveTS {
				return time.Time{}, exgate.ParamError("timestamp", "timestamp is given more than once")
			}
			tsText, haveTS = p.value, true
		case "recvWindow":
			if haveWindow {
				return time.Time{}, exgate.ParamError("recvWindow", "recvWindow is given more than once")
			}
			windowText, haveWindow = p.value, true
		}
	}
	if !haveTS {
		if required != "" {
			return time.Time{}, &exgate.Error{Code: exgate.CodeMissingTimestamp, Param: "timestamp",
				Detail: required + " (milliseconds since the Unix epoch, optionally with recvWindow); see the README's \"Calling the API\""}
		}
		if haveWindow {
			return time.Time{}, exgate.ParamError("recvWindow", "recvWindow needs a timestamp parameter")
		}
		return time.Time{}, nil
	}
	ts, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil || ts <= 0 {
		return time.Time{}, exgate.ParamError("timestamp", "timestamp must be milliseconds since the Unix epoch, not %q", clip(tsText))
	}
	window := defaultRecvWindow
	if haveWindow {
		w, err := strconv.ParseInt(windowText, 10, 64)
		if err != nil || w <= 0 || time.Duration(w)*time.Millisecond > maxRecvWindow {
			return time.Time{}, exgate.ParamError("recvWindow", "recvWindow must be an integer from 1 to %d milliseconds", maxRecvWindow.Milliseconds())
		}
		window = time.Duration(w) * time.Millisecond
	}
	sent := time.UnixMilli(ts)
	if now.Before(sent.Add(-clockSkew)) || now.After(sent.Add(window)) {
		hint := ""
		if ts < secondsLike {
			hint = fmt.Sprintf("; %d looks like seconds: send milliseconds (%d000)", ts, ts)
		}
		return time.Time{}, exgate.Errorf(exgate.CodeTimestampOutsideWindow,
			"timestamp %d is outside the %d ms window around the gateway's time %d%s", ts, window.Milliseconds(), now.UnixMilli(), hint)
	}
	return sent.Add(window).Add(clockSkew), nil
}
