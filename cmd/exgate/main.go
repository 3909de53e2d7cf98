// Command exgate is the exchange gateway: the server (serve, demo), the
// admin commands that manage client keys and exchange credentials in its
// store (keys, exchange-keys) and a signing client (call, stream). The load tool
// is a command of its own, cmd/exgate-bench.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/exgate/exgate/cmd/internal/gateway"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "exgate:", err)
		os.Exit(1)
	}
}

// usageFormat is the usage text; %s is the registered exchanges
// (gateway.ExchangeList).
const usageFormat = `usage: exgate <command> [flags] [args]

commands:
  serve                       run the gateway
  demo                        create a demo key and a sim exchange key, print a ready curl command, serve
  keys create [--label L] [--legacy-signing] [--allow-ip CIDR,...]   create a client key pair (prints the secret once)
  keys set-allow-ip --api-key K --allow-ip CIDR,...   change a key's IP allowlist ("" removes it)
  keys list                   list client keys
  keys revoke --api-key K     revoke a client key
  exchange-keys add --api-key K --name N --exchange %s [--key EK --secret-stdin] [--permissions read,trade,withdraw]
  exchange-keys list --api-key K
  exchange-keys remove --api-key K --name N
  exchange-keys allow-address --api-key K --name N --asset A --network NW --address X [--tag T] [--hold 24h]
  exchange-keys deny-address --api-key K --name N --asset A --network NW --address X [--tag T]
  exchange-keys list-addresses --api-key K --name N
  risk set --api-key K [--max-order-notional USD] [--max-open-orders N] [--price-band PCT] [--daily-notional USD] [--daily-withdrawal USD] [--symbols BASE/QUOTE,...] [--clear NAME,...]
  risk show [--api-key K]     limits, today's usage and halt of each key, one JSON object a line
  risk halt (--api-key K | --all) [--cancel-open] [--reason TEXT]   the kill switch: refuse new orders and withdrawals
  risk resume (--api-key K | --all)   end a halt
  audit [--api-key K] [--since RFC3339] [--limit N]   the audit trail, newest first
  console-login [--console-addr A | --console-url U]   print a one-time login link for the web console (10 minutes)
  doctor                      check the store, Redis, each exchange's reachability and clock, each exchange key
  call METHOD PATH [name=value ...]   sign and send one request
  stream orders|book|klines [asset1=.. asset2=.. depth=.. interval=..]   print a channel of GET /v1/stream, one JSON message a line

Run 'exgate <command> -h' for the flags of a command.
`

// run is the whole program, with its environment injected for tests. A
// request for help (-h, --help) on any command succeeds.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	err := dispatch(ctx, args, getenv, stdin, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

func dispatch(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintf(stderr, usageFormat, gateway.ExchangeList("|"))
		return fmt.Errorf("no command given")
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve":
		return runServe(ctx, rest, getenv, stdout, stderr, false)
	case "demo":
		return runServe(ctx, rest, getenv, stdout, stderr, true)
	case "keys":
		return runKeys(ctx, rest, getenv, stdout, stderr)
	case "exchange-keys":
		return runExchangeKeys(ctx, rest, getenv, stdin, stdout, stderr)
	case "audit":
		return runAudit(ctx, rest, getenv, stdout, stderr)
	case "risk":
		return runRisk(ctx, rest, getenv, stdout, stderr)
	case "console-login":
		return runConsoleLogin(ctx, rest, getenv, stdout, stderr)
	case "doctor":
		return runDoctor(ctx, rest, getenv, stdout, stderr)
	case "call":
		return runCall(ctx, rest, getenv, stdout, stderr)
	case "stream":
		return runStream(ctx, rest, getenv, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprintf(stdout, usageFormat, gateway.ExchangeList("|"))
		return nil
	}
	fmt.Fprintf(stderr, usageFormat, gateway.ExchangeList("|"))
	return fmt.Errorf("unknown command %q", cmd)
}
