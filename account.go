package exgate

import (
	"fmt"
	"strings"

	"github.com/shopspring/decimal"
)

// Balance is one asset of an account. Available and Locked are decimal
// strings in JSON.
type Balance struct {
	Asset     string          `json:"asset"`
	Available decimal.Decimal `json:"available"`
	Locked    decimal.Decimal `json:"locked"`
}

// TransferStatus is the normalized state of a deposit or withdrawal.
type TransferStatus string

// Deposit and withdrawal states (docs/contract.md 2.3). Each adapter maps its
// exchange's codes to these in a table and keeps the original in RawStatus.
const (
	TransferPending   TransferStatus = "pending"
	TransferCompleted TransferStatus = "completed"
	TransferFailed    TransferStatus = "failed"
	TransferCanceled  TransferStatus = "canceled"
)

// Final reports whether the status can no longer change.
func (s TransferStatus) Final() bool { return s != TransferPending }

// ParseTransferStatus accepts the four normalized values in any case.
func ParseTransferStatus(s string) (TransferStatus, error) {
	switch st := TransferStatus(strings.ToLower(s)); st {
	case TransferPending, TransferCompleted, TransferFailed, TransferCanceled:
		return st, nil
	}
	return "", fmt.Errorf("status must be pending, completed, failed or canceled, not %q", s)
}

// Deposit is one incoming transfer.
type Deposit struct {
	ID        string         `json:"id"`
	Amount    Number         `json:"amount"`
	Asset     string         `json:"asset"`
	Status    TransferStatus `json:"status"`
	Address   string         `json:"address"`
	Tag       string         `json:"tag,omitempty"`
	Network   string         `json:"network"`
	TxID      string         `json:"txId"`
	Timestamp int64          `json:"timestamp"`
	RawStatus string         `json:"rawStatus"`
}

// DepositFilter narrows RecentDeposits; empty fields match everything.
type DepositFilter struct {
	Asset  string
	Status TransferStatus
}

// DepositAddressRequest asks for the address of Asset on Network.
type DepositAddressRequest struct {
	Asset   string
	Network string
}

// DepositAddress is where to send an asset on a network. Tag is nil when
// the network has no memo or tag.
type DepositAddress struct {
	Asset   string  `json:"asset"`
	Address string  `json:"address"`
	Network string  `json:"network"`
	Tag     *string `json:"tag"`
}

// WithdrawalRequest is a validated withdrawal. Amount is what the
// destination receives; the exchange's fee comes on top (TotalAmount).
type WithdrawalRequest struct {
	Asset   string
	Network string
	Address string
	Tag     string
	Amount  decimal.Decimal
	// ClientWithdrawalID is the gateway's id for the withdrawal, sent to
	// the exchange where it accepts one; same alphabet as ClientOrderID.
	ClientWithdrawalID string
}

// WithdrawalQuery names a withdrawal submitted through Withdraw.
type WithdrawalQuery struct {
	Asset              string
	ClientWithdrawalID string
	ExchangeID         string
}

// Withdrawal is an outgoing transfer as the API returns it. Amount is what
// the destination receives, Fees the exchange's fee (nil while unknown),
// TotalAmount their sum: what left the account.
type Withdrawal struct {
	ID          string         `json:"id"`
	Amount      Number         `json:"amount"`
	Fees        *Number        `json:"fees"`
	TotalAmount Number         `json:"totalAmount"`
	Asset       string         `json:"asset"`
	Status      TransferStatus `json:"status"`
	ToAddress   string         `json:"toAddress"`
	TxID        string         `json:"txId"`
	Timestamp   int64          `json:"timestamp"`
	Network     string         `json:"network"`

	Tag                string `json:"tag,omitempty"`
	Exchange           string `json:"exchange"`
	ClientWithdrawalID string `json:"clientWithdrawalId,omitempty"`
	ExchangeID         string `json:"exchangeId,omitempty"`
	RawStatus          string `json:"rawStatus"`
	// Reason says why a withdrawal read back with status failed was
	// refused (by the exchange or by the gateway's check of its rules) or
	// found never made: the problem code and detail the withdrawal was
	// answered with (docs/contract.md 2.4).
	Reason *Reason `json:"reason,omitempty"`
}
