package console

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/exgate/exgate"
)

// The risk page (docs/contract.md 2.8, docs/risk.md): each client key's
// limits, today's usage and state, with halt and resume buttons (POSTs
// with the session's CSRF token, like every change). Limits are set with
// `exgate risk set`; halt --cancel-open is the command line's.

// riskRow is one client key on the risk page.
type riskRow struct {
	Account exgate.RiskAccount
	Label   string
	Limits  []riskLimit
}

// riskLimit is one limit as the page shows it.
type riskLimit struct{ Name, Value string }

type riskData struct {
	Keys []riskRow
	// Global is the halt of every key, if any.
	Global *exgate.RiskHalt
	// Day is the UTC day the usage counts.
	Day string
}

func (h *Handler) riskPage(w http.ResponseWriter, r *http.Request, s session) {
	h.renderRisk(w, r, s, http.StatusOK, r.URL.Query().Get("notice"), "")
}

func (h *Handler) renderRisk(w http.ResponseWriter, r *http.Request, s session, status int, notice, problem string) {
	ctx := r.Context()
	keys, err := h.o.Store.ListClientKeys(ctx)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	limits, err := h.o.Store.AllRiskLimits(ctx)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	halts, err := h.o.Store.RiskHalts(ctx)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	day := exgate.RiskDay(h.o.Now())
	d := riskData{Global: exgate.HaltOf(halts, exgate.RiskHaltAll), Day: day}
	for _, k := range keys {
		if !k.Active() {
			continue
		}
		u, err := h.o.Store.RiskUsage(ctx, k.APIKey, day)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		row := riskRow{Account: exgate.NewRiskAccount(k.APIKey, limits[k.APIKey], exgate.HaltOf(halts, k.APIKey), u), Label: k.Label}
		row.Limits = limitRows(limits[k.APIKey])
		d.Keys = append(d.Keys, row)
	}
	h.render(w, r, status, "risk", page{Title: "Risk limits", Nav: "risk", CSRF: s.csrf, LoggedIn: true,
		Notice: notice, Error: problem, Data: d})
}

// limitRows lists the limits set, by name, as `risk show` writes them.
func limitRows(l exgate.RiskLimits) []riskLimit {
	var out []riskLimit
	add := func(name, v string) { out = append(out, riskLimit{name, v}) }
	if l.Symbols != nil {
		names := make([]string, len(l.Symbols))
		for i, s := range l.Symbols {
			names[i] = s.String()
		}
		add(exgate.LimitSymbols, strings.Join(names, ", "))
	}
	if v := l.MaxOrderNotional; v != nil {
		add(exgate.LimitMaxOrderNotional, v.String()+" USD")
	}
	if v := l.PriceBand; v != nil {
		add(exgate.LimitPriceBand, v.String()+" %")
	}
	if v := l.MaxOpenOrders; v != nil {
		add(exgate.LimitMaxOpenOrders, strconv.FormatInt(*v, 10))
	}
	if v := l.DailyNotional; v != nil {
		add(exgate.LimitDailyNotional, v.String()+" USD")
	}
	if v := l.DailyWithdrawal; v != nil {
		add(exgate.LimitDailyWithdrawal, v.String()+" USD")
	}
	return out
}

// riskTarget is the key a halt or resume is for: a client key, or "all".
func riskTarget(r *http.Request) string {
	if api := r.PathValue("api"); api != "all" {
		return api
	}
	return exgate.RiskHaltAll
}

// haltKey halts trading for a key (or every key), with the reason typed.
func (h *Handler) haltKey(w http.ResponseWriter, r *http.Request, s session) {
	target := riskTarget(r)
	reason := strings.TrimSpace(r.PostForm.Get("reason"))
	if reason == "" {
		reason = "halted from the console"
	}
	if len(reason) > 500 {
		h.renderRisk(w, r, s, http.StatusBadRequest, "", "The reason must be at most 500 characters.")
		return
	}
	err := h.o.Store.HaltTrading(r.Context(), exgate.RiskHalt{APIKey: target, Reason: reason, CreatedAt: h.o.Now()})
	if errors.Is(err, exgate.ErrNotFound) {
		h.notFound(w, r, s, "No such client key.")
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	api := target
	if target == exgate.RiskHaltAll {
		api = ""
	}
	h.audit(r, "risk halt", api, "", map[string]string{"target": target, "reason": reason})
	http.Redirect(w, r, "/risk?notice=halted", http.StatusSeeOther)
}

// resumeKey ends a key's halt (or, for all, every halt).
func (h *Handler) resumeKey(w http.ResponseWriter, r *http.Request, s session) {
	target := riskTarget(r)
	n, err := h.o.Store.ResumeTrading(r.Context(), target)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	api := target
	if target == exgate.RiskHaltAll {
		api = ""
	}
	h.audit(r, "risk resume", api, "", map[string]string{"target": target, "resumed": strconv.Itoa(n)})
	http.Redirect(w, r, "/risk?notice=resumed", http.StatusSeeOther)
}
