package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/exgate/exgate"
)

// groupDB opens a SQLite file with one write connection, as package
// sqlite does, and a table for the tests.
func groupDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "g.db")+"?_pragma=journal_mode(WAL)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE t (k TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	return db
}

func insert(k string) func(tx *sql.Tx) error {
	return func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO t (k) VALUES ($1)`, k)
		return err
	}
}

func keys(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query(`SELECT k FROM t ORDER BY k`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := collect(rows, func(rows *sql.Rows) (k string, err error) { return k, rows.Scan(&k) })
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// queued waits until n callers wait for the writer.
func queued(t *testing.T, g *groupCommit, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		g.mu.Lock()
		got := len(g.queue)
		g.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d callers queued, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestGroupCommit holds the writer with one caller while others queue,
// then checks that the queued ones share one commit and that each gets
// its own result: a failing caller's work is gone, the others' kept.
func TestGroupCommit(t *testing.T) {
	tests := []struct {
		name string
		// work returns caller i's body and whether it must succeed.
		work     func(i int) (func(tx *sql.Tx) error, bool)
		wantKeys []string
		// whole: the batch fails as a whole (the shared transaction is gone).
		whole bool
	}{
		{
			name:     "all succeed",
			work:     func(i int) (func(*sql.Tx) error, bool) { return insert(fmt.Sprint("k", i)), true },
			wantKeys: []string{"first", "k0", "k1", "k2", "k3"},
		},
		{
			name: "one conflicts, one fails after writing, one panics",
			work: func(i int) (func(*sql.Tx) error, bool) {
				switch i {
				case 1:
					return insert("first"), false // primary key taken
				case 2:
					return func(tx *sql.Tx) error {
						if err := insert("k2")(tx); err != nil {
							return err
						}
						return errors.New("changed its mind")
					}, false
				case 3:
					return func(tx *sql.Tx) error {
						_ = insert("k3")(tx)
						panic("bug")
					}, false
				}
				return insert(fmt.Sprint("k", i)), true
			},
			wantKeys: []string{"first", "k0"},
		},
		{
			name: "one caller's statement ends the shared transaction",
			work: func(i int) (func(*sql.Tx) error, bool) {
				if i == 2 {
					// What SQLite does by itself when a statement inside
					// a transaction is interrupted.
					return func(tx *sql.Tx) error { _, err := tx.Exec(`ROLLBACK`); return err }, false
				}
				return insert(fmt.Sprint("k", i)), false
			},
			wantKeys: []string{"first"},
			whole:    true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := groupDB(t)
			g := newGroupCommit(db, true)
			started, release := make(chan struct{}), make(chan struct{})
			firstDone := make(chan error, 1)
			go func() {
				firstDone <- g.do(t.Context(), func(tx *sql.Tx) error {
					close(started)
					<-release
					return insert("first")(tx)
				})
			}()
			<-started // the first caller holds the writer
			const n = 4
			results := make([]error, n)
			want := make([]bool, n)
			var wg sync.WaitGroup
			for i := range n {
				fn, ok := tc.work(i)
				want[i] = ok
				wg.Add(1)
				go func() { defer wg.Done(); results[i] = g.do(t.Context(), fn) }()
				queued(t, g, i+1)
			}
			close(release)
			wg.Wait()
			if err := <-firstDone; err != nil {
				t.Fatalf("first caller: %v", err)
			}
			for i, err := range results {
				if (err == nil) != want[i] {
					t.Errorf("caller %d: %v, want success %v", i, err, want[i])
				}
				if tc.whole && (err == nil || !strings.Contains(err.Error(), "shared transaction")) {
					t.Errorf("caller %d: %v, want the shared transaction's failure", i, err)
				}
			}
			if g.batches != 2 {
				t.Errorf("%d transactions, want 2 (the first caller's, then one for the %d queued)", g.batches, n)
			}
			if got := keys(t, db); !slices.Equal(got, tc.wantKeys) {
				t.Errorf("rows %v, want %v", got, tc.wantKeys)
			}
		})
	}
}

func TestGroupCommitCanceledCaller(t *testing.T) {
	db := groupDB(t)
	g := newGroupCommit(db, true)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := g.do(ctx, insert("x")); !errors.Is(err, context.Canceled) {
		t.Fatalf("do with a canceled context = %v", err)
	}
	if err := g.do(t.Context(), insert("y")); err != nil {
		t.Fatal(err)
	}
	if got := keys(t, db); !slices.Equal(got, []string{"y"}) {
		t.Errorf("rows %v, want [y]", got)
	}
}

// TestStatementsOutliveTheirCaller: a caller whose context ends while its
// work runs in a shared transaction still has its statements run (the
// store's txExec and txQueryRow), so that neither it nor the work of the
// others in the batch is lost to an interrupted statement.
func TestStatementsOutliveTheirCaller(t *testing.T) {
	db := groupDB(t)
	g := newGroupCommit(db, true)
	s := &Store{}
	ctx, cancel := context.WithCancel(t.Context())
	hangUp := func(tx *sql.Tx) error {
		cancel()
		if _, err := s.txExec(ctx, tx, `INSERT INTO t (k) VALUES ($1)`, "gone"); err != nil {
			return err
		}
		var n int
		return s.txQueryRow(ctx, tx, `SELECT count(*) FROM t WHERE k = $1`, "gone").Scan(&n)
	}
	if err := g.do(ctx, hangUp); err != nil {
		t.Fatalf("a work whose caller hung up during it: %v", err)
	}
	if err := g.do(t.Context(), insert("next")); err != nil {
		t.Fatal(err)
	}
	if got := keys(t, db); !slices.Equal(got, []string{"gone", "next"}) {
		t.Errorf("rows %v, want [gone next]", got)
	}
}

// waitDeferred waits until n works wait for a batch to join.
func waitDeferred(t *testing.T, g *groupCommit, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		g.mu.Lock()
		got := len(g.deferred)
		g.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d works deferred, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestGroupCommitLater: deferred work joins the next batch a caller runs
// (one commit for both), and is committed alone when none comes within
// the linger.
func TestGroupCommitLater(t *testing.T) {
	t.Run("joins the next batch", func(t *testing.T) {
		db := groupDB(t)
		g := newGroupCommit(db, true)
		g.linger = time.Hour // only a batch can take it
		done := make(chan error, 1)
		go func() { done <- g.later(t.Context(), insert("outcome")) }()
		waitDeferred(t, g, 1)
		if err := g.do(t.Context(), insert("intent")); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatalf("deferred work: %v", err)
		}
		if g.batches != 1 {
			t.Errorf("%d transactions, want 1 for both", g.batches)
		}
		if got := keys(t, db); !slices.Equal(got, []string{"intent", "outcome"}) {
			t.Errorf("rows %v", got)
		}
	})
	t.Run("alone after the linger", func(t *testing.T) {
		db := groupDB(t)
		g := newGroupCommit(db, true)
		g.linger = time.Millisecond
		if err := g.later(t.Context(), insert("outcome")); err != nil {
			t.Fatal(err)
		}
		if got := keys(t, db); !slices.Equal(got, []string{"outcome"}) || g.batches != 1 {
			t.Errorf("rows %v in %d transactions", got, g.batches)
		}
	})
	t.Run("deferred while a batch runs", func(t *testing.T) {
		db := groupDB(t)
		g := newGroupCommit(db, true)
		g.linger = time.Millisecond
		started, release := make(chan struct{}), make(chan struct{})
		first := make(chan error, 1)
		go func() {
			first <- g.do(t.Context(), func(tx *sql.Tx) error {
				close(started)
				<-release
				return insert("first")(tx)
			})
		}()
		<-started
		done := make(chan error, 1)
		go func() { done <- g.later(t.Context(), insert("outcome")) }()
		waitDeferred(t, g, 1)
		close(release)
		if err := <-first; err != nil {
			t.Fatal(err)
		}
		// Nobody else comes: the leader arms the timer as it leaves.
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if got := keys(t, db); !slices.Equal(got, []string{"first", "outcome"}) {
			t.Errorf("rows %v", got)
		}
	})
}

// TestGroupCommitWithoutSavepoints: without savepoints (PostgreSQL), a
// clean failure (no row affected) leaves the batch alone; any other
// failure rolls the batch back and each work is run again alone, so that
// only the failing caller fails.
func TestGroupCommitWithoutSavepoints(t *testing.T) {
	db := groupDB(t)
	if _, err := db.Exec(`INSERT INTO t (k) VALUES ('taken')`); err != nil {
		t.Fatal(err)
	}
	g := newGroupCommit(db, false)
	started, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- g.do(t.Context(), func(tx *sql.Tx) error {
			close(started)
			<-release
			return insert("first")(tx)
		})
	}()
	<-started
	works := []func(tx *sql.Tx) error{
		insert("a"),
		insert("taken"), // a hard failure: the primary key
		func(tx *sql.Tx) error {
			return execOne(t.Context(), tx, exgate.ErrNotFound, `UPDATE t SET k = 'x' WHERE k = 'none'`)
		},
		insert("c"),
	}
	results := make([]error, len(works))
	var wg sync.WaitGroup
	for i, w := range works {
		wg.Add(1)
		go func() { defer wg.Done(); results[i] = g.do(t.Context(), w) }()
		queued(t, g, i+1)
	}
	close(release)
	wg.Wait()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if results[0] != nil || results[1] == nil || !errors.Is(results[2], exgate.ErrNotFound) || results[3] != nil {
		t.Errorf("results %v; want nil, the conflict, not found, nil", results)
	}
	if got := keys(t, db); !slices.Equal(got, []string{"a", "c", "first", "taken"}) {
		t.Errorf("rows %v", got)
	}
}
