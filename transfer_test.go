package exgate

import "testing"

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
