package httpapi

import (
	"context"
	"net/http"

	"github.com/exgate/exgate"
)

// Transfers between an account's wallets (docs/contract.md 2.10):
// POST /v1/wallet/transfer (trade permission; not subject to the risk
// checks: nothing leaves the account), GET /v1/wallet/transfer,
// GET /v1/wallet/transfers and the wallet parameter of
// GET /v1/wallet/account-balance. An exchange without
// exgate.WalletTransfers has one wallet, spot: a transfer there is 400
// naming the wallet parameter that is not spot, and wallet=funding is 400
// naming wallet.

// transferLedger is the journal's side of transfers: recorded before they
// are sent, idempotent by clientTransferId, reconciled from the
// exchange's history.
type transferLedger interface {
	Transfer(ctx context.Context, cred exgate.Credential, req exgate.TransferRequest, clientRef string) (exgate.Transfer, error)
	TransferRecordOf(ctx context.Context, cred exgate.Credential, id, clientRef string) (exgate.Transfer, error)
	// LabelTransfers puts the gateway's and the client's ids on the
	// transfers the gateway sent.
	LabelTransfers(ctx context.Context, apiKey string, ts []exgate.Transfer) []exgate.Transfer
}

// wallet reads a wallet parameter: spot or funding, def when absent.
func (ps params) wallet(name string, required bool, def exgate.WalletKind) (exgate.WalletKind, error) {
	v, err := ps.str(name, required)
	if err != nil {
		return "", err
	}
	if v == "" {
		return def, nil
	}
	w, err := exgate.ParseWalletKind(v)
	if err != nil {
		return "", exgate.ParamError(name, "%s must be spot or funding, not %q", name, clip(v))
	}
	return w, nil
}

// transferRequest reads and checks the parameters of POST
// /v1/wallet/transfer.
func transferRequest(ps params, r *http.Request) (exgate.TransferRequest, string, error) {
	var req exgate.TransferRequest
	var err error
	if req.Asset, err = ps.asset("asset", true); err != nil {
		return req, "", err
	}
	if req.Amount, _, err = ps.positiveDecimal("amount", true); err != nil {
		return req, "", err
	}
	if req.From, err = ps.wallet("from", true, ""); err != nil {
		return req, "", err
	}
	if req.To, err = ps.wallet("to", true, ""); err != nil {
		return req, "", err
	}
	if req.From == req.To {
		return req, "", exgate.ParamError("to", "from and to are both %s: a transfer moves funds between two different wallets", req.From)
	}
	ref, err := ps.clientRef("clientTransferId", r)
	return req, ref, err
}

func (s *Server) handleTransfer(w http.ResponseWriter, r *http.Request, c *call) error {
	ps, err := newParams(c.params, "asset", "amount", "from", "to", "clientTransferId")
	if err != nil {
		return err
	}
	req, ref, err := transferRequest(ps, r)
	if err != nil {
		return err
	}
	if _, ok := exgate.TransfersFor(c.ex, c.cred); !ok {
		return exgate.OneWalletTransfer(c.cred.Exchange, req)
	}
	if s.xfers == nil {
		return exgate.Errorf(exgate.CodeNotImplemented, "transfers are not available through this gateway's journal")
	}
	tr, err := s.xfers.Transfer(r.Context(), c.cred, req, ref)
	if err != nil {
		return withPending(err, tr)
	}
	return writeJSON(w, tr)
}

func (s *Server) handleTransferRecord(w http.ResponseWriter, r *http.Request, c *call) error {
	id, ref, err := lookupRef(c.params, "clientTransferId")
	if err != nil {
		return err
	}
	if s.xfers == nil {
		return exgate.Errorf(exgate.CodeNotFound, "no transfer with that id for this API key")
	}
	tr, err := s.xfers.TransferRecordOf(r.Context(), c.cred, id, ref)
	if err != nil {
		return err
	}
	return writeJSON(w, tr)
}

// handleTransfers lists the exchange's transfers between the wallets,
// newest first; an exchange with one wallet has none.
func (s *Server) handleTransfers(w http.ResponseWriter, r *http.Request, c *call) error {
	ps, err := newParams(c.params, "asset")
	if err != nil {
		return err
	}
	asset, err := ps.asset("asset", false)
	if err != nil {
		return err
	}
	wt, ok := exgate.TransfersFor(c.ex, c.cred)
	if !ok {
		return writeJSON(w, []exgate.Transfer{})
	}
	ts, err := wt.RecentTransfers(r.Context(), c.cred, exgate.TransferFilter{Asset: asset})
	if err != nil {
		return err
	}
	if s.xfers != nil {
		ts = s.xfers.LabelTransfers(r.Context(), c.apiKey, ts)
	}
	if ts == nil {
		ts = []exgate.Transfer{}
	}
	return writeJSON(w, ts)
}

// walletBalances answers GET /v1/wallet/account-balance for one wallet.
func (s *Server) walletBalances(ctx context.Context, c *call, wallet exgate.WalletKind) ([]exgate.Balance, error) {
	if wallet == exgate.WalletSpot {
		return c.ex.Balances(ctx, c.cred)
	}
	wt, ok := exgate.TransfersFor(c.ex, c.cred)
	if !ok {
		return nil, exgate.OneWallet(c.cred.Exchange, "wallet")
	}
	return wt.WalletBalances(ctx, c.cred, wallet)
}
