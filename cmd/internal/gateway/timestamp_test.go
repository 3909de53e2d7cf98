package gateway

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/sim"
	"github.com/exgate/exgate/sqlite"
)

// Issue 23: with the default configuration the signature of the empty
// string is no permanent read token: a GET without a signed timestamp is
// refused (docs/contract.md 2.1), unless the operator says otherwise.
func TestTimestampRequiredByDefault(t *testing.T) {
	for _, tc := range []struct {
		name       string
		env        map[string]string
		wantStatus int
		wantCode   string
	}{
		{"default", nil, 401, "MISSING_TIMESTAMP"},
		{"EXGATE_REQUIRE_TIMESTAMP=false", map[string]string{"EXGATE_REQUIRE_TIMESTAMP": "false"}, 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			fs, cfg := NewFlagSet("serve", func(name string) string { return tc.env[name] }, io.Discard, true)
			if err := fs.Parse(nil); err != nil {
				t.Fatal(err)
			}
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "exgate.db"), bytes.Repeat([]byte{3}, 32))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			state, err := OpenState(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = state.Close() })
			g, err := Build(cfg, st, state, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(g.API)
			t.Cleanup(srv.Close)
			if err := st.CreateClientKey(ctx, exgate.ClientKey{APIKey: "k", Secret: "s", CreatedAt: time.Now()}); err != nil {
				t.Fatal(err)
			}
			if _, err := st.AddCredential(ctx, exgate.Credential{ClientAPIKey: "k", Name: "live", Exchange: sim.Name,
				Permissions: []exgate.Permission{exgate.PermissionRead}}); err != nil {
				t.Fatal(err)
			}
			m := hmac.New(sha256.New, []byte("s"))
			req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/v1/wallet/account-balance?signature="+hex.EncodeToString(m.Sum(nil)), nil)
			req.Header.Set("X-API-KEY", "k")
			req.Header.Set("X-API-EXCHANGE-KEY", "live")
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var p struct{ Code string }
			body, _ := io.ReadAll(resp.Body)
			_ = json.Unmarshal(body, &p)
			if resp.StatusCode != tc.wantStatus || p.Code != tc.wantCode {
				t.Fatalf("%d %s; want %d %s", resp.StatusCode, body, tc.wantStatus, tc.wantCode)
			}
		})
	}
}
