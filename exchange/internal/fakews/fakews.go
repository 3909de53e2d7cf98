// Package fakews is the WebSocket side of the exchange fakes
// (binancefake, krakenfake, gateiofake): it accepts connections, keeps
// them so a test can drop them all at once or hold new ones off (an
// upstream outage), and serializes each connection's writes. Each fake
// speaks its exchange's protocol on top.
package fakews

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"

	"github.com/coder/websocket"
)

// Server accepts WebSocket connections for a fake and hands each to the
// fake's handler. The zero value is not usable; call New.
type Server struct {
	handle func(ctx context.Context, c *Conn)

	mu       sync.Mutex
	conns    map[*Conn]struct{}
	down     bool
	accepted int
	changed  chan struct{} // closed and replaced whenever conns changes
}

// New returns a Server that runs handle for each connection until it
// returns or the connection is dropped.
func New(handle func(ctx context.Context, c *Conn)) *Server {
	return &Server{handle: handle, conns: map[*Conn]struct{}{}, changed: make(chan struct{})}
}

// ServeHTTP upgrades the request. While the server is down (Pause) it
// answers 503 without upgrading, as an exchange in an outage does.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	down := s.down
	s.mu.Unlock()
	if down {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	ws.SetReadLimit(1 << 20)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	c := &Conn{ws: ws, Request: r, ctx: ctx, cancel: cancel}
	s.mu.Lock()
	if s.down {
		s.mu.Unlock()
		ws.CloseNow()
		return
	}
	s.conns[c] = struct{}{}
	s.accepted++
	s.notify()
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.notify()
		s.mu.Unlock()
		ws.CloseNow()
	}()
	s.handle(ctx, c)
}

func (s *Server) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Drop closes every open connection abruptly (no close frame), as a
// network failure would, and returns how many there were.
func (s *Server) Drop() int {
	s.mu.Lock()
	conns := make([]*Conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.Drop()
	}
	return len(conns)
}

// Pause drops every connection and refuses new ones until the returned
// resume is called: the exchange's stream is down meanwhile.
func (s *Server) Pause() (resume func()) {
	s.mu.Lock()
	s.down = true
	s.mu.Unlock()
	s.Drop()
	return func() {
		s.mu.Lock()
		s.down = false
		s.mu.Unlock()
	}
}

// Conns returns the open connections.
func (s *Server) Conns() []*Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Conn, 0, len(s.conns))
	for c := range s.conns {
		out = append(out, c)
	}
	return out
}

// Accepted counts the connections accepted so far.
func (s *Server) Accepted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepted
}

// WaitConns waits until exactly n connections are open or ctx ends.
func (s *Server) WaitConns(ctx context.Context, n int) error {
	for {
		s.mu.Lock()
		got, changed := len(s.conns), s.changed
		s.mu.Unlock()
		if got == n {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
}

// Conn is one client connection of a fake.
type Conn struct {
	ws *websocket.Conn
	// Request is the upgrade request (its URL, headers, query).
	Request *http.Request
	ctx     context.Context
	cancel  context.CancelFunc
	wmu     sync.Mutex

	startWriter sync.Once
	out         chan []byte
}

// pushQueue is how many messages Push holds for a connection; a client
// that falls further behind is dropped, as exchanges drop slow readers.
const pushQueue = 4096

// Push queues b to be sent as one text message without waiting, from any
// goroutine, in order; when the queue is full the connection is dropped.
func (c *Conn) Push(b []byte) {
	c.startWriter.Do(func() {
		c.out = make(chan []byte, pushQueue)
		go func() {
			for {
				select {
				case <-c.ctx.Done():
					return
				case b := <-c.out:
					if c.SendRaw(c.ctx, b) != nil {
						c.Drop()
						return
					}
				}
			}
		}()
	})
	select {
	case c.out <- b:
	default:
		c.Drop()
	}
}

// Read returns the next text message.
func (c *Conn) Read(ctx context.Context) ([]byte, error) {
	typ, b, err := c.ws.Read(ctx)
	if err != nil {
		return nil, err
	}
	if typ != websocket.MessageText {
		return nil, errors.New("fakews: binary message")
	}
	return b, nil
}

// Send writes v as one JSON text message.
func (c *Conn) Send(ctx context.Context, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.SendRaw(ctx, b)
}

// SendRaw writes b as one text message, as it is.
func (c *Conn) SendRaw(ctx context.Context, b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.ws.Write(ctx, websocket.MessageText, b)
}

// Close closes the connection with a close frame, as an exchange ends a
// session it refuses.
func (c *Conn) Close(code websocket.StatusCode, reason string) {
	c.ws.Close(code, reason)
	c.cancel()
}

// Drop closes the connection without a close frame.
func (c *Conn) Drop() {
	c.ws.CloseNow()
	c.cancel()
}
