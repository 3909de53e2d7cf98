package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"sync"

	"github.com/exgate/exgate"
)

// bookEncoder is the same for order books.
type bookEncoder interface {
	OrderBookJSON(ctx context.Context, cred exgate.Credential, req exgate.OrderBookRequest) ([]byte, error)
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

func (s *Server) writeBook(w http.ResponseWriter, book exgate.OrderBook) {
	bp := bufPool.Get().(*[]byte)
	b := exgate.AppendOrderBookJSON((*bp)[:0], book)
	writeRaw(w, b)
	*bp = b
	bufPool.Put(bp)
}

func writeRaw(w http.ResponseWriter, b []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b)
}
