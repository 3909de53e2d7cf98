package exgate

import (
	"cmp"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"
)

// IntentKind says what an intent is for.
type IntentKind string

// Intent kinds.
const (
	IntentOrder      IntentKind = "order"
	IntentWithdrawal IntentKind = "withdrawal"
	// IntentCancel is the cancel of an order (docs/contract.md 2.4): journaled
	// like an order, reconciled by reading the order.
	IntentCancel IntentKind = "cancel"
	// IntentTransfer is a transfer between an account's wallets
	// (docs/contract.md 2.10): journaled like a withdrawal.
	IntentTransfer IntentKind = "transfer"
)

// IntentState is where an intent is in its life.
type IntentState string

// Intent states. An intent is written as Submitting before the exchange is
// called, so that a crash between the call and its answer leaves a record
// to reconcile; it is never sent again.
const (
	// IntentSubmitting: recorded, the exchange call may or may not have
	// happened.
	IntentSubmitting IntentState = "submitting"
	// IntentUnknown: the exchange call ended ambiguously (timeout, reset,
	// 5xx); the reconciler queries the exchange by client id.
	IntentUnknown IntentState = "unknown"
	// IntentAccepted: the exchange accepted it and it is not final yet
	// (order PENDING or PARTIALLY_FILLED, withdrawal pending).
	IntentAccepted IntentState = "accepted"
	// IntentFinal: the answer is final (filled, refused, completed...).
	IntentFinal IntentState = "final"
)

// Done reports whether the intent needs no more reconciliation.
func (s IntentState) Done() bool { return s == IntentFinal }

// IntentAnswer says what an intent's Response holds, in the journal's own
// terms: how an answer is put to a client (an HTTP status, a problem) is
// the API's business, not the journal's.
type IntentAnswer string

// Intent answers.
const (
	// AnswerNone: nothing recorded yet; the intent is being submitted, or
	// its answer was lost in a crash and the reconciler will find it.
	AnswerNone IntentAnswer = ""
	// AnswerRecord: the record the exchange answered or the reconciler
	// read (an Order, a Withdrawal).
	AnswerRecord IntentAnswer = "record"
	// AnswerPending: the record answered while the outcome is unknown
	// (an Order PENDING, a Withdrawal pending).
	AnswerPending IntentAnswer = "pending"
	// AnswerError: the error answered (a refusal, or an intent ended
	// without its outcome), as the journal encodes errors.
	AnswerError IntentAnswer = "error"
)

// IntentOutcome is what is recorded of an intent once its exchange call
// ended or the reconciler read it.
type IntentOutcome struct {
	State    IntentState
	Answer   IntentAnswer
	Response []byte
	// NextDue, when not zero, is when the reconciler next looks at the
	// intent (Attempts unchanged); zero leaves NextDue as it is.
	NextDue time.Time
	// Risk, when set, is this outcome's settlement of the reservation the
	// intent was recorded with (SettleRiskRecord), worked out before the
	// store's write transaction: the store uses it while the intent's
	// stored reservation is still RiskSettlement.Reserved, instead of
	// decoding that reservation and Response in the transaction.
	Risk *RiskSettlement
}

// Intent is the journal record of one order or withdrawal placed through
// the gateway. Response holds the JSON body last answered for it (an Order,
// a Withdrawal or an error) and Answer says which, so that a client
// retrying with the same client id gets the same answer.
type Intent struct {
	// ID is the gateway's id, also sent to the exchange as its client id.
	ID             string
	Kind           IntentKind
	ClientAPIKey   string
	CredentialID   int64
	CredentialName string
	Exchange       string
	// ClientRef is the client's own clientOrderId / clientWithdrawalId;
	// unique per client key and kind when not empty.
	ClientRef string
	// Fingerprint identifies the normalized request parameters, to tell a
	// retry from a conflicting reuse of ClientRef.
	Fingerprint string
	// Request is the normalized request as JSON.
	Request   []byte
	State     IntentState
	Answer    IntentAnswer
	Response  []byte
	CreatedAt time.Time
	UpdatedAt time.Time
	// NextDue is when the reconciler next looks at the intent. A new
	// intent's NextDue is after its submission deadline: until then only
	// the instance sending it asks the exchange about it. Zero means
	// CreatedAt.
	NextDue time.Time
	// Attempts counts the reconciler's reads of the intent; its backoff
	// grows with them.
	Attempts int
	// Exclusive, when not empty, is a key no two intents may hold while
	// their outcome is open (state Submitting or Unknown): CreateIntent
	// fails with ErrConflict when another such intent holds it. The
	// journal keys a transfer by exchange key, asset and amount, so that
	// an exchange without client transfer ids can be reconciled by
	// matching them (docs/contract.md 2.10). Written, never read back.
	Exclusive string
	// Risk, when set, is what the intent reserves of its client key's
	// risk limits (risk.go): CreateIntent checks and reserves it in the
	// same transaction, or records nothing and returns the
	// RISK_LIMIT_EXCEEDED refusal. It is not read back.
	Risk *RiskReservation
}

// NewID returns a random gateway id: prefix followed by lower-case base32
// characters, 18 characters in all, which every exchange accepts as a
// client order id.
func NewID(prefix byte) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz234567"
	var b [17]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	out := make([]byte, 18)
	out[0] = prefix
	for i, c := range b {
		out[i+1] = alphabet[c&31]
	}
	return string(out)
}

// BalanceChange moves Delta (signed) of Asset in one wallet of a paper
// account: Wallet, or spot when empty. The stores keep a list of them as
// JSON, the delta as exact decimal text:
// [{"asset":"BTC","delta":"-0.5"},{"asset":"BTC","delta":"0.5","wallet":"funding"}].
type BalanceChange struct {
	Asset  string          `json:"asset"`
	Delta  decimal.Decimal `json:"delta"`
	Wallet WalletKind      `json:"wallet,omitempty"`
}

// WalletAsset names one balance of a paper account: an asset in a wallet.
type WalletAsset struct {
	Wallet WalletKind
	Asset  string
}

// walletAsset is the balance c moves; an empty Wallet is spot.
func (c BalanceChange) walletAsset() WalletAsset {
	return WalletAsset{Wallet: cmp.Or(c.Wallet, WalletSpot), Asset: c.Asset}
}

// SumBalanceChanges adds up the changes of each asset in each wallet (an
// empty Wallet is spot). A change without an asset, or in a wallet other
// than spot and funding, is an error.
func SumBalanceChanges(changes []BalanceChange) (map[WalletAsset]decimal.Decimal, error) {
	out := make(map[WalletAsset]decimal.Decimal, len(changes))
	for _, c := range changes {
		if c.Asset == "" {
			return nil, errors.New("balance change without an asset")
		}
		k := c.walletAsset()
		if k.Wallet != WalletSpot && k.Wallet != WalletFunding {
			return nil, fmt.Errorf("balance change in unknown wallet %q", c.Wallet)
		}
		out[k] = out[k].Add(c.Delta)
	}
	return out, nil
}

// SimOperation is one balance-moving operation of the simulated exchange
// (a fill, a withdrawal or a transfer between wallets), applied atomically with its changes and kept so
// the operation can be read back by its id.
type SimOperation struct {
	// ID is the client order or withdrawal id the operation carried;
	// unique per credential.
	ID        string
	Kind      IntentKind
	Changes   []BalanceChange
	Record    []byte
	CreatedAt time.Time
	// Open marks an operation that opens a resting order: it is listed by
	// SimOpenOperations until an operation closes it.
	Open bool
	// Closes is the id of the open operation this one closes; applying
	// it fails with ErrConflict when that operation is not open.
	Closes string
}

// RateLimit is a budget of Rate units per Period with bursts up to Burst,
// enforced as a generic cell rate (GCRA): the gateway's own per-client
// limits and the exchanges' request weights and call counters are all
// expressed this way.
type RateLimit struct {
	Rate   int
	Period time.Duration
	Burst  int
}
