// Fixed-base scalar multiplication for parameter generation: out[i] = s_i·G for hundreds of
// millions of scalars (a 32 GiB key's queries), from the host's window table of G.
//
// The table holds d·2^(w·k)·G at k·(2^w − 1) + d − 1 (unsigned w-bit digits d, windows k), as
// cuzk-groth16's FixedBase builds it for the CPU. One thread (a lane pair in G2) per scalar adds
// one table point per non-zero digit into an XYZZ accumulator, then turns it affine with one
// inversion: the output is blst's affine layout, so the host takes the points as they come.
// sppark's XYZZ formulas handle doubling and cancellation, so every scalar is exact.

namespace fixed_base {

// sppark's xyzz_t keeps its coordinates private and converts to affine only on the host; this
// is the layout it declares (X, Y, ZZZ, ZZ), for the device-side conversion below.
template<class field_t> struct xyzz_coords { field_t X, Y, ZZZ, ZZ; };

// An affine point as blst lays it out: (x, y), both zero for the point at infinity.
template<class field_h> struct affine_out { field_h X, Y; };

#ifdef __CUDA_ARCH__ // fr_t's limbs are private in the host pass
// Bits [off, off + w) of the canonical scalar s (w ≤ 16; zero past the top).
__device__ __forceinline__ uint32_t bits(const fr_t& s, uint32_t off, uint32_t w)
{
    uint32_t i = off / 32;
    uint64_t x = s[i];
    if (i + 1 < sizeof(fr_t) / 4)
        x |= (uint64_t)s[i + 1] << 32;
    return (uint32_t)(x >> (off % 32)) & ((1u << w) - 1);
}
#endif

#ifdef __CUDA_ARCH__
// Stores `acc` in blst's affine layout when `store`: x = X/ZZ, y = Y/ZZZ from 1/ZZZ alone
// (ZZ³ = ZZZ²); infinity (ZZZ = 0) gives (0, 0). The inversion works across the warp, so every
// lane calls this, storing or not.
template<class field_t, class field_h, class bucket_t>
__device__ __forceinline__ void store_affine(affine_out<field_h>& out, const bucket_t& acc,
                                             bool store)
{
    static_assert(sizeof(xyzz_coords<field_t>) == sizeof(bucket_t), "xyzz_t's layout");
    const xyzz_coords<field_t>& c = reinterpret_cast<const xyzz_coords<field_t>&>(acc);
    field_t y = c.ZZZ.reciprocal();
    field_t x = y * c.ZZ;
    x = x^2;
    x *= c.X;
    y *= c.Y;
    if (store) {
        out.X = x;
        out.Y = y;
    }
}
#endif

// out[i] = scalars[i]·G for i < n, scalars in Montgomery form. Every lane runs the same
// number of rounds (a past-the-end lane repeats the last scalar and stores nothing): the
// inversion at the end works across the warp.
template<class bucket_t, class affine_h, class field_t, class field_h>
__launch_bounds__(256) __global__
void multiply(affine_out<field_h>* out, const affine_h* table, uint32_t window,
              const fr_t* scalars, size_t n)
{
#ifdef __CUDA_ARCH__
    typedef typename bucket_t::affine_t affine_t;
    const uint32_t degree = bucket_t::degree;
    const size_t lanes = (size_t)gridDim.x * blockDim.x / degree;
    const size_t tid = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / degree;
    const uint32_t row = (1u << window) - 1, windows = (255 + window - 1) / window;
    const size_t rounds = (n + lanes - 1) / lanes;
    for (size_t r = 0; r < rounds; r++) {
        const size_t i = tid + r * lanes;
        fr_t s = scalars[i < n ? i : n - 1];
        s.from();
        bucket_t acc;
        acc.inf();
        #pragma unroll 1
        for (uint32_t k = 0; k < windows; k++) {
            uint32_t d = bits(s, k * window, window);
            if (d) {
                affine_t p = table[(size_t)k * row + d - 1];
                acc.add(p);
            }
        }
        store_affine<field_t>(out[i < n ? i : 0], acc, i < n);
    }
#endif
}

// Host side: out[0..n) = s_i·G for n host scalars, through `gpu` in chunks (scalars up, points
// down), with `rows` table points of `window`-bit digits (checked by the caller) uploaded once.
template<class bucket_t, class field_t, class affine_t = typename bucket_t::affine_t>
void run(const gpu_t& gpu, affine_t* out, const affine_t* table, size_t rows, uint32_t window,
         const fr_t* scalars, size_t n)
{
    typedef typename affine_t::mem_t affine_h;
    typedef typename field_t::mem_t field_h;
    if (n == 0)
        return;
    gpu.select();
    const stream_t& st = gpu[0];
    dev_ptr_t<affine_h> d_table{rows, st};
    st.HtoD(&d_table[0], table, rows, sizeof(affine_t));
    // 2^25 scalars per chunk: 1 GiB up, 3 or 6 GiB down.
    const size_t chunk = std::min(n, (size_t)1 << 25);
    dev_ptr_t<fr_t> d_s{chunk, st};
    dev_ptr_t<affine_h> d_out{chunk, st};
    const uint32_t threads = 256, grid = gpu.sm_count() * 8;
    for (size_t off = 0; off < n; off += chunk) {
        size_t len = std::min(chunk, n - off);
        st.HtoD(&d_s[0], scalars + off, len);
        multiply<bucket_t, affine_h, field_t, field_h><<<grid, threads, 0, st>>>(
            reinterpret_cast<affine_out<field_h>*>(&d_out[0]), &d_table[0], window, &d_s[0], len);
        CUDA_OK(cudaGetLastError());
        st.DtoH(out + off, &d_out[0], len);
        st.sync();
    }
}

} // namespace fixed_base
