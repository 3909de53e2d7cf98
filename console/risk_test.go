package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// TestRiskPage: the page shows each key's limits and today's usage; its
// halt and resume buttons change the store (and the audit trail) only
// with the session's CSRF token from the console's own origin.
func TestRiskPage(t *testing.T) {
	e := newEnv(t)
	b := e.loggedIn(t)
	b.post("/keys", url.Values{"csrf": {b.csrf}, "label": {"bot"}}, nil)
	keys, _ := e.st.ListClientKeys(t.Context())
	api := keys[0].APIKey
	limit := decimal.RequireFromString("2500.5")
	if _, err := e.st.SetRiskLimits(t.Context(), api, exgate.RiskLimits{DailyNotional: &limit,
		Symbols: []exgate.Symbol{{Base: "BTC", Quote: "USDT"}}}, nil); err != nil {
		t.Fatal(err)
	}
	code, _, body := b.get("/risk")
	for _, want := range []string{api, "dailyNotional", "2500.5 USD", "BTC/USDT", "open orders", "active", "Halt"} {
		if code != 200 || !strings.Contains(body, want) {
			t.Fatalf("GET /risk = %d, want 200 with %q:\n%s", code, want, body)
		}
	}
	halted := func() *exgate.RiskHalt {
		halts, err := e.st.RiskHalts(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return exgate.HaltOf(halts, api)
	}
	// Without the token, or from another origin: refused, nothing halted.
	if code, _, _ := b.post("/risk/"+api+"/halt", url.Values{"reason": {"x"}}, nil); code != http.StatusForbidden || halted() != nil {
		t.Fatalf("halt without the CSRF token = %d (halt %v), want 403 and no halt", code, halted())
	}
	if code, _, _ := b.post("/risk/"+api+"/halt", url.Values{"csrf": {b.csrf}}, map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}); code != http.StatusForbidden || halted() != nil {
		t.Fatalf("cross-site halt = %d, want 403 and no halt", code)
	}
	if code, _, _ := b.post("/risk/"+api+"/halt", url.Values{"csrf": {b.csrf}, "reason": {"runaway bot"}}, nil); code != http.StatusSeeOther {
		t.Fatalf("halt = %d, want 303", code)
	}
	if h := halted(); h == nil || h.Reason != "runaway bot" {
		t.Fatalf("halt after the button = %+v, want runaway bot", h)
	}
	if _, _, body := b.get("/risk"); !strings.Contains(body, "halted: runaway bot") || !strings.Contains(body, "Resume") {
		t.Fatalf("the page does not show the halt:\n%s", body)
	}
	if code, _, _ := b.post("/risk/"+api+"/resume", url.Values{"csrf": {b.csrf}}, nil); code != http.StatusSeeOther || halted() != nil {
		t.Fatalf("resume = %d (halt %v), want 303 and no halt", code, halted())
	}
	if code, _, _ := b.post("/risk/all/halt", url.Values{"csrf": {b.csrf}, "reason": {"incident"}}, nil); code != http.StatusSeeOther {
		t.Fatalf("halt every key = %d", code)
	}
	if h := halted(); h == nil || h.APIKey != exgate.RiskHaltAll {
		t.Fatalf("global halt = %+v", h)
	}
	if code, _, _ := b.post("/risk/all/resume", url.Values{"csrf": {b.csrf}}, nil); code != http.StatusSeeOther || halted() != nil {
		t.Fatalf("resume every key = %d (halt %v)", code, halted())
	}
	if code, _, _ := b.post("/risk/nope/halt", url.Values{"csrf": {b.csrf}}, nil); code != http.StatusNotFound {
		t.Fatalf("halt of an unknown key = %d, want 404", code)
	}
	entries, _ := e.st.AuditLog(t.Context(), exgate.AuditFilter{})
	var actions []string
	for _, en := range entries {
		if strings.HasPrefix(en.Action, "risk ") && en.Actor == exgate.AuditActorConsole {
			actions = append(actions, en.Action)
		}
	}
	if strings.Join(actions, ",") != "risk resume,risk halt,risk resume,risk halt" {
		t.Fatalf("console risk entries in the audit trail = %v", actions)
	}
}
