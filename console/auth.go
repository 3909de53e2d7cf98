package console

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/exgate/exgate"
)

// LoginValidity is how long a login link from `exgate console-login`
// works (docs/contract.md 2.7).
const LoginValidity = 10 * time.Minute

// SessionIdle is how long a session lasts without a request.
const SessionIdle = 12 * time.Hour

// sessionExtendAfter: a session's expiry is moved forward at most once in
// this long, so that a page's polling does not write to the store every
// second.
const sessionExtendAfter = time.Minute

// cookieName is the session cookie.
const cookieName = "exgate_console"

// LoginStore is what NewLoginURL needs of the store.
type LoginStore interface {
	CreateConsoleLogin(ctx context.Context, tokenHash string, expires time.Time) error
}

// NewLoginURL makes a one-time login link for the console at consoleURL
// ("http://127.0.0.1:8090"), valid for LoginValidity from now. Only the
// token's hash is stored, so the link works on every instance that shares
// the store and once only.
func NewLoginURL(ctx context.Context, st LoginStore, consoleURL string, now time.Time) (string, error) {
	u, err := url.Parse(consoleURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("console URL %q is not an http(s) URL", consoleURL)
	}
	token := randomToken()
	if err := st.CreateConsoleLogin(ctx, hashToken(token), now.Add(LoginValidity)); err != nil {
		return "", fmt.Errorf("console login: %w", err)
	}
	return u.Scheme + "://" + u.Host + "/login?token=" + token, nil
}

// randomToken is 256 random bits in base64url.
func randomToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// hashToken is what the store keeps of a token or session id.
func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// session is a request's logged-in session.
type session struct {
	idHash string
	// csrf is the token every form of the session carries: derived from
	// the session id, which only the HttpOnly cookie holds, so a page of
	// another origin can neither read nor compute it.
	csrf string
}

func csrfToken(sessionID string) string {
	sum := sha256.Sum256([]byte("exgate console csrf\x00" + sessionID))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// session reads the request's session: nil when there is none or it
// expired. A session in use is extended to SessionIdle from now.
func (h *Handler) session(r *http.Request) (*session, error) {
	c, err := r.Cookie(cookieName)
	if err != nil || c.Value == "" || len(c.Value) > 100 {
		return nil, nil
	}
	now := h.o.Now()
	idHash := hashToken(c.Value)
	cs, err := h.o.Store.ConsoleSession(r.Context(), idHash, now)
	if errors.Is(err, exgate.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if cs.ExpiresAt.Sub(now) < SessionIdle-sessionExtendAfter {
		if err := h.o.Store.ExtendConsoleSession(r.Context(), idHash, now.Add(SessionIdle)); err != nil && !errors.Is(err, exgate.ErrNotFound) {
			return nil, err
		}
	}
	return &session{idHash: idHash, csrf: csrfToken(c.Value)}, nil
}

// origin is the console's own origin for r.
func (h *Handler) origin(r *http.Request) string {
	if h.o.PublicURL != "" {
		return h.o.PublicURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// sameOrigin reports whether a state-changing request comes from the
// console's own pages. It needs a positive sign: Sec-Fetch-Site
// same-origin (every current browser sends it), or, from a browser that
// does not send it, an Origin or Referer naming the console's origin. A
// request with none of them is refused. (With Referrer-Policy no-referrer
// a browser sends "Origin: null" on a form post, which proves nothing.)
func (h *Handler) sameOrigin(r *http.Request) bool {
	own := h.origin(r)
	origin := r.Header.Get("Origin")
	if origin != "" && origin != "null" && origin != own {
		return false
	}
	switch r.Header.Get("Sec-Fetch-Site") {
	case "same-origin":
		return true
	case "":
	default:
		return false
	}
	if origin == own {
		return true
	}
	if ref, err := url.Parse(r.Header.Get("Referer")); err == nil && ref.Host != "" {
		return ref.Scheme+"://"+ref.Host == own
	}
	return false
}

// page serves an HTML page to a logged-in operator; without a session it
// redirects to /login.
func (h *Handler) page(fn func(http.ResponseWriter, *http.Request, session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, err := h.session(r)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		if s == nil {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		fn(w, r, *s)
	}
}

// action serves a change: it needs a session, the session's CSRF token in
// the form field "csrf" and the console's own origin; anything else is
// 403 and changes nothing.
func (h *Handler) action(fn func(http.ResponseWriter, *http.Request, session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		if !h.sameOrigin(r) {
			h.refuse(w, r, "This request did not come from the console's own pages (cross-site requests are refused).")
			return
		}
		s, err := h.session(r)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		if s == nil {
			h.refuse(w, r, "You are not logged in, or your session expired. Run exgate console-login for a login link.")
			return
		}
		if err := r.ParseForm(); err != nil {
			h.refuse(w, r, "The form could not be read.")
			return
		}
		if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(s.csrf)) != 1 {
			h.refuse(w, r, "The form's CSRF token is missing or not this session's. Reload the page and try again.")
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		fn(w, r, *s)
	}
}

// api serves a console JSON endpoint; without a session it answers 401.
func (h *Handler) api(fn func(http.ResponseWriter, *http.Request, session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, err := h.session(r)
		if err != nil {
			h.o.Logger.ErrorContext(r.Context(), "console: session", "err", err)
			writeProblem(w, http.StatusInternalServerError, "INTERNAL", "the session could not be read")
			return
		}
		if s == nil {
			writeProblem(w, http.StatusUnauthorized, "UNAUTHORIZED", "log in to the console first (exgate console-login)")
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		fn(w, r, *s)
	}
}

// writeProblem writes an RFC 9457 problem, as the API does.
func writeProblem(w http.ResponseWriter, status int, code, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"type": "about:blank", "title": http.StatusText(status), "status": status, "code": code, "detail": detail,
	})
}

// loginPage shows the button that uses a login link's token. The token is
// used by a POST from this page, not by the GET: a link previewer that
// fetches the URL does not use it up, and the session cookie, set on a
// same-site answer, is sent with the redirect that follows.
func (h *Handler) loginPage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	token := r.URL.Query().Get("token")
	if len(token) > 100 {
		token = ""
	}
	h.render(w, r, http.StatusOK, "login", page{Title: "Log in", Data: map[string]string{"Token": token}})
}

// login uses a login link's token and starts a session.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	if !h.sameOrigin(r) {
		h.refuse(w, r, "This request did not come from the console's own pages (cross-site requests are refused).")
		return
	}
	token := r.PostFormValue("token")
	now := h.o.Now()
	if token == "" || len(token) > 100 {
		h.refuse(w, r, "This login link is not valid. Run exgate console-login for a new one.")
		return
	}
	err := h.o.Store.UseConsoleLogin(r.Context(), hashToken(token), now)
	if errors.Is(err, exgate.ErrNotFound) {
		h.refuse(w, r, "This login link is unknown, already used or expired (a link works once, for 10 minutes). Run exgate console-login for a new one.")
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	id := randomToken()
	if err := h.o.Store.CreateConsoleSession(r.Context(), exgate.ConsoleSession{IDHash: hashToken(id), CreatedAt: now, ExpiresAt: now.Add(SessionIdle)}); err != nil {
		h.fail(w, r, err)
		return
	}
	h.audit(r, "console login", "", "", nil)
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: id, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: strings.HasPrefix(h.origin(r), "https://"), MaxAge: int(SessionIdle / time.Second),
	})
	http.Redirect(w, r, "/keys", http.StatusSeeOther)
}

// logout ends the session.
func (h *Handler) logout(w http.ResponseWriter, r *http.Request, s session) {
	if err := h.o.Store.DeleteConsoleSession(r.Context(), s.idHash); err != nil {
		h.fail(w, r, err)
		return
	}
	h.audit(r, "console logout", "", "", nil)
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: -1})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// audit records an admin change in the audit trail, as the CLI's
// commands do, with the console as the actor.
func (h *Handler) audit(r *http.Request, action, apiKey, exchangeKey string, details map[string]string) {
	_, err := h.o.Store.AppendAudit(r.Context(), exgate.AuditEntry{
		Actor: exgate.AuditActorConsole, Action: action, APIKey: apiKey, ExchangeKey: exchangeKey,
		Details: details, Remote: r.RemoteAddr,
	})
	if err != nil {
		h.o.Logger.ErrorContext(r.Context(), "console: the audit trail could not record a change", "action", action, "err", err)
	}
}
