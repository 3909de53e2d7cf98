package okx

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/wsstream"
)

// TestBookChecksum checks the checksum against the examples of OKX's
// docs ("Order book channel", checksum; testdata/ws_books.json): the
// interleaved string, a shorter side skipped, CRC32 as a signed integer.
func TestBookChecksum(t *testing.T) {
	var f struct {
		Examples []struct {
			Bids, Asks [][]string
			String     string `json:"string"`
			CRC        int32  `json:"crc32_signed_computed"`
		} `json:"checksum_examples"`
	}
	if err := json.Unmarshal(readTestdata(t, "ws_books.json"), &f); err != nil {
		t.Fatal(err)
	}
	for _, ex := range f.Examples {
		conv := func(rows [][]string) []exgate.Level {
			var out []exgate.Level
			for _, r := range rows {
				out = append(out, exgate.Level{Price: r[0], Quantity: r[1]})
			}
			return out
		}
		if ex.Bids == nil {
			continue // the snapshot's own string, checked below
		}
		if got := bookChecksum(conv(ex.Bids), conv(ex.Asks)); got != ex.CRC {
			t.Errorf("checksum of %s = %d, want %d", ex.String, got, ex.CRC)
		}
	}
}

// TestBookSync follows the docs' snapshot and update (testdata/ws_books.json)
// and the rules for gaps, resets, keep-alives and checksums.
func TestBookSync(t *testing.T) {
	var f struct {
		Snapshot, Update struct {
			Action string          `json:"action"`
			Data   json.RawMessage `json:"data"`
		}
	}
	if err := json.Unmarshal(readTestdata(t, "ws_books.json"), &f); err != nil {
		t.Fatal(err)
	}
	snap, err := parseBookPush(f.Snapshot.Action, f.Snapshot.Data)
	if err != nil {
		t.Fatal(err)
	}
	// The docs' example checksum is illustrative and does not match its
	// levels (testdata/README.md): checked without it here.
	snap.hasChecksum = false
	var b bookSync
	if changed, err := b.apply(bookPush{prevSeq: 1, seq: 2, bids: [][2]string{{"1", "1"}}}); changed || err != nil {
		t.Fatalf("an update before the snapshot: %v %v; want it ignored", changed, err)
	}
	if changed, err := b.apply(snap); !changed || err != nil || b.seq != 123456 {
		t.Fatalf("snapshot: %v %v seq %d", changed, err, b.seq)
	}
	book := b.book.Snapshot(100)
	if len(book.Bids) != 8 || len(book.Asks) != 8 || book.Bids[0].Price != "8476.97" || book.Asks[0].Price != "8476.98" {
		t.Fatalf("book %+v", book)
	}
	// An update with the right checksum applies; a level of size 0 is
	// deleted.
	del := bookPush{prevSeq: 123456, seq: 123457, bids: [][2]string{{"8476.97", "0"}}}
	del.checksum, del.hasChecksum = checksumAfter(t, b, del), true
	if changed, err := b.apply(del); !changed || err != nil || b.book.Snapshot(1).Bids[0].Price != "8475.55" {
		t.Fatalf("delete: %v %v %+v", changed, err, b.book.Snapshot(1))
	}
	// A keep-alive repeats the seqId and changes nothing.
	if changed, err := b.apply(bookPush{prevSeq: 123457, seq: 123457}); changed || err != nil {
		t.Errorf("keep-alive: %v %v", changed, err)
	}
	for name, p := range map[string]bookPush{
		"gap":      {prevSeq: 123458, seq: 123459},
		"reset":    {prevSeq: 123457, seq: 5},
		"checksum": {prevSeq: 123457, seq: 123458, asks: [][2]string{{"8477", "8"}}, checksum: 42, hasChecksum: true},
	} {
		c := b
		c.book = bookCopy(t, b)
		if _, err := c.apply(p); !errors.Is(err, errBookOutOfSync) || c.live {
			t.Errorf("%s: %v (live %v); want out of sync", name, err, c.live)
		}
	}
}

// checksumAfter is the checksum of b with p applied.
func checksumAfter(t *testing.T, b bookSync, p bookPush) int32 {
	t.Helper()
	c := bookSync{seq: b.seq, live: true}
	c.book = bookCopy(t, b)
	p.hasChecksum = false
	if _, err := c.apply(p); err != nil {
		t.Fatal(err)
	}
	s := c.book.Snapshot(25)
	return bookChecksum(s.Bids, s.Asks)
}

func bookCopy(t *testing.T, b bookSync) (out wsstream.Book) {
	t.Helper()
	s := b.book.Snapshot(0)
	for _, l := range s.Bids {
		_ = out.Set(wsstream.Bid, l.Price, l.Quantity)
	}
	for _, l := range s.Asks {
		_ = out.Set(wsstream.Ask, l.Price, l.Quantity)
	}
	return out
}
