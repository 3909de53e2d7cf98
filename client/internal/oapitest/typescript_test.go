package oapitest_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// tsDir holds the TypeScript client: package.json and package-lock.json
// (openapi-fetch, openapi-typescript, typescript), the generated types
// schema.d.ts, the signing middleware sign.ts and the checks check.ts.
const tsDir = "../../../api/tsclient"

const installHint = "install Node.js 20 or later and run `npm ci` in api/tsclient (.ci/run does)"

// node returns the node command, or skips the test saying how to get what
// it needs.
func node(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("node is not installed: %s", installHint)
	}
	for _, pkg := range []string{"openapi-fetch", "openapi-typescript", "typescript"} {
		if _, err := os.Stat(filepath.Join(tsDir, "node_modules", pkg, "package.json")); err != nil {
			t.Skipf("the npm package %s is not installed in api/tsclient: %s", pkg, installHint)
		}
	}
	return bin
}

func runNode(t *testing.T, nodeBin string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), nodeBin, args...)
	cmd.Dir = tsDir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

// TestTypeScriptTypesAreCurrent regenerates api/tsclient/schema.d.ts with
// openapi-typescript and compares it with the committed file, so that the
// TypeScript client cannot drift from api/openapi.yaml.
func TestTypeScriptTypesAreCurrent(t *testing.T) {
	nodeBin := node(t)
	out := filepath.Join(t.TempDir(), "schema.d.ts")
	runNode(t, nodeBin, nil, "node_modules/openapi-typescript/bin/cli.js", "../openapi.yaml", "-o", out)
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(tsDir, "schema.d.ts"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("api/tsclient/schema.d.ts is not what openapi-typescript makes of api/openapi.yaml: run `npm run gen` in api/tsclient")
	}
}

// TestTypeScriptClient type-checks and compiles the openapi-fetch client
// and its signing middleware with tsc, then runs its checks (check.ts)
// against a gateway on sim: a limit order of 0.1001 BTC placed, read and
// canceled, a quantity sent as a number, typed problems, and every
// deposit amount read back exactly.
func TestTypeScriptClient(t *testing.T) {
	nodeBin := node(t)
	// tsc writes dist/ (git-ignored) next to node_modules, where the
	// compiled imports resolve.
	runNode(t, nodeBin, nil, "node_modules/typescript/bin/tsc", "-p", ".")

	g := startGateway(t)
	out := runNode(t, nodeBin, []string{
		"EXGATE_URL=" + g.URL, "EXGATE_API_KEY=" + g.APIKey, "EXGATE_SECRET_KEY=" + g.Secret, "EXGATE_EXCHANGE_KEY=" + g.ExchangeKey,
	}, "dist/check.js")
	t.Log(out)
	if !strings.Contains(out, "all checks passed") {
		t.Errorf("check.js did not finish:\n%s", out)
	}
}
