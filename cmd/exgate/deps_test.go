package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// testOnly reports whether a package is test code, which the server
// binary must not link: the package testing, exgate's fake exchanges, load
// tool and test suites (named *fake and *test, such as the generated client
// in client/internal/oapitest), kin-openapi, with which only tests parse
// the OpenAPI document, and oapi-codegen's runtime, which only the
// generated client uses.
func testOnly(importPath string) bool {
	if importPath == "testing" || strings.HasPrefix(importPath, "github.com/getkin/kin-openapi/") ||
		strings.HasPrefix(importPath, "github.com/oapi-codegen/") {
		return true
	}
	own, ok := strings.CutPrefix(importPath, "github.com/exgate/exgate/")
	if !ok {
		return false
	}
	for elem := range strings.SplitSeq(own, "/") {
		// binancefake, krakenfake, ...; loadtest, storetest, openapitest, ...
		if strings.HasSuffix(elem, "fake") || strings.HasSuffix(elem, "test") {
			return true
		}
	}
	return false
}

// deps lists the packages a build of pkg links, with the go command of
// this test (go test puts it first on PATH).
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	out, err := exec.CommandContext(t.Context(), goCmd, "list", "-deps", "-f", "{{.ImportPath}}", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

// TestServerLinksNoTestCode: the load tool and the fakes it runs live in
// cmd/exgate-bench, and the OpenAPI document is served as bytes, so the
// server binary carries none of them.
func TestServerLinksNoTestCode(t *testing.T) {
	var found []string
	for _, p := range deps(t, ".") {
		if testOnly(p) {
			found = append(found, p)
		}
	}
	if len(found) > 0 {
		t.Errorf("go list -deps ./cmd/exgate names test code: %v", found)
	}

	// The check itself: the load tool's command does link these.
	bench := deps(t, "../exgate-bench")
	for _, want := range []string{
		"github.com/exgate/exgate/exchange/binance/binancefake",
		"github.com/exgate/exgate/internal/loadtest",
	} {
		if !slices.Contains(bench, want) || !testOnly(want) {
			t.Errorf("go list -deps ./cmd/exgate-bench: %s not found as test code", want)
		}
	}
	if !testOnly("github.com/getkin/kin-openapi/openapi3") {
		t.Error("kin-openapi is not taken for test code")
	}
}
