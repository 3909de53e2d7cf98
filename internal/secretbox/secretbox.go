// Package secretbox seals the secrets exgate keeps at rest (client secrets,
// exchange API secrets and passphrases) with AES-256-GCM under one 32-byte
// master key.
//
// A sealed value is a random 12-byte nonce followed by the ciphertext and
// its 16-byte tag. Callers pass additional data naming the row and column a
// value belongs to, so that a sealed value copied into another row or column
// fails to open.
package secretbox

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// KeySize is the length of a master key in bytes.
const KeySize = 32

// ErrOpen is returned by Open when a sealed value is malformed, was sealed
// under another key or with other additional data, or was tampered with.
var ErrOpen = errors.New("secretbox: cannot open sealed value")

// Box seals and opens values under one master key. It is safe for
// concurrent use.
type Box struct {
	aead cipher.AEAD
}

// New returns a Box for a KeySize-byte master key.
func New(key []byte) (*Box, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("secretbox: master key is %d bytes, want %d", len(key), KeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secretbox: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secretbox: %w", err)
	}
	return &Box{aead: aead}, nil
}

// Seal encrypts and authenticates plaintext together with additionalData
// and returns a fresh random nonce followed by the ciphertext. The same
// additionalData must be given to Open.
func (b *Box) Seal(plaintext, additionalData []byte) []byte {
	n := b.aead.NonceSize()
	out := make([]byte, n, n+len(plaintext)+b.aead.Overhead())
	_, _ = rand.Read(out) // crypto/rand.Read never fails
	return b.aead.Seal(out, out[:n], plaintext, additionalData)
}

// Open authenticates and decrypts a value made by Seal with the same
// additionalData. It returns an error wrapping ErrOpen when the value does
// not authenticate.
func (b *Box) Open(sealed, additionalData []byte) ([]byte, error) {
	n := b.aead.NonceSize()
	if len(sealed) < n+b.aead.Overhead() {
		return nil, fmt.Errorf("%w: %d bytes is too short", ErrOpen, len(sealed))
	}
	plaintext, err := b.aead.Open(nil, sealed[:n], sealed[n:], additionalData)
	if err != nil {
		return nil, ErrOpen
	}
	return plaintext, nil
}

// AdditionalData encodes parts (for example a table, a column and a row's
// key) unambiguously as additional data for Seal and Open: each part is
// written with its length in front, so that no two different lists of
// parts give the same bytes.
func AdditionalData(parts ...string) []byte {
	size := 0
	for _, p := range parts {
		size += binary.MaxVarintLen64 + len(p)
	}
	out := make([]byte, 0, size)
	for _, p := range parts {
		out = binary.AppendUvarint(out, uint64(len(p)))
		out = append(out, p...)
	}
	return out
}

// ParseKey decodes a base64 master key (standard or URL alphabet, padded or
// not, surrounding spaces ignored) and checks that it is KeySize bytes.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("secretbox: master key is empty")
	}
	for _, enc := range []*base64.Encoding{
		base64.StdEncoding, base64.RawStdEncoding,
		base64.URLEncoding, base64.RawURLEncoding,
	} {
		key, err := enc.DecodeString(s)
		if err != nil {
			continue
		}
		if len(key) != KeySize {
			return nil, fmt.Errorf("secretbox: master key is %d bytes, want %d", len(key), KeySize)
		}
		return key, nil
	}
	return nil, errors.New("secretbox: master key is not valid base64")
}

// EncodeKey returns key in the base64 form ParseKey and the key file use.
func EncodeKey(key []byte) string {
	return base64.StdEncoding.EncodeToString(key)
}

// NewKey returns a fresh random master key.
func NewKey() []byte {
	key := make([]byte, KeySize)
	_, _ = rand.Read(key) // crypto/rand.Read never fails
	return key
}
