package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/exgate/exgate/client"
)

// runCall signs and sends one request and prints the answer's body. A
// non-2xx answer is printed too and makes the command fail.
func runCall(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("exgate call", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cf := addClientFlags(fs, getenv)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() < 2 {
		return errors.New("usage: exgate call METHOD PATH [name=value ...]")
	}
	method := strings.ToUpper(fs.Arg(0))
	if method != http.MethodGet && method != http.MethodPost {
		return fmt.Errorf("call: method must be GET or POST, not %q", fs.Arg(0))
	}
	path := fs.Arg(1)
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	c, err := cf.client("call")
	if err != nil {
		return err
	}
	var params []client.Param
	for _, a := range fs.Args()[2:] {
		name, value, ok := strings.Cut(a, "=")
		if !ok || name == "" {
			return fmt.Errorf("call: parameter %q is not name=value", a)
		}
		params = append(params, client.Param{Name: name, Value: value})
	}
	status, body, err := c.Do(ctx, method, path, params)
	if err != nil && len(body) == 0 {
		return fmt.Errorf("call: %w", err)
	}
	if _, werr := fmt.Fprintf(stdout, "%s\n", strings.TrimRight(string(body), "\n")); werr != nil {
		return werr
	}
	if status < 200 || status > 299 {
		return fmt.Errorf("call: %s %s answered %d", method, path, status)
	}
	return nil
}

// clientFlags are the connection flags of call and stream.
type clientFlags struct {
	baseURL, apiKey, secret, exchangeKey *string
	timestamps, legacy                   *bool
	timeout                              *time.Duration
}

func addClientFlags(fs *flag.FlagSet, getenv func(string) string) *clientFlags {
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	return &clientFlags{
		baseURL:     fs.String("url", env("EXGATE_URL", "http://127.0.0.1:8080"), "gateway base URL (env EXGATE_URL)"),
		apiKey:      fs.String("api-key", getenv("EXGATE_API_KEY"), "client API key (env EXGATE_API_KEY)"),
		secret:      fs.String("secret-key", getenv("EXGATE_SECRET_KEY"), "client secret key (env EXGATE_SECRET_KEY)"),
		exchangeKey: fs.String("exchange-key", getenv("EXGATE_EXCHANGE_KEY"), "exchange key name (env EXGATE_EXCHANGE_KEY)"),
		timestamps:  fs.Bool("timestamp", true, "kept for scripts that pass it: every request carries a signed timestamp and recvWindow unless --legacy-signing"),
		legacy:      fs.Bool("legacy-signing", false, "sign without a timestamp, even a POST, for a key created with --legacy-signing"),
		timeout:     fs.Duration("timeout", 30*time.Second, "request timeout (for stream: of the handshake)"),
	}
}

// client builds the SDK client the flags describe.
func (f *clientFlags) client(cmd string) (*client.Client, error) {
	if *f.apiKey == "" || *f.secret == "" {
		return nil, fmt.Errorf("%s: the API key and secret key are required (EXGATE_API_KEY, EXGATE_SECRET_KEY or --api-key, --secret-key)", cmd)
	}
	opts := []client.Option{client.WithHTTPClient(&http.Client{Timeout: *f.timeout})}
	opts = append(opts, client.WithTimestamps(time.Now, 5*time.Second))
	if *f.legacy {
		opts = append(opts, client.WithLegacySigning())
	}
	return client.New(*f.baseURL, *f.apiKey, *f.secret, *f.exchangeKey, opts...), nil
}
