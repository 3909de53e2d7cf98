package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/client"
)

// TestScaleOutControls: the operator's controls, set with the CLI on the
// shared database, apply on every instance: an IP allowlist within a
// second, a withdrawal allowlist at once; and the requests of every
// instance land in one audit trail, without secrets.
func TestScaleOutControls(t *testing.T) {
	d := newDeployment(t)
	insts := d.startN(2)
	ctx := t.Context()
	key := d.createKey("controlled")
	d.addExchangeKey(key.APIKey, "paper", "sim", "--permissions", "read,trade,withdraw")
	clients := []*client.Client{insts[0].client(key, "paper"), insts[1].client(key, "paper")}

	// until polls every instance until its balance read answers want.
	// An instance caches keys for up to 500 ms (httpapi's KeyCacheTTL),
	// so a read sent more than a second after the CLI returned must
	// answer want. The time that counts is when the read was sent, not
	// when its answer came: on a busy machine an answer can take longer
	// than the cache lasts, and a read sent early may rightly answer the
	// old setting.
	until := func(t *testing.T, want exgate.Code) {
		t.Helper()
		since := time.Now()
		for i, c := range clients {
			for {
				sent := time.Now()
				_, err := c.AccountBalance(ctx)
				if problemCode(err) == string(want) {
					break
				}
				if sent.Sub(since) > time.Second {
					t.Fatalf("%s answers %v to a read sent %s after the CLI returned; want %q", insts[i].name, err, sent.Sub(since), want)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	}
	t.Run("IP allowlist", func(t *testing.T) {
		until(t, "")
		d.admin("keys", "set-allow-ip", "--api-key", key.APIKey, "--allow-ip", "203.0.113.0/24")
		until(t, exgate.CodeIPNotAllowed)
		d.admin("keys", "set-allow-ip", "--api-key", key.APIKey, "--allow-ip", "127.0.0.1,::1")
		until(t, "")
	})

	const address = "rPEPPER7kfTD9w2To4CQk6UCfuHM9c6GDY"
	t.Run("withdrawal allowlist", func(t *testing.T) {
		d.admin("exchange-keys", "allow-address", "--api-key", key.APIKey, "--name", "paper",
			"--asset", "XRP", "--network", "XRP", "--address", address, "--tag", "1",
			"--hold", "0") // usable at once: a new address is held 24 h by default
		for i, c := range clients {
			_, err := c.Withdraw(ctx, client.WithdrawRequest{Asset: "XRP", Network: "XRP", Address: address, Tag: "2", Amount: "1"})
			if problemCode(err) != string(exgate.CodeAddressNotAllowed) {
				t.Fatalf("%s: withdrawal elsewhere: %v, want ADDRESS_NOT_ALLOWED", insts[i].name, err)
			}
		}
		if _, err := clients[1].Withdraw(ctx, client.WithdrawRequest{Asset: "XRP", Network: "XRP", Address: address, Tag: "1", Amount: "5"}); err != nil {
			t.Fatalf("withdrawal to the allowed address: %v", err)
		}
	})

	t.Run("one audit trail", func(t *testing.T) {
		// An instance writes a request's audit record just after its
		// answer (httpapi's auditWriter), so the trail is read until it
		// holds the three withdrawals or a deadline passes.
		want := []string{"", "ADDRESS_NOT_ALLOWED", "ADDRESS_NOT_ALLOWED"}
		var out []byte
		var withdrawals []string
		for deadline := time.Now().Add(10 * time.Second); ; {
			out = d.admin("audit", "--api-key", key.APIKey)
			withdrawals = auditedWithdrawals(t, out)
			if len(withdrawals) >= len(want) || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if bytes.Contains(out, []byte(key.SecretKey)) || bytes.Contains(out, []byte("signature")) {
			t.Fatalf("audit output holds a secret or signature:\n%s", out)
		}
		if strings.Join(withdrawals, ",") != strings.Join(want, ",") {
			t.Fatalf("withdrawals in the audit trail, newest first = %q, want %q\n%s", withdrawals, want, out)
		}
	})
}

// auditedWithdrawals returns the codes of the withdrawal requests in the
// output of `exgate audit`, newest first.
func auditedWithdrawals(t *testing.T, out []byte) []string {
	t.Helper()
	var withdrawals []string
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		var e struct {
			Action, Code string
			Status       int
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		if e.Action == "POST /v1/wallet/withdraw" {
			withdrawals = append(withdrawals, e.Code)
		}
	}
	return withdrawals
}

// TestStartupRefusalsShared: an instance with the shared Redis but no
// database, or with another master key than the database's, does not start.
func TestStartupRefusalsShared(t *testing.T) {
	d := newDeployment(t)
	d.createKey("first") // the database now has its master key
	var other [32]byte
	_, _ = rand.Read(other[:])
	tests := []struct {
		name string
		env  []string
		want string
	}{
		{"redis without database", []string{"EXGATE_DATABASE_URL="}, "EXGATE_DATABASE_URL is not"},
		{"wrong master key", []string{"EXGATE_MASTER_KEY=" + base64.StdEncoding.EncodeToString(other[:])}, "wrong master key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, exgateBin, "serve")
			cmd.Env = d.env(append([]string{"EXGATE_ADDR=127.0.0.1:0", "EXGATE_DATA_DIR=" + t.TempDir()}, tc.env...)...)
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), tc.want) {
				t.Fatalf("serve = %v:\n%s\nwant a refusal naming %q", err, out, tc.want)
			}
		})
	}
}
