package exgate

import (
	"errors"
	"testing"

	"github.com/shopspring/decimal"
)

type wrapped struct{ Exchange }

func (w wrapped) Unwrap() Exchange { return w.Exchange }

type clockOnly struct{ Exchange }

func (clockOnly) Marker() {}

func TestAbilityLooksThroughWrappers(t *testing.T) {
	type marker interface{ Marker() }
	inner := clockOnly{}
	if _, ok := Ability[marker](wrapped{wrapped{inner}}); !ok {
		t.Fatal("an ability two wrappers deep was hidden")
	}
	if _, ok := Ability[marker](wrapped{}); ok {
		t.Fatal("a wrapper around nothing reported an ability")
	}
}

func TestParseWalletKind(t *testing.T) {
	for in, want := range map[string]WalletKind{"spot": WalletSpot, "FUNDING": WalletFunding} {
		if got, err := ParseWalletKind(in); err != nil || got != want {
			t.Errorf("ParseWalletKind(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseWalletKind("margin"); err == nil {
		t.Error("margin was accepted")
	}
}

func TestCheckTransfer(t *testing.T) {
	one := decimal.RequireFromString("1")
	ok := TransferRequest{Asset: "BTC", Amount: one, From: WalletSpot, To: WalletFunding}
	if err := CheckTransfer(ok); err != nil {
		t.Fatalf("a valid transfer: %v", err)
	}
	for _, tc := range []struct {
		name  string
		edit  func(*TransferRequest)
		param string
	}{
		{"no asset", func(r *TransferRequest) { r.Asset = "" }, "asset"},
		{"zero amount", func(r *TransferRequest) { r.Amount = decimal.Zero }, "amount"},
		{"negative amount", func(r *TransferRequest) { r.Amount = one.Neg() }, "amount"},
		{"unknown from", func(r *TransferRequest) { r.From = "margin" }, "from"},
		{"unknown to", func(r *TransferRequest) { r.To = "" }, "to"},
		{"same wallet", func(r *TransferRequest) { r.To = WalletSpot }, "to"},
	} {
		req := ok
		tc.edit(&req)
		err := CheckTransfer(req)
		if e, isErr := errors.AsType[*Error](err); !isErr || e.Code != CodeInvalidParameter || e.Param != tc.param {
			t.Errorf("%s: %v, want INVALID_PARAMETER naming %s", tc.name, err, tc.param)
		}
	}
}
