package postgres_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/internal/skipnotice"
	"github.com/exgate/exgate/postgres"
	"github.com/exgate/exgate/storetest"
)

// urlEnv names the variable holding the test server's URL.
const urlEnv = "EXGATE_TEST_POSTGRES_URL"

func TestMain(m *testing.M) {
	if os.Getenv(urlEnv) == "" {
		skipnotice.Print("postgres", "the PostgreSQL suite needs a server: "+urlEnv+"=postgres://postgres@127.0.0.1:5432/test?sslmode=disable go test ./postgres/")
	}
	os.Exit(m.Run())
}

// testStore gives the conformance suite raw access to the store's schema.
type testStore struct {
	*postgres.Store
	url string
	key []byte
	raw *pgxpool.Pool
}

var (
	_ exgate.Store      = (*postgres.Store)(nil)
	_ storetest.Harness = (*testStore)(nil)
)

func testKey() []byte { return bytes.Repeat([]byte{0x42}, 32) }

// freshSchema creates an empty schema on the test server, drops it when
// the test ends, and returns a URL whose connections use it. It skips the
// test when no server is configured.
func freshSchema(t *testing.T) string {
	t.Helper()
	base := os.Getenv(urlEnv)
	if base == "" {
		t.Skipf("PostgreSQL tests need a server: set %s, for example %s=postgres://postgres@127.0.0.1:5432/test?sslmode=disable go test ./postgres/", urlEnv, urlEnv)
	}
	schema := "exgate_test_" + strings.ToLower(rand.Text()[:16])
	ctx := t.Context()
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect to %s: %v", urlEnv, err)
	}
	defer admin.Close(ctx)
	ident := pgx.Identifier{schema}.Sanitize()
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+ident); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+ident+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", urlEnv, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// open opens a store on dbURL and closes it when the test ends.
func open(t *testing.T, dbURL string, key []byte) *testStore {
	t.Helper()
	s, err := postgres.Open(t.Context(), dbURL, key)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	raw, err := pgxpool.New(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		raw.Close()
	})
	return &testStore{Store: s, url: dbURL, key: key, raw: raw}
}

func (s *testStore) RawQuery(ctx context.Context, query string) ([][]string, error) {
	rows, err := s.raw.Query(ctx, query)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) ([]string, error) {
		vals, err := row.Values()
		if err != nil {
			return nil, err
		}
		out := make([]string, len(vals))
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				out[i] = string(b)
			} else {
				out[i] = fmt.Sprint(v)
			}
		}
		return out, nil
	})
}

func (s *testStore) RawExec(ctx context.Context, query string) error {
	_, err := s.raw.Exec(ctx, query)
	return err
}

func (s *testStore) Reopen(t *testing.T, masterKey []byte) exgate.Store {
	if masterKey == nil {
		masterKey = s.key
	}
	return open(t, s.url, masterKey)
}

func (s *testStore) SetNow(now func() time.Time) { s.Now = now }

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) exgate.Store {
		return open(t, freshSchema(t), testKey())
	})
}

// TestConcurrentOpen starts three instances on an empty schema at once:
// the advisory lock lets one migrate while the others wait, and all
// succeed.
func TestConcurrentOpen(t *testing.T) {
	dbURL := freshSchema(t)
	const n = 3
	errs := make([]error, n)
	var wg sync.WaitGroup
	ready := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-ready
			s, err := postgres.Open(t.Context(), dbURL, testKey())
			if err == nil {
				err = errors.Join(s.Ping(t.Context()), s.Close())
			}
			errs[i] = err
		})
	}
	close(ready)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Open %d: %v", i, err)
		}
	}
	s := open(t, dbURL, testKey())
	files, err := filepath.Glob("../internal/sqlstore/migrations/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("migrations: %v, %v", files, err)
	}
	want := strconv.Itoa(len(files))
	rows, err := s.RawQuery(t.Context(), "SELECT count(*) FROM schema_migrations")
	if err != nil || len(rows) != 1 || rows[0][0] != want {
		t.Fatalf("schema_migrations count = %v, %v; want %s, one per migration", rows, err, want)
	}
}

func TestOpen(t *testing.T) {
	tests := []struct {
		name string
		url  string
		key  []byte
	}{
		{"bad url", "postgres://user:hunter2@[::1", testKey()},
		{"short key", "postgres://127.0.0.1:1/x", testKey()[:16]},
		{"no server", "postgres://user:hunter2@127.0.0.1:1/x?connect_timeout=1", testKey()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := postgres.Open(t.Context(), tc.url, tc.key)
			if err == nil {
				_ = s.Close()
				t.Fatalf("Open(%q) succeeded", tc.url)
			}
			if bytes.Contains([]byte(err.Error()), []byte("hunter2")) {
				t.Fatalf("Open error %q shows the password", err)
			}
		})
	}
}
