// cuzk's CUDA kernels and their C ABI, built on sppark's Pippenger MSM and NTT.
//
// Every entry point catches every exception and returns a cuzk_status, so a CUDA failure (no
// device, out of memory, launch failure) reaches Rust as a value, never as an abort. Device
// memory is owned by RAII holders (sppark's dev_ptr_t / msm_t) and is released on every path.
//
// Field elements and points cross the ABI in blst's layout: Montgomery-form limbs, affine points
// as (x, y) with the point at infinity all zeros, projective results as Jacobian (x, y, z).

#include <cuda.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <new>
#include <thread>
#include <type_traits>
#include <vector>

#include <ff/bls12-381-fp2.hpp>
#include <ec/jacobian_t.hpp>
#include <ec/xyzz_t.hpp>

typedef jacobian_t<fp_t> point_t;
typedef xyzz_t<fp_t> bucket_t;
typedef bucket_t::affine_t affine_t;
typedef jacobian_t<fp2_t> point_fp2_t;
typedef xyzz_t<fp2_t> bucket_fp2_t;
typedef bucket_fp2_t::affine_t affine_fp2_t;
typedef fr_t scalar_t;

#include <msm/pippenger.cuh>
#include <ntt/ntt.cuh>
#include "fixed_base.cuh"
#include "bucket_msm.cuh"

// sppark instantiates its MSM kernels for the G1 typedefs above. The G2 ones are otherwise
// instantiated only from host code (inside #ifndef __CUDA_ARCH__), which the device pass never
// sees: launching them would fail with "invalid device function".
template __global__
void accumulate<bucket_fp2_t, affine_fp2_t::mem_t>(bucket_fp2_t::mem_t buckets_[],
                                                   uint32_t nwins, uint32_t wbits,
                                                   affine_fp2_t::mem_t points_[],
                                                   const vec2d_t<uint32_t> digits,
                                                   const vec2d_t<uint32_t> histogram,
                                                   uint32_t sid);
template __global__
void batch_addition<bucket_fp2_t>(bucket_fp2_t::mem_t buckets[],
                                  const affine_fp2_t::mem_t points[], size_t npoints,
                                  const uint32_t digits[], const uint32_t& ndigits);
template __global__
void integrate<bucket_fp2_t>(bucket_fp2_t::mem_t buckets_[], uint32_t nwins, uint32_t wbits,
                             uint32_t nbits);

// sppark's GPU table (select_gpu, ngpus, ...). Rust never references the sppark crate, so its
// own copy of this file is not linked; ours is.
#ifndef __CUDA_ARCH__
# include <util/all_gpus.cpp>
#endif

// a = a·b, element-wise.
__global__ void cuzk_mul(fr_t* a, const fr_t* b, size_t n)
{
    size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = threadIdx.x + (size_t)blockIdx.x * blockDim.x; i < n; i += stride)
        a[i] = fr_t(a[i]) * fr_t(b[i]);
}

// a = (a − c)·z_inv, element-wise.
__global__ void cuzk_sub_scale(fr_t* a, const fr_t* c, const fr_t z_inv, size_t n)
{
    size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = threadIdx.x + (size_t)blockIdx.x * blockDim.x; i < n; i += stride)
        a[i] = (fr_t(a[i]) - fr_t(c[i])) * z_inv;
}


// ---- PCE on the device -------------------------------------------------------------------
// A matrix in cuzk-pce's compact form: per non-zero one u32 (column << 4 | tag); tags 0..14 index
// the dictionary, tag 15 takes the index from `escapes` (one per escaped entry, in entry order).

__device__ __forceinline__ fr_t fr_zero()
{   return fr_t::one(1);   }

// Per row, the index of its first escape: one thread per block of `chunk_rows` rows, starting
// from that block's mark. Runs once per upload.
__global__ void cuzk_row_escapes(uint32_t* row_esc, const uint32_t* row_starts,
                                 const uint32_t* entries, const uint32_t* marks, size_t rows,
                                 uint32_t chunk_rows)
{
    size_t blocks = (rows + chunk_rows - 1) / chunk_rows;
    size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t k = threadIdx.x + (size_t)blockIdx.x * blockDim.x; k < blocks; k += stride) {
        uint32_t esc = marks[k];
        size_t end = min(rows, (k + 1) * (size_t)chunk_rows);
        for (size_t r = k * chunk_rows; r < end; r++) {
            row_esc[r] = esc;
            for (uint32_t e = row_starts[r]; e < row_starts[r + 1]; e++)
                esc += (entries[e] & 15) == 15;
        }
    }
}

// out[r] = Σ dict[tag] · w[col] over row r's entries; one thread per row. Coefficients ±1 (at
// dictionary indices `one`, `minus_one`, or ~0 when absent) are added without a multiplication.
__global__ void cuzk_spmv(fr_t* out, const uint32_t* row_starts, const uint32_t* entries,
                          const uint32_t* escapes, const uint32_t* row_esc, const fr_t* dict,
                          uint32_t one, uint32_t minus_one, const fr_t* w, size_t rows)
{
    size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t r = threadIdx.x + (size_t)blockIdx.x * blockDim.x; r < rows; r += stride) {
        fr_t acc = fr_zero();
        uint32_t esc = row_esc[r];
        for (uint32_t k = row_starts[r]; k < row_starts[r + 1]; k++) {
            uint32_t e = entries[k];
            uint32_t idx = (e & 15) == 15 ? escapes[esc++] : (e & 15);
            fr_t v = w[e >> 4];
            if (idx == one)
                acc += v;
            else if (idx == minus_one)
                acc -= v;
            else
                acc += v * dict[idx];
        }
        out[r] = acc;
    }
}

// out[i] = w[idx[i]]: the A and B scalar vectors, gathered by the circuit's fixed densities.
__global__ void cuzk_gather(fr_t* out, const fr_t* w, const uint32_t* idx, size_t n)
{
    size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = threadIdx.x + (size_t)blockIdx.x * blockDim.x; i < n; i += stride)
        out[i] = w[idx[i]];
}

// w[i] of w = input ‖ aux from its packed form (cuzk_pce::Packed): 0 where bit i % 64 of
// zero[i / 64] is set, 1 where that of one[i / 64] is, else the next of its word's others,
// which start at others[starts[i / 64]].
__global__ void cuzk_unpack_columns(fr_t* w, size_t n, const uint64_t* zero, const uint64_t* one,
                                    const uint32_t* starts, const fr_t* others)
{
    size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = threadIdx.x + (size_t)blockIdx.x * blockDim.x; i < n; i += stride) {
        size_t k = i / 64;
        uint32_t b = i % 64;
        uint64_t z = zero[k], o = one[k];
        fr_t x;
        if (z >> b & 1)
            x.zero();
        else if (o >> b & 1)
            x = fr_t::one();
        else
            x = others[starts[k] + __popcll(~(z | o) & ((1ull << b) - 1))];
        w[i] = x;
    }
}

// ---- Witness MSMs: zeros skipped, ones summed, the rest through Pippenger ----------------

// x == 1 (fr_t::is_one crashes this nvcc's code generator).
__device__ __forceinline__ bool is_mont_one(const fr_t& x)
{
    const fr_t one = fr_t::one();
    const uint32_t* a = reinterpret_cast<const uint32_t*>(&x);
    const uint32_t* b = reinterpret_cast<const uint32_t*>(&one);
    uint32_t d = 0;
    for (size_t k = 0; k < sizeof(fr_t) / 4; k++)
        d |= a[k] ^ b[k];
    return d == 0;
}

// Walks s[0..n) one warp per 32 scalars (whole warps, so ballots see every lane): every lane
// calls `each(i, lane, ones, others, mine)` with the warp's masks of scalars equal to 1 and of
// scalars neither 0 nor 1, and whether its own s[i] is one of the latter.
template<class F>
__device__ __forceinline__ void each_warp_of_scalars(const fr_t* s, size_t n, F each)
{
    size_t stride = (size_t)blockDim.x * gridDim.x; // a multiple of 32
    size_t n_up = (n + 31) & ~(size_t)31;
    uint32_t lane = threadIdx.x & 31;
    for (size_t i = threadIdx.x + (size_t)blockIdx.x * blockDim.x; i < n_up; i += stride) {
        bool one = false, other = false;
        if (i < n) {
            fr_t x = s[i];
            bool zero = x.is_zero();
            one = !zero && is_mont_one(x);
            other = !zero && !one;
        }
        each(i, lane, __ballot_sync(0xffffffff, one), __ballot_sync(0xffffffff, other), other);
    }
}

// ones: the bitmap of scalars equal to 1 (bit i%32 of word i/32); counts: how many are
// neither 0 nor 1, and how many are 1.
__global__ void cuzk_scalar_classes(uint32_t* ones, uint32_t counts[2], const fr_t* s, size_t n)
{
    __shared__ uint32_t block_counts[2];
    if (threadIdx.x < 2) block_counts[threadIdx.x] = 0;
    __syncthreads();
    uint32_t* counted = block_counts; // (a lambda capturing the __shared__ itself crashes nvcc)
    each_warp_of_scalars(s, n, [=](size_t i, uint32_t lane, uint32_t one, uint32_t other, bool) {
        if (lane == 0) {
            ones[i / 32] = one;
            if (other) atomicAdd_block(&counted[0], __popc(other));
            if (one) atomicAdd_block(&counted[1], __popc(one));
        }
    });
    __syncthreads();
    if (threadIdx.x < 2 && block_counts[threadIdx.x])
        atomicAdd(&counts[threadIdx.x], block_counts[threadIdx.x]);
}

// Copies the scalars that are neither 0 nor 1, and their points, to ts / tp (in any order:
// an MSM does not depend on it); `next` starts at 0.
template<class affine_h>
__global__ void cuzk_compact_others(fr_t* ts, affine_h* tp, uint32_t* next, const fr_t* s,
                                    const affine_h* p, size_t n)
{
    each_warp_of_scalars(s, n, [=](size_t i, uint32_t lane, uint32_t, uint32_t other,
                                   bool mine) {
        if (!other) return;
        uint32_t base = lane == 0 ? atomicAdd(next, __popc(other)) : 0;
        base = __shfl_sync(0xffffffff, base, 0);
        if (mine) {
            uint32_t k = base + __popc(other & ((1u << lane) - 1));
            ts[k] = s[i];
            tp[k] = p[i];
        }
    });
}

// The device pass instantiates kernels only where device code names them; these are launched
// from host code alone (see the note on the G2 Pippenger kernels above).
template __global__ void cuzk_compact_others<affine_t::mem_t>(
    fr_t*, affine_t::mem_t*, uint32_t*, const fr_t*, const affine_t::mem_t*, size_t);
template __global__ void cuzk_compact_others<affine_fp2_t::mem_t>(
    fr_t*, affine_fp2_t::mem_t*, uint32_t*, const fr_t*, const affine_fp2_t::mem_t*, size_t);
template __global__ void batch_addition<bucket_t, affine_t::mem_t>(
    bucket_t::mem_t[], const affine_t::mem_t[], uint32_t, const uint32_t[], bool, uint32_t);
template __global__ void batch_addition<bucket_fp2_t, affine_fp2_t::mem_t>(
    bucket_fp2_t::mem_t[], const affine_fp2_t::mem_t[], uint32_t, const uint32_t[], bool,
    uint32_t);
// Our bucket MSM's kernels (bucket_msm.cuh), launched only from host code too.
#define BUCKET_MSM_KERNELS(B, A, F)                                                              \
template __global__ void bucket_msm::accumulate<B, A::mem_t>(                               \
    B::mem_t*, B::mem_t*, uint32_t*, const A::mem_t*, const uint32_t*, const uint32_t*,       \
    uint32_t);                                                                                \
template __global__ void bucket_msm::add_carries<B>(B::mem_t*, B::mem_t*, const uint32_t*,  \
                                                    uint32_t*, uint32_t);                     \
template __global__ void bucket_msm::add_pieces<B>(B::mem_t*, const B::mem_t*,              \
                                                   const uint32_t*, const uint32_t*,          \
                                                   uint32_t);                                 \
template __global__ void bucket_msm::weigh<B>(B::mem_t*, const B::mem_t*, const uint32_t*,  \
                                              uint32_t, uint32_t, uint32_t);                  \
template __global__ void bucket_msm::halve<B>(B::mem_t*, uint32_t, uint32_t, uint32_t,      \
                                              uint32_t);                                     \
template __global__ void bucket_msm::expand<B, A::mem_t, F, F::mem_t>(A::mem_t*, size_t,     \
                                                                      uint32_t, uint32_t);    \
template __global__ void bucket_msm::accumulate_affine<B, A::mem_t, F, F::mem_t>(            \
    B::mem_t*, B::mem_t*, uint32_t*, const A::mem_t*, const uint32_t*, const uint32_t*,       \
    uint32_t, uint32_t, uint32_t, fixed_base::affine_out<F::mem_t>*, F::mem_t*);
BUCKET_MSM_KERNELS(bucket_t, affine_t, fp_t)
BUCKET_MSM_KERNELS(bucket_fp2_t, affine_fp2_t, fp2_t)
// The fixed-base multiplication (fixed_base.cuh), launched only from host code too.
template __global__ void fixed_base::multiply<bucket_t, affine_t::mem_t, fp_t, fp_t::mem_t>(
    fixed_base::affine_out<fp_t::mem_t>*, const affine_t::mem_t*, uint32_t, const fr_t*, size_t);
template __global__ void fixed_base::multiply<bucket_fp2_t, affine_fp2_t::mem_t, fp2_t,
                                              fp2_t::mem_t>(
    fixed_base::affine_out<fp2_t::mem_t>*, const affine_fp2_t::mem_t*, uint32_t, const fr_t*,
    size_t);


#ifndef __CUDA_ARCH__

extern "C" {

// Status of one call: code 0 is success, a positive code is a cudaError_t, a negative one a
// host-side failure (see CUZK_* below). `message` is always NUL-terminated.
struct cuzk_status {
    int32_t code;
    char message[244];
};

// Wall times (ms) of a quotient's steps, filled only when the caller passes one: each step then
// waits for the device, so asking costs a few synchronisations.
struct cuzk_quotient_times {
    double abc;          // a, b, c in device memory (upload or mat-vec), zero-padded
    double coset;        // a, b to the coset (two inverse + two coset NTTs), c's coefficients
    double combine;      // a·b on the coset
    double coefficients; // inverse coset NTT, then (· − c)/Z
    double msm;          // the H MSM
};

// Where a witness MSM's time goes (filled as cuzk_quotient_times is): the scalars' classes,
// the sum of the ones' points, the Pippenger over the rest, and how many of each there were.
struct cuzk_split_times {
    double gather;   // A and B: the scalars picked out of input ‖ aux
    double classes;  // zeros, ones and the rest counted
    double ones;     // the ones' points summed by batch addition
    double others;   // the rest compacted and through Pippenger
    uint64_t ones_n;
    uint64_t others_n;
};

}

// Which Pippenger takes an MSM whose scalars all go through buckets: by size (ours from
// the crossover on), sppark's, or ours (bucket_msm.cuh).
// CUZK_MSM_TABLE is ours over the base's table of multiples (ours plain where there is none);
// by size, a base with a table always takes it.
enum : int32_t {
    CUZK_MSM_AUTO = 0, CUZK_MSM_SPPARK = 1, CUZK_MSM_BUCKETS = 2, CUZK_MSM_TABLE = 3
};

// The smallest G1 and G2 MSMs that our bucket MSM takes by default (measured: docs/GPU.md).
// G1: the two are equal at 2^26 (1.00x with batch-affine sums), ours is faster at 2^27
// (1.12x on the H200), so ours takes over midway. G2: sppark's up to 2^24 (0.94x), ours from 2^26, where its segments are long enough
// for batch-affine sums (1.14x; 1.36x at a 32 GiB WindowPoSt's B G2, 91.9 M points).
#ifndef BUCKET_MSM_CROSSOVER_G1
# define BUCKET_MSM_CROSSOVER_G1 ((size_t)3 << 25)
#endif
#ifndef BUCKET_MSM_CROSSOVER_G2
# define BUCKET_MSM_CROSSOVER_G2 ((size_t)1 << 26)
#endif

// The process-wide choice for CUZK_MSM_AUTO calls (cuzk_msm_prefer).
static std::atomic<int32_t> preferred_msm{CUZK_MSM_AUTO};

enum : int32_t {
    CUZK_BAD_ORDINAL = -1,
    CUZK_HOST_ALLOC = -2,
    CUZK_BAD_ARGUMENT = -3,
    CUZK_UNKNOWN = -4,
};

static cuzk_status status_of(int32_t code, const char* what)
{
    cuzk_status s;
    s.code = code;
    snprintf(s.message, sizeof(s.message), "%s", what ? what : "");
    return s;
}

static cuzk_status ok()
{   return status_of(0, "");   }

static cuzk_status from_cuda(cudaError_t e)
{   return status_of((int32_t)e, cudaGetErrorString(e));   }

// sppark reports a cudaError_t `e` as the code -e (with TAKE_RESPONSIBILITY_FOR_ERROR_MESSAGE,
// plus a malloc'ed message that is ours to free).
static int32_t from_sppark_code(int code)
{   return code < 0 ? -code : CUZK_UNKNOWN;   }

static cuzk_status from_rust(RustError e)
{
    if (e.code == 0)
        return ok();
    cuzk_status s = status_of(from_sppark_code(e.code),
                              e.message ? e.message : "sppark error without a message");
    free(e.message);
    return s;
}

// Runs `body`, turning every exception into a status.
template<class F> static cuzk_status guarded(F body)
{
    try {
        return body();
    } catch (const cuda_error& e) {
        return status_of(from_sppark_code(e.code()), e.what());
    } catch (const std::bad_alloc&) {
        return status_of(CUZK_HOST_ALLOC, "host allocation failed");
    } catch (const std::exception& e) {
        return status_of(CUZK_UNKNOWN, e.what());
    } catch (...) {
        return status_of(CUZK_UNKNOWN, "unknown C++ exception");
    }
}

// sppark indexes its GPU table without a bounds check; every entry point goes through here.
static const gpu_t* gpu_at(int ordinal)
{
    if (ordinal < 0 || (size_t)ordinal >= ngpus())
        return nullptr;
    return &select_gpu(ordinal);
}

#define CUZK_GPU(var, ordinal)                                                        \
    const gpu_t* var = gpu_at(ordinal);                                               \
    if (!var) return status_of(CUZK_BAD_ORDINAL, "no GPU with this ordinal")

// The stream-ordered allocator pool of `gpu`, made the current device.
static cudaMemPool_t default_pool(const gpu_t& gpu)
{
    gpu.select();
    cudaMemPool_t pool;
    CUDA_OK(cudaDeviceGetDefaultMemPool(&pool, gpu.cid()));
    return pool;
}

// Waits for the device's work, then hands the blocks its stream-ordered pool holds unused back
// to the driver: before a plain cudaMalloc, which cannot take them (a backend's pool keeps
// what each proof frees: cuzk_gpu_keep_pool), and before reading the free memory.
static void settle_pool(const gpu_t& gpu)
{
    cudaMemPool_t pool = default_pool(gpu);
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemPoolTrimTo(pool, 0));
}

// Host-to-device copies through two pinned staging buffers filled by several threads: the
// driver's pageable path copies on one thread through small buffers.
class staged_upload_t {
    static constexpr size_t CHUNK = (size_t)64 << 20;
    void* stage[2] = {nullptr, nullptr};
    cudaEvent_t done[2] = {nullptr, nullptr};
    unsigned threads;

    static void fill(void* dst, const void* src, size_t bytes, unsigned threads)
    {
        if (threads < 2 || bytes < ((size_t)1 << 20)) {
            memcpy(dst, src, bytes);
            return;
        }
        std::vector<std::thread> pool;
        size_t part = (bytes / threads + 63) & ~(size_t)63;
        for (unsigned t = 0; t < threads; t++) {
            size_t off = t * part;
            if (off >= bytes) break;
            size_t len = std::min(part, bytes - off);
            pool.emplace_back([=] { memcpy((char*)dst + off, (const char*)src + off, len); });
        }
        for (auto& th : pool) th.join();
    }

public:
    staged_upload_t()
    {
        threads = std::max(1u, std::min(8u, std::thread::hardware_concurrency() / 2));
        for (int i = 0; i < 2; i++) {
            CUDA_OK(cudaHostAlloc(&stage[i], CHUNK, cudaHostAllocDefault));
            CUDA_OK(cudaEventCreateWithFlags(&done[i], cudaEventDisableTiming));
        }
    }
    ~staged_upload_t()
    {
        for (int i = 0; i < 2; i++) {
            if (done[i]) (void)cudaEventSynchronize(done[i]), (void)cudaEventDestroy(done[i]);
            if (stage[i]) (void)cudaFreeHost(stage[i]);
        }
    }
    staged_upload_t(const staged_upload_t&) = delete;
    staged_upload_t& operator=(const staged_upload_t&) = delete;

    // Copies `bytes` from host `src` to device `dst` on `s`; returns when the data is there.
    // Not reentrant: see upload().
    void copy(const stream_t& s, void* dst, const void* src, size_t bytes)
    {
        for (size_t off = 0, k = 0; off < bytes; off += CHUNK, k++) {
            size_t len = std::min(CHUNK, bytes - off);
            int i = k & 1;
            CUDA_OK(cudaEventSynchronize(done[i])); // the copy that last read stage[i]
            fill(stage[i], (const char*)src + off, len, threads);
            CUDA_OK(cudaMemcpyAsync((char*)dst + off, stage[i], len, cudaMemcpyHostToDevice, s));
            CUDA_OK(cudaEventRecord(done[i], s));
        }
        s.sync();
    }
};

// Copies `bytes` from host `src` to `dst` on `gpu`, through that GPU's one staging pair
// (made on first use and kept for the process; the OS frees it at exit, after the CUDA
// runtime, which must not be called from static destructors). Uploads to one GPU take turns.
static void upload(const gpu_t& gpu, void* dst, const void* src, size_t bytes)
{
    static std::mutex locks[64];
    static staged_upload_t* staging[64];
    if ((size_t)gpu.id() >= 64)
        throw std::runtime_error("GPU ordinal beyond the staging table");
    std::lock_guard<std::mutex> turn(locks[gpu.id()]);
    gpu.select();
    if (!staging[gpu.id()])
        staging[gpu.id()] = new staged_upload_t();
    staging[gpu.id()]->copy(gpu[0], dst, src, bytes);
}

// Times the steps of one call into a `times` struct (cuzk_quotient_times, cuzk_split_times),
// if there is one.
template<class T>
class step_clock_t {
    const gpu_t& gpu;
    T* times;
    std::chrono::steady_clock::time_point t0;
public:
    step_clock_t(const gpu_t& gpu, T* times)
    : gpu(gpu), times(times), t0(std::chrono::steady_clock::now())
    {   if (times) *times = T{};   }

    // Waits for streams 0..2 and charges the time since the last lap to `step`.
    void lap(double T::* step)
    {
        if (!times) return;
        for (int i = 0; i < 3; i++) gpu[i].sync();
        auto t1 = std::chrono::steady_clock::now();
        times->*step = std::chrono::duration<double, std::milli>(t1 - t0).count();
        t0 = t1;
    }

    // Records a count beside the times.
    void set(uint64_t T::* field, uint64_t value)
    {   if (times) times->*field = value;   }
};

// A base (the points of one query) uploaded once to one GPU, with sppark's Pippenger state
// sized for it and, when asked for, a table of its multiples for our bucket MSM
// (bucket_msm::table_t: `copies` copies of the base, copy j holding 2^(c·j)·P_i).
template<class bucket_t, class point_t, class affine_t, class field_t>
class base_t {
    typedef typename affine_t::mem_t affine_h;
    typedef typename bucket_t::mem_t bucket_h;
    typedef msm_t<bucket_t, point_t, affine_t, scalar_t> pippenger_t;

    static constexpr bool is_g1 = std::is_same<affine_t, ::affine_t>::value;

    const gpu_t& gpu;
    size_t n;
    bucket_msm::table_t table;
    dev_ptr_t<affine_h> points; // the base, then the table's other copies
    pippenger_t pippenger;

    // Σ s_i·P_i over `len` points at `p` by sppark's Pippenger. (The device pointers go in
    // typed as affine_t: with affine_h, sppark's invoke calls itself forever.)
    static RustError by_sppark(pippenger_t& msm, point_t& out, affine_h* p, const fr_t* s,
                               size_t len)
    {
        return msm.invoke(out, dev_ptr_t<affine_t>(reinterpret_cast<affine_t*>(p)), len,
                          dev_ptr_t<fr_t>(const_cast<fr_t*>(s)), true);
    }

    // The Pippenger that `engine` (CUZK_MSM_AUTO: the preferred one, else by size) gives
    // `len` scalars over points with `tabled` multiples or none.
    static int32_t choose(size_t len, int32_t engine, bool tabled)
    {
        if (engine == CUZK_MSM_AUTO)
            engine = preferred_msm.load();
        if (engine == CUZK_MSM_AUTO) {
            size_t crossover = is_g1 ? BUCKET_MSM_CROSSOVER_G1 : BUCKET_MSM_CROSSOVER_G2;
            engine = tabled ? CUZK_MSM_TABLE
                   : len >= crossover ? CUZK_MSM_BUCKETS : CUZK_MSM_SPPARK;
        }
        if (engine == CUZK_MSM_TABLE && !tabled)
            engine = CUZK_MSM_BUCKETS;
        if (engine == CUZK_MSM_BUCKETS && len >= ((size_t)1 << 31))
            engine = CUZK_MSM_SPPARK;
        return engine;
    }

    // Σ s_i·P_i over `len` points at `p`, every scalar through one Pippenger (see choose);
    // `tab` is the table at `p`, if any; `msm` the sppark state to use, made for `len` points
    // when null.
    RustError full(point_t& out, affine_h* p, const fr_t* s, size_t len, int32_t engine,
                   pippenger_t* msm, const bucket_msm::table_t* tab,
                   uint32_t window_bits = 0, bucket_msm::times_t* times = nullptr)
    {
        engine = choose(len, engine, tab != nullptr);
        if (engine != CUZK_MSM_SPPARK) {
            gpu.select();
            bucket_msm::run<bucket_t>(gpu, out, p,
                                      engine == CUZK_MSM_TABLE
                                          ? *tab : bucket_msm::table_t::plain(window_bits),
                                      s, len, true, times);
            return RustError{cudaSuccess};
        }
        if (msm)
            return by_sppark(*msm, out, p, s, len);
        pippenger_t own{nullptr, len, sizeof(affine_t), gpu.id()};
        return by_sppark(own, out, p, s, len);
    }

public:
    // `copies` > 1 builds a table of that many copies for `table_bits`-bit windows (checked
    // by the caller: copies·n < 2^31, copies at most the windows).
    base_t(const gpu_t& gpu, const affine_t* h, size_t n, uint32_t table_bits = 0,
           uint32_t copies = 1)
    : gpu(gpu), n(n), table{std::max(copies, 1u), table_bits, n},
      points(n * table.copies), pippenger(nullptr, n, sizeof(affine_t), gpu.id())
    {
        gpu[0].HtoD(&points[0], h, n, sizeof(affine_t));
        if (table.copies > 1) {
            bucket_msm::expand<bucket_t, affine_h, field_t, typename field_t::mem_t>
                <<<gpu.sm_count() * 4, 256, 0, gpu[0]>>>(&points[0], n, table.copies, table_bits);
            CUDA_OK(cudaGetLastError());
        }
        gpu[0].sync();
    }

    size_t size() const { return n; }
    bool tabled() const { return table.copies > 1; }

    // Σ s_i·P_i over `n` points and scalars in host memory, by sppark's Pippenger, which
    // uploads the points a batch at a time while it sums the previous batch (device memory:
    // two batches of an eighth to a quarter of the points, their digits, the buckets).
    static RustError streamed(const gpu_t& gpu, point_t& out, const affine_t* h, const fr_t* s,
                              size_t n)
    {
        pippenger_t msm{nullptr, n, sizeof(affine_t), gpu.id()};
        return msm.invoke(out, h, n, s, true, sizeof(affine_t));
    }

    // `sparse` for scalars in host memory (uploaded first, through pinned staging: the
    // driver's pageable copy runs at a fifth of the speed).
    RustError sparse_from_host(point_t& out, const fr_t* h, size_t len)
    {
        dev_ptr_t<fr_t> d{len, gpu[0]};
        upload(gpu, &d[0], h, len * sizeof(fr_t));
        return sparse(out, &d[0], len);
    }

    // Σ s_i·P_i over the first `len` points, scalars (Montgomery form) in device memory, every
    // scalar through Pippenger (`engine`, see by_buckets): for random scalars (the quotient's).
    RustError dense(point_t& out, const fr_t* s, size_t len,
                    int32_t engine = CUZK_MSM_AUTO, uint32_t window_bits = 0,
                    bucket_msm::times_t* times = nullptr)
    {
        return full(out, &points[0], s, len, engine, &pippenger, tabled() ? &table : nullptr,
                    window_bits, times);
    }

    // `dense` by one engine with the scalars uploaded from the host once and the MSM run
    // `runs` times from device memory: ms[k] is run k's wall time, `steps` the last bucket
    // run's device steps.
    RustError timed(point_t& out, const fr_t* h, size_t len, int32_t engine,
                    uint32_t window_bits, uint32_t runs, double* ms,
                    bucket_msm::times_t* steps)
    {
        out.inf();
        if (len == 0) return RustError{cudaSuccess};
        dev_ptr_t<fr_t> d{len, gpu[0]};
        upload(gpu, &d[0], h, len * sizeof(fr_t));
        for (uint32_t k = 0; k < runs; k++) {
            auto t0 = std::chrono::steady_clock::now();
            RustError e = dense(out, &d[0], len, engine, window_bits, steps);
            gpu[0].sync();
            if (e.code != cudaSuccess) return e;
            ms[k] = std::chrono::duration<double, std::milli>(
                std::chrono::steady_clock::now() - t0).count();
        }
        return RustError{cudaSuccess};
    }

    // The same sum for witness scalars, which are mostly 0 and 1 (96-99 % in a PoRep
    // partition): zeros are skipped, the points of ones summed by sppark's batch addition, and
    // only the rest go through Pippenger. Falls back to `dense` when over a quarter are neither.
    RustError sparse(point_t& out, const fr_t* s, size_t len,
                     step_clock_t<cuzk_split_times>* clock = nullptr)
    {
        if (len == 0) { out.inf(); return RustError{cudaSuccess}; }
        if (len >= ((size_t)1 << 32) - 1024)
            return dense(out, s, len);
        // Whole 1024-bit blocks: batch addition reads the bitmap a warp's 32 words at a time.
        size_t words = (len + 1023) / 1024 * 32;
        const stream_t& st = gpu[0];
        dev_ptr_t<uint32_t> ones{words, st}, counter{2, st};
        st.bzero(&ones[0], words);
        st.bzero(&counter[0], 2);
        cuzk_scalar_classes<<<gpu.sm_count() * 4, 256, 0, st>>>(&ones[0], &counter[0], s, len);
        CUDA_OK(cudaGetLastError());
        uint32_t counts[2] = {0, 0};
        st.DtoH(counts, &counter[0], 2);
        st.sync();
        uint32_t others = counts[0];
        if (clock) clock->lap(&cuzk_split_times::classes);
        // Past a quarter the split saves less and its tail buffers (128-224 bytes per scalar)
        // would outgrow the per-proof scratch the engine plans for.
        if ((size_t)others * 4 > len)
            return dense(out, s, len);

        // The ones: per-warp partial sums, added up here.
        std::vector<bucket_t> partial(gpu.sm_count() * BATCH_ADD_BLOCK_SIZE / WARP_SZ);
        dev_ptr_t<bucket_h> d_partial{partial.size(), st};
        void (*add_ones)(bucket_h*, const affine_h*, uint32_t, const uint32_t*, bool, uint32_t)
            = batch_addition<bucket_t, affine_h>;
        st.launch_coop(add_ones, dim3(gpu.sm_count()), dim3(BATCH_ADD_BLOCK_SIZE), 0,
                       &d_partial[0], (const affine_h*)&points[0], (uint32_t)len,
                       (const uint32_t*)&ones[0], false, 0u);
        st.DtoH(partial, &d_partial[0]);
        if (clock) clock->lap(&cuzk_split_times::ones);

        // The rest, compacted.
        point_t tail;
        tail.inf();
        if (others) {
            dev_ptr_t<fr_t> ts{others, st};
            dev_ptr_t<affine_h> tp{others, st};
            st.bzero(&counter[0], 1);
            cuzk_compact_others<<<gpu.sm_count() * 4, 256, 0, st>>>(
                &ts[0], &tp[0], &counter[0], s, &points[0], len);
            CUDA_OK(cudaGetLastError());
            st.sync();
            RustError e = full(tail, &tp[0], &ts[0], others, CUZK_MSM_AUTO, nullptr, nullptr);
            if (e.code != cudaSuccess)
                return e;
        }
        st.sync();
        out = (point_t)sum_up(partial);
        out.add(tail);
        if (clock) {
            clock->lap(&cuzk_split_times::others);
            clock->set(&cuzk_split_times::ones_n, counts[1]);
            clock->set(&cuzk_split_times::others_n, others);
        }
        return RustError{cudaSuccess};
    }
};

typedef base_t<bucket_t, point_t, affine_t, fp_t> msm_g1_t;
typedef base_t<bucket_fp2_t, point_fp2_t, affine_fp2_t, fp2_t> msm_g2_t;

extern "C" {

cuzk_status cuzk_gpu_count(size_t* count)
{
    return guarded([&] {
        int n = 0;
        cudaError_t e = cudaGetDeviceCount(&n);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            return from_cuda(e);
        }
        *count = ngpus();
        return ok();
    });
}

// Name, compute capability and memory of GPU `ordinal`. With `settle`, first waits for the
// device's work and returns the stream-ordered allocator pool's cached blocks, so `free_bytes`
// shows memory really in use; without, it is the driver's figure now (status polling must not
// stall or trim a GPU that is proving).
cuzk_status cuzk_gpu_info(int ordinal, char name[256], int* sm, size_t* free_bytes,
                          size_t* total_bytes, int settle)
{
    return guarded([&] {
        CUZK_GPU(gpu, ordinal);
        snprintf(name, 256, "%s", gpu->props().name);
        *sm = gpu->props().major * 10 + gpu->props().minor;
        gpu->select();
        if (settle) settle_pool(*gpu);
        cudaError_t e = cudaMemGetInfo(free_bytes, total_bytes);
        return e == cudaSuccess ? ok() : from_cuda(e);
    });
}

// Whether the device's stream-ordered pool keeps the blocks a proof frees (release threshold
// at the maximum), so the next proof does not map them again, or hands them back to the
// driver at every synchronisation (0, CUDA's default); handing back also trims it now.
cuzk_status cuzk_gpu_keep_pool(int ordinal, int keep)
{
    return guarded([&] {
        CUZK_GPU(gpu, ordinal);
        uint64_t threshold = keep ? UINT64_MAX : 0;
        CUDA_OK(cudaMemPoolSetAttribute(default_pool(*gpu), cudaMemPoolAttrReleaseThreshold,
                                        &threshold));
        if (!keep) settle_pool(*gpu);
        return ok();
    });
}

// A G1 or G2 base of `n` points uploaded once to `ordinal`, with a table of `copies` copies
// for `table_bits`-bit windows when copies > 1; freed by cuzk_msm_g*_free.
#define CUZK_MSM_ENTRY_POINTS(G, msm_type, affine_type, point_type)                       \
cuzk_status cuzk_msm_##G##_new(int ordinal, const affine_type* points, size_t n,          \
                               uint32_t table_bits, uint32_t copies, msm_type** out)      \
{                                                                                         \
    *out = nullptr;                                                                       \
    return guarded([&] {                                                                  \
        if (n == 0) return status_of(CUZK_BAD_ARGUMENT, "empty MSM base");                \
        if (copies > 1                                                                    \
            && (table_bits < bucket_msm::geometry_t::MIN_BITS                             \
                || table_bits > bucket_msm::geometry_t::MAX_BITS                          \
                || copies > bucket_msm::geometry_t::with(table_bits).wins                 \
                || (size_t)copies * n >= ((size_t)1 << 31)))                              \
            return status_of(CUZK_BAD_ARGUMENT, "table does not fit its window or size"); \
        CUZK_GPU(gpu, ordinal);                                                           \
        settle_pool(*gpu); /* the points go in by cudaMalloc */                           \
        *out = new msm_type(*gpu, points, n, table_bits, copies);                         \
        return ok();                                                                      \
    });                                                                                   \
}                                                                                         \
cuzk_status cuzk_msm_##G##_run(msm_type* msm, const scalar_t* scalars, size_t n,          \
                               point_type* out)                                           \
{                                                                                         \
    return guarded([&] {                                                                  \
        if (n > msm->size())                                                              \
            return status_of(CUZK_BAD_ARGUMENT, "more scalars than points");              \
        return from_rust(msm->sparse_from_host(*out, scalars, n));                        \
    });                                                                                   \
}                                                                                         \
void cuzk_msm_##G##_free(msm_type* msm)                                                   \
{   try { delete msm; } catch (...) {}   }                                                   \
/* Σ s_i·P_i with points and scalars in host memory, the points streamed (base_t::streamed). */ \
cuzk_status cuzk_msm_##G##_streamed(int ordinal, const affine_type* points,               \
                                    const scalar_t* scalars, size_t n, point_type* out)   \
{                                                                                         \
    return guarded([&] {                                                                  \
        if (n == 0) return status_of(CUZK_BAD_ARGUMENT, "empty MSM");                     \
        CUZK_GPU(gpu, ordinal);                                                           \
        gpu->select();                                                                    \
        return from_rust(msm_type::streamed(*gpu, *out, points, scalars, n));             \
    });                                                                                   \
}                                                                                         \
/* Times Σ s_i·P_i over the first n points by one engine: CUZK_MSM_SPPARK,            */ \
/* CUZK_MSM_BUCKETS with `window_bits` (0: by size), or CUZK_MSM_TABLE (the base's     */ \
/* table). See base_t::timed. For benchmarks and the engines' agreement tests.         */ \
cuzk_status cuzk_msm_##G##_time(msm_type* msm, const scalar_t* scalars, size_t n,         \
                                int32_t engine, uint32_t window_bits, uint32_t runs,      \
                                point_type* out, double* ms, bucket_msm::times_t* steps)  \
{                                                                                         \
    return guarded([&] {                                                                  \
        if (n > msm->size())                                                              \
            return status_of(CUZK_BAD_ARGUMENT, "more scalars than points");              \
        if (engine != CUZK_MSM_SPPARK && engine != CUZK_MSM_BUCKETS                       \
            && engine != CUZK_MSM_TABLE)                                                  \
            return status_of(CUZK_BAD_ARGUMENT, "unknown MSM engine");                    \
        if (engine == CUZK_MSM_TABLE && !msm->tabled())                                   \
            return status_of(CUZK_BAD_ARGUMENT, "the base has no table");                 \
        if (window_bits && (window_bits < bucket_msm::geometry_t::MIN_BITS                \
                            || window_bits > bucket_msm::geometry_t::MAX_BITS))           \
            return status_of(CUZK_BAD_ARGUMENT, "window bits out of range");              \
        if (steps) *steps = bucket_msm::times_t{};                                        \
        return from_rust(msm->timed(*out, scalars, n, engine, window_bits, runs, ms,      \
                                    steps));                                              \
    });                                                                                   \
}

CUZK_MSM_ENTRY_POINTS(g1, msm_g1_t, affine_t, point_t)
CUZK_MSM_ENTRY_POINTS(g2, msm_g2_t, affine_fp2_t, point_fp2_t)

// out[i] = scalars[i]·G on `ordinal`, from G's window table (`rows` points of `window`-bit
// digits, as cuzk-groth16's FixedBase lays it out); scalars in Montgomery form, points in
// blst's affine layout.
#define CUZK_FIXED_BASE_ENTRY_POINT(G, bucket_type, field_type, affine_type)               \
cuzk_status cuzk_fixed_base_##G(int ordinal, const affine_type* table, size_t rows,        \
                                uint32_t window, const scalar_t* scalars, size_t n,        \
                                affine_type* out)                                          \
{                                                                                          \
    return guarded([&] {                                                                   \
        CUZK_GPU(gpu, ordinal);                                                            \
        if (window < 1 || window > 16                                                      \
            || rows != (size_t)((255 + window - 1) / window) * ((1u << window) - 1))       \
            return status_of(CUZK_BAD_ARGUMENT, "table does not match its window");        \
        fixed_base::run<bucket_type, field_type>(*gpu, out, table, rows, window, scalars,  \
                                                 n);                                       \
        return ok();                                                                       \
    });                                                                                    \
}
CUZK_FIXED_BASE_ENTRY_POINT(g1, bucket_t, fp_t, affine_t)
CUZK_FIXED_BASE_ENTRY_POINT(g2, bucket_fp2_t, fp2_t, affine_fp2_t)

// Sets the engine that MSMs asking for none use, process-wide: CUZK_MSM_AUTO (by size),
// CUZK_MSM_SPPARK or CUZK_MSM_BUCKETS.
cuzk_status cuzk_msm_prefer(int32_t engine)
{
    if (engine != CUZK_MSM_AUTO && engine != CUZK_MSM_SPPARK && engine != CUZK_MSM_BUCKETS
        && engine != CUZK_MSM_TABLE)
        return status_of(CUZK_BAD_ARGUMENT, "unknown MSM engine");
    preferred_msm.store(engine);
    return ok();
}

// In-place NTT over 2^lg elements: direction 0 forward, 1 inverse; coset 1 on the coset
// shifted by the multiplicative generator. Natural order in and out.
cuzk_status cuzk_ntt(int ordinal, fr_t* inout, uint32_t lg, int inverse, int coset)
{
    return guarded([&] {
        CUZK_GPU(gpu, ordinal);
        return from_rust(NTT::Base(*gpu, inout, lg, NTT::InputOutputOrder::NN,
                                   inverse ? NTT::Direction::inverse : NTT::Direction::forward,
                                   coset ? NTT::Type::coset : NTT::Type::standard));
    });
}

// Takes a zero-padded 2^lg buffer from evaluations on the domain to evaluations on the coset
// (inverse NTT, then coset NTT; bit-reversed in between).
static void to_coset(stream_t& s, fr_t* d, uint32_t lg)
{
    if (lg == 0)
        return; // one point: every transform is the identity (sppark's kernels need two)
    NTT::Base_dev_ptr(s, d, lg, NTT::InputOutputOrder::NR, NTT::Direction::inverse,
                      NTT::Type::standard);
    NTT::Base_dev_ptr(s, d, lg, NTT::InputOutputOrder::RN, NTT::Direction::forward,
                      NTT::Type::coset);
}

} // extern "C"


// h = (a·b − c)/Z in coefficient form on the device. `fill(d, size)` writes a, b, c into the
// three zero-padded 2^lg buffers d[0..3) on streams 0, 1, 2 of `gpu`; `h_out`, `h_msm` and
// `msm_out` are as cuzk_quotient describes.
template<class F>
static cuzk_status quotient_with(const gpu_t* gpu, uint32_t lg, const fr_t* z_inv, fr_t* h_out,
                                 msm_g1_t* h_msm, size_t h_len, point_t* msm_out,
                                 cuzk_quotient_times* times, F fill)
{
    size_t size = (size_t)1 << lg;
    if (h_len > size)
        return status_of(CUZK_BAD_ARGUMENT, "H query longer than the domain");
    step_clock_t<cuzk_quotient_times> clock{*gpu, times};
    dev_ptr_t<fr_t> d_a{size, (*gpu)[0]};
    {
        dev_ptr_t<fr_t> d_b{size, (*gpu)[1]}, d_c{size, (*gpu)[2]};
        fr_t* d[3] = {&d_a[0], &d_b[0], &d_c[0]};
        fill(d, size);
        clock.lap(&cuzk_quotient_times::abc);
        // c enters linearly and Z is constant on the coset, so c needs no coset transform:
        // h = (icoset(â·b̂) − coefficients(c))/Z, six NTTs instead of seven.
        to_coset((*gpu)[0], d[0], lg);
        to_coset((*gpu)[1], d[1], lg);
        if (lg > 0)
            NTT::Base_dev_ptr((*gpu)[2], d[2], lg, NTT::InputOutputOrder::NN,
                              NTT::Direction::inverse, NTT::Type::standard);
        (*gpu)[1].sync();
        clock.lap(&cuzk_quotient_times::coset);
        cuzk_mul<<<gpu->sm_count() * 4, 256, 0, (*gpu)[0]>>>(&d_a[0], &d_b[0], size);
        CUDA_OK(cudaGetLastError());
        clock.lap(&cuzk_quotient_times::combine);
        if (lg > 0)
            NTT::Base_dev_ptr((*gpu)[0], &d_a[0], lg, NTT::InputOutputOrder::NN,
                              NTT::Direction::inverse, NTT::Type::coset);
        (*gpu)[2].sync();
        cuzk_sub_scale<<<gpu->sm_count() * 4, 256, 0, (*gpu)[0]>>>(&d_a[0], &d_c[0], *z_inv,
                                                                  size);
        CUDA_OK(cudaGetLastError());
        (*gpu)[0].sync();
        clock.lap(&cuzk_quotient_times::coefficients);
    }
    if (h_out) {
        (*gpu)[0].DtoH(h_out, &d_a[0], size);
        (*gpu)[0].sync();
    }
    if (h_msm) {
        if (h_len == 0) {
            msm_out->inf();
            return ok();
        }
        RustError e = h_msm->dense(*msm_out, &d_a[0], h_len);
        clock.lap(&cuzk_quotient_times::msm);
        return from_rust(e);
    }
    return ok();
}

extern "C" {

// The quotient h = (a·b − c)/Z in coefficient form, computed on the device; a, b, c (length n)
// cross the bus once. If `h_out` is set, the 2^lg coefficients are copied back. If `h_msm` is
// set (its base is the key's H query), Σ h_i·H_i over its base is written to `msm_out`
// straight from device memory. `times`, if set, receives the steps' wall times.
cuzk_status cuzk_quotient(int ordinal, const fr_t* a, const fr_t* b, const fr_t* c, size_t n,
                          uint32_t lg, const fr_t* z_inv, fr_t* h_out, msm_g1_t* h_msm,
                          size_t h_len, point_t* msm_out, cuzk_quotient_times* times)
{
    return guarded([&] {
        CUZK_GPU(gpu, ordinal);
        if (n > ((size_t)1 << lg))
            return status_of(CUZK_BAD_ARGUMENT, "witness longer than the domain");
        const fr_t* host[3] = {a, b, c};
        return quotient_with(gpu, lg, z_inv, h_out, h_msm, h_len, msm_out, times,
                             [&](fr_t* d[3], size_t size) {
            for (int i = 0; i < 3; i++) {
                upload(*gpu, d[i], host[i], n * sizeof(fr_t));
                if (n < size) (*gpu)[i].bzero(d[i] + n, size - n);
            }
        });
    });
}

// A matrix as cuzk-pce holds it on the host.
struct cuzk_matrix_host {
    const uint32_t* row_starts; // rows + 1 words
    size_t rows;
    const uint32_t* entries;
    size_t nnz;
    const uint32_t* escapes;
    size_t nescapes;
    const uint32_t* marks;      // escapes before every chunk_rows-th row, then the total
    size_t nmarks;
    const fr_t* dict;
    size_t ndict;
    uint32_t chunk_rows;
    uint32_t one, minus_one;    // dictionary indices of ±1; ~0 when absent
};

} // extern "C"

template<class T> static void upload_now(const gpu_t& gpu, dev_ptr_t<T>& d, const T* h, size_t n)
{
    if (n) gpu[0].HtoD(&d[0], h, n);
}

// One matrix in device memory, with its per-row escape offsets.
struct dev_matrix_t {
    size_t rows;
    uint32_t one, minus_one;
    dev_ptr_t<uint32_t> row_starts, entries, escapes, row_esc;
    dev_ptr_t<fr_t> dict;

    dev_matrix_t(const gpu_t& gpu, const cuzk_matrix_host& m)
    : rows(m.rows), one(m.one), minus_one(m.minus_one), row_starts(m.rows + 1),
      entries(m.nnz), escapes(m.nescapes), row_esc(m.rows), dict(m.ndict)
    {
        upload_now(gpu, row_starts, m.row_starts, m.rows + 1);
        upload_now(gpu, entries, m.entries, m.nnz);
        upload_now(gpu, escapes, m.escapes, m.nescapes);
        upload_now(gpu, dict, m.dict, m.ndict);
        dev_ptr_t<uint32_t> marks{m.nmarks};
        upload_now(gpu, marks, m.marks, m.nmarks);
        if (rows) {
            cuzk_row_escapes<<<gpu.sm_count(), 256, 0, gpu[0]>>>(
                &row_esc[0], &row_starts[0], &entries[0], &marks[0], rows, m.chunk_rows);
            CUDA_OK(cudaGetLastError());
        }
        gpu[0].sync();
    }

    // out[0..rows) = M · w on stream `s`.
    void apply(const gpu_t& gpu, const stream_t& s, fr_t* out, const fr_t* w) const
    {
        if (rows == 0) return;
        cuzk_spmv<<<gpu.sm_count() * 8, 256, 0, s>>>(out, &row_starts[0], &entries[0],
                                                   &escapes[0], &row_esc[0], &dict[0], one,
                                                   minus_one, w, rows);
        CUDA_OK(cudaGetLastError());
    }
};

// A circuit's PCE resident on one GPU: the three matrices, the A and B gathers over
// w = input ‖ aux, and a device buffer for w.
struct cuzk_pce_t {
    const gpu_t& gpu;
    size_t num_inputs, num_aux, a_len, b_len;
    dev_matrix_t a, b, c;
    dev_ptr_t<uint32_t> a_idx, b_idx;
    dev_ptr_t<fr_t> w;

    cuzk_pce_t(const gpu_t& gpu, const cuzk_matrix_host m[3], size_t num_inputs,
               size_t num_aux, const uint32_t* a_idx_h, size_t a_len, const uint32_t* b_idx_h,
               size_t b_len)
    : gpu(gpu), num_inputs(num_inputs), num_aux(num_aux), a_len(a_len), b_len(b_len),
      a(gpu, m[0]), b(gpu, m[1]), c(gpu, m[2]), a_idx(a_len), b_idx(b_len),
      w(num_inputs + num_aux)
    {
        upload_now(gpu, a_idx, a_idx_h, a_len);
        upload_now(gpu, b_idx, b_idx_h, b_len);
        gpu[0].sync();
    }

    size_t rows() const { return a.rows; }
};

extern "C" {

cuzk_status cuzk_pce_new(int ordinal, const cuzk_matrix_host m[3], size_t num_inputs,
                         size_t num_aux, const uint32_t* a_idx, size_t a_len,
                         const uint32_t* b_idx, size_t b_len, cuzk_pce_t** out)
{
    *out = nullptr;
    return guarded([&] {
        CUZK_GPU(gpu, ordinal);
        if (m[1].rows != m[0].rows || m[2].rows != m[0].rows)
            return status_of(CUZK_BAD_ARGUMENT, "A, B and C have different row counts");
        if (num_inputs + num_aux >= ((size_t)1 << 28) || num_inputs == 0)
            return status_of(CUZK_BAD_ARGUMENT, "column count out of range");
        for (int i = 0; i < 3; i++) {
            const cuzk_matrix_host& x = m[i];
            if (x.chunk_rows == 0 || x.nmarks != (x.rows + x.chunk_rows - 1) / x.chunk_rows + 1
                || x.row_starts[x.rows] != x.nnz || x.marks[x.nmarks - 1] != x.nescapes)
                return status_of(CUZK_BAD_ARGUMENT, "matrix sections do not fit together");
        }
        settle_pool(*gpu); // the matrices go in by cudaMalloc
        *out = new cuzk_pce_t(*gpu, m, num_inputs, num_aux, a_idx, a_len, b_idx, b_len);
        return ok();
    });
}

void cuzk_pce_free(cuzk_pce_t* pce)
{   try { delete pce; } catch (...) {}   }

// Uploads one witness (input: num_inputs values, ONE first; aux: num_aux values).
cuzk_status cuzk_pce_upload(cuzk_pce_t* pce, const fr_t* input, const fr_t* aux)
{
    return guarded([&] {
        upload(pce->gpu, &pce->w[0], input, pce->num_inputs * sizeof(fr_t));
        upload(pce->gpu, &pce->w[pce->num_inputs], aux, pce->num_aux * sizeof(fr_t));
        return ok();
    });
}

// Uploads one witness packed as cuzk_pce::Packed (zero and one bitmaps and `starts`, one word
// per 64 values; `num_others` other values) and expands it into w. The packed form is about a
// fortieth of w for PoRep's witness, which is 98.7 % bits.
cuzk_status cuzk_pce_upload_packed(cuzk_pce_t* pce, const uint64_t* zero, const uint64_t* one,
                                   const uint32_t* starts, const fr_t* others, size_t num_others)
{
    return guarded([&] {
        const gpu_t& gpu = pce->gpu;
        gpu.select();
        size_t n = pce->num_inputs + pce->num_aux, words = (n + 63) / 64;
        if (num_others > n)
            return status_of(CUZK_BAD_ARGUMENT, "more other values than columns");
        dev_ptr_t<uint64_t> z{words, gpu[0]}, o{words, gpu[0]};
        dev_ptr_t<uint32_t> s{words, gpu[0]};
        dev_ptr_t<fr_t> x{std::max(num_others, (size_t)1), gpu[0]};
        upload(gpu, &z[0], zero, words * sizeof(uint64_t));
        upload(gpu, &o[0], one, words * sizeof(uint64_t));
        upload(gpu, &s[0], starts, words * sizeof(uint32_t));
        upload(gpu, &x[0], others, num_others * sizeof(fr_t));
        cuzk_unpack_columns<<<gpu.sm_count() * 8, 256, 0, gpu[0]>>>(&pce->w[0], n, &z[0], &o[0],
                                                                     &s[0], &x[0]);
        CUDA_OK(cudaGetLastError());
        gpu[0].sync();
        return ok();
    });
}

// The uploaded witness's products A·w, B·w, C·w (rows values each) copied back.
cuzk_status cuzk_pce_products(cuzk_pce_t* pce, fr_t* a, fr_t* b, fr_t* c)
{
    return guarded([&] {
        const gpu_t& gpu = pce->gpu;
        gpu.select();
        size_t rows = pce->rows();
        dev_ptr_t<fr_t> d{std::max(rows, (size_t)1), gpu[0]};
        fr_t* host[3] = {a, b, c};
        const dev_matrix_t* m[3] = {&pce->a, &pce->b, &pce->c};
        for (int i = 0; i < 3; i++) {
            m[i]->apply(gpu, gpu[0], &d[0], &pce->w[0]);
            if (rows) gpu[0].DtoH(host[i], &d[0], rows);
            gpu[0].sync();
        }
        return ok();
    });
}

// cuzk_quotient for the uploaded witness: a, b, c are the matrices' products, with the
// `input · 0 = 0` rows (a gets the inputs, b and c zeros) after the constraints.
cuzk_status cuzk_pce_quotient(cuzk_pce_t* pce, uint32_t lg, const fr_t* z_inv, fr_t* h_out,
                              msm_g1_t* h_msm, size_t h_len, point_t* msm_out,
                              cuzk_quotient_times* times)
{
    return guarded([&] {
        const gpu_t& gpu = pce->gpu;
        gpu.select();
        size_t n = pce->rows() + pce->num_inputs;
        if (n > ((size_t)1 << lg))
            return status_of(CUZK_BAD_ARGUMENT, "circuit larger than the domain");
        const dev_matrix_t* m[3] = {&pce->a, &pce->b, &pce->c};
        return quotient_with(&gpu, lg, z_inv, h_out, h_msm, h_len, msm_out, times,
                             [&](fr_t* d[3], size_t size) {
            size_t rows = pce->rows();
            for (int i = 0; i < 3; i++) {
                m[i]->apply(gpu, gpu[i], d[i], &pce->w[0]);
                if (i == 0)
                    CUDA_OK(cudaMemcpyAsync(d[0] + rows, &pce->w[0],
                                            pce->num_inputs * sizeof(fr_t),
                                            cudaMemcpyDeviceToDevice, gpu[0]));
                else
                    gpu[i].bzero(d[i] + rows, pce->num_inputs);
                if (n < size) gpu[i].bzero(d[i] + n, size - n);
            }
        });
    });
}

// Which scalars of the uploaded witness an MSM takes: L the aux values, A and B the gathers.
enum : int32_t { CUZK_PCE_L = 0, CUZK_PCE_A = 1, CUZK_PCE_B = 2 };

} // extern "C"

// Runs `msm` over scalars `which` of the uploaded witness, in device memory.
template<class M, class P>
static cuzk_status pce_msm(cuzk_pce_t* pce, M* msm, int32_t which, P* out,
                           cuzk_split_times* times)
{
    return guarded([&] {
        const gpu_t& gpu = pce->gpu;
        gpu.select();
        step_clock_t<cuzk_split_times> clock{gpu, times};
        if (which != CUZK_PCE_L && which != CUZK_PCE_A && which != CUZK_PCE_B)
            return status_of(CUZK_BAD_ARGUMENT, "unknown PCE scalar set");
        size_t n = which == CUZK_PCE_L ? pce->num_aux
                 : which == CUZK_PCE_A ? pce->a_len : pce->b_len;
        if (n > msm->size())
            return status_of(CUZK_BAD_ARGUMENT, "more scalars than points");
        if (which == CUZK_PCE_L)
            return from_rust(msm->sparse(*out, &pce->w[pce->num_inputs], n, &clock));
        if (n == 0) { out->inf(); return ok(); }
        const uint32_t* idx = which == CUZK_PCE_A ? &pce->a_idx[0] : &pce->b_idx[0];
        dev_ptr_t<fr_t> s{n, gpu[0]};
        cuzk_gather<<<gpu.sm_count() * 4, 256, 0, gpu[0]>>>(&s[0], &pce->w[0], idx, n);
        CUDA_OK(cudaGetLastError());
        gpu[0].sync();
        clock.lap(&cuzk_split_times::gather);
        return from_rust(msm->sparse(*out, &s[0], n, &clock));
    });
}

extern "C" {

cuzk_status cuzk_pce_msm_g1(cuzk_pce_t* pce, msm_g1_t* msm, int32_t which, point_t* out,
                            cuzk_split_times* times)
{   return pce_msm(pce, msm, which, out, times);   }

cuzk_status cuzk_pce_msm_g2(cuzk_pce_t* pce, msm_g2_t* msm, int32_t which, point_fp2_t* out,
                            cuzk_split_times* times)
{   return pce_msm(pce, msm, which, out, times);   }

} // extern "C"

#endif
