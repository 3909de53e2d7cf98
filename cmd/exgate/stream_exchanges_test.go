package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/client"
)

// TestStreamOnEachExchange runs `exgate serve` against each exchange's fake
// with the stream URLs pointed at it (docs/contract.md 2.5): an order
// placed through the API shows on the `orders` stream; filled on the fake
// it shows FILLED within a second, and GET /v1/order knows it from the
// stream; an order filled while the exchange's streams are down shows
// FILLED after the reconnect.
func TestStreamOnEachExchange(t *testing.T) {
	for _, ec := range exchangeCases {
		t.Run(ec.name, func(t *testing.T) {
			fake := ec.start(t)
			env := map[string]string{"EXGATE_DATA_DIR": t.TempDir()}
			for k, v := range fake.env {
				env[k] = v
			}
			out, err := runCmd(t, env, "keys", "create", "--label", ec.name)
			if err != nil {
				t.Fatal(err, out)
			}
			var ck struct{ APIKey, SecretKey string }
			_ = json.Unmarshal([]byte(out), &ck)
			args := append([]string{"exchange-keys", "add", "--api-key", ck.APIKey, "--name", "main", "--exchange", ec.name}, fake.keyArgs()...)
			if out, err := runCmd(t, env, append(args, "--permissions", "read,trade")...); err != nil {
				t.Fatal(err, out)
			}
			logs, errc := startServer(t, env, "serve", "--addr", "127.0.0.1:0")
			m := waitFor(t, logs, regexp.MustCompile(`exgate listening.*addr=(\S+)`), errc)
			c := client.New("http://"+m[1], ck.APIKey, ck.SecretKey, "main")
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()

			s, err := c.Dial(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Subscribe(ctx, client.Subscription{Channel: "orders"}); err != nil {
				t.Fatal(err)
			}
			next := func(within time.Duration, what string, ok func(client.Message) bool) client.Message {
				t.Helper()
				rctx, cancel := context.WithTimeout(ctx, within)
				defer cancel()
				for {
					msg, err := s.Read(rctx)
					if err != nil {
						t.Fatalf("%s: no %s within %v: %v", ec.name, what, within, err)
					}
					if msg.Op == "error" {
						t.Fatalf("%s: stream error %s: %s", ec.name, msg.Code, msg.Detail)
					}
					if ok(msg) {
						return msg
					}
				}
			}
			next(10*time.Second, "subscribed", func(m client.Message) bool { return m.Op == "subscribed" })

			book, err := c.OrderBook(ctx, client.OrderBookRequest{Asset1: "BTC", Asset2: "USDT", Limit: 1})
			if err != nil || len(book.Bids) == 0 {
				t.Fatalf("order book: %+v, %v", book, err)
			}
			// A whole number far under the market is on every tick.
			price := decimal.RequireFromString(book.Bids[0].Price).Mul(decimal.RequireFromString("0.8")).Floor().String()
			place := func(id string) exgate.Order {
				o, err := c.PlaceLimitOrder(ctx, client.LimitOrder{Asset1: "BTC", Asset2: "USDT", Side: "BUY", Quantity: "0.01",
					Price: price, TimeInForce: "GTC", ClientOrderID: id})
				if err != nil || o.Status != exgate.OrderPending {
					t.Fatalf("limit order %s at %s: %+v, %v", id, price, o, err)
				}
				return o
			}
			is := func(id string, st exgate.OrderStatus) func(client.Message) bool {
				return func(m client.Message) bool { return m.Order != nil && m.Order.ID == id && m.Order.Status == st }
			}

			o := place("stream-1")
			next(10*time.Second, "PENDING stream-1", is(o.ID, exgate.OrderPending))
			filled := time.Now()
			if err := fake.fill(o.ID); err != nil {
				t.Fatal(err)
			}
			msg := next(time.Second, "FILLED stream-1 within a second of the fill", is(o.ID, exgate.OrderFilled))
			t.Logf("%s: FILLED on the stream %v after the fill", ec.name, time.Since(filled).Round(time.Millisecond))
			if msg.Order.ClientOrderID != "stream-1" {
				t.Errorf("streamed order's clientOrderId = %q, want the client's stream-1", msg.Order.ClientOrderID)
			}
			if got, err := c.Order(ctx, client.OrderRef{ClientOrderID: "stream-1"}); err != nil || got.Status != exgate.OrderFilled {
				t.Errorf("GET /v1/order after the streamed fill: %+v, %v; want FILLED", got, err)
			}

			resume := fake.pauseStreams()
			o2 := place("stream-" + strconv.Itoa(2))
			if err := fake.fill(o2.ID); err != nil {
				t.Fatal(err)
			}
			resume()
			next(30*time.Second, "FILLED stream-2 after the reconnect", is(o2.ID, exgate.OrderFilled))
		})
	}
}
