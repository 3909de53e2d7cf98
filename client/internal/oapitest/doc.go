// Package oapitest is a client of exgate generated from api/openapi.yaml by
// oapi-codegen, as a user of the API would generate one, plus the signing
// request editor that docs/clients.md shows. Its tests run it against a
// gateway on the simulated exchange, so that the document, the generator's
// types and the gateway's signing stay in agreement, and money survives the
// trip exactly.
//
// It is test code (the server binary does not link it), and the generator
// is not a dependency of the module: go generate runs it by version.
package oapitest

//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2 -config oapi-codegen.yaml ../../../api/openapi.yaml
