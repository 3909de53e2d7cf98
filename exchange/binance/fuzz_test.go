package binance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// seed adds the testdata payloads and a few broken ones to a fuzz corpus.
func seed(f *testing.F, files ...string) {
	for _, name := range files {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{"", "null", "[]", "{}", `[[]]`, `{"bids":[["1"]]}`, `[{"amount":"-1"}]`, `[[1,"1e5","2","0","1","1",2,"0",-1]]`} {
		f.Add([]byte(s))
	}
}

func FuzzParseOrder(f *testing.F) {
	seed(f, "order_market_full.json", "order_market_full_expired.json", "order_query.json", "order_ack.json")
	mk := &market{pair: btcusdt, basePrecision: 8, quotePrecision: 8}
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := parseOrder(b)
		if err != nil {
			return
		}
		e := New(Options{})
		out := e.normalizeOrder(t.Context(), mk, o, "id", o.OrigQty.Decimal, exgate.InBase)
		if out.Fees != nil && out.Fees.IsNegative() {
			t.Errorf("negative fees from %s", b)
		}
		if out.ExecutedQuantity.IsNegative() {
			t.Errorf("negative executed quantity from %s", b)
		}
	})
}

func FuzzParseKlines(f *testing.F) {
	seed(f, "klines.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		ks, err := parseKlines(string(b), exgate.Interval1h)
		if err != nil {
			return
		}
		for i, k := range ks {
			for _, s := range []string{k.OpenPrice, k.HighPrice, k.LowPrice, k.ClosePrice, k.Volume} {
				if !exgate.IsPlainDecimal(s) {
					t.Errorf("kline %d: %q is not a plain decimal", i, s)
				}
			}
			if k.CloseTime != k.OpenTime+3600_000-1 {
				t.Errorf("kline %d: closeTime %d for openTime %d", i, k.CloseTime, k.OpenTime)
			}
			if i > 0 && k.OpenTime <= ks[i-1].OpenTime {
				t.Errorf("kline %d not ascending", i)
			}
		}
	})
}

func FuzzParseBook(f *testing.F) {
	seed(f, "depth.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		book, err := parseBook(string(b))
		if err != nil {
			return
		}
		for _, s := range []bookSide{book.bids, book.asks} {
			for _, l := range s {
				if !exgate.IsPlainDecimal(l.Price) || !exgate.IsPlainDecimal(l.Quantity) {
					t.Errorf("level %+v not plain decimals", l)
				}
			}
		}
		for i := 1; i < len(book.bids); i++ {
			if p, prev := book.bids.price(i), book.bids.price(i-1); !p.LessThan(prev) {
				t.Errorf("bids not descending: %s after %s", p, prev)
			}
		}
		for i := 1; i < len(book.asks); i++ {
			if p, prev := book.asks.price(i), book.asks.price(i-1); !p.GreaterThan(prev) {
				t.Errorf("asks not ascending: %s after %s", p, prev)
			}
		}
	})
}

func FuzzParseDeposits(f *testing.F) {
	seed(f, "deposit_history.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		ds, err := parseDeposits(b)
		if err != nil {
			return
		}
		for i, d := range ds {
			if d.ID == "" || d.Amount.IsNegative() || d.RawStatus == "" {
				t.Errorf("deposit %d: %+v", i, d)
			}
			if i > 0 && d.Timestamp > ds[i-1].Timestamp {
				t.Errorf("deposits not newest first")
			}
		}
	})
}

func FuzzParseWithdrawals(f *testing.F) {
	seed(f, "withdraw_history.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		ws, err := parseWithdrawals(b)
		if err != nil {
			return
		}
		for i, w := range ws {
			if w.ID == "" || w.Amount.IsNegative() || w.RawStatus == "" {
				t.Errorf("withdrawal %d: %+v", i, w)
			}
			if w.Fees != nil && !w.TotalAmount.Equal(w.Amount.Add(w.Fees.Decimal)) {
				t.Errorf("withdrawal %d: total %s is not amount %s + fees %s", i, w.TotalAmount, w.Amount, w.Fees)
			}
		}
	})
}

func FuzzParseExchangeInfo(f *testing.F) {
	seed(f, "exchangeInfo.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		set, err := parseExchangeInfo(b)
		if err != nil {
			return
		}
		for sym, mk := range set.byPair {
			if mk.minQty.IsNegative() || mk.lotStep.IsNegative() || mk.minNotional.IsNegative() {
				t.Errorf("%s: negative filter values", sym)
			}
		}
		if set.limits.weight.limit <= 0 || set.limits.weight.window <= 0 {
			t.Errorf("limits %+v", set.limits)
		}
	})
}

func FuzzParseSmallAnswers(f *testing.F) {
	seed(f, "account.json", "capital_config_getall.json", "withdraw_apply.json", "deposit_address.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		if bs, err := parseBalances(b); err == nil {
			for _, x := range bs {
				if x.Available.IsNegative() || x.Locked.IsNegative() || (x.Available.IsZero() && x.Locked.IsZero()) {
					t.Errorf("balance %+v", x)
				}
			}
		}
		if set, err := parseCoins(b); err == nil {
			for coin, nws := range set.byCoin {
				for name, nw := range nws {
					if nw.WithdrawFee.IsNegative() || name == "" {
						t.Errorf("%s %s: %+v", coin, name, nw)
					}
				}
			}
		}
		if fills, err := parseTrades(b, 1); err == nil {
			for _, fl := range fills {
				if fl.Commission.IsNegative() {
					t.Errorf("negative commission")
				}
			}
		}
		_, _ = idString(b)
	})
}

func (s bookSide) price(i int) decimal.Decimal {
	p, _ := s.level(i)
	return p
}

// FuzzScanKlines holds the kline scanner to encoding/json: when both read
// an answer they read the same rows.
func FuzzScanKlines(f *testing.F) {
	seed(f, "klines.json")
	f.Add([]byte(`[[1,"1","2","0.5","1.5","10",2,"3",4,"5","6","0"]]`))
	f.Add([]byte(` [ [ 1 , "1" , "2" , "0.5" , "1.5" , "10" , 2 , "3" , 4 ] ] `))
	f.Add([]byte(`[[1,"1\u0030","2","0.5","1.5","10",2,"3",4]]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var fast []rawKline
		err1 := scanKlines(string(b), func(_ int, r *rawKline, _ int) error {
			for i, v := range r.values {
				if r.plain[i] != exgate.IsPlainDecimal(v) {
					t.Errorf("scanner says %q plain=%v", v, r.plain[i])
				}
			}
			fast = append(fast, rawKline{open: r.open, trades: r.trades, values: r.values})
			return nil
		})
		slow, err2 := decodeKlines(b)
		if err1 != nil || err2 != nil {
			return
		}
		if len(fast) != len(slow) {
			t.Fatalf("scanner read %d rows, encoding/json %d", len(fast), len(slow))
		}
		for i := range fast {
			if fast[i] != slow[i] {
				t.Errorf("row %d: scanner %+v, encoding/json %+v", i, fast[i], slow[i])
			}
		}
	})
}

// FuzzScanBook holds the depth scanner to encoding/json on answers both
// read.
func FuzzScanBook(f *testing.F) {
	seed(f, "depth.json")
	f.Add([]byte(`{"lastUpdateId":1,"bids":[["2","1"],["1","1"]],"asks":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		bids, asks, err := scanBook(string(b))
		if err != nil {
			return
		}
		var raw struct {
			Bids [][2]string `json:"bids"`
			Asks [][2]string `json:"asks"`
		}
		if json.Unmarshal(b, &raw) != nil {
			return
		}
		// encoding/json matches keys case-insensitively and the scanner
		// does not: compare only answers whose keys are spelled as Binance
		// spells them.
		if !bytes.Equal(bytes.ToLower(b), b) {
			return
		}
		if fmt.Sprint(bids) != fmt.Sprint(raw.Bids) || fmt.Sprint(asks) != fmt.Sprint(raw.Asks) {
			t.Errorf("scanner %v %v, encoding/json %v %v", bids, asks, raw.Bids, raw.Asks)
		}
	})
}

func FuzzParseTransfers(f *testing.F) {
	seed(f, "asset_transfer_history.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		page, err := parseTransfers(b)
		if err != nil {
			return
		}
		for _, tr := range page.rows {
			if tr.Amount.IsNegative() || tr.ID == "" || tr.From == tr.To || !exgate.IsPlainDecimal(tr.Amount.String()) {
				t.Errorf("bad transfer %+v from %s", tr, b)
			}
		}
	})
}

func FuzzParseFundingAssets(f *testing.F) {
	seed(f, "funding_asset.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		bals, err := parseFundingAssets(b)
		if err != nil {
			return
		}
		for _, bal := range bals {
			if bal.Available.IsNegative() || bal.Locked.IsNegative() || bal.Asset == "" {
				t.Errorf("bad balance %+v from %s", bal, b)
			}
		}
	})
}
