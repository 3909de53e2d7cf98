package e2e

import (
	"context"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Issue 23: instances that share PostgreSQL but not Redis would accept each
// other's replays (the same signed market order filled by both). Without
// Redis, serve on PostgreSQL starts only with --single-instance, and a
// --single-instance instance refuses to start while another is live on the
// store (docs/contract.md section 4); doctor says so.
func TestSingleInstanceWithoutRedis(t *testing.T) {
	d := newDeployment(t, "EXGATE_REDIS_URL=")
	d.createKey("first")
	run := func(t *testing.T, args ...string) (string, error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, exgateBin, args...)
		cmd.Env = d.env("EXGATE_ADDR=127.0.0.1:0")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	if out, err := run(t, "serve"); err == nil || !strings.Contains(out, "PostgreSQL without Redis") {
		t.Fatalf("serve on PostgreSQL without Redis = %v:\n%s\nwant a refusal naming --single-instance", err, out)
	}
	first := d.start("solo-1", "--single-instance")
	out, err := run(t, "serve", "--single-instance")
	if err == nil || !strings.Contains(out, "another instance is live") {
		t.Fatalf("second --single-instance serve = %v:\n%s\nwant a refusal", err, out)
	}
	out, err = run(t, "doctor", "--single-instance")
	if !strings.Contains(out, "in process") || !strings.Contains(out, "1 instance(s) live") {
		t.Errorf("doctor with one instance live = %v:\n%s", err, out)
	}
	if out, err := run(t, "doctor"); err == nil || !strings.Contains(out, "FAIL  shared state") {
		t.Errorf("doctor without --single-instance = %v:\n%s\nwant the shared state failing", err, out)
	}

	// Stopped, it leaves the store to the next one.
	first.signal(syscall.SIGTERM)
	<-first.exited
	d.start("solo-2", "--single-instance")
}
