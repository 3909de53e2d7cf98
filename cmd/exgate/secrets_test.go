package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exgate/exgate/internal/secretbox"
	"github.com/exgate/exgate/sqlite"
)

// runIn runs one command with stdin and returns stdout and stderr apart.
func runIn(t *testing.T, env map[string]string, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = run(t.Context(), args, func(k string) string { return env[k] }, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), err
}

func createKey(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	out, _, err := runIn(t, env, "", append([]string{"keys", "create"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	var key struct{ APIKey string }
	if err := json.Unmarshal([]byte(out), &key); err != nil {
		t.Fatal(err)
	}
	return key.APIKey
}

// Issue 13: secrets never on a command line.
func TestSecretStdin(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"EXGATE_DATA_DIR": dir}
	apiKey := createKey(t, env)
	tests := []struct {
		name           string
		stdin          string
		args           []string
		wantErr        string
		wantSecret     string
		wantPassphrase string
	}{
		{name: "secret", stdin: "S3CRET\n", args: []string{"--name", "b", "--exchange", "binance", "--key", "K"}, wantSecret: "S3CRET"},
		{name: "secret and passphrase, CRLF", stdin: "gsecret\r\npass phrase\r\n", args: []string{"--name", "g", "--exchange", "gateio", "--key", "K"},
			wantSecret: "gsecret", wantPassphrase: "pass phrase"},
		{name: "okx: secret and passphrase", stdin: "osecret\nopass\n", args: []string{"--name", "o", "--exchange", "okx", "--key", "K"},
			wantSecret: "osecret", wantPassphrase: "opass"},
		{name: "okx without a passphrase", stdin: "osecret\n", args: []string{"--name", "o2", "--exchange", "okx", "--key", "K"}, wantErr: "passphrase"},
		{name: "no trailing newline", stdin: "S2", args: []string{"--name", "b2", "--exchange", "binance", "--key", "K"}, wantSecret: "S2"},
		{name: "empty stdin", stdin: "", args: []string{"--name", "b3", "--exchange", "binance", "--key", "K"}, wantErr: "empty"},
		{name: "three lines", stdin: "a\nb\nc\n", args: []string{"--name", "b4", "--exchange", "binance", "--key", "K"}, wantErr: "more than two lines"},
		{name: "both stdin and --secret", stdin: "a\n", args: []string{"--name", "b5", "--exchange", "binance", "--key", "K", "--secret", "S"}, wantErr: "not both"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"exchange-keys", "add", "--api-key", apiKey, "--secret-stdin"}, tc.args...)
			out, errOut, err := runIn(t, env, tc.stdin, args...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v: %s", err, errOut)
			}
			if tc.wantSecret != "" && strings.Contains(out, tc.wantSecret) {
				t.Errorf("output shows the secret: %s", out)
			}
			st := openTestStore(t, dir)
			name := tc.args[1]
			c, err := st.Credential(t.Context(), apiKey, name)
			if err != nil {
				t.Fatal(err)
			}
			if c.Secret != tc.wantSecret || c.Passphrase != tc.wantPassphrase {
				t.Errorf("stored secret %q passphrase %q; want %q, %q", c.Secret, c.Passphrase, tc.wantSecret, tc.wantPassphrase)
			}
		})
	}
}

func openTestStore(t *testing.T, dir string) *sqlite.Store {
	t.Helper()
	key, err := secretbox.LoadOrCreateKeyFile(filepath.Join(dir, "master.key"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(t.Context(), filepath.Join(dir, "exgate.db"), key)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// Issue 13: a loose master key file is refused with how to fix it; a loose
// data dir is warned about.
func TestLoosePermissions(t *testing.T) {
	tests := []struct {
		name       string
		keyMode    os.FileMode
		dirMode    os.FileMode
		wantErr    string
		wantWarn   string
		wantNoWarn bool
	}{
		{name: "tight", keyMode: 0o600, dirMode: 0o700, wantNoWarn: true},
		{name: "key readable by group", keyMode: 0o640, dirMode: 0o700, wantErr: "chmod 600"},
		{name: "key readable by all", keyMode: 0o644, dirMode: 0o700, wantErr: "readable by group or others"},
		{name: "data dir open", keyMode: 0o600, dirMode: 0o755, wantWarn: "chmod 700"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			env := map[string]string{"EXGATE_DATA_DIR": dir}
			createKey(t, env) // creates the dir and the key file
			if err := os.Chmod(filepath.Join(dir, "master.key"), tc.keyMode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, tc.dirMode); err != nil {
				t.Fatal(err)
			}
			_, errOut, err := runIn(t, env, "", "keys", "list")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantWarn != "" && !strings.Contains(errOut, tc.wantWarn) {
				t.Errorf("stderr %q lacks %q", errOut, tc.wantWarn)
			}
			if tc.wantNoWarn && errOut != "" {
				t.Errorf("stderr %q, want nothing", errOut)
			}
		})
	}
}

// Issue 13: --help on any command exits 0.
func TestHelpSucceeds(t *testing.T) {
	env := map[string]string{"EXGATE_DATA_DIR": t.TempDir()}
	for _, args := range [][]string{
		{"--help"}, {"help"}, {"serve", "--help"}, {"demo", "-h"}, {"keys", "--help"}, {"keys", "create", "--help"},
		{"exchange-keys", "--help"}, {"exchange-keys", "add", "-h"}, {"call", "--help"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var out bytes.Buffer
			if err := run(ctx, args, func(k string) string { return env[k] }, strings.NewReader(""), &out, &out); err != nil {
				t.Fatalf("err = %v: %s", err, out.String())
			}
		})
	}
}

// Issue 13: keys create --legacy-signing stores the choice.
func TestKeysCreateLegacySigning(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"EXGATE_DATA_DIR": dir}
	tests := []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"--legacy-signing"}, true},
	}
	for _, tc := range tests {
		apiKey := createKey(t, env, tc.args...)
		st := openTestStore(t, dir)
		k, err := st.ClientKey(t.Context(), apiKey)
		if err != nil {
			t.Fatal(err)
		}
		if k.LegacySigning != tc.want {
			t.Errorf("keys create %v: LegacySigning = %v", tc.args, k.LegacySigning)
		}
	}
	out, _, err := runIn(t, env, "", "keys", "list")
	if err != nil || strings.Count(out, `"legacySigning":true`) != 1 {
		t.Errorf("keys list = %s, %v; want one key marked legacySigning", out, err)
	}
}

// TestDemoHelpNamesTheConsole: demo serves the console unless told
// otherwise, and its --help says where (issue 25: it said "off when
// empty").
func TestDemoHelpNamesTheConsole(t *testing.T) {
	var out bytes.Buffer
	if err := run(t.Context(), []string{"demo", "--help"}, func(string) string { return "" }, strings.NewReader(""), &out, &out); err != nil {
		t.Fatal(err)
	}
	help := out.String()
	_, console, _ := strings.Cut(help, "-console-addr")
	console, _, _ = strings.Cut(console, "\n  -")
	if !strings.Contains(console, demoConsoleAddr) || strings.Contains(console, "off when empty") {
		t.Errorf("demo --help on -console-addr:%s\nwant it to name %s", console, demoConsoleAddr)
	}
}

// TestBusyPortNamesTheFlag: a port another process holds stops the start
// with the flag that moves it (issue 25: "bind: address already in use"
// alone).
func TestBusyPortNamesTheFlag(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	busy := ln.Addr().String()
	for _, tc := range []struct {
		flag string
		args []string
	}{
		{"--addr", []string{"--addr", busy}},
		{"--console-addr", []string{"--addr", "127.0.0.1:0", "--console-addr", busy}},
		{"--metrics-addr", []string{"--addr", "127.0.0.1:0", "--metrics-addr", busy}},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			args := append([]string{"serve", "--data-dir", t.TempDir()}, tc.args...)
			out, err := runCmd(t, nil, args...)
			if err == nil {
				t.Fatalf("serve with %s on a busy port started: %s", tc.flag, out)
			}
			if msg := err.Error(); !strings.Contains(msg, "listen on "+tc.flag+" "+busy) || !strings.Contains(msg, "move") {
				t.Errorf("error %q, want it to name %s and how to move it", msg, tc.flag)
			}
		})
	}
}
