package sqlstore

import "testing"

func TestTyped(t *testing.T) {
	d := Dialect{Name: "test", Types: Types{Int: "BIGINT", Bytes: "BYTEA", Serial: "SERIAL"}}
	tests := []struct {
		name, query, want string
		wantErr           bool
	}{
		{"every placeholder", "a {{int}}, b {{bytes}}, c {{int}}", "a BIGINT, b BYTEA, c BIGINT", false},
		{"none", "SELECT 1", "SELECT 1", false},
		{"unknown placeholder", "id {{uuid}}", "", true},
	}
	if got, err := (Dialect{Types: Types{Int: "BIGINT"}}).typed("SELECT 1"); err == nil {
		t.Errorf("typed with types missing = %q, want an error", got)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := d.typed(tc.query)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Fatalf("typed(%q) = %q, %v; want %q, error %v", tc.query, got, err, tc.want, tc.wantErr)
			}
		})
	}
}
