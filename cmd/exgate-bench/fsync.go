package main

import (
	"fmt"
	"os"
	"slices"
	"syscall"
	"time"
)

// syncLatency is what one durable append costs on a disk: the latency
// of fdatasync after a 4 KiB append, the floor of a commit that must be on
// disk before it returns (SQLite's WAL with synchronous=FULL, PostgreSQL's
// WAL flush with synchronous_commit on).
type syncLatency struct {
	P50, P90, P99 time.Duration
}

func (l syncLatency) String() string {
	return fmt.Sprintf("fdatasync of a 4 KiB append: p50 %s p90 %s p99 %s",
		roundDur(l.P50), roundDur(l.P90), roundDur(l.P99))
}

// fsyncSamples is how many appends measureSync times.
const fsyncSamples = 200

// measureSync appends 4 KiB to a temporary file in dir and syncs it with
// fdatasync, n times, and returns the latencies.
func measureSync(dir string, n int) (syncLatency, error) {
	f, err := os.CreateTemp(dir, "fsync-")
	if err != nil {
		return syncLatency{}, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	buf := make([]byte, 4096)
	ds := make([]time.Duration, 0, n)
	for range n {
		if _, err := f.Write(buf); err != nil {
			return syncLatency{}, err
		}
		start := time.Now()
		if err := syscall.Fdatasync(int(f.Fd())); err != nil {
			return syncLatency{}, fmt.Errorf("fdatasync %s: %w", f.Name(), err)
		}
		ds = append(ds, time.Since(start))
	}
	slices.Sort(ds)
	at := func(q float64) time.Duration { return ds[min(len(ds)-1, int(q*float64(len(ds))))] }
	return syncLatency{P50: at(0.50), P90: at(0.90), P99: at(0.99)}, nil
}
