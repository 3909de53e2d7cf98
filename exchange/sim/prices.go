package sim

import (
	"math/bits"
	"strconv"
	"time"

	"github.com/exgate/exgate"
)

// Market data is a pure function of (seed, symbol, time), computed in
// integers only:
//
//   - Each asset has a USD price path P(t) = centre * m(f(t)), where f is a
//     sum of octaves of value noise in parts per million: octave k puts a
//     hash-chosen value in [-a_k, a_k] every 2^k minutes and interpolates
//     linearly between them, with a_k = VolPPM * 2^(k/2), so the path
//     wanders like a random walk from minutes to years. m(f) = 1 + f for
//     f >= 0 and 1 / (1 - f) below, which keeps prices positive and makes
//     rises and falls symmetric. USDT is pinned at 1 USD.
//   - A pair's price is P_base / P_quote, floored to the tick, so ETH/BTC
//     stays consistent with ETH/USDT and BTC/USDT.
//   - A kline opens at P(openTime) and closes at P(next openTime) (or at
//     P(now) while open), its high and low cover those and three interior
//     samples plus hash-chosen wicks, its volume and trade count are
//     hash-chosen around the market's per-minute figures.
//   - The book of a second is centred on P(second), with a spread of
//     spreadPPM, and as many levels as asked for: hash-chosen gaps of about
//     levelGapPPM and quantities of 5% to 200% of the market's LevelQty.
const (
	octaves     = 23 // 2^22 minutes is about eight years
	spreadPPM   = 20
	levelGapPPM = 10
	ppm         = 1_000_000
)

// noise is the precomputed price noise of one asset.
type noise struct {
	asset *asset
	// octSeed[k] is the splitmix64 state of octave k.
	octSeed [octaves]uint64
	amp     [octaves]int64
}

func newNoise(seed uint64, a *asset) *noise {
	n := &noise{asset: a}
	base := mix(seed ^ hashString("asset/"+a.Code))
	for k := range octaves {
		n.octSeed[k] = mix(base + uint64(k)*golden)
		amp := a.VolPPM << (k / 2)
		if k%2 == 1 {
			amp = amp * 1_414_214 / ppm
		}
		n.amp[k] = amp
	}
	return n
}

// golden is the splitmix64 increment.
const golden = 0x9e3779b97f4a7c15

// mix is the splitmix64 finalizer: a fast, well-distributed 64-bit hash.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// hash combines values into one well-mixed hash.
func hash(parts ...uint64) uint64 {
	h := uint64(0x5157_2d65_7867_6174) // an arbitrary non-zero start
	for _, p := range parts {
		h = mix(h ^ p + golden)
	}
	return h
}

// floorDiv divides rounding toward negative infinity.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// priceE8 is the asset's USD price at second t, in units of 1e-8 USD.
func (n *noise) priceE8(t int64) int64 {
	if n.asset.VolPPM == 0 {
		return n.asset.PriceE8
	}
	var f int64
	for k := range octaves {
		span := int64(60) << k
		i := floorDiv(t, span)
		r := t - i*span
		amp := n.amp[k]
		width := uint64(2*amp + 1)
		v0 := int64(mix(n.octSeed[k]+uint64(i)*golden)%width) - amp
		v1 := int64(mix(n.octSeed[k]+uint64(i+1)*golden)%width) - amp
		f += v0 + (v1-v0)*r/span
	}
	var m int64
	if f >= 0 {
		m = ppm + f
	} else {
		m = ppm * ppm / (ppm - f)
	}
	return mulDiv(n.asset.PriceE8, m, ppm)
}

// mulDiv returns a*b/c for non-negative values without overflowing the
// product; a quotient beyond int64 saturates.
func mulDiv(a, b, c int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) {
		return 1<<63 - 1
	}
	q, _ := bits.Div64(hi, lo, uint64(c))
	if q > 1<<63-1 {
		return 1<<63 - 1
	}
	return int64(q)
}

// pow10 returns 10^n for small n.
func pow10(n int32) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

// isqrt is the integer square root.
func isqrt(n int64) int64 {
	if n <= 0 {
		return 0
	}
	x := int64(1) << ((bits.Len64(uint64(n)) + 1) / 2)
	for {
		y := (x + n/x) / 2
		if y >= x {
			return x
		}
		x = y
	}
}

// pairTicks is the pair's price at second t in ticks, at least one tick.
func (e *Exchange) pairTicks(p *pairInfo, t int64) int64 {
	base := e.noise[p.Base].priceE8(t)
	quote := e.noise[p.Quote].priceE8(t)
	return max(1, mulDiv(base, pow10(p.TickExp), quote))
}

// pairVolPPM is the one-minute volatility of the pair.
func pairVolPPM(p *pairInfo) int64 {
	return p.base.VolPPM + p.quote.VolPPM/2
}

// formatFixed writes v * 10^-exp as a plain decimal with exactly exp
// decimals.
func formatFixed(v int64, exp int32) string {
	neg := v < 0
	if neg {
		v = -v
	}
	s := strconv.FormatInt(v, 10)
	if exp > 0 {
		if pad := int(exp) + 1 - len(s); pad > 0 {
			s = zeros[:pad] + s
		}
		s = s[:len(s)-int(exp)] + "." + s[len(s)-int(exp):]
	}
	if neg {
		s = "-" + s
	}
	return s
}

const zeros = "0000000000000000000000"

// kline builds the kline of p starting at start, still open when its end
// is after now.
func (e *Exchange) kline(p *pairInfo, iv exgate.Interval, ivKey uint64, start, now time.Time) exgate.Kline {
	next := iv.Next(start)
	a := start.Unix()
	end := next.Unix()
	if nowSec := floorDiv(now.UnixMilli(), 1000); nowSec < end {
		end = max(a, nowSec)
	}
	open, close := e.pairTicks(p, a), e.pairTicks(p, end)
	hi, lo := max(open, close), min(open, close)
	for j := int64(1); j <= 3; j++ {
		t := a + (end-a)*j/4
		if t == a || t == end {
			continue
		}
		v := e.pairTicks(p, t)
		hi, lo = max(hi, v), min(lo, v)
	}
	elapsed := end - a
	h := hash(e.seed, p.key, ivKey, uint64(a))
	wickAmp := uint64(pairVolPPM(p)*isqrt(elapsed/60+1)/2 + 1)
	hi += mulDiv(hi, int64(h%wickAmp), ppm)
	lo -= mulDiv(lo, int64(mix(h+1)%wickAmp), ppm)
	lo = max(lo, 1)

	factor := int64(50 + mix(h+2)%101) // 50% to 150%
	volume := mulDiv(p.volumeSteps*factor/100, elapsed, 60)
	trades := p.TradesPerMinute * uint64(elapsed) / 60 * uint64(50+mix(h+3)%101) / 100
	return exgate.Kline{
		OpenTime:       start.UnixMilli(),
		OpenPrice:      formatFixed(open, p.TickExp),
		HighPrice:      formatFixed(hi, p.TickExp),
		LowPrice:       formatFixed(lo, p.TickExp),
		ClosePrice:     formatFixed(close, p.TickExp),
		Volume:         formatFixed(volume, p.StepExp),
		CloseTime:      next.UnixMilli() - 1,
		NumberOfTrades: &trades,
	}
}

// bookWalker generates one side of the book of a second, level by level.
type bookWalker struct {
	e     *Exchange
	p     *pairInfo
	h     uint64
	bid   bool
	gap   int64 // average gap between levels, in ticks
	price int64
	i     int
}

// book returns the walkers of both sides of p's book at second t.
func (e *Exchange) book(p *pairInfo, t int64) (bids, asks *bookWalker) {
	mid := e.pairTicks(p, t)
	half := max(1, mid*spreadPPM/(2*ppm))
	gap := max(1, mid*levelGapPPM/ppm)
	h := hash(e.seed, p.key, uint64(t))
	bids = &bookWalker{e: e, p: p, h: mix(h), bid: true, gap: gap, price: mid - half}
	asks = &bookWalker{e: e, p: p, h: mix(h + 1), gap: gap, price: mid + half}
	return bids, asks
}

// next returns the next level's price in ticks and quantity in steps;
// ok is false when the bid side has reached a zero price.
func (w *bookWalker) next() (price, qty int64, ok bool) {
	if w.i > 0 {
		g := 1 + int64(mix(w.h+uint64(2*w.i))%uint64(2*w.gap-1))
		if w.bid {
			w.price -= g
		} else {
			w.price += g
		}
	}
	if w.price <= 0 {
		return 0, 0, false
	}
	qty = max(1, w.p.levelSteps*int64(5+mix(w.h+uint64(2*w.i+1))%196)/100)
	w.i++
	return w.price, qty, true
}

// levels returns up to limit levels of the side.
func (w *bookWalker) levels(limit int) []exgate.Level {
	out := make([]exgate.Level, 0, limit)
	for len(out) < limit {
		price, qty, ok := w.next()
		if !ok {
			break
		}
		out = append(out, exgate.Level{
			Price:    formatFixed(price, w.p.TickExp),
			Quantity: formatFixed(qty, w.p.StepExp),
		})
	}
	return out
}
