package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/exgate/exgate"
)

// groupCommit runs the write transactions of concurrent callers on a
// database with one writer (SQLite) as one transaction, committed — and
// synced to disk — once for all of them. Every order writes its intent
// before the exchange call and its outcome after (docs/orders.md); with
// one writer and one sync per transaction, concurrent orders would queue
// for the disk one transaction at a time.
//
// Each caller's work runs in a savepoint of its own, so a caller whose
// work fails (a conflict, a missing row) leaves nothing behind and does
// not fail the others. A caller learns its result only after the shared
// commit: nothing is reported done before it is durable. When the commit
// fails, every caller of the batch gets the error and nothing of the
// batch is written.
//
// There is no background goroutine: the first caller to find the writer
// free runs the batch of everything queued by then, its own work
// included, and hands the writer to the next caller queued meanwhile.
//
// Work that nobody waits on (an order's outcome and audit record, written
// after the client has its answer) is deferred (later): it joins the next
// batch a caller runs, so that it shares that batch's commit instead of
// taking one of its own; only when no batch comes within linger does a
// timer run it alone. A lone client then pays one synced commit per
// order, its intent's, which carries the previous order's outcome.
//
// Without savepoints (PostgreSQL, where each statement is a round trip to
// the server), a work that fails cleanly (clean: a conflict or a missing
// row) must have written nothing and left the transaction usable, as a
// single INSERT ... ON CONFLICT DO NOTHING or UPDATE that matched nothing
// does; any other failure rolls the batch back and each of its works is
// run again alone, in a transaction of its own.
type groupCommit struct {
	db *sql.DB
	// savepoints runs each work in a savepoint of its own (SQLite);
	// without them a batch that fails is run again work by work.
	savepoints bool
	// linger is how long deferred work waits for a batch to join.
	linger time.Duration
	// stmts, when set, keeps the savepoint statements prepared.
	stmts *stmtCache

	mu       sync.Mutex
	queue    []*txWork
	deferred []*txWork
	busy     bool
	// timer runs the deferred works when no batch took them in time;
	// armed while it is set to.
	timer *time.Timer
	armed bool
	// batches counts the transactions committed or attempted, for tests.
	batches int
}

// defaultLinger is how long deferred work waits for a batch: a client
// placing orders one after the other sends its next one sooner.
const defaultLinger = 20 * time.Millisecond

func newGroupCommit(db *sql.DB, savepoints bool) *groupCommit {
	g := &groupCommit{db: db, savepoints: savepoints, linger: defaultLinger}
	g.timer = time.AfterFunc(time.Hour, g.flush)
	g.timer.Stop()
	return g
}

// txWork is one caller's transaction body.
type txWork struct {
	ctx  context.Context
	fn   func(tx *sql.Tx) error
	done chan error    // the result, sent once
	lead chan struct{} // the writer handed to this caller
}

// do runs fn in the next batch and returns its result once the batch is
// committed.
func (g *groupCommit) do(ctx context.Context, fn func(tx *sql.Tx) error) error {
	w := &txWork{ctx: ctx, fn: fn, done: make(chan error, 1), lead: make(chan struct{}, 1)}
	g.mu.Lock()
	g.queue = append(g.queue, w)
	leader := !g.busy
	g.busy = true
	g.mu.Unlock()
	if !leader {
		select {
		case err := <-w.done:
			return err
		case <-w.lead:
		}
	}
	g.lead()
	return <-w.done
}

// later runs fn in the next batch anyone runs, or alone after linger, and
// returns its result once that batch is committed.
func (g *groupCommit) later(ctx context.Context, fn func(tx *sql.Tx) error) error {
	w := &txWork{ctx: ctx, fn: fn, done: make(chan error, 1)}
	g.mu.Lock()
	g.deferred = append(g.deferred, w)
	if !g.busy && !g.armed {
		g.armed = true
		g.timer.Reset(g.linger)
	}
	g.mu.Unlock()
	return <-w.done
}

// flush runs the deferred works when no batch has taken them.
func (g *groupCommit) flush() {
	g.mu.Lock()
	g.armed = false
	if g.busy || len(g.deferred) == 0 {
		// A batch is running: it takes them, or its leader arms the
		// timer again when it lets the writer go.
		g.mu.Unlock()
		return
	}
	g.busy = true
	g.mu.Unlock()
	g.lead()
}

// lead runs one batch as the writer's holder: the deferred works and
// everything queued, then hands the writer on.
func (g *groupCommit) lead() {
	g.mu.Lock()
	batch := append(g.deferred, g.queue...)
	g.queue, g.deferred = nil, nil
	if g.armed {
		g.armed = false
		g.timer.Stop()
	}
	g.batches++
	g.mu.Unlock()

	g.run(batch)

	g.mu.Lock()
	if len(g.queue) > 0 {
		g.queue[0].lead <- struct{}{}
	} else {
		g.busy = false
		if len(g.deferred) > 0 && !g.armed {
			g.armed = true
			g.timer.Reset(g.linger)
		}
	}
	g.mu.Unlock()
}

// run executes a batch and sends each caller its result.
func (g *groupCommit) run(batch []*txWork) {
	results := make([]error, len(batch))
	err := g.runTx(batch, results)
	if err != nil && !g.savepoints && len(batch) > 1 {
		// Without savepoints one work's failure fails the batch: each
		// work runs again alone, so that only its own failure is its.
		for i, w := range batch {
			one := []error{nil}
			if err := g.runTx([]*txWork{w}, one); err != nil && one[0] == nil {
				one[0] = err
			}
			results[i] = one[0]
		}
		for i, w := range batch {
			w.done <- results[i]
		}
		return
	}
	for i, w := range batch {
		if err != nil && results[i] == nil {
			results[i] = err
		}
		w.done <- results[i]
	}
}

// runTx runs the batch in one transaction and commits it. With
// savepoints each body runs in one of its own; without, a body's failure
// that is not clean fails the batch. It returns an error that fails the
// whole batch: the transaction could not begin, a savepoint could not be
// taken, released or rolled back to (the transaction is gone: SQLite
// rolls a transaction back by itself when a statement in it is
// interrupted), a body failed without savepoints, or the commit failed.
func (g *groupCommit) runTx(batch []*txWork, results []error) (err error) {
	// The transaction belongs to no caller: one caller giving up must not
	// roll back the others' work. Each body still runs its statements
	// with its own context.
	tx, err := g.db.BeginTx(context.Background(), nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	for i, w := range batch {
		if err := w.ctx.Err(); err != nil {
			results[i] = err
			continue
		}
		if !g.savepoints {
			results[i] = protect(w.fn, tx)
			if results[i] != nil && !clean(results[i]) {
				return results[i]
			}
			continue
		}
		if err := g.exec(tx, savepointSQL); err != nil {
			return fmt.Errorf("savepoint: %w", err)
		}
		results[i] = protect(w.fn, tx)
		end := []string{releaseSQL}
		if results[i] != nil {
			end = []string{rollbackToSQL, releaseSQL}
		}
		for _, stmt := range end {
			if err := g.exec(tx, stmt); err != nil {
				return fmt.Errorf("end of one caller's work in a shared transaction: %w", err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// The statements around one caller's work in a shared transaction.
const (
	savepointSQL  = `SAVEPOINT exgate_work`
	releaseSQL    = `RELEASE exgate_work`
	rollbackToSQL = `ROLLBACK TO exgate_work`
)

// exec runs one of the savepoint statements in tx.
func (g *groupCommit) exec(tx *sql.Tx, query string) error {
	if st := g.stmts.inTx(context.Background(), tx, query); st != nil {
		_, err := st.Exec()
		return err
	}
	_, err := tx.Exec(query)
	return err
}

// clean reports whether a work's failure left the transaction as it was:
// its one statement matched no row or conflicted (execOne's none).
func clean(err error) bool {
	return errors.Is(err, exgate.ErrConflict) || errors.Is(err, exgate.ErrNotFound)
}

// protect runs fn and turns a panic into an error, so one caller's bug
// cannot leave the others waiting for a writer that never comes back.
func protect(fn func(tx *sql.Tx) error, tx *sql.Tx) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = errors.Join(errPanic, fmt.Errorf("%v", v))
		}
	}()
	return fn(tx)
}

var errPanic = errors.New("panic in a write transaction")
