package oapitest_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/api"
	"github.com/exgate/exgate/exchange/sim"
	"github.com/exgate/exgate/httpapi"
	"github.com/exgate/exgate/journal"
	"github.com/exgate/exgate/localstate"
	"github.com/exgate/exgate/sqlite"
	"github.com/exgate/exgate/stream"
)

// gateway is a running gateway on the simulated exchange, wired as exgate
// serve wires it (SQLite store, journal, HTTP API), with one client key
// and a sim exchange key named "demo" that may trade.
type gateway struct {
	URL, APIKey, Secret, ExchangeKey string
}

func startGateway(t *testing.T) gateway {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "exgate.db"), bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	exchanges := map[string]exgate.Exchange{"sim": sim.New(sim.Options{Ledger: st})}
	log := slog.New(slog.DiscardHandler)
	jr := journal.New(journal.Options{Store: st, Exchanges: exchanges, Logger: log})
	h := httpapi.New(httpapi.Config{
		Keys:      st,
		Exchanges: exchanges,
		Ledger:    jr,
		Replay:    localstate.NewReplayGuard(nil),
		Limiter:   localstate.NewLimiter(nil),
		OpenAPI:   api.Spec(),
		Logger:    log,
		Stream:    stream.New(stream.Options{Exchanges: exchanges, Journal: jr, Logger: log}),
	})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	g := gateway{URL: srv.URL, APIKey: "pk_oapitest", Secret: "c2VjcmV0LW9mLXRoZS1vYXBpdGVzdC1jbGllbnQ", ExchangeKey: "demo"}
	if err := st.CreateClientKey(ctx, exgate.ClientKey{APIKey: g.APIKey, Secret: g.Secret, Label: "oapitest"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddCredential(ctx, exgate.Credential{ClientAPIKey: g.APIKey, Name: g.ExchangeKey, Exchange: "sim",
		Key: "sim", Secret: "sim", Permissions: []exgate.Permission{exgate.PermissionRead, exgate.PermissionTrade}}); err != nil {
		t.Fatal(err)
	}
	return g
}
