// Small kernels that exercise the emulation's barriers, warp exchanges and
// atomics, plus deliberately broken ones that the emulation must catch.

__device__ __forceinline__ long long warp_sum(long long v)
{
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, off);
    return v;
}

// Sum of x: warp shuffles, a shared-memory stage behind __syncthreads, and
// one atomicAdd per block.
extern "C" __global__ void block_sum(const long long* __restrict__ x, long long n, unsigned long long* total)
{
    __shared__ long long partial[32];
    const unsigned lane = threadIdx.x & 31u;
    const unsigned warp = threadIdx.x >> 5;
    long long s = 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        s += x[i];
    s = warp_sum(s);
    if (lane == 0) partial[warp] = s;
    __syncthreads();
    if (warp == 0) {
        const unsigned nw = (blockDim.x + 31u) / 32u;
        long long v = lane < nw ? partial[lane] : 0;
        v = warp_sum(v);
        if (lane == 0) atomicAdd(total, (unsigned long long)v);
    }
}

// Per-warp ballots, xor butterflies, shfl broadcasts and dynamic shared memory.
extern "C" __global__ void warp_ops(const int* __restrict__ x, int n, int* out)
{
    extern __shared__ int stage[];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int lane = threadIdx.x & 31;
    int v = i < n ? x[i] : -1;
    stage[threadIdx.x] = v;
    __syncthreads();
    int mx = v;
    for (int off = 16; off > 0; off >>= 1) mx = max(mx, __shfl_xor_sync(0xffffffffu, mx, off));
    unsigned odd = __ballot_sync(0xffffffffu, v >= 0 && (v & 1));
    int first = __shfl_sync(0xffffffffu, v, 0);
    int prev = stage[threadIdx.x ^ 1];
    int up = __shfl_up_sync(0xffffffffu, v, 1);
    if (i < n) {
        out[4 * i + 0] = mx;
        out[4 * i + 1] = __popc(odd);
        out[4 * i + 2] = first + prev;
        out[4 * i + 3] = lane == 0 ? -7 : up;
    }
}

// Contended CAS loop: every thread increments counter[i % k] via atomicCAS.
extern "C" __global__ void cas_count(unsigned long long* counter, int k, int reps)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    for (int r = 0; r < reps; ++r) {
        unsigned long long* c = counter + ((t + r) % k);
        unsigned long long seen = *c;
        for (;;) {
            unsigned long long got = atomicCAS(c, seen, seen + 1ull);
            if (got == seen) break;
            seen = got;
        }
    }
}

// Broken on purpose: threads past n return before the block's barrier.
extern "C" __global__ void early_return_barrier(int* x, int n)
{
    __shared__ int s[128];
    const int i = threadIdx.x;
    if (i >= n) return;
    s[i] = x[i];
    __syncthreads();
    x[i] = s[(i + 1) % n];
}

// Broken on purpose: half the warp skips a full-mask shuffle.
extern "C" __global__ void divergent_shuffle(int* x)
{
    int v = x[threadIdx.x];
    if ((threadIdx.x & 31u) < 16u) v = __shfl_xor_sync(0xffffffffu, v, 1);
    x[threadIdx.x] = v;
}

// Broken on purpose: a barrier inside a branch only some threads take.
extern "C" __global__ void divergent_barrier(int* x)
{
    if (threadIdx.x < 32u) __syncthreads();
    x[threadIdx.x] += 1;
}

// Broken on purpose: spins on an atomic that nobody ever sets.
extern "C" __global__ void spin_forever(int* flag)
{
    while (atomicAdd(flag, 0) == 0) {
    }
}

// Broken on purpose: the increment is a plain read-modify-write, not atomic.
extern "C" __global__ void racy_count(int* counter, int reps)
{
    for (int r = 0; r < reps; ++r) {
        int v = *(volatile int*)counter;
        __threadfence();
        *(volatile int*)counter = v + 1;
    }
}

// A state bundle whose fields need padding between them (int before a
// pointer, bool before a long long, float last): its layout must be the one
// the launchers pack.
struct Mixed {
    int scale;
    const long long* in;
    bool negate;
    long long n;
    unsigned long long* out;
    float bias;
};

// out[i] = (negate ? -1 : 1) * scale * in[i] + bias for i < n (grid-stride);
// *written counts the entries.
extern "C" __global__ void mixed_bundle(Mixed m, unsigned long long* written)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < m.n;
         i += (long long)gridDim.x * blockDim.x) {
        const long long v = (m.negate ? -1 : 1) * (long long)m.scale * m.in[i];
        m.out[i] = (unsigned long long)(v + (long long)m.bias);
        atomicAdd(written, 1ull);
    }
}
