package journal

import (
	"context"
	"encoding/json"
	"time"

	"github.com/exgate/exgate"
)

// StreamedOrder records an order update pushed by an exchange's stream
// (package stream, docs/contract.md 2.5) as the reconciler records a read
// (recordRead), so that GET /v1/order and the reconciler learn of a fill
// without polling; it returns the order as the client knows it (as
// LabelOrders does, and in the client's orientation for an order placed on
// the inverted pair).
//
// An update is recorded only when it advances the recorded order
// (exgate.Order.Advances): a final state is never changed, and the same
// update arriving twice writes once. An intent this process is still
// submitting is left to the submission, which records its own answer; the
// reconciler reads it after. One whose answer is being recorded waits for
// that record. A store that cannot be written only delays
// what the reconciler finds.
func (s *Service) StreamedOrder(ctx context.Context, cred exgate.Credential, o exgate.Order) exgate.Order {
	// An update that comes while the order's answer is being recorded
	// waits for that record (one commit) and is then compared with it.
	s.saved(ctx, o.ClientOrderID)
	it, ok := s.placed(ctx, cred.ClientAPIKey, o.ClientOrderID)
	if !ok || it.CredentialID != cred.ID {
		return s.labelOrder(ctx, cred.ClientAPIKey, o)
	}
	var req orderIntent
	if err := json.Unmarshal(it.Request, &req); err == nil && req.Inverted {
		o = o.Inverted()
	}
	o = orderKind.label(o, it.ID, it.ClientRef)
	if it.State.Done() || s.isInflight(it.ID) {
		return o
	}
	if it.Answer == exgate.AnswerRecord {
		var recorded exgate.Order
		if err := json.Unmarshal(it.Response, &recorded); err == nil && !recorded.Advances(o) {
			return o
		}
	}
	saveCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	fresh, err := recordRead(saveCtx, s, orderKind, it, o, s.now(), "recorded from the stream")
	if err != nil {
		s.log.WarnContext(ctx, "journal: streamed order not recorded; the reconciler will settle it", "id", it.ID, "err", err)
		return o
	}
	if fresh.State != it.State {
		s.noteState(exgate.IntentOrder, fresh.State)
	}
	return o
}
