package exgate

import (
	"encoding/json"
	"testing"

	"github.com/shopspring/decimal"
)

// The stores keep balance changes in this JSON; rows written before must
// keep reading back exactly.
func TestBalanceChangeJSON(t *testing.T) {
	changes := []BalanceChange{{Asset: "BTC", Delta: decimal.RequireFromString("-0.50000000")}, {Asset: "USDT", Delta: decimal.RequireFromString("30000.1")}}
	b, err := json.Marshal(changes)
	if want := `[{"asset":"BTC","delta":"-0.5"},{"asset":"USDT","delta":"30000.1"}]`; err != nil || string(b) != want {
		t.Fatalf("Marshal = %s, %v; want %s", b, err, want)
	}
	var back []BalanceChange
	if err := json.Unmarshal(b, &back); err != nil || len(back) != 2 || !back[0].Delta.Equal(changes[0].Delta) || back[1].Asset != "USDT" {
		t.Fatalf("Unmarshal = %+v, %v", back, err)
	}
}

func TestSumBalanceChanges(t *testing.T) {
	sum, err := SumBalanceChanges([]BalanceChange{
		{Asset: "BTC", Delta: decimal.RequireFromString("1.1")},
		{Asset: "USDT", Delta: decimal.RequireFromString("-5")},
		{Asset: "BTC", Delta: decimal.RequireFromString("-0.1")},
	})
	btc, usdt := WalletAsset{WalletSpot, "BTC"}, WalletAsset{WalletSpot, "USDT"}
	if err != nil || len(sum) != 2 || !sum[btc].Equal(decimal.RequireFromString("1")) || !sum[usdt].Equal(decimal.RequireFromString("-5")) {
		t.Fatalf("SumBalanceChanges = %v, %v", sum, err)
	}
	if _, err := SumBalanceChanges([]BalanceChange{{Delta: decimal.RequireFromString("1")}}); err == nil {
		t.Fatal("a change without an asset was summed")
	}
	// Each wallet sums apart; an empty wallet is spot.
	moved, err := SumBalanceChanges([]BalanceChange{
		{Asset: "BTC", Delta: decimal.RequireFromString("-2")},
		{Asset: "BTC", Delta: decimal.RequireFromString("2"), Wallet: WalletFunding},
		{Asset: "BTC", Delta: decimal.RequireFromString("0.5"), Wallet: WalletSpot},
	})
	if err != nil || len(moved) != 2 || !moved[btc].Equal(decimal.RequireFromString("-1.5")) ||
		!moved[WalletAsset{WalletFunding, "BTC"}].Equal(decimal.RequireFromString("2")) {
		t.Fatalf("SumBalanceChanges across wallets = %v, %v", moved, err)
	}
	if _, err := SumBalanceChanges([]BalanceChange{{Asset: "BTC", Delta: decimal.RequireFromString("1"), Wallet: "margin"}}); err == nil {
		t.Fatal("a change in an unknown wallet was summed")
	}
}
