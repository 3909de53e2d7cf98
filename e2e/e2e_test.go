// Package e2e runs exgate the way an operator does: the built binary,
// several `exgate serve` processes on loopback ports sharing one PostgreSQL
// schema and one Redis database, keys managed with the admin commands, and
// requests signed with the Go SDK (package client).
//
// The tests need a PostgreSQL server (EXGATE_TEST_POSTGRES_URL) and a Redis
// server (EXGATE_TEST_REDIS_URL); without them every test is skipped with a
// message saying how to run it. Each test gets a fresh PostgreSQL schema and
// uses Redis database 15, which it empties at its start: do not point
// EXGATE_TEST_REDIS_URL at a server whose database 15 holds anything you
// want to keep. EXGATE_E2E_LOGS=1 prints the end of every instance's log,
// which is otherwise printed only for a failed test.
package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	goredis "github.com/redis/go-redis/v9"

	"github.com/exgate/exgate/client"
	"github.com/exgate/exgate/internal/skipnotice"
)

const (
	postgresEnv = "EXGATE_TEST_POSTGRES_URL"
	redisEnv    = "EXGATE_TEST_REDIS_URL"

	// logsEnv, when set, prints every instance's log at the end of its
	// test, not only when the test failed.
	logsEnv = "EXGATE_E2E_LOGS"

	// redisDB is the Redis database the tests own and empty.
	redisDB = 15

	// readyTimeout bounds how long an instance may take to answer
	// /readyz (process start, PostgreSQL migrations, Redis).
	readyTimeout = 20 * time.Second
)

// exgateBin is the binary TestMain builds; empty when the services the
// tests need are not configured (the tests then skip).
var exgateBin string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	if os.Getenv(postgresEnv) == "" || os.Getenv(redisEnv) == "" {
		skipnotice.Print("e2e", "the end-to-end suite needs PostgreSQL and Redis: "+postgresEnv+"=postgres://postgres@127.0.0.1:5432/test?sslmode=disable "+redisEnv+"=redis://127.0.0.1:6379/0 go test ./e2e/")
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "exgate-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin, err := buildExgate(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	exgateBin = bin
	return m.Run()
}

// buildExgate builds ./cmd/exgate of this module into dir.
func buildExgate(dir string) (string, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("the go command is needed to build exgate: %w", err)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "exgate")
	cmd := exec.Command(goTool, "build", "-o", bin, "./cmd/exgate")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/exgate: %w\n%s", err, out)
	}
	return bin, nil
}

// deployment is one shared store: a fresh PostgreSQL schema, an emptied
// Redis database and a master key, as every instance and admin command of
// a test sees them.
type deployment struct {
	t           *testing.T
	databaseURL string
	redisURL    string
	masterKey   string
	// extra are more EXGATE_* variables for the instances (exchange URLs).
	extra []string
	// stamps is the clock of every client's timestamps (instance.client).
	stamps *stampClock
}

// stampClock is an increasing clock in milliseconds: the clients of one
// key on several instances draw their timestamps from it, so that no two
// requests of a test share a signature (a signature is accepted once,
// docs/contract.md 2.1; one SDK client keeps its own timestamps
// increasing, not those of another).
type stampClock struct{ last atomic.Int64 }

func (c *stampClock) now() time.Time {
	for {
		l := c.last.Load()
		if ts := max(time.Now().UnixMilli(), l+1); c.last.CompareAndSwap(l, ts) {
			return time.UnixMilli(ts)
		}
	}
}

// newDeployment prepares the shared store of a test, or skips the test
// when PostgreSQL or Redis is not configured.
func newDeployment(t *testing.T, extraEnv ...string) *deployment {
	t.Helper()
	pgURL, rURL := os.Getenv(postgresEnv), os.Getenv(redisEnv)
	if pgURL == "" || rURL == "" {
		t.Skipf("end-to-end tests need PostgreSQL and Redis: set %s and %s, for example\n"+
			"  %s='postgres://postgres@127.0.0.1:5432/test?sslmode=disable' %s='redis://127.0.0.1:6379/0' go test ./e2e/\n"+
			"(bash .ci/run sets both); the tests use a fresh schema and empty Redis database %d",
			postgresEnv, redisEnv, postgresEnv, redisEnv, redisDB)
	}
	if exgateBin == "" {
		t.Fatal("exgate binary not built (TestMain)")
	}
	var key [32]byte
	_, _ = rand.Read(key[:])
	return &deployment{
		t:           t,
		databaseURL: freshSchema(t, pgURL),
		redisURL:    emptyRedisDB(t, rURL),
		masterKey:   base64.StdEncoding.EncodeToString(key[:]),
		extra:       extraEnv,
		stamps:      &stampClock{},
	}
}

// freshSchema creates a schema dropped when the test ends and returns base
// with search_path set to it (pgx passes unknown URL parameters to the
// server as run-time parameters).
func freshSchema(t *testing.T, base string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	schema := "exgate_e2e_" + strings.ToLower(rand.Text()[:16])
	ident := pgx.Identifier{schema}.Sanitize()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect to %s: %v", postgresEnv, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+ident); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+ident+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", postgresEnv, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// emptyRedisDB returns base pointed at redisDB, after emptying it.
func emptyRedisDB(t *testing.T, base string) string {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", redisEnv, err)
	}
	u.Path = fmt.Sprintf("/%d", redisDB)
	opts, err := goredis.ParseURL(u.String())
	if err != nil {
		t.Fatalf("%s: %v", redisEnv, err)
	}
	rc := goredis.NewClient(opts)
	defer rc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rc.FlushDB(ctx).Err(); err != nil {
		t.Fatalf("empty Redis database %d: %v", redisDB, err)
	}
	return u.String()
}

// env is the environment of an instance: this process's, less every
// EXGATE_ variable, plus the deployment's settings and extra.
func (d *deployment) env(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "EXGATE_") {
			env = append(env, kv)
		}
	}
	env = append(env,
		"EXGATE_DATABASE_URL="+d.databaseURL,
		"EXGATE_REDIS_URL="+d.redisURL,
		"EXGATE_MASTER_KEY="+d.masterKey,
		// Keep the tests off the real exchanges whatever happens.
		"EXGATE_BINANCE_URL=http://127.0.0.1:1",
		"EXGATE_KRAKEN_URL=http://127.0.0.1:1",
		"EXGATE_GATEIO_URL=http://127.0.0.1:1",
		"EXGATE_OKX_URL=http://127.0.0.1:1",
		"EXGATE_BYBIT_URL=http://127.0.0.1:1",
	)
	env = append(env, d.extra...)
	return append(env, extra...)
}

// admin runs `exgate args... --database-url URL` and returns its stdout;
// the test fails when the command does.
func (d *deployment) admin(args ...string) []byte {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exgateBin, append(args, "--database-url", d.databaseURL)...)
	var env []string
	for _, kv := range d.env() {
		if !strings.HasPrefix(kv, "EXGATE_DATABASE_URL=") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		d.t.Fatalf("exgate %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return stdout.Bytes()
}

// clientKey is a client key pair as `exgate keys create` prints it.
type clientKey struct {
	APIKey    string `json:"apiKey"`
	SecretKey string `json:"secretKey"`
	Label     string `json:"label"`
}

// createKey creates a client key with the CLI.
func (d *deployment) createKey(label string) clientKey {
	d.t.Helper()
	out := d.admin("keys", "create", "--label", label)
	var k clientKey
	if err := json.Unmarshal(out, &k); err != nil || k.APIKey == "" || k.SecretKey == "" {
		d.t.Fatalf("keys create printed %q: %v", out, err)
	}
	return k
}

// addExchangeKey registers an exchange credential with the CLI; args are
// more flags (--key, --secret, --permissions).
func (d *deployment) addExchangeKey(apiKey, name, exchange string, args ...string) {
	d.t.Helper()
	d.admin(append([]string{"exchange-keys", "add", "--api-key", apiKey, "--name", name, "--exchange", exchange}, args...)...)
}

// instance is one running `exgate serve` process.
type instance struct {
	// URL is its base URL, http://127.0.0.1:port.
	URL  string
	name string
	cmd  *exec.Cmd
	log  *syncBuffer
	// exited is closed when the process has exited; waitErr is then
	// Wait's result.
	exited  chan struct{}
	waitErr error
	// stamps is the deployment's timestamp clock.
	stamps *stampClock
}

// start starts one instance with the serve flags args and waits until it
// is ready.
func (d *deployment) start(name string, args ...string) *instance {
	d.t.Helper()
	var lastErr error
	// A free port can be taken between asking and listening: try again.
	for range 3 {
		inst, err := d.launch(name, args)
		if err == nil {
			return inst
		}
		lastErr = err
		if !strings.Contains(err.Error(), "listen on") {
			break
		}
	}
	d.t.Fatalf("start %s: %v", name, lastErr)
	return nil
}

// startN starts n instances at once, named exgate-0 to exgate-(n-1), and
// waits until all are ready.
func (d *deployment) startN(n int, args ...string) []*instance {
	d.t.Helper()
	out := make([]*instance, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			for range 3 {
				out[i], errs[i] = d.launch(fmt.Sprintf("exgate-%d", i), args)
				if errs[i] == nil || !strings.Contains(errs[i].Error(), "listen on") {
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		d.t.Fatalf("start %d instances: %v", n, err)
	}
	return out
}

// launch starts one instance on a free loopback port and waits for it to
// answer /readyz with 200. The process is killed when the test ends; its
// log is printed when the test failed.
func (d *deployment) launch(name string, args []string) (*instance, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exgateBin, append([]string{"serve"}, args...)...)
	cmd.Env = d.env("EXGATE_ADDR="+addr, "EXGATE_LOG_FORMAT=text")
	inst := &instance{URL: "http://" + addr, name: name, cmd: cmd, log: &syncBuffer{}, exited: make(chan struct{}), stamps: d.stamps}
	cmd.Stdout, cmd.Stderr = inst.log, inst.log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	go func() {
		inst.waitErr = cmd.Wait()
		close(inst.exited)
	}()
	d.t.Cleanup(func() {
		inst.signal(syscall.SIGKILL)
		<-inst.exited
		if d.t.Failed() || os.Getenv(logsEnv) != "" {
			d.t.Logf("log of %s (%s), last lines:\n%s", inst.name, inst.URL, inst.log.tail(4096))
		}
	})
	if err := inst.waitReady(readyTimeout); err != nil {
		inst.signal(syscall.SIGKILL)
		<-inst.exited
		return nil, fmt.Errorf("%s: %w\n%s", name, err, inst.log.tail(2048))
	}
	return inst, nil
}

// freeAddr returns a loopback address with a port free right now.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		return "", err
	}
	return addr, nil
}

// waitReady polls GET /readyz until it answers 200, the process exits or
// timeout passes.
func (i *instance) waitReady(timeout time.Duration) error {
	hc := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		status, err := i.ready(hc)
		if err == nil && status == http.StatusOK {
			return nil
		}
		select {
		case <-i.exited:
			if strings.Contains(i.log.String(), "listen on") {
				return fmt.Errorf("listen on %s failed: %v", i.URL, i.waitErr)
			}
			return fmt.Errorf("exited before it was ready: %v", i.waitErr)
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %s (last /readyz: %d, %v)", timeout, status, err)
		}
	}
}

// ready returns the status of GET /readyz.
func (i *instance) ready(hc *http.Client) (int, error) {
	resp, err := hc.Get(i.URL + "/readyz")
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func (i *instance) signal(sig os.Signal) {
	select {
	case <-i.exited:
	default:
		_ = i.cmd.Process.Signal(sig)
	}
}

// kill ends the instance with SIGKILL, as a crash would, and waits for it.
func (i *instance) kill(t *testing.T) {
	t.Helper()
	i.signal(syscall.SIGKILL)
	select {
	case <-i.exited:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not die after SIGKILL", i.name)
	}
}

// stop asks the instance to shut down with SIGTERM and checks that it
// exits cleanly.
func (i *instance) stop(t *testing.T) {
	t.Helper()
	i.signal(syscall.SIGTERM)
	select {
	case <-i.exited:
	case <-time.After(25 * time.Second):
		t.Fatalf("%s did not stop within 25 s of SIGTERM", i.name)
	}
	if i.waitErr != nil {
		t.Errorf("%s exited after SIGTERM with %v; want status 0", i.name, i.waitErr)
	}
}

// client returns an SDK client for this instance, signing with k and
// naming exchangeKey.
func (i *instance) client(k clientKey, exchangeKey string, opts ...client.Option) *client.Client {
	hc := &http.Client{
		// Above the gateway's 15 s order deadline.
		Timeout:   30 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second},
	}
	return client.New(i.URL, k.APIKey, k.SecretKey, exchangeKey,
		append([]client.Option{client.WithHTTPClient(hc), client.WithTimestamps(i.stamps.now, 0)}, opts...)...)
}

// problemCode is the code of a gateway problem answer, "" for success and
// "transport" when no answer arrived.
func problemCode(err error) string {
	if err == nil {
		return ""
	}
	if ce, ok := errors.AsType[*client.Error](err); ok {
		return ce.Code
	}
	return "transport"
}

// syncBuffer is a bytes.Buffer safe for concurrent writes and reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// tail returns the last n bytes written, from a line start.
func (b *syncBuffer) tail(n int) string {
	s := b.String()
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}
