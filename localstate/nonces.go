package localstate

import (
	"context"
	"fmt"
	"math"
	"sync"
)

// Nonces hands out strictly increasing numbers per key, such as the nonces
// an exchange requires on every signed call. It never forgets a key: there
// is one per exchange API key.
type Nonces struct {
	mu   sync.Mutex
	last map[string]int64
}

// NewNonces returns Nonces with no value handed out yet.
func NewNonces() *Nonces { return &Nonces{last: map[string]int64{}} }

// Next returns a value greater than every value returned before for key,
// and at least floor (and at least 1). It fails once key's values reach
// the largest int64.
func (n *Nonces) Next(_ context.Context, key string, floor int64) (int64, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	last := n.last[key]
	if last == math.MaxInt64 {
		return 0, fmt.Errorf("localstate: nonce %q: exhausted", key)
	}
	v := max(last+1, floor)
	n.last[key] = v
	return v, nil
}
