package rest

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"github.com/exgate/exgate"
)

// fetchRequest is a request whose answer is canned.
type fetchRequest struct {
	answer string
	err    error
}

func (r fetchRequest) Unreadable(err error) *exgate.Error {
	return BadAnswer("test", "ticker", false, err)
}

func doFetch(_ context.Context, r fetchRequest) ([]byte, error) { return []byte(r.answer), r.err }

func TestFetch(t *testing.T) {
	ctx := context.Background()
	v, err := Fetch(ctx, doFetch, fetchRequest{answer: "42"}, func(b []byte) (int, error) { return strconv.Atoi(string(b)) })
	if err != nil || v != 42 {
		t.Fatalf("answer 42: %v, %v", v, err)
	}
	failed := &exgate.Error{Code: exgate.CodeExchangeUnavailable, Detail: "down"}
	if _, err := Fetch(ctx, doFetch, fetchRequest{err: failed}, func(b []byte) (int, error) { return strconv.Atoi(string(b)) }); err != failed {
		t.Fatalf("failed call: got %v, want do's error as it is", err)
	}
	_, err = Fetch(ctx, doFetch, fetchRequest{answer: "x"}, func(b []byte) (int, error) { return strconv.Atoi(string(b)) })
	if exgate.ErrorCode(err) != exgate.CodeExchangeError || !errors.Is(err, strconv.ErrSyntax) {
		t.Fatalf("unreadable answer: got %v, want EXCHANGE_ERROR wrapping the parse error", err)
	}
}

func TestSendOrderLogs(t *testing.T) {
	ctx := context.Background()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	parse := func(b []byte) (int, error) { return strconv.Atoi(string(b)) }
	if _, err := SendOrder(ctx, log, "test", "limit order", doFetch, fetchRequest{err: errors.New("refused")}, parse, "c1", "pair", "BTC_USDT"); err == nil {
		t.Fatal("failed placement: no error")
	}
	if _, err := SendOrder(ctx, log, "test", "order", doFetch, fetchRequest{answer: "x"}, parse, "c2"); exgate.ErrorCode(err) != exgate.CodeExchangeError {
		t.Fatalf("unreadable answer: got %v", err)
	}
	got := logs.String()
	for _, want := range []string{
		`level=WARN msg="test limit order not placed" clientOrderId=c1 pair=BTC_USDT err=refused`,
		`level=ERROR msg="test order answer unreadable" clientOrderId=c2 err=`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("logs lack %q:\n%s", want, got)
		}
	}
}
