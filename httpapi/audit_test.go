package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/sqlite"
)

// outage fails every audit write while down is set, as a store that is
// unreachable does.
type outage struct {
	auditStore
	down atomic.Bool
	// failed is closed at the first write refused.
	failed chan struct{}
	once   sync.Once
}

func (o *outage) AppendAudits(ctx context.Context, es []exgate.AuditEntry) error {
	if o.down.Load() {
		o.once.Do(func() { close(o.failed) })
		return errors.New("store unreachable")
	}
	return o.auditStore.AppendAudits(ctx, es)
}

// Issue 23: audit records written during a store outage were dropped
// after one try. They wait in the queue and are found after it.
func TestAuditSurvivesOutage(t *testing.T) {
	o := &outage{failed: make(chan struct{})}
	g, _ := newAuditedGateway(t, nil, func(st *sqlite.Store) auditStore { o.auditStore = st; return o })
	ctx := t.Context()
	o.down.Store(true)
	var ids []string
	for _, ref := range []string{"outage-1", "outage-2", "outage-3"} {
		r := g.do(request{method: "POST", path: "/v1/order/market",
			body: `"asset1":"BTC","asset2":"USDT","side":"BUY","quantity":"100","quantityIn":"asset2","clientOrderId":"` + ref + `"`})
		wantCode(t, r, 200, "")
		var placed struct{ ID string }
		_ = json.Unmarshal(r.body, &placed)
		ids = append(ids, placed.ID)
	}
	<-o.failed // the writer tried, and failed, before the store is back
	if n := g.api.AuditQueued(); n == 0 {
		t.Fatal("no audit record waiting during the outage")
	}
	o.down.Store(false)
	if err := g.api.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := g.store.AuditLog(ctx, exgate.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d audit entries after the outage, want 3: %+v", len(got), got)
	}
	for i, e := range got { // newest first
		if want := ids[len(ids)-1-i]; e.IntentID != want || e.Status != 200 {
			t.Errorf("entry %d: %+v; want the order %s", i, e, want)
		}
	}
}

// Issue 23: a client's X-Request-ID was written into the audit trail as
// the request's id, so two clients' records could share one. The gateway
// generates every request's id and keeps the client's apart.
func TestForgedRequestID(t *testing.T) {
	g, _ := newControlledGateway(t, nil)
	ctx := t.Context()
	const body = `"asset1":"BTC","asset2":"USDT","side":"BUY","quantity":"100","quantityIn":"asset2"`
	first := g.do(request{method: "POST", path: "/v1/order/market", body: body})
	wantCode(t, first, 200, "")
	victim := first.header.Get("X-Request-ID")
	forged := g.do(request{method: "POST", path: "/v1/order/market", body: body, header: map[string]string{"X-Request-ID": victim}})
	wantCode(t, forged, 200, "")
	if got := forged.header.Get("X-Request-ID"); got == victim {
		t.Fatalf("the forged request answered with the first request's id %s", got)
	}
	if err := g.api.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := g.store.AuditLog(ctx, exgate.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	holders := 0
	for _, e := range got {
		if e.RequestID == victim {
			holders++
		}
	}
	if len(got) != 2 || holders != 1 {
		t.Fatalf("%d of %d audit entries carry request id %s; want 1 of 2: %+v", holders, len(got), victim, got)
	}
	if got[0].ClientRequestID != victim || got[0].RequestID == victim {
		t.Errorf("the forged request's entry %+v; want its own request id and the client's %s apart", got[0], victim)
	}
}
