package sim

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"golang.org/x/crypto/sha3"
)

// addressFormat is the address format of a network.
type addressFormat int

const (
	// formatBitcoin: a bech32 (witness v0) or bech32m (v1+) address with
	// the human-readable part bc, or a base58check P2PKH (1...) or P2SH
	// (3...) address.
	formatBitcoin addressFormat = iota + 1
	// formatEthereum: 0x and 40 hex digits (ETH and BSC); mixed case must
	// carry a valid EIP-55 checksum.
	formatEthereum
	// formatTron: base58check of 0x41 and a 20-byte account (T...).
	formatTron
	// formatSolana: base58 of a 32-byte public key.
	formatSolana
	// formatRipple: base58check in the XRP Ledger alphabet of 0x00 and a
	// 20-byte account (r...), with a numeric destination tag.
	formatRipple
)

// Base58 alphabets: Bitcoin's (also Tron's and Solana's) and the XRP
// Ledger's.
const (
	bitcoinAlphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
	rippleAlphabet  = "rpshnaf39wBUDNEGHJKLM4PQRST7VWXYZ2bcdeCg65jkm8oFqi1tuvAxyz"
)

// newAddress writes a 32-byte seed as an address of the format.
func newAddress(f addressFormat, seed [32]byte) string {
	switch f {
	case formatBitcoin:
		return segwitAddress("bc", 0, seed[:20])
	case formatEthereum:
		return eip55(hex.EncodeToString(seed[:20]))
	case formatTron:
		return base58Check(bitcoinAlphabet, append([]byte{0x41}, seed[:20]...))
	case formatSolana:
		return base58Encode(bitcoinAlphabet, seed[:])
	case formatRipple:
		return base58Check(rippleAlphabet, append([]byte{0x00}, seed[:20]...))
	}
	return ""
}

// newTag writes a destination tag from a hash: nine or ten digits, as
// exchanges hand out.
func newTag(h uint64) string {
	return strconv.FormatUint(100_000_000+h%4_000_000_000, 10)
}

// validAddress reports what is wrong with addr in the format, or nil.
func validAddress(f addressFormat, addr string) error {
	if addr == "" || len(addr) > 128 || strings.TrimSpace(addr) != addr {
		return errors.New("empty, too long or padded with spaces")
	}
	switch f {
	case formatBitcoin:
		if strings.HasPrefix(strings.ToLower(addr), "bc1") {
			return validSegwit("bc", addr)
		}
		payload, err := base58CheckDecode(bitcoinAlphabet, addr)
		if err != nil {
			return err
		}
		if len(payload) != 21 || (payload[0] != 0x00 && payload[0] != 0x05) {
			return errors.New("not a P2PKH (1...) or P2SH (3...) address")
		}
		return nil
	case formatEthereum:
		return validEthereum(addr)
	case formatTron:
		payload, err := base58CheckDecode(bitcoinAlphabet, addr)
		if err != nil {
			return err
		}
		if len(payload) != 21 || payload[0] != 0x41 {
			return errors.New("not a Tron account address (T...)")
		}
		return nil
	case formatSolana:
		b, err := base58Decode(bitcoinAlphabet, addr)
		if err != nil {
			return err
		}
		if len(b) != 32 {
			return fmt.Errorf("decodes to %d bytes, want a 32-byte public key", len(b))
		}
		return nil
	case formatRipple:
		payload, err := base58CheckDecode(rippleAlphabet, addr)
		if err != nil {
			return err
		}
		if len(payload) != 21 || payload[0] != 0x00 {
			return errors.New("not a classic XRP Ledger address (r...)")
		}
		return nil
	}
	return errors.New("unknown address format")
}

// validTag checks a destination tag: a decimal 32-bit unsigned integer.
func validTag(tag string) error {
	if tag == "" || (len(tag) > 1 && tag[0] == '0') {
		return errors.New("want a decimal number without leading zeros")
	}
	if _, err := strconv.ParseUint(tag, 10, 32); err != nil {
		return errors.New("want a decimal number from 0 to 4294967295")
	}
	return nil
}

// validEthereum checks 0x and 40 hex digits, and the EIP-55 checksum when
// the letters are of mixed case.
func validEthereum(addr string) error {
	if len(addr) != 42 || addr[:2] != "0x" {
		return errors.New("want 0x followed by 40 hex digits")
	}
	digits := addr[2:]
	if _, err := hex.DecodeString(digits); err != nil {
		return errors.New("want 0x followed by 40 hex digits")
	}
	if digits == strings.ToLower(digits) || digits == strings.ToUpper(digits) {
		return nil
	}
	if eip55(digits) != addr {
		return errors.New("bad EIP-55 checksum (mixed-case letters)")
	}
	return nil
}

// eip55 writes 40 hex digits with the EIP-55 checksum: a letter is
// upper-case when the matching nibble of Keccak-256 of the lower-case
// digits is 8 or more.
func eip55(digits string) string {
	lower := strings.ToLower(digits)
	h := sha3.NewLegacyKeccak256()
	h.Write([]byte(lower))
	sum := h.Sum(nil)
	out := []byte("0x" + lower)
	for i := range len(lower) {
		nibble := sum[i/2] >> 4
		if i%2 == 1 {
			nibble = sum[i/2] & 0x0f
		}
		if c := out[2+i]; c >= 'a' && c <= 'f' && nibble >= 8 {
			out[2+i] = c - 'a' + 'A'
		}
	}
	return string(out)
}

// base58Encode writes b in the alphabet, each leading zero byte as the
// alphabet's first character.
func base58Encode(alphabet string, b []byte) string {
	zeros := 0
	for zeros < len(b) && b[zeros] == 0 {
		zeros++
	}
	n := new(big.Int).SetBytes(b)
	radix, mod := big.NewInt(58), new(big.Int)
	var out []byte
	for n.Sign() > 0 {
		n.QuoRem(n, radix, mod)
		out = append(out, alphabet[mod.Int64()])
	}
	for range zeros {
		out = append(out, alphabet[0])
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return string(out)
}

// base58Decode reads s in the alphabet.
func base58Decode(alphabet, s string) ([]byte, error) {
	if s == "" || len(s) > 128 {
		return nil, errors.New("empty or too long for base58")
	}
	n, radix := new(big.Int), big.NewInt(58)
	zeros := 0
	for i := range len(s) {
		d := strings.IndexByte(alphabet, s[i])
		if d < 0 {
			return nil, fmt.Errorf("character %q is not in the base58 alphabet", s[i])
		}
		if d == 0 && zeros == i {
			zeros++
		}
		n.Mul(n, radix)
		n.Add(n, big.NewInt(int64(d)))
	}
	return append(make([]byte, zeros), n.Bytes()...), nil
}

// checksum4 is the first four bytes of double SHA-256.
func checksum4(b []byte) []byte {
	first := sha256.Sum256(b)
	second := sha256.Sum256(first[:])
	return second[:4]
}

// base58Check writes payload with its four-byte checksum.
func base58Check(alphabet string, payload []byte) string {
	return base58Encode(alphabet, append(payload, checksum4(payload)...))
}

// base58CheckDecode reads a base58check string and returns its payload.
func base58CheckDecode(alphabet, s string) ([]byte, error) {
	b, err := base58Decode(alphabet, s)
	if err != nil {
		return nil, err
	}
	if len(b) < 5 {
		return nil, errors.New("too short for base58check")
	}
	payload := b[:len(b)-4]
	if !bytes.Equal(checksum4(payload), b[len(b)-4:]) {
		return nil, errors.New("bad base58check checksum")
	}
	return payload, nil
}

// Bech32 (BIP 173) and bech32m (BIP 350).
const (
	bech32Charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
	bech32Const   = 1
	bech32mConst  = 0x2bc830a3
)

func bech32Polymod(values []byte) uint32 {
	gen := [5]uint32{0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3}
	chk := uint32(1)
	for _, v := range values {
		top := chk >> 25
		chk = (chk&0x1ffffff)<<5 ^ uint32(v)
		for i := range 5 {
			if (top>>i)&1 == 1 {
				chk ^= gen[i]
			}
		}
	}
	return chk
}

func bech32HRPExpand(hrp string) []byte {
	out := make([]byte, 0, 2*len(hrp)+1)
	for i := range len(hrp) {
		out = append(out, hrp[i]>>5)
	}
	out = append(out, 0)
	for i := range len(hrp) {
		out = append(out, hrp[i]&31)
	}
	return out
}

// convertBits regroups bits from groups of from to groups of to.
func convertBits(data []byte, from, to uint, pad bool) ([]byte, error) {
	var acc, bits uint
	maxv := uint(1)<<to - 1
	var out []byte
	for _, v := range data {
		if uint(v)>>from != 0 {
			return nil, errors.New("invalid data value")
		}
		acc = acc<<from | uint(v)
		bits += from
		for bits >= to {
			bits -= to
			out = append(out, byte(acc>>bits&maxv))
		}
	}
	if pad {
		if bits > 0 {
			out = append(out, byte(acc<<(to-bits)&maxv))
		}
	} else if bits >= from || acc<<(to-bits)&maxv != 0 {
		return nil, errors.New("invalid padding")
	}
	return out, nil
}

// segwitAddress writes a witness program as a bech32 (v0) or bech32m
// address.
func segwitAddress(hrp string, version byte, program []byte) string {
	conv, _ := convertBits(program, 8, 5, true) // 8-bit input never fails
	data := append([]byte{version}, conv...)
	c := uint32(bech32Const)
	if version > 0 {
		c = bech32mConst
	}
	values := append(bech32HRPExpand(hrp), data...)
	mod := bech32Polymod(append(values, 0, 0, 0, 0, 0, 0)) ^ c
	var b strings.Builder
	b.WriteString(hrp)
	b.WriteByte('1')
	for _, d := range data {
		b.WriteByte(bech32Charset[d])
	}
	for i := range 6 {
		b.WriteByte(bech32Charset[(mod>>(5*(5-i)))&31])
	}
	return b.String()
}

// validSegwit checks a segwit address of the human-readable part hrp.
func validSegwit(hrp, addr string) error {
	if addr != strings.ToLower(addr) && addr != strings.ToUpper(addr) {
		return errors.New("bech32 address in mixed case")
	}
	s := strings.ToLower(addr)
	sep := strings.LastIndexByte(s, '1')
	if sep != len(hrp) || s[:sep] != hrp || len(s) > 90 || len(s)-sep-1 < 7 {
		return fmt.Errorf("want a %s1... bech32 address", hrp)
	}
	data := make([]byte, 0, len(s)-sep-1)
	for i := sep + 1; i < len(s); i++ {
		d := strings.IndexByte(bech32Charset, s[i])
		if d < 0 {
			return fmt.Errorf("character %q is not in the bech32 alphabet", s[i])
		}
		data = append(data, byte(d))
	}
	version := data[0]
	want := uint32(bech32Const)
	if version > 0 {
		want = bech32mConst
	}
	if bech32Polymod(append(bech32HRPExpand(hrp), data...)) != want {
		return errors.New("bad bech32 checksum")
	}
	program, err := convertBits(data[1:len(data)-6], 5, 8, false)
	switch {
	case err != nil:
		return fmt.Errorf("witness program: %w", err)
	case version > 16:
		return errors.New("witness version above 16")
	case len(program) < 2 || len(program) > 40:
		return errors.New("witness program of a bad length")
	case version == 0 && len(program) != 20 && len(program) != 32:
		return errors.New("version 0 witness program of neither 20 nor 32 bytes")
	}
	return nil
}
