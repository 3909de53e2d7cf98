package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/exgate/exgate/client"
)

// Example places a market order through a gateway started with
// `exgate demo`, with the key pair and exchange key it prints, and reads the
// order back if the exchange did not answer in time.
func Example() {
	ctx := context.Background()
	c := client.New(
		"http://127.0.0.1:8080",
		os.Getenv("EXGATE_API_KEY"),
		os.Getenv("EXGATE_SECRET_KEY"),
		"demo", // the exchange key name
		client.WithTimestamps(time.Now, 5*time.Second),
	)

	balances, err := c.AccountBalance(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, b := range balances {
		fmt.Println(b.Asset, b.Available, b.Locked)
	}

	order, err := c.PlaceMarketOrder(ctx, client.MarketOrder{
		Asset1:        "BTC",
		Asset2:        "USDT",
		Side:          "BUY",
		Quantity:      "100", // spend 100 USDT
		QuantityIn:    "asset2",
		ClientOrderID: "example-order-1", // sending it again returns this order
	})
	if e, ok := errors.AsType[*client.Error](err); ok {
		switch e.Code {
		case "EXCHANGE_TIMEOUT":
			// The outcome is unknown; the gateway reconciles it.
			order, err = c.Order(ctx, client.OrderRef{ClientOrderID: "example-order-1"})
		case "RATE_LIMITED":
			log.Fatalf("retry in %v", e.RetryAfter)
		default:
			log.Fatalf("refused: %s %s (param %q)", e.Code, e.Detail, e.Param)
		}
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(order.ID, order.Status, order.Quantity, order.QuantityIn)
}

// ExampleClient_Do sends parameters in the order given, as `exgate call`
// does.
func ExampleClient_Do() {
	c := client.New("http://127.0.0.1:8080", os.Getenv("EXGATE_API_KEY"), os.Getenv("EXGATE_SECRET_KEY"), "demo")
	status, body, err := c.Do(context.Background(), "GET", "/v1/market/recent-klines", []client.Param{
		{Name: "asset1", Value: "BTC"},
		{Name: "asset2", Value: "USDT"},
		{Name: "interval", Value: "1h"},
		{Name: "limit", Value: "3"},
	})
	if err != nil && status == 0 {
		log.Fatal(err) // no answer
	}
	fmt.Println(status, string(body))
}

// ExampleSign signs the parameter string of the docs/contract.md test vector.
func ExampleSign() {
	fmt.Println(client.Sign("ru8nVoVLNuNZ4qASWdmoBSsxzqZmXZFgnj2C5IWPZo0",
		"asset1=BTC&asset2=ETH&side=BUY&quantity=0.1&quantityIn=ETH"))
	// Output: 8978e017b68e2e1ddf5cca2545d6eb987c5f1093c00f52a118b8b7f605b522e5
}
