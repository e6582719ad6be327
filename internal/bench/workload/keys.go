package workload

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/naam-project/naam/internal/detmath"
)

// KeyGen draws record numbers in [0, N). A KeyGen is not safe for
// concurrent use: give each goroutine its own (Distribution.New).
type KeyGen interface {
	Next() uint64
}

// Distribution names a key distribution and makes seeded generators.
type Distribution struct {
	Name string
	New  func(n uint64, r *rand.Rand) KeyGen
}

// Uniform draws every record with the same probability.
var Uniform = Distribution{Name: "uniform", New: func(n uint64, r *rand.Rand) KeyGen {
	return uniform{n: n, r: r}
}}

// Zipfian is YCSB's "zipfian" request distribution: the scrambled Zipfian
// generator with θ = 0.99 (ScrambledZipfian).
var Zipfian = Distribution{Name: "zipfian", New: func(n uint64, r *rand.Rand) KeyGen {
	return NewScrambledZipfian(n, r)
}}

// DistributionByName finds "uniform" or "zipfian".
func DistributionByName(name string) (Distribution, error) {
	switch name {
	case Uniform.Name:
		return Uniform, nil
	case Zipfian.Name:
		return Zipfian, nil
	}
	return Distribution{}, fmt.Errorf("workload: unknown key distribution %q (uniform, zipfian)", name)
}

type uniform struct {
	n uint64
	r *rand.Rand
}

func (u uniform) Next() uint64 { return u.r.Uint64N(u.n) }

// ZipfTheta is YCSB's Zipfian constant.
const ZipfTheta = 0.99

// Zipf is the Zipfian generator of Gray et al. ("Quickly generating
// billion-record synthetic databases", SIGMOD'94) as YCSB implements it
// (ZipfianGenerator): item i of [0, n) has probability proportional to
// 1/(i+1)^θ, item 0 the most popular. Its powers are detmath's, so
// that a seed draws the same keys on every machine (package sim's
// output depends on them).
type Zipf struct {
	n                        uint64
	theta, alpha, zetan, eta float64
	halfPowTheta             float64
	r                        *rand.Rand
}

// Zeta is Σ_{i=1..n} 1/i^θ.
func Zeta(n uint64, theta float64) float64 {
	s := 0.0
	for i := uint64(1); i <= n; i++ {
		s += 1 / detmath.Pow(float64(i), theta)
	}
	return s
}

// NewZipf is a Zipfian generator over [0, n) with exponent θ (0 < θ < 1);
// zetan is Zeta(n, θ), passed in because it costs O(n) to compute (0:
// compute it here).
func NewZipf(n uint64, theta, zetan float64, r *rand.Rand) *Zipf {
	if zetan == 0 {
		zetan = Zeta(n, theta)
	}
	zeta2 := Zeta(2, theta)
	return &Zipf{
		n: n, theta: theta, zetan: zetan, r: r,
		alpha:        1 / (1 - theta),
		eta:          (1 - detmath.Pow(2/float64(n), 1-theta)) / (1 - zeta2/zetan),
		halfPowTheta: 1 + detmath.Pow(0.5, theta),
	}
}

// Next implements KeyGen.
func (z *Zipf) Next() uint64 {
	u := z.r.Float64()
	uz := u * z.zetan
	if uz < 1 {
		return 0
	}
	if uz < z.halfPowTheta {
		return 1
	}
	v := uint64(float64(z.n) * detmath.Pow(float64(z.eta*u)-z.eta+1, z.alpha))
	return min(v, z.n-1)
}

// YCSB's scrambled Zipfian draws from a Zipfian over 10^10 items (with
// the precomputed ζ(10^10, 0.99) below) and hashes the draw onto [0, n),
// so popular records are spread over the key space instead of being the
// first ones.
const (
	scrambledItems = 10_000_000_000
	scrambledZetan = 26.46902820178302 // YCSB's ScrambledZipfianGenerator.ZETAN
)

// ScrambledZipfian is YCSB's ScrambledZipfianGenerator with θ = 0.99.
type ScrambledZipfian struct {
	n uint64
	z *Zipf
}

// NewScrambledZipfian draws from [0, n).
func NewScrambledZipfian(n uint64, r *rand.Rand) *ScrambledZipfian {
	return &ScrambledZipfian{n: n, z: NewZipf(scrambledItems, ZipfTheta, scrambledZetan, r)}
}

// Next implements KeyGen.
func (s *ScrambledZipfian) Next() uint64 { return FNVHash64(s.z.Next()) % s.n }

// FNVHash64 is YCSB's Utils.fnvhash64: FNV-1a 64 over the 8 bytes of v,
// low byte first, then the absolute value as a Java long.
func FNVHash64(v uint64) uint64 {
	h := uint64(0xcbf29ce484222325)
	for range 8 {
		h ^= v & 0xff
		h *= 1099511628211
		v >>= 8
	}
	if int64(h) < 0 {
		h = uint64(-int64(h)) // Math.abs; MinInt64 stays negative in Java, and as a uint64 it is 2^63
	}
	return h
}

// HotKeys returns the k records drawn most often in samples draws of d
// over records keys (seeded), most frequent first: the records a service
// may place in faster memory (examples/kv's nicmem table). Ties go to the
// lower record.
func HotKeys(d Distribution, records uint64, k, samples int, seed uint64) []uint64 {
	g := d.New(records, rand.New(rand.NewPCG(seed, 0x686f74)))
	counts := map[uint64]int{}
	for range samples {
		counts[g.Next()]++
	}
	keys := make([]uint64, 0, len(counts))
	for r := range counts {
		keys = append(keys, r)
	}
	slices.SortFunc(keys, func(a, b uint64) int {
		if c := cmp.Compare(counts[b], counts[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return keys[:min(k, len(keys))]
}
