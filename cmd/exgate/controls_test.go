package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" driver, to tamper with the store
)

// jsonLines decodes one JSON object per line.
func jsonLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var rows []map[string]any
	for line := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		rows = append(rows, m)
	}
	return rows
}

func mustRun(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	out, err := runCmd(t, env, args...)
	if err != nil {
		t.Fatalf("exgate %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// TestControlCommands walks through the operator's controls with the CLI
// and reads them back, and the audit trail of every change, without a
// secret in it.
func TestControlCommands(t *testing.T) {
	env := map[string]string{"EXGATE_DATA_DIR": t.TempDir()}
	const exSecret = "EXCHANGE-SECRET-4b1f"
	const exPassphrase = "EXCHANGE-PASSPHRASE-9c2e"

	var key struct{ APIKey, SecretKey, Label string }
	out := mustRun(t, env, "keys", "create", "--label", "bot", "--allow-ip", "10.0.0.0/8, 192.0.2.7")
	if err := json.Unmarshal([]byte(out), &key); err != nil || key.APIKey == "" || strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Fatalf("keys create printed %q (%v); want one JSON object", out, err)
	}
	if out := mustRun(t, env, "keys", "list"); !strings.Contains(out, `"allowIps":["10.0.0.0/8","192.0.2.7/32"]`) {
		t.Fatalf("keys list = %s, want the allowlist", out)
	}
	mustRun(t, env, "keys", "set-allow-ip", "--api-key", key.APIKey, "--allow-ip", "2001:db8::/32")
	if out := mustRun(t, env, "keys", "list"); !strings.Contains(out, `"allowIps":["2001:db8::/32"]`) {
		t.Fatalf("keys list after set-allow-ip = %s", out)
	}
	mustRun(t, env, "keys", "set-allow-ip", "--api-key", key.APIKey, "--allow-ip", "")
	if out := mustRun(t, env, "keys", "list"); strings.Contains(out, "allowIps") {
		t.Fatalf("keys list after clearing = %s, want no allowlist", out)
	}
	mustRun(t, env, "exchange-keys", "add", "--api-key", key.APIKey, "--name", "main", "--exchange", "gateio",
		"--key", "EK", "--secret", exSecret, "--passphrase", exPassphrase, "--permissions", "read,withdraw")
	addr := []string{"--api-key", key.APIKey, "--name", "main", "--asset", "xrp", "--network", "XRP", "--address", "rPEPPER7kfTD9w2To4CQk6UCfuHM9c6GDY"}
	// Held 24 h by default (issue 23: a newly allowed address could be
	// used at once); the command line may say --hold 0.
	out = mustRun(t, env, append([]string{"exchange-keys", "allow-address", "--tag", "7"}, addr...)...)
	if !strings.Contains(out, `"status":"held"`) || !strings.Contains(out, `"asset":"XRP"`) {
		t.Fatalf("allow-address printed %s, want the held entry", out)
	}
	mustRun(t, env, append([]string{"exchange-keys", "allow-address", "--hold", "0"}, addr...)...)
	rows := jsonLines(t, mustRun(t, env, "exchange-keys", "list-addresses", "--api-key", key.APIKey, "--name", "main"))
	if len(rows) != 2 || rows[0]["status"] != "allowed" || rows[1]["status"] != "held" || rows[1]["tag"] != "7" {
		t.Fatalf("list-addresses = %v, want the untagged entry allowed, the tagged one held", rows)
	}
	mustRun(t, env, append([]string{"exchange-keys", "deny-address"}, addr...)...)
	rows = jsonLines(t, mustRun(t, env, "exchange-keys", "list-addresses", "--api-key", key.APIKey, "--name", "main"))
	if len(rows) != 2 || rows[0]["status"] != "denied" {
		t.Fatalf("list-addresses after deny = %v", rows)
	}
	mustRun(t, env, "exchange-keys", "remove", "--api-key", key.APIKey, "--name", "main")
	mustRun(t, env, "keys", "revoke", "--api-key", key.APIKey)

	errs := []struct {
		name string
		args []string
		want string
	}{
		{"bad prefix", []string{"keys", "create", "--allow-ip", "10.0.0.1/8"}, "did you mean 10.0.0.0/8"},
		{"not an address", []string{"keys", "set-allow-ip", "--api-key", key.APIKey, "--allow-ip", "example.com"}, "--allow-ip"},
		{"set-allow-ip without --allow-ip", []string{"keys", "set-allow-ip", "--api-key", key.APIKey}, "--allow-ip is required"},
		{"set-allow-ip unknown key", []string{"keys", "set-allow-ip", "--api-key", "nobody", "--allow-ip", "10.0.0.0/8"}, "no key"},
		{"allow on a removed exchange key", append([]string{"exchange-keys", "allow-address", "--tag", "7"}, addr...), "no exchange key"},
		{"allow without address", []string{"exchange-keys", "allow-address", "--api-key", key.APIKey, "--name", "main", "--asset", "BTC", "--network", "BTC"}, "--address"},
		{"deny unknown", append([]string{"exchange-keys", "deny-address", "--tag", "8"}, addr...), "not allowed"},
		{"hold on deny", append([]string{"exchange-keys", "deny-address", "--hold", "1h"}, addr...), "--hold"},
		{"allow-ip on revoke", []string{"keys", "revoke", "--api-key", key.APIKey, "--allow-ip", "10.0.0.0/8"}, "keys set-allow-ip"},
		{"audit bad since", []string{"audit", "--since", "yesterday"}, "RFC 3339"},
	}
	for _, tc := range errs {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runCmd(t, env, tc.args...)
			if err == nil || !strings.Contains(out+err.Error(), tc.want) {
				t.Fatalf("exgate %s = %v, %s; want an error saying %q", strings.Join(tc.args, " "), err, out, tc.want)
			}
		})
	}

	all := mustRun(t, env, "audit")
	for _, secret := range []string{key.SecretKey, exSecret, exPassphrase, `"EK"`} {
		if strings.Contains(all, secret) {
			t.Errorf("audit output holds a secret %q:\n%s", secret, all)
		}
	}
	var actions []string
	for _, r := range jsonLines(t, all) {
		actions = append(actions, r["action"].(string))
		if r["actor"] != "cli" || r["apiKey"] != key.APIKey {
			t.Errorf("entry %v, want actor cli and the key", r)
		}
	}
	want := []string{"keys revoke", "exchange-keys remove", "exchange-keys deny-address", "exchange-keys allow-address",
		"exchange-keys allow-address", "exchange-keys add", "keys set-allow-ip", "keys set-allow-ip", "keys set-allow-ip", "keys create"}
	if strings.Join(actions, "|") != strings.Join(want, "|") {
		t.Errorf("audit actions, newest first:\n got %q\nwant %q", actions, want)
	}
	if rows := jsonLines(t, mustRun(t, env, "audit", "--limit", "2")); len(rows) != 2 || rows[0]["action"] != "keys revoke" {
		t.Errorf("audit --limit 2 = %v", rows)
	}
	if rows := jsonLines(t, mustRun(t, env, "audit", "--api-key", "nobody")); len(rows) != 0 {
		t.Errorf("audit of another key = %v, want none", rows)
	}
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	if rows := jsonLines(t, mustRun(t, env, "audit", "--since", future)); len(rows) != 0 {
		t.Errorf("audit --since the future = %v, want none", rows)
	}
}

// TestStartupRefusals: an instance with Redis but no database, or with a
// master key that is not its store's, refuses to start and says why.
func TestStartupRefusals(t *testing.T) {
	dir := t.TempDir()
	keyA := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32))
	keyB := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{2}, 32))
	mustRun(t, map[string]string{"EXGATE_DATA_DIR": dir, "EXGATE_MASTER_KEY": keyA}, "keys", "create")

	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"redis without database", map[string]string{"EXGATE_DATA_DIR": t.TempDir(), "EXGATE_REDIS_URL": "redis://127.0.0.1:1/0"},
			[]string{"serve", "--addr", "127.0.0.1:0"}, "EXGATE_DATABASE_URL is not"},
		{"redis flag without database", map[string]string{"EXGATE_DATA_DIR": t.TempDir()},
			[]string{"serve", "--addr", "127.0.0.1:0", "--redis-url", "redis://127.0.0.1:1/0"}, "EXGATE_DATABASE_URL is not"},
		{"wrong master key", map[string]string{"EXGATE_DATA_DIR": dir, "EXGATE_MASTER_KEY": keyB},
			[]string{"serve", "--addr", "127.0.0.1:0"}, "wrong master key"},
		{"wrong master key file", map[string]string{"EXGATE_DATA_DIR": dir},
			[]string{"serve", "--addr", "127.0.0.1:0"}, "wrong master key"},
		{"admin command with a wrong master key", map[string]string{"EXGATE_DATA_DIR": dir, "EXGATE_MASTER_KEY": keyB},
			[]string{"keys", "create"}, "wrong master key"},
		{"bad trusted proxies", map[string]string{"EXGATE_DATA_DIR": t.TempDir(), "EXGATE_TRUSTED_PROXIES": "nginx"},
			[]string{"serve", "--addr", "127.0.0.1:0"}, "EXGATE_TRUSTED_PROXIES"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runCmd(t, tc.env, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("exgate %s = %v (%s); want a refusal naming %q", strings.Join(tc.args, " "), err, out, tc.want)
			}
		})
	}
	// The right key still opens the store, and the refusals changed nothing.
	out := mustRun(t, map[string]string{"EXGATE_DATA_DIR": dir, "EXGATE_MASTER_KEY": keyA}, "keys", "list")
	if n := len(jsonLinesArray(t, out)); n != 1 {
		t.Fatalf("keys list = %s, want the one key", out)
	}
}

func jsonLinesArray(t *testing.T, out string) []any {
	t.Helper()
	var v []any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%q: %v", out, err)
	}
	return v
}

// TestReadyzFailsOnMasterKey: when the store's master key check no longer
// opens under the instance's key (the store was replaced by one made
// under another key), /readyz fails and says so.
func TestReadyzFailsOnMasterKey(t *testing.T) {
	dir := t.TempDir()
	out, errc := startServer(t, map[string]string{"EXGATE_DATA_DIR": dir}, "serve", "--addr", "127.0.0.1:0")
	m := waitFor(t, out, regexp.MustCompile(`addr=(127\.0\.0\.1:\d+)`), errc)
	ready := func() (int, string) {
		resp, err := http.Get("http://" + m[1] + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if status, body := ready(); status != 200 {
		t.Fatalf("/readyz = %d %s, want 200", status, body)
	}
	db, err := sql.Open("sqlite", filepath.Join(dir, "exgate.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	other := hmac.New(sha256.New, []byte("another key"))
	if _, err := db.Exec(`UPDATE store_meta SET value = ? WHERE name = 'master_key_check'`, other.Sum(nil)); err != nil {
		t.Fatal(err)
	}
	status, body := ready()
	if status != 503 || !strings.Contains(body, "master key") {
		t.Fatalf("/readyz = %d %s, want 503 naming the master key", status, body)
	}
}

// TestDemoIsAudited: the keys the demo creates are admin changes too. It
// holds the demo's console port (if free) while it runs, so that it passes
// while a user's own `exgate demo` serves there: tests use ephemeral ports.
func TestDemoIsAudited(t *testing.T) {
	if ln, err := net.Listen("tcp", demoConsoleAddr); err == nil {
		defer ln.Close()
	}
	dir := t.TempDir()
	out, errc := startServer(t, nil, "demo", "--addr", "127.0.0.1:0", "--console-addr", "127.0.0.1:0", "--data-dir", dir)
	waitFor(t, out, regexp.MustCompile(`exgate listening`), errc)
	var actions []string
	for _, r := range jsonLines(t, mustRun(t, map[string]string{"EXGATE_DATA_DIR": dir}, "audit")) {
		actions = append(actions, r["action"].(string))
	}
	if strings.Join(actions, "|") != "demo exchange-keys add|demo keys create" {
		t.Fatalf("audit after demo = %q", actions)
	}
}
