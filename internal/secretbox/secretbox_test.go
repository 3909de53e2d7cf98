package secretbox_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/exgate/exgate/internal/secretbox"
)

func mustBox(t *testing.T, key []byte) *secretbox.Box {
	t.Helper()
	b, err := secretbox.New(key)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return b
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		key     []byte
		wantErr bool
	}{
		{name: "32 bytes", key: make([]byte, 32)},
		{name: "empty", key: nil, wantErr: true},
		{name: "16 bytes", key: make([]byte, 16), wantErr: true},
		{name: "33 bytes", key: make([]byte, 33), wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := secretbox.New(tc.key)
			if (err != nil) != tc.wantErr {
				t.Fatalf("New(%d bytes) error = %v, wantErr %v", len(tc.key), err, tc.wantErr)
			}
		})
	}
}

func TestSealOpen(t *testing.T) {
	key := secretbox.NewKey()
	box := mustBox(t, key)
	aad := secretbox.AdditionalData("client_keys", "secret", "k1")
	sealed := box.Seal([]byte("hunter2"), aad)

	tests := []struct {
		name    string
		box     *secretbox.Box
		sealed  []byte
		aad     []byte
		want    string
		wantErr bool
	}{
		{name: "OK", box: box, sealed: sealed, aad: aad, want: "hunter2"},
		{name: "other row", box: box, sealed: sealed, aad: secretbox.AdditionalData("client_keys", "secret", "k2"), wantErr: true},
		{name: "no additional data", box: box, sealed: sealed, wantErr: true},
		{name: "other key", box: mustBox(t, secretbox.NewKey()), sealed: sealed, aad: aad, wantErr: true},
		{name: "flipped bit", box: box, sealed: flip(sealed, len(sealed)-1), aad: aad, wantErr: true},
		{name: "flipped nonce", box: box, sealed: flip(sealed, 0), aad: aad, wantErr: true},
		{name: "truncated", box: box, sealed: sealed[:20], aad: aad, wantErr: true},
		{name: "empty", box: box, sealed: nil, aad: aad, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.box.Open(tc.sealed, tc.aad)
			if tc.wantErr {
				if !errors.Is(err, secretbox.ErrOpen) {
					t.Fatalf("Open error = %v, want ErrOpen", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if string(got) != tc.want {
				t.Fatalf("Open = %q, want %q", got, tc.want)
			}
		})
	}

	t.Run("fresh nonce", func(t *testing.T) {
		again := box.Seal([]byte("hunter2"), aad)
		if bytes.Equal(again, sealed) {
			t.Fatal("two seals of the same plaintext are equal")
		}
		if bytes.Contains(sealed, []byte("hunter2")) {
			t.Fatal("sealed value contains the plaintext")
		}
		if len(sealed) != 12+len("hunter2")+16 {
			t.Fatalf("sealed length = %d, want nonce+plaintext+tag", len(sealed))
		}
	})
	t.Run("empty plaintext", func(t *testing.T) {
		got, err := box.Open(box.Seal(nil, aad), aad)
		if err != nil || len(got) != 0 {
			t.Fatalf("Open = %q, %v; want empty", got, err)
		}
	})
}

func flip(b []byte, i int) []byte {
	out := bytes.Clone(b)
	out[i] ^= 1
	return out
}

func TestAdditionalData(t *testing.T) {
	tests := []struct {
		name string
		a, b []string
	}{
		{name: "split point", a: []string{"ab", "c"}, b: []string{"a", "bc"}},
		{name: "empty part", a: []string{"a", ""}, b: []string{"a"}},
		{name: "separator inside", a: []string{"a\x00b"}, b: []string{"a", "b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if bytes.Equal(secretbox.AdditionalData(tc.a...), secretbox.AdditionalData(tc.b...)) {
				t.Fatalf("AdditionalData(%q) == AdditionalData(%q)", tc.a, tc.b)
			}
		})
	}
}

func TestParseKey(t *testing.T) {
	key := bytes.Repeat([]byte{0xfb}, 32)
	tests := []struct {
		name    string
		in      string
		wantErr bool
	}{
		{name: "std", in: base64.StdEncoding.EncodeToString(key)},
		{name: "std with newline", in: base64.StdEncoding.EncodeToString(key) + "\n"},
		{name: "raw std", in: base64.RawStdEncoding.EncodeToString(key)},
		{name: "url", in: base64.URLEncoding.EncodeToString(key)},
		{name: "raw url", in: base64.RawURLEncoding.EncodeToString(key)},
		{name: "empty", in: "  ", wantErr: true},
		{name: "short", in: base64.StdEncoding.EncodeToString(key[:31]), wantErr: true},
		{name: "long", in: base64.StdEncoding.EncodeToString(append(key, 1)), wantErr: true},
		{name: "not base64", in: strings.Repeat("!", 44), wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := secretbox.ParseKey(tc.in)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("ParseKey(%q) = %x, want error", tc.in, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseKey(%q): %v", tc.in, err)
			}
			if !bytes.Equal(got, key) {
				t.Fatalf("ParseKey(%q) = %x, want %x", tc.in, got, key)
			}
		})
	}
}

func TestLoadOrCreateKeyFile(t *testing.T) {
	t.Run("creates", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "data", "sub")
		path := filepath.Join(dir, "master.key")
		key, err := secretbox.LoadOrCreateKeyFile(path)
		if err != nil {
			t.Fatalf("LoadOrCreateKeyFile: %v", err)
		}
		if len(key) != secretbox.KeySize {
			t.Fatalf("key is %d bytes", len(key))
		}
		checkMode(t, path, 0o600)
		checkMode(t, dir, 0o700|os.ModeDir)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := secretbox.ParseKey(string(b)); err != nil || !bytes.Equal(got, key) {
			t.Fatalf("file holds %q, want base64 of the returned key", b)
		}
		again, err := secretbox.LoadOrCreateKeyFile(path)
		if err != nil || !bytes.Equal(again, key) {
			t.Fatalf("second load = %x, %v; want the same key", again, err)
		}
		entries, err := os.ReadDir(dir)
		if err != nil || len(entries) != 1 {
			t.Fatalf("directory holds %v, %v; want only the key file", entries, err)
		}
	})
	t.Run("reads existing", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "master.key")
		want := secretbox.NewKey()
		if err := os.WriteFile(path, []byte(secretbox.EncodeKey(want)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := secretbox.LoadOrCreateKeyFile(path)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("LoadOrCreateKeyFile = %x, %v; want %x", got, err, want)
		}
	})
	t.Run("loose permissions refused", func(t *testing.T) {
		for _, mode := range []os.FileMode{0o640, 0o604, 0o644, 0o660} {
			path := filepath.Join(t.TempDir(), "master.key")
			if err := os.WriteFile(path, []byte(secretbox.EncodeKey(secretbox.NewKey())+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, mode); err != nil {
				t.Fatal(err)
			}
			_, err := secretbox.LoadOrCreateKeyFile(path)
			if err == nil || !strings.Contains(err.Error(), "chmod 600") {
				t.Fatalf("mode %04o: err = %v; want a refusal saying chmod 600", mode, err)
			}
		}
	})
	t.Run("corrupt file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "master.key")
		if err := os.WriteFile(path, []byte("not a key"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := secretbox.LoadOrCreateKeyFile(path); err == nil {
			t.Fatal("LoadOrCreateKeyFile of a corrupt file succeeded")
		}
	})
	t.Run("concurrent creators agree", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "data", "master.key")
		const n = 16
		keys := make([][]byte, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { keys[i], errs[i] = secretbox.LoadOrCreateKeyFile(path) })
		}
		wg.Wait()
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("creator %d: %v", i, errs[i])
			}
			if !bytes.Equal(keys[i], keys[0]) {
				t.Fatalf("creator %d got another key", i)
			}
		}
	})
}

func checkMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode() != want {
		t.Fatalf("%s mode = %v, want %v", path, fi.Mode(), want)
	}
}
