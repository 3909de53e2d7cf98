package bybit

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/exgate/exgate"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.golden.json from the adapter's output")

// resultOf reads a payload file of testdata and returns its `result` (or
// the whole file for a stream message).
func resultOf(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var env struct {
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(b, &env) == nil && len(env.Result) > 0 {
		return env.Result
	}
	return b
}

// btcPair is BTCUSDT as Bybit's instrument doc example lists it.
func btcPair(t *testing.T) *pair {
	t.Helper()
	rows, err := parseInstruments(resultOf(t, "instruments_info_spot.json"))
	if err != nil || len(rows) == 0 {
		t.Fatalf("instruments: %v", err)
	}
	return pairOf(rows[0])
}

// TestGolden reads Bybit's documented (and constructed) payloads of
// testdata through the adapter's parsers and normalization and compares
// the outcome with testdata/golden/<case>.golden.json (go test -update
// rewrites them).
func TestGolden(t *testing.T) {
	p := btcPair(t)
	cases := map[string]func(t *testing.T) (any, error){
		"instruments": func(t *testing.T) (any, error) { return p.info(), nil },
		"klines_1h": func(t *testing.T) (any, error) {
			cs, err := parseKlines(resultOf(t, "kline_spot_constructed.json"))
			if err != nil {
				return nil, err
			}
			ks, _, err := toKlines(exgate.Interval1h, "60", cs)
			return ks, err
		},
		"orderbook": func(t *testing.T) (any, error) {
			bids, asks, err := parseBook(resultOf(t, "orderbook.json"))
			return exgate.OrderBook{Bids: toLevels(bids, 100), Asks: toLevels(asks, 100)}, err
		},
		"orders": func(t *testing.T) (any, error) {
			page, err := parseOrders(resultOf(t, "order_realtime_spot_constructed.json"))
			var out []exgate.Order
			for _, o := range page.items() {
				out = append(out, New(Options{}).orderFromBybit(p, o, ""))
			}
			return out, err
		},
		"fills": func(t *testing.T) (any, error) {
			page, err := parseExecutions(resultOf(t, "execution_list_spot_constructed.json"))
			var out []exgate.Fill
			for _, x := range page.items() {
				out = append(out, fillFromBybit(p, x))
			}
			return out, err
		},
		"balances_unified": func(t *testing.T) (any, error) {
			rows, err := parseWalletBalance(resultOf(t, "wallet_balance.json"))
			return unifiedBalances(rows), err
		},
		"balances_fund": func(t *testing.T) (any, error) {
			rows, err := parseFundBalance(resultOf(t, "account_coins_balance_fund.json"))
			return fundBalances(rows), err
		},
		"deposits": func(t *testing.T) (any, error) {
			page, err := parseDeposits(resultOf(t, "deposit_record.json"))
			var out []exgate.Deposit
			for _, d := range page.items() {
				out = append(out, normalizeDeposit(d))
			}
			return out, err
		},
		"withdrawals": func(t *testing.T) (any, error) {
			page, err := parseWithdrawals(resultOf(t, "withdraw_record.json"))
			var out []exgate.Withdrawal
			for _, w := range page.items() {
				out = append(out, (&Exchange{}).normalizeWithdrawal(w, ""))
			}
			return out, err
		},
		"transfers": func(t *testing.T) (any, error) {
			page, err := parseTransfers(resultOf(t, "inter_transfer_list.json"))
			var out []exgate.Transfer
			for _, tr := range page.items() {
				out = append(out, normalizeTransfer(tr, ""))
			}
			return out, err
		},
		"ws_book_snapshot": func(t *testing.T) (any, error) {
			m, err := parseWSMessage(resultOf(t, "ws_orderbook_snapshot.json"))
			if err != nil {
				return nil, err
			}
			bm, err := parseBookMessage(m.Type, m.Data)
			if err != nil {
				return nil, err
			}
			var b bookSync
			if err := b.apply(bm); err != nil {
				return nil, err
			}
			return b.book.Snapshot(5), nil
		},
		"ws_book_delta": func(t *testing.T) (any, error) {
			m, err := parseWSMessage(resultOf(t, "ws_orderbook_delta.json"))
			if err != nil {
				return nil, err
			}
			bm, err := parseBookMessage(m.Type, m.Data)
			return map[string]any{"snapshot": bm.snapshot, "u": bm.u, "bids": toLevels(bm.bids, 100), "asks": toLevels(bm.asks, 100)}, err
		},
		"ws_kline": func(t *testing.T) (any, error) {
			m, err := parseWSMessage(resultOf(t, "ws_kline.json"))
			if err != nil {
				return nil, err
			}
			cs, confirms, err := parseKlinePush(m.Data)
			b := &klineBuilder{iv: exgate.Interval5m, source: exgate.Interval5m, candles: map[int64]candle{}}
			var out []exgate.KlineUpdate
			for i, c := range cs {
				us, err := b.add(c, confirms[i])
				if err != nil {
					return nil, err
				}
				out = append(out, us...)
			}
			return out, err
		},
		"ws_order_option_skipped": func(t *testing.T) (any, error) {
			m, err := parseWSMessage(resultOf(t, "ws_order.json"))
			if err != nil {
				return nil, err
			}
			return parseOrderPush(m.Data)
		},
		"errors": func(t *testing.T) (any, error) {
			b, err := os.ReadFile("testdata/errors_constructed.json")
			if err != nil {
				return nil, err
			}
			var cases map[string]struct {
				HTTP     int `json:"http"`
				Request  struct{ Path string }
				Response struct {
					RetCode int    `json:"retCode"`
					RetMsg  string `json:"retMsg"`
				}
			}
			if err := json.Unmarshal(b, &cases); err != nil {
				return nil, err
			}
			out := map[string]string{}
			for name, c := range cases {
				ep := epWalletBalance
				for _, e := range []endpoint{epCreateOrder, epCancelOrder, epWithdraw, epTransfer, epKline, epRealtime} {
					if e.path == c.Request.Path {
						ep = e
					}
				}
				out[name] = string(classifyAPI(ep, &apiError{status: c.HTTP, code: c.Response.RetCode, msg: c.Response.RetMsg}).Code)
			}
			return out, nil
		},
	}
	for name, run := range cases {
		t.Run(name, func(t *testing.T) {
			v, err := run(t)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.MarshalIndent(v, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", "golden", name+".golden.json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from %s:\n%s", name, path, got)
			}
		})
	}
}
