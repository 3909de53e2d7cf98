// Package openapitest checks recorded HTTP answers against exgate's OpenAPI
// document, so that tests of the server (and of anything that fakes it)
// notice when an answer drifts from the published contract.
package openapitest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/exgate/exgate/api"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// Load parses and validates the OpenAPI document.
func Load() (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromData(api.Spec())
	if err != nil {
		return nil, fmt.Errorf("openapitest: load openapi.yaml: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("openapitest: validate openapi.yaml: %w", err)
	}
	return doc, nil
}

// Validator matches requests to the document's operations and checks
// answers against them. It is safe for concurrent use.
type Validator struct {
	doc    *openapi3.T
	router routers.Router
}

// New loads the document and builds a Validator; it fails tb if the
// document does not load. Loading takes tens of milliseconds: tests that
// check many answers can share one Validator (it is safe for concurrent
// use), for example through sync.OnceValues(NewValidator).
func New(tb testing.TB) *Validator {
	tb.Helper()
	v, err := NewValidator()
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

// NewValidator loads the document and builds a Validator. The document's
// servers are ignored: a request to any scheme and host matches by path
// alone (/v1/..., /healthz, /readyz).
func NewValidator() (*Validator, error) {
	// The router validates the document, so it is parsed here rather than
	// through Load, which would validate it a second time.
	doc, err := openapi3.NewLoader().LoadFromData(api.Spec())
	if err != nil {
		return nil, fmt.Errorf("openapitest: load the document: %w", err)
	}
	doc.Servers = nil // match on the path only, whatever the host
	router, err := legacy.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("openapitest: build router: %w", err)
	}
	return &Validator{doc: doc, router: router}, nil
}

// Check fails tb unless resp (with its body already read into body) is an
// answer the document allows for req: a documented status, its content
// type, and a body matching the schema (and required headers such as
// Retry-After on 429 and 503). Requests to paths or methods the document
// does not list are checked against the fallback answers every path may
// give (404 NOT_FOUND, 405 METHOD_NOT_ALLOWED with Allow).
func (v *Validator) Check(tb testing.TB, req *http.Request, resp *http.Response, body []byte) {
	tb.Helper()
	if err := v.Validate(req, resp.StatusCode, resp.Header, body); err != nil {
		tb.Errorf("%s %s -> %d: %v\nbody: %s", req.Method, req.URL.Path, resp.StatusCode, err, truncate(body))
	}
}

// Validate reports whether an answer with status, header and body is one
// the document allows for req; Check is the testing form.
func (v *Validator) Validate(req *http.Request, status int, header http.Header, body []byte) error {
	r := routable(req)
	route, pathParams, err := v.router.FindRoute(r)
	if err != nil {
		if e, ok := errors.AsType[*routers.RouteError](err); ok {
			return v.validateFallback(e, status, header, body)
		}
		return fmt.Errorf("openapitest: find route: %w", err)
	}
	opts := &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}
	if req.Method == http.MethodHead {
		opts.ExcludeResponseBody = true // a HEAD answer has a GET's status and headers, no body
	}
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request:    r,
			PathParams: pathParams,
			Route:      route,
		},
		Status:  status,
		Header:  header,
		Options: opts,
	}
	input.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), input); err != nil {
		return fmt.Errorf("openapitest: %w", err)
	}
	return nil
}

// routable returns a copy of req whose URL holds only the path and query,
// so that client-side requests (absolute URLs) and server-side ones match
// alike. HEAD is routed as GET, since the document lists GET only.
func routable(req *http.Request) *http.Request {
	r := req.Clone(context.Background())
	r.URL = &url.URL{Path: req.URL.Path, RawPath: req.URL.RawPath, RawQuery: req.URL.RawQuery}
	r.Host = ""
	if r.Method == http.MethodHead {
		r.Method = http.MethodGet
	}
	return r
}

// validateFallback checks the answers the document describes in prose:
// 404 NOT_FOUND for an unknown path and 405 METHOD_NOT_ALLOWED with an Allow
// header for another method on a known path.
func (v *Validator) validateFallback(routeErr *routers.RouteError, status int, header http.Header, body []byte) error {
	var want int
	var code string
	switch routeErr.Reason {
	case routers.ErrPathNotFound.Error():
		want, code = http.StatusNotFound, "NOT_FOUND"
	case routers.ErrMethodNotAllowed.Error():
		want, code = http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED"
		if header.Get("Allow") == "" {
			return errors.New("openapitest: a 405 answer needs an Allow header")
		}
	default:
		return fmt.Errorf("openapitest: find route: %w", routeErr)
	}
	if status != want {
		return fmt.Errorf("openapitest: the document has no such operation (%s): want status %d, got %d", routeErr.Reason, want, status)
	}
	if ct, _, _ := strings.Cut(header.Get("Content-Type"), ";"); strings.TrimSpace(ct) != "application/problem+json" {
		return fmt.Errorf("openapitest: content type %q, want application/problem+json", header.Get("Content-Type"))
	}
	var value any
	if err := json.Unmarshal(body, &value); err != nil {
		return fmt.Errorf("openapitest: problem body: %w", err)
	}
	// Problem404 and Problem405: the typed problem narrowed to the status.
	name := fmt.Sprintf("Problem%d", want)
	schema := v.doc.Components.Schemas[name]
	if err := schema.Value.VisitJSON(value, openapi3.EnableJSONSchema2020(), openapi3.VisitAsResponse(), openapi3.MultiErrors()); err != nil {
		return fmt.Errorf("openapitest: problem body doesn't match schema %s: %w", name, err)
	}
	if m, _ := value.(map[string]any); m["code"] != code || m["status"] != float64(want) {
		return fmt.Errorf("openapitest: want code %s and status %d, got %v and %v", code, want, m["code"], m["status"])
	}
	return nil
}

func truncate(b []byte) []byte {
	const max = 2048
	if len(b) > max {
		return append(bytes.Clone(b[:max]), "..."...)
	}
	return b
}

// ReadBody reads and closes resp.Body and puts the bytes back, for callers
// that use Check on answers from a real server.
func ReadBody(tb testing.TB, resp *http.Response) []byte {
	tb.Helper()
	b, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		tb.Fatalf("read body: %v", err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return b
}
