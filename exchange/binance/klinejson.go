package binance

import (
	"bytes"
	"context"
	"errors"
	"sort"
	"sync"

	"github.com/exgate/exgate"
)

// Klines are the gateway's largest and most frequent answer, and a client
// polling the recent klines of a market sees the same rows again and again:
// of 500 one-minute klines, only the last (the current minute's) changes
// between two calls, until a new minute starts and the window moves by one.
// AppendRecentKlinesJSON therefore converts Binance's answer straight into
// the API's JSON, row by row, and keeps the last answer to each request
// together with its JSON and where each row ends in both. The next answer
// is compared with the kept one byte for byte; the JSON of the rows whose
// text is identical is copied, and only the rows after the first
// difference are converted. The output is the same bytes a full conversion
// makes, because a row's JSON depends on nothing but its own text, the
// interval (part of the request) and the open time of the row before it
// (identical too); klinejson_test.go and FuzzKlineMemo check exactly that.

// klineMemoBytes is the default of Options.KlineMemory, the bound on the
// memory of the kept answers: a 500-kline answer and its JSON are about
// 200 KB together, so this holds some 160 of them.
const klineMemoBytes = 32 << 20

var _ exgate.KlinesAppender = (*Exchange)(nil)

// AppendRecentKlinesJSON is RecentKlines encoded as the API answers it
// (exgate.AppendKlinesJSON), appended to dst.
func (e *Exchange) AppendRecentKlinesJSON(ctx context.Context, dst []byte, cred exgate.Credential, req exgate.KlineRequest) ([]byte, error) {
	call, err := e.klineCall(ctx, req)
	if err != nil {
		return dst, err
	}
	bp, _ := e.klines.buffers.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	defer e.klines.buffers.Put(bp)
	*bp = (*bp)[:0]
	call.into = bp
	if _, err := e.c.doText(ctx, call.request); err != nil {
		return dst, err
	}
	out, _, err := e.klines.appendJSON(dst, *bp, call.params.Encode(), call.iv, call.limit)
	if err != nil {
		return dst, badAnswer(epKlines, err)
	}
	return out, nil
}

// klineMemo keeps the last answer to each klines request.
type klineMemo struct {
	mu     sync.Mutex
	max    int // bytes
	bytes  int
	byCall map[string]*klineSnapshot
	// buffers are the buffers klines answers are read into.
	buffers sync.Pool
}

func newKlineMemo(maxBytes int) *klineMemo {
	return &klineMemo{max: maxBytes, byCall: make(map[string]*klineSnapshot)}
}

// klineSnapshot is one answer with its JSON; it is never changed once kept.
type klineSnapshot struct {
	in, out []byte
	rows    []klineMark
}

// klineMark is where one row ends: the offset just after its closing
// bracket in the answer and just after its object in the JSON, with its
// open time.
type klineMark struct {
	in, out int
	open    int64
}

func (s *klineSnapshot) size() int { return len(s.in) + len(s.out) + 24*len(s.rows) }

func (m *klineMemo) get(key string) *klineSnapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.byCall[key]
}

func (m *klineMemo) put(key string, s *klineSnapshot) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old := m.byCall[key]; old != nil {
		m.bytes -= old.size()
		delete(m.byCall, key)
	}
	if s.size() > m.max {
		return
	}
	if m.bytes+s.size() > m.max {
		clear(m.byCall) // rare: more distinct requests than the bound holds
		m.bytes = 0
	}
	m.byCall[key] = s
	m.bytes += s.size()
}

var errTooManyKlines = errors.New("more klines than asked for")

// appendJSON appends the JSON of the klines answer in (the answer to the
// call key, for interval iv and limit) to dst. Answers the fast path does
// not take (escaped strings, exponents, more rows than limit, errors) are
// converted by parseKlines, which decides what they mean. reused is the
// number of rows whose JSON was copied from the kept answer.
func (m *klineMemo) appendJSON(dst, in []byte, key string, iv exgate.Interval, limit int) (out []byte, reused int, err error) {
	start := len(dst)
	w := klineJSONWriter{rows: newKlineRows(iv), start: start, prev: -1}
	var kept []klineMark
	snap := m.get(key)
	if snap != nil {
		p := commonPrefix(in, snap.in)
		n := sort.Search(len(snap.rows), func(i int) bool { return snap.rows[i].in > p })
		kept = snap.rows[:n:n]
	}
	if len(kept) > 0 {
		last := kept[len(kept)-1]
		w.out = append(dst, snap.out[:last.out]...)
		w.base, w.count, w.prev = last.in, len(kept), last.open
		err = scanKlinesAfter(string(in[last.in:]), w.add)
	} else {
		w.out = append(dst, '[')
		w.marks = make([]klineMark, 0, len(in)/160+1)
		err = scanKlines(string(in), w.add)
	}
	if err == nil && w.count > limit {
		err = errTooManyKlines
	}
	if err != nil {
		ks, err := parseKlines(string(in), iv)
		if err != nil {
			return dst[:start], 0, err
		}
		if len(ks) > limit {
			ks = ks[len(ks)-limit:]
		}
		return exgate.AppendKlinesJSON(dst[:start], ks), 0, nil
	}
	out = append(w.out, ']')
	// Keep this answer when more than its last row is new: when only the
	// current kline changed, the kept answer serves the next call as well.
	if m.max > 0 && (len(w.marks) > 1 || (len(kept) == 0 && len(w.marks) > 0)) {
		m.put(key, &klineSnapshot{
			in:   bytes.Clone(in),
			out:  bytes.Clone(out[start:]),
			rows: append(kept, w.marks...),
		})
	}
	return out, len(kept), nil
}

// klineJSONWriter converts scanned rows and appends their JSON.
type klineJSONWriter struct {
	rows  klineRows
	out   []byte
	start int   // where the JSON array starts in out
	base  int   // offset in the answer of the text being scanned
	count int   // rows in the array so far
	prev  int64 // open time of the last row, -1 before the first
	marks []klineMark
	// trades is the trade count of the row being written.
	trades uint64
}

func (w *klineJSONWriter) add(_ int, r *rawKline, end int) error {
	var k exgate.Kline
	if err := w.rows.convert(w.count, r, w.prev, &k, &w.trades); err != nil {
		return err
	}
	if w.count > 0 {
		w.out = append(w.out, ',')
	}
	w.out = exgate.AppendKlineJSON(w.out, &k)
	w.marks = append(w.marks, klineMark{in: w.base + end, out: len(w.out) - w.start, open: k.OpenTime})
	w.prev = k.OpenTime
	w.count++
	return nil
}

// commonPrefix returns the length of the longest common prefix of a and b,
// comparing blocks with bytes.Equal (vectorized) before single bytes.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i+4096 <= n && bytes.Equal(a[i:i+4096], b[i:i+4096]) {
		i += 4096
	}
	for i+64 <= n && bytes.Equal(a[i:i+64], b[i:i+64]) {
		i += 64
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}
