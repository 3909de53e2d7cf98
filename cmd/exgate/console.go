package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/cmd/internal/gateway"
	"github.com/exgate/exgate/console"
)

// demoConsoleAddr is where `exgate demo` serves the console unless
// --console-addr or EXGATE_CONSOLE_ADDR says otherwise.
const demoConsoleAddr = gateway.DemoConsoleAddr

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

// runConsoleLogin is `exgate console-login`: it prints a one-time login
// link for the console (docs/contract.md 2.7), valid for 10 minutes, made in
// the store so that any instance sharing it accepts the link once.
func runConsoleLogin(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, cfg := gateway.NewFlagSet("console-login", getenv, stderr, false)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("console-login: unexpected argument %q", fs.Arg(0))
	}
	base, err := cfg.ConsoleBaseURL()
	if err != nil {
		return fmt.Errorf("console-login: %w", err)
	}
	if base == "" {
		return fmt.Errorf("console-login: --console-addr or --console-url (EXGATE_CONSOLE_ADDR, EXGATE_CONSOLE_URL) is needed to write the link")
	}
	st, err := gateway.OpenStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	link, err := console.NewLoginURL(ctx, st, base, time.Now())
	if err != nil {
		return fmt.Errorf("console-login: %w", err)
	}
	if err := auditAdmin(ctx, st, "console-login", "", "", map[string]string{"console": base}); err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, link)
	return err
}

// printConsoleLogin prints the demo's console login link, for the address
// the console listens on.
func printConsoleLogin(ctx context.Context, st exgate.Store, cfg *gateway.Config, addr net.Addr, w io.Writer) error {
	base := cfg.ConsoleURL
	if base == "" {
		c := *cfg
		c.ConsoleAddr = addr.String()
		var err error
		if base, err = c.ConsoleBaseURL(); err != nil {
			return err
		}
	}
	link, err := console.NewLoginURL(ctx, st, base, time.Now())
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	_, err = fmt.Fprintf(w, "The web console is at %s. Log in with this one-time link (valid 10 minutes; `exgate console-login --console-addr %s` makes another):\n\n  %s\n\n",
		base, addr.String(), link)
	return err
}
