// Package console is exgate's web console (docs/contract.md 2.7): server-rendered
// pages (html/template) for the people who run the gateway, on an address
// of its own (--console-addr), never the API's. Operators log in with a
// one-time link from `exgate console-login`; the session is an HttpOnly,
// SameSite=Strict cookie; every change (a POST) must carry the session's
// CSRF token and come from the console's own origin; every answer has a
// strict Content-Security-Policy, so the pages hold no inline script or
// style. The assets (CSS, a little plain JavaScript and TradingView's
// lightweight-charts, vendored with its licence) are embedded: nothing is
// built with Node.js.
package console

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/exgate/exgate"
)

// Journal is what the console needs of the journal (package journal): a
// cancel that is journaled and audited like one made through the API,
// and the ids the client knows for orders read from the exchange.
type Journal interface {
	CancelOrder(ctx context.Context, cred exgate.Credential, id, clientRef string) (exgate.Order, error)
	LabelOrders(ctx context.Context, apiKey string, orders []exgate.Order) []exgate.Order
}

// HealthCheck is one line of the health page.
type HealthCheck struct {
	Name string
	// State is ok, warn, fail or unchecked.
	State  string
	Detail string
}

// Health states. HealthUnchecked is a check not made (an exchange no
// exchange key uses): shown apart from ok, never as a green light.
const (
	HealthOK        = "ok"
	HealthWarn      = "warn"
	HealthFail      = "fail"
	HealthUnchecked = "unchecked"
)

// Options configure the console.
type Options struct {
	Store     exgate.Store
	Exchanges map[string]exgate.Exchange
	// ExchangeNames are the gateway's exchanges in the order they are
	// listed (the adapter list, cmd/internal/gateway); nil: the names of
	// Exchanges, sorted.
	ExchangeNames []string
	// CheckCredential refuses an exchange key before it is stored (the
	// gateway's check by the adapter's rules); nil: the name's rules
	// (exgate.Credential.Check) and an exchange of ExchangeNames.
	CheckCredential func(exgate.Credential) error
	Journal         Journal
	// Market feeds the market page's history (and its updates when
	// Live is nil); nil polls Exchanges.
	Market MarketFeed
	// Live pushes the market page's updates as the exchange streams
	// them (the stream hub of docs/contract.md 2.5); nil: the page
	// polls Market every two seconds.
	Live LiveFeed
	// LiveKeepAlive is how often an idle live stream gets a keep-alive
	// and its session is checked again (15 s when zero).
	LiveKeepAlive time.Duration
	// NewClientKey creates a client key pair in the store (the gateway's
	// own, so that the console's keys are made exactly as `exgate keys
	// create` makes them).
	NewClientKey func(ctx context.Context, label string) (exgate.ClientKey, error)
	// Health adds the gateway's checks to the health page: exchanges
	// reachable, clock skew, pacing headroom. Nil: the console's own
	// checks only (store, reconciliation backlog).
	Health func(ctx context.Context) []HealthCheck
	// PublicURL is the console's own origin as operators reach it
	// ("https://console.example", or http:// and its listening address):
	// a request naming another Host is refused with 421, so that no
	// origin is ever taken from a request. Empty (tests only): the
	// request's Host, over http unless the connection is TLS.
	PublicURL string
	// Now is the clock (time.Now when nil).
	Now    func() time.Time
	Logger *slog.Logger
}

// Handler serves the console.
type Handler struct {
	o     Options
	mux   *http.ServeMux
	pages map[string]*template.Template
	feed  MarketFeed
}

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// contentSecurityPolicy allows nothing but the console's own scripts,
// styles, images and requests: no inline code, no framing, no form posted
// elsewhere.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// New builds the console's handler.
func New(o Options) (*Handler, error) {
	if o.Store == nil || o.NewClientKey == nil {
		return nil, errors.New("console: Store and NewClientKey are required")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.LiveKeepAlive <= 0 {
		o.LiveKeepAlive = liveKeepAlive
	}
	if o.ExchangeNames == nil {
		o.ExchangeNames = slices.Sorted(maps.Keys(o.Exchanges))
	}
	if o.CheckCredential == nil {
		names := o.ExchangeNames
		o.CheckCredential = func(c exgate.Credential) error {
			if err := c.Check(); err != nil {
				return err
			}
			if !slices.Contains(names, c.Exchange) {
				return exgate.ParamError("exchange", "the exchange must be one of %s", strings.Join(names, ", "))
			}
			return nil
		}
	}
	if o.PublicURL != "" {
		u, err := url.Parse(o.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("console: public URL %q is not an http(s) URL", o.PublicURL)
		}
		o.PublicURL = u.Scheme + "://" + u.Host
	}
	h := &Handler{o: o, mux: http.NewServeMux(), feed: o.Market}
	if h.feed == nil {
		h.feed = PollingFeed{Exchanges: o.Exchanges}
	}
	var err error
	if h.pages, err = parsePages(); err != nil {
		return nil, err
	}
	h.routes()
	return h, nil
}

func parsePages() (map[string]*template.Template, error) {
	funcs := template.FuncMap{
		"join":  strings.Join,
		"time":  formatTime,
		"ms":    formatMillis,
		"perms": exgate.FormatPermissions,
		"lower": strings.ToLower,
	}
	base, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html")
	if err != nil {
		return nil, fmt.Errorf("console: templates: %w", err)
	}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	pages := map[string]*template.Template{}
	for _, n := range names {
		name := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if name == "layout" {
			continue
		}
		t, err := template.Must(base.Clone()).ParseFS(templateFS, n)
		if err != nil {
			return nil, fmt.Errorf("console: template %s: %w", n, err)
		}
		pages[name] = t
	}
	return pages, nil
}

func (h *Handler) routes() {
	assets, _ := fs.Sub(assetFS, "assets")
	static := http.StripPrefix("/assets/", http.FileServerFS(assets))
	h.mux.Handle("GET /assets/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		static.ServeHTTP(w, r)
	}))
	// Browsers ask for /favicon.ico whatever the page links: the same
	// icon, rather than a 404 on every page.
	h.mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		b, err := fs.ReadFile(assets, "favicon.svg")
		if err != nil {
			h.fail(w, r, err)
			return
		}
		w.Header().Set("Content-Type", "image/svg+xml")
		w.Header().Set("Cache-Control", "max-age=86400")
		_, _ = w.Write(b)
	})
	h.mux.HandleFunc("GET /login", h.loginPage)
	h.mux.HandleFunc("POST /login", h.login)
	h.mux.HandleFunc("POST /logout", h.action(h.logout))

	h.mux.HandleFunc("GET /{$}", h.page(func(w http.ResponseWriter, r *http.Request, s session) {
		http.Redirect(w, r, "/keys", http.StatusSeeOther)
	}))
	h.mux.HandleFunc("GET /keys", h.page(h.keysPage))
	h.mux.HandleFunc("POST /keys", h.action(h.createKey))
	h.mux.HandleFunc("POST /keys/{api}/revoke", h.action(h.revokeKey))
	h.mux.HandleFunc("POST /keys/{api}/allow-ip", h.action(h.setAllowIP))
	h.mux.HandleFunc("GET /keys/{api}", h.page(h.exchangeKeysPage))
	h.mux.HandleFunc("POST /keys/{api}/exchange-keys", h.action(h.addExchangeKey))
	h.mux.HandleFunc("GET /keys/{api}/exchange-keys/{name}", h.page(h.accountPage))
	h.mux.HandleFunc("POST /keys/{api}/exchange-keys/{name}/remove", h.action(h.removeExchangeKey))
	h.mux.HandleFunc("POST /keys/{api}/exchange-keys/{name}/allow-address", h.action(h.allowAddress))
	h.mux.HandleFunc("POST /keys/{api}/exchange-keys/{name}/deny-address", h.action(h.denyAddress))
	h.mux.HandleFunc("POST /keys/{api}/exchange-keys/{name}/cancel", h.action(h.cancelOrder))
	h.mux.HandleFunc("POST /keys/{api}/exchange-keys/{name}/transfer", h.action(h.transfer))
	h.mux.HandleFunc("GET /risk", h.page(h.riskPage))
	h.mux.HandleFunc("POST /risk/{api}/halt", h.action(h.haltKey))
	h.mux.HandleFunc("POST /risk/{api}/resume", h.action(h.resumeKey))
	h.mux.HandleFunc("GET /market", h.page(h.marketPage))
	h.mux.HandleFunc("GET /health", h.page(h.healthPage))

	h.mux.HandleFunc("GET /api/market/klines", h.api(h.klines))
	h.mux.HandleFunc("GET /api/market/book", h.api(h.book))
	h.mux.HandleFunc("GET /api/market/live", h.api(h.live))
	h.mux.HandleFunc("/api/", h.api(func(w http.ResponseWriter, r *http.Request, _ session) {
		writeProblem(w, http.StatusNotFound, "NOT_FOUND", "no such console endpoint")
	}))
}

// ServeHTTP sets the security headers of every answer, checks that the
// request names the console's own host, then routes.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", contentSecurityPolicy)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	if !h.ownHost(r.Host) {
		// A DNS-rebinding page, or a proxy passing another name: the
		// console answers only at its configured address.
		writeProblem(w, http.StatusMisdirectedRequest, "MISDIRECTED_REQUEST",
			"this console answers at "+h.o.PublicURL+" only (set --console-url to the address operators use)")
		return
	}
	h.mux.ServeHTTP(w, r)
}

// ownHost reports whether host (a request's Host) is the console's
// configured one; 127.0.0.1 and localhost stand for each other.
func (h *Handler) ownHost(host string) bool {
	if h.o.PublicURL == "" {
		return true
	}
	u, err := url.Parse(h.o.PublicURL)
	if err != nil {
		return false
	}
	want, got := strings.ToLower(u.Host), strings.ToLower(host)
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		want = net.JoinHostPort(strings.ToLower(u.Hostname()), port)
	}
	if _, _, err := net.SplitHostPort(got); err != nil {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		got = net.JoinHostPort(got, port)
	}
	if got == want {
		return true
	}
	wh, wp, _ := net.SplitHostPort(want)
	gh, gp, _ := net.SplitHostPort(got)
	loopback := func(h string) bool { return h == "127.0.0.1" || h == "localhost" }
	return wp == gp && loopback(wh) && loopback(gh)
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

func formatMillis(ms int64) string {
	if ms == 0 {
		return ""
	}
	return formatTime(time.UnixMilli(ms))
}
