package exchangetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// runTransfers runs the wallet transfer cases (docs/contract.md 2.10) when
// the adapter has exgate.WalletTransfers (found through wrappers with
// exgate.Ability); an adapter without it skips them. The account's spot
// wallet must hold Setup.Transfer (or, when it is unset, the Withdrawal's
// amount of its asset).
//
// Subtests: RoundTrip (spot to funding and back: each record, the
// balances of both wallets moved by the amount, each transfer read back
// with QueryTransfer, both listed newest first by RecentTransfers and its
// asset filter), SpotIsBalances (WalletBalances of spot is Balances),
// InsufficientFunds (INSUFFICIENT_FUNDS, nothing moves), UnknownAsset
// and SameWallet (INVALID_PARAMETER naming asset and to, nothing moves),
// QueryUnknown (ErrNotFound).
func runTransfers(t *testing.T, newSetup func(t *testing.T) Setup) {
	cases := []struct {
		name string
		fn   func(t *testing.T, s *suite, wt exgate.WalletTransfers)
	}{
		{"RoundTrip", testTransferRoundTrip},
		{"SpotIsBalances", testSpotIsBalances},
		{"InsufficientFunds", testTransferInsufficient},
		{"UnknownAsset", testTransferUnknownAsset},
		{"SameWallet", testTransferSameWallet},
		{"QueryUnknown", testQueryTransferUnknown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := start(t, newSetup)
			wt, ok := exgate.Ability[exgate.WalletTransfers](s.Exchange)
			if !ok {
				t.Skipf("%s: the adapter has one wallet (no exgate.WalletTransfers)", s.name)
			}
			tc.fn(t, s, wt)
		})
	}
}

// transfer is the Setup's transfer from one wallet to the other under a
// fresh client id.
func (s *suite) transfer(from, to exgate.WalletKind) exgate.TransferRequest {
	req := s.Setup.Transfer
	if req.Asset == "" {
		req = exgate.TransferRequest{Asset: s.Withdrawal.Asset, Amount: s.Withdrawal.Amount}
	}
	req.From, req.To, req.ClientTransferID = from, to, exgate.NewID('t')
	return req
}

// wallet reads one wallet's balances, checking their shape as balances()
// does, by asset.
func (s *suite) wallet(wt exgate.WalletTransfers, w exgate.WalletKind) map[string]exgate.Balance {
	s.t.Helper()
	bals, err := wt.WalletBalances(s.t.Context(), s.Credential, w)
	if err != nil {
		s.fatalf("WalletBalances(%s): %v", w, err)
	}
	out := make(map[string]exgate.Balance, len(bals))
	for _, b := range bals {
		if b.Asset == "" || exgate.NormalizeAsset(b.Asset) != b.Asset || b.Available.IsNegative() || b.Locked.IsNegative() {
			s.errorf("WalletBalances(%s): row %s, want an upper-case asset and amounts >= 0", w, show(b))
		}
		if b.Available.IsZero() && b.Locked.IsZero() {
			s.errorf("WalletBalances(%s): row %s: zero rows must be left out", w, show(b))
		}
		if _, dup := out[b.Asset]; dup {
			s.errorf("WalletBalances(%s): asset %s listed twice", w, b.Asset)
		}
		out[b.Asset] = b
	}
	return out
}

// checkTransfer checks a transfer read back from Transfer or
// QueryTransfer.
func (s *suite) checkTransfer(what string, t exgate.Transfer, req exgate.TransferRequest) {
	s.t.Helper()
	js := show(t)
	if t.ID != req.ClientTransferID || t.ClientTransferID != req.ClientTransferID {
		s.errorf("%s: id %q clientTransferId %q, want the client transfer id sent %q; transfer %s", what, t.ID, t.ClientTransferID, req.ClientTransferID, js)
	}
	if t.Exchange != s.name {
		s.errorf("%s: exchange %q, want %q; transfer %s", what, t.Exchange, s.name, js)
	}
	if t.Asset != req.Asset || !t.Amount.Equal(req.Amount) || t.From != req.From || t.To != req.To {
		s.errorf("%s: %s %s from %s to %s, want %s %s from %s to %s; transfer %s",
			what, t.Amount, t.Asset, t.From, t.To, req.Amount, req.Asset, req.From, req.To, js)
	}
	if t.Status != exgate.TransferPending && t.Status != exgate.TransferCompleted && t.Status != exgate.TransferFailed {
		s.errorf("%s: status %q, want pending, completed or failed; transfer %s", what, t.Status, js)
	}
	if t.Timestamp <= 0 {
		s.errorf("%s: timestamp %d, want > 0; transfer %s", what, t.Timestamp, js)
	}
}

// sendTransfer transfers, checks the record, reads it back and checks
// both wallets moved by the amount.
func (s *suite) sendTransfer(wt exgate.WalletTransfers, req exgate.TransferRequest) exgate.Transfer {
	s.t.Helper()
	ctx := s.t.Context()
	from, to := s.wallet(wt, req.From), s.wallet(wt, req.To)
	sent := time.Now()
	what := fmt.Sprintf("Transfer(%s %s from %s to %s)", req.Amount, req.Asset, req.From, req.To)
	t, err := wt.Transfer(ctx, s.Credential, req)
	if err != nil {
		s.fatalf("%s: %v", what, err)
	}
	s.checkTransfer(what, t, req)
	if t.Status != exgate.TransferCompleted {
		s.fatalf("%s: status %s, want completed on the test account", what, t.Status)
	}
	q := exgate.TransferQuery{ClientTransferID: req.ClientTransferID, Asset: req.Asset, Amount: req.Amount,
		From: req.From, To: req.To, SentAfter: sent.Add(-time.Second)}
	qwhat := fmt.Sprintf("QueryTransfer(clientTransferId %s) after %s", req.ClientTransferID, what)
	got, err := wt.QueryTransfer(ctx, s.Credential, q)
	if err != nil {
		s.fatalf("%s: %v", qwhat, err)
	}
	s.checkTransfer(qwhat, got, req)
	if got.Status != t.Status || (t.ExchangeID != "" && got.ExchangeID != t.ExchangeID) {
		s.errorf("%s: status %s exchangeId %q, Transfer said %s %q", qwhat, got.Status, got.ExchangeID, t.Status, t.ExchangeID)
	}
	q.ExchangeID = t.ExchangeID
	if byID, err := wt.QueryTransfer(ctx, s.Credential, q); err != nil || byID.ExchangeID != got.ExchangeID {
		s.errorf("%s with exchangeId %q = %s, %v; want the same transfer", qwhat, t.ExchangeID, show(byID), err)
	}
	fromAfter, toAfter := s.wallet(wt, req.From), s.wallet(wt, req.To)
	if d := from[req.Asset].Available.Sub(fromAfter[req.Asset].Available); !d.Equal(req.Amount) {
		s.errorf("%s: the %s wallet's %s went from %s to %s, want it %s lower", what, req.From, req.Asset,
			from[req.Asset].Available, fromAfter[req.Asset].Available, req.Amount)
	}
	if d := toAfter[req.Asset].Available.Sub(to[req.Asset].Available); !d.Equal(req.Amount) {
		s.errorf("%s: the %s wallet's %s went from %s to %s, want it %s higher", what, req.To, req.Asset,
			to[req.Asset].Available, toAfter[req.Asset].Available, req.Amount)
	}
	return t
}

func testTransferRoundTrip(t *testing.T, s *suite, wt exgate.WalletTransfers) {
	out := s.sendTransfer(wt, s.transfer(exgate.WalletSpot, exgate.WalletFunding))
	back := s.sendTransfer(wt, s.transfer(exgate.WalletFunding, exgate.WalletSpot))
	asset := back.Asset
	list, err := wt.RecentTransfers(t.Context(), s.Credential, exgate.TransferFilter{Asset: asset})
	if err != nil {
		s.fatalf("RecentTransfers(%s): %v", asset, err)
	}
	ids := make([]string, len(list))
	for i, tr := range list {
		ids[i] = tr.ExchangeID
		if tr.Asset != asset {
			s.errorf("RecentTransfers(%s): %s does not match the filter", asset, show(tr))
		}
		if i > 0 && tr.Timestamp > list[i-1].Timestamp {
			s.errorf("RecentTransfers(%s): %s after %s, want newest first", asset, show(tr), show(list[i-1]))
		}
	}
	i, j := slices.Index(ids, back.ExchangeID), slices.Index(ids, out.ExchangeID)
	if i < 0 || j < 0 || (i > j && back.Timestamp > out.Timestamp) {
		s.errorf("RecentTransfers(%s) = %s, want both, the transfer back (%s) before the transfer out (%s)", asset, show(list), back.ExchangeID, out.ExchangeID)
	}
	other := "NOSUCHASSET"
	if list, err := wt.RecentTransfers(t.Context(), s.Credential, exgate.TransferFilter{Asset: other}); err != nil || len(list) != 0 {
		s.errorf("RecentTransfers(%s) = %s, %v; want none", other, show(list), err)
	}
}

func testSpotIsBalances(t *testing.T, s *suite, wt exgate.WalletTransfers) {
	spot := s.wallet(wt, exgate.WalletSpot)
	if bals := s.balances(); show(bals) != show(spot) {
		s.errorf("WalletBalances(spot) = %s, want what Balances says: %s", show(spot), show(bals))
	}
}

// refused checks that a transfer is refused with code naming param and
// that neither wallet moved.
func (s *suite) refused(wt exgate.WalletTransfers, req exgate.TransferRequest, code exgate.Code, param string) {
	s.t.Helper()
	spot, funding := s.wallet(wt, exgate.WalletSpot), s.wallet(wt, exgate.WalletFunding)
	what := fmt.Sprintf("Transfer(%s %s from %s to %s)", req.Amount, req.Asset, req.From, req.To)
	tr, err := wt.Transfer(s.t.Context(), s.Credential, req)
	s.wantCode(what, err, code)
	if e, ok := errors.AsType[*exgate.Error](err); ok && param != "" && e.Param != param {
		s.errorf("%s: param %q, want %q", what, e.Param, param)
	}
	if err == nil {
		s.errorf("%s = %s, want a refusal", what, show(tr))
	}
	if after := s.wallet(wt, exgate.WalletSpot); show(after) != show(spot) {
		s.errorf("%s: the spot wallet moved from %s to %s, want nothing moved", what, show(spot), show(after))
	}
	if after := s.wallet(wt, exgate.WalletFunding); show(after) != show(funding) {
		s.errorf("%s: the funding wallet moved from %s to %s, want nothing moved", what, show(funding), show(after))
	}
}

func testTransferInsufficient(t *testing.T, s *suite, wt exgate.WalletTransfers) {
	req := s.transfer(exgate.WalletSpot, exgate.WalletFunding)
	req.Amount = s.wallet(wt, exgate.WalletSpot)[req.Asset].Available.Add(decimal.New(1, 0))
	s.refused(wt, req, exgate.CodeInsufficientFunds, "")
	back := s.transfer(exgate.WalletFunding, exgate.WalletSpot)
	back.Amount = s.wallet(wt, exgate.WalletFunding)[back.Asset].Available.Add(decimal.New(1, 0))
	s.refused(wt, back, exgate.CodeInsufficientFunds, "")
}

func testTransferUnknownAsset(t *testing.T, s *suite, wt exgate.WalletTransfers) {
	req := s.transfer(exgate.WalletSpot, exgate.WalletFunding)
	req.Asset = "NOSUCHASSET"
	s.refused(wt, req, exgate.CodeInvalidParameter, "asset")
}

func testTransferSameWallet(t *testing.T, s *suite, wt exgate.WalletTransfers) {
	s.refused(wt, s.transfer(exgate.WalletSpot, exgate.WalletSpot), exgate.CodeInvalidParameter, "to")
}

func testQueryTransferUnknown(t *testing.T, s *suite, wt exgate.WalletTransfers) {
	req := s.transfer(exgate.WalletSpot, exgate.WalletFunding)
	q := exgate.TransferQuery{ClientTransferID: req.ClientTransferID, Asset: req.Asset, Amount: req.Amount,
		From: req.From, To: req.To, SentAfter: time.Now()}
	tr, err := wt.QueryTransfer(t.Context(), s.Credential, q)
	if !errors.Is(err, exgate.ErrNotFound) {
		s.errorf("QueryTransfer(unknown clientTransferId %s) = %s, %v; want an error wrapping exgate.ErrNotFound", q.ClientTransferID, show(tr), err)
	}
}
