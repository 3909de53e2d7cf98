package journal_test

import (
	"bytes"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/journal"
	"github.com/exgate/exgate/sqlite"
)

// What the lifecycle fault tests of each exchange share
// (fault_lifecycle_<exchange>_test.go), on the venues and fault mix of
// fault_test.go.

// lifecycleJournal is a journal over a fresh store for the venue.
func lifecycleJournal(t *testing.T, v venue) (*journal.Service, exgate.Credential, *shiftClock, *sqlite.Store) {
	t.Helper()
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "exgate.db"), bytes.Repeat([]byte{1}, 32))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.CreateClientKey(ctx, exgate.ClientKey{APIKey: "client", Secret: "x", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	cred := v.cred
	cred.ClientAPIKey, cred.Name = "client", "main"
	if cred, err = st.AddCredential(ctx, cred); err != nil {
		t.Fatal(err)
	}
	clk := &shiftClock{}
	jr := journal.New(journal.Options{Store: st, Exchanges: map[string]exgate.Exchange{cred.Exchange: v.ex},
		Now: clk.Now, CallTimeout: 3 * time.Second, NotFoundGrace: time.Minute})
	return jr, cred, clk, st
}

// injectRandom installs the seeded fault mix of fault_test.go; submit
// says which requests take a fault every time (reads: one in four).
func injectRandom(v venue, seed uint64, submit func(*http.Request) bool) {
	rng := rand.New(rand.NewPCG(seed, 15))
	var mu sync.Mutex
	v.inject(func(r *http.Request) fault {
		mu.Lock()
		defer mu.Unlock()
		if !submit(r) && rng.IntN(4) != 0 {
			return faultNone
		}
		return randomFault(rng)
	})
}
