package binance

import (
	"testing"
)

// The transfer history's example answer (developers.binance.com/docs/
// wallet/asset/query-user-universal-transfer, with one row of each status)
// and the funding wallet's (.../funding-wallet), normalized.
func TestParseTransfers(t *testing.T) {
	page, err := parseTransfers(readTestdata(t, "asset_transfer_history.json"))
	if err != nil {
		t.Fatal(err)
	}
	if page.total != 3 {
		t.Errorf("total %d, want 3", page.total)
	}
	golden(t, "asset_transfer_history.golden.json", page.rows)
	for _, bad := range []string{`{"rows":[{"asset":"BTC","amount":"1","type":"MAIN_UMFUTURE","status":"CONFIRMED","tranId":1,"timestamp":1}]}`,
		`{"rows":[{"asset":"BTC","amount":"-1","type":"MAIN_FUNDING","status":"CONFIRMED","tranId":1,"timestamp":1}]}`,
		`{"rows":[{"asset":"BTC","type":"MAIN_FUNDING","status":"CONFIRMED","tranId":1,"timestamp":1}]}`,
		`{"rows":[{"asset":"","amount":"1","type":"MAIN_FUNDING","status":"CONFIRMED","tranId":1,"timestamp":1}]}`,
		`[]`} {
		if _, err := parseTransfers([]byte(bad)); err == nil {
			t.Errorf("parseTransfers(%s) accepted it", bad)
		}
	}
	if page, err := parseTransfers([]byte(`{"total":0}`)); err != nil || len(page.rows) != 0 {
		t.Errorf("an empty history: %+v, %v", page, err)
	}
}

func TestParseFundingAssets(t *testing.T) {
	bals, err := parseFundingAssets(readTestdata(t, "funding_asset.json"))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "funding_asset.golden.json", bals)
	if _, err := parseFundingAssets([]byte(`[{"asset":"BTC","free":"-1"}]`)); err == nil {
		t.Error("a negative balance was accepted")
	}
}
