package httpapi

import (
	"testing"
)

// BenchmarkVerifyQuery is the signature check of a typical signed GET: the
// query canonicalized and the HMAC compared (docs/PERFORMANCE.md).
func BenchmarkVerifyQuery(b *testing.B) {
	const secret = "ru8nVoVLNuNZ4qASWdmoBSsxzqZmXZFgnj2C5IWPZo0"
	q := "asset1=BTC&asset2=USDT&interval=1m&limit=500&timestamp=1763812800000"
	query := q + "&signature=" + hmacHex(secret, q)
	pool := newMACPool([]byte(secret))
	b.ReportAllocs()
	for b.Loop() {
		sr, err := parseQuery(query)
		if err != nil {
			b.Fatal(err)
		}
		var sig [32]byte
		if !decodeSignature(sr.signature, &sig) || !pool.verify(sr.raw, &sig) {
			b.Fatal("signature refused")
		}
	}
}

// BenchmarkVerifyBody is the same for a market order's JSON body.
func BenchmarkVerifyBody(b *testing.B) {
	const secret = "ru8nVoVLNuNZ4qASWdmoBSsxzqZmXZFgnj2C5IWPZo0"
	msg := "asset1=BTC&asset2=USDT&side=BUY&quantity=0.1&quantityIn=asset1"
	body := []byte(`{"asset1":"BTC","asset2":"USDT","side":"BUY","quantity":0.1,"quantityIn":"asset1","signature":"` + hmacHex(secret, msg) + `"}`)
	pool := newMACPool([]byte(secret))
	b.ReportAllocs()
	for b.Loop() {
		sr, err := parseBody(body)
		if err != nil {
			b.Fatal(err)
		}
		var sig [32]byte
		if !decodeSignature(sr.signature, &sig) || !pool.verify(sr.raw, &sig) {
			b.Fatal("signature refused")
		}
	}
}
