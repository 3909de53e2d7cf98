package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/sqlite"
	"github.com/exgate/exgate/storetest"
)

// testStore gives the conformance suite raw access to the database file.
type testStore struct {
	*sqlite.Store
	path string
	key  []byte
	raw  *sql.DB
}

var (
	_ exgate.Store      = (*sqlite.Store)(nil)
	_ storetest.Harness = (*testStore)(nil)
)

func testKey() []byte { return bytes.Repeat([]byte{0x42}, 32) }

// open opens a store on path and closes it when the test ends.
func open(t *testing.T, path string, key []byte) *testStore {
	t.Helper()
	s, err := sqlite.Open(t.Context(), path, key)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	raw, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		_ = raw.Close()
	})
	return &testStore{Store: s, path: path, key: key, raw: raw}
}

func (s *testStore) RawQuery(ctx context.Context, query string) ([][]string, error) {
	rows, err := s.raw.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				row[i] = string(b)
			} else {
				row[i] = fmt.Sprint(v)
			}
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

func (s *testStore) RawExec(ctx context.Context, query string) error {
	_, err := s.raw.ExecContext(ctx, query)
	return err
}

func (s *testStore) Reopen(t *testing.T, masterKey []byte) exgate.Store {
	if masterKey == nil {
		masterKey = s.key
	}
	return open(t, s.path, masterKey)
}

func (s *testStore) SetNow(now func() time.Time) { s.Now = now }

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) exgate.Store {
		return open(t, filepath.Join(t.TempDir(), "exgate.db"), testKey())
	})
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		path string
		key  []byte
	}{
		{"empty path", "", testKey()},
		{"memory", ":memory:", testKey()},
		{"query in path", filepath.Join(dir, "x.db?mode=ro"), testKey()},
		{"short key", filepath.Join(dir, "x.db"), testKey()[:16]},
		{"missing directory", filepath.Join(dir, "no", "such", "x.db"), testKey()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := sqlite.Open(t.Context(), tc.path, tc.key)
			if err == nil {
				_ = s.Close()
				t.Fatalf("Open(%q) succeeded", tc.path)
			}
		})
	}
}

func TestFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "exgate.db")
	s := open(t, path, testKey())
	if err := s.CreateClientKey(t.Context(), exgate.ClientKey{APIKey: "k", Secret: "s"}); err != nil {
		t.Fatal(err)
	}
	t.Run("WAL", func(t *testing.T) {
		rows, err := s.RawQuery(t.Context(), "PRAGMA journal_mode")
		if err != nil || len(rows) != 1 || rows[0][0] != "wal" {
			t.Fatalf("journal_mode = %v, %v; want wal", rows, err)
		}
	})
	for _, name := range []string{path, path + "-wal"} {
		t.Run("mode of "+filepath.Base(name), func(t *testing.T) {
			fi, err := os.Stat(name)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o600 {
				t.Fatalf("mode = %v, want 0600", fi.Mode().Perm())
			}
		})
	}
}

// TestConcurrentOpen opens one new file from several goroutines at once,
// as several processes starting together would: the migrations run once.
func TestConcurrentOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "exgate.db")
	const n = 3
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			s, err := sqlite.Open(t.Context(), path, testKey())
			if err == nil {
				err = errors.Join(s.Ping(t.Context()), s.Close())
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Open %d: %v", i, err)
		}
	}
}
