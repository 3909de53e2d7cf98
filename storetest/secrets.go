package storetest

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/exgate/exgate"
)

func (s suite) testSecretsAtRest(t *testing.T) {
	e := s.newEnv(t)
	ctx := t.Context()
	const (
		clientSecret = "client-SECRET-3f9a"
		otherSecret  = "client-SECRET-77c1"
		exSecret     = "exchange-SECRET-b01d"
		exPass       = "exchange-PASSPHRASE-55e2"
	)
	for _, k := range []exgate.ClientKey{
		{APIKey: "k1", Secret: clientSecret},
		{APIKey: "k2", Secret: otherSecret},
	} {
		if err := e.CreateClientKey(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []exgate.Credential{
		{ClientAPIKey: "k1", Name: "a", Exchange: "gateio", Key: "key-a", Secret: exSecret, Passphrase: exPass},
		{ClientAPIKey: "k1", Name: "b", Exchange: "gateio", Key: "key-b", Secret: exSecret + "-b", Passphrase: exPass + "-b"},
		{ClientAPIKey: "k2", Name: "a", Exchange: "gateio", Key: "key-c", Secret: exSecret + "-c", Passphrase: exPass + "-c"},
	} {
		if _, err := e.AddCredential(ctx, c); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("not stored in clear", func(t *testing.T) {
		for _, table := range []string{"client_keys", "credentials"} {
			rows := e.rawQuery(t, "SELECT * FROM "+table)
			if len(rows) == 0 {
				t.Fatalf("raw %s is empty", table)
			}
			for _, row := range rows {
				for _, v := range row {
					for _, secret := range []string{"SECRET", "PASSPHRASE"} {
						if strings.Contains(v, secret) {
							t.Fatalf("raw %s row %q holds a secret in clear", table, row)
						}
					}
				}
			}
		}
		sealed := e.rawQuery(t, "SELECT secret FROM client_keys WHERE api_key = 'k1'")
		if len(sealed) != 1 || len(sealed[0][0]) < 12+len(clientSecret)+16 {
			t.Fatalf("sealed client secret = %q, want nonce, ciphertext and tag", sealed)
		}
		again := e.rawQuery(t, "SELECT secret FROM credentials WHERE name = 'a'")
		if len(again) != 2 || again[0][0] == again[1][0] {
			t.Fatalf("sealed credential secrets = %q, want two different values", again)
		}
	})

	t.Run("read back", func(t *testing.T) {
		k, err := e.ClientKey(ctx, "k1")
		if err != nil || k.Secret != clientSecret {
			t.Fatalf("ClientKey = %q, %v; want the secret", k.Secret, err)
		}
		c, err := e.Credential(ctx, "k1", "a")
		if err != nil || c.Secret != exSecret || c.Passphrase != exPass {
			t.Fatalf("Credential = %q, %q, %v; want the secrets", c.Secret, c.Passphrase, err)
		}
	})

	// Each case moves sealed bytes where they do not belong; reading the
	// row must then fail, and not as "not found".
	tests := []struct {
		name   string
		tamper string
		read   func() error
	}{
		{
			name:   "client secret moved to another key",
			tamper: "UPDATE client_keys SET secret = (SELECT secret FROM client_keys WHERE api_key = 'k1') WHERE api_key = 'k2'",
			read:   func() error { return second(e.ClientKey(ctx, "k2")) },
		},
		{
			name:   "credential secret moved to another row",
			tamper: "UPDATE credentials SET secret = (SELECT secret FROM credentials WHERE client_api_key = 'k1' AND name = 'a') WHERE client_api_key = 'k1' AND name = 'b'",
			read:   func() error { return second(e.Credential(ctx, "k1", "b")) },
		},
		{
			name:   "credential secret moved to another client's row",
			tamper: "UPDATE credentials SET passphrase = (SELECT passphrase FROM credentials WHERE client_api_key = 'k1' AND name = 'a') WHERE client_api_key = 'k2' AND name = 'a'",
			read:   func() error { return second(e.Credential(ctx, "k2", "a")) },
		},
		{
			name:   "secret moved to the passphrase column",
			tamper: "UPDATE credentials SET passphrase = secret WHERE client_api_key = 'k1' AND name = 'a'",
			read:   func() error { return second(e.Credential(ctx, "k1", "a")) },
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e.rawExec(t, tc.tamper)
			err := tc.read()
			if err == nil {
				t.Fatal("read after tampering succeeded")
			}
			if errors.Is(err, exgate.ErrNotFound) {
				t.Fatalf("read after tampering: %v, want a decryption error, not ErrNotFound", err)
			}
		})
	}

	t.Run("other master key", func(t *testing.T) {
		other := e.h.Reopen(t, bytes.Repeat([]byte{7}, 32))
		if _, err := other.ClientKey(ctx, "k1"); err == nil {
			t.Fatal("ClientKey under another master key succeeded")
		}
		if _, err := other.ListClientKeys(ctx); err != nil {
			t.Fatalf("ListClientKeys under another master key: %v", err)
		}
	})
}
