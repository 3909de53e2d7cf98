package sim

import (
	"crypto/sha256"
	"encoding/binary"
	"testing"
)

func TestValidAddress(t *testing.T) {
	tests := []struct {
		name   string
		format addressFormat
		addr   string
		valid  bool
	}{
		{"eip55 1", formatEthereum, "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", true},
		{"eip55 2", formatEthereum, "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359", true},
		{"eip55 3", formatEthereum, "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB", true},
		{"eip55 4", formatEthereum, "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb", true},
		{"eip55 all caps", formatEthereum, "0x52908400098527886E0F7030069857D2E4169EE7", true},
		{"all lower case", formatEthereum, "0xde709f2102306220921060314715629080e2fb77", true},
		{"bad eip55 checksum", formatEthereum, "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD", false},
		{"ethereum too short", formatEthereum, "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeA", false},
		{"ethereum no 0x", formatEthereum, "5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed00", false},
		{"ethereum not hex", formatEthereum, "0xgaAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", false},
		{"p2pkh", formatBitcoin, "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", true},
		{"p2sh", formatBitcoin, "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy", true},
		{"p2wpkh", formatBitcoin, "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", true},
		{"p2wpkh upper case", formatBitcoin, "BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4", true},
		{"p2wsh", formatBitcoin, "bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3", true},
		{"taproot", formatBitcoin, "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0", true},
		{"taproot with a bech32 checksum", formatBitcoin, "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd", false},
		{"p2pkh bad checksum", formatBitcoin, "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN3", false},
		{"p2wpkh bad checksum", formatBitcoin, "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5", false},
		{"bech32 mixed case", formatBitcoin, "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8F3t4", false},
		{"testnet", formatBitcoin, "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx", false},
		{"tron address on bitcoin", formatBitcoin, "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", false},
		{"tron", formatTron, "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", true},
		{"tron bad checksum", formatTron, "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u", false},
		{"bitcoin address on tron", formatTron, "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", false},
		{"ethereum address on tron", formatTron, "0x52908400098527886E0F7030069857D2E4169EE7", false},
		{"solana system program", formatSolana, "11111111111111111111111111111111", true},
		{"solana wrapped sol", formatSolana, "So11111111111111111111111111111111111111112", true},
		{"solana token program", formatSolana, "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA", true},
		{"solana too short", formatSolana, "So1111111111111111111", false},
		{"solana bad character", formatSolana, "So11111111111111111111111111111111111111110", false},
		{"ripple genesis", formatRipple, "rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh", true},
		{"ripple account zero", formatRipple, "rrrrrrrrrrrrrrrrrrrrrhoLvTp", true},
		{"ripple bad checksum", formatRipple, "rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTi", false},
		{"bitcoin address on ripple", formatRipple, "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", false},
		{"empty", formatRipple, "", false},
		{"spaces", formatEthereum, " 0x52908400098527886E0F7030069857D2E4169EE7", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := validAddress(tc.format, tc.addr); (err == nil) != tc.valid {
				t.Errorf("validAddress(%q) = %v, want valid %v", tc.addr, err, tc.valid)
			}
		})
	}
}

func TestNewAddressIsValid(t *testing.T) {
	prefixes := map[addressFormat]string{formatBitcoin: "bc1q", formatEthereum: "0x", formatTron: "T", formatRipple: "r"}
	for _, f := range []addressFormat{formatBitcoin, formatEthereum, formatTron, formatSolana, formatRipple} {
		for i := range 200 {
			var b [8]byte
			binary.BigEndian.PutUint64(b[:], uint64(i))
			addr := newAddress(f, sha256.Sum256(b[:]))
			if err := validAddress(f, addr); err != nil {
				t.Fatalf("format %d: generated %q is invalid: %v", f, addr, err)
			}
			if p := prefixes[f]; len(addr) < len(p) || addr[:len(p)] != p {
				t.Fatalf("format %d: generated %q, want prefix %q", f, addr, p)
			}
		}
	}
}

func TestValidTag(t *testing.T) {
	for tag, valid := range map[string]bool{
		"0": true, "12345": true, "4294967295": true,
		"": false, "4294967296": false, "012": false, "-1": false, "1a": false, " 1": false,
	} {
		if err := validTag(tag); (err == nil) != valid {
			t.Errorf("validTag(%q) = %v, want valid %v", tag, err, valid)
		}
	}
}

// FuzzValidAddress checks that no client-supplied address makes the
// validators panic, and that an accepted segwit or Ethereum address is
// accepted again in its canonical form.
func FuzzValidAddress(f *testing.F) {
	for _, s := range []string{
		"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2",
		"0x52908400098527886E0F7030069857D2E4169EE7", "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t",
		"So11111111111111111111111111111111111111112", "rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh",
		"bc1", "1", "r", "", "0x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, addr string) {
		for _, format := range []addressFormat{formatBitcoin, formatEthereum, formatTron, formatSolana, formatRipple} {
			if validAddress(format, addr) != nil {
				continue
			}
			switch format {
			case formatEthereum:
				if err := validAddress(format, eip55(addr[2:])); err != nil {
					t.Errorf("%q is valid but its EIP-55 form is not: %v", addr, err)
				}
			case formatSolana:
				b, _ := base58Decode(bitcoinAlphabet, addr)
				if base58Encode(bitcoinAlphabet, b) != addr {
					t.Errorf("%q does not round-trip through base58", addr)
				}
			}
		}
		_ = validTag(addr)
	})
}
