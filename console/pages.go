package console

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/httpapi"
)

// page is what every template gets.
type page struct {
	Title string
	// Nav names the active section: keys, market, health.
	Nav  string
	CSRF string
	// LoggedIn shows the navigation and the logout button.
	LoggedIn bool
	Notice   string
	Error    string
	// Scripts are the page's own scripts under /assets/.
	Scripts []string
	Data    any
}

func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	t, ok := h.pages[name]
	if !ok {
		h.fail(w, r, errors.New("console: no template "+name))
		return
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout.html", p); err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// refuse answers 403 with a page that says why.
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, why string) {
	h.render(w, r, http.StatusForbidden, "message", page{Title: "Refused", Error: why})
}

// fail answers 500 and logs the cause, which the page does not show.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	h.o.Logger.ErrorContext(r.Context(), "console", "path", r.URL.Path, "err", err)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusInternalServerError)
	_, _ = w.Write([]byte("The console failed to answer; the gateway's log says why.\n"))
}

// notFound answers 404 with a page.
func (h *Handler) notFound(w http.ResponseWriter, r *http.Request, s session, what string) {
	h.render(w, r, http.StatusNotFound, "message", page{Title: "Not found", LoggedIn: true, CSRF: s.csrf, Error: what})
}

// keyRow is a client key as the keys page lists it: never its secret.
type keyRow struct {
	APIKey    string
	Label     string
	CreatedAt time.Time
	RevokedAt time.Time
	Active    bool
	Legacy    bool
	AllowIPs  string
}

// accountLink is an exchange key of an active client key, linked from the
// keys page straight to its account page (balances, orders, withdrawals).
type accountLink struct {
	APIKey, Label, Name, Exchange string
	Paper                         bool
}

type keysData struct {
	Keys []keyRow
	// Accounts are every active client key's exchange keys: after
	// logging in, an account page is one click away.
	Accounts []accountLink
	// Created is the key just created: the one time its secret is shown.
	Created *exgate.ClientKey
}

func (h *Handler) keysPage(w http.ResponseWriter, r *http.Request, s session) {
	h.renderKeys(w, r, s, http.StatusOK, nil, r.URL.Query().Get("notice"), "")
}

func (h *Handler) renderKeys(w http.ResponseWriter, r *http.Request, s session, status int, created *exgate.ClientKey, notice, problem string) {
	keys, err := h.o.Store.ListClientKeys(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	d := keysData{Created: created}
	for _, k := range keys {
		ips, err := h.o.Store.AllowedIPs(r.Context(), k.APIKey)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		d.Keys = append(d.Keys, keyRow{APIKey: k.APIKey, Label: k.Label, CreatedAt: k.CreatedAt, RevokedAt: k.RevokedAt,
			Active: k.Active(), Legacy: k.LegacySigning, AllowIPs: exgate.FormatIPAllowlist(ips)})
		if !k.Active() {
			continue
		}
		creds, err := h.o.Store.ListCredentials(r.Context(), k.APIKey)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		for _, c := range creds {
			d.Accounts = append(d.Accounts, accountLink{APIKey: k.APIKey, Label: k.Label, Name: c.Name, Exchange: c.Exchange, Paper: c.Paper})
		}
	}
	h.render(w, r, status, "keys", page{Title: "Client keys", Nav: "keys", CSRF: s.csrf, LoggedIn: true,
		Notice: notice, Error: problem, Data: d})
}

// createKey makes a client key and shows its secret on this answer only:
// the page is not cached (Cache-Control: no-store), and every later page
// lists the key without it.
func (h *Handler) createKey(w http.ResponseWriter, r *http.Request, s session) {
	label := strings.TrimSpace(r.PostForm.Get("label"))
	prefixes, err := exgate.ParseIPAllowlist(r.PostForm.Get("allowIps"))
	if err != nil {
		h.renderKeys(w, r, s, http.StatusBadRequest, nil, "", "IP allowlist: "+err.Error())
		return
	}
	k, err := h.o.NewClientKey(r.Context(), label)
	if err != nil {
		h.renderKeys(w, r, s, http.StatusBadRequest, nil, "", err.Error())
		return
	}
	details := map[string]string{"label": k.Label}
	if len(prefixes) > 0 {
		if err := h.o.Store.SetAllowedIPs(r.Context(), k.APIKey, prefixes); err != nil {
			h.fail(w, r, err)
			return
		}
		details["allowIps"] = exgate.FormatIPAllowlist(prefixes)
	}
	h.audit(r, "keys create", k.APIKey, "", details)
	h.renderKeys(w, r, s, http.StatusOK, &k, "", "")
}

func (h *Handler) revokeKey(w http.ResponseWriter, r *http.Request, s session) {
	api := r.PathValue("api")
	if err := h.o.Store.RevokeClientKey(r.Context(), api); err != nil {
		if errors.Is(err, exgate.ErrNotFound) {
			h.notFound(w, r, s, "No such client key.")
			return
		}
		h.fail(w, r, err)
		return
	}
	h.audit(r, "keys revoke", api, "", nil)
	http.Redirect(w, r, "/keys?notice=revoked", http.StatusSeeOther)
}

func (h *Handler) setAllowIP(w http.ResponseWriter, r *http.Request, s session) {
	api := r.PathValue("api")
	prefixes, err := exgate.ParseIPAllowlist(r.PostForm.Get("allowIps"))
	if err != nil {
		h.renderKeys(w, r, s, http.StatusBadRequest, nil, "", "IP allowlist: "+err.Error())
		return
	}
	if err := h.o.Store.SetAllowedIPs(r.Context(), api, prefixes); err != nil {
		if errors.Is(err, exgate.ErrNotFound) {
			h.notFound(w, r, s, "No such client key.")
			return
		}
		h.fail(w, r, err)
		return
	}
	h.audit(r, "keys set-allow-ip", api, "", map[string]string{"allowIps": exgate.FormatIPAllowlist(prefixes)})
	http.Redirect(w, r, "/keys?notice=allowlist+saved", http.StatusSeeOther)
}

type exchangeKeysData struct {
	Key         keyRow
	Credentials []exgate.Credential
	Exchanges   []string
}

func (h *Handler) exchangeKeysPage(w http.ResponseWriter, r *http.Request, s session) {
	h.renderExchangeKeys(w, r, s, http.StatusOK, r.URL.Query().Get("notice"), "")
}

func (h *Handler) renderExchangeKeys(w http.ResponseWriter, r *http.Request, s session, status int, notice, problem string) {
	api := r.PathValue("api")
	k, err := h.o.Store.ClientKey(r.Context(), api)
	if errors.Is(err, exgate.ErrNotFound) {
		h.notFound(w, r, s, "No such client key.")
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	creds, err := h.o.Store.ListCredentials(r.Context(), api)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	d := exchangeKeysData{Key: keyRow{APIKey: k.APIKey, Label: k.Label, Active: k.Active(), CreatedAt: k.CreatedAt, RevokedAt: k.RevokedAt},
		Credentials: creds, Exchanges: h.o.ExchangeNames}
	h.render(w, r, status, "exchangekeys", page{Title: "Exchange keys", Nav: "keys", CSRF: s.csrf, LoggedIn: true,
		Notice: notice, Error: problem, Data: d})
}

// addExchangeKey stores an exchange credential. The secret comes from a
// password field and is never written back into a page, not even when
// the form is refused.
func (h *Handler) addExchangeKey(w http.ResponseWriter, r *http.Request, s session) {
	f := r.PostForm
	perms, err := exgate.ParsePermissions(strings.Join(append([]string{string(exgate.PermissionRead)}, f["permissions"]...), ","))
	if err != nil {
		h.renderExchangeKeys(w, r, s, http.StatusBadRequest, "", err.Error())
		return
	}
	balances, err := exgate.ParsePaperBalances(f.Get("balances"))
	if err != nil {
		h.renderExchangeKeys(w, r, s, http.StatusBadRequest, "", "Starting balances: "+err.Error())
		return
	}
	paper := f.Get("paper") == "on"
	if !paper && balances != nil {
		h.renderExchangeKeys(w, r, s, http.StatusBadRequest, "", "Starting balances are for a paper key only.")
		return
	}
	c := exgate.Credential{ClientAPIKey: r.PathValue("api"), Name: strings.TrimSpace(f.Get("name")),
		Exchange: strings.ToLower(f.Get("exchange")), Key: strings.TrimSpace(f.Get("key")),
		Secret: strings.TrimSpace(f.Get("secret")), Passphrase: strings.TrimSpace(f.Get("passphrase")), Permissions: perms,
		Paper: paper, PaperBalances: balances}
	if err := h.o.CheckCredential(c); err != nil {
		msg := err.Error()
		if e, ok := errors.AsType[*exgate.Error](err); ok {
			msg = e.Detail
		}
		h.renderExchangeKeys(w, r, s, http.StatusBadRequest, "", msg)
		return
	}
	c, err = h.o.Store.AddCredential(r.Context(), c)
	switch {
	case errors.Is(err, exgate.ErrConflict):
		h.renderExchangeKeys(w, r, s, http.StatusConflict, "", "An exchange key with this name exists for this client key.")
		return
	case errors.Is(err, exgate.ErrNotFound):
		h.renderExchangeKeys(w, r, s, http.StatusBadRequest, "", "The client key is revoked or unknown.")
		return
	case err != nil:
		h.fail(w, r, err)
		return
	}
	h.audit(r, "exchange-keys add", c.ClientAPIKey, c.Name, map[string]string{
		"exchange": c.Exchange, "permissions": exgate.FormatPermissions(c.Permissions), "paper": strconv.FormatBool(c.Paper)})
	http.Redirect(w, r, "/keys/"+pathEscape(c.ClientAPIKey)+"?notice=exchange+key+added", http.StatusSeeOther)
}

func (h *Handler) removeExchangeKey(w http.ResponseWriter, r *http.Request, s session) {
	api, name := r.PathValue("api"), r.PathValue("name")
	if err := h.o.Store.RemoveCredential(r.Context(), api, name); err != nil {
		if errors.Is(err, exgate.ErrNotFound) {
			h.notFound(w, r, s, "No such exchange key.")
			return
		}
		h.fail(w, r, err)
		return
	}
	h.audit(r, "exchange-keys remove", api, name, nil)
	http.Redirect(w, r, "/keys/"+pathEscape(api)+"?notice=exchange+key+removed", http.StatusSeeOther)
}

func (h *Handler) addressForm(r *http.Request) exgate.AllowedAddress {
	f := r.PostForm
	return exgate.AllowedAddress{ClientAPIKey: r.PathValue("api"), CredentialName: r.PathValue("name"),
		Asset: strings.ToUpper(strings.TrimSpace(f.Get("asset"))), Network: strings.ToUpper(strings.TrimSpace(f.Get("network"))),
		Address: strings.TrimSpace(f.Get("address")), Tag: strings.TrimSpace(f.Get("tag"))}
}

func (h *Handler) allowAddress(w http.ResponseWriter, r *http.Request, s session) {
	a := h.addressForm(r)
	back := accountPath(a.ClientAPIKey, a.CredentialName)
	if a.Asset == "" || a.Network == "" || a.Address == "" {
		http.Redirect(w, r, back+"?problem=asset,+network+and+address+are+required", http.StatusSeeOther)
		return
	}
	// 24 h unless longer: the console offers no shorter hold
	// (docs/contract.md 2.6); only the command line may give less.
	hold := exgate.DefaultAddressHold
	if v := strings.TrimSpace(r.PostForm.Get("hold")); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < exgate.DefaultAddressHold {
			http.Redirect(w, r, back+"?problem=hold+must+be+a+duration+of+24h+or+more,+such+as+48h", http.StatusSeeOther)
			return
		}
		hold = d
	}
	a.UsableFrom = h.o.Now().Add(hold)
	stored, err := h.o.Store.AllowAddress(r.Context(), a)
	switch {
	case errors.Is(err, exgate.ErrConflict):
		http.Redirect(w, r, back+"?problem=this+address+is+already+allowed", http.StatusSeeOther)
		return
	case errors.Is(err, exgate.ErrNotFound):
		h.notFound(w, r, s, "No such exchange key.")
		return
	case err != nil:
		h.fail(w, r, err)
		return
	}
	h.audit(r, "exchange-keys allow-address", a.ClientAPIKey, a.CredentialName, map[string]string{
		"asset": a.Asset, "network": a.Network, "address": a.Address, "tag": a.Tag,
		"usableFrom": stored.UsableFrom.UTC().Format(time.RFC3339)})
	http.Redirect(w, r, back+"?notice=address+allowed", http.StatusSeeOther)
}

func (h *Handler) denyAddress(w http.ResponseWriter, r *http.Request, s session) {
	a := h.addressForm(r)
	back := accountPath(a.ClientAPIKey, a.CredentialName)
	if err := h.o.Store.DenyAddress(r.Context(), a); err != nil {
		if errors.Is(err, exgate.ErrNotFound) {
			http.Redirect(w, r, back+"?problem=this+address+is+not+allowed", http.StatusSeeOther)
			return
		}
		h.fail(w, r, err)
		return
	}
	h.audit(r, "exchange-keys deny-address", a.ClientAPIKey, a.CredentialName, map[string]string{
		"asset": a.Asset, "network": a.Network, "address": a.Address, "tag": a.Tag})
	http.Redirect(w, r, back+"?notice=address+denied", http.StatusSeeOther)
}

// cancelOrder cancels an order through the journal, so that the cancel is
// journaled and reconciled like one sent to POST /v1/order/cancel, and
// records it in the audit trail.
func (h *Handler) cancelOrder(w http.ResponseWriter, r *http.Request, s session) {
	api, name := r.PathValue("api"), r.PathValue("name")
	back := accountPath(api, name)
	cred, ok := h.credential(w, r, s, api, name)
	if !ok {
		return
	}
	id := r.PostForm.Get("id")
	if h.o.Journal == nil || id == "" {
		http.Redirect(w, r, back+"?problem=nothing+to+cancel", http.StatusSeeOther)
		return
	}
	o, err := h.o.Journal.CancelOrder(r.Context(), cred, id, "")
	entry := exgate.AuditEntry{Actor: exgate.AuditActorConsole, Action: "order cancel", APIKey: api, ExchangeKey: name,
		Details: map[string]string{"id": id}, IntentID: id, Remote: r.RemoteAddr, Status: http.StatusOK}
	if e, ok := errors.AsType[*exgate.Error](err); ok {
		entry.Code, entry.Status = string(e.Code), httpapi.Status(e.Code)
	} else if err != nil {
		entry.Status = http.StatusInternalServerError
	}
	if _, aerr := h.o.Store.AppendAudit(r.Context(), entry); aerr != nil {
		h.o.Logger.ErrorContext(r.Context(), "console: the audit trail could not record a cancel", "id", id, "err", aerr)
	}
	if err != nil {
		http.Redirect(w, r, back+"?problem="+queryEscape("cancel "+id+": "+err.Error()), http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, back+"?notice="+queryEscape("order "+id+" is "+string(o.Status)), http.StatusSeeOther)
}

// TransferJournal is the journal's transfer (docs/contract.md 2.10): when
// Options.Journal has it, the account page offers a transfer form.
type TransferJournal interface {
	Transfer(ctx context.Context, cred exgate.Credential, req exgate.TransferRequest, clientRef string) (exgate.Transfer, error)
}

// transfer moves funds between an exchange key's two wallets through the
// journal, so that it is journaled, idempotent and reconciled like one
// sent to POST /v1/wallet/transfer, and records it in the audit trail. As
// on the API, the exchange key needs the trade permission.
func (h *Handler) transfer(w http.ResponseWriter, r *http.Request, s session) {
	api, name := r.PathValue("api"), r.PathValue("name")
	back := accountPath(api, name)
	cred, ok := h.credential(w, r, s, api, name)
	if !ok {
		return
	}
	f := r.PostForm
	details := map[string]string{"asset": f.Get("asset"), "amount": f.Get("amount"), "from": f.Get("from"), "to": f.Get("to")}
	req, err := transferForm(f)
	tj, isJournal := h.o.Journal.(TransferJournal)
	switch {
	case err != nil:
	case !isJournal:
		err = exgate.Errorf(exgate.CodeNotImplemented, "this console has no journal to send transfers through")
	case !cred.Allows(exgate.PermissionTrade):
		err = exgate.Errorf(exgate.CodePermissionDenied, "the exchange key %s lacks the trade permission a transfer needs", name)
	}
	var t exgate.Transfer
	if err == nil {
		t, err = tj.Transfer(r.Context(), cred, req, "")
	}
	entry := exgate.AuditEntry{Actor: exgate.AuditActorConsole, Action: "transfer", APIKey: api, ExchangeKey: name,
		Details: details, IntentID: t.ID, Remote: r.RemoteAddr, Status: http.StatusOK}
	if e, ok := errors.AsType[*exgate.Error](err); ok {
		entry.Code, entry.Status = string(e.Code), httpapi.Status(e.Code)
	} else if err != nil {
		entry.Status = http.StatusInternalServerError
	}
	if _, aerr := h.o.Store.AppendAudit(r.Context(), entry); aerr != nil {
		h.o.Logger.ErrorContext(r.Context(), "console: the audit trail could not record a transfer", "err", aerr)
	}
	if err != nil {
		http.Redirect(w, r, back+"?problem="+queryEscape("transfer: "+err.Error()), http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, back+"?notice="+queryEscape("transfer "+t.ID+" of "+t.Amount.String()+" "+t.Asset+" from "+string(t.From)+
		" to "+string(t.To)+" is "+string(t.Status)), http.StatusSeeOther)
}

// transferForm reads the transfer form, refusing what the API would.
func transferForm(f url.Values) (exgate.TransferRequest, error) {
	var req exgate.TransferRequest
	req.Asset = exgate.NormalizeAsset(strings.TrimSpace(f.Get("asset")))
	amount, err := exgate.ParseDecimal(strings.TrimSpace(f.Get("amount")))
	if err != nil {
		return req, exgate.ParamError("amount", "amount must be a decimal number")
	}
	req.Amount = amount
	if req.From, err = exgate.ParseWalletKind(f.Get("from")); err != nil {
		return req, exgate.ParamError("from", "%v", err)
	}
	if req.To, err = exgate.ParseWalletKind(f.Get("to")); err != nil {
		return req, exgate.ParamError("to", "%v", err)
	}
	if req.Asset == "" || len(req.Asset) > 20 {
		return req, exgate.ParamError("asset", "asset must be an asset code")
	}
	return req, exgate.CheckTransfer(req)
}

// credential reads an exchange key with its secrets, for a call to the
// exchange; it answers 404 itself when there is none.
func (h *Handler) credential(w http.ResponseWriter, r *http.Request, s session, api, name string) (exgate.Credential, bool) {
	cred, err := h.o.Store.Credential(r.Context(), api, name)
	if errors.Is(err, exgate.ErrNotFound) {
		h.notFound(w, r, s, "No such exchange key.")
		return cred, false
	}
	if err != nil {
		h.fail(w, r, err)
		return cred, false
	}
	return cred, true
}

// journalRow is an order or withdrawal of the journal as the account
// page lists it, one column a field: numbers are the exact decimal text
// of the recorded answer, or of the request when the answer is a refusal
// (which records no amounts).
type journalRow struct {
	ID, ClientRef, Kind string
	State               exgate.IntentState
	Status              string
	// Reason is the refusal's detail when the answer was a problem.
	Reason string
	// An order's pair, side, quantity (with the asset it is in), limit
	// price and executed quantity.
	Pair, Side, Quantity, Price, Executed string
	// A withdrawal's amount, asset, network, address and tag; a
	// transfer's amount, asset and wallets.
	Amount, Asset, Network, Address, Tag string
	From, To                             string
	CreatedAt                            time.Time
	UpdatedAt                            time.Time
	// Reconcile says what reconciliation is doing with an unfinished
	// intent; empty when it is final.
	Reconcile string
}

// recorded is the part of a recorded answer (an Order, a Withdrawal or a
// problem) the account page shows; json.Number keeps the exact text.
type recorded struct {
	Status     string      `json:"status"`
	Side       string      `json:"side"`
	Type       string      `json:"type"`
	Asset1     string      `json:"asset1"`
	Asset2     string      `json:"asset2"`
	Asset      string      `json:"asset"`
	Quantity   json.Number `json:"quantity"`
	QuantityIn string      `json:"quantityIn"`
	Price      json.Number `json:"price"`
	Executed   json.Number `json:"executedQuantity"`
	Amount     json.Number `json:"amount"`
	ToAddress  string      `json:"toAddress"`
	Tag        string      `json:"tag"`
	From       string      `json:"from"`
	To         string      `json:"to"`
	Network    string      `json:"network"`
	Code       string      `json:"code"`
	Detail     string      `json:"detail"`
}

// requested is the part of a journaled request the account page shows
// when the answer is a refusal: the journal's own encoding of
// exgate.OrderRequest (with the limit order's in Limit) and
// exgate.WithdrawalRequest.
type requested struct {
	Symbol     exgate.Symbol
	Side       string
	Quantity   json.Number
	QuantityIn exgate.QuantityIn
	Limit      *struct {
		Symbol   exgate.Symbol
		Side     string
		Quantity json.Number
		Price    json.Number
	}
	Asset, Network, Address, Tag string
	Amount                       json.Number
	// A transfer's wallets (exgate.TransferRequest).
	From, To string
}

func describeIntent(it exgate.Intent, now time.Time) journalRow {
	row := journalRow{ID: it.ID, ClientRef: it.ClientRef, Kind: string(it.Kind), State: it.State, CreatedAt: it.CreatedAt, UpdatedAt: it.UpdatedAt}
	var rec recorded
	if len(it.Response) > 0 {
		_ = json.Unmarshal(it.Response, &rec)
	}
	var req requested
	_ = json.Unmarshal(it.Request, &req)
	row.Status = rec.Status
	if rec.Code != "" {
		row.Status, row.Reason = rec.Code, rec.Detail
	}
	switch {
	case it.Kind == exgate.IntentWithdrawal && rec.Code == "" && rec.Asset != "":
		row.Amount, row.Asset, row.Network, row.Address, row.Tag = string(rec.Amount), rec.Asset, rec.Network, rec.ToAddress, rec.Tag
	case it.Kind == exgate.IntentWithdrawal:
		row.Amount, row.Asset, row.Network, row.Address, row.Tag = string(req.Amount), req.Asset, req.Network, req.Address, req.Tag
	case it.Kind == exgate.IntentTransfer && rec.Code == "" && rec.Asset != "":
		row.Amount, row.Asset, row.From, row.To = string(rec.Amount), rec.Asset, rec.From, rec.To
	case it.Kind == exgate.IntentTransfer:
		row.Amount, row.Asset, row.From, row.To = string(req.Amount), req.Asset, req.From, req.To
	case rec.Code == "" && rec.Asset1 != "":
		row.Pair, row.Side = rec.Asset1+"/"+rec.Asset2, rec.Side
		row.Quantity = strings.TrimSpace(string(rec.Quantity) + " " + rec.QuantityIn)
		row.Price, row.Executed = string(rec.Price), string(rec.Executed)
	case req.Limit != nil:
		row.Pair, row.Side = req.Limit.Symbol.String(), req.Limit.Side
		row.Quantity, row.Price = string(req.Limit.Quantity)+" "+req.Limit.Symbol.Base, string(req.Limit.Price)
	case req.Symbol.Base != "":
		in := req.Symbol.Base
		if req.QuantityIn == exgate.InQuote {
			in = req.Symbol.Quote
		}
		row.Pair, row.Side, row.Quantity = req.Symbol.String(), req.Side, string(req.Quantity)+" "+in
	}
	if row.Status == "" {
		row.Status = "(no answer recorded yet)"
	}
	if !it.State.Done() {
		row.Reconcile = reconcileText(it, now)
	}
	return row
}

// reconcileText says what the reconciler (docs/orders.md) does with an
// unfinished intent.
func reconcileText(it exgate.Intent, now time.Time) string {
	var what string
	switch it.State {
	case exgate.IntentSubmitting:
		what = "being sent; if the sender stops, the reconciler reads it from the exchange by its client id"
	case exgate.IntentUnknown:
		what = "outcome unknown (timeout or lost answer); the reconciler reads it from the exchange by its client id, never sending it again"
	case exgate.IntentAccepted:
		what = "accepted and not final; the reconciler reads it until it is final"
	default:
		what = "unfinished"
	}
	due := it.NextDue
	if due.IsZero() {
		due = it.CreatedAt
	}
	if it.Attempts > 0 {
		what += "; read " + itoa(it.Attempts) + " time(s)"
	}
	if due.After(now) {
		return what + "; next read at " + formatTime(due)
	}
	return what + "; next read: due now"
}

func itoa(n int) string { return strconv.Itoa(n) }

func pathEscape(s string) string  { return url.PathEscape(s) }
func queryEscape(s string) string { return url.QueryEscape(s) }

type accountData struct {
	Key         keyRow
	Credential  exgate.Credential
	Balances    []exgate.Balance
	BalancesErr string
	Open        []exgate.Order
	OpenErr     string
	Orders      []journalRow
	Withdrawals []journalRow
	// Two is set when the exchange has a funding wallet beside spot
	// (docs/contract.md 2.10): its balances and the transfer form show.
	Two         bool
	Funding     []exgate.Balance
	FundingErr  string
	Transfers   []journalRow
	Deposits    []exgate.Deposit
	DepositsErr string
	Addresses   []addressRow
}

type addressRow struct {
	exgate.AllowedAddress
	State string
}

// accountPage shows one exchange key: balances, open orders with their
// cancel buttons, the journal's orders and withdrawals, deposits and the
// withdrawal allowlist.
func (h *Handler) accountPage(w http.ResponseWriter, r *http.Request, s session) {
	api, name := r.PathValue("api"), r.PathValue("name")
	cred, ok := h.credential(w, r, s, api, name)
	if !ok {
		return
	}
	k, err := h.o.Store.ClientKey(r.Context(), api)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	// The page must not hold the exchange's secret.
	shown := cred
	shown.Secret, shown.Passphrase = "", ""
	d := accountData{Key: keyRow{APIKey: k.APIKey, Label: k.Label, Active: k.Active()}, Credential: shown}
	now := h.o.Now()
	ex := h.o.Exchanges[cred.Exchange]
	if ex == nil {
		d.BalancesErr = "exchange " + cred.Exchange + " is not enabled on this gateway"
		d.OpenErr, d.DepositsErr = d.BalancesErr, d.BalancesErr
	} else {
		if d.Balances, err = ex.Balances(r.Context(), cred); err != nil {
			d.BalancesErr = err.Error()
		}
		if om, ok := exgate.Ability[exgate.OrderManager](ex); ok {
			open, err := om.OpenOrders(r.Context(), cred, exgate.OrderFilter{})
			switch {
			case err != nil:
				d.OpenErr = err.Error()
			case h.o.Journal != nil:
				d.Open = h.o.Journal.LabelOrders(r.Context(), api, open)
			default:
				d.Open = open
			}
		} else {
			d.OpenErr = "this exchange's adapter has no order lifecycle"
		}
		if wt, ok := exgate.TransfersFor(ex, cred); ok {
			d.Two = true
			if d.Funding, err = wt.WalletBalances(r.Context(), cred, exgate.WalletFunding); err != nil {
				d.Funding, d.FundingErr = nil, err.Error()
			}
		}
		if d.Deposits, err = ex.RecentDeposits(r.Context(), cred, exgate.DepositFilter{}); err != nil {
			d.DepositsErr = err.Error()
		}
		if len(d.Deposits) > 20 {
			d.Deposits = d.Deposits[:20]
		}
	}
	for _, kind := range []exgate.IntentKind{exgate.IntentOrder, exgate.IntentWithdrawal, exgate.IntentTransfer} {
		its, err := h.o.Store.RecentIntents(r.Context(), cred.ID, kind, 50)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		for _, it := range its {
			switch kind {
			case exgate.IntentOrder:
				d.Orders = append(d.Orders, describeIntent(it, now))
			case exgate.IntentWithdrawal:
				d.Withdrawals = append(d.Withdrawals, describeIntent(it, now))
			default:
				d.Transfers = append(d.Transfers, describeIntent(it, now))
			}
		}
	}
	addrs, err := h.o.Store.AllowedAddresses(r.Context(), api, name)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	for _, a := range addrs {
		st := "allowed"
		switch {
		case !a.DeniedAt.IsZero():
			st = "denied"
		case now.Before(a.UsableFrom):
			st = "held until " + formatTime(a.UsableFrom)
		}
		d.Addresses = append(d.Addresses, addressRow{AllowedAddress: a, State: st})
	}
	q := r.URL.Query()
	h.render(w, r, http.StatusOK, "account", page{Title: name + " — exchange key", Nav: "keys", CSRF: s.csrf, LoggedIn: true,
		Notice: q.Get("notice"), Error: q.Get("problem"), Data: d})
}

func accountPath(api, name string) string {
	return "/keys/" + pathEscape(api) + "/exchange-keys/" + pathEscape(name)
}

type healthData struct {
	Checks []HealthCheck
	At     time.Time
}

// healthPage shows the store, the reconciliation backlog and the
// gateway's own checks (exchanges reachable, clock skew, pacing).
func (h *Handler) healthPage(w http.ResponseWriter, r *http.Request, s session) {
	now := h.o.Now()
	var checks []HealthCheck
	if err := h.o.Store.Ping(r.Context()); err != nil {
		checks = append(checks, HealthCheck{Name: "store", State: HealthFail, Detail: err.Error()})
	} else {
		checks = append(checks, HealthCheck{Name: "store", State: HealthOK, Detail: "reachable"})
	}
	checks = append(checks, h.backlog(r, now))
	if h.o.Health != nil {
		checks = append(checks, h.o.Health(r.Context())...)
	}
	h.render(w, r, http.StatusOK, "health", page{Title: "Health", Nav: "health", CSRF: s.csrf, LoggedIn: true,
		Data: healthData{Checks: checks, At: now}})
}

// backlog is the reconciliation backlog: unfinished intents, the oldest,
// and how many are overdue.
func (h *Handler) backlog(r *http.Request, now time.Time) HealthCheck {
	const name = "reconciliation backlog"
	its, err := h.o.Store.UnfinishedIntents(r.Context(), 1000)
	if err != nil {
		return HealthCheck{Name: name, State: HealthFail, Detail: err.Error()}
	}
	if len(its) == 0 {
		return HealthCheck{Name: name, State: HealthOK, Detail: "no unfinished orders, cancels or withdrawals"}
	}
	overdue := 0
	for _, it := range its {
		if it.NextDue.Before(now.Add(-time.Minute)) {
			overdue++
		}
	}
	detail := itoa(len(its)) + " unfinished (oldest since " + formatTime(its[0].CreatedAt) + ")"
	state := HealthOK
	if overdue > 0 {
		state = HealthWarn
		detail += "; " + itoa(overdue) + " overdue by more than a minute: is the gateway running?"
	}
	return HealthCheck{Name: name, State: state, Detail: detail}
}
