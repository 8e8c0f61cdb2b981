// [gpu-msm] microbenchmark: is a BLS12-381 base-field Montgomery multiplication on the
// double-precision units faster than sppark's 32-bit integer one, alone or interleaved with it?
//
// The FP64 multiplication keeps the Montgomery form of sppark and blst (R = 2^384) by using
// eight 48-bit limbs. A 48 x 48-bit product is split exactly into its high and low 48 bits by
// two round-toward-zero FMAs (Emmart, Zheng and Weems, ARITH 2018: the addend 2^100 forces the
// high part's alignment to 2^48, the addend 2^52 - high the low part's to 1), and each part's raw
// bits are added into 64-bit integer column sums; the exponent bits that ride along are
// subtracted once per column through the column's initial value. Reduction is word by word
// (48-bit digits), its quotient digit also from an FMA pair.
//
// Measured on an H100 (docs/PERFORMANCE.md, "The multiplier's ceiling", log #66): alone 0.93x
// sppark's, interleaved with it at best 0.99x; not used by the prover.
//
// Each configuration runs independent chains x_c <- x_c * x_(c+1 mod n) per thread, some
// through sppark's fp_t and some through ours, and checks every chain's end value against the
// same chains all through sppark, word for word. Build: tools/fp64-mul/build.sh; run the binary
// on the GPU machine ([iterations] [repetitions]).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <algorithm>
#include <string>
#include <random>
#include <cuda_runtime.h>

#include <ff/bls12-381.hpp>
#include <ec/xyzz_t.hpp>

#define CHECK(x)                                                                    \
    do {                                                                            \
        cudaError_t e_ = (x);                                                       \
        if (e_ != cudaSuccess) {                                                    \
            fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
            exit(1);                                                                \
        }                                                                           \
    } while (0)

namespace fp64 {

constexpr uint64_t MASK48 = (1ull << 48) - 1;
constexpr uint64_t EXP52 = 0x4330000000000000ull;   // raw bits of 2^52
constexpr uint64_t EXP100 = 0x4630000000000000ull;  // raw bits of 2^100
constexpr double TWO52 = 4503599627370496.0;
constexpr double C1 = 1267650600228229401496703205376.0;  // 2^100
constexpr double C2 = C1 + TWO52;
// p in 48-bit limbs, and -p^-1 mod 2^48.
__host__ __device__ constexpr uint64_t P(int k) {
    constexpr uint64_t limbs[8] = {0xffffffffaaabull, 0xb153ffffb9feull, 0xf6241eabfffeull,
                                   0x6730d2a0f6b0ull, 0x4b84f38512bfull, 0x434bacd76477ull,
                                   0xe69a4b1ba7b6ull, 0x1a0111ea397full};
    return limbs[k];
}
constexpr uint64_t MP = 0xfffcfffcfffdull;

// Products (i, j) with i + j = k, i, j < 8.
__host__ __device__ constexpr uint64_t pairs(int k) {
    return (k < 0 || k > 14) ? 0 : (uint64_t)((k < 7 ? k : 14 - k) + 1);
}
// A column's starting value: minus the exponent bits of every low part (2 x pairs(k): a*b and
// q*p) and high part (2 x pairs(k - 1)) that will be added to it, modulo 2^64.
__host__ __device__ constexpr uint64_t col_init(int k) {
    return 0ull - (2 * pairs(k) * EXP52 + 2 * pairs(k - 1) * EXP100);
}

__device__ __forceinline__ double to_double(uint64_t x) {
    return __longlong_as_double((long long)(EXP52 | x)) - TWO52;
}

struct limbs {
    uint64_t v[8];
};

__device__ __forceinline__ void split_add(double a, double b, uint64_t& lo_col, uint64_t& hi_col) {
    double hi = __fma_rz(a, b, C1);
    double lo = __fma_rz(a, b, C2 - hi);
    lo_col += (uint64_t)__double_as_longlong(lo);
    hi_col += (uint64_t)__double_as_longlong(hi);
}

__device__ __forceinline__ limbs mul(const limbs& a, const limbs& b) {
    double ad[8], bd[8];
#pragma unroll
    for (int k = 0; k < 8; k++) {
        ad[k] = to_double(a.v[k]);
        bd[k] = to_double(b.v[k]);
    }
    uint64_t col[16];
#pragma unroll
    for (int k = 0; k < 16; k++) col[k] = col_init(k);
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++) split_add(ad[i], bd[j], col[i + j], col[i + j + 1]);
#pragma unroll
    for (int i = 0; i < 8; i++) {
        double t = to_double(col[i] & MASK48);
        double qh = __fma_rz(t, (double)MP, C1);
        double q = __fma_rz(t, (double)MP, C2 - qh) - TWO52;
#pragma unroll
        for (int j = 0; j < 8; j++) split_add(q, (double)P(j), col[i + j], col[i + j + 1]);
        col[i + 1] += col[i] >> 48;
    }
    limbs r, d;
#pragma unroll
    for (int k = 0; k < 8; k++) {
        r.v[k] = col[8 + k] & MASK48;
        if (k < 7) col[9 + k] += col[8 + k] >> 48;
    }
    uint64_t borrow = 0;
#pragma unroll
    for (int k = 0; k < 8; k++) {
        uint64_t t = r.v[k] - P(k) - borrow;
        borrow = t >> 63;
        d.v[k] = t & MASK48;
    }
    return borrow ? r : d;
}

__device__ __forceinline__ limbs from_words(const uint32_t* w) {
    limbs r;
#pragma unroll
    for (int m = 0; m < 4; m++) {
        r.v[2 * m] = w[3 * m] | ((uint64_t)(w[3 * m + 1] & 0xffff) << 32);
        r.v[2 * m + 1] = (w[3 * m + 1] >> 16) | ((uint64_t)w[3 * m + 2] << 16);
    }
    return r;
}

__device__ __forceinline__ void to_words(const limbs& r, uint32_t* w) {
#pragma unroll
    for (int m = 0; m < 4; m++) {
        w[3 * m] = (uint32_t)r.v[2 * m];
        w[3 * m + 1] = (uint32_t)(r.v[2 * m] >> 32) | ((uint32_t)r.v[2 * m + 1] << 16);
        w[3 * m + 2] = (uint32_t)(r.v[2 * m + 1] >> 16);
    }
}

}  // namespace fp64

using bls12_381::fp_t;

__device__ __forceinline__ fp_t load(const uint32_t* w) {
    fp_t x;
    memcpy(&x, w, 48);
    return x;
}

__device__ __forceinline__ fp_t mul64(const fp_t& a, const fp_t& b) {
    uint32_t wa[12], wb[12], wr[12];
    memcpy(wa, &a, 48);
    memcpy(wb, &b, 48);
    fp64::to_words(fp64::mul(fp64::from_words(wa), fp64::from_words(wb)), wr);
    return load(wr);
}

typedef void (*kernel_t)(const uint32_t*, uint32_t*, int);

struct timing {
    double median;
    std::string raw;  // " raw [ms ...]"
};

// `reps` launches of `kernel` over `iters` rounds, timed by events.
static timing time_kernel(kernel_t kernel, int grid, const uint32_t* din, uint32_t* dout,
                          int iters, int reps) {
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    std::vector<float> ms;
    std::string raw = "  raw [";
    for (int r = 0; r < reps; r++) {
        CHECK(cudaEventRecord(a));
        kernel<<<grid, 256>>>(din, dout, iters);
        CHECK(cudaEventRecord(b));
        CHECK(cudaEventSynchronize(b));
        float m;
        CHECK(cudaEventElapsedTime(&m, a, b));
        ms.push_back(m);
        char buf[32];
        snprintf(buf, sizeof buf, " %.2f", m);
        raw += buf;
    }
    CHECK(cudaEventDestroy(a));
    CHECK(cudaEventDestroy(b));
    std::sort(ms.begin(), ms.end());
    return {ms[ms.size() / 2], raw + " ]"};
}

// NS chains through sppark's multiplication and NF through ours (NATIVE: kept in 48-bit limbs
// between products), all independent within an iteration: x_c <- x_c * x_(c+1 mod n).
template <int NS, int NF, bool NATIVE>
__global__ void __launch_bounds__(256) chains(const uint32_t* in, uint32_t* out, int iters) {
    constexpr int N = NS + NF;
    size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (NATIVE) {
        fp64::limbs x[N];
#pragma unroll
        for (int c = 0; c < N; c++) x[c] = fp64::from_words(in + (t * N + c) * 12);
        for (int it = 0; it < iters; it++) {
            fp64::limbs n[N];
#pragma unroll
            for (int c = 0; c < N; c++) n[c] = fp64::mul(x[c], x[(c + 1) % N]);
#pragma unroll
            for (int c = 0; c < N; c++) x[c] = n[c];
        }
#pragma unroll
        for (int c = 0; c < N; c++) fp64::to_words(x[c], out + (t * N + c) * 12);
        return;
    }
    fp_t x[N];
#pragma unroll
    for (int c = 0; c < N; c++) x[c] = load(in + (t * N + c) * 12);
    for (int it = 0; it < iters; it++) {
        fp_t n[N];
#pragma unroll
        for (int c = 0; c < N; c++)
            n[c] = c >= NS ? mul64(x[c], x[(c + 1) % N]) : x[c] * x[(c + 1) % N];
#pragma unroll
        for (int c = 0; c < N; c++) x[c] = n[c];
    }
#pragma unroll
    for (int c = 0; c < N; c++) memcpy(out + (t * N + c) * 12, &x[c], 48);
}

struct config {
    const char* name;
    int chains;
    kernel_t kernel, reference;
};
static const config CONFIGS[] = {
    {"sppark x1", 1, chains<1, 0, false>, chains<1, 0, false>},
    {"sppark x2", 2, chains<2, 0, false>, chains<2, 0, false>},
    {"sppark x4", 4, chains<4, 0, false>, chains<4, 0, false>},
    {"fp64 x1 (32-bit io)", 1, chains<0, 1, false>, chains<1, 0, false>},
    {"fp64 x2 (32-bit io)", 2, chains<0, 2, false>, chains<2, 0, false>},
    {"fp64 x1 (48-bit limbs)", 1, chains<0, 1, true>, chains<1, 0, false>},
    {"fp64 x2 (48-bit limbs)", 2, chains<0, 2, true>, chains<2, 0, false>},
    {"sppark 1 + fp64 1", 2, chains<1, 1, false>, chains<2, 0, false>},
    {"sppark 2 + fp64 1", 3, chains<2, 1, false>, chains<3, 0, false>},
    {"sppark 3 + fp64 1", 4, chains<3, 1, false>, chains<4, 0, false>},
    {"sppark 2 + fp64 2", 4, chains<2, 2, false>, chains<4, 0, false>},
};

typedef xyzz_t<fp_t> bucket_t;
typedef bucket_t::affine_t affine_t;

// The compute-only rate of sppark's XYZZ mixed addition (the MSM's bucket sums): NB
// independent accumulators per thread each add one of two affine points held in registers.
template <int NB>
__global__ void __launch_bounds__(256) xyzz_chain(const uint32_t* in, uint32_t* out, int iters) {
    size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    const uint32_t* w = in + t * 12 * 8;
    bucket_t acc[NB];
    affine_t pt[2];
#pragma unroll
    for (int b = 0; b < NB; b++) memcpy(&acc[b], w + 48 * (b & 1), sizeof(bucket_t));
    memcpy(&pt[0], w + 24, sizeof(affine_t));
    memcpy(&pt[1], w + 72, sizeof(affine_t));
    for (int it = 0; it < iters; it++)
#pragma unroll
        for (int b = 0; b < NB; b++) acc[b].add(pt[(it + b) & 1]);
    bucket_t s = acc[0];
#pragma unroll
    for (int b = 1; b < NB; b++) s.add(acc[b]);
    memcpy(out + t * 48, &s, sizeof(bucket_t));
}

// sppark's XYZZ mixed addition without its special cases (the inputs are random, so P != 0),
// with the multiplications in MASK's bits through ours: bit 0 Y2*ZZZ1 (beside X2*ZZ1), bit 1
// ZZ1*PP (beside P*PP and X1*PP), bit 2 ZZZ1*PPP (beside Y1*PPP and R^2), bit 3 X1*PP.
struct xyzz_r {
    fp_t X, Y, ZZZ, ZZ;
};
template <int MASK>
__device__ __forceinline__ fp_t mulm(const fp_t& a, const fp_t& b) {
    return MASK ? mul64(a, b) : a * b;
}
template <int MASK>
__device__ __forceinline__ void add_generic(xyzz_r& p, const affine_t& q) {
    const fp_t* qf = reinterpret_cast<const fp_t*>(&q);
    fp_t R = mulm<MASK & 1>(qf[1], p.ZZZ);
    R -= p.Y;
    fp_t P = qf[0] * p.ZZ;
    P -= p.X;
    fp_t PP = P ^ 2;
    fp_t PPP = P * PP;
    p.ZZ = mulm<MASK & 2>(p.ZZ, PP);
    fp_t Q = mulm<MASK & 8>(PP, p.X);
    p.ZZZ = mulm<MASK & 4>(p.ZZZ, PPP);
    p.X = R ^ 2;
    p.X -= PPP;
    p.X -= Q;
    p.X -= Q;
    Q -= p.X;
    Q *= R;
    p.Y *= PPP;
    p.Y = Q - p.Y;
}

template <int MASK>
__global__ void __launch_bounds__(256) xyzz_generic(const uint32_t* in, uint32_t* out, int iters) {
    size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    const uint32_t* w = in + t * 12 * 8;
    xyzz_r acc;
    affine_t pt[2];
    memcpy(&acc, w, sizeof(acc));
    memcpy(&pt[0], w + 24, sizeof(affine_t));
    memcpy(&pt[1], w + 72, sizeof(affine_t));
    for (int it = 0; it < iters; it++) add_generic<MASK>(acc, pt[it & 1]);
    memcpy(out + t * 48, &acc, sizeof(acc));
}

static void xyzz_rates(const uint32_t* din, uint32_t* dout, size_t threads, int iters, int reps) {
    // The generic additions agree whichever multiplications go through ours.
    std::vector<uint32_t> ref(threads * 48), got(threads * 48);
    const kernel_t generic[] = {xyzz_generic<0>, xyzz_generic<4>, xyzz_generic<6>,
                                xyzz_generic<7>, xyzz_generic<15>};
    for (int k = 0; k < 5; k++) {
        generic[k]<<<(int)(threads / 256), 256>>>(din, dout, 5);
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(k ? got.data() : ref.data(), dout, ref.size() * 4,
                         cudaMemcpyDeviceToHost));
        if (k && ref != got) {
            printf("generic add %d: FAIL (differs from all-sppark)\n", k);
            exit(1);
        }
    }
    printf("generic adds agree with the all-sppark one\n");
    const struct {
        const char* name;
        int nb;
        kernel_t kernel;
    } cfgs[] = {{"xyzz add x1", 1, xyzz_chain<1>},
                {"xyzz add x2", 2, xyzz_chain<2>},
                {"generic add", 1, xyzz_generic<0>},
                {"generic, fp64 ZZZ*PPP", 1, xyzz_generic<4>},
                {"generic, fp64 +ZZ*PP", 1, xyzz_generic<6>},
                {"generic, fp64 +Y2*ZZZ", 1, xyzz_generic<7>},
                {"generic, fp64 +X1*PP", 1, xyzz_generic<15>}};
    for (auto& cf : cfgs) {
        cudaFuncAttributes attr;
        CHECK(cudaFuncGetAttributes(&attr, cf.kernel));
        int blocks = 0;
        CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, cf.kernel, 256, 0));
        timing tm = time_kernel(cf.kernel, (int)(threads / 256), din, dout, iters, reps);
        printf("%-24s regs %3d stack %4zu blocks/SM %d  median %8.2f ms  %6.2f G add/s%s\n",
               cf.name, attr.numRegs, attr.localSizeBytes, blocks, tm.median,
               threads * (double)cf.nb * iters / (tm.median * 1e-3) / 1e9, tm.raw.c_str());
        fflush(stdout);
    }
}

int main(int argc, char** argv) {
    int iters = argc > 1 ? atoi(argv[1]) : 2000;
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    int khz = 0;
    CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
    printf("device %s, %d SMs, %d MHz\n", prop.name, prop.multiProcessorCount, khz / 1000);

    // Random values below p (top word masked under p's), plus edge values.
    size_t threads = (size_t)prop.multiProcessorCount * 8 * 256;
    size_t words = threads * 4 * 12;
    std::vector<uint32_t> h(words);
    std::mt19937_64 rng(1);
    for (size_t i = 0; i < words; i++) h[i] = (uint32_t)rng();
    for (size_t e = 0; e < threads * 4; e++) h[e * 12 + 11] &= 0x0fffffff;
    const uint32_t pm1[12] = {0xffffaaaa, 0xb9feffff, 0xb153ffff, 0x1eabfffe, 0xf6b0f624, 0x6730d2a0,
                              0xf38512bf, 0x64774b84, 0x434bacd7, 0x4b1ba7b6, 0x397fe69a, 0x1a0111ea};
    memcpy(&h[0], pm1, 48);                   // p - 1 times
    memcpy(&h[12], pm1, 48);                  // p - 1
    memset(&h[24], 0, 48);                    // 0 times
    memcpy(&h[36], pm1, 48);                  // p - 1
    memset(&h[48], 0, 48); h[48] = 1;         // 1 times
    memset(&h[60], 0xff, 44); h[71] = 0x1a0111e9;  // all ones under p's top word

    uint32_t *din, *dout;
    CHECK(cudaMalloc(&din, words * 4));
    CHECK(cudaMalloc(&dout, words * 4));
    CHECK(cudaMemcpy(din, h.data(), words * 4, cudaMemcpyHostToDevice));

    int grid = (int)(threads / 256);
    std::vector<uint32_t> ref(words), got(words);
    int failures = 0;
    for (const config& cf : CONFIGS) {
        cudaFuncAttributes attr;
        CHECK(cudaFuncGetAttributes(&attr, cf.kernel));
        int blocks = 0;
        CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, cf.kernel, 256, 0));
        // Correctness: 3 rounds, against the same chains all through sppark.
        cf.reference<<<grid, 256>>>(din, dout, 3);
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(ref.data(), dout, words * 4, cudaMemcpyDeviceToHost));
        cf.kernel<<<grid, 256>>>(din, dout, 3);
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(got.data(), dout, words * 4, cudaMemcpyDeviceToHost));
        size_t bad = 0, used = threads * cf.chains * 12;
        for (size_t i = 0; i < used; i++) bad += ref[i] != got[i];
        if (bad) failures++;
        timing tm = time_kernel(cf.kernel, grid, din, dout, iters, reps);
        printf("%-24s regs %3d stack %4zu blocks/SM %d  check %s (%zu words differ)  median "
               "%8.2f ms  %6.2f G mul/s%s\n", cf.name, attr.numRegs, attr.localSizeBytes,
               blocks, bad ? "FAIL" : "ok", bad, tm.median,
               threads * (double)cf.chains * iters / (tm.median * 1e-3) / 1e9, tm.raw.c_str());
        fflush(stdout);
    }
    xyzz_rates(din, dout, threads / 2, iters / 4, reps);
    printf(failures ? "FAILED\n" : "all modes agree with sppark\n");
    return failures ? 1 : 0;
}
