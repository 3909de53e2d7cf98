// Command exgate-bench is exgate's load tool (docs/PERFORMANCE.md). It is
// a command of its own so that the server binary links neither the load
// tool nor the fake exchange it measures against:
//
//	go run ./cmd/exgate-bench compare   # fake Binance, bare proxy and gateway side by side, in one process
//	go run ./cmd/exgate-bench compare --route market   # the same for the order path (--route limit once Binance takes limit orders)
//	go run ./cmd/exgate-bench run       # load against a running gateway
//	go run ./cmd/exgate-bench idle      # hold idle connections open against a gateway
//	go run ./cmd/exgate-bench fanout    # one stream book channel to 1000 WebSocket clients, gateway and bare relay side by side
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		stop()
		fmt.Fprintln(os.Stderr, "exgate-bench:", err)
		os.Exit(1)
	}
}

const usage = `usage: exgate-bench <command> [flags]

commands:
  run       drive load against a running gateway (signed requests, closed loop)
  compare   start a fast fake Binance, a bare proxy and gateways in this process and measure them side by side
            (--route klines, market or limit: the route measured)
  idle      hold idle keep-alive connections open against a gateway and report its memory
  fanout    one book channel of GET /v1/stream fanned out to many WebSocket clients, against a bare relay, in one process

Run 'exgate-bench <command> -h' for the flags of a command.
`

// run is the whole program, with its environment injected for tests.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("no command given")
	}
	switch args[0] {
	case "run":
		return benchRun(ctx, args[1:], getenv, stdout, stderr)
	case "compare":
		return benchCompare(ctx, args[1:], stdout, stderr)
	case "idle":
		return benchIdle(ctx, args[1:], getenv, stdout, stderr)
	case "fanout":
		return benchFanout(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q (want run, compare, idle or fanout)", args[0])
}
