package migration

import (
	"testing"
	"testing/fstest"
)

func TestLoad(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	tests := []struct {
		name    string
		files   fstest.MapFS
		want    []string // names in order
		wantErr bool
	}{
		{"version order, not name order", fstest.MapFS{
			"m/0010_late.sql": file("B"), "m/0002_early.sql": file("A"), "m/README.md": file("x"),
		}, []string{"0002_early.sql", "0010_late.sql"}, false},
		{"none", fstest.MapFS{"m/README.md": file("x")}, nil, false},
		{"no version", fstest.MapFS{"m/init.sql": file("A")}, nil, true},
		{"version zero", fstest.MapFS{"m/0000_init.sql": file("A")}, nil, true},
		{"shared version", fstest.MapFS{"m/0001_a.sql": file("A"), "m/1_b.sql": file("B")}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Load(tt.files, "m")
			if tt.wantErr {
				if err == nil {
					t.Fatalf("Load = %v; want an error", got)
				}
				return
			}
			if err != nil || len(got) != len(tt.want) {
				t.Fatalf("Load = %v, %v; want %v", got, err, tt.want)
			}
			for i, m := range got {
				if m.Name != tt.want[i] || m.SQL == "" || m.Version <= 0 {
					t.Errorf("migration %d = %+v; want %s", i, m, tt.want[i])
				}
			}
		})
	}
}
