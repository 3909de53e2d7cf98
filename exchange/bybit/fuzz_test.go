package bybit

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/exgate/exgate"
)

// Every parser of Bybit's answers and stream messages has a fuzz target
// (go test -fuzz=FuzzX -fuzztime=5s): untrusted bytes never panic, and
// what a parser accepts holds the invariants the adapter relies on. The
// seeds are the payloads of testdata.

// seedResults adds the `result` of every testdata payload, and the
// payload itself, to f.
func seedResults(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.json")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		var env struct {
			Result json.RawMessage `json:"result"`
			Data   json.RawMessage `json:"data"`
		}
		if json.Unmarshal(b, &env) == nil {
			if len(env.Result) > 0 {
				f.Add([]byte(env.Result))
			}
			if len(env.Data) > 0 {
				f.Add([]byte(env.Data))
			}
		}
	}
	f.Add([]byte(`{"list":[["1","1","1","1","1","1","1"]],"b":[["1","0"]],"a":[["2","1"]],"u":1}`))
	f.Add([]byte(`null`))
	f.Add([]byte(``))
}

// fuzz runs parse on every input; accepted values go to check.
func fuzz[T any](f *testing.F, parse func([]byte) (T, error), check func(*testing.T, T)) {
	seedResults(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := parse(b)
		if err == nil && check != nil {
			check(t, v)
		}
	})
}

func FuzzParseServerTime(f *testing.F) {
	fuzz(f, parseServerTime, func(t *testing.T, ms int64) {
		if ms <= 0 {
			t.Fatalf("server time %d accepted", ms)
		}
	})
}

func FuzzParseInstruments(f *testing.F) {
	fuzz(f, parseInstruments, func(t *testing.T, rows []instrumentJSON) {
		for _, r := range rows {
			p := pairOf(r)
			if !p.baseStep.IsPositive() || !p.tick.IsPositive() || !p.quoteStep.IsPositive() {
				t.Fatalf("pair %+v without positive steps", p)
			}
			info := p.info()
			for _, v := range []string{info.QuantityStep, info.PriceStep, info.MinQuantity} {
				if !exgate.IsPlainDecimal(v) {
					t.Fatalf("symbol field %q not a plain decimal", v)
				}
			}
		}
	})
}

func FuzzParseKlines(f *testing.F) {
	fuzz(f, parseKlines, func(t *testing.T, cs []candle) {
		ks, _, err := toKlines(exgate.Interval1m, "1", cs)
		if err != nil {
			return
		}
		for i, k := range ks {
			if i > 0 && k.OpenTime <= ks[i-1].OpenTime {
				t.Fatalf("klines not ascending: %+v", ks)
			}
			if !exgate.IsPlainDecimal(k.OpenPrice) || !exgate.IsPlainDecimal(k.Volume) {
				t.Fatalf("kline %+v with a decimal that is not plain", k)
			}
		}
	})
}

func FuzzParseBook(f *testing.F) {
	fuzz(f, func(b []byte) ([][]level, error) {
		bids, asks, err := parseBook(b)
		return [][]level{bids, asks}, err
	}, func(t *testing.T, sides [][]level) {
		for _, side := range sides {
			for _, l := range side {
				if !l.price.IsPositive() || !l.qty.IsPositive() {
					t.Fatalf("level %+v accepted", l)
				}
			}
		}
	})
}

func FuzzParseOrders(f *testing.F) {
	p := &pair{id: "BTCUSDT", sym: exgate.Symbol{Base: "BTC", Quote: "USDT"}}
	e := New(Options{})
	fuzz(f, parseOrders, func(t *testing.T, page listJSON[orderJSON]) {
		for _, o := range page.items() {
			out := e.orderFromBybit(p, o, "")
			if out.ID == "" || (out.Side != exgate.SideBuy && out.Side != exgate.SideSell) {
				t.Fatalf("order %+v", out)
			}
		}
	})
}

func FuzzParseOrderAck(f *testing.F) { fuzz(f, parseOrderAck, nil) }

func FuzzParseExecutions(f *testing.F) {
	p := &pair{id: "BTCUSDT", sym: exgate.Symbol{Base: "BTC", Quote: "USDT"}}
	fuzz(f, parseExecutions, func(t *testing.T, page listJSON[executionJSON]) {
		for _, x := range page.items() {
			if fl := fillFromBybit(p, x); fl.ID == "" || fl.FeeIn == "" {
				t.Fatalf("fill %+v", fl)
			}
		}
	})
}

func FuzzParseWalletBalance(f *testing.F) {
	fuzz(f, parseWalletBalance, func(t *testing.T, rows []walletCoinJSON) {
		for _, b := range unifiedBalances(rows) {
			if b.Available.IsNegative() || b.Locked.IsNegative() || (b.Available.IsZero() && b.Locked.IsZero()) {
				t.Fatalf("balance %+v", b)
			}
		}
	})
}

func FuzzParseFundBalance(f *testing.F) {
	fuzz(f, parseFundBalance, func(t *testing.T, rows []fundCoinJSON) {
		for _, b := range fundBalances(rows) {
			if b.Available.IsNegative() || b.Locked.IsNegative() {
				t.Fatalf("balance %+v", b)
			}
		}
	})
}

func FuzzParseCoinInfo(f *testing.F)    { fuzz(f, parseCoinInfo, nil) }
func FuzzParseAddress(f *testing.F)     { fuzz(f, parseAddress, nil) }
func FuzzParseWithdrawAck(f *testing.F) { fuzz(f, parseWithdrawAck, nil) }
func FuzzParseTransferAck(f *testing.F) { fuzz(f, parseTransferAck, nil) }
func FuzzParseKeyInfo(f *testing.F)     { fuzz(f, parseKeyInfo, nil) }

func FuzzParseDeposits(f *testing.F) {
	fuzz(f, parseDeposits, func(t *testing.T, page listJSON[depositJSON]) {
		for _, d := range page.items() {
			if n := normalizeDeposit(d); n.RawStatus == "" || n.Status == "" {
				t.Fatalf("deposit %+v", n)
			}
		}
	})
}

func FuzzParseWithdrawals(f *testing.F) {
	fuzz(f, parseWithdrawals, func(t *testing.T, page listJSON[withdrawalJSON]) {
		for _, w := range page.items() {
			if n := (&Exchange{}).normalizeWithdrawal(w, ""); n.ExchangeID == "" || n.Status == "" {
				t.Fatalf("withdrawal %+v", n)
			}
		}
	})
}

func FuzzParseTransfers(f *testing.F) {
	fuzz(f, parseTransfers, func(t *testing.T, page listJSON[transferJSON]) {
		for _, tr := range page.items() {
			if n := normalizeTransfer(tr, ""); n.ID == "" || n.Status == "" {
				t.Fatalf("transfer %+v", n)
			}
		}
	})
}

func FuzzParseWSMessage(f *testing.F) { fuzz(f, parseWSMessage, nil) }

func FuzzParseBookMessage(f *testing.F) {
	fuzz(f, func(b []byte) (bookMessage, error) {
		m, err := parseBookMessage("delta", b)
		if err != nil {
			return parseBookMessage("snapshot", b)
		}
		return m, err
	}, func(t *testing.T, m bookMessage) {
		var s bookSync
		s.apply(bookMessage{snapshot: true, u: m.u - 1})
		if err := s.apply(m); err == nil && s.book.Crossed() {
			t.Fatalf("a crossed book accepted")
		}
	})
}

func FuzzParseKlinePush(f *testing.F) {
	fuzz(f, func(b []byte) ([]candle, error) {
		cs, _, err := parseKlinePush(b)
		return cs, err
	}, func(t *testing.T, cs []candle) {
		b := &klineBuilder{iv: exgate.Interval1h, source: exgate.Interval1h, candles: map[int64]candle{}}
		for _, c := range cs {
			_, _ = b.add(c, false)
		}
	})
}

func FuzzParseOrderPush(f *testing.F) {
	fuzz(f, func(b []byte) ([]orderJSON, error) { return parseOrderPush(b) }, func(t *testing.T, os []orderJSON) {
		for _, o := range os {
			if o.Symbol == "" || o.OrderID == "" {
				t.Fatalf("order %+v", o)
			}
		}
	})
}
