package main

import (
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/exgate/exgate/exchange/binance/binancefake"
	"github.com/exgate/exgate/exchange/bybit/bybitfake"
	"github.com/exgate/exgate/exchange/gateio/gateiofake"
	"github.com/exgate/exgate/exchange/kraken/krakenfake"
	"github.com/exgate/exgate/exchange/okx/okxfake"
)

// TestDoctor runs `exgate doctor` against the fakes: one line per check,
// warnings where exgate's permissions and the exchange key's differ, "not
// available" where the exchange does not tell, and a non-zero exit once a
// check fails.
func TestDoctor(t *testing.T) {
	bf := binancefake.New(binancefake.Options{Now: func() time.Time { return time.Now().Add(3 * time.Second) }})
	t.Cleanup(bf.Close)
	bf.AddAccount(binancefake.Account{APIKey: "bfull", Secret: "s1", Balances: map[string]string{"USDT": "1"}})
	bf.AddAccount(binancefake.Account{APIKey: "bnowd", Secret: "s2", NoWithdraw: true})
	kf := krakenfake.New(krakenfake.Options{})
	t.Cleanup(kf.Close)
	const ksecret = "a3Jha2VuLXNlY3JldC1mb3ItdGhlLWUyZS10ZXN0"
	if err := kf.AddAccount(krakenfake.Account{Key: "kkey", Secret: ksecret}); err != nil {
		t.Fatal(err)
	}
	gone := httptest.NewServer(nil)
	gone.Close() // Gate.io unreachable, and no key uses it

	env := map[string]string{"EXGATE_DATA_DIR": t.TempDir(), "EXGATE_BINANCE_URL": bf.URL, "EXGATE_KRAKEN_URL": kf.URL, "EXGATE_GATEIO_URL": gone.URL,
		"EXGATE_OKX_URL": gone.URL, "EXGATE_BYBIT_URL": gone.URL}
	ck := createExchangeKey(t, env, "binance", "bfull", "s1") // read,trade,withdraw: as the exchange key
	add := func(name, exchange, key, secret, perms string) {
		t.Helper()
		if out, err := runCmd(t, env, "exchange-keys", "add", "--api-key", ck.APIKey, "--name", name, "--exchange", exchange,
			"--key", key, "--secret", secret, "--permissions", perms); err != nil {
			t.Fatal(err, out)
		}
	}
	add("nowd", "binance", "bnowd", "s2", "read,trade,withdraw")
	add("readonly", "binance", "bfull", "s1", "read")
	add("kr", "kraken", "kkey", ksecret, "read,trade")

	out, err := runCmd(t, env, "doctor")
	if err != nil {
		t.Fatalf("doctor: %v\n%s", err, out)
	}
	key := clipKey(ck.APIKey)
	for _, want := range []string{
		`(?m)^ok +store +sqlite:.* reachable`,
		`(?m)^ok +redis +not configured`,
		`(?m)^warn +binance clock +the exchange's clock is (2\.9\d*|3(\.0\d*)?)s from ours`,
		`(?m)^ok +kraken reachability +reachable in \S+, clock skew`,
		`(?m)^warn +gateio reachability +unreachable \(no exchange key uses it\)`,
		`(?m)^ok +key ` + regexp.QuoteMeta(key) + `/main +binance accepts the credential; its permissions match`,
		`(?m)^warn +key ` + regexp.QuoteMeta(key) + `/nowd +exgate allows withdraw but the binance key cannot`,
		`(?m)^warn +key ` + regexp.QuoteMeta(key) + `/readonly +the binance key can trade but exgate never needs it`,
		`(?m)^warn +key ` + regexp.QuoteMeta(key) + `/readonly +the binance key can withdraw but exgate never needs it`,
		`(?m)^ok +key ` + regexp.QuoteMeta(key) + `/kr +kraken accepts the credential; its permissions: not available from kraken`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("no line matching %s in:\n%s", want, out)
		}
	}
	for _, secret := range []string{"s1", "s2", ksecret} {
		if strings.Contains(out, " "+secret) {
			t.Errorf("the output holds the secret %q", secret)
		}
	}

	// Gate.io tells only whether the key is IP-restricted; once an exchange
	// key uses it, an unreachable Gate.io fails the run.
	gf := gateiofake.New(gateiofake.Options{})
	t.Cleanup(gf.Close)
	if err := gf.AddAccount(gateiofake.Account{APIKey: "gkey", Secret: "gsecret"}); err != nil {
		t.Fatal(err)
	}
	add("gate", "gateio", "gkey", "gsecret", "read,trade")
	env["EXGATE_GATEIO_URL"] = gf.URL
	if out, err = runCmd(t, env, "doctor"); err != nil {
		t.Fatalf("doctor with Gate.io: %v\n%s", err, out)
	}
	for _, want := range []string{
		`(?m)^ok +gateio reachability +reachable`,
		`(?m)^warn +key \S+/gate +the gateio key is not restricted to this gateway's IP addresses on gateio`,
		`(?m)^ok +key \S+/gate +gateio accepts the credential; its permissions: not available from gateio`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("no line matching %s in:\n%s", want, out)
		}
	}
	env["EXGATE_GATEIO_URL"] = gone.URL
	out, err = runCmd(t, env, "doctor")
	if err == nil || !regexp.MustCompile(`(?m)^FAIL +gateio reachability +unreachable`).MatchString(out) {
		t.Errorf("doctor with an unreachable exchange in use: %v\n%s", err, out)
	}
	env["EXGATE_GATEIO_URL"] = gf.URL

	// OKX reports a key's permissions and IP allow-list (GET
	// /api/v5/account/config); its credential has a passphrase.
	of := okxfake.New(okxfake.Options{})
	t.Cleanup(of.Close)
	if err := of.AddAccount(okxfake.Account{APIKey: "okey", Secret: "osecret", Passphrase: "opass", Perm: "read_only,trade,withdraw", IP: "203.0.113.7"}); err != nil {
		t.Fatal(err)
	}
	if out, err := runCmd(t, env, "exchange-keys", "add", "--api-key", ck.APIKey, "--name", "okx", "--exchange", "okx",
		"--key", "okey", "--secret", "osecret", "--passphrase", "opass", "--permissions", "read,trade"); err != nil {
		t.Fatal(err, out)
	}
	env["EXGATE_OKX_URL"] = of.URL
	if out, err = runCmd(t, env, "doctor"); err != nil {
		t.Fatalf("doctor with OKX: %v\n%s", err, out)
	}
	for _, want := range []string{
		`(?m)^ok +okx reachability +reachable in \S+, clock skew`,
		`(?m)^warn +key \S+/okx +the okx key can withdraw but exgate never needs it`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("no line matching %s in:\n%s", want, out)
		}
	}
	if regexp.MustCompile(`(?m)^warn +key \S+/okx +the okx key is not restricted`).MatchString(out) {
		t.Errorf("the okx key has an IP allow-list, doctor says it has none:\n%s", out)
	}

	// Bybit reports a key's read-only flag, spot and wallet permissions
	// and IP binding (GET /v5/user/query-api).
	yf := bybitfake.New(bybitfake.Options{})
	t.Cleanup(yf.Close)
	if err := yf.AddAccount(bybitfake.Account{APIKey: "ykey", Secret: "ysecret"}); err != nil {
		t.Fatal(err)
	}
	add("bybit", "bybit", "ykey", "ysecret", "read,trade")
	env["EXGATE_BYBIT_URL"] = yf.URL
	if out, err = runCmd(t, env, "doctor"); err != nil {
		t.Fatalf("doctor with Bybit: %v\n%s", err, out)
	}
	for _, want := range []string{
		`(?m)^ok +bybit reachability +reachable in \S+, clock skew`,
		`(?m)^warn +key \S+/bybit +the bybit key can withdraw but exgate never needs it`,
		`(?m)^warn +key \S+/bybit +the bybit key is not restricted`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("no line matching %s in:\n%s", want, out)
		}
	}

	// A credential the exchange refuses fails the run.
	add("wrong", "binance", "bfull", "not-the-secret", "read")
	out, err = runCmd(t, env, "doctor")
	if err == nil || !regexp.MustCompile(`(?m)^FAIL +key \S+/wrong +binance refused the credential`).MatchString(out) {
		t.Errorf("doctor with a refused credential: %v\n%s", err, out)
	}
}
