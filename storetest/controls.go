package storetest

import (
	"bytes"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/exgate/exgate"
)

func (s suite) testAllowedIPs(t *testing.T) {
	e := s.newEnv(t)
	ctx := t.Context()
	if err := e.CreateClientKey(ctx, exgate.ClientKey{APIKey: "k1", Secret: "s"}); err != nil {
		t.Fatal(err)
	}
	if got, err := e.AllowedIPs(ctx, "k1"); err != nil || len(got) != 0 {
		t.Fatalf("AllowedIPs of a new key = %v, %v; want none", got, err)
	}
	want := []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16"), netip.MustParsePrefix("2001:db8::1/128")}
	if err := e.SetAllowedIPs(ctx, "k1", want); err != nil {
		t.Fatalf("SetAllowedIPs: %v", err)
	}
	// Another instance sees the change.
	other := e.reopen(t)
	got, err := other.AllowedIPs(ctx, "k1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, want, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
		t.Errorf("AllowedIPs (-got +want):\n%s", diff)
	}
	narrower := want[:1]
	if err := other.SetAllowedIPs(ctx, "k1", narrower); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.AllowedIPs(ctx, "k1"); len(got) != 1 || got[0] != narrower[0] {
		t.Fatalf("AllowedIPs after replacing = %v, want %v", got, narrower)
	}
	if err := e.SetAllowedIPs(ctx, "k1", nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.AllowedIPs(ctx, "k1"); len(got) != 0 {
		t.Fatalf("AllowedIPs after clearing = %v, want none", got)
	}
	if err := e.SetAllowedIPs(ctx, "nope", want); !errors.Is(err, exgate.ErrNotFound) {
		t.Fatalf("SetAllowedIPs of an unknown key = %v, want ErrNotFound", err)
	}
}

func (s suite) testAllowedAddresses(t *testing.T) {
	e := s.newEnv(t)
	ctx := t.Context()
	if err := e.CreateClientKey(ctx, exgate.ClientKey{APIKey: "k1", Secret: "s"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.AddCredential(ctx, exgate.Credential{ClientAPIKey: "k1", Name: "main", Exchange: "sim"}); err != nil {
		t.Fatal(err)
	}
	btc := exgate.AllowedAddress{ClientAPIKey: "k1", CredentialName: "main", Asset: "btc", Network: "btc", Address: "bc1qexampleaddress"}
	xrp := exgate.AllowedAddress{ClientAPIKey: "k1", CredentialName: "main", Asset: "XRP", Network: "XRP", Address: "rExample", Tag: "42",
		UsableFrom: startTime().Add(24 * time.Hour)}

	got, err := e.AllowAddress(ctx, btc)
	if err != nil {
		t.Fatalf("AllowAddress: %v", err)
	}
	if got.Asset != "BTC" || got.Network != "BTC" || !got.UsableFrom.Equal(startTime()) || !got.CreatedAt.Equal(startTime()) {
		t.Fatalf("AllowAddress = %+v; want upper-case codes, usable and created now", got)
	}
	if _, err := e.AllowAddress(ctx, xrp); err != nil {
		t.Fatal(err)
	}

	t.Run("errors", func(t *testing.T) {
		tests := []struct {
			name string
			err  error
			want error
		}{
			{"already allowed", second(e.AllowAddress(ctx, btc)), exgate.ErrConflict},
			{"unknown exchange key", second(e.AllowAddress(ctx, exgate.AllowedAddress{ClientAPIKey: "k1", CredentialName: "other", Asset: "BTC", Network: "BTC", Address: "x"})), exgate.ErrNotFound},
			{"deny unknown", e.DenyAddress(ctx, exgate.AllowedAddress{ClientAPIKey: "k1", CredentialName: "main", Asset: "BTC", Network: "BTC", Address: "other"}), exgate.ErrNotFound},
			{"deny with another tag", e.DenyAddress(ctx, exgate.AllowedAddress{ClientAPIKey: "k1", CredentialName: "main", Asset: "XRP", Network: "XRP", Address: "rExample", Tag: "43"}), exgate.ErrNotFound},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				if !errors.Is(tc.err, tc.want) {
					t.Fatalf("error = %v, want %v", tc.err, tc.want)
				}
			})
		}
	})

	t.Run("list from another instance", func(t *testing.T) {
		list, err := e.reopen(t).AllowedAddresses(ctx, "k1", "main")
		if err != nil {
			t.Fatal(err)
		}
		want := []exgate.AllowedAddress{
			{ClientAPIKey: "k1", CredentialName: "main", Asset: "BTC", Network: "BTC", Address: "bc1qexampleaddress", UsableFrom: startTime(), CreatedAt: startTime()},
			{ClientAPIKey: "k1", CredentialName: "main", Asset: "XRP", Network: "XRP", Address: "rExample", Tag: "42", UsableFrom: startTime().Add(24 * time.Hour), CreatedAt: startTime()},
		}
		if diff := cmp.Diff(list, want); diff != "" {
			t.Errorf("AllowedAddresses (-got +want):\n%s", diff)
		}
		if other, err := e.AllowedAddresses(ctx, "k1", "other"); err != nil || len(other) != 0 {
			t.Errorf("AllowedAddresses of another key = %v, %v; want none", other, err)
		}
	})

	t.Run("deny keeps the key restricted, allow again restarts the hold", func(t *testing.T) {
		denyAt := e.clock.Advance(time.Hour)
		if err := e.DenyAddress(ctx, btc); err != nil {
			t.Fatalf("DenyAddress: %v", err)
		}
		if err := e.DenyAddress(ctx, btc); !errors.Is(err, exgate.ErrNotFound) {
			t.Fatalf("DenyAddress twice = %v, want ErrNotFound", err)
		}
		list, err := e.AllowedAddresses(ctx, "k1", "main")
		if err != nil || len(list) != 2 || !list[0].DeniedAt.Equal(denyAt) {
			t.Fatalf("AllowedAddresses after deny = %+v, %v; want the entry marked denied", list, err)
		}
		wd := exgate.WithdrawalRequest{Asset: "BTC", Network: "BTC", Address: "bc1qexampleaddress"}
		if err := exgate.CheckWithdrawalAddress(list, wd, denyAt); exgate.ErrorCode(err) != exgate.CodeAddressNotAllowed {
			t.Fatalf("withdrawal to a denied address: %v, want ADDRESS_NOT_ALLOWED", err)
		}
		again := btc
		again.UsableFrom = denyAt.Add(2 * time.Hour)
		if _, err := e.AllowAddress(ctx, again); err != nil {
			t.Fatalf("AllowAddress after deny: %v", err)
		}
		list, _ = e.AllowedAddresses(ctx, "k1", "main")
		if !list[0].DeniedAt.IsZero() || !list[0].UsableFrom.Equal(again.UsableFrom) {
			t.Fatalf("allowed again = %+v; want not denied, with the new hold", list[0])
		}
	})

	t.Run("survives replacing the credential", func(t *testing.T) {
		if err := e.RemoveCredential(ctx, "k1", "main"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.AddCredential(ctx, exgate.Credential{ClientAPIKey: "k1", Name: "main", Exchange: "sim"}); err != nil {
			t.Fatal(err)
		}
		if list, _ := e.AllowedAddresses(ctx, "k1", "main"); len(list) != 2 {
			t.Fatalf("allowlist after replacing the credential = %+v, want both entries", list)
		}
	})
}

func (s suite) testAudit(t *testing.T) {
	e := s.newEnv(t)
	ctx := t.Context()
	if got, err := e.AuditLog(ctx, exgate.AuditFilter{}); err != nil || len(got) != 0 {
		t.Fatalf("AuditLog of a new store = %v, %v", got, err)
	}
	entries := []exgate.AuditEntry{
		{Actor: exgate.AuditActorCLI, Action: "keys create", APIKey: "k1", Details: map[string]string{"label": "bot"}},
		{Actor: exgate.AuditActorAPI, Action: "POST /v1/order/market", APIKey: "k1", ExchangeKey: "main",
			Details: map[string]string{"asset1": "BTC", "quantity": "0.1"}, Status: 200, IntentID: "o-1", RequestID: "r-1", ClientRequestID: "mine-1", Remote: "10.0.0.1"},
		{Actor: exgate.AuditActorAPI, Action: "POST /v1/wallet/withdraw", APIKey: "k2", ExchangeKey: "main", Status: 403, Code: "ADDRESS_NOT_ALLOWED"},
		{Actor: exgate.AuditActorCLI, Action: "keys revoke", APIKey: "k1"},
	}
	other := e.reopen(t)
	var times []time.Time
	for i, en := range entries {
		times = append(times, e.clock.Advance(time.Minute))
		st := e.Store
		if i%2 == 1 {
			st = other // two instances append to one trail
		}
		got, err := st.AppendAudit(ctx, en)
		if err != nil {
			t.Fatalf("AppendAudit: %v", err)
		}
		if got.Seq == 0 || !got.Time.Equal(times[i]) {
			t.Fatalf("AppendAudit = %+v; want a seq and the time now", got)
		}
	}
	if _, err := e.AppendAudit(ctx, exgate.AuditEntry{Action: "x"}); err == nil {
		t.Fatal("AppendAudit without an actor succeeded")
	}
	actions := func(es []exgate.AuditEntry) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Action)
		}
		return out
	}
	tests := []struct {
		name string
		f    exgate.AuditFilter
		want []string
	}{
		{"all, newest first", exgate.AuditFilter{}, []string{"keys revoke", "POST /v1/wallet/withdraw", "POST /v1/order/market", "keys create"}},
		{"one key", exgate.AuditFilter{APIKey: "k1"}, []string{"keys revoke", "POST /v1/order/market", "keys create"}},
		{"since", exgate.AuditFilter{Since: times[2]}, []string{"keys revoke", "POST /v1/wallet/withdraw"}},
		{"limit", exgate.AuditFilter{Limit: 1}, []string{"keys revoke"}},
		{"all three", exgate.AuditFilter{APIKey: "k1", Since: times[1], Limit: 1}, []string{"keys revoke"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := e.AuditLog(ctx, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(actions(got), tc.want); diff != "" {
				t.Errorf("AuditLog(%+v) (-got +want):\n%s", tc.f, diff)
			}
		})
	}
	got, err := other.AuditLog(ctx, exgate.AuditFilter{APIKey: "k1", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := entries[1]
	want.Seq, want.Time = got[1].Seq, times[1]
	if diff := cmp.Diff(got[1], want); diff != "" {
		t.Errorf("entry read back (-got +want):\n%s", diff)
	}

	// AppendAudits: in order, all or none.
	bad := []exgate.AuditEntry{{Actor: exgate.AuditActorAPI, Action: "POST /v1/order/limit", APIKey: "k3"}, {Actor: exgate.AuditActorAPI, APIKey: "k3"}}
	if err := e.AppendAudits(ctx, bad); err == nil {
		t.Fatal("AppendAudits with an entry without an action succeeded")
	}
	batch := []exgate.AuditEntry{
		{Actor: exgate.AuditActorAPI, Action: "POST /v1/order/limit", APIKey: "k3", Time: times[3].Add(time.Second)},
		{Actor: exgate.AuditActorAPI, Action: "DELETE /v1/order", APIKey: "k3"},
	}
	if err := other.AppendAudits(ctx, batch); err != nil {
		t.Fatalf("AppendAudits: %v", err)
	}
	if batch[0].Seq == 0 || batch[1].Seq <= batch[0].Seq || !batch[0].Time.Equal(times[3].Add(time.Second)) || batch[1].Time.IsZero() {
		t.Fatalf("AppendAudits set %+v; want ascending seqs, the given time kept and the other set", batch)
	}
	got, err = e.AuditLog(ctx, exgate.AuditFilter{APIKey: "k3"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(actions(got), []string{"DELETE /v1/order", "POST /v1/order/limit"}); diff != "" {
		t.Errorf("after AppendAudits (-got +want):\n%s", diff)
	}
}

func (s suite) testMasterKeyCheck(t *testing.T) {
	e := s.newEnv(t)
	ctx := t.Context()
	wrong := bytes.Repeat([]byte{9}, 32)

	// A store from before the check, with a secret in it: a wrong key is
	// refused before it becomes the store's check value.
	if err := e.CreateClientKey(ctx, exgate.ClientKey{APIKey: "k1", Secret: "s1"}); err != nil {
		t.Fatal(err)
	}
	if err := e.h.Reopen(t, wrong).CheckMasterKey(ctx); !errors.Is(err, exgate.ErrWrongMasterKey) {
		t.Fatalf("CheckMasterKey with a wrong key over existing secrets = %v, want ErrWrongMasterKey", err)
	}
	if rows := e.rawQuery(t, "SELECT name FROM store_meta"); len(rows) != 0 {
		t.Fatalf("store_meta after a refused key = %q, want empty", rows)
	}
	for i := range 2 {
		if err := e.CheckMasterKey(ctx); err != nil {
			t.Fatalf("CheckMasterKey %d with the right key: %v", i, err)
		}
	}
	if rows := e.rawQuery(t, "SELECT value FROM store_meta WHERE name = 'master_key_check'"); len(rows) != 1 || strings.Contains(rows[0][0], "check") {
		t.Fatalf("store_meta = %q, want one sealed value", rows)
	}

	// Once the check value is there, it decides, secrets or none.
	e.rawExec(t, "DELETE FROM credentials")
	e.rawExec(t, "DELETE FROM client_keys")
	if err := e.h.Reopen(t, wrong).CheckMasterKey(ctx); !errors.Is(err, exgate.ErrWrongMasterKey) {
		t.Fatalf("CheckMasterKey with a wrong key = %v, want ErrWrongMasterKey", err)
	}
	if err := e.reopen(t).CheckMasterKey(ctx); err != nil {
		t.Fatalf("CheckMasterKey of another instance with the right key: %v", err)
	}
}

func (s suite) testMasterKeyCheckEmptyStore(t *testing.T) {
	e := s.newEnv(t)
	ctx := t.Context()
	// The first key to check an empty store becomes its key; another
	// instance under another key is refused.
	if err := e.CheckMasterKey(ctx); err != nil {
		t.Fatalf("CheckMasterKey of an empty store: %v", err)
	}
	if err := e.h.Reopen(t, bytes.Repeat([]byte{9}, 32)).CheckMasterKey(ctx); !errors.Is(err, exgate.ErrWrongMasterKey) {
		t.Fatalf("CheckMasterKey under another key = %v, want ErrWrongMasterKey", err)
	}
}
