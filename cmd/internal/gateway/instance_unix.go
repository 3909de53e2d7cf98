//go:build unix

package gateway

import (
	"errors"
	"syscall"
)

// processGone reports whether no process has this id on this host: an
// instance that crashed there need not wait out its last heartbeat.
func processGone(pid int) bool {
	return pid > 0 && errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
