package binance

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/localstate"
)

// brokenCache is a MetadataCache whose backend is down.
type brokenCache struct{}

func (brokenCache) Get(context.Context, string) ([]byte, error) {
	return nil, errors.New("connection refused")
}
func (brokenCache) Set(context.Context, string, []byte, time.Duration) error {
	return errors.New("connection refused")
}

// TestSharedExchangeInfo: instances sharing a MetadataCache fetch
// exchangeInfo once per MarketsTTL between them; an expired entry is
// fetched again, and a cache that is down costs only the saving.
func TestSharedExchangeInfo(t *testing.T) {
	const ttl = 10 * time.Minute
	e := newEnv(t)
	cache := localstate.NewCache(e.clock.Now)
	instance := func(c MetadataCache) *Exchange {
		return New(Options{BaseURL: e.fake.URL, HTTPClient: e.fake.Client(), Now: e.clock.Now, Limiter: e.limiter,
			MarketsTTL: ttl, MetadataCache: c})
	}
	book := func(ex *Exchange) {
		t.Helper()
		if _, err := ex.OrderBook(t.Context(), e.cred, exgate.OrderBookRequest{Symbol: exgate.Symbol{Base: "BTC", Quote: "USDT"}, Limit: 5}); err != nil {
			t.Fatal(err)
		}
	}
	fetches := func() int { return e.fake.Requests("/api/v3/exchangeInfo") }

	book(instance(cache))
	book(instance(cache))
	book(instance(cache))
	if n := fetches(); n != 1 {
		t.Fatalf("three instances fetched exchangeInfo %d times; want 1", n)
	}
	e.clock.Advance(ttl + time.Second)
	book(instance(cache))
	book(instance(cache))
	if n := fetches(); n != 2 {
		t.Fatalf("after the ttl, exchangeInfo fetched %d times in all; want 2", n)
	}
	book(instance(brokenCache{}))
	if n := fetches(); n != 3 {
		t.Fatalf("with the cache down, exchangeInfo fetched %d times in all; want 3", n)
	}
}
