package exgate

import (
	"slices"
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
