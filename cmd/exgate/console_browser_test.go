package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/exgate/exgate/cmd/internal/gateway"
	"github.com/exgate/exgate/console"
)

// TestConsoleInBrowser runs the web console's end-to-end test
// (console/browser/e2e.mjs) in headless Chromium against the gateway as
// `exgate serve` runs it: the API and the console on their own ports, the
// sim exchange, SQLite in a temp dir. The screenshots land in
// console/browser/artifacts/. It needs node, /usr/bin/chromium and
// `npm ci` in console/browser; .ci/run provides all three.
func TestConsoleInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("the browser test is not short")
	}
	browserDir, err := filepath.Abs("../../console/browser")
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	how := "install node and chromium (apt-get install nodejs chromium), then run `npm ci` in console/browser, as .ci/run does"
	if err != nil {
		t.Skipf("no node on PATH: %s", how)
	}
	chromium := "/usr/bin/chromium"
	if _, err := os.Stat(chromium); err != nil {
		t.Skipf("no %s: %s", chromium, how)
	}
	if _, err := os.Stat(filepath.Join(browserDir, "node_modules", "playwright-core")); err != nil {
		t.Skipf("no console/browser/node_modules: %s", how)
	}

	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	out, errc := startServer(t, nil, "serve", "--addr", "127.0.0.1:0", "--console-addr", "127.0.0.1:0", "--data-dir", dir)
	api := waitFor(t, out, regexp.MustCompile(`msg="exgate listening" addr=(\S+)`), errc)[1]
	consoleAddr := waitFor(t, out, regexp.MustCompile(`msg="console listening" addr=(\S+)`), errc)[1]
	consoleURL := "http://" + consoleAddr

	var logins []string
	for range 2 {
		link, err := runCmd(t, nil, "console-login", "--data-dir", dir, "--console-addr", consoleAddr)
		if err != nil {
			t.Fatalf("console-login: %v %s", err, link)
		}
		logins = append(logins, strings.TrimSpace(link))
	}
	// A link made eleven minutes ago: its ten minutes are over.
	fs, cfg := gateway.NewFlagSet("test", func(string) string { return "" }, os.Stderr, false)
	if err := fs.Parse([]string{"--data-dir", dir}); err != nil {
		t.Fatal(err)
	}
	st, err := gateway.OpenStore(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	expired, err := console.NewLoginURL(t.Context(), st, consoleURL, time.Now().Add(-console.LoginValidity-time.Minute))
	st.Close()
	if err != nil {
		t.Fatal(err)
	}

	cmd := exec.CommandContext(t.Context(), node, "e2e.mjs")
	cmd.Dir = browserDir
	cmd.Env = append(os.Environ(),
		"CONSOLE_URL="+consoleURL,
		"API_URL=http://"+api,
		"LOGIN_URLS="+strings.Join(logins, " "),
		"EXPIRED_LOGIN_URL="+expired,
		"ARTIFACTS="+filepath.Join(browserDir, "artifacts"),
		"CHROMIUM="+chromium,
	)
	outText, err := cmd.CombinedOutput()
	t.Logf("e2e.mjs:\n%s", outText)
	if err != nil {
		t.Fatalf("the browser test failed: %v", err)
	}
}
