package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/exgate/exgate"
)

func (s suite) testClientKeys(t *testing.T) {
	e := s.newEnv(t)
	ctx := t.Context()
	created := time.Date(2029, 5, 6, 7, 8, 9, 987654321, time.UTC)

	t.Run("create and read", func(t *testing.T) {
		keys := []exgate.ClientKey{
			{APIKey: "ak-1", Secret: "secret-1", Label: "first", CreatedAt: created},
			{APIKey: "ak-2", Secret: "secret-2"},
			{APIKey: "ak-3", Secret: "", Label: "no secret"},
			{APIKey: "ak-legacy", Secret: "secret-4", LegacySigning: true},
		}
		for _, k := range keys {
			if err := e.CreateClientKey(ctx, k); err != nil {
				t.Fatalf("CreateClientKey(%s): %v", k.APIKey, err)
			}
		}
		tests := []struct {
			apiKey string
			want   exgate.ClientKey
		}{
			{"ak-1", exgate.ClientKey{APIKey: "ak-1", Secret: "secret-1", Label: "first", CreatedAt: created}},
			{"ak-2", exgate.ClientKey{APIKey: "ak-2", Secret: "secret-2", CreatedAt: startTime()}},
			{"ak-3", exgate.ClientKey{APIKey: "ak-3", Label: "no secret", CreatedAt: startTime()}},
			{"ak-legacy", exgate.ClientKey{APIKey: "ak-legacy", Secret: "secret-4", CreatedAt: startTime(), LegacySigning: true}},
		}
		for _, tc := range tests {
			got, err := e.ClientKey(ctx, tc.apiKey)
			if err != nil {
				t.Fatalf("ClientKey(%s): %v", tc.apiKey, err)
			}
			if diff := cmp.Diff(got, tc.want); diff != "" {
				t.Errorf("ClientKey(%s) (-got +want):\n%s", tc.apiKey, diff)
			}
			if !got.Active() {
				t.Errorf("ClientKey(%s) is not active", tc.apiKey)
			}
		}
	})

	t.Run("errors", func(t *testing.T) {
		tests := []struct {
			name string
			err  error
			want error
		}{
			{"duplicate", e.CreateClientKey(ctx, exgate.ClientKey{APIKey: "ak-1", Secret: "other"}), exgate.ErrConflict},
			{"read unknown", second(e.ClientKey(ctx, "nope")), exgate.ErrNotFound},
			{"revoke unknown", e.RevokeClientKey(ctx, "nope"), exgate.ErrNotFound},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				if !errors.Is(tc.err, tc.want) {
					t.Fatalf("error = %v, want %v", tc.err, tc.want)
				}
			})
		}
		k, err := e.ClientKey(ctx, "ak-1")
		if err != nil || k.Secret != "secret-1" {
			t.Fatalf("after duplicate create: ClientKey = %+v, %v; want the first secret", k, err)
		}
	})

	t.Run("list without secrets", func(t *testing.T) {
		got, err := e.ListClientKeys(ctx)
		if err != nil {
			t.Fatalf("ListClientKeys: %v", err)
		}
		want := []exgate.ClientKey{
			{APIKey: "ak-1", Label: "first", CreatedAt: created},
			{APIKey: "ak-2", CreatedAt: startTime()},
			{APIKey: "ak-3", Label: "no secret", CreatedAt: startTime()},
			{APIKey: "ak-legacy", CreatedAt: startTime(), LegacySigning: true},
		}
		if diff := cmp.Diff(got, want); diff != "" {
			t.Fatalf("ListClientKeys (-got +want):\n%s", diff)
		}
	})

	t.Run("revoke", func(t *testing.T) {
		revokedAt := e.clock.Advance(time.Minute)
		if err := e.RevokeClientKey(ctx, "ak-2"); err != nil {
			t.Fatalf("RevokeClientKey: %v", err)
		}
		e.clock.Advance(time.Minute)
		if err := e.RevokeClientKey(ctx, "ak-2"); err != nil {
			t.Fatalf("RevokeClientKey again: %v", err)
		}
		got, err := e.ClientKey(ctx, "ak-2")
		if err != nil {
			t.Fatalf("ClientKey of a revoked key: %v", err)
		}
		want := exgate.ClientKey{APIKey: "ak-2", Secret: "secret-2", CreatedAt: startTime(), RevokedAt: revokedAt}
		if diff := cmp.Diff(got, want); diff != "" {
			t.Fatalf("revoked ClientKey (-got +want):\n%s", diff)
		}
		list, err := e.ListClientKeys(ctx)
		if err != nil {
			t.Fatalf("ListClientKeys: %v", err)
		}
		for _, k := range list {
			if k.Active() != (k.APIKey != "ak-2") {
				t.Errorf("listed %s active = %v", k.APIKey, k.Active())
			}
		}
	})
}

func (s suite) testCredentials(t *testing.T) {
	e := s.newEnv(t)
	ctx := t.Context()
	for _, k := range []string{"alice", "bob", "carol"} {
		if err := e.CreateClientKey(ctx, exgate.ClientKey{APIKey: k, Secret: k + "-secret"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.RevokeClientKey(ctx, "carol"); err != nil {
		t.Fatal(err)
	}

	binance := exgate.Credential{
		ClientAPIKey: "alice", Name: "main", Exchange: "binance",
		Key: "bn-key", Secret: "bn-secret", Permissions: []exgate.Permission{exgate.PermissionTrade, exgate.PermissionWithdraw},
	}
	gate := exgate.Credential{
		ClientAPIKey: "alice", Name: "gate", Exchange: "gateio",
		Key: "gt-key", Secret: "gt-secret", Passphrase: "gt-pass", Permissions: []exgate.Permission{exgate.PermissionRead},
	}
	sim := exgate.Credential{ClientAPIKey: "alice", Name: "demo", Exchange: "sim"}

	var added []exgate.Credential
	t.Run("add and read", func(t *testing.T) {
		for _, c := range []exgate.Credential{binance, gate, sim} {
			e.clock.Advance(time.Second)
			got, err := e.AddCredential(ctx, c)
			if err != nil {
				t.Fatalf("AddCredential(%s): %v", c.Name, err)
			}
			if got.ID <= 0 {
				t.Fatalf("AddCredential(%s) ID = %d, want > 0", c.Name, got.ID)
			}
			for _, a := range added {
				if a.ID == got.ID {
					t.Fatalf("AddCredential(%s) reused ID %d", c.Name, got.ID)
				}
			}
			want := c
			want.ID = got.ID
			want.CreatedAt = e.clock.Now()
			if diff := cmp.Diff(got, want); diff != "" {
				t.Fatalf("AddCredential(%s) (-got +want):\n%s", c.Name, diff)
			}
			added = append(added, got)
		}
		for _, want := range added {
			got, err := e.Credential(ctx, "alice", want.Name)
			if err != nil {
				t.Fatalf("Credential(%s): %v", want.Name, err)
			}
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("Credential(%s) (-got +want):\n%s", want.Name, diff)
			}
		}
	})

	t.Run("same name for another client", func(t *testing.T) {
		c := binance
		c.ClientAPIKey = "bob"
		got, err := e.AddCredential(ctx, c)
		if err != nil {
			t.Fatalf("AddCredential: %v", err)
		}
		if got.ID == added[0].ID {
			t.Fatalf("bob's credential has alice's ID %d", got.ID)
		}
	})

	t.Run("errors", func(t *testing.T) {
		dup := binance
		dup.Exchange = "kraken"
		unknown := binance
		unknown.ClientAPIKey = "nobody"
		revoked := binance
		revoked.ClientAPIKey = "carol"
		tests := []struct {
			name string
			err  error
			want error
		}{
			{"duplicate name", second(e.AddCredential(ctx, dup)), exgate.ErrConflict},
			{"unknown client key", second(e.AddCredential(ctx, unknown)), exgate.ErrNotFound},
			{"revoked client key", second(e.AddCredential(ctx, revoked)), exgate.ErrNotFound},
			{"read unknown name", second(e.Credential(ctx, "alice", "nope")), exgate.ErrNotFound},
			{"read other client's", second(e.Credential(ctx, "carol", "main")), exgate.ErrNotFound},
			{"remove unknown", e.RemoveCredential(ctx, "alice", "nope"), exgate.ErrNotFound},
			{"remove other client's", e.RemoveCredential(ctx, "carol", "main"), exgate.ErrNotFound},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				if !errors.Is(tc.err, tc.want) {
					t.Fatalf("error = %v, want %v", tc.err, tc.want)
				}
			})
		}
		got, err := e.Credential(ctx, "alice", "main")
		if err != nil || got.Exchange != "binance" {
			t.Fatalf("after duplicate add: Credential = %v, %v; want the first", got, err)
		}
	})

	t.Run("list without secrets", func(t *testing.T) {
		got, err := e.ListCredentials(ctx, "alice")
		if err != nil {
			t.Fatalf("ListCredentials: %v", err)
		}
		var want []exgate.Credential
		for _, i := range []int{2, 1, 0} { // by name: demo, gate, main
			c := added[i]
			c.Secret, c.Passphrase = "", ""
			want = append(want, c)
		}
		if diff := cmp.Diff(got, want); diff != "" {
			t.Fatalf("ListCredentials (-got +want):\n%s", diff)
		}
		none, err := e.ListCredentials(ctx, "nobody")
		if err != nil || len(none) != 0 {
			t.Fatalf("ListCredentials(nobody) = %v, %v; want none", none, err)
		}
	})

	t.Run("remove", func(t *testing.T) {
		if err := e.RemoveCredential(ctx, "alice", "gate"); err != nil {
			t.Fatalf("RemoveCredential: %v", err)
		}
		if _, err := e.Credential(ctx, "alice", "gate"); !errors.Is(err, exgate.ErrNotFound) {
			t.Fatalf("Credential after remove: error = %v, want ErrNotFound", err)
		}
		if err := e.RemoveCredential(ctx, "alice", "gate"); !errors.Is(err, exgate.ErrNotFound) {
			t.Fatalf("RemoveCredential twice: error = %v, want ErrNotFound", err)
		}
		again, err := e.AddCredential(ctx, gate)
		if err != nil {
			t.Fatalf("AddCredential after remove: %v", err)
		}
		for _, a := range added {
			if again.ID == a.ID {
				t.Fatalf("re-added credential reuses ID %d", a.ID)
			}
		}
		if _, err := e.Credential(ctx, "bob", "main"); err != nil {
			t.Fatalf("bob's credential after removing alice's: %v", err)
		}
	})

}

// second returns the error of a two-value call.
func second[T any](_ T, err error) error { return err }
