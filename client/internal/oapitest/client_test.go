package oapitest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/exgate/exgate/client/internal/oapitest"
	"github.com/shopspring/decimal"
)

func newClient(t *testing.T, g gateway) *oapitest.ClientWithResponses {
	t.Helper()
	s := &oapitest.Signer{APIKey: g.APIKey, Secret: g.Secret, ExchangeKey: g.ExchangeKey}
	c, err := oapitest.NewClientWithResponses(g.URL, oapitest.WithRequestEditorFn(s.Edit))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func decimalText(t *testing.T, s string) oapitest.PositiveDecimal {
	t.Helper()
	var d oapitest.PositiveDecimal
	if err := d.FromDecimalText(s); err != nil {
		t.Fatal(err)
	}
	return d
}

// f64 writes a float64 the shortest way that reads back as the same float,
// which for a decimal of up to 15 significant digits is that decimal.
func f64(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// numbers reads the text of every member name of every object in a JSON
// answer (an object or an array of them), exactly as the gateway wrote it.
func numbers(t *testing.T, body []byte, name string) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("answer %s: %v", body, err)
	}
	objs, ok := v.([]any)
	if !ok {
		objs = []any{v}
	}
	var out []string
	for _, o := range objs {
		if n, ok := o.(map[string]any)[name].(json.Number); ok {
			out = append(out, n.String())
		}
	}
	return out
}

// TestGeneratedClient drives the oapi-codegen client through a limit
// order's life on sim: every request signed by Signer.Edit (GETs with
// query parameters the generator percent-encodes, POSTs with bodies in
// the generator's member order), every answer decoded into the
// generated types, amounts compared exactly.
func TestGeneratedClient(t *testing.T) {
	g := startGateway(t)
	c := newClient(t, g)
	ctx := t.Context()

	btc, usdt := "BTC", "USDT"
	syms, err := c.SymbolsWithResponse(ctx, &oapitest.SymbolsParams{Asset1: &btc, Asset2: &usdt})
	if err != nil || syms.JSON200 == nil || len(*syms.JSON200) != 1 {
		t.Fatalf("symbols: %v %s", err, body(syms))
	}
	step := decimal.RequireFromString((*syms.JSON200)[0].PriceStep)
	book, err := c.OrderBookWithResponse(ctx, &oapitest.OrderBookParams{Asset1: btc, Asset2: usdt})
	if err != nil || book.JSON200 == nil || len(book.JSON200.Bids) == 0 {
		t.Fatalf("order book: %v %s", err, body(book))
	}
	// Half the best bid, on the price step: the order rests.
	price := decimal.RequireFromString(book.JSON200.Bids[0].Price).Div(decimal.NewFromInt(2)).Div(step).Floor().Mul(step)

	const quantity = "0.1001"
	clientID := "oapi:limit.1" // ':' is percent-encoded in a query; both forms verify
	limit, err := c.PlaceLimitOrderWithResponse(ctx, nil, oapitest.LimitOrderRequest{
		Asset1: btc, Asset2: usdt, Side: "BUY",
		Quantity: decimalText(t, quantity), Price: decimalText(t, price.String()),
		ClientOrderId: &clientID,
	})
	if err != nil || limit.JSON200 == nil {
		t.Fatalf("limit order: %v %s", err, body(limit))
	}
	o := limit.JSON200
	if o.Status != oapitest.PENDING || f64(o.Quantity) != quantity || o.Price == nil || f64(*o.Price) != price.String() {
		t.Errorf("limit order: status %s quantity %s price %v; want PENDING %s %s", o.Status, f64(o.Quantity), o.Price, quantity, price)
	}
	if got := numbers(t, limit.Body, "quantity"); len(got) != 1 || got[0] != quantity {
		t.Errorf("the answer's quantity is written %v, want %s", got, quantity)
	}

	read, err := c.GetOrderWithResponse(ctx, &oapitest.GetOrderParams{ClientOrderId: &clientID})
	if err != nil || read.JSON200 == nil {
		t.Fatalf("get order: %v %s", err, body(read))
	}
	if read.JSON200.Id != o.Id || f64(read.JSON200.Quantity) != quantity {
		t.Errorf("get order: id %s quantity %s, want %s %s", read.JSON200.Id, f64(read.JSON200.Quantity), o.Id, quantity)
	}

	// A quantity sent as a JSON number: the generator writes the float64
	// the shortest way, 0.1001, and the gateway parses that text exactly.
	var q oapitest.PositiveDecimal
	if err := q.FromPositiveDecimal0(0.1001); err != nil {
		t.Fatal(err)
	}
	test := true
	tested, err := c.PlaceLimitOrderWithResponse(ctx, nil, oapitest.LimitOrderRequest{
		Asset1: btc, Asset2: usdt, Side: "BUY", Quantity: q, Price: decimalText(t, price.String()), Test: &test,
	})
	if err != nil || tested.JSON200 == nil || tested.JSON200.Status != oapitest.TEST || f64(tested.JSON200.Quantity) != quantity {
		t.Fatalf("test order with a number quantity: %v %s", err, body(tested))
	}

	canceled, err := c.CancelOrderWithResponse(ctx, oapitest.CancelRequest{ClientOrderId: &clientID})
	if err != nil || canceled.JSON200 == nil || canceled.JSON200.Status != oapitest.CANCELED {
		t.Fatalf("cancel: %v %s", err, body(canceled))
	}

	// Problems decode into the typed Problem: code and status typed.
	unknown := "oapi-never-placed"
	missing, err := c.CancelOrderWithResponse(ctx, oapitest.CancelRequest{ClientOrderId: &unknown})
	if err != nil || missing.ApplicationproblemJSON404 == nil {
		t.Fatalf("cancel of an unknown order: %v %s", err, body(missing))
	}
	if p := missing.ApplicationproblemJSON404; p.Code != oapitest.Problem404CodeNOTFOUND || p.Status != 404 {
		t.Errorf("cancel of an unknown order: code %s status %d", p.Code, p.Status)
	}
	bad, err := c.PlaceLimitOrderWithResponse(ctx, nil, oapitest.LimitOrderRequest{
		Asset1: btc, Asset2: usdt, Side: "BUY", Quantity: decimalText(t, quantity), Price: decimalText(t, "0"),
	})
	if err != nil || bad.ApplicationproblemJSON400 == nil {
		t.Fatalf("price 0: %v %s", err, body(bad))
	}
	if p := bad.ApplicationproblemJSON400; p.Code != oapitest.Problem400CodeINVALIDPARAMETER || p.Status != 400 || p.Param == nil || *p.Param != "price" {
		t.Errorf("price 0: code %s status %d param %v", p.Code, p.Status, p.Param)
	}
}

// TestGeneratedClientDepositAmounts reads sim's deposit history, whose
// amounts carry up to eight decimals, through the generated client: every
// amount the generated float64 holds prints back as exactly the text the
// gateway wrote (a float32, which oapi-codegen made of `type: number`
// without a format, changed most of them).
func TestGeneratedClientDepositAmounts(t *testing.T) {
	g := startGateway(t)
	c := newClient(t, g)
	deps, err := c.RecentDepositsWithResponse(t.Context(), &oapitest.RecentDepositsParams{})
	if err != nil || deps.JSON200 == nil {
		t.Fatalf("recent deposits: %v %s", err, body(deps))
	}
	texts := numbers(t, deps.Body, "amount")
	if len(texts) != len(*deps.JSON200) || len(texts) < 20 {
		t.Fatalf("%d deposits, %d amounts read as text; want at least 20", len(*deps.JSON200), len(texts))
	}
	var long, float32Changed int
	for i, d := range *deps.JSON200 {
		if got := f64(d.Amount); got != texts[i] {
			t.Errorf("deposit %s: amount %s through the generated client, %s as written", d.Id, got, texts[i])
		}
		if _, frac, _ := strings.Cut(texts[i], "."); len(frac) >= 6 {
			long++
		}
		if strconv.FormatFloat(float64(float32(d.Amount)), 'f', -1, 32) != texts[i] {
			float32Changed++
		}
	}
	t.Logf("%d deposits, %d with six or more decimals; a float32 would have changed %d", len(texts), long, float32Changed)
	if long == 0 || float32Changed == 0 {
		t.Errorf("the history has no amount a float32 would change; the test proves nothing")
	}
}

// body returns an answer's status and body for a failure message.
func body(r any) string {
	v := reflect.ValueOf(r)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return "<no answer>"
	}
	resp := v.Elem().FieldByName("HTTPResponse").Interface().(*http.Response)
	return fmt.Sprintf("%d %s", resp.StatusCode, v.Elem().FieldByName("Body").Bytes())
}

// TestStreamHandshake: the generated StreamWithResponse sends its required
// timestamp as 0 when the caller leaves it unset (a plain int64); the
// Signer replaces it, so the handshake passes authentication. A generated
// client cannot hold a WebSocket: the gateway answers the plain GET that
// it is one (docs/clients.md).
func TestStreamHandshake(t *testing.T) {
	g := startGateway(t)
	c := newClient(t, g)
	r, err := c.StreamWithResponse(t.Context(), &oapitest.StreamParams{})
	if err != nil {
		t.Fatal(err)
	}
	if r.StatusCode() == http.StatusBadRequest || r.StatusCode() == http.StatusUnauthorized || r.StatusCode() < 400 {
		t.Fatalf("handshake without a timestamp of its own: %d %s, want it past authentication and refused as not a WebSocket", r.StatusCode(), r.Body)
	}
	t.Logf("the plain GET: %d %s", r.StatusCode(), r.Body)
}
