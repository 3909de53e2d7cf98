package rest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exgate/exgate"
)

func TestLearnOffset(t *testing.T) {
	local := time.UnixMilli(1_000_000)
	tr := Transport{Exchange: "test", Log: slog.New(slog.DiscardHandler), Now: func() time.Time {
		local = local.Add(100 * time.Millisecond) // the call takes 100 ms
		return local
	}}
	var offset atomic.Int64
	// The exchange reads 1 100 150 at the middle of the call, local 1 100 050.
	if err := tr.LearnOffset(context.Background(), &offset, func(context.Context) (int64, error) { return 1_100_150, nil }); err != nil {
		t.Fatal(err)
	}
	if got := offset.Load(); got != 1_100_150-1_000_150 {
		t.Fatalf("offset %d ms", got)
	}
	refused := errors.New("refused")
	if err := tr.LearnOffset(context.Background(), &offset, func(context.Context) (int64, error) { return 0, refused }); !errors.Is(err, refused) {
		t.Fatalf("failed time call: %v", err)
	}
}

// answerError is an exchange's error answer.
type answerError struct{ label string }

func (e *answerError) Error() string { return e.label }

func TestClassifyAs(t *testing.T) {
	settled := &exgate.Error{Code: exgate.CodeNotFound}
	if s, _ := ClassifyAs[*answerError](fmt.Errorf("x: %w", settled), "test", "order", true); s != settled {
		t.Errorf("an *exgate.Error: got %v", s)
	}
	if s, _ := ClassifyAs[*answerError](errors.New("odd"), "test", "order", true); s == nil || s.Code != exgate.CodeExchangeError || s.Detail != "test call failed" {
		t.Errorf("an unknown error: got %v", s)
	}
	s, ae := ClassifyAs[*answerError](fmt.Errorf("call: %w", &answerError{"BALANCE_NOT_ENOUGH"}), "test", "order", true)
	if s != nil || ae == nil || ae.label != "BALANCE_NOT_ENOUGH" {
		t.Errorf("the exchange's answer: got %v, %v", s, ae)
	}
}
