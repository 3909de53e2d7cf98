package exgate

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		s    string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"abcdefghijk", 10, "abcdefghij…"},
		// "é" is two bytes: a cut inside it moves back to its start.
		{"abcdefghié", 10, "abcdefghi…"},
		{strings.Repeat("€", 4), 4, "€…"},
	} {
		got := Clip(tc.s, tc.max)
		if got != tc.want || !utf8.ValidString(got) {
			t.Errorf("Clip(%q, %d) = %q, want %q", tc.s, tc.max, got, tc.want)
		}
	}
}
