package api_test

import (
	"bytes"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/api"
	"github.com/exgate/exgate/api/openapitest"
	"github.com/exgate/exgate/httpapi"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"
)

func load(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapitest.Load()
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return doc
}

func TestLoad(t *testing.T) {
	doc := load(t)
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi = %q, want 3.1.0", doc.OpenAPI)
	}
	if !bytes.HasPrefix(api.Spec(), []byte("openapi: 3.1.0\n")) {
		t.Errorf("Spec does not start with the version line")
	}
}

func TestRoutes(t *testing.T) {
	doc := load(t)
	// The server's route table (httpapi/routes.go); its own test holds it
	// to this document's paths and methods, both ways.
	var routes []struct {
		method, path string
		signed       bool
	}
	for _, rt := range httpapi.Routes() {
		routes = append(routes, struct {
			method, path string
			signed       bool
		}{rt.Method, rt.Path, rt.Signed})
	}
	// A path may have several methods (GET and POST /v1/wallet/transfer).
	methods := map[string]int{}
	for _, rt := range routes {
		methods[rt.path]++
	}
	if got, want := doc.Paths.Len(), len(methods); got != want {
		t.Errorf("the document has %d paths, want %d", got, want)
	}
	for _, rt := range routes {
		t.Run(rt.method+" "+rt.path, func(t *testing.T) {
			item := doc.Paths.Value(rt.path)
			if item == nil {
				t.Fatalf("path missing")
			}
			if n, want := len(item.Operations()), methods[rt.path]; n != want {
				t.Errorf("path has %d operations, want %d", n, want)
			}
			op := item.GetOperation(rt.method)
			if op == nil {
				t.Fatalf("operation missing")
			}
			signed := op.Security == nil // inherits the document's requirement
			if signed != rt.signed {
				t.Errorf("signed = %v, want %v", signed, rt.signed)
			}
			if !rt.signed {
				return
			}
			names := map[string]bool{}
			for _, p := range op.Parameters {
				names[p.Value.Name] = true
			}
			if rt.method == http.MethodGet {
				for _, n := range []string{"signature", "timestamp", "recvWindow"} {
					if !names[n] {
						t.Errorf("query parameter %s missing", n)
					}
				}
			} else {
				body := op.RequestBody.Value.Content.Get("application/json").Schema.Value
				for _, n := range []string{"signature", "timestamp", "recvWindow"} {
					if body.Properties[n] == nil {
						t.Errorf("body member %s missing", n)
					}
				}
				// A cancel is idempotent by nature; the routes that
				// place something take an idempotency key.
				if places := !strings.Contains(rt.path, "cancel"); places && !names["Idempotency-Key"] {
					t.Errorf("header Idempotency-Key missing")
				}
			}
			for _, status := range []int{400, 401, 404, 405, 429, 500, 502, 503, 504} {
				if rt.path == "/v1/stream" && (status == 502 || status == 504) {
					continue // the handshake asks no exchange anything
				}
				if op.Responses.Status(status) == nil {
					t.Errorf("response %d missing", status)
				}
			}
			for _, status := range []int{429, 503} {
				if op.Responses.Status(status).Value.Headers["Retry-After"] == nil {
					t.Errorf("response %d lacks Retry-After", status)
				}
			}
		})
	}
}

// TestErrorCodes holds the document's codes to exgate.Codes and each
// status's problem schema to the codes of that status.
func TestErrorCodes(t *testing.T) {
	doc := load(t)
	var want []string
	byStatus := map[int][]string{}
	for _, c := range exgate.Codes() {
		want = append(want, string(c))
		byStatus[httpapi.Status(c)] = append(byStatus[httpapi.Status(c)], string(c))
	}
	slices.Sort(want)
	if diff := cmp.Diff(enumOf(doc.Components.Schemas["ErrorCode"].Value), want); diff != "" {
		t.Errorf("ErrorCode enum (-got +want):\n%s", diff)
	}
	// The 404 of an unknown path is described in prose only.
	byStatus[http.StatusNotFound] = append(byStatus[http.StatusNotFound], "NOT_FOUND")
	for status, codes := range byStatus {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			s := doc.Components.Schemas["Problem"+strconv.Itoa(status)]
			if s == nil {
				t.Fatalf("schema Problem%d missing", status)
			}
			got := enumOf(s.Value.AllOf[1].Value.Properties["code"].Value)
			slices.Sort(codes)
			codes = slices.Compact(codes)
			if diff := cmp.Diff(got, codes); diff != "" {
				t.Errorf("codes (-got +want):\n%s", diff)
			}
		})
	}
}

func TestEnums(t *testing.T) {
	doc := load(t)
	strs := func(xs ...any) []string {
		var out []string
		for _, x := range xs {
			out = append(out, reflect.ValueOf(x).String())
		}
		slices.Sort(out)
		return out
	}
	var intervals []any
	for _, iv := range exgate.Intervals {
		intervals = append(intervals, iv)
	}
	tests := []struct {
		schema string
		want   []string
	}{
		{"Interval", strs(intervals...)},
		// Exchange: against the gateway's adapter list
		// (cmd/internal/gateway TestOpenAPIExchangeEnum).
		{"Side", strs(exgate.SideBuy, exgate.SideSell)},
		{"OrderStatus", strs(exgate.OrderPending, exgate.OrderPartiallyFilled, exgate.OrderFilled,
			exgate.OrderCanceled, exgate.OrderRejected, exgate.OrderExpired, exgate.OrderTest)},
		{"TimeInForce", strs(exgate.GTC, exgate.IOC, exgate.FOK)},
		{"TransferStatus", strs(exgate.TransferPending, exgate.TransferCompleted, exgate.TransferFailed, exgate.TransferCanceled)},
	}
	for _, tc := range tests {
		t.Run(tc.schema, func(t *testing.T) {
			if diff := cmp.Diff(enumOf(doc.Components.Schemas[tc.schema].Value), tc.want); diff != "" {
				t.Errorf("enum (-got +want):\n%s", diff)
			}
		})
	}
}

// TestSchemasMatchGoTypes holds each response schema to the JSON form of
// its Go type: the same members, and required exactly when the field is
// always written (no omitempty).
func TestSchemasMatchGoTypes(t *testing.T) {
	doc := load(t)
	tests := []struct {
		schema string
		typ    any
	}{
		{"Order", exgate.Order{}},
		{"Withdrawal", exgate.Withdrawal{}},
		{"Deposit", exgate.Deposit{}},
		{"Kline", exgate.Kline{}},
		{"Level", exgate.Level{}},
		{"OrderBook", exgate.OrderBook{}},
		{"Balance", exgate.Balance{}},
		{"DepositAddress", exgate.DepositAddress{}},
		{"Fill", exgate.Fill{}},
		{"Symbol", exgate.SymbolInfo{}},
		{"Reason", exgate.Reason{}},
	}
	for _, tc := range tests {
		t.Run(tc.schema, func(t *testing.T) {
			s := doc.Components.Schemas[tc.schema].Value
			var members, required []string
			rt := reflect.TypeOf(tc.typ)
			for i := range rt.NumField() {
				name, opts, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
				members = append(members, name)
				if !strings.Contains(opts, "omitempty") {
					required = append(required, name)
				}
			}
			var props []string
			for name := range s.Properties {
				props = append(props, name)
			}
			slices.Sort(members)
			slices.Sort(required)
			slices.Sort(props)
			if diff := cmp.Diff(props, members); diff != "" {
				t.Errorf("properties (-schema +Go):\n%s", diff)
			}
			gotRequired := slices.Sorted(slices.Values(s.Required))
			if diff := cmp.Diff(gotRequired, required); diff != "" {
				t.Errorf("required (-schema +Go):\n%s", diff)
			}
		})
	}
}

func enumOf(s *openapi3.Schema) []string {
	var out []string
	for _, v := range s.Enum {
		out = append(out, v.(string))
	}
	slices.Sort(out)
	return out
}

// TestEveryOperationAnswers405 holds every operation, signed or not, to a
// declared 405 with its Allow header and the typed problem, so that a
// generated client has a type for it.
func TestEveryOperationAnswers405(t *testing.T) {
	doc := load(t)
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			r := op.Responses.Status(http.StatusMethodNotAllowed)
			if r == nil {
				t.Errorf("%s %s: no 405 response", method, path)
				continue
			}
			if h := r.Value.Headers["Allow"]; h == nil || !h.Value.Required {
				t.Errorf("%s %s: the 405 response lacks a required Allow header", method, path)
			}
			if ref := r.Value.Content.Get("application/problem+json").Schema.Ref; ref != "#/components/schemas/Problem405" {
				t.Errorf("%s %s: the 405 response's schema is %q, want Problem405", method, path, ref)
			}
		}
	}
}

// TestErrorResponsesAreTypedProblems holds every error response of every
// operation to a ProblemNNN schema: the typed Problem (code an ErrorCode,
// status an integer) narrowed to its status, whose const is that status.
func TestErrorResponsesAreTypedProblems(t *testing.T) {
	doc := load(t)
	problem := doc.Components.Schemas["Problem"].Value
	if !problem.Type.Is("object") || problem.Properties["code"].Ref != "#/components/schemas/ErrorCode" ||
		!problem.Properties["status"].Value.Type.Is("integer") {
		t.Fatalf("Problem does not type code as ErrorCode and status as integer")
	}
	for _, want := range []string{"type", "title", "status", "detail", "code"} {
		if !slices.Contains(problem.Required, want) {
			t.Errorf("Problem does not require %s", want)
		}
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for code, r := range op.Responses.Map() {
				status, err := strconv.Atoi(code)
				if err != nil || status < 400 {
					continue
				}
				s := r.Value.Content.Get("application/problem+json").Schema.Value
				// OrderTimeoutProblem and WithdrawalTimeoutProblem extend Problem504.
				for len(s.AllOf) > 0 && s.AllOf[0].Ref != "#/components/schemas/Problem" {
					s = s.AllOf[0].Value
				}
				if len(s.AllOf) != 2 {
					t.Errorf("%s %s %d: not an allOf of Problem and its narrowing", method, path, status)
					continue
				}
				narrow := s.AllOf[1].Value
				if c := narrow.Properties["status"].Value; !c.Type.Is("integer") || c.Const != float64(status) {
					t.Errorf("%s %s %d: status is %v const %v", method, path, status, c.Type, c.Const)
				}
				if c := narrow.Properties["code"].Value; !c.Type.Is("string") || len(c.Enum) == 0 {
					t.Errorf("%s %s %d: code is not a string enum", method, path, status)
				}
			}
		}
	}
}

// TestMoneyIsDouble: a generator turns `type: number` without a format into
// a 32-bit float (oapi-codegen: float32), which cannot hold 0.1001 or most
// deposit amounts. Every number in the document is `format: double`.
func TestMoneyIsDouble(t *testing.T) {
	doc := load(t)
	var walk func(where string, s *openapi3.SchemaRef, seen map[*openapi3.Schema]bool)
	walk = func(where string, ref *openapi3.SchemaRef, seen map[*openapi3.Schema]bool) {
		if ref == nil || ref.Value == nil || seen[ref.Value] {
			return
		}
		s := ref.Value
		seen[s] = true
		if s.Type.Includes("number") && s.Format != "double" {
			t.Errorf("%s: type number without format: double", where)
		}
		for name, p := range s.Properties {
			walk(where+"."+name, p, seen)
		}
		for i, sub := range slices.Concat(s.AllOf, s.AnyOf, s.OneOf) {
			walk(where+"/"+strconv.Itoa(i), sub, seen)
		}
		walk(where+"[]", s.Items, seen)
	}
	seen := map[*openapi3.Schema]bool{}
	for name, s := range doc.Components.Schemas {
		walk(name, s, seen)
	}
	for name, p := range doc.Components.Parameters {
		walk("parameter "+name, p.Value.Schema, seen)
	}
}

// TestOrderFieldsDocumented: the Order fields whose values surprise a
// reader say what they hold: closeAt while the order is open, and how
// averagePrice is rounded.
func TestOrderFieldsDocumented(t *testing.T) {
	order := load(t).Components.Schemas["Order"].Value
	for name, want := range map[string][]string{
		"closeAt":      {"equals `openAt`", "open"},
		"averagePrice": {"15 significant digits", "float64"},
	} {
		p := order.Properties[name]
		if p == nil {
			t.Errorf("Order.%s missing", name)
			continue
		}
		for _, w := range want {
			if !strings.Contains(p.Value.Description, w) {
				t.Errorf("Order.%s description %q does not say %q", name, p.Value.Description, w)
			}
		}
	}
}
