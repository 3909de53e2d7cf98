package sqlite

import (
	"path/filepath"
	"testing"
)

// TestDurablePragmas: the write connection syncs every commit to disk
// (synchronous=FULL, 2) in WAL mode; an order is sent only once its
// intent is durable.
func TestDurablePragmas(t *testing.T) {
	write, read, err := openPools(filepath.Join(t.TempDir(), "exgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { write.Close(); read.Close() })
	var sync int
	var mode string
	if err := write.QueryRowContext(t.Context(), `PRAGMA synchronous`).Scan(&sync); err != nil {
		t.Fatal(err)
	}
	if err := write.QueryRowContext(t.Context(), `PRAGMA journal_mode`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if sync != 2 || mode != "wal" {
		t.Errorf("synchronous %d, journal_mode %s; want 2 (FULL) and wal", sync, mode)
	}
}
