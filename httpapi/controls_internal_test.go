package httpapi

import (
	"net/http/httptest"
	"net/netip"
	"testing"
)

func TestClientAddr(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	tests := []struct {
		name   string
		remote string
		xff    []string
		want   string
	}{
		{"peer", "192.0.2.1:5555", nil, "192.0.2.1"},
		{"untrusted peer's header ignored", "192.0.2.1:5555", []string{"203.0.113.7"}, "192.0.2.1"},
		{"trusted peer, one hop", "10.0.0.2:5555", []string{"203.0.113.7"}, "203.0.113.7"},
		{"right-most untrusted", "10.0.0.2:5555", []string{"203.0.113.7, 198.51.100.1"}, "198.51.100.1"},
		{"trusted hops skipped", "10.0.0.2:5555", []string{"203.0.113.7, 10.0.0.9"}, "203.0.113.7"},
		{"several header lines are one list", "10.0.0.2:5555", []string{"203.0.113.7", "10.0.0.9"}, "203.0.113.7"},
		{"all trusted: the left-most", "10.0.0.2:5555", []string{"10.0.0.7, 10.0.0.9"}, "10.0.0.7"},
		{"trusted peer without header", "10.0.0.2:5555", nil, "10.0.0.2"},
		{"IPv6 peer", "[::1]:5555", []string{"2001:db8::5"}, "2001:db8::5"},
		{"IPv4-mapped peer", "[::ffff:192.0.2.1]:5555", nil, "192.0.2.1"},
		{"hop with a port", "10.0.0.2:5555", []string{"203.0.113.7:1234"}, "203.0.113.7"},
		{"nonsense from a trusted proxy", "10.0.0.2:5555", []string{"203.0.113.7, bogus"}, "invalid IP"},
		{"unreadable peer", "pipe", nil, "invalid IP"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tc.remote
			for _, v := range tc.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := clientAddr(r, trusted).String(); got != tc.want {
				t.Errorf("clientAddr = %s, want %s", got, tc.want)
			}
		})
	}
}
