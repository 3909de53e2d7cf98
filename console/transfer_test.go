package console_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/exgate/exgate"
)

// TestTransferForm: a sim key's account page shows both wallets and a
// transfer form; the form moves funds through the journal (journaled,
// audited), refuses what the API refuses and needs the session's CSRF
// token.
func TestTransferForm(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	b := e.loggedIn(t)
	b.post("/keys", url.Values{"csrf": {b.csrf}, "label": {"bot"}}, nil)
	keys, _ := e.st.ListClientKeys(ctx)
	api := keys[0].APIKey
	b.post("/keys/"+api+"/exchange-keys", url.Values{"csrf": {b.csrf}, "name": {"main"}, "exchange": {"sim"}, "permissions": {"trade"}}, nil)
	b.post("/keys/"+api+"/exchange-keys", url.Values{"csrf": {b.csrf}, "name": {"viewer"}, "exchange": {"sim"}}, nil)
	account := "/keys/" + api + "/exchange-keys/main"
	_, _, page := b.get(account)
	if !strings.Contains(page, `id="funding-balances"`) || !strings.Contains(page, `action="`+account+`/transfer"`) ||
		!regexp.MustCompile(`(?s)id="transfer-form".*name="csrf" value="`+regexp.QuoteMeta(b.csrf)+`"`).MatchString(page) {
		t.Fatalf("the account page has no funding wallet or transfer form with the CSRF token")
	}
	form := url.Values{"csrf": {b.csrf}, "asset": {"btc"}, "amount": {"2.5"}, "from": {"spot"}, "to": {"funding"}}
	code, hd, _ := b.post(account+"/transfer", form, nil)
	if code != http.StatusSeeOther || !strings.Contains(hd.Get("Location"), "completed") {
		t.Fatalf("transfer = %d %q", code, hd.Get("Location"))
	}
	_, _, page = b.get(account)
	if !regexp.MustCompile(`(?s)id="funding-balances".*<td>BTC</td><td class="num">2.5</td>`).MatchString(page) ||
		!regexp.MustCompile(`(?s)id="journal-transfers".*<td class="num">2.5</td><td>BTC</td><td>spot</td><td>funding</td>.*completed.*final: nothing to do`).MatchString(page) {
		t.Fatalf("the page does not show the funding balance and the journaled transfer")
	}
	cred, _ := e.st.Credential(ctx, api, "main")
	its, _ := e.st.RecentIntents(ctx, cred.ID, exgate.IntentTransfer, 0)
	if len(its) != 1 {
		t.Fatalf("journaled transfers = %d, want 1", len(its))
	}
	entries, _ := e.st.AuditLog(ctx, exgate.AuditFilter{APIKey: api, Limit: 1})
	if len(entries) != 1 || entries[0].Action != "transfer" || entries[0].IntentID != its[0].ID || entries[0].Status != 200 {
		t.Errorf("last audit entry = %+v", entries)
	}

	// Refused: more than the wallet holds, the same wallet twice, a bad
	// amount; without the CSRF token nothing is done at all.
	for _, bad := range []url.Values{
		{"csrf": {b.csrf}, "asset": {"BTC"}, "amount": {"3"}, "from": {"funding"}, "to": {"spot"}},
		{"csrf": {b.csrf}, "asset": {"BTC"}, "amount": {"1"}, "from": {"spot"}, "to": {"spot"}},
		{"csrf": {b.csrf}, "asset": {"BTC"}, "amount": {"-1"}, "from": {"spot"}, "to": {"funding"}},
		{"csrf": {b.csrf}, "asset": {"BTC"}, "amount": {"lots"}, "from": {"spot"}, "to": {"funding"}},
	} {
		code, hd, _ := b.post(account+"/transfer", bad, nil)
		if code != http.StatusSeeOther || !strings.Contains(hd.Get("Location"), "problem=") {
			t.Errorf("transfer %v = %d %q, want a redirect with the problem", bad, code, hd.Get("Location"))
		}
	}
	// As on the API, the exchange key needs the trade permission.
	code, hd, _ = b.post("/keys/"+api+"/exchange-keys/viewer/transfer", url.Values{"csrf": {b.csrf}, "asset": {"BTC"}, "amount": {"1"}, "from": {"spot"}, "to": {"funding"}}, nil)
	if code != http.StatusSeeOther || !strings.Contains(hd.Get("Location"), "PERMISSION_DENIED") {
		t.Errorf("transfer on a read-only key = %d %q", code, hd.Get("Location"))
	}
	noCSRF := url.Values{"asset": {"BTC"}, "amount": {"1"}, "from": {"spot"}, "to": {"funding"}}
	if code, _, _ := b.post(account+"/transfer", noCSRF, nil); code != http.StatusForbidden {
		t.Errorf("transfer without the CSRF token = %d, want 403", code)
	}
	bals, _ := e.st.SimWalletBalances(ctx, cred.ID, exgate.WalletFunding)
	if got := bals["BTC"].String(); got != "2.5" {
		t.Errorf("funding BTC after the refusals = %s, want 2.5", got)
	}
}
