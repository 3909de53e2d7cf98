package exgate

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// WalletKind names one of an account's wallets (docs/contract.md 2.10):
// spot is the trading wallet orders use; funding is where some exchanges
// land deposits and take withdrawals from.
type WalletKind string

// The two wallets of an account.
const (
	WalletSpot    WalletKind = "spot"
	WalletFunding WalletKind = "funding"
)

// ParseWalletKind accepts spot or funding in any case.
func ParseWalletKind(s string) (WalletKind, error) {
	switch w := WalletKind(strings.ToLower(s)); w {
	case WalletSpot, WalletFunding:
		return w, nil
	}
	return "", fmt.Errorf("wallet must be spot or funding, not %q", s)
}

// TransferRequest is a validated transfer of Amount of Asset from one wallet
// of an account to its other wallet (From != To).
type TransferRequest struct {
	Asset  string
	Amount decimal.Decimal
	From   WalletKind
	To     WalletKind
	// ClientTransferID is the gateway's id for the transfer, sent to the
	// exchange where it accepts one; same alphabet as ClientOrderID.
	ClientTransferID string
}

// TransferQuery names a transfer submitted through Transfer. An exchange
// whose transfer call takes no client id matches Asset, Amount, From, To
// and a time not before SentAfter in its history (docs/contract.md 2.10).
type TransferQuery struct {
	ClientTransferID string
	ExchangeID       string
	Asset            string
	Amount           decimal.Decimal
	From             WalletKind
	To               WalletKind
	SentAfter        time.Time
}

// Transfer is a move between an account's wallets as the API returns it.
// Status is pending, completed or failed.
type Transfer struct {
	ID               string         `json:"id"`
	ClientTransferID string         `json:"clientTransferId"`
	Asset            string         `json:"asset"`
	Amount           Number         `json:"amount"`
	From             WalletKind     `json:"from"`
	To               WalletKind     `json:"to"`
	Status           TransferStatus `json:"status"`
	Timestamp        int64          `json:"timestamp"`

	Exchange   string `json:"exchange"`
	ExchangeID string `json:"exchangeId,omitempty"`
}

// TransferFilter narrows RecentTransfers; an empty Asset matches every
// asset.
type TransferFilter struct {
	Asset string
	Limit int
}

// WalletTransfers is an exchange with a funding wallet beside its spot
// wallet, and transfers between the two (docs/contract.md 2.10). An
// exchange without it has one wallet, spot.
type WalletTransfers interface {
	// WalletBalances is Balances for one wallet; WalletSpot answers as
	// Balances does.
	WalletBalances(ctx context.Context, cred Credential, wallet WalletKind) ([]Balance, error)
	// Transfer submits one transfer carrying req.ClientTransferID. It is
	// never retried by the adapter. Returns INSUFFICIENT_FUNDS,
	// INVALID_PARAMETER, EXCHANGE_TIMEOUT (outcome unknown) and the
	// exchange errors.
	Transfer(ctx context.Context, cred Credential, req TransferRequest) (Transfer, error)
	// QueryTransfer reads a transfer back. Returns an error wrapping
	// ErrNotFound when the exchange has no such transfer.
	QueryTransfer(ctx context.Context, cred Credential, q TransferQuery) (Transfer, error)
	// RecentTransfers returns transfers newest first.
	RecentTransfers(ctx context.Context, cred Credential, f TransferFilter) ([]Transfer, error)
}

// CredentialWallets is an exchange whose wallets depend on the key, such
// as the paper switch (docs/contract.md 2.9): a paper key has sim's two
// wallets, a real key the exchange's own. TransfersFor asks it.
type CredentialWallets interface {
	WalletTransfersFor(cred Credential) (WalletTransfers, bool)
}

// TransfersFor returns what moves funds between the wallets of cred's
// account on ex, and false when that account has one wallet, spot.
func TransfersFor(ex Exchange, cred Credential) (WalletTransfers, bool) {
	if cw, ok := Ability[CredentialWallets](ex); ok {
		return cw.WalletTransfersFor(cred)
	}
	return Ability[WalletTransfers](ex)
}

// OneWallet is the refusal of a wallet other than spot, named by param
// (to, from or wallet), on an exchange whose accounts have one wallet
// (docs/contract.md 2.10).
func OneWallet(exchange, param string) error {
	return ParamError(param, "%s has one wallet here, spot: %s must be spot (docs/contract.md 2.10)", exchange, param)
}

// OneWalletTransfer is OneWallet for a transfer: it names the wallet
// parameter that is not spot.
func OneWalletTransfer(exchange string, r TransferRequest) error {
	if r.To != WalletSpot {
		return OneWallet(exchange, "to")
	}
	return OneWallet(exchange, "from")
}

// Ability returns what ex can do as T, looking through every wrapper
// (Unwrapper) so that no wrapper hides an ability of the exchange it
// wraps: Ability[WalletTransfers](ex), Ability[OrderManager](ex). The
// outermost exchange that has the ability answers, so a wrapper that
// implements it itself (coalesce's pre-encoded klines and books) comes
// before the exchange it wraps. It is the one way the gateway finds an
// optional ability.
func Ability[T any](ex Exchange) (T, bool) {
	for ex != nil {
		if t, ok := ex.(T); ok {
			return t, true
		}
		u, ok := ex.(Unwrapper)
		if !ok {
			break
		}
		ex = u.Unwrap()
	}
	var zero T
	return zero, false
}

// TransferChecker is an optional ability (found with Ability) of an
// exchange that can tell without calling anyone that a transfer's
// parameters are malformed (an asset it does not list, more decimals than
// the asset has). The journal asks it before it records a transfer, so
// that bad input is refused before anything is recorded. It returns
// INVALID_PARAMETER naming the parameter, or nil; the funds are Transfer's
// to check.
type TransferChecker interface {
	CheckTransferRequest(ctx context.Context, cred Credential, req TransferRequest) error
}

// CheckTransfer checks what every exchange requires of a transfer before
// anything is sent: an asset, a positive amount, two known and different
// wallets. The errors name the parameter (docs/contract.md 2.10).
func CheckTransfer(req TransferRequest) error {
	switch {
	case req.Asset == "":
		return ParamError("asset", "asset is required")
	case !req.Amount.IsPositive():
		return ParamError("amount", "amount must be positive, not %s", req.Amount)
	}
	if _, err := ParseWalletKind(string(req.From)); err != nil {
		return ParamError("from", "%v", err)
	}
	if _, err := ParseWalletKind(string(req.To)); err != nil {
		return ParamError("to", "%v", err)
	}
	if req.From == req.To {
		return ParamError("to", "from and to are both %s: a transfer moves funds between two different wallets", req.From)
	}
	return nil
}
