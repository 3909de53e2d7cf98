package fakews

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestServer echoes through a fake, drops it, holds a reconnect off while
// paused and lets it in after resume.
func TestServer(t *testing.T) {
	srv := New(func(ctx context.Context, c *Conn) {
		for {
			b, err := c.Read(ctx)
			if err != nil {
				return
			}
			// Send answers at once; Push queues the same answer again.
			if err := c.Send(ctx, map[string]string{"echo": string(b)}); err != nil {
				return
			}
			c.Push([]byte(`{"pushed":"` + string(b) + `"}`))
		}
	})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	url := "ws" + strings.TrimPrefix(hs.URL, "http")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()

	ws, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Write(ctx, websocket.MessageText, []byte("hi")); err != nil {
		t.Fatal(err)
	}
	if _, b, err := ws.Read(ctx); err != nil || string(b) != `{"echo":"hi"}` {
		t.Fatalf("echo = %s, %v", b, err)
	}
	if _, b, err := ws.Read(ctx); err != nil || string(b) != `{"pushed":"hi"}` {
		t.Fatalf("pushed = %s, %v", b, err)
	}
	if err := srv.WaitConns(ctx, 1); err != nil {
		t.Fatal(err)
	}
	resume := srv.Pause()
	if _, _, err := ws.Read(ctx); err == nil {
		t.Fatal("read on a dropped connection succeeded")
	}
	if _, resp, err := websocket.Dial(ctx, url, nil); err == nil || resp == nil || resp.StatusCode != 503 {
		t.Fatalf("dial while paused: %v (%v), want 503", err, resp)
	}
	resume()
	ws2, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatalf("dial after resume: %v", err)
	}
	defer ws2.CloseNow()
	if err := srv.WaitConns(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if got := srv.Accepted(); got != 2 {
		t.Errorf("Accepted = %d, want 2", got)
	}
	if n := srv.Drop(); n != 1 {
		t.Errorf("Drop = %d, want 1", n)
	}
}
