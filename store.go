package exgate

import (
	"context"
	"time"

	"github.com/shopspring/decimal"
)

// Store is the contract of an exgate store: client keys, exchange
// credentials, the order and withdrawal journal and the simulated
// exchange's paper ledger. Package sqlite (one file, one instance) and
// package postgres (several instances sharing one database) implement it
// on one core, internal/sqlstore; storetest holds both to it, and
// cmd/exgate wires the one the configuration names.
//
// Secrets (a client key's secret, a credential's secret and passphrase)
// are stored sealed and are returned only by the methods that read one
// record. Errors wrap ErrNotFound, ErrConflict or ErrInsufficientFunds
// where the method says so. Implementations are safe for concurrent use,
// also by several instances on one database.
type Store interface {
	Close() error
	// Ping checks that the database answers.
	Ping(ctx context.Context) error

	// CreateClientKey stores a new key; a zero CreatedAt is set to now.
	// Returns an error wrapping ErrConflict when the API key exists.
	CreateClientKey(ctx context.Context, k ClientKey) error
	// ClientKey returns a key with its secret, revoked or not; an error
	// wrapping ErrNotFound when there is none.
	ClientKey(ctx context.Context, apiKey string) (ClientKey, error)
	// ListClientKeys returns every key, oldest first, without secrets.
	ListClientKeys(ctx context.Context) ([]ClientKey, error)
	// RevokeClientKey marks a key revoked now, keeping the first time when
	// it is revoked again; an error wrapping ErrNotFound when there is no
	// such key.
	RevokeClientKey(ctx context.Context, apiKey string) error

	// AddCredential stores a credential of an active client key and
	// returns it with its ID (never reused) and CreatedAt (now when zero);
	// an error wrapping ErrConflict for a duplicate name and ErrNotFound
	// when the client key is unknown or revoked.
	AddCredential(ctx context.Context, c Credential) (Credential, error)
	// Credential returns a credential by name with its secrets; an error
	// wrapping ErrNotFound when there is none.
	Credential(ctx context.Context, apiKey, name string) (Credential, error)
	// ListCredentials returns a client key's credentials by name, without
	// secrets.
	ListCredentials(ctx context.Context, apiKey string) ([]Credential, error)
	// RemoveCredential deletes a credential and its paper ledger; an error
	// wrapping ErrNotFound when there is none.
	RemoveCredential(ctx context.Context, apiKey, name string) error

	// CreateIntent records a new intent; a zero CreatedAt is set to now and
	// a zero UpdatedAt to CreatedAt. Returns an error wrapping ErrConflict
	// for a duplicate ID or (client key, kind, non-empty ClientRef), or a
	// non-empty Exclusive held by an intent in state Submitting or
	// Unknown: of several instances racing on one client id, exactly one
	// succeeds. With in.Risk set it also reserves the intent's share of
	// its client key's limits in the same transaction, or records nothing
	// and returns the RISK_LIMIT_EXCEEDED *Error (RiskReservation.Check)
	// when a maximum would be passed.
	CreateIntent(ctx context.Context, in Intent) error
	// Intent returns an intent by ID; an error wrapping ErrNotFound when
	// there is none.
	Intent(ctx context.Context, id string) (Intent, error)
	// IntentByClientRef returns the intent of a client key and kind
	// carrying the client's own id ref; an error wrapping ErrNotFound when
	// there is none (always for an empty ref).
	IntentByClientRef(ctx context.Context, apiKey string, kind IntentKind, ref string) (Intent, error)
	// UpdateIntent records an intent's outcome (its state, last answer
	// and, when set, its NextDue) and sets its UpdatedAt to now, settling
	// its risk reservation (SettleRisk) in the same transaction; an error
	// wrapping ErrNotFound when there is no such intent.
	UpdateIntent(ctx context.Context, id string, o IntentOutcome) error
	// RecordOutcome is UpdateIntent for a writer that nobody waits on
	// (the outcome of an order already answered): the store may hold the
	// write back for a few milliseconds so that it shares the commit of
	// the next write instead of taking a synced commit of its own. It
	// returns once the outcome is durable, or failed.
	RecordOutcome(ctx context.Context, id string, o IntentOutcome) error
	// UnfinishedIntents returns up to limit intents that are not final,
	// oldest first; limit <= 0 means no limit.
	UnfinishedIntents(ctx context.Context, limit int) ([]Intent, error)
	// DueIntents returns up to limit unfinished intents whose NextDue is
	// at or before now, the longest overdue first (then in the order they
	// were recorded); limit <= 0 means no limit. An intent that can never
	// progress is pushed back by ScheduleIntent and so cannot hide the
	// others.
	DueIntents(ctx context.Context, now time.Time, limit int) ([]Intent, error)
	// ScheduleIntent sets when the reconciler next looks at an intent and
	// how many times it has looked, leaving the rest (UpdatedAt too)
	// unchanged; an error wrapping ErrNotFound when there is no such
	// intent.
	ScheduleIntent(ctx context.Context, id string, next time.Time, attempts int) error

	// EnsureSimAccount opens a credential's paper account with the initial
	// balances, once: when the account exists it changes nothing. Returns
	// an error wrapping ErrNotFound when the credential does not exist.
	EnsureSimAccount(ctx context.Context, credentialID int64, initial []BalanceChange) error
	// SimBalances returns a credential's paper balances of the spot
	// wallet by asset, zero balances included; an error wrapping
	// ErrNotFound when the account was never opened.
	SimBalances(ctx context.Context, credentialID int64) (map[string]decimal.Decimal, error)
	// SimWalletBalances is SimBalances for one wallet (docs/contract.md
	// 2.10); a new account holds everything in spot.
	SimWalletBalances(ctx context.Context, credentialID int64, wallet WalletKind) (map[string]decimal.Decimal, error)
	// ApplySimOperation records op and applies all its balance changes at
	// once; a zero op.CreatedAt is set to now. With op.Open the operation
	// is listed as open; with op.Closes it closes that open operation in
	// the same transaction. When it fails nothing changes: an error
	// wrapping ErrConflict when the credential has an operation with
	// op.ID or op.Closes names no open operation, ErrInsufficientFunds
	// when a balance would end negative, or ErrNotFound when the account
	// was never opened.
	ApplySimOperation(ctx context.Context, credentialID int64, op SimOperation) error
	// SimOperation returns an operation applied by ApplySimOperation; an
	// error wrapping ErrNotFound when there is none.
	SimOperation(ctx context.Context, credentialID int64, id string) (SimOperation, error)

	// ControlStore keeps the operator's allowlists and audit trail
	// (controls.go).
	ControlStore
	// RiskStore keeps the risk limits, halts and usage (risk.go).
	RiskStore
	// ConsoleStore keeps the web console's logins and sessions and reads
	// the journal by exchange key (console.go).
	ConsoleStore
	// InstanceStore keeps the running gateways' heartbeats (instances.go).
	InstanceStore
	// SimOperations returns up to limit operations of a kind, newest
	// first (by CreatedAt, then by the order they were applied); limit
	// <= 0 means no limit.
	SimOperations(ctx context.Context, credentialID int64, kind IntentKind, limit int) ([]SimOperation, error)
	// SimOpenOperations returns the operations applied with Open that no
	// operation has closed yet, newest first.
	SimOpenOperations(ctx context.Context, credentialID int64) ([]SimOperation, error)
	// PaperCredentialsResting returns the paper keys of an exchange that
	// have an open (resting) order, with ID, ClientAPIKey, Name,
	// Exchange, Paper and PaperBalances set and no secret
	// (docs/contract.md 2.9).
	PaperCredentialsResting(ctx context.Context, exchange string) ([]Credential, error)
}
