// The streams one chain of device work runs on.
//
// A GPU's own three streams (sppark's gpu_t) are shared by every caller, and sppark's Pippenger
// and batch addition must run on them: their kernels hand out work through per-stream device
// counters (`sid` i ↔ stream i), so two of them on one `sid` must be ordered by one stream.
// A chain that uses only NTTs and our own kernels can take streams of its own instead and run
// beside another caller's work: a proof's quotient and H MSM beside its witness MSMs.
// Included by cuzk_gpu.cu after sppark's GPU header.

struct lanes_t {
    const gpu_t& gpu;
    stream_t* s[3];

    // `gpu`'s own streams.
    static lanes_t of(const gpu_t& gpu) { return lanes_t{gpu, {&gpu[0], &gpu[1], &gpu[2]}}; }

    stream_t& operator[](int i) const { return *s[i]; }
    int sm_count() const { return gpu.sm_count(); }

    void sync() const
    {
        for (stream_t* x : s)
            x->sync();
    }
};

// Three streams of one GPU besides sppark's, owned: lanes that sppark's callers do not use.
class own_lanes_t {
    stream_t s0, s1, s2;
public:
    explicit own_lanes_t(const gpu_t& gpu) : s0(gpu.id()), s1(gpu.id()), s2(gpu.id()) {}
    own_lanes_t(const own_lanes_t&) = delete;
    own_lanes_t& operator=(const own_lanes_t&) = delete;

    lanes_t on(const gpu_t& gpu) { return lanes_t{gpu, {&s0, &s1, &s2}}; }
};
