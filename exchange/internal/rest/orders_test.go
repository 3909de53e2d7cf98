package rest

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

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

func TestPrepareOrder(t *testing.T) {
	rule := ClientIDRule{Exchange: "test", Pattern: regexp.MustCompile(`^[a-z]{1,4}$`), Allowed: "1 to 4 letters"}
	looked := 0
	lookup := func(_ context.Context, s exgate.Symbol) (string, error) { looked++; return s.Base + "-" + s.Quote, nil }
	btc := exgate.Symbol{Base: "BTC", Quote: "USDT"}
	req := exgate.OrderRequest{ClientOrderID: "abc", Symbol: btc, Side: exgate.SideBuy, QuantityIn: exgate.InBase}
	if m, err := PrepareOrder(context.Background(), req, rule, true, lookup); err != nil || m != "BTC-USDT" {
		t.Fatalf("valid order: %q, %v", m, err)
	}
	for _, tt := range []struct {
		name      string
		id        string
		required  bool
		side      exgate.Side
		wantParam string
	}{
		{"id too long", "abcde", false, exgate.SideBuy, "clientOrderId"},
		{"id missing", "", true, exgate.SideBuy, "clientOrderId"},
		{"bad side", "", false, "HOLD", "side"},
	} {
		r := req
		r.ClientOrderID, r.Side = tt.id, tt.side
		_, err := PrepareOrder(context.Background(), r, rule, tt.required, lookup)
		if e, ok := errors.AsType[*exgate.Error](err); !ok || e.Param != tt.wantParam {
			t.Errorf("%s: got %v, want a %s error", tt.name, err, tt.wantParam)
		}
	}
	if looked != 1 {
		t.Errorf("looked up %d times; a request refused on its face must not be", looked)
	}
	if err := rule.Check("", false); err != nil {
		t.Errorf("optional empty id refused: %v", err)
	}
	if err := rule.Check("ABC", false); err == nil || !strings.Contains(err.Error(), "test takes 1 to 4 letters as a client order id") {
		t.Errorf("refusal: %v", err)
	}
}

func TestTestedMarketOrder(t *testing.T) {
	btc := exgate.Symbol{Base: "BTC", Quote: "USDT"}
	r := exgate.OrderRequest{ClientOrderID: "c1", Symbol: btc, Side: exgate.SideSell, QuantityIn: exgate.InQuote}
	o := TestedMarketOrder("test", r, btc, decimal.RequireFromString("25.5"), exgate.InQuote, 1700000000000)
	if o.Status != exgate.OrderTest || o.Type != exgate.OrderTypeMarket || o.QuantityIn != "USDT" || o.Quantity.String() != "25.5" ||
		o.OpenAt != 1700000000000 || o.CloseAt != o.OpenAt || o.Exchange != "test" || o.ID != "c1" || o.ClientOrderID != "c1" {
		t.Fatalf("tested order: %+v", o)
	}
}
