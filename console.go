package exgate

import (
	"context"
	"time"
)

// ConsoleStore is the part of a Store the web console needs
// (docs/contract.md 2.7): one-time login links, sessions, and the
// journal read by exchange key. Logins and sessions are kept in the store,
// not in a process, so that `exgate console-login` run anywhere makes a
// link any instance accepts. Only hashes of the link tokens and session
// ids are stored, never the values themselves.
type ConsoleStore interface {
	// CreateConsoleLogin stores a login link's token hash, usable until
	// expires, and removes the links and sessions expired at the store's
	// now. Returns an error wrapping ErrConflict when the hash exists.
	CreateConsoleLogin(ctx context.Context, tokenHash string, expires time.Time) error
	// UseConsoleLogin marks the link used at now. Exactly one call
	// succeeds for a link, and only before it expires; otherwise the error
	// wraps ErrNotFound (unknown, used or expired: the caller is not told
	// which).
	UseConsoleLogin(ctx context.Context, tokenHash string, now time.Time) error
	// CreateConsoleSession stores a new session; an error wrapping
	// ErrConflict when its IDHash exists.
	CreateConsoleSession(ctx context.Context, s ConsoleSession) error
	// ConsoleSession returns the session whose id hashes to idHash when it
	// has not expired at now; an error wrapping ErrNotFound otherwise.
	ConsoleSession(ctx context.Context, idHash string, now time.Time) (ConsoleSession, error)
	// ExtendConsoleSession moves a session's expiry to expires; an error
	// wrapping ErrNotFound when there is no such session.
	ExtendConsoleSession(ctx context.Context, idHash string, expires time.Time) error
	// DeleteConsoleSession ends a session (logout); deleting one that does
	// not exist is not an error.
	DeleteConsoleSession(ctx context.Context, idHash string) error
	// RecentIntents returns up to limit intents of kind made with the
	// exchange key credentialID, newest first; limit <= 0 means no limit.
	RecentIntents(ctx context.Context, credentialID int64, kind IntentKind, limit int) ([]Intent, error)
}

// ConsoleSession is a logged-in console session. The session id itself
// lives only in the operator's cookie; the store keeps its hash.
type ConsoleSession struct {
	IDHash    string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// AuditActorConsole marks an admin change made in the web console.
const AuditActorConsole = "console"
