package exgate

import (
	"context"
	"time"
)

// Instances: every running gateway (`exgate serve`) keeps a heartbeat row
// in the store, so that an instance that does not share its replay guard
// with the others (--single-instance: PostgreSQL without Redis) refuses to
// start while another is live on the same store, and `exgate doctor` can
// say how many are (docs/contract.md section 4).

// Instance is one running gateway as its heartbeat row describes it.
type Instance struct {
	// ID names the instance: its host, process id and a random suffix.
	ID string
	// Host and PID are where it runs, for people.
	Host string
	PID  int
	// Single: started with --single-instance, its replay guard and rate
	// limits in process.
	Single bool
	// SharedState is "redis" or "in-process".
	SharedState string
	StartedAt   time.Time
	HeartbeatAt time.Time
}

// InstanceStore is the part of a Store that keeps the instances'
// heartbeats.
type InstanceStore interface {
	// StartInstance records in as live (its HeartbeatAt and, when zero,
	// StartedAt set to now) unless it conflicts with another instance
	// whose heartbeat is after liveAfter: in is Single and another is
	// live, or another live instance is Single. On a conflict it records
	// nothing and returns the live instances with an error wrapping
	// ErrConflict. The check and the record are one transaction, so of
	// two instances starting together at most one single instance wins.
	// Rows whose heartbeat is not after liveAfter are removed.
	StartInstance(ctx context.Context, in Instance, liveAfter time.Time) ([]Instance, error)
	// BeatInstance sets the instance's HeartbeatAt to now, recording it
	// again when its row was removed.
	BeatInstance(ctx context.Context, in Instance) error
	// StopInstance removes the instance's row; no error when there is none.
	StopInstance(ctx context.Context, id string) error
	// LiveInstances returns the instances whose heartbeat is after
	// liveAfter, oldest first.
	LiveInstances(ctx context.Context, liveAfter time.Time) ([]Instance, error)
}

// Instance heartbeat timing: an instance beats every InstanceHeartbeat and
// counts as stopped InstanceLiveFor after its last beat.
const (
	InstanceHeartbeat = 5 * time.Second
	InstanceLiveFor   = 15 * time.Second
)
