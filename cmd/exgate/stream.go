package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/exgate/exgate/client"
)

// runStream subscribes to one channel of GET /v1/stream and prints every
// message the gateway sends, one JSON object a line, until interrupted or
// the gateway ends the stream. An error answer to the subscription ends
// the command with that error.
func runStream(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("exgate stream", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cf := addClientFlags(fs, getenv)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() < 1 {
		return errors.New("usage: exgate stream orders|book|klines [asset1=BTC asset2=USDT depth=20 interval=1m]")
	}
	sub := client.Subscription{Channel: fs.Arg(0)}
	for _, a := range fs.Args()[1:] {
		name, value, ok := strings.Cut(a, "=")
		switch {
		case !ok:
			return fmt.Errorf("stream: parameter %q is not name=value", a)
		case name == "asset1":
			sub.Asset1 = value
		case name == "asset2":
			sub.Asset2 = value
		case name == "interval":
			sub.Interval = value
		case name == "depth":
			n, err := strconv.Atoi(value)
			if err != nil {
				return fmt.Errorf("stream: depth must be an integer, not %q", value)
			}
			sub.Depth = n
		default:
			return fmt.Errorf("stream: unknown parameter %q (asset1, asset2, depth, interval)", name)
		}
	}
	c, err := cf.client("stream")
	if err != nil {
		return err
	}
	dctx, cancel := context.WithTimeout(ctx, *cf.timeout)
	s, err := c.Dial(dctx)
	cancel()
	if err != nil {
		return fmt.Errorf("stream: %w", err)
	}
	defer s.Close()
	if err := s.Subscribe(ctx, sub); err != nil {
		return err
	}
	for {
		m, err := s.Read(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil && m.Raw == nil {
			return err
		}
		if _, werr := fmt.Fprintf(stdout, "%s\n", m.Raw); werr != nil {
			return werr
		}
		if m.Op == "error" {
			return fmt.Errorf("stream: %s: %s", m.Code, m.Detail)
		}
	}
}
