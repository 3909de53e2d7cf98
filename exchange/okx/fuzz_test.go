package okx

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// Every parser of OKX's answers and pushes has a fuzz target: none may
// panic on any input, and what one accepts must be usable. Seeds are the
// payloads of testdata/. Run one for a few seconds with
//
//	go test ./exchange/okx -run '^$' -fuzz '^FuzzParseOrders$' -fuzztime 5s

// seedData adds the data arrays of the testdata answers to f.
func seedData(f *testing.F, names ...string) {
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join("testdata", n))
		if err != nil {
			f.Fatal(err)
		}
		if d, ae, err := parseEnvelope(http.StatusOK, b); err == nil && ae == nil {
			f.Add(d)
		}
	}
	f.Add([]byte(`[]`))
	f.Add([]byte(`[{}]`))
	f.Add([]byte(`null`))
	f.Add([]byte(`[{"ordId":1,"instId":"BTC-USDT","side":"buy","state":"live","sz":"1e400"}]`))
}

func FuzzParseEnvelope(f *testing.F) {
	entries, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, n := range entries {
		if b, err := os.ReadFile(n); err == nil {
			f.Add(200, b)
		}
	}
	f.Add(401, []byte(`{"msg":"Invalid Sign","code":"50113"}`))
	f.Add(200, []byte(`{"code":"1","data":[{"sCode":"51008","sMsg":"x"}]}`))
	f.Add(500, []byte(`{"code":500,"data":{}}`))
	f.Fuzz(func(t *testing.T, status int, b []byte) {
		data, ae, err := parseEnvelope(status, b)
		if err == nil && ae == nil && data == nil {
			t.Fatal("no data, no refusal, no error")
		}
		if ae != nil {
			_ = classifyAPI(epPlaceOrder, ae)
		}
	})
}

func FuzzParseServerTime(f *testing.F) {
	seedData(f, "public_time.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		if ms, err := parseServerTime(b); err == nil && ms <= 0 {
			t.Fatalf("time %d accepted", ms)
		}
	})
}

func FuzzParseInstruments(f *testing.F) {
	seedData(f, "instruments_spot.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := parseInstruments(b)
		for _, r := range rows {
			if err == nil && (!r.TickSz.IsPositive() || !r.LotSz.IsPositive()) {
				t.Fatalf("instrument %+v accepted", r)
			}
		}
	})
}

func FuzzParseCandles(f *testing.F) {
	seedData(f, "candles.json", "history_candles.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		cs, err := parseCandles(b)
		if err != nil {
			return
		}
		_, _ = nativeKlines("1m", cs)
		_, _ = aggregate("3d", "1d", cs)
	})
}

func FuzzParseBook(f *testing.F) {
	seedData(f, "books.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		bids, asks, err := parseBook(b)
		if err != nil {
			return
		}
		for i := 1; i < len(bids); i++ {
			if bids[i].priceDec.GreaterThan(bids[i-1].priceDec) {
				t.Fatal("bids not descending")
			}
		}
		for i := 1; i < len(asks); i++ {
			if asks[i].priceDec.LessThan(asks[i-1].priceDec) {
				t.Fatal("asks not ascending")
			}
		}
	})
}

func FuzzParseBalances(f *testing.F) {
	seedData(f, "account_balance.json", "asset_balances.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, parse := range []func([]byte) ([]balanceJSON, error){parseTradingBalance, parseFundingBalances} {
			rows, err := parse(b)
			for _, r := range rows {
				if err == nil && (r.AvailBal.IsNegative() || r.Ccy == "") {
					t.Fatalf("balance %+v accepted", r)
				}
			}
		}
	})
}

func FuzzParseOrders(f *testing.F) {
	seedData(f, "order_details.json", "orders_pending.json", "orders_history.json", "place_order_response.json", "cancel_order_response.json")
	e := testExchange()
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = parseOrderAck(b)
		os, err := parseOrders(b)
		if err != nil {
			return
		}
		for _, o := range os {
			p := unlisted(o.InstID)
			_ = e.orderFromOKX(p, o, "")
		}
		_, _ = parseOrder(b)
	})
}

func FuzzParseFills(f *testing.F) {
	seedData(f, "fills.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		fs, err := parseFills(b)
		if err != nil {
			return
		}
		for _, x := range fs {
			p := unlisted(x.InstID)
			if fl := fillFromOKX(p, x); fl.Fee.IsNegative() {
				t.Fatalf("negative fee %s", fl.Fee)
			}
		}
	})
}

func FuzzParseWallet(f *testing.F) {
	seedData(f, "currencies.json", "deposit_address.json", "deposit_history.json", "withdrawal_history.json",
		"withdrawal_response.json", "transfer_response.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		if cs, err := parseCurrencies(b); err == nil {
			for _, c := range cs {
				_, _ = c.withdrawPrecision(), c.fee()
				_ = networkOf(c.Chain)
			}
		}
		if as, err := parseAddresses(b); err == nil {
			for _, a := range as {
				_ = a.memo()
			}
		}
		_, _ = parseDeposits(b)
		_, _ = parseWithdrawAck(b)
		if ws, err := parseWithdrawals(b); err == nil {
			for _, w := range ws {
				if out := withdrawalFromOKX(w, ""); out.Fees != nil && out.Fees.IsNegative() {
					t.Fatalf("negative fee %+v", out)
				}
			}
		}
		if ts, err := parseTransfers(b); err == nil {
			for _, x := range ts {
				_ = transferFromOKX(x, "", 1)
			}
		}
		_, _ = parseBills(b)
	})
}

func FuzzParseStream(f *testing.F) {
	b, err := os.ReadFile(filepath.Join("testdata", "ws_books.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`{"arg":{"channel":"books","instId":"BTC-USDT"},"action":"update","data":[{"asks":[["1","0","0","1"]],"bids":[],"checksum":5,"prevSeqId":1,"seqId":2}]}`))
	f.Add([]byte(`{"arg":{"channel":"candle1m","instId":"BTC-USDT"},"data":[["1700000000000","1","2","0.5","1.5","10","15","15","0"]]}`))
	f.Add([]byte(`{"arg":{"channel":"orders","instType":"SPOT"},"data":[{"instId":"BTC-USDT","ordId":"1","side":"buy","state":"live"}]}`))
	f.Add([]byte(`{"event":"error","code":"60024","msg":"Wrong passphrase"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseWSMessage(b)
		if err != nil {
			return
		}
		if p, err := parseBookPush(m.Action, m.Data); err == nil {
			var s bookSync
			_, _ = s.apply(p)
		}
		_, _ = parseCandlePush(m.Data)
		_, _ = parseOrders(m.Data)
	})
}
