package kraken

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.json")

// sampleResult reads a sample payload from testdata and returns its result.
func sampleResult(t testing.TB, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	res, err := parseEnvelope(raw)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// sampleMarkets builds the name tables from the sample Assets and
// AssetPairs payloads (XXBT, ZUSD and XXBTZUSD; other ids fall back to the
// legacy table).
func sampleMarkets(t testing.TB) *markets {
	t.Helper()
	var assets map[string]assetInfo
	if err := json.Unmarshal(sampleResult(t, "assets.json"), &assets); err != nil {
		t.Fatal(err)
	}
	pairs, err := parseAssetPairs(sampleResult(t, "assetpairs.json"))
	if err != nil {
		t.Fatal(err)
	}
	return buildMarkets(assets, pairs, time.Unix(0, 0))
}

// golden compares v as indented JSON with testdata/<name>.golden.json.
func golden(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", name+".golden.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s mismatch (-got +want):\n%s", path, cmp.Diff(string(got), string(want)))
	}
}

// TestGolden normalizes the sample payloads of testdata and compares the
// results with the golden files.
func TestGolden(t *testing.T) {
	m := sampleMarkets(t)
	t.Run("klines", func(t *testing.T) {
		rows, err := parseOHLC(sampleResult(t, "ohlc.json"), "XXBTZUSD")
		if err != nil {
			t.Fatal(err)
		}
		var ks []exgate.Kline
		for _, r := range rows {
			ks = append(ks, rowKline(r, exgate.Interval1m))
		}
		golden(t, "klines", ks)
	})
	t.Run("orderbook", func(t *testing.T) {
		var res map[string]json.RawMessage
		if err := json.Unmarshal(sampleResult(t, "depth.json"), &res); err != nil {
			t.Fatal(err)
		}
		bk, err := parseDepth(res["XXBTZUSD"])
		if err != nil {
			t.Fatal(err)
		}
		var ob exgate.OrderBook
		for _, l := range bk.bids {
			ob.Bids = append(ob.Bids, exgate.Level{Price: l.priceText, Quantity: l.qtyText})
		}
		for _, l := range bk.asks {
			ob.Asks = append(ob.Asks, exgate.Level{Price: l.priceText, Quantity: l.qtyText})
		}
		golden(t, "orderbook", ob)
	})
	t.Run("balances", func(t *testing.T) {
		rows, err := parseBalanceEx(sampleResult(t, "balanceex.json"))
		if err != nil {
			t.Fatal(err)
		}
		golden(t, "balances", m.toBalances(rows))
	})
	t.Run("balances_plain", func(t *testing.T) {
		var plain map[string]rest.Decimal
		if err := json.Unmarshal(sampleResult(t, "balance.json"), &plain); err != nil {
			t.Fatal(err)
		}
		rows := map[string]balanceEx{}
		for k, v := range plain {
			rows[k] = balanceEx{Balance: v}
		}
		golden(t, "balances_plain", m.toBalances(rows))
	})
	t.Run("deposits", func(t *testing.T) {
		rows, err := parseFundingRows(sampleResult(t, "depositstatus.json"))
		if err != nil {
			t.Fatal(err)
		}
		var ds []exgate.Deposit
		for _, r := range rows {
			ds = append(ds, m.toDeposit(r))
		}
		golden(t, "deposits", ds)
	})
	t.Run("withdrawals", func(t *testing.T) {
		rows, err := parseFundingRows(sampleResult(t, "withdrawstatus.json"))
		if err != nil {
			t.Fatal(err)
		}
		var ws []exgate.Withdrawal
		for _, r := range rows {
			ws = append(ws, m.toWithdrawal(r, "w0123456789abcdefg"))
		}
		golden(t, "withdrawals", ws)
	})
	t.Run("orders", func(t *testing.T) {
		var closed map[string]krakenOrder
		if err := json.Unmarshal(sampleResult(t, "queryorders_market_closed.json"), &closed); err != nil {
			t.Fatal(err)
		}
		var open struct {
			Open map[string]krakenOrder `json:"open"`
		}
		if err := json.Unmarshal(sampleResult(t, "openorders.json"), &open); err != nil {
			t.Fatal(err)
		}
		var orders []exgate.Order
		for _, rows := range []map[string]krakenOrder{closed, open.Open} {
			for txid, o := range rows {
				got, err := m.toOrder(txid, o, exgate.Symbol{Base: "BTC", Quote: "USD"})
				if err != nil {
					t.Fatal(err)
				}
				orders = append(orders, got)
			}
		}
		golden(t, "orders", orders)
	})
	t.Run("errors", func(t *testing.T) {
		for _, name := range []string{"error_envelope.json", "error_envelope_nonce.json"} {
			raw, err := os.ReadFile(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			_, err = parseEnvelope(raw)
			ae, ok := err.(*apiError)
			if !ok || !strings.HasPrefix(ae.messages[0], "E") {
				t.Errorf("%s: parseEnvelope error %v, want the Kraken error", name, err)
			}
		}
	})
}
