// Package api holds exgate's OpenAPI document, the machine-readable form of
// the HTTP API contract of DESIGN.md section 2.
package api

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/getkin/kin-openapi/openapi3"
)

//go:embed openapi.yaml
var spec []byte

// Spec returns the OpenAPI document as YAML. The caller must not modify the
// returned slice.
func Spec() []byte { return spec }

// Load parses and validates the OpenAPI document.
func Load() (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(spec)
	if err != nil {
		return nil, fmt.Errorf("api: load openapi.yaml: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("api: validate openapi.yaml: %w", err)
	}
	return doc, nil
}
