package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(up.Close)
	tests := []struct {
		name       string
		args       []string
		wantErr    string
		wantStdout string
	}{
		{"no command", nil, "no command given", ""},
		{"unknown command", []string{"bench"}, `unknown command "bench"`, ""},
		{"help", []string{"help"}, "", "compare"},
		{"run", []string{"run", "--url", up.URL, "--requests", "5", "--concurrency", "2"}, "", "statuses: map[200:5]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout bytes.Buffer
			err := run(t.Context(), tc.args, func(string) string { return "" }, &stdout, io.Discard)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("run(%q) = %v; want an error with %q", tc.args, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("run(%q): %v", tc.args, err)
			}
			if !strings.Contains(stdout.String(), tc.wantStdout) {
				t.Fatalf("run(%q) printed %q; want %q in it", tc.args, stdout.String(), tc.wantStdout)
			}
		})
	}
}

// TestCompareOrders runs bench compare --route market for a moment: the
// direct, proxy and gateway order paths each place orders without errors
// (one error would end the run), and the round line is printed.
func TestCompareOrders(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a fake Binance with 512 accounts and a gateway")
	}
	var stdout bytes.Buffer
	profiles := t.TempDir()
	err := run(t.Context(), []string{"compare", "--route", "market", "--duration", "200ms", "--concurrency", "2", "--profile-dir", profiles},
		func(string) string { return "" }, &stdout, io.Discard)
	if err != nil {
		t.Fatalf("compare --route market: %v\n%s", err, stdout.String())
	}
	// One CPU profile for each measurement of the round.
	for _, name := range []string{"direct-upstream", "bare-proxy", "gateway"} {
		m, _ := filepath.Glob(filepath.Join(profiles, "*-"+name+".prof"))
		if len(m) != 1 {
			t.Errorf("profiles of %s: %v, want one", name, m)
		} else if fi, err := os.Stat(m[0]); err != nil || fi.Size() == 0 {
			t.Errorf("profile %s: %v, %v", m[0], fi, err)
		}
	}
	for _, want := range []string{"POST /v1/order/market", "bare proxy", "gateway", "round 1: median latency"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
	if err := run(t.Context(), []string{"compare", "--route", "stop"}, func(string) string { return "" }, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "want klines, market or limit") {
		t.Errorf("compare --route stop: %v", err)
	}
}

// TestCompareOrdersRisk runs bench compare --route limit --risk for a
// moment over two rounds: the gateways with limits place orders without
// errors (a refusal would end the run), take turns in each round's order,
// and each is set against the control of its round and over the rounds.
func TestCompareOrdersRisk(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a fake Binance with 512 accounts and four gateways")
	}
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"compare", "--route", "limit", "--risk", "--duration", "150ms", "--rounds", "2", "--concurrency", "2"},
		func(string) string { return "" }, &stdout, &stderr)
	if err != nil {
		t.Fatalf("compare --route limit --risk: %v\n%s", err, stdout.String())
	}
	for _, want := range []string{
		"round 1: gateway (limits) against the control: added latency",
		"round 2: gateway (+band) against the control: added latency",
		"mean over 2 rounds: gateway (limits) against the control",
		"mean over 2 rounds: gateway (+band) against the control",
		"mean over 2 rounds: gateway (+band, max-age) against the control",
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
	// Round 1 measures the control first, round 2 the limits gateway.
	var order []string
	for line := range strings.Lines(stderr.String()) {
		if strings.HasPrefix(line, "gateway (") {
			order = append(order, line[:strings.Index(line, ")")+1])
		}
	}
	want := []string{"gateway (control)", "gateway (limits)", "gateway (+band)", "gateway (+band, max-age)", "gateway (limits)", "gateway (+band)", "gateway (+band, max-age)", "gateway (control)"}
	if strings.Join(order, ",") != strings.Join(want, ",") {
		t.Errorf("measured in the order %q, want %q", order, want)
	}
}

// TestFanout runs bench fanout for a moment with a few clients: one
// upstream subscription, deliveries on both sides, the ratio line.
func TestFanout(t *testing.T) {
	var stdout bytes.Buffer
	err := run(t.Context(), []string{"fanout", "--clients", "20", "--warmup", "300ms", "--duration", "500ms", "--rounds", "1"},
		func(string) string { return "" }, &stdout, io.Discard)
	if err != nil {
		t.Fatalf("fanout: %v\n%s", err, stdout.String())
	}
	for _, want := range []string{"upstream subscriptions 1;", "bare relay", "p99 ratio gateway / bare relay", "resident memory per client"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
	if strings.Contains(stdout.String(), "delivered 0 ") {
		t.Errorf("a side delivered nothing:\n%s", stdout.String())
	}
}
