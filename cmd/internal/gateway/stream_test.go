package gateway

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/sqlite"
)

// TestStillValid: a stream stands while its client key is active and its
// exchange key is the same credential.
func TestStillValid(t *testing.T) {
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "exgate.db"), bytes.Repeat([]byte{3}, 32))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for _, k := range []string{"a", "b"} {
		if err := st.CreateClientKey(ctx, exgate.ClientKey{APIKey: k, Secret: "s", CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	credA, err := st.AddCredential(ctx, exgate.Credential{ClientAPIKey: "a", Name: "main", Exchange: "sim"})
	if err != nil {
		t.Fatal(err)
	}
	credB, err := st.AddCredential(ctx, exgate.Credential{ClientAPIKey: "b", Name: "main", Exchange: "sim"})
	if err != nil {
		t.Fatal(err)
	}
	if err := stillValid(ctx, st, credA); err != nil {
		t.Fatalf("valid key: %v", err)
	}
	if err := st.RemoveCredential(ctx, "a", "main"); err != nil {
		t.Fatal(err)
	}
	if err := stillValid(ctx, st, credA); err == nil {
		t.Fatal("removed exchange key still valid")
	}
	if err := st.RevokeClientKey(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if err := stillValid(ctx, st, credB); err == nil {
		t.Fatal("revoked client key still valid")
	}
}
