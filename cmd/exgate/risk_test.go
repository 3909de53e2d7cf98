package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRiskCommands: risk set, show, halt and resume print what
// docs/contract.md 2.8 fixes; bad input exits non-zero with one line and
// changes nothing.
func TestRiskCommands(t *testing.T) {
	env := map[string]string{"EXGATE_DATA_DIR": t.TempDir()}
	out, err := runCmd(t, env, "keys", "create", "--label", "bot")
	if err != nil {
		t.Fatal(err, out)
	}
	var key struct{ APIKey string }
	if err := json.Unmarshal([]byte(out), &key); err != nil {
		t.Fatal(err)
	}
	show := func() string {
		t.Helper()
		out, err := runCmd(t, env, "risk", "show", "--api-key", key.APIKey)
		if err != nil {
			t.Fatal(err, out)
		}
		return strings.TrimSpace(out)
	}
	if out, err := runCmd(t, env, "risk", "set", "--api-key", key.APIKey, "--max-order-notional", "1000.50",
		"--max-open-orders", "3", "--symbols", "btc/usdt,ETH/USDT", "--daily-notional", "5000"); err != nil {
		t.Fatal(err, out)
	}
	before := show()
	var a struct {
		APIKey string          `json:"apiKey"`
		State  string          `json:"state"`
		Reason *string         `json:"reason"`
		Limits json.RawMessage `json:"limits"`
		Usage  map[string]any  `json:"usage"`
		Day    string          `json:"day"`
	}
	if err := json.Unmarshal([]byte(before), &a); err != nil || a.State != "active" || a.Reason != nil || len(a.Day) != 10 ||
		string(a.Limits) != `{"symbols":["BTC/USDT","ETH/USDT"],"maxOrderNotional":"1000.5","maxOpenOrders":3,"dailyNotional":"5000"}` ||
		a.Usage["dailyNotional"] != "0" || a.Usage["openOrders"] != float64(0) {
		t.Fatalf("risk show = %s (%v)", before, err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"negative", []string{"--daily-notional", "-5"}, "must not be negative"},
		{"not a number", []string{"--max-order-notional", "abc"}, "decimal number"},
		{"not a whole number", []string{"--max-open-orders", "2.5"}, "whole number"},
		{"pair format", []string{"--symbols", "BTCUSDT"}, "BASE/QUOTE"},
		{"unknown limit", []string{"--clear", "maxLeverage"}, "unknown limit"},
		{"set and cleared", []string{"--price-band", "5", "--clear", "priceBand"}, "contradict"},
		{"nothing", nil, "give a limit"},
		{"unknown key", []string{"--price-band", "5", "--api-key", "nobody"}, "no key"},
	} {
		args := append([]string{"risk", "set", "--api-key", key.APIKey}, tc.args...)
		out, err := runCmd(t, env, args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v (%q), want one line saying %q", tc.name, err, out, tc.want)
		}
		if got := show(); got != before {
			t.Errorf("%s changed the limits: %s", tc.name, got)
		}
	}
	if out, err := runCmd(t, env, "risk", "halt", "--api-key", key.APIKey, "--reason", "runaway bot"); err != nil || !strings.Contains(out, `"halted"`) {
		t.Fatalf("risk halt: %v %s", err, out)
	}
	if got := show(); !strings.Contains(got, `"state":"halted","reason":"runaway bot"`) {
		t.Fatalf("risk show after halt = %s", got)
	}
	if _, err := runCmd(t, env, "risk", "halt"); err == nil {
		t.Fatal("risk halt without --api-key or --all succeeded")
	}
	if out, err := runCmd(t, env, "risk", "resume", "--all"); err != nil {
		t.Fatal(err, out)
	}
	if got := show(); !strings.Contains(got, `"state":"active","reason":null`) {
		t.Fatalf("risk show after resume = %s", got)
	}
	out, err = runCmd(t, env, "audit", "--api-key", key.APIKey)
	if err != nil || !strings.Contains(out, `"risk set"`) || !strings.Contains(out, `"risk halt"`) {
		t.Fatalf("audit = %v %s, want the risk commands", err, out)
	}
}
