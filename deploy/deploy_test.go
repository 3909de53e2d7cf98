// Package deploy_test checks the files an operator copies from deploy/: that
// nginx accepts the configuration, that it keeps signatures out of its logs
// and listens on loopback only, and that the settings file survives being
// sourced by a shell.
package deploy_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// directives returns the nginx directives named name, without comments.
func directives(conf, name string) []string {
	var out []string
	re := regexp.MustCompile(`^\s*` + regexp.QuoteMeta(name) + `\s+([^;]*);`)
	for line := range strings.SplitSeq(conf, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		if m := re.FindStringSubmatch(line); m != nil {
			out = append(out, strings.TrimSpace(m[1]))
		}
	}
	return out
}

func TestNginxConfKeepsSignaturesOutOfLogs(t *testing.T) {
	conf := readFile(t, "nginx.conf")

	// Error-log messages about a request carry its request line and
	// upstream URL, query included: only crit and worse may be logged.
	errorLogs := directives(conf, "error_log")
	if len(errorLogs) == 0 {
		t.Fatal("no error_log directive: nginx would log request lines at error level to its default log")
	}
	for _, d := range errorLogs {
		f := strings.Fields(d)
		if len(f) < 2 || (f[len(f)-1] != "crit" && f[len(f)-1] != "alert" && f[len(f)-1] != "emerg") {
			t.Errorf("error_log %s: level must be crit or higher, or request lines with signatures are logged", d)
		}
	}

	// The access log's format must not name the query.
	formats := regexp.MustCompile(`(?s)log_format\s+\S+\s+(.*?);`).FindAllStringSubmatch(conf, -1)
	if len(formats) == 0 {
		t.Fatal("no log_format: the default access log format has $request, query included")
	}
	for _, f := range formats {
		for _, v := range []string{"$request ", "$request'", "$request\"", "$request_uri", "$args", "$query_string", "$arg_"} {
			if strings.Contains(f[1], v) {
				t.Errorf("log_format contains %s, which carries the signed query", strings.Trim(v, " '\""))
			}
		}
	}
	for _, a := range directives(conf, "access_log") {
		if f := strings.Fields(a); a != "off" && len(f) < 2 {
			t.Errorf("access_log %s uses the default format, which logs the query", a)
		}
	}
}

func TestNginxConfListensOnLoopbackWithItsOwnPidAndSharedZone(t *testing.T) {
	conf := readFile(t, "nginx.conf")
	for _, l := range directives(conf, "listen") {
		addr := strings.Fields(l)[0]
		if !strings.HasPrefix(addr, "127.0.0.1:") && !strings.HasPrefix(addr, "[::1]:") {
			t.Errorf("listen %s: plaintext listener on a non-loopback address", l)
		}
	}
	if pids := directives(conf, "pid"); len(pids) != 1 || pids[0] == "/run/nginx.pid" {
		t.Errorf("pid %v: want one pid file of its own, not the distribution's /run/nginx.pid", pids)
	}
	upstream := regexp.MustCompile(`(?s)upstream\s+exgate\s*\{(.*?)\n    \}`).FindStringSubmatch(conf)
	if upstream == nil {
		t.Fatal("no upstream exgate block")
	}
	if len(directives(upstream[1], "zone")) != 1 {
		t.Error("the upstream block has no shared zone: each worker would count max_fails on its own")
	}
}

// TestNginxConfPassesNginxT runs `nginx -t` on the shipped configuration,
// with its log and pid paths moved into a temporary directory.
func TestNginxConfPassesNginxT(t *testing.T) {
	nginx, err := exec.LookPath("nginx")
	if err != nil {
		for _, p := range []string{"/usr/sbin/nginx", "/usr/local/sbin/nginx"} {
			if _, err := os.Stat(p); err == nil {
				nginx = p
			}
		}
	}
	if nginx == "" {
		t.Skip("nginx is not installed; install it (apt-get install nginx-light) to check deploy/nginx.conf with nginx -t")
	}
	dir := t.TempDir()
	conf := readFile(t, "nginx.conf")
	conf = strings.ReplaceAll(conf, "/var/log/nginx/", dir+"/")
	conf = strings.ReplaceAll(conf, "/run/", dir+"/")
	path := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(nginx, "-t", "-q", "-p", dir, "-e", filepath.Join(dir, "startup.log"), "-c", path).CombinedOutput()
	if err != nil {
		t.Fatalf("nginx -t: %v\n%s", err, out)
	}
}

// TestEnvExampleSurvivesShell sources the settings file the way
// docs/deploy.md does and checks that a URL with & comes through whole.
func TestEnvExampleSurvivesShell(t *testing.T) {
	env := readFile(t, "exgate.env.example")
	for line := range strings.SplitSeq(env, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		_, value, ok := strings.Cut(line, "=")
		if !ok || len(value) < 2 || value[0] != '\'' || value[len(value)-1] != '\'' {
			t.Errorf("%q: every value must be in single quotes", line)
		}
	}
	want := regexp.MustCompile(`(?m)^EXGATE_DATABASE_URL='([^']*)'`).FindStringSubmatch(env)
	if want == nil || !strings.Contains(want[1], "&") {
		t.Fatalf("the example database URL should show a parameter after &: %v", want)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to source the file with")
	}
	out, err := exec.Command(bash, "-c", `set -a; . ./exgate.env.example; set +a; printf '%s' "$EXGATE_DATABASE_URL"`).Output()
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != want[1] {
		t.Errorf("sourced EXGATE_DATABASE_URL = %q, want %q", out, want[1])
	}
}
