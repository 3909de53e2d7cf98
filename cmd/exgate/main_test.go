package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is an io.Writer tests can read while a command writes to it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor polls the buffer until re matches; commands print once, so this
// ends as soon as the server is up.
func waitFor(t *testing.T, b *syncBuffer, re *regexp.Regexp, errc <-chan error) []string {
	t.Helper()
	deadline := time.After(20 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if m := re.FindStringSubmatch(b.String()); m != nil {
			return m
		}
		select {
		case err := <-errc:
			t.Fatalf("command ended early: %v\n%s", err, b.String())
		case <-deadline:
			t.Fatalf("no match for %s in:\n%s", re, b.String())
		case <-tick.C:
		}
	}
}

// runCmd runs one command to completion.
func runCmd(t *testing.T, env map[string]string, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(t.Context(), args, func(k string) string { return env[k] }, strings.NewReader(""), &out, &errOut)
	if err != nil {
		return out.String() + errOut.String(), err
	}
	return out.String(), nil
}

// startServer runs a server command until the test ends and returns its
// output buffer.
func startServer(t *testing.T, env map[string]string, args ...string) (*syncBuffer, <-chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, args, func(k string) string { return env[k] }, strings.NewReader(""), out, out)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-errc:
			if err != nil {
				t.Errorf("server ended with %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("server did not stop")
		}
	})
	return out, errc
}

var curlRe = regexp.MustCompile(`(?s)curl -s -H 'X-API-KEY: (\S+)' -H 'X-API-EXCHANGE-KEY: (\S+)' \\\n\s+'(\S+)'`)

// TestDemo follows the README: start the demo, run the printed curl.
func TestDemo(t *testing.T) {
	dir := t.TempDir()
	out, errc := startServer(t, nil, "demo", "--addr", "127.0.0.1:0", "--console-addr", "127.0.0.1:0", "--data-dir", dir)
	m := waitFor(t, out, curlRe, errc)
	waitFor(t, out, regexp.MustCompile(`exgate listening`), errc)
	checkConsoleLink(t, waitFor(t, out, regexp.MustCompile(`(http://127\.0\.0\.1:\d+)/login\?token=\S+`), errc)[0])
	pasted := false
	if path, err := exec.LookPath("curl"); err == nil {
		// Paste it as a user would.
		cmdText := m[0]
		got, err := exec.CommandContext(t.Context(), "bash", "-c", cmdText).Output()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		checkDemoBalances(t, got)
		pasted = true
	}
	req, _ := http.NewRequestWithContext(t.Context(), "GET", m[3], nil)
	req.Header.Set("X-API-KEY", m[1])
	req.Header.Set("X-API-EXCHANGE-KEY", m[2])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if pasted {
		// The command carries a signed timestamp: it reads once
		// (docs/contract.md 2.1).
		if resp.StatusCode != 401 || !strings.Contains(string(body), "REPLAYED_REQUEST") {
			t.Fatalf("the pasted command sent again: %d %s; want 401 REPLAYED_REQUEST", resp.StatusCode, body)
		}
		body = nil
	} else if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if !pasted {
		checkDemoBalances(t, body)
	}

	// exgate call with the printed variables.
	env := map[string]string{}
	for _, name := range []string{"EXGATE_URL", "EXGATE_API_KEY", "EXGATE_SECRET_KEY", "EXGATE_EXCHANGE_KEY"} {
		mm := regexp.MustCompile(name + `=(\S+)`).FindStringSubmatch(out.String())
		if mm == nil {
			t.Fatalf("demo did not print %s", name)
		}
		env[name] = mm[1]
	}
	got, err := runCmd(t, env, "call", "POST", "/v1/order/market", "asset1=BTC", "asset2=USDT", "side=BUY", "quantity=100", "quantityIn=asset2")
	if err != nil {
		t.Fatalf("call: %v: %s", err, got)
	}
	var order map[string]any
	if err := json.Unmarshal([]byte(got), &order); err != nil || order["status"] != "FILLED" {
		t.Fatalf("order: %v %s", err, got)
	}
	got, err = runCmd(t, env, "call", "GET", "/v1/market/order-book", "asset1=BTC", "asset2=DOGE")
	if err == nil || !strings.Contains(got, "UNKNOWN_SYMBOL") {
		t.Fatalf("call of an unknown pair: %v %s", err, got)
	}

	// exgate stream prints the orders channel (GET /v1/stream through
	// the gateway as demo wires it) while the lifecycle below runs.
	streamOut, streamErr := startServer(t, env, "stream", "orders")
	waitFor(t, streamOut, regexp.MustCompile(`"op":"subscribed","channel":"orders"`), streamErr)

	// The order lifecycle through the gateway as serve wires it (the
	// coalescing wrapper around sim, the withdrawal allowlist around the
	// journal): a limit order far below the market rests, is listed open,
	// and is canceled by its client id.
	for _, step := range []struct {
		args []string
		want string
	}{
		{[]string{"POST", "/v1/order/limit", "asset1=BTC", "asset2=USDT", "side=BUY", "quantity=0.01", "price=1000", "clientOrderId=demo-rest"}, `"status":"PENDING"`},
		{[]string{"GET", "/v1/order/open", "asset1=BTC", "asset2=USDT"}, `"clientOrderId":"demo-rest"`},
		{[]string{"POST", "/v1/order/cancel", "clientOrderId=demo-rest"}, `"status":"CANCELED"`},
		{[]string{"GET", "/v1/order/open", "asset1=BTC", "asset2=USDT"}, `[]`},
	} {
		got, err := runCmd(t, env, append([]string{"call"}, step.args...)...)
		if err != nil || !strings.Contains(got, step.want) {
			t.Fatalf("call %s: %v %s; want %s", strings.Join(step.args, " "), err, got, step.want)
		}
	}
	// One line per message: the order resting, then canceled.
	waitFor(t, streamOut, regexp.MustCompile(`(?s)"clientOrderId":"demo-rest"[^\n]*"status":"PENDING"|"status":"PENDING"[^\n]*"clientOrderId":"demo-rest"`), streamErr)
	waitFor(t, streamOut, regexp.MustCompile(`"status":"CANCELED"[^\n]*"clientOrderId":"demo-rest"|"clientOrderId":"demo-rest"[^\n]*"status":"CANCELED"`), streamErr)
	for _, line := range strings.Split(strings.TrimSpace(streamOut.String()), "\n") {
		if !json.Valid([]byte(line)) {
			t.Errorf("exgate stream printed %q, not one JSON message a line", line)
		}
	}
	// Transfers between the demo key's two wallets (docs/contract.md
	// 2.10) through the gateway as demo wires it.
	for _, step := range []struct {
		args []string
		want string
	}{
		{[]string{"POST", "/v1/wallet/transfer", "asset=BTC", "amount=1.5", "from=spot", "to=funding", "clientTransferId=demo-move"}, `"status":"completed"`},
		{[]string{"GET", "/v1/wallet/account-balance", "wallet=funding"}, `{"asset":"BTC","available":"1.5","locked":"0"}`},
		{[]string{"GET", "/v1/wallet/transfer", "clientTransferId=demo-move"}, `"from":"spot","to":"funding"`},
		{[]string{"GET", "/v1/wallet/transfers", "asset=BTC"}, `"clientTransferId":"demo-move"`},
		{[]string{"POST", "/v1/wallet/transfer", "asset=BTC", "amount=1.5", "from=funding", "to=spot"}, `"status":"completed"`},
		{[]string{"GET", "/v1/wallet/account-balance", "wallet=funding"}, `[]`},
	} {
		got, err := runCmd(t, env, append([]string{"call"}, step.args...)...)
		if err != nil || !strings.Contains(got, step.want) {
			t.Fatalf("call %s: %v %s; want %s", strings.Join(step.args, " "), err, got, step.want)
		}
	}
	// A refused subscription ends the command with the gateway's error.
	got, err = runCmd(t, env, "stream", "book", "asset1=BTC", "asset2=USDT", "depth=101")
	if err == nil || !strings.Contains(got, `"code":"INVALID_PARAMETER"`) {
		t.Fatalf("stream with depth 101: %v %s", err, got)
	}
}

// checkConsoleLink opens a console login link: the login page answers
// with its button.
func checkConsoleLink(t *testing.T, link string) {
	t.Helper()
	resp, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `action="/login"`) || resp.Header.Get("Content-Security-Policy") == "" {
		t.Fatalf("GET %s = %d: %.300s", link, resp.StatusCode, body)
	}
}

// TestConsoleLogin: console-login needs the console's address or URL and
// prints a link of that origin.
func TestConsoleLogin(t *testing.T) {
	dir := t.TempDir()
	if got, err := runCmd(t, nil, "console-login", "--data-dir", dir); err == nil || !strings.Contains(err.Error(), "--console-addr") {
		t.Fatalf("console-login without an address: %v %s", err, got)
	}
	got, err := runCmd(t, map[string]string{"EXGATE_CONSOLE_URL": "https://console.example"}, "console-login", "--data-dir", dir)
	if err != nil || !regexp.MustCompile(`^https://console\.example/login\?token=[A-Za-z0-9_-]{43}\n$`).MatchString(got) {
		t.Fatalf("console-login = %v %q", err, got)
	}
	got, err = runCmd(t, nil, "console-login", "--data-dir", dir, "--console-addr", ":8090")
	if err != nil || !strings.HasPrefix(got, "http://127.0.0.1:8090/login?token=") {
		t.Fatalf("console-login --console-addr :8090 = %v %q", err, got)
	}
	if got, err := runCmd(t, map[string]string{"EXGATE_CONSOLE_ADDR": "nonsense"}, "console-login", "--data-dir", dir); err == nil || !strings.Contains(err.Error(), "EXGATE_CONSOLE_ADDR") {
		t.Fatalf("console-login with EXGATE_CONSOLE_ADDR=nonsense: %v %s", err, got)
	}
}

func checkDemoBalances(t *testing.T, body []byte) {
	t.Helper()
	var bals []struct{ Asset, Available string }
	if err := json.Unmarshal(body, &bals); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	want := map[string]string{"BTC": "10", "ETH": "100", "USDT": "100000", "SOL": "500", "XRP": "1000", "BNB": "100"}
	if len(bals) != len(want) {
		t.Fatalf("balances %s", body)
	}
	for _, b := range bals {
		if want[b.Asset] != b.Available {
			t.Errorf("%s = %s, want %s", b.Asset, b.Available, want[b.Asset])
		}
	}
}

func TestAdminCommands(t *testing.T) {
	env := map[string]string{"EXGATE_DATA_DIR": t.TempDir()}
	out, err := runCmd(t, env, "keys", "create", "--label", "bot")
	if err != nil {
		t.Fatal(err, out)
	}
	var key struct{ APIKey, SecretKey, Label string }
	if err := json.Unmarshal([]byte(out), &key); err != nil || key.APIKey == "" || key.SecretKey == "" || key.Label != "bot" {
		t.Fatalf("keys create printed %q (%v)", out, err)
	}
	if strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Errorf("keys create printed more than one line: %q", out)
	}
	tests := []struct {
		name    string
		args    []string
		wantErr bool
		want    string
		hidden  string
	}{
		{name: "list keys", args: []string{"keys", "list"}, want: key.APIKey, hidden: key.SecretKey},
		{name: "add sim", args: []string{"exchange-keys", "add", "--api-key", key.APIKey, "--name", "paper", "--exchange", "sim"}, want: `"permissions":["read","trade"]`},
		{name: "add binance", args: []string{"exchange-keys", "add", "--api-key", key.APIKey, "--name", "main", "--exchange", "binance", "--key", "K", "--secret", "S", "--permissions", "read,trade,withdraw"}, want: `"withdraw"`, hidden: `"S"`},
		{name: "add duplicate", args: []string{"exchange-keys", "add", "--api-key", key.APIKey, "--name", "paper", "--exchange", "sim"}, wantErr: true, want: "already exists"},
		{name: "add binance without secret", args: []string{"exchange-keys", "add", "--api-key", key.APIKey, "--name", "x", "--exchange", "binance", "--key", "K"}, wantErr: true, want: "--secret"},
		{name: "add kraken bad secret", args: []string{"exchange-keys", "add", "--api-key", key.APIKey, "--name", "x", "--exchange", "kraken", "--key", "K", "--secret", "not base64!"}, wantErr: true, want: "base64"},
		{name: "add unknown exchange", args: []string{"exchange-keys", "add", "--api-key", key.APIKey, "--name", "x", "--exchange", "ftx"}, wantErr: true, want: "--exchange"},
		{name: "add bad permission", args: []string{"exchange-keys", "add", "--api-key", key.APIKey, "--name", "x", "--exchange", "sim", "--permissions", "read,admin"}, wantErr: true, want: "admin"},
		{name: "add for unknown client", args: []string{"exchange-keys", "add", "--api-key", "nobody", "--name", "x", "--exchange", "sim"}, wantErr: true, want: "no active client key"},
		{name: "list exchange keys", args: []string{"exchange-keys", "list", "--api-key", key.APIKey}, want: `"name":"main"`, hidden: `"S"`},
		{name: "remove", args: []string{"exchange-keys", "remove", "--api-key", key.APIKey, "--name", "paper"}, want: "removed"},
		{name: "remove again", args: []string{"exchange-keys", "remove", "--api-key", key.APIKey, "--name", "paper"}, wantErr: true, want: "no exchange key"},
		{name: "revoke", args: []string{"keys", "revoke", "--api-key", key.APIKey}, want: "revoked"},
		{name: "revoke unknown", args: []string{"keys", "revoke", "--api-key", "nobody"}, wantErr: true, want: "no key"},
		{name: "unknown command", args: []string{"frobnicate"}, wantErr: true, want: "unknown command"},
		{name: "postgres without master key", args: []string{"keys", "list", "--database-url", "postgres://localhost/x"}, wantErr: true, want: "EXGATE_MASTER_KEY"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runCmd(t, env, tc.args...)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v; output %s", err, tc.wantErr, out)
			}
			text := out
			if err != nil {
				text += err.Error()
			}
			if !strings.Contains(text, tc.want) {
				t.Errorf("output %q does not contain %q", text, tc.want)
			}
			if tc.hidden != "" && strings.Contains(out, tc.hidden) {
				t.Errorf("output %q shows a secret", out)
			}
		})
	}
}
