package gateway

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/exgate/exgate"
)

// Shared-state modes (docs/contract.md section 4): what an instance shares
// with the others on its store.
const (
	// ModeRedis: rate limits, the replay guard and exchange pacing in
	// Redis, shared by every instance.
	ModeRedis = "redis"
	// ModeSingle: everything in process; the instance must be the only
	// one on its store.
	ModeSingle = "in-process"
)

// SharedStateMode says how the instance c describes shares its state, or
// why `serve` must refuse to start: PostgreSQL without Redis is refused
// unless --single-instance says this is the only instance (instances that
// do not share their replay guard would accept each other's replays).
// SQLite is one instance's store: in process.
func (c *Config) SharedStateMode() (string, error) {
	switch {
	case c.RedisURL != "":
		return ModeRedis, nil
	case IsPostgresURL(c.DatabaseURL) && !c.SingleInstance:
		return "", errors.New("PostgreSQL without Redis: instances sharing one database must share their replay guard and rate limits " +
			"through Redis, or each would accept the others' replays; set EXGATE_REDIS_URL (--redis-url), or --single-instance " +
			"(EXGATE_SINGLE_INSTANCE=true) when this is the only instance on the database")
	}
	return ModeSingle, nil
}

// StartInstance records this instance's heartbeat in the store and keeps
// it beating until ctx ends or stop is called (which removes it). An
// instance in process (--single-instance, or SQLite) refuses to start
// while another instance is live on the store, and any instance refuses
// to start while a live one runs in process; the error names them.
func StartInstance(ctx context.Context, c *Config, st exgate.Store, log *slog.Logger) (stop func(), err error) {
	mode, err := c.SharedStateMode()
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	in := exgate.Instance{ID: fmt.Sprintf("%s-%d-%s", host, os.Getpid(), strings.ToLower(rand.Text()[:8])),
		Host: host, PID: os.Getpid(), Single: mode == ModeSingle, SharedState: mode}
	now := time.Now()
	live, err := st.StartInstance(ctx, in, now.Add(-exgate.InstanceLiveFor))
	if errors.Is(err, exgate.ErrConflict) && crashedHere(ctx, st, host, live) {
		// Every instance in the way ran on this host and is gone (a
		// crash, a kill -9): its row is removed and the start tried again.
		live, err = st.StartInstance(ctx, in, now.Add(-exgate.InstanceLiveFor))
	}
	if errors.Is(err, exgate.ErrConflict) {
		return nil, fmt.Errorf("another instance is live on this store and the two cannot share it (%s): %s; "+
			"an instance counts as stopped %s after its last heartbeat",
			conflictReason(in, live), describeInstances(live, now), exgate.InstanceLiveFor)
	}
	if err != nil {
		return nil, fmt.Errorf("record this instance in the store: %w", err)
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(exgate.InstanceHeartbeat)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				bctx, bcancel := context.WithTimeout(ctx, exgate.InstanceHeartbeat)
				if err := st.BeatInstance(bctx, in); err != nil {
					log.Warn("instance heartbeat", "err", err)
				}
				bcancel()
			}
		}
	}()
	return func() {
		cancel()
		<-done
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		if err := st.StopInstance(sctx, in.ID); err != nil {
			log.Warn("instance stop", "err", err)
		}
	}, nil
}

// crashedHere removes the rows of live when every one of them is an
// instance of this host whose process is gone, and reports whether it did.
func crashedHere(ctx context.Context, st exgate.Store, host string, live []exgate.Instance) bool {
	for _, o := range live {
		if o.Host != host || !processGone(o.PID) {
			return false
		}
	}
	for _, o := range live {
		if err := st.StopInstance(ctx, o.ID); err != nil {
			return false
		}
	}
	return len(live) > 0
}

func conflictReason(in exgate.Instance, live []exgate.Instance) string {
	if in.Single {
		return "this one keeps its replay guard in process (--single-instance or SQLite) and must be alone"
	}
	return "a live one keeps its replay guard in process (--single-instance or SQLite) and must be alone"
}

// describeInstances names instances for people: host, pid, mode and the
// age of their last heartbeat.
func describeInstances(live []exgate.Instance, now time.Time) string {
	parts := make([]string, len(live))
	for i, o := range live {
		parts[i] = fmt.Sprintf("%s (pid %d, shared state %s, last heartbeat %s ago)",
			o.Host, o.PID, o.SharedState, now.Sub(o.HeartbeatAt).Round(time.Second))
	}
	return strings.Join(parts, ", ")
}
