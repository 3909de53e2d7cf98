package secretbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// LoadOrCreateKeyFile returns the master key stored in base64 at path,
// creating the file with a fresh random key when it does not exist. The
// directory is created with mode 0700 and the file with mode 0600.
//
// Processes that start together agree on one key: the new key is written
// completely to a temporary file (created with O_EXCL) that is then
// hard-linked into place, which fails when path already exists; the loser
// of that race discards its key and reads the winner's. A reader therefore
// never sees a partly written key file. On a file system without hard
// links the file is created in place with O_EXCL instead.
func LoadOrCreateKeyFile(path string) ([]byte, error) {
	key, err := readKeyFile(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("secretbox: create key directory: %w", err)
	}
	key = NewKey()
	if err := publishKeyFile(path, key); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return readKeyFile(path)
		}
		return nil, err
	}
	return key, nil
}

// readKeyFile reads and parses an existing key file. A file that group or
// others may read is refused: the key decrypts every stored secret.
func readKeyFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("secretbox: read key file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("secretbox: read key file: %w", err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 && runtime.GOOS != "windows" {
		return nil, fmt.Errorf("secretbox: key file %s is readable by group or others (mode %04o); it decrypts every stored secret: run chmod 600 %s", path, perm, path)
	}
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return nil, fmt.Errorf("secretbox: read key file: %w", err)
	}
	key, err := ParseKey(string(b))
	if err != nil {
		return nil, fmt.Errorf("secretbox: key file %s: %w", path, err)
	}
	return key, nil
}

// publishKeyFile writes key to a temporary file beside path and links it
// to path. It returns an error wrapping fs.ErrExist when path exists.
func publishKeyFile(path string, key []byte) (err error) {
	// os.CreateTemp opens with O_EXCL and mode 0600.
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("secretbox: create key file: %w", err)
	}
	defer func() {
		_ = tmp.Close()
		_ = os.Remove(tmp.Name())
	}()
	if err := tmp.Chmod(0o600); err != nil {
		return fmt.Errorf("secretbox: create key file: %w", err)
	}
	if _, err := tmp.WriteString(EncodeKey(key) + "\n"); err != nil {
		return fmt.Errorf("secretbox: write key file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("secretbox: write key file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("secretbox: write key file: %w", err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("secretbox: create key file: %w", err)
		}
		// The file system has no hard links: create the file in place.
		return writeKeyFileExcl(path, key)
	}
	return nil
}

// writeKeyFileExcl creates path with O_EXCL and writes key to it. It
// returns an error wrapping fs.ErrExist when path exists.
func writeKeyFileExcl(path string, key []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("secretbox: create key file: %w", err)
	}
	_, err = f.WriteString(EncodeKey(key) + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
		return fmt.Errorf("secretbox: write key file: %w", err)
	}
	return nil
}
