package sim

import (
	"encoding/binary"
	"math/bits"
)

// keccak256 is the original Keccak-256 (padding byte 0x01), the hash of
// Ethereum's EIP-55 checksum. The standard library's crypto/sha3 is FIPS
// 202 SHA3-256, which differs only in the padding byte (0x06); the test
// checks this permutation against it.
func keccak256(data []byte) [32]byte { return keccakSponge(data, 0x01) }

// keccakSponge absorbs data at the 136-byte rate of a 256-bit output with
// the given domain padding byte and squeezes 32 bytes.
func keccakSponge(data []byte, pad byte) [32]byte {
	const rate = 136
	var a [25]uint64
	for len(data) >= rate {
		absorb(&a, data[:rate])
		keccakF1600(&a)
		data = data[rate:]
	}
	var last [rate]byte
	copy(last[:], data)
	last[len(data)] ^= pad
	last[rate-1] ^= 0x80
	absorb(&a, last[:])
	keccakF1600(&a)
	var out [32]byte
	for i := range 4 {
		binary.LittleEndian.PutUint64(out[8*i:], a[i])
	}
	return out
}

func absorb(a *[25]uint64, block []byte) {
	for i := range len(block) / 8 {
		a[i] ^= binary.LittleEndian.Uint64(block[8*i:])
	}
}

var keccakRC = [24]uint64{
	0x0000000000000001, 0x0000000000008082, 0x800000000000808a, 0x8000000080008000,
	0x000000000000808b, 0x0000000080000001, 0x8000000080008081, 0x8000000000008009,
	0x000000000000008a, 0x0000000000000088, 0x0000000080008009, 0x000000008000000a,
	0x000000008000808b, 0x800000000000008b, 0x8000000000008089, 0x8000000000008003,
	0x8000000000008002, 0x8000000000000080, 0x000000000000800a, 0x800000008000000a,
	0x8000000080008081, 0x8000000000008080, 0x0000000080000001, 0x8000000080008008,
}

// keccakRot[x+5y] is the rotation of lane (x, y) in the rho step.
var keccakRot = [25]int{
	0, 1, 62, 28, 27,
	36, 44, 6, 55, 20,
	3, 10, 43, 25, 39,
	41, 45, 15, 21, 8,
	18, 2, 61, 56, 14,
}

// keccakF1600 is the Keccak-f[1600] permutation on lanes a[x+5y].
func keccakF1600(a *[25]uint64) {
	var c, d [5]uint64
	var b [25]uint64
	for round := range 24 {
		for x := range 5 {
			c[x] = a[x] ^ a[x+5] ^ a[x+10] ^ a[x+15] ^ a[x+20]
		}
		for x := range 5 {
			d[x] = c[(x+4)%5] ^ bits.RotateLeft64(c[(x+1)%5], 1)
		}
		for i := range 25 {
			a[i] ^= d[i%5]
		}
		for x := range 5 {
			for y := range 5 {
				// pi: (x, y) moves to (y, 2x+3y).
				b[y+5*((2*x+3*y)%5)] = bits.RotateLeft64(a[x+5*y], keccakRot[x+5*y])
			}
		}
		for y := range 5 {
			for x := range 5 {
				a[x+5*y] = b[x+5*y] ^ (^b[(x+1)%5+5*y] & b[(x+2)%5+5*y])
			}
		}
		a[0] ^= keccakRC[round]
	}
}
