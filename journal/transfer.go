package journal

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/exgate/exgate"
)

// Transfers between an account's wallets (docs/contract.md 2.10) are
// journaled like withdrawals: recorded under their clientTransferId (the
// gateway id when the client gives none) before the exchange is called,
// answered again from the journal for the same id, and reconciled by
// reading the exchange's transfer history when the answer was ambiguous,
// never sent again.
//
// An exchange whose transfer call takes no client id (Binance) is read
// back by asset, amount, wallets and time. For that match to be
// unambiguous, a transfer holds the key (exchange key, asset, amount)
// while its outcome is open (exgate.Intent.Exclusive): a second transfer
// of the same asset and amount on the same exchange key meanwhile is
// refused with TRANSFER_IN_FLIGHT, and nothing is sent for it.

var transferKind = kind[exgate.TransferRequest, exgate.Transfer]{
	name:     exgate.IntentTransfer,
	prefix:   't',
	rejected: exgate.CodeTransferRejected,
	setID:    func(r *exgate.TransferRequest, id string) { r.ClientTransferID = id },
	submit: func(ctx context.Context, ex exgate.Exchange, cred exgate.Credential, r exgate.TransferRequest) (exgate.Transfer, error) {
		wt, ok := exgate.TransfersFor(ex, cred)
		if !ok {
			return exgate.Transfer{}, exgate.OneWalletTransfer(ex.Name(), r)
		}
		return wt.Transfer(ctx, cred, r)
	},
	query: func(ctx context.Context, ex exgate.Exchange, cred exgate.Credential, r exgate.TransferRequest, id string) (exgate.Transfer, error) {
		return queryTransfer(ctx, ex, cred, r, exgate.TransferQuery{ClientTransferID: id})
	},
	queryIntent: func(ctx context.Context, ex exgate.Exchange, cred exgate.Credential, r exgate.TransferRequest, it exgate.Intent) (exgate.Transfer, error) {
		q := exgate.TransferQuery{ClientTransferID: it.ID, SentAfter: it.CreatedAt}
		if it.Answer == exgate.AnswerRecord && len(it.Response) > 0 {
			// Accepted: the exchange's id is known.
			var last exgate.Transfer
			if err := json.Unmarshal(it.Response, &last); err == nil {
				q.ExchangeID = last.ExchangeID
			}
		}
		return queryTransfer(ctx, ex, cred, r, q)
	},
	pending: func(r exgate.TransferRequest, id string, at time.Time, exchange string) exgate.Transfer {
		return exgate.Transfer{
			ID: id, Asset: r.Asset, Amount: exgate.NewNumber(r.Amount), From: r.From, To: r.To,
			Status: exgate.TransferPending, Timestamp: at.UnixMilli(), Exchange: exchange,
		}
	},
	label: func(t exgate.Transfer, id, ref string) exgate.Transfer {
		t.ID, t.ClientTransferID = id, ref
		return t
	},
	final: func(t exgate.Transfer) bool { return t.Status.Final() },
	// Malformed input and a one-wallet account are refused before
	// anything is recorded.
	check: func(ctx context.Context, ex exgate.Exchange, cred exgate.Credential, r exgate.TransferRequest) error {
		if err := exgate.CheckTransfer(r); err != nil {
			return err
		}
		if _, ok := exgate.TransfersFor(ex, cred); !ok {
			return exgate.OneWalletTransfer(ex.Name(), r)
		}
		if c, ok := exgate.Ability[exgate.TransferChecker](ex); ok {
			return c.CheckTransferRequest(ctx, cred, r)
		}
		return nil
	},
	idAsRef: true,
	exclusive: func(cred exgate.Credential, r exgate.TransferRequest) string {
		return fmt.Sprintf("transfer/%d/%s/%s", cred.ID, r.Asset, r.Amount.String())
	},
	inFlight: func(r exgate.TransferRequest) error {
		return exgate.Errorf(exgate.CodeTransferInFlight,
			"a transfer of %s %s on this exchange key is still waiting for its outcome; nothing was sent for this one: "+
				"send it again once that transfer has settled (GET /v1/wallet/transfers)", r.Amount, r.Asset)
	},
}

func queryTransfer(ctx context.Context, ex exgate.Exchange, cred exgate.Credential, r exgate.TransferRequest, q exgate.TransferQuery) (exgate.Transfer, error) {
	wt, ok := exgate.TransfersFor(ex, cred)
	if !ok {
		return exgate.Transfer{}, exgate.OneWalletTransfer(ex.Name(), r)
	}
	q.Asset, q.Amount, q.From, q.To = r.Asset, r.Amount, r.From, r.To
	return wt.QueryTransfer(ctx, cred, q)
}

// Transfer submits a transfer between the account's wallets once per
// client reference (the gateway id when ref is empty). On an unknown
// outcome it returns the pending Transfer with an EXCHANGE_TIMEOUT error.
func (s *Service) Transfer(ctx context.Context, cred exgate.Credential, req exgate.TransferRequest, ref string) (exgate.Transfer, error) {
	return submit(ctx, s, transferKind, cred, req, ref)
}

// TransferRecord returns a transfer of the client by gateway id or client
// transfer id, refreshed from the exchange while it is not final.
func (s *Service) TransferRecord(ctx context.Context, apiKey, id, ref string) (exgate.Transfer, error) {
	return lookup(ctx, s, transferKind, apiKey, 0, id, ref)
}

// TransferRecordOf is OrderOf for a transfer.
func (s *Service) TransferRecordOf(ctx context.Context, cred exgate.Credential, id, ref string) (exgate.Transfer, error) {
	return lookup(ctx, s, transferKind, cred.ClientAPIKey, cred.ID, id, ref)
}

// LabelTransfers puts on transfers read from the exchange the ids the
// client knows: a transfer the gateway sent (its gateway id is the
// exchange's client id) gets the gateway's id and the client's
// clientTransferId; any other keeps the exchange's id, without a client
// id (Binance's history has none: its ids are its tranIds).
func (s *Service) LabelTransfers(ctx context.Context, apiKey string, ts []exgate.Transfer) []exgate.Transfer {
	for i, t := range ts {
		if it, ok := s.sent(ctx, apiKey, exgate.IntentTransfer, t.ClientTransferID); ok {
			ts[i].ID, ts[i].ClientTransferID = it.ID, it.ClientRef
			continue
		}
		if t.ExchangeID != "" {
			ts[i].ID = t.ExchangeID
		}
		ts[i].ClientTransferID = ""
	}
	return ts
}
