// cuzk's own Pippenger for large MSMs whose scalars are mostly full field elements (the
// quotient's H coefficients; WindowPoSt and SnapDeals witnesses) against a resident base.
//
// Per c-bit window (signed digits, so 2^(c-1) buckets):
//   1. sort: each scalar's digit is found once; the non-zero ones are counting-sorted by bucket
//      (an atomic histogram, a prefix sum, an atomic scatter of point index and sign);
//   2. accumulate: the sorted list is cut into equal segments, one per thread, so every thread
//      does the same number of additions whatever the bucket sizes (one thread per bucket
//      leaves a warp waiting on its longest bucket); a bucket cut by segment boundaries is
//      finished by carry passes. Long segments add by batch-affine pairwise levels
//      (accumulate_affine), the rest into XYZZ accumulators (accumulate);
//   3. reduce: Σ (b+1)·S_b over the buckets in parallel ranges, then a pairwise tree.
// Stream 1 sorts the next window while stream 0 accumulates this one. The windows' sums are
// combined on the host (W·c doublings). Field and point arithmetic are sppark's (XYZZ
// buckets, mixed additions; its variable-time inversion). Included by cuzk_gpu.cu after
// sppark's field, point and GPU headers; docs/GPU.md and PERFORMANCE.md ("Our bucket MSM")
// have the measured choices.

#include <cub/block/block_scan.cuh>

namespace bucket_msm {

// The key of a scalar whose window digit is zero: it takes no bucket.
constexpr uint32_t NONE = 0xffffffffu;
// Sign bit of a sorted entry (point index | SIGN when the digit is negative).
constexpr uint32_t SIGN = 0x80000000u;

// Window geometry for 255-bit scalars: `wins` windows of `c` bits with signed digits in
// [−2^(c−1), 2^(c−1)], so 2^(c−1) buckets per window. wins·c ≥ 256 keeps the last window's
// borrow bit past the scalar, where it is zero.
struct geometry_t {
    uint32_t c, wins, buckets;

    static geometry_t with(uint32_t c)
    {   return geometry_t{c, (256 + c - 1) / c, 1u << (c - 1)};   }

    // The c that minimises wins·(n + 3·buckets): one mixed addition per digit, and the
    // weighted bucket sum's two full additions per bucket (each about 1.5 mixed ones).
    static geometry_t for_points(size_t n)
    {
        geometry_t best = with(MIN_BITS);
        double best_cost = 1e300;
        for (uint32_t c = MIN_BITS; c <= MAX_BITS; c++) {
            geometry_t g = with(c);
            double cost = (double)g.wins * ((double)n + 3.0 * g.buckets);
            if (cost < best_cost) best = g, best_cost = cost;
        }
        return best;
    }

    static constexpr uint32_t MIN_BITS = 8, MAX_BITS = 24;
};

#ifdef __CUDA_ARCH__ // fr_t's limbs are private in the host pass
// Window w of the canonical scalar s as a signed digit: returns its magnitude (0..2^(c−1)) and
// sets `neg`. The window reads bits [w·c − 1, w·c + c): the bit below it is the previous
// window's borrow (digit = bits + borrow_in − 2^c·borrow_out).
__device__ __forceinline__ uint32_t digit(const fr_t& s, uint32_t w, uint32_t c, bool& neg)
{
    const uint32_t mask = (2u << c) - 1; // c + 1 bits
    uint32_t v;
    if (w == 0) {
        v = (s[0] << 1) & mask;
    } else {
        uint32_t off = w * c - 1, i = off / 32;
        uint64_t x = s[i];
        if (i + 1 < sizeof(fr_t) / 4)
            x |= (uint64_t)s[i + 1] << 32;
        v = (uint32_t)(x >> (off % 32)) & mask;
    }
    neg = (v >> c) & 1;
    uint32_t m = (v + 1) >> 1;
    return neg ? (1u << c) - m : m;
}
#endif

// keys[j·n + i] = bucket of scalar i in window w0 + j (| SIGN), or NONE, for j < k; counts[b]
// += 1 per key. Each scalar leaves Montgomery form once for its k windows.
__global__ void digits(uint32_t* keys, uint32_t* counts, const fr_t* s, uint32_t n, uint32_t w0,
                       uint32_t k, uint32_t c, bool mont)
{
#ifdef __CUDA_ARCH__
    uint32_t stride = blockDim.x * gridDim.x;
    for (uint32_t i = threadIdx.x + blockIdx.x * blockDim.x; i < n; i += stride) {
        fr_t x = s[i];
        if (mont) x.from();
        #pragma unroll 1
        for (uint32_t j = 0; j < k; j++) {
            bool neg;
            uint32_t m = digit(x, w0 + j, c, neg);
            uint32_t key = NONE;
            if (m) {
                key = (m - 1) | (neg ? SIGN : 0);
                atomicAdd(&counts[m - 1], 1);
            }
            keys[j * n + i] = key;
        }
    }
#endif
}

// sorted[cursor[bucket]++] = point | sign for every keyed entry (cursor starts as the buckets'
// start offsets), where entry j·n + i names point j·stride + i: scalar i's multiple in table
// copy j. The order inside a bucket is arbitrary: a sum does not depend on it.
__global__ void scatter(uint32_t* sorted, uint32_t* cursor, const uint32_t* keys, uint32_t n,
                        uint32_t entries, uint32_t stride)
{
    uint32_t step = blockDim.x * gridDim.x;
    for (uint32_t q = threadIdx.x + blockIdx.x * blockDim.x; q < entries; q += step) {
        uint32_t key = keys[q];
        if (key != NONE) {
            uint32_t j = q / n;
            sorted[atomicAdd(&cursor[key & ~SIGN], 1)] = (j * stride + q - j * n) | (key & SIGN);
        }
    }
}

// Exclusive prefix sums of n counts in three passes: per 1024-count tile (sums[t] gets the
// tile's total), over the tile totals (one block), then each tile's offset added. Our own
// kernels around cub's block scan: device-wide cub entry points instantiated from host code
// that only the host pass sees would have no device code.
constexpr uint32_t SCAN_THREADS = 256, SCAN_ITEMS = 4, SCAN_TILE = SCAN_THREADS * SCAN_ITEMS;
typedef cub::BlockScan<uint32_t, SCAN_THREADS> block_scan_t;

__global__ void scan_tiles(uint32_t* out, uint32_t* sums, const uint32_t* in, uint32_t n)
{
    __shared__ typename block_scan_t::TempStorage tmp;
    uint32_t base = blockIdx.x * SCAN_TILE + threadIdx.x * SCAN_ITEMS, v[SCAN_ITEMS], total;
    for (uint32_t k = 0; k < SCAN_ITEMS; k++)
        v[k] = base + k < n ? in[base + k] : 0;
    block_scan_t(tmp).ExclusiveSum(v, v, total);
    for (uint32_t k = 0; k < SCAN_ITEMS; k++)
        if (base + k < n) out[base + k] = v[k];
    if (threadIdx.x == 0) sums[blockIdx.x] = total;
}

__global__ void scan_sums(uint32_t* sums, uint32_t tiles)
{
    __shared__ typename block_scan_t::TempStorage tmp;
    uint32_t carry = 0;
    for (uint32_t off = 0; off < tiles; off += SCAN_THREADS) {
        uint32_t i = off + threadIdx.x, v = i < tiles ? sums[i] : 0, total;
        block_scan_t(tmp).ExclusiveSum(v, v, total);
        if (i < tiles) sums[i] = v + carry;
        carry += total;
        __syncthreads(); // tmp is reused
    }
}

__global__ void add_tile_offsets(uint32_t* out, const uint32_t* sums, uint32_t n)
{
    uint32_t i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i < n) out[i] += sums[i / SCAN_TILE];
}

// out[i] = Σ in[j], j < i, for i < n, on stream s; `sums` holds ⌈n / SCAN_TILE⌉ words.
inline void exclusive_sum(uint32_t* out, uint32_t* sums, const uint32_t* in, uint32_t n,
                          cudaStream_t s)
{
    uint32_t tiles = (n + SCAN_TILE - 1) / SCAN_TILE;
    scan_tiles<<<tiles, SCAN_THREADS, 0, s>>>(out, sums, in, n);
    CUDA_OK(cudaGetLastError());
    scan_sums<<<1, SCAN_THREADS, 0, s>>>(sums, tiles);
    CUDA_OK(cudaGetLastError());
    add_tile_offsets<<<(n + 255) / 256, 256, 0, s>>>(out, sums, n);
    CUDA_OK(cudaGetLastError());
}

#ifndef BUCKET_MSM_THREADS
# define BUCKET_MSM_THREADS 256
#endif
// accumulate's block: 384 threads at up to 170 registers fill an SM's register file once.
#ifndef BUCKET_MSM_ACC_THREADS
# define BUCKET_MSM_ACC_THREADS 384
#endif
// weigh's block: two per SM at up to 255 registers.
#ifndef BUCKET_MSM_WEIGH_THREADS
# define BUCKET_MSM_WEIGH_THREADS 128
#endif

// The bucket sums of short segments. Thread t sums sorted entries [t·len,
// (t+1)·len) bucket by bucket. A bucket whose first entry is in the segment is written to
// buckets[b] by this thread; the head of a bucket begun in an earlier segment goes to
// carry[t] (carry_of[t] = b) for add_carries. Buckets with no entries are not written:
// readers check `starts`. For G2 (degree 2) a pair of lanes holds one point,
// so "thread" means a pair throughout. The next entry's point is asked into L2 before the
// current addition (0.6 % at 2^27).
template<class bucket_t, class affine_h, class bucket_h = typename bucket_t::mem_t,
         class affine_t = typename bucket_t::affine_t>
__launch_bounds__(BUCKET_MSM_ACC_THREADS) __global__
void accumulate(bucket_h* buckets, bucket_h* carry, uint32_t* carry_of, const affine_h* points,
                const uint32_t* sorted, const uint32_t* starts, uint32_t nbuckets)
{
    const uint32_t degree = bucket_t::degree;
    const uint32_t total = starts[nbuckets];
    const uint32_t segs = gridDim.x * blockDim.x / degree;
    const uint32_t t = (threadIdx.x + blockIdx.x * blockDim.x) / degree;
    const uint32_t len = (total + segs - 1) / segs;
    const uint32_t first = min(t * len, total), end = min(first + len, total);
    carry_of[t] = NONE;
    if (first >= end)
        return;

    // The bucket holding entry `first`: starts[lo] ≤ first < starts[hi] throughout.
    uint32_t lo = 0, hi = nbuckets;
    while (hi - lo > 1) {
        uint32_t mid = (lo + hi) / 2;
        if (starts[mid] <= first) lo = mid; else hi = mid;
    }

    uint32_t b = lo, e = first, v = sorted[e];
    while (e < end) {
        uint32_t stop = min(starts[b + 1], end);
        affine_t p = points[v & ~SIGN];
        bucket_t acc;
        acc = p;
        acc.cneg(v >> 31);
        bool neg;
        #pragma unroll 1
        while (++e < stop) {
            v = sorted[e];
            neg = v >> 31;
            if (e + 1 < end) {
                const char* next = (const char*)&points[sorted[e + 1] & ~SIGN];
                asm("prefetch.global.L2 [%0];" :: "l"(next));
                asm("prefetch.global.L2 [%0];" :: "l"(next + sizeof(affine_h) - 1));
            }
            p = points[v & ~SIGN];
            acc.add(p, neg);
        }
        if (starts[b] >= first) {
            buckets[b] = acc;
        } else {
            carry[t] = acc;
            carry_of[t] = b;
        }
        if (e < end) {
            v = sorted[e];
            do b++; while (starts[b + 1] <= e);
        }
    }
}

// accumulate_affine's block: two per SM at up to 128 registers (three spill, one is slower).
#ifndef BUCKET_MSM_AFFINE_THREADS
# define BUCKET_MSM_AFFINE_THREADS 256
#endif
// The least scratch accumulate_affine's chunks may take, so that small MSMs run in one chunk.
constexpr size_t AFFINE_MIN_SCRATCH = (size_t)64 << 20;
// The shortest segment accumulate_affine takes: each level pays an inversion and a pass over
// the segment's buckets, so short segments add faster into XYZZ buckets (H200, accumulation
// against XYZZ: 62 entries 0.90x, 248 1.07x, 496 1.06x; a table's 8 or so, its MSM 2.5x slower).
constexpr size_t AFFINE_MIN_LEN = 192;

#ifdef __CUDA_ARCH__
// An affine point in registers; in memory it has blst's layout (fixed_base::affine_out), and
// infinity is (0, 0), which is not on the curve.
template<class field_t> struct xy_t {
    field_t x, y;
    __device__ __forceinline__ bool inf() const { return x.is_zero(y); }
};

// How p + q is finished from the inverse of its slope's denominator.
enum finish_t : uint32_t { ADD, DOUBLE, TAKE };

// The denominator of p + q's slope: x_q − x_p, or 2·y_p when p = q; 1 when no slope is needed
// (TAKE: either point is infinity, or q = −p).
template<class field_t>
__device__ __forceinline__ finish_t denominator(field_t& d, const xy_t<field_t>& p,
                                                const xy_t<field_t>& q)
{
    d = q.x - p.x;
    if (p.inf() | q.inf()) {
        d = field_t::one();
        return TAKE;
    }
    if (!d.is_zero())
        return ADD;
    field_t dy = q.y - p.y;
    if (dy.is_zero()) {
        d = p.y + p.y;
        return DOUBLE;
    }
    d = field_t::one();
    return TAKE;
}

// p + q from `inv`, the inverse of denominator(p, q): 2 multiplications and a squaring.
template<class field_t>
__device__ __forceinline__ xy_t<field_t> finish(finish_t how, const field_t& inv,
                                                const xy_t<field_t>& p, const xy_t<field_t>& q)
{
    xy_t<field_t> r;
    if (how == TAKE) {
        r = p.inf() ? q : p;
        if (!p.inf() && !q.inf()) {
            r.x.zero();
            r.y.zero();
        }
        return r;
    }
    field_t l;
    if (how == ADD) {
        l = q.y - p.y;
    } else {
        l = p.x^2;
        l = l + l + l;
    }
    l *= inv;
    r.x = l^2;
    r.x -= p.x;
    r.x -= q.x;
    r.y = p.x - r.x;
    r.y *= l;
    r.y -= p.y;
    return r;
}
#endif

// The bucket sums of long segments, as `accumulate` writes them, by batch-affine additions:
// an affine addition needs a field inversion, and one inversion serves a whole batch
// (Montgomery's trick: 3 multiplications per element), so a sum costs about 6 multiplications
// where an XYZZ mixed addition costs 10. But it moves about 540 bytes per G1 addition in
// scattered accesses (each point read twice, the products, each level's results), so G1 is
// only a few per cent faster from 2^26 points (PERFORMANCE.md, log #62). G2 does three times
// the arithmetic per byte (an Fp2 product is three Fp ones): its accumulation is 13 % faster
// than XYZZ sums at 2^26 points (log #69).
//
// Segment s of `segs` (a lane pair for G2, as sppark's Fp2 code needs) takes sorted entries
// [s·len, (s+1)·len) and adds each of its buckets' points pairwise, level by level: at level
// L a bucket with m entries in the segment has ⌈m/2^L⌉ points, at slots (e − first) + j·2^L
// of the segment's scratch, and each level's pairs share one inversion (prefix products in
// `pre`). A launch covers segments [seg0, seg0 + lanes), so the scratch (len points and len/2
// products per segment, segment-interleaved) is bounded by the caller's chunking.
template<class bucket_t, class affine_h, class field_t, class field_h,
         class bucket_h = typename bucket_t::mem_t>
__launch_bounds__(BUCKET_MSM_AFFINE_THREADS, 2) __global__
void accumulate_affine(bucket_h* buckets, bucket_h* carry, uint32_t* carry_of,
                       const affine_h* points, const uint32_t* sorted, const uint32_t* starts,
                       uint32_t nbuckets, uint32_t segs, uint32_t seg0,
                       fixed_base::affine_out<field_h>* slots, field_h* pre)
{
#ifdef __CUDA_ARCH__
    typedef fixed_base::affine_out<field_h> xy_h;
    typedef xy_t<field_t> xy;
    const uint32_t degree = bucket_t::degree; // G2: a pair of lanes per segment
    const uint32_t lanes = gridDim.x * blockDim.x / degree;
    const uint32_t t = (threadIdx.x + blockIdx.x * blockDim.x) / degree, s = seg0 + t;
    const uint32_t total = starts[nbuckets];
    const uint32_t len = (total + segs - 1) / segs;
    const uint32_t first = min(s * len, total), end = min(first + len, total);
    const xy_h* base = reinterpret_cast<const xy_h*>(points);
    auto slot = [&](uint32_t k) -> xy_h& { return slots[(size_t)k * lanes + t]; };
    auto prefix = [&](uint32_t k) -> field_h& { return pre[(size_t)k * lanes + t]; };
    // Point j of a bucket's level-L list whose first entry is e.
    auto point = [&](uint32_t L, uint32_t e, uint32_t j) -> xy {
        xy p;
        if (L == 0) {
            uint32_t v = sorted[e + j];
            const xy_h& m = base[v & ~SIGN];
            p.x = m.X;
            p.y = m.Y;
            p.y.cneg(v >> 31);
        } else {
            const xy_h& m = slot(e - first + (j << L));
            p.x = m.X;
            p.y = m.Y;
        }
        return p;
    };
    // Its x alone (a point's sign changes only y).
    auto x_of = [&](uint32_t L, uint32_t e, uint32_t j) -> field_t {
        return L == 0 ? base[sorted[e + j] & ~SIGN].X : slot(e - first + (j << L)).X;
    };
    auto store = [&](uint32_t k, const xy& p) {
        xy_h& m = slot(k);
        m.X = p.x;
        m.Y = p.y;
    };
    // The buckets of entries `first` and `end − 1` (none when the segment is empty).
    auto bucket_of = [&](uint32_t e) {
        uint32_t lo = 0, hi = nbuckets;
        while (hi - lo > 1) {
            uint32_t mid = (lo + hi) / 2;
            if (starts[mid] <= e) lo = mid; else hi = mid;
        }
        return lo;
    };
    const bool some = first < end;
    const uint32_t b_first = some ? bucket_of(first) : 1, b_last = some ? bucket_of(end - 1) : 0;
    // The segment's entries of bucket b: [e0, e1), empty when e1 <= e0.
    auto run = [&](uint32_t b, uint32_t& e0, uint32_t& e1) {
        e0 = max(starts[b], first);
        e1 = min(starts[b + 1], end);
    };

    for (uint32_t L = 0;; L++) {
        // Forward: each pair's denominator, and the running product after it.
        field_t acc = field_t::one(), d;
        uint32_t np = 0;
        for (uint32_t b = b_first; b <= b_last; b++) {
            uint32_t e0, e1;
            run(b, e0, e1);
            if (e1 <= e0) continue;
            uint32_t m = (e1 - e0 + (1u << L) - 1) >> L;
            if (L == 0 && (m & 1))
                store(e1 - 1 - first, point(0, e0, m - 1));
            #pragma unroll 1
            for (uint32_t k = 0; 2 * k + 1 < m; k++) {
                // Distinct non-zero x's need no y (the point with x = 0 may be infinity).
                field_t px = x_of(L, e0, 2 * k);
                d = x_of(L, e0, 2 * k + 1);
                bool plain = !px.is_zero() & !d.is_zero();
                d -= px;
                if (!plain || d.is_zero()) {
                    xy p = point(L, e0, 2 * k), q = point(L, e0, 2 * k + 1);
                    denominator(d, p, q); // 1 when no slope is needed
                }
                acc *= d;
                prefix(np++) = acc;
            }
        }
        if (!__any_sync(0xffffffff, np > 0))
            break;
        field_t inv = acc.reciprocal(); // across lane pairs: the warp is converged here
        // Backward: each pair's inverse from the running product before it, then its sum
        // in place of its first point.
        #pragma unroll 1
        for (uint32_t b = b_last + 1; b-- > b_first && np > 0;) {
            uint32_t e0, e1;
            run(b, e0, e1);
            if (e1 <= e0) continue;
            uint32_t m = (e1 - e0 + (1u << L) - 1) >> L;
            #pragma unroll 1
            for (uint32_t k = m / 2; k-- > 0;) {
                np--;
                field_t ik = inv;
                if (np > 0) {
                    field_t before = prefix(np - 1);
                    ik *= before;
                }
                xy p = point(L, e0, 2 * k), q = point(L, e0, 2 * k + 1);
                finish_t how = denominator(d, p, q);
                if (how != TAKE)
                    inv *= d;
                store(e0 - first + ((2 * k) << L), finish(how, ik, p, q));
            }
        }
    }

    carry_of[s] = NONE;
    for (uint32_t b = b_first; b <= b_last; b++) {
        uint32_t e0, e1;
        run(b, e0, e1);
        if (e1 <= e0) continue;
        const xy_h& m = slot(e0 - first);
        field_t x = m.X, y = m.Y;
        bucket_t sum(x, y, x.is_zero(y));
        if (starts[b] >= first) {
            buckets[b] = sum;
        } else {
            carry[s] = sum;
            carry_of[s] = b;
        }
    }
#endif
}

// Carries are summed in groups of CARRY_GROUP segments, then across groups: a bucket cut into
// k pieces costs k/CARRY_GROUP + CARRY_GROUP serial additions, not k (all-equal scalars put
// every entry of a window in one bucket, cut at every segment).
constexpr uint32_t CARRY_GROUP = 64;
// piece[t] after add_carries: the run of carries at t, summed within its group into carry[t],
// continues in the next group and starts here (HEAD) or in an earlier group (PIECE).
constexpr uint32_t HEAD = 1, PIECE = 2;

// Sums each run of carries for one bucket within its group of segments: a run wholly inside
// the group is added into its bucket; one crossing a group boundary is left in carry[t] and
// marked in piece[t] for add_pieces. Carry buckets never decrease with t, so a bucket's carries
// are consecutive.
template<class bucket_t, class bucket_h = typename bucket_t::mem_t>
__launch_bounds__(BUCKET_MSM_THREADS) __global__
void add_carries(bucket_h* buckets, bucket_h* carry, const uint32_t* carry_of,
                 uint32_t* piece, uint32_t segs)
{
    uint32_t t = (threadIdx.x + blockIdx.x * blockDim.x) / bucket_t::degree;
    if (t >= segs) return;
    uint32_t b = carry_of[t], start = t - t % CARRY_GROUP;
    uint32_t end = min(start + CARRY_GROUP, segs);
    bool cont_in = t > 0 && carry_of[t - 1] == b;
    piece[t] = 0;
    if (b == NONE || (t > start && cont_in))
        return;
    bucket_t acc, x;
    acc = carry[t];
    uint32_t u = t + 1;
    #pragma unroll 1
    for (; u < end && carry_of[u] == b; u++) {
        x = carry[u];
        acc.add(x);
    }
    bool cont_out = u == end && u < segs && carry_of[u] == b;
    if (!cont_in && !cont_out) {
        x = buckets[b];
        acc.add(x);
        buckets[b] = acc;
    } else {
        carry[t] = acc;
        piece[t] = cont_in ? PIECE : HEAD;
    }
}

// Adds each run of group sums that begins at a HEAD (its later pieces sit at the starts of the
// following groups) into its bucket.
template<class bucket_t, class bucket_h = typename bucket_t::mem_t>
__launch_bounds__(BUCKET_MSM_THREADS) __global__
void add_pieces(bucket_h* buckets, const bucket_h* carry, const uint32_t* carry_of,
                const uint32_t* piece, uint32_t segs)
{
    uint32_t t = (threadIdx.x + blockIdx.x * blockDim.x) / bucket_t::degree;
    if (t >= segs || piece[t] != HEAD) return;
    uint32_t b = carry_of[t];
    bucket_t acc, x;
    acc = carry[t];
    #pragma unroll 1
    for (uint32_t u = t - t % CARRY_GROUP + CARRY_GROUP;
         u < segs && piece[u] == PIECE && carry_of[u] == b; u += CARRY_GROUP) {
        x = carry[u];
        acc.add(x);
    }
    x = buckets[b];
    acc.add(x);
    buckets[b] = acc;
}

// out[r] = Σ (b+1)·S_b over buckets b in [r·per, (r+1)·per), S_b = ∞ when bucket b is empty:
// a running sum from the top gives Σ (b − lo + 1)·S_b, and lo·Σ S_b is added by doubling.
template<class bucket_t, class bucket_h = typename bucket_t::mem_t>
__launch_bounds__(BUCKET_MSM_WEIGH_THREADS) __global__
void weigh(bucket_h* out, const bucket_h* buckets, const uint32_t* starts, uint32_t nbuckets,
           uint32_t per, uint32_t ranges)
{
    uint32_t r = (threadIdx.x + blockIdx.x * blockDim.x) / bucket_t::degree;
    if (r >= ranges) return;
    uint32_t lo = r * per, hi = min(lo + per, nbuckets);
    bucket_t run, tot, s;
    run.inf();
    tot.inf();
    #pragma unroll 1
    for (uint32_t b = hi; b-- > lo;) {
        if (starts[b + 1] > starts[b]) {
            s = buckets[b];
            run.add(s);
        }
        tot.add(run);
    }
    if (lo) {
        s.inf();
        #pragma unroll 1
        for (int k = 31 - __clz(lo); k >= 0; k--) {
            s.add(s);
            if ((lo >> k) & 1)
                s.add(run);
        }
        tot.add(s);
    }
    out[r] = tot;
}

// v[w·stride + i] += v[w·stride + i + half] for i < m − half, every window w: one level of a
// pairwise sum over the first m entries of each window's row.
template<class bucket_t, class bucket_h = typename bucket_t::mem_t>
__launch_bounds__(BUCKET_MSM_THREADS) __global__
void halve(bucket_h* v, uint32_t wins, uint32_t stride, uint32_t m, uint32_t half)
{
    uint32_t k = (threadIdx.x + blockIdx.x * blockDim.x) / bucket_t::degree, pairs = m - half;
    if (k >= wins * pairs) return;
    bucket_h* row = v + (size_t)(k / pairs) * stride;
    uint32_t i = k % pairs;
    bucket_t a, b;
    a = row[i];
    b = row[i + half];
    a.add(b);
    row[i] = a;
}

// Device milliseconds of one call's steps, summed over its windows.
struct times_t {
    double sort, accumulate, reduce;
    uint32_t window_bits, windows, passes;
    bool batch_affine;
    size_t scratch_bytes;
};

// Timing events for the steps, created only when asked for (times != nullptr).
class step_events_t {
    std::vector<cudaEvent_t> ev;
public:
    step_events_t(bool on, size_t marks) : ev(on ? marks : 0, nullptr)
    {
        for (auto& e : ev)
            CUDA_OK(cudaEventCreate(&e));
    }
    ~step_events_t()
    {   for (auto e : ev) (void)cudaEventDestroy(e);   }
    step_events_t(const step_events_t&) = delete;
    step_events_t& operator=(const step_events_t&) = delete;

    void mark(size_t k, cudaStream_t s)
    {   if (!ev.empty()) CUDA_OK(cudaEventRecord(ev[k], s));   }
    double between(size_t a, size_t b) const
    {
        float ms = 0;
        CUDA_OK(cudaEventElapsedTime(&ms, ev[a], ev[b]));
        return ms;
    }
};

// The field of a bucket type's coordinates.
template<class bucket_t> struct field_of;
template<class field_t, class field_h, const field_h* a4>
struct field_of<xyzz_t<field_t, field_h, a4>> { typedef field_t type; };

// Where run() finds a scalar's multiples: copy j of the base, 2^(c·j)·P_i, at
// points[j·stride + i] for j < copies. A plain base is one copy (and any c); a table lets one
// pass put `copies` windows' digits into one bucket array, so an MSM pays one sort, one
// accumulation and one weighted sum per pass instead of per window.
struct table_t {
    uint32_t copies, c;
    size_t stride;

    static table_t plain(uint32_t c = 0) { return table_t{1, c, 0}; }
};

// The copies of a table of n points: table[j·n + i] = 2^(c·j)·table[i] for 0 < j < copies,
// in blst's affine layout (infinity stays (0, 0)). Once per base, at upload: c doublings and
// one inversion per point and copy. Every lane runs the same rounds (a past-the-end lane
// repeats the last point and stores nothing): the inversion works across the warp.
template<class bucket_t, class affine_h, class field_t, class field_h>
__launch_bounds__(256) __global__
void expand(affine_h* table, size_t n, uint32_t copies, uint32_t c)
{
#ifdef __CUDA_ARCH__
    typedef typename bucket_t::affine_t affine_t;
    const uint32_t degree = bucket_t::degree;
    const size_t lanes = (size_t)gridDim.x * blockDim.x / degree;
    const size_t tid = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / degree;
    const size_t rounds = (n + lanes - 1) / lanes;
    auto* out = reinterpret_cast<fixed_base::affine_out<field_h>*>(table);
    for (size_t r = 0; r < rounds; r++) {
        const size_t i = tid + r * lanes;
        affine_t p = table[i < n ? i : n - 1];
        bucket_t acc, twin;
        acc = p;
        #pragma unroll 1
        for (uint32_t j = 1; j < copies; j++) {
            #pragma unroll 1
            for (uint32_t d = 0; d < c; d++) {
                twin = acc;
                acc.add(twin); // equal inputs: sppark's formulas double
            }
            fixed_base::store_affine<field_t>(out[i < n ? j * n + i : 0], acc, i < n);
        }
    }
#endif
}

// Σ s_i·P_i over n points with scalars in device memory (Montgomery form when `mont`), on
// streams 0 and 1 of `gpu`. `points` is a plain base (c = 0 picks the window by size) or a
// table (its copies and c). n < 2^31 and copies·max(n, stride) < 2^31.
//
// Stream 1 sorts pass p + 1 while stream 0 accumulates and weighs pass p: the sort is memory-
// and atomic-bound and fits in the registers accumulate leaves free. Two sorted lists and
// offset tables alternate between passes; events order their reuse.
template<class bucket_t, class point_t, class affine_h>
void run(const gpu_t& gpu, point_t& out, const affine_h* points, const table_t& table,
         const fr_t* s, size_t n, bool mont, times_t* times)
{
    typedef typename bucket_t::mem_t bucket_h;
    typedef typename field_of<bucket_t>::type field_t;
    typedef typename field_t::mem_t field_h;
    out.inf();
    if (n == 0) return;
    const size_t copies = std::max<uint32_t>(table.copies, 1);
    if (n >= ((size_t)1 << 31) || copies * std::max(n, table.stride) >= ((size_t)1 << 31))
        throw std::runtime_error("bucket MSM takes fewer than 2^31 points and entries");
    const geometry_t g = table.c ? geometry_t::with(table.c) : geometry_t::for_points(n);
    const uint32_t nb = g.buckets;
    const uint32_t per_pass = (uint32_t)std::min<size_t>(copies, g.wins);
    const uint32_t passes = (g.wins + per_pass - 1) / per_pass;
    const uint32_t entries = (uint32_t)(per_pass * n), stride = (uint32_t)table.stride;
    const stream_t& st = gpu[0]; // accumulate, carries, weighing
    const stream_t& ss = gpu[1]; // sorting, a pass ahead
    const uint32_t degree = bucket_t::degree, threads = BUCKET_MSM_THREADS;
    const uint32_t acc_threads = BUCKET_MSM_ACC_THREADS, weigh_threads = BUCKET_MSM_WEIGH_THREADS;
    // Segments of at least AFFINE_MIN_LEN entries are summed by batch-affine additions
    // (accumulate_affine), in `chunks` launches of one wave of `lanes` segments (a lane pair
    // each for G2), a segment `len` entries at most, so that the scratch (a point and half a
    // product per entry) stays within n scalars' size: 4 GiB at 2^27. Shorter segments
    // (tables, small MSMs) go to XYZZ additions (accumulate), in two waves of blocks per SM.
    bool affine = false;
    uint32_t lanes = 0, chunks = 1, segs = gpu.sm_count() * 2 * acc_threads / degree;
    size_t len = 0;
    {
        int per_sm = 0;
        CUDA_OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm,
            accumulate_affine<bucket_t, affine_h, field_t, field_h>,
            BUCKET_MSM_AFFINE_THREADS, 0));
        const uint32_t wave =
            gpu.sm_count() * std::max(per_sm, 1) * BUCKET_MSM_AFFINE_THREADS / degree;
        const size_t budget = std::max(n * sizeof(fr_t), AFFINE_MIN_SCRATCH);
        const size_t need = (size_t)entries * (sizeof(affine_h) + sizeof(field_h) / 2);
        const uint32_t k = (uint32_t)std::max<size_t>(1, (need + budget - 1) / budget);
        const size_t l = ((size_t)entries + (size_t)k * wave - 1) / ((size_t)k * wave);
        affine = l >= AFFINE_MIN_LEN;
        if (affine)
            lanes = wave, chunks = k, segs = k * wave, len = l;
    }
    // Weighting ranges per pass: one wave of two weigh blocks per SM.
    const uint32_t per = std::max(1u, nb / (gpu.sm_count() * 2 * weigh_threads / degree));
    const uint32_t ranges = (nb + per - 1) / per;
    const uint32_t grid = gpu.sm_count() * 8;
    auto blocks = [&](size_t work, uint32_t block) {
        return (uint32_t)((work * degree + block - 1) / block);
    };

    // Everything is allocated (and later freed) on stream 0; stream 1 starts after it. One
    // pass needs no second sorted list.
    const size_t second = passes > 1 ? entries : 0;
    dev_ptr_t<uint32_t> keys{entries, st}, counts{nb + 1, st}, carry_of{segs, st},
                        piece{segs, st};
    dev_ptr_t<uint32_t> sorted0{entries, st}, sorted1{second, st}, starts0{nb + 1, st},
                        starts1{second ? nb + 1 : 0, st};
    uint32_t* sorted[2] = {&sorted0[0], second ? &sorted1[0] : nullptr};
    uint32_t* starts[2] = {&starts0[0], second ? &starts1[0] : nullptr};
    dev_ptr_t<bucket_h> buckets{nb, st}, carry{segs, st},
                        partial{(size_t)passes * ranges, st};
    dev_ptr_t<fixed_base::affine_out<field_h>> slots{len * lanes, st};
    dev_ptr_t<field_h> products{(len + 1) / 2 * lanes, st};
    const size_t scan_words = (nb + 1 + SCAN_TILE - 1) / SCAN_TILE;
    dev_ptr_t<uint32_t> tile_sums{scan_words, st};
    event_t allocated{st}, sorted_ev[2], consumed[2];
    allocated.wait(ss);

    // Marks: per pass, sort start/end on stream 1 and accumulate start/end/weighed on stream
    // 0; then the tree's start and end.
    step_events_t ev{times != nullptr, 5 * (size_t)passes + 2};
    auto sort = [&](uint32_t p) {
        int k = p & 1;
        uint32_t w0 = p * per_pass, wins = std::min(per_pass, g.wins - w0);
        if (p >= 2) consumed[k].wait(ss);
        ev.mark(5 * p, ss);
        ss.bzero(&counts[0], nb + 1);
        digits<<<grid, threads, 0, ss>>>(&keys[0], &counts[0], s, (uint32_t)n, w0, wins, g.c,
                                         mont);
        CUDA_OK(cudaGetLastError());
        exclusive_sum(starts[k], &tile_sums[0], &counts[0], nb + 1, ss);
        CUDA_OK(cudaMemcpyAsync(&counts[0], starts[k], nb * sizeof(uint32_t),
                                cudaMemcpyDeviceToDevice, ss));
        scatter<<<grid, threads, 0, ss>>>(sorted[k], &counts[0], &keys[0], (uint32_t)n,
                                          wins * (uint32_t)n, stride);
        CUDA_OK(cudaGetLastError());
        ev.mark(5 * p + 1, ss);
        sorted_ev[k].record(ss);
    };
    sort(0);
    for (uint32_t p = 0; p < passes; p++) {
        int k = p & 1;
        if (p + 1 < passes)
            sort(p + 1);
        sorted_ev[k].wait(st);
        ev.mark(5 * p + 2, st);
        if (affine) {
            for (uint32_t c = 0; c < chunks; c++) {
                accumulate_affine<bucket_t, affine_h, field_t, field_h>
                    <<<blocks(lanes, BUCKET_MSM_AFFINE_THREADS), BUCKET_MSM_AFFINE_THREADS, 0,
                       st>>>(
                    &buckets[0], &carry[0], &carry_of[0], points, sorted[k], starts[k], nb, segs,
                    c * lanes, &slots[0], &products[0]);
                CUDA_OK(cudaGetLastError());
            }
        } else {
            accumulate<bucket_t, affine_h><<<blocks(segs, acc_threads), acc_threads, 0, st>>>(
                &buckets[0], &carry[0], &carry_of[0], points, sorted[k], starts[k], nb);
            CUDA_OK(cudaGetLastError());
        }
        add_carries<bucket_t><<<blocks(segs, threads), threads, 0, st>>>(
            &buckets[0], &carry[0], &carry_of[0], &piece[0], segs);
        CUDA_OK(cudaGetLastError());
        add_pieces<bucket_t><<<blocks(segs, threads), threads, 0, st>>>(
            &buckets[0], &carry[0], &carry_of[0], &piece[0], segs);
        CUDA_OK(cudaGetLastError());
        ev.mark(5 * p + 3, st);
        weigh<bucket_t><<<blocks(ranges, weigh_threads), weigh_threads, 0, st>>>(
            &partial[(size_t)p * ranges], &buckets[0], starts[k], nb, per, ranges);
        CUDA_OK(cudaGetLastError());
        ev.mark(5 * p + 4, st);
        consumed[k].record(st);
    }
    ev.mark(5 * (size_t)passes, st);
    for (uint32_t m = ranges; m > 1;) {
        uint32_t half = (m + 1) / 2, work = passes * (m - half);
        halve<bucket_t><<<blocks(work, threads), threads, 0, st>>>(
            &partial[0], passes, ranges, m, half);
        CUDA_OK(cudaGetLastError());
        m = half;
    }
    ev.mark(5 * (size_t)passes + 1, st);

    std::vector<bucket_t> sums(passes);
    for (uint32_t p = 0; p < passes; p++)
        CUDA_OK(cudaMemcpyAsync(&sums[p], &partial[(size_t)p * ranges], sizeof(bucket_h),
                                cudaMemcpyDeviceToHost, st));
    st.sync();
    // Σ 2^(c·per_pass·p)·S_p.
    for (uint32_t p = passes; p-- > 0;) {
        for (uint32_t k = 0; k < g.c * per_pass; k++)
            out.dbl();
        out.add((point_t)sums[p]);
    }

    if (times) {
        *times = times_t{0, 0, 0, g.c, g.wins, passes, affine, 0};
        for (uint32_t p = 0; p < passes; p++) {
            times->sort += ev.between(5 * p, 5 * p + 1);
            times->accumulate += ev.between(5 * p + 2, 5 * p + 3);
            times->reduce += ev.between(5 * p + 3, 5 * p + 4);
        }
        times->reduce += ev.between(5 * passes, 5 * passes + 1);
        const size_t offsets = ((size_t)nb + 1) * (second ? 3 : 2); // counts, starts
        times->scratch_bytes = (2 * (size_t)entries + second + offsets + 2 * (size_t)segs
                                + scan_words) * sizeof(uint32_t)
                             + ((size_t)nb + segs + (size_t)passes * ranges) * sizeof(bucket_h)
                             + len * lanes * sizeof(affine_h)
                             + (len + 1) / 2 * lanes * sizeof(field_h);
    }
}

} // namespace bucket_msm
