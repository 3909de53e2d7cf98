package exgate

import (
	"slices"
	"strings"
	"testing"
)

func TestPermissionsRoundTrip(t *testing.T) {
	tests := []struct {
		in      string
		want    []Permission
		text    string
		wantErr bool
	}{
		{"", nil, "", false},
		{"read", []Permission{PermissionRead}, "read", false},
		{" Read , trade,trade,,withdraw", []Permission{PermissionRead, PermissionTrade, PermissionWithdraw}, "read,trade,withdraw", false},
		{"read,admin", nil, "", true},
	}
	for _, tt := range tests {
		got, err := ParsePermissions(tt.in)
		if tt.wantErr {
			if err == nil {
				t.Errorf("ParsePermissions(%q) = %v; want an error", tt.in, got)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("ParsePermissions(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			continue
		}
		text := FormatPermissions(got)
		if text != tt.text {
			t.Errorf("FormatPermissions(%v) = %q; want %q", got, text, tt.text)
		}
		if back, err := ParsePermissions(text); err != nil || !slices.Equal(back, got) {
			t.Errorf("ParsePermissions(FormatPermissions(%v)) = %v, %v", got, back, err)
		}
	}
}

// TestCredentialCheck: a name no store would keep is refused naming the
// field; the exchanges' own rules are the adapters' (cmd/internal/gateway
// TestCheckCredential).
func TestCredentialCheck(t *testing.T) {
	tests := []struct {
		name  string
		c     Credential
		param string
	}{
		{"a name", Credential{Name: "paper", Exchange: "sim"}, ""},
		{"no name", Credential{Exchange: "sim"}, "name"},
		{"name with a space", Credential{Name: "a b", Exchange: "sim"}, "name"},
		{"name too long", Credential{Name: strings.Repeat("n", 65), Exchange: "sim"}, "name"},
	}
	for _, tc := range tests {
		err := tc.c.Check()
		if tc.param == "" {
			if err != nil {
				t.Errorf("%s: Check = %v, want nil", tc.name, err)
			}
			continue
		}
		e, ok := err.(*Error)
		if !ok || e.Param != tc.param || e.Code != CodeInvalidParameter {
			t.Errorf("%s: Check = %v, want INVALID_PARAMETER on %s", tc.name, err, tc.param)
		}
	}
}
