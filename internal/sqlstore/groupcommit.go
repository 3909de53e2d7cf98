package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
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
type groupCommit struct {
	db *sql.DB

	mu    sync.Mutex
	queue []*txWork
	busy  bool
	// batches counts the transactions committed or attempted, for tests.
	batches int
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
	g.mu.Lock()
	batch := g.queue
	g.queue = nil
	g.batches++
	g.mu.Unlock()

	g.run(batch)

	g.mu.Lock()
	if len(g.queue) > 0 {
		g.queue[0].lead <- struct{}{}
	} else {
		g.busy = false
	}
	g.mu.Unlock()
	return <-w.done
}

// run executes a batch and sends each caller its result.
func (g *groupCommit) run(batch []*txWork) {
	results := make([]error, len(batch))
	err := g.runTx(batch, results)
	for i, w := range batch {
		if err != nil && results[i] == nil {
			results[i] = err
		}
		w.done <- results[i]
	}
}

// runTx runs the batch in one transaction, each body in a savepoint, and
// commits it. It returns an error that fails the whole batch: the
// transaction could not begin, a savepoint could not be taken, released
// or rolled back to (the transaction is gone: SQLite rolls a transaction
// back by itself when a statement in it is interrupted), or the commit
// failed.
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
		if _, err := tx.Exec(`SAVEPOINT exgate_work`); err != nil {
			return fmt.Errorf("savepoint: %w", err)
		}
		results[i] = protect(w.fn, tx)
		end := []string{`RELEASE exgate_work`}
		if results[i] != nil {
			end = []string{`ROLLBACK TO exgate_work`, `RELEASE exgate_work`}
		}
		for _, stmt := range end {
			if _, err := tx.Exec(stmt); err != nil {
				return fmt.Errorf("end of one caller's work in a shared transaction: %w", err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
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
