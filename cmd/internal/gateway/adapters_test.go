package gateway

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/api/openapitest"
)

// TestCheckCredential: a credential no exchange would accept is refused
// naming the field, for exchange-keys add and the console alike; the
// exchange's own rule comes from its adapter.
func TestCheckCredential(t *testing.T) {
	tests := []struct {
		name  string
		c     exgate.Credential
		param string
	}{
		{"sim without key", exgate.Credential{Name: "paper", Exchange: "sim"}, ""},
		{"binance", exgate.Credential{Name: "main", Exchange: "binance", Key: "k", Secret: "s"}, ""},
		{"kraken", exgate.Credential{Name: "main", Exchange: "kraken", Key: "k", Secret: "c2VjcmV0"}, ""},
		{"no name", exgate.Credential{Exchange: "sim"}, "name"},
		{"name with a space", exgate.Credential{Name: "a b", Exchange: "sim"}, "name"},
		{"unknown exchange", exgate.Credential{Name: "x", Exchange: "ftx"}, "exchange"},
		{"binance without key", exgate.Credential{Name: "x", Exchange: "binance", Secret: "s"}, "key"},
		{"binance without secret", exgate.Credential{Name: "x", Exchange: "binance", Key: "k"}, "secret"},
		{"gateio without secret", exgate.Credential{Name: "x", Exchange: "gateio", Key: "k"}, "secret"},
		{"kraken secret not base64", exgate.Credential{Name: "x", Exchange: "kraken", Key: "k", Secret: "not base64!"}, "secret"},
		{"paper key on a real exchange", exgate.Credential{Name: "p", Exchange: "kraken", Paper: true}, ""},
		{"paper key on sim", exgate.Credential{Name: "p", Exchange: "sim", Paper: true}, "paper"},
		{"paper key with a secret", exgate.Credential{Name: "p", Exchange: "binance", Secret: "s", Paper: true}, "key"},
		{"paper key on an unknown exchange", exgate.Credential{Name: "p", Exchange: "ftx", Paper: true}, "exchange"},
	}
	for _, tc := range tests {
		err := CheckCredential(tc.c)
		if tc.param == "" {
			if err != nil {
				t.Errorf("%s: CheckCredential = %v, want nil", tc.name, err)
			}
			continue
		}
		e, ok := errors.AsType[*exgate.Error](err)
		if !ok || e.Param != tc.param || e.Code != exgate.CodeInvalidParameter {
			t.Errorf("%s: CheckCredential = %v, want INVALID_PARAMETER on %s", tc.name, err, tc.param)
		}
	}
}

// TestAdapterList: names are unique and make flags and variables.
func TestAdapterList(t *testing.T) {
	seen := map[string]bool{}
	for _, a := range adapters() {
		if seen[a.Name] {
			t.Errorf("%s registered twice", a.Name)
		}
		seen[a.Name] = true
		if a.Build == nil {
			t.Errorf("%s: no Build", a.Name)
		}
	}
}

// TestOpenAPIExchangeEnum holds api/openapi.yaml's Exchange enum to the
// adapter list, both ways: registering an adapter means documenting its
// name.
func TestOpenAPIExchangeEnum(t *testing.T) {
	doc, err := openapitest.Load()
	if err != nil {
		t.Fatal(err)
	}
	var enum []string
	for _, v := range doc.Components.Schemas["Exchange"].Value.Enum {
		enum = append(enum, v.(string))
	}
	slices.Sort(enum)
	names := slices.Sorted(slices.Values(ExchangeNames()))
	if diff := cmp.Diff(enum, names); diff != "" {
		t.Errorf("api/openapi.yaml's Exchange enum against the adapter list (-enum +list):\n%s", diff)
	}
}

// TestStreamConnectLimits: every real exchange declares its pace of new
// WebSocket connections (the stream hub keeps within it); the exchange
// simulated in process has none.
func TestStreamConnectLimits(t *testing.T) {
	limit := connectLimits(adapters())
	for _, a := range adapters() {
		l, ok := limit(a.Name)
		if ok == a.InProcess || (ok && (l.Rate <= 0 || l.Period <= 0 || l.Burst <= 0)) {
			t.Errorf("%s: connect limit %+v %v", a.Name, l, ok)
		}
	}
}
