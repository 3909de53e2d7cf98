// Package api holds exgate's OpenAPI document, the machine-readable form of
// the HTTP API contract of docs/contract.md section 2. The server only serves its
// bytes; parsing and validating it (kin-openapi) is test code, in
// api/openapitest, so that the server binary does not link a YAML parser
// and a JSON-schema engine.
package api

import _ "embed"

//go:embed openapi.yaml
var spec []byte

// Spec returns the OpenAPI document as YAML. The caller must not modify the
// returned slice.
func Spec() []byte { return spec }
