package postgres

import "testing"

// TestSynchronousCommit: the store's sessions commit durably whatever the
// URL asks for.
func TestSynchronousCommit(t *testing.T) {
	for _, url := range []string{
		"postgres://u@127.0.0.1:5432/db",
		"postgres://u@127.0.0.1:5432/db?synchronous_commit=off",
		"postgres://u@127.0.0.1:5432/db?synchronous_commit=local&search_path=s",
	} {
		cfg, err := poolConfig(url)
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.ConnConfig.RuntimeParams["synchronous_commit"]; got != "on" {
			t.Errorf("%s: synchronous_commit %q, want on", url, got)
		}
	}
}
