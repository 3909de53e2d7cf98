package kraken

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/exgate/exgate"
)

var testNowInternal = time.Date(2025, 3, 14, 15, 9, 26, 0, time.UTC)

// seedSamples adds every testdata payload (and its result) as a seed.
func seedSamples(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.json")
	for _, name := range files {
		raw, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
		if res, err := parseEnvelope(raw); err == nil {
			f.Add([]byte(res))
		}
	}
}

func FuzzParseEnvelope(f *testing.F) {
	seedSamples(f)
	f.Add([]byte(`{"error":["WGeneral:Warning"],"result":{}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		res, err := parseEnvelope(b)
		if err == nil && len(res) == 0 {
			t.Error("no error and no result")
		}
	})
}

func FuzzParseOHLC(f *testing.F) {
	seedSamples(f)
	f.Add([]byte(`{"XXBTZUSD":[[1688671200,"1e3","2","0.5","1","1","0.00000001",3]],"last":0}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := parseOHLC(b, "XXBTZUSD")
		if err != nil {
			return
		}
		ks := aggregate(rows, exgate.Interval3m)
		for _, r := range rows {
			ks = append(ks, rowKline(r, exgate.Interval1m))
		}
		for _, k := range ks {
			for _, s := range []string{k.OpenPrice, k.HighPrice, k.LowPrice, k.ClosePrice, k.Volume} {
				if !exgate.IsPlainDecimal(s) {
					t.Errorf("kline field %q is not a plain decimal", s)
				}
			}
		}
	})
}

func FuzzParseDepth(f *testing.F) {
	seedSamples(f)
	f.Add([]byte(`{"asks":[["1.5","2",1]],"bids":[["1.4","1e-3",1]]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		bk, err := parseDepth(b)
		if err != nil {
			return
		}
		for i, l := range bk.bids {
			if !exgate.IsPlainDecimal(l.priceText) || !exgate.IsPlainDecimal(l.qtyText) {
				t.Errorf("bid %q %q not plain", l.priceText, l.qtyText)
			}
			if i > 0 && l.price.GreaterThan(bk.bids[i-1].price) {
				t.Error("bids not descending")
			}
		}
		for i, l := range bk.asks {
			if i > 0 && l.price.LessThan(bk.asks[i-1].price) {
				t.Error("asks not ascending")
			}
		}
	})
}

func FuzzParseFundingRows(f *testing.F) {
	seedSamples(f)
	f.Add([]byte(`{"withdrawals":[{"refid":"x","amount":"1","fee":"0.1","time":1,"status":"Success"}],"next_cursor":"c"}`))
	m := &markets{commonByName: map[string]string{"XXBT": "BTC"}}
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := parseFundingRows(b)
		if err != nil {
			return
		}
		for _, r := range rows {
			d := m.toDeposit(r)
			w := m.toWithdrawal(r, "id")
			if d.Status == "" || w.Status == "" {
				t.Error("empty normalized status")
			}
		}
	})
}

func FuzzParseBalanceEx(f *testing.F) {
	seedSamples(f)
	f.Add([]byte(`{"XXBT":{"balance":1.5,"hold_trade":"2"},"XBT.F":{"balance":"3","hold_trade":"0"}}`))
	m := &markets{commonByName: map[string]string{}}
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := parseBalanceEx(b)
		if err != nil {
			return
		}
		for _, bal := range m.toBalances(rows) {
			if bal.Available.IsNegative() || bal.Locked.IsNegative() {
				t.Errorf("negative balance %+v", bal)
			}
		}
	})
}

func FuzzParseAssetPairs(f *testing.F) {
	seedSamples(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		pairs, err := parseAssetPairs(b)
		if err != nil {
			return
		}
		buildMarkets(map[string]assetInfo{"XXBT": {Altname: "XBT"}}, pairs, testNowInternal)
	})
}

func FuzzOrder(f *testing.F) {
	seedSamples(f)
	m := &markets{commonByName: map[string]string{}, byName: map[string]*market{}}
	f.Fuzz(func(t *testing.T, b []byte) {
		var rows map[string]krakenOrder
		if err := json.Unmarshal(b, &rows); err != nil {
			return
		}
		for txid, o := range rows {
			got, err := m.toOrder(txid, o, exgate.Symbol{Base: "BTC", Quote: "USD"})
			if err != nil {
				continue
			}
			if got.Status == exgate.OrderPending && got.CloseAt != got.OpenAt {
				t.Error("PENDING order with closeAt != openAt")
			}
		}
	})
}

// seedFrames adds every WebSocket golden frame and its data as seeds.
func seedFrames(f *testing.F) {
	files, _ := filepath.Glob("testdata/ws/*.json")
	for _, name := range files {
		raw, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
		if m, err := parseMessage(raw); err == nil && len(m.Data) > 0 {
			f.Add([]byte(m.Data))
		}
	}
}

func FuzzParseMessage(f *testing.F) {
	seedFrames(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseMessage(b)
		if err == nil && m.Method == "" && m.Channel == "" {
			t.Error("a message with neither method nor channel was accepted")
		}
		if err == nil && m.Success != nil && !*m.Success && subscribeError(m) == nil {
			t.Error("a refused request gave no error")
		}
	})
}

func FuzzParseBook(f *testing.F) {
	seedFrames(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		items, err := parseBook(b)
		if err != nil {
			return
		}
		book := krakenBook{priceDecimals: 1, qtyDecimals: 8}
		for i, d := range items {
			if book.apply(d, i == 0) != nil {
				return
			}
			book.checksum()
			snap := book.Snapshot(exgate.MaxStreamDepth)
			if len(snap.Bids) > bookDepth || len(snap.Asks) > bookDepth {
				t.Errorf("book deeper than %d after truncation", bookDepth)
			}
		}
	})
}

func FuzzParseWSOHLC(f *testing.F) {
	seedFrames(f)
	m := sampleMarkets(f)
	mk, _ := m.bySymbolV2("BTC/USD")
	f.Fuzz(func(t *testing.T, b []byte) {
		items, err := parseOHLCData(b)
		if err != nil {
			return
		}
		for _, c := range items {
			k, err := c.kline(mk, exgate.Interval1m)
			if err != nil {
				t.Errorf("a parsed candle does not convert: %v", err)
			}
			if k.CloseTime != k.OpenTime+59_999 {
				t.Errorf("kline %d..%d is not a minute", k.OpenTime, k.CloseTime)
			}
		}
	})
}

func FuzzParseExecutions(f *testing.F) {
	seedFrames(f)
	m := sampleMarkets(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		items, err := parseExecutions(b)
		if err != nil {
			return
		}
		orders := map[string]*wsOrder{}
		for _, x := range items {
			o := orders[x.OrderID]
			if o == nil {
				o = &wsOrder{}
				orders[x.OrderID] = o
			}
			o.merge(m, x)
			if o.complete() {
				m.toOrder(x.OrderID, o.ko, exgate.Symbol{})
			}
		}
	})
}
