// cuzk's CUDA kernels and their C ABI, built on sppark's Pippenger MSM and NTT.
//
// Every entry point catches every exception and returns a cuzk_status, so a CUDA failure (no
// device, out of memory, launch failure) reaches Rust as a value, never as an abort. Device
// memory is owned by RAII holders (sppark's dev_ptr_t / msm_t) and is released on every path.
//
// Field elements and points cross the ABI in blst's layout: Montgomery-form limbs, affine points
// as (x, y) with the point at infinity all zeros, projective results as Jacobian (x, y, z).

#include <cuda.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>

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

// C = (A·B − C) · z_inv, element-wise, in place over `a`.
__global__ void cuzk_combine_abc(fr_t* a, const fr_t* b, const fr_t* c, const fr_t z_inv,
                                 size_t n)
{
    size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = threadIdx.x + (size_t)blockIdx.x * blockDim.x; i < n; i += stride) {
        fr_t t = fr_t(a[i]) * fr_t(b[i]);
        t = t - fr_t(c[i]);
        a[i] = t * z_inv;
    }
}

#ifndef __CUDA_ARCH__

extern "C" {

// Status of one call: code 0 is success, a positive code is a cudaError_t, a negative one a
// host-side failure (see CUZK_* below). `message` is always NUL-terminated.
struct cuzk_status {
    int32_t code;
    char message[244];
};

}

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

typedef msm_t<bucket_t, point_t, affine_t, scalar_t> msm_g1_t;
typedef msm_t<bucket_fp2_t, point_fp2_t, affine_fp2_t, scalar_t> msm_g2_t;

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

cuzk_status cuzk_gpu_info(int ordinal, char name[256], int* sm, size_t* free_bytes,
                          size_t* total_bytes)
{
    return guarded([&] {
        CUZK_GPU(gpu, ordinal);
        snprintf(name, 256, "%s", gpu->props().name);
        *sm = gpu->props().major * 10 + gpu->props().minor;
        // Report memory in use, not memory cached by the stream-ordered allocator's pool.
        cudaMemPool_t pool;
        CUDA_OK(cudaDeviceSynchronize());
        CUDA_OK(cudaDeviceGetDefaultMemPool(&pool, gpu->cid()));
        CUDA_OK(cudaMemPoolTrimTo(pool, 0));
        cudaError_t e = cudaMemGetInfo(free_bytes, total_bytes);
        return e == cudaSuccess ? ok() : from_cuda(e);
    });
}

// A G1 or G2 base of `n` points uploaded once to `ordinal`; freed by cuzk_msm_g*_free.
#define CUZK_MSM_ENTRY_POINTS(G, msm_type, affine_type, point_type)                       \
cuzk_status cuzk_msm_##G##_new(int ordinal, const affine_type* points, size_t n,          \
                               msm_type** out)                                            \
{                                                                                         \
    *out = nullptr;                                                                       \
    return guarded([&] {                                                                  \
        if (n == 0) return status_of(CUZK_BAD_ARGUMENT, "empty MSM base");                \
        CUZK_GPU(gpu, ordinal);                                                           \
        *out = new msm_type(points, n, sizeof(affine_type), gpu->id());                   \
        return ok();                                                                      \
    });                                                                                   \
}                                                                                         \
cuzk_status cuzk_msm_##G##_run(msm_type* msm, const scalar_t* scalars, size_t n,          \
                               point_type* out)                                           \
{                                                                                         \
    return guarded([&] {                                                                  \
        if (n == 0) { out->inf(); return ok(); }                                          \
        return from_rust(msm->invoke(*out, (const affine_type*)nullptr, n, scalars, true)); \
    });                                                                                   \
}                                                                                         \
void cuzk_msm_##G##_free(msm_type* msm)                                                   \
{   try { delete msm; } catch (...) {}   }

CUZK_MSM_ENTRY_POINTS(g1, msm_g1_t, affine_t, point_t)
CUZK_MSM_ENTRY_POINTS(g2, msm_g2_t, affine_fp2_t, point_fp2_t)

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

// Uploads `n` values into a zero-padded 2^lg buffer and takes them from evaluations on the
// domain to evaluations on the coset (inverse NTT, then coset NTT; bit-reversed in between).
static void to_coset(stream_t& s, fr_t* d, const fr_t* host, size_t n, uint32_t lg)
{
    size_t size = (size_t)1 << lg;
    s.HtoD(d, host, n);
    if (n < size) s.bzero(d + n, size - n);
    if (lg == 0)
        return; // one point: every transform is the identity (sppark's kernels need two)
    NTT::Base_dev_ptr(s, d, lg, NTT::InputOutputOrder::NR, NTT::Direction::inverse,
                      NTT::Type::standard);
    NTT::Base_dev_ptr(s, d, lg, NTT::InputOutputOrder::RN, NTT::Direction::forward,
                      NTT::Type::coset);
}

// The quotient h = (a·b − c)/Z in coefficient form, computed on the device; a, b, c (length n)
// cross the bus once. If `h_out` is set, the 2^lg coefficients are copied back. If `h_msm` is
// set (its base is the key's H query), Σ h_i·H_i over its base is written to `msm_out`
// straight from device memory.
cuzk_status cuzk_quotient(int ordinal, const fr_t* a, const fr_t* b, const fr_t* c, size_t n,
                          uint32_t lg, const fr_t* z_inv, fr_t* h_out, msm_g1_t* h_msm,
                          size_t h_len, point_t* msm_out)
{
    return guarded([&] {
        CUZK_GPU(gpu, ordinal);
        size_t size = (size_t)1 << lg;
        if (n > size || h_len > size)
            return status_of(CUZK_BAD_ARGUMENT, "witness longer than the domain");
        dev_ptr_t<fr_t> d_a{size, (*gpu)[0]};
        {
            dev_ptr_t<fr_t> d_b{size, (*gpu)[1]}, d_c{size, (*gpu)[2]};
            to_coset((*gpu)[0], &d_a[0], a, n, lg);
            to_coset((*gpu)[1], &d_b[0], b, n, lg);
            to_coset((*gpu)[2], &d_c[0], c, n, lg);
            (*gpu)[1].sync();
            (*gpu)[2].sync();
            cuzk_combine_abc<<<gpu->sm_count() * 4, 256, 0, (*gpu)[0]>>>(
                &d_a[0], &d_b[0], &d_c[0], *z_inv, size);
            CUDA_OK(cudaGetLastError());
            if (lg > 0)
                NTT::Base_dev_ptr((*gpu)[0], &d_a[0], lg, NTT::InputOutputOrder::NN,
                                  NTT::Direction::inverse, NTT::Type::coset);
            (*gpu)[0].sync();
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
            return from_rust(h_msm->invoke(*msm_out, (const affine_t*)nullptr, h_len, d_a, true));
        }
        return ok();
    });
}

} // extern "C"

#endif
