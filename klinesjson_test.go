package exgate_test

import (
	"context"
	"testing"

	"github.com/exgate/exgate"
)

// klinesOnly answers klines as values; klinesJSON also encodes them itself.
type klinesOnly struct{ exgate.Exchange }

func (klinesOnly) RecentKlines(context.Context, exgate.Credential, exgate.KlineRequest) ([]exgate.Kline, error) {
	return []exgate.Kline{{OpenTime: 1, CloseTime: 2}}, nil
}

type klinesJSON struct{ klinesOnly }

func (klinesJSON) AppendRecentKlinesJSON(_ context.Context, dst []byte, _ exgate.Credential, _ exgate.KlineRequest) ([]byte, error) {
	return append(dst, "own"...), nil
}

// TestAppendRecentKlinesJSON: the one path from an exchange to encoded
// klines uses the exchange's own encoding when it has one.
func TestAppendRecentKlinesJSON(t *testing.T) {
	encoded := string(exgate.AppendKlinesJSON([]byte("x"), []exgate.Kline{{OpenTime: 1, CloseTime: 2}}))
	tests := []struct {
		name string
		ex   exgate.Exchange
		want string
	}{
		{"encoded from values", klinesOnly{}, encoded},
		{"the exchange's own JSON", klinesJSON{}, "xown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := exgate.AppendRecentKlinesJSON(t.Context(), tt.ex, []byte("x"), exgate.Credential{}, exgate.KlineRequest{})
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %s, %v; want %s", got, err, tt.want)
			}
		})
	}
}
