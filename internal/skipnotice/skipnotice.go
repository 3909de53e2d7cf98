// Package skipnotice tells whoever runs `go test ./...` that a suite
// needing an outside server (PostgreSQL, Redis) was skipped, and how to
// run it. A passing package's output is shown by `go test` only with -v,
// so a t.Skip message alone goes unseen; the TestMain of such a package
// calls Print instead, which writes one line to the terminal when there is
// one (else to standard error, which -v and a failure show).
package skipnotice

import (
	"fmt"
	"io"
	"os"
)

// Print writes one line: "pkg: skipped: why".
func Print(pkg, why string) {
	var w io.Writer = os.Stderr
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		defer tty.Close()
		w = tty
	}
	Fprint(w, pkg, why)
}

// Fprint writes the line of Print to w.
func Fprint(w io.Writer, pkg, why string) {
	fmt.Fprintf(w, "%s: skipped: %s\n", pkg, why)
}
