package httpapi

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/exgate/exgate/api/openapitest"
)

// routeTableProblems compares a route table with the OpenAPI document,
// both ways, and checks each row's columns: every route names an access,
// an audit rule that records exactly the routes that change state, and a
// limit class; a POST route has a budget of its own kind.
func routeTableProblems(rows []route, doc *openapi3.T) []string {
	var problems []string
	inTable := map[string]bool{}
	for _, rt := range rows {
		op := rt.method + " " + rt.path
		if inTable[op] {
			problems = append(problems, op+": twice in the table")
		}
		inTable[op] = true
		item := doc.Paths.Value(rt.path)
		if item == nil || item.GetOperation(rt.method) == nil {
			problems = append(problems, op+": in the route table, not in api/openapi.yaml")
		} else if signed := item.GetOperation(rt.method).Security == nil; signed != (rt.access != public) {
			problems = append(problems, fmt.Sprintf("%s: signed in api/openapi.yaml %v, in the table %v", op, signed, rt.access != public))
		}
		if rt.access == 0 {
			problems = append(problems, op+": no access")
		}
		if rt.handle == nil {
			problems = append(problems, op+": no handler")
		}
		if changes := rt.method != "GET"; bool(rt.audit) != changes {
			problems = append(problems, fmt.Sprintf("%s: audited %v; every route that changes state, and only those, is audited", op, bool(rt.audit)))
		}
		switch {
		case rt.limit == 0:
			problems = append(problems, op+": no limit class")
		case rt.access == public && rt.limit != LimitNone:
			problems = append(problems, op+": public, but limit class "+rt.limit.String())
		case rt.access != public && rt.limit == LimitNone:
			problems = append(problems, op+": signed, but limit class none")
		case rt.method == "POST" && (rt.limit == LimitNone || rt.limit == LimitClient):
			problems = append(problems, op+": a POST route needs a budget of its own kind, not "+rt.limit.String())
		}
	}
	for p, item := range doc.Paths.Map() {
		for m := range item.Operations() {
			if op := m + " " + p; !inTable[op] {
				problems = append(problems, op+": in api/openapi.yaml, not in the route table")
			}
		}
	}
	slices.Sort(problems)
	return problems
}

func loadDoc(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapitest.Load()
	if err != nil {
		t.Fatalf("openapitest.Load: %v", err)
	}
	return doc
}

// TestRouteTable holds the server's one route table to api/openapi.yaml,
// every path and method both ways, and checks every row's columns.
func TestRouteTable(t *testing.T) {
	for _, p := range routeTableProblems(routeTable(), loadDoc(t)) {
		t.Error(p)
	}
}

// TestRouteTableCatchesMutants shows the check fails on a table that
// lost a route, gained one the document lacks, or has a POST route
// without a budget of its own.
func TestRouteTableCatchesMutants(t *testing.T) {
	doc := loadDoc(t)
	h := (*Server).handleHealth
	tests := []struct {
		name   string
		mutate func([]route) []route
		want   string
	}{
		{"route missing from the table", func(rs []route) []route { return rs[1:] }, "not in the route table"},
		{"route missing from the document", func(rs []route) []route {
			return append(rs, route{"POST", "/v1/wallet/teleport", withdrawKey, notLegacy, audited, LimitWithdrawals, h})
		}, "not in api/openapi.yaml"},
		{"POST without a limit class", func(rs []route) []route {
			for i := range rs {
				if rs[i].method == "POST" {
					rs[i].limit = 0
					break
				}
			}
			return rs
		}, "no limit class"},
		{"POST with only the client budget", func(rs []route) []route {
			for i := range rs {
				if rs[i].method == "POST" {
					rs[i].limit = LimitClient
					break
				}
			}
			return rs
		}, "budget of its own kind"},
		{"POST not audited", func(rs []route) []route {
			for i := range rs {
				if rs[i].method == "POST" {
					rs[i].audit = notAudited
					break
				}
			}
			return rs
		}, "audited false"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := routeTableProblems(tc.mutate(routeTable()), doc)
			if !slices.ContainsFunc(got, func(p string) bool { return strings.Contains(p, tc.want) }) {
				t.Errorf("problems %q; want one containing %q", got, tc.want)
			}
		})
	}
}
