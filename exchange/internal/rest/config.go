package rest

import (
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/localstate"
)

// Transport is the part of an adapter's client that every REST adapter
// has: where and with what it sends, on which clock, logging where, paced
// by which limiter. An adapter's client embeds it.
type Transport struct {
	// Exchange names the exchange in details and logs ("binance").
	Exchange string
	BaseURL  string
	HTTP     *http.Client
	Now      func() time.Time
	Log      *slog.Logger
	Limiter  exgate.Limiter
	// MaxWait bounds a pacing wait when the ctx has no deadline.
	MaxWait time.Duration
	// Backoff is the first pause before a failed read is sent again.
	Backoff time.Duration
}

// WithDefaults fills in what t leaves unset: BaseURL defaultURL (trailing
// slashes trimmed either way), an HTTP client with a 30 s timeout (every
// call also honours its ctx deadline), time.Now, a logger that discards,
// an in-process limiter (localstate; instances that share API keys must
// share one), MaxWait 10 s and Backoff 200 ms.
func (t Transport) WithDefaults(defaultURL string) Transport {
	if t.BaseURL == "" {
		t.BaseURL = defaultURL
	}
	t.BaseURL = strings.TrimRight(t.BaseURL, "/")
	if t.HTTP == nil {
		t.HTTP = &http.Client{Timeout: 30 * time.Second}
	}
	if t.Now == nil {
		t.Now = time.Now
	}
	if t.Log == nil {
		t.Log = slog.New(slog.DiscardHandler)
	}
	if t.Limiter == nil {
		t.Limiter = localstate.NewLimiter(t.Now)
	}
	if t.MaxWait <= 0 {
		t.MaxWait = 10 * time.Second
	}
	if t.Backoff <= 0 {
		t.Backoff = 200 * time.Millisecond
	}
	return t
}

// Pacer is the pace loop over t's limiter.
func (t Transport) Pacer() Pacer {
	return Pacer{Limiter: t.Limiter, Now: t.Now, MaxWait: t.MaxWait, Exchange: t.Exchange}
}

// AccountKey names an exchange account in limiter keys without exposing
// its API key: the credential's id, or a short hash of the key.
func AccountKey(cred *exgate.Credential) string {
	if cred.ID != 0 {
		return strconv.FormatInt(cred.ID, 10)
	}
	sum := sha256.Sum256([]byte(cred.Key))
	return "k" + hex.EncodeToString(sum[:8])
}

// PositiveOr is d when it is positive, else def: a duration option's
// value, where zero (or a negative value) asks for the default.
func PositiveOr(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
