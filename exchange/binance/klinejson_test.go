package binance

import (
	"bytes"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/exgate/exgate"
)

// klineRow writes one row as Binance does.
func klineRow(open int64, close string, trades int) string {
	o := strconv.FormatInt(open, 10)
	c := strconv.FormatInt(open+59_999, 10)
	return "[" + o + `,"100.00000000","101.50000000","99.25000000","` + close + `","12.34500000",` + c + `,"1234.56780000",` + strconv.Itoa(trades) + `,"6.00000000","600.00000000","0"]`
}

// klineAnswer writes rows opening every minute from first, closing at the
// given prices.
func klineAnswer(first int64, closes ...string) string {
	rows := make([]string, len(closes))
	for i, c := range closes {
		rows[i] = klineRow(first+int64(i)*60_000, c, 10+i)
	}
	return "[" + strings.Join(rows, ",") + "]"
}

// fullKlinesJSON is what the JSON of an answer must be: RecentKlines'
// conversion, encoded.
func fullKlinesJSON(in string, iv exgate.Interval, limit int) ([]byte, error) {
	ks, err := parseKlines(in, iv)
	if err != nil {
		return nil, err
	}
	if len(ks) > limit {
		ks = ks[len(ks)-limit:]
	}
	return exgate.AppendKlinesJSON(nil, ks), nil
}

// TestKlineMemo feeds a sequence of answers to one request through the
// memo, as a client polling recent klines would see them, and checks each
// JSON against a full conversion, how many rows were copied, and which
// answers were kept.
func TestKlineMemo(t *testing.T) {
	const t0 = 1_700_000_040_000 // a minute boundary
	steps := []struct {
		name       string
		answer     string
		limit      int
		wantReused int
		wantKept   bool // the answer replaces the kept one
		wantErr    string
	}{
		{"first answer is converted whole", klineAnswer(t0, "1", "2", "3", "4"), 4, 0, true, ""},
		{"same answer", klineAnswer(t0, "1", "2", "3", "4"), 4, 4, false, ""},
		{"current kline changed", klineAnswer(t0, "1", "2", "3", "4.5"), 4, 3, false, ""},
		{"changed again: still from the first kept answer", klineAnswer(t0, "1", "2", "3", "4.75"), 4, 3, false, ""},
		{"window moved by one", klineAnswer(t0+60_000, "2", "3", "4.75", "5"), 4, 0, true, ""},
		{"a middle kline corrected", klineAnswer(t0+60_000, "2", "3.5", "4.75", "5"), 4, 1, true, ""},
		{"a kline added, none dropped", klineAnswer(t0+60_000, "2", "3.5", "4.75", "5", "6"), 5, 4, false, ""},
		{"more klines than asked for: the first are dropped", klineAnswer(t0+60_000, "2", "3.5", "4.75", "5", "6"), 3, 0, false, ""},
		{"exponent in the changed kline", klineAnswer(t0+60_000, "2", "3.5", "4.75", "5", "6E1"), 5, 4, false, ""},
		{"escaped string in the changed kline", klineAnswer(t0+60_000, "2", "3.5", "4.75", "5", `\u0036`), 5, 0, false, ""},
		{"changed kline opens before the one kept before it",
			"[" + strings.Join([]string{klineRow(t0+60_000, "2", 10), klineRow(t0+120_000, "3.5", 11), klineRow(t0+180_000, "4.75", 12), klineRow(t0+240_000, "5", 13), klineRow(t0+240_000, "6", 14)}, ",") + "]",
			5, 0, false, "klines not ascending at 4"},
		{"broken after the kept klines", klineAnswer(t0+60_000, "2", "3.5", "4.75", "5", "6")[:700], 5, 0, false, "klines answer"},
		{"garbage after the array", klineAnswer(t0+60_000, "2", "3.5", "4.75", "5", "6") + "x", 5, 0, false, "klines answer"},
		{"white space after the array", klineAnswer(t0+60_000, "2", "3.5", "4.75", "5", "6.5") + " \n", 5, 4, false, ""},
		{"empty", "[]", 5, 0, false, ""},
		{"one kline", klineAnswer(t0, "1"), 5, 0, true, ""},
	}
	m := newKlineMemo(1 << 20)
	const key = "symbol=BTCUSDT&interval=1m&limit=5"
	for _, st := range steps {
		before := m.get(key)
		prefix := []byte("kept:")
		got, reused, err := m.appendJSON(prefix, []byte(st.answer), key, exgate.Interval1m, st.limit)
		want, wantErr := fullKlinesJSON(st.answer, exgate.Interval1m, st.limit)
		if st.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), st.wantErr) || wantErr == nil || err.Error() != wantErr.Error() {
				t.Errorf("%s: error %v, want %q as the full conversion says (%v)", st.name, err, st.wantErr, wantErr)
			}
			if string(got) != "kept:" {
				t.Errorf("%s: dst changed on error: %q", st.name, got)
			}
			continue
		}
		if err != nil || wantErr != nil {
			t.Fatalf("%s: %v (full conversion: %v)", st.name, err, wantErr)
		}
		if !bytes.HasPrefix(got, prefix) || !bytes.Equal(got[len(prefix):], want) {
			t.Errorf("%s: JSON differs from a full conversion:\n got %s\nwant %s", st.name, got, want)
		}
		if reused != st.wantReused {
			t.Errorf("%s: %d klines copied, want %d", st.name, reused, st.wantReused)
		}
		if kept := m.get(key) != before; kept != st.wantKept {
			t.Errorf("%s: answer kept %v, want %v", st.name, kept, st.wantKept)
		}
	}
}

// TestKlineMemoKeys checks that answers to different requests do not
// share JSON: the interval decides the close times.
func TestKlineMemoKeys(t *testing.T) {
	m := newKlineMemo(1 << 20)
	ans := []byte(klineAnswer(1_700_000_040_000, "1", "2"))
	for _, iv := range []exgate.Interval{exgate.Interval1m, exgate.Interval5m, exgate.Interval1M} {
		key := "interval=" + string(iv)
		got, _, err := m.appendJSON(nil, ans, key, iv, 10)
		want, _ := fullKlinesJSON(string(ans), iv, 10)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %s, %v; want %s", iv, got, err, want)
		}
	}
	if len(m.byCall) != 3 {
		t.Errorf("%d answers kept, want 3", len(m.byCall))
	}
}

// TestKlineMemoBound checks that the kept answers stay within the bound.
func TestKlineMemoBound(t *testing.T) {
	ans := []byte(klineAnswer(1_700_000_040_000, "1", "2", "3"))
	m := newKlineMemo(3 * (2*len(ans) + 100))
	for i := range 10 {
		if _, _, err := m.appendJSON(nil, ans, strconv.Itoa(i), exgate.Interval1m, 10); err != nil {
			t.Fatal(err)
		}
		if m.bytes > m.max {
			t.Fatalf("%d bytes kept, bound %d", m.bytes, m.max)
		}
	}
	if len(m.byCall) == 0 || len(m.byCall) > 3 {
		t.Errorf("%d answers kept", len(m.byCall))
	}
	small := newKlineMemo(10)
	got, _, err := small.appendJSON(nil, ans, "k", exgate.Interval1m, 10)
	if want, _ := fullKlinesJSON(string(ans), exgate.Interval1m, 10); err != nil || !bytes.Equal(got, want) || len(small.byCall) != 0 {
		t.Errorf("an answer larger than the bound: %s, %v, %d kept", got, err, len(small.byCall))
	}
}

// TestAppendRecentKlinesJSON checks the adapter end to end against the
// fake, whose current kline changes on every call: the JSON equals
// RecentKlines encoded, and repeated calls copy all but the last kline.
func TestAppendRecentKlinesJSON(t *testing.T) {
	e := newEnv(t)
	e.fake.TickCurrentKline(true)
	req := exgate.KlineRequest{Symbol: btcusdt, Interval: exgate.Interval1m, Limit: 500}
	var kept *klineSnapshot
	for i := range 3 {
		got, err := e.ex.AppendRecentKlinesJSON(t.Context(), []byte("x"), e.cred, req)
		if err != nil {
			t.Fatal(err)
		}
		ks, err := e.ex.RecentKlines(t.Context(), e.cred, req)
		if err != nil {
			t.Fatal(err)
		}
		// Each call ticks the current kline: compare all but it, and
		// check that it did change.
		want := exgate.AppendKlinesJSON(nil, ks)
		cut := bytes.LastIndex(want, []byte(`{"openTime":`))
		if len(ks) != 500 || string(got[:1]) != "x" || !bytes.Equal(got[1:1+cut], want[:cut]) {
			t.Fatalf("call %d: JSON differs from RecentKlines before the current kline", i)
		}
		if bytes.Equal(got[1:], want) {
			t.Fatalf("call %d: the current kline did not change between calls", i)
		}
		if len(e.ex.klines.byCall) != 1 {
			t.Fatalf("%d answers kept, want 1", len(e.ex.klines.byCall))
		}
		for _, s := range e.ex.klines.byCall {
			if i > 0 && s != kept {
				t.Errorf("call %d: the kept answer was replaced though only the current kline changed", i)
			}
			kept = s
		}
	}

	// Concurrent calls share the kept answers (run with -race).
	ks, err := e.ex.RecentKlines(t.Context(), e.cred, req)
	if err != nil {
		t.Fatal(err)
	}
	want := exgate.AppendKlinesJSON(nil, ks)
	want = want[:bytes.LastIndex(want, []byte(`{"openTime":`))]
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 5 {
				got, err := e.ex.AppendRecentKlinesJSON(t.Context(), nil, e.cred, req)
				if err != nil || !bytes.HasPrefix(got, want) {
					t.Errorf("concurrent call: %v, or JSON differs before the current kline", err)
					return
				}
			}
		})
	}
	wg.Wait()
}

func BenchmarkKlinesJSON(b *testing.B) {
	e := newEnv(b)
	e.fake.TickCurrentKline(true)
	var in []byte
	call, err := e.ex.klineCall(b.Context(), exgate.KlineRequest{Symbol: btcusdt, Interval: exgate.Interval1m, Limit: 500})
	if err != nil {
		b.Fatal(err)
	}
	call.into = &in
	next := func() []byte {
		in = in[:0]
		if _, err := e.ex.c.doText(b.Context(), call.request); err != nil {
			b.Fatal(err)
		}
		return in
	}
	first := bytes.Clone(next())
	second := bytes.Clone(next())
	dst := make([]byte, 0, 128<<10)
	b.Run("full", func(b *testing.B) {
		for b.Loop() {
			m := newKlineMemo(1 << 20)
			if _, _, err := m.appendJSON(dst[:0], first, "k", exgate.Interval1m, 500); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("current kline changed", func(b *testing.B) {
		m := newKlineMemo(1 << 20)
		if _, _, err := m.appendJSON(dst[:0], first, "k", exgate.Interval1m, 500); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, n, err := m.appendJSON(dst[:0], second, "k", exgate.Interval1m, 500); err != nil || n != 499 {
				b.Fatal(n, err)
			}
		}
	})
}

// FuzzKlineMemo checks the memo against a full conversion for any pair of
// answers to one request: whatever was kept, the JSON of the next answer
// (or its error) is the full conversion's.
func FuzzKlineMemo(f *testing.F) {
	const t0 = 1_700_000_040_000
	a := klineAnswer(t0, "1", "2", "3")
	f.Add([]byte(a), []byte(klineAnswer(t0, "1", "2", "3.5")), uint8(3))
	f.Add([]byte(a), []byte(klineAnswer(t0+60_000, "2", "3", "4")), uint8(3))
	f.Add([]byte(a), []byte(klineAnswer(t0, "1", "2", "3", "4")), uint8(3))
	f.Add([]byte(a), []byte(a[:len(a)-1]+` ] `), uint8(2))
	f.Add([]byte(a), []byte(a[:len(a)-3]+`"]]`), uint8(3))
	f.Add([]byte("[]"), []byte(a), uint8(0))
	f.Fuzz(func(t *testing.T, prev, next []byte, limit uint8) {
		m := newKlineMemo(1 << 20)
		for _, in := range [][]byte{prev, next} {
			got, _, err := m.appendJSON(nil, in, "k", exgate.Interval1m, int(limit))
			want, wantErr := fullKlinesJSON(string(in), exgate.Interval1m, int(limit))
			if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
				t.Fatalf("error %v; the full conversion's %v", err, wantErr)
			}
			if err == nil && !bytes.Equal(got, want) {
				t.Fatalf("JSON\n%s\ndiffers from the full conversion's\n%s", got, want)
			}
		}
	})
}

func TestParseCount(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"308", 308, true}, {"1499040000000", 1499040000000, true},
		{"9223372036854775807", 9223372036854775807, true},
		{"9223372036854775808", 0, false}, {"99999999999999999999", 0, false},
		{"", 0, false}, {"+5", 0, false}, {"-5", 0, false}, {"1e3", 0, false}, {"1.0", 0, false}, {"null", 0, false},
	}
	for _, tt := range tests {
		got, err := parseCount(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseCount(%q) = %d, %v; want %d, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// TestKlineMemoryOff checks that a negative KlineMemory keeps nothing and
// converts every answer whole, to the same JSON.
func TestKlineMemoryOff(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.KlineMemory = -1 })
	req := exgate.KlineRequest{Symbol: btcusdt, Interval: exgate.Interval1h, Limit: 20}
	for range 2 {
		got, err := e.ex.AppendRecentKlinesJSON(t.Context(), nil, e.cred, req)
		if err != nil {
			t.Fatal(err)
		}
		ks, err := e.ex.RecentKlines(t.Context(), e.cred, req)
		if err != nil || !bytes.Equal(got, exgate.AppendKlinesJSON(nil, ks)) {
			t.Fatalf("JSON differs from RecentKlines: %v", err)
		}
	}
	if n := len(e.ex.klines.byCall); n != 0 {
		t.Errorf("%d answers kept with KlineMemory -1", n)
	}
}
