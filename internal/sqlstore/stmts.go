package sqlstore

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
)

// stmtCache keeps statements prepared, for a driver that would otherwise
// parse each statement every time it runs (SQLite: in modernc.org/sqlite
// the parse of an INSERT costs more than the INSERT). Statements run in
// write transactions are prepared once, after the migrations, while the
// one write connection is free: preparing one later would wait for that
// connection, which the transaction holds. Reads are prepared on the read
// pool the first time they run.
type stmtCache struct {
	// write maps the statements of writeStmts to their prepared form;
	// nil until prepared, then read-only.
	write atomic.Pointer[map[string]*sql.Stmt]

	mu   sync.Mutex
	read map[string]*sql.Stmt
}

// writeStmts are the statements of the journal's writes, run in shared
// transactions (groupcommit.go) on every order.
var writeStmts = []string{
	insertIntent, updateIntentSQL, updateIntentDueSQL, scheduleIntentSQL, insertAuditSQL,
	lockRiskKeySQL, createRiskKeySQL, writeFiguresSQL, swapFiguresSQL, updateIntentRiskSQL,
	savepointSQL, releaseSQL, rollbackToSQL,
}

// prepareWrites prepares writeStmts on db. A statement that cannot be
// prepared is run unprepared.
func (c *stmtCache) prepareWrites(ctx context.Context, db *sql.DB) {
	m := make(map[string]*sql.Stmt, len(writeStmts))
	for _, q := range writeStmts {
		if st, err := db.PrepareContext(ctx, q); err == nil {
			m[q] = st
		}
	}
	c.write.Store(&m)
}

// inTx returns query prepared for tx, or nil when it is not kept.
func (c *stmtCache) inTx(ctx context.Context, tx *sql.Tx, query string) *sql.Stmt {
	if c == nil {
		return nil
	}
	m := c.write.Load()
	if m == nil {
		return nil
	}
	st, ok := (*m)[query]
	if !ok {
		return nil
	}
	return tx.StmtContext(ctx, st)
}

// onRead returns query prepared on the read pool db, preparing it the
// first time; nil when it cannot be prepared.
func (c *stmtCache) onRead(ctx context.Context, db *sql.DB, query string) *sql.Stmt {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.read[query]; ok {
		return st
	}
	st, err := db.PrepareContext(context.WithoutCancel(ctx), query)
	if err != nil {
		return nil
	}
	if c.read == nil {
		c.read = map[string]*sql.Stmt{}
	}
	c.read[query] = st
	return st
}

// close closes every statement kept.
func (c *stmtCache) close() {
	if c == nil {
		return
	}
	if m := c.write.Load(); m != nil {
		for _, st := range *m {
			_ = st.Close()
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.read {
		_ = st.Close()
	}
}

// The statements of a write transaction run to their end even when their
// caller's context ends meanwhile (context.WithoutCancel): they are
// short, and the transaction may be shared (groupcommit.go), where a
// statement interrupted for one caller who hung up would make SQLite
// roll back every caller's work with it. A caller whose context ended
// before its work began is left out of the batch instead. It also spares
// each statement the watch that modernc.org/sqlite keeps on a context
// that can end (a goroutine and a progress handler per statement).

// txExec runs query in tx, prepared when it is kept.
func (s *Store) txExec(ctx context.Context, tx *sql.Tx, query string, args ...any) (sql.Result, error) {
	ctx = context.WithoutCancel(ctx)
	if st := s.stmts.inTx(ctx, tx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return tx.ExecContext(ctx, query, args...)
}

// txQueryRow runs query in tx, prepared when it is kept.
func (s *Store) txQueryRow(ctx context.Context, tx *sql.Tx, query string, args ...any) *sql.Row {
	ctx = context.WithoutCancel(ctx)
	if st := s.stmts.inTx(ctx, tx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return tx.QueryRowContext(ctx, query, args...)
}

// readRow runs query on the read pool, prepared when the dialect keeps
// statements.
func (s *Store) readRow(ctx context.Context, query string, args ...any) *sql.Row {
	if st := s.stmts.onRead(ctx, s.read, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return s.read.QueryRowContext(ctx, query, args...)
}
