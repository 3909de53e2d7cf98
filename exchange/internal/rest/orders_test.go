package rest

import (
	"errors"
	"testing"

	"github.com/exgate/exgate"
)

func TestCheckOrder(t *testing.T) {
	tests := []struct {
		name      string
		side      exgate.Side
		in        exgate.QuantityIn
		wantParam string // "" for accepted
	}{
		{"buy in base", exgate.SideBuy, exgate.InBase, ""},
		{"sell in quote", exgate.SideSell, exgate.InQuote, ""},
		{"no side", "", exgate.InBase, "side"},
		{"lower-case side", "buy", exgate.InBase, "side"},
		{"no unit", exgate.SideBuy, 0, "quantityIn"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckOrder(exgate.OrderRequest{Side: tt.side, QuantityIn: tt.in})
			if tt.wantParam == "" {
				if err != nil {
					t.Fatalf("CheckOrder = %v; want nil", err)
				}
				return
			}
			e, ok := errors.AsType[*exgate.Error](err)
			if !ok || e.Param != tt.wantParam {
				t.Fatalf("CheckOrder = %v; want a problem naming %s", err, tt.wantParam)
			}
		})
	}
}
