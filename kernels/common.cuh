// What every kernel file shares: sentinels of the packed 64-bit words, coherent
// loads, warp reductions and grid-stride loops.
//
// Sizes that Python also needs (threads per block, vertices per warp, ...) are
// not written here: nx_gpumatch/gpu/<problem>.py passes them as -D defines, to
// NVRTC and to the CPU emulation alike, so each number exists once.
#ifndef NX_GPUMATCH_COMMON_CUH
#define NX_GPUMATCH_COMMON_CUH

// Rank of an edge that may never be used (weight <= 0); ranks of usable edges
// are 0 (best) .. usable - 1.
#define NO_RANK 0x7FFFFFFF
#define FULL_MASK 0xFFFFFFFFu
// A word (rank << 32 | vertex): smaller is better; an empty slot holds the
// largest word, so any real offer beats it.
#define EMPTY_WORD 0x7FFFFFFFFFFFFFFFull
#define LOW_MASK 0xFFFFFFFFull
// Larger than every word: "no candidate" in a reduction.
#define NO_KEY 0xFFFFFFFFFFFFFFFFull

// Grid-stride loop over 0 <= i < count (64-bit index).
#define GRID_STRIDE(i, count)                                                       \
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < (count); \
         i += (long long)gridDim.x * blockDim.x)

// Read memory that other threads change while this one runs. volatile makes
// each read a real load from the coherent L2 (a stale value is still safe for
// every caller: the words they read only move one way). The CPU emulation
// makes it the relaxed atomic load it stands for.
#ifdef NX_GPUMATCH_EMULATION
#define COHERENT_LOAD(T, p) nxg_emu::coherent_load(p)
#else
#define COHERENT_LOAD(T, p) (*(const volatile T*)(p))
#endif

__device__ __forceinline__ unsigned long long load_u64(const unsigned long long* p)
{
    return COHERENT_LOAD(unsigned long long, p);
}

__device__ __forceinline__ long long load_i64(const long long* p)
{
    return COHERENT_LOAD(long long, p);
}

__device__ __forceinline__ int load_i32(const int* p)
{
    return COHERENT_LOAD(int, p);
}

// The writing side: a store other threads read with the loads above while
// this one runs (volatile: straight to L2; a relaxed atomic store in the
// emulation). Ordering against other memory still needs a fence.
#ifdef NX_GPUMATCH_EMULATION
#define COHERENT_STORE(T, p, v) nxg_emu::coherent_store(p, v)
#else
#define COHERENT_STORE(T, p, v) (*(volatile T*)(p) = (v))
#endif

__device__ __forceinline__ void store_i64(long long* p, long long v)
{
    COHERENT_STORE(long long, p, v);
}

__device__ __forceinline__ void store_i32(int* p, int v)
{
    COHERENT_STORE(int, p, v);
}

__device__ __forceinline__ unsigned long long warp_min_u64(unsigned long long v)
{
    for (int off = 16; off > 0; off >>= 1) {
        const unsigned long long o = __shfl_xor_sync(FULL_MASK, v, off);
        v = o < v ? o : v;
    }
    return v;
}

__device__ __forceinline__ unsigned long long warp_max_u64(unsigned long long v)
{
    for (int off = 16; off > 0; off >>= 1) {
        const unsigned long long o = __shfl_xor_sync(FULL_MASK, v, off);
        v = o > v ? o : v;
    }
    return v;
}

// 32-bit warp reductions: one instruction from sm_80 on (and one exchange in
// the CPU emulation), shuffles before.
__device__ __forceinline__ unsigned warp_max_u32(unsigned v)
{
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    return __reduce_max_sync(FULL_MASK, v);
#else
    for (int off = 16; off > 0; off >>= 1) {
        const unsigned o = __shfl_xor_sync(FULL_MASK, v, off);
        v = o > v ? o : v;
    }
    return v;
#endif
}

__device__ __forceinline__ unsigned warp_sum_u32(unsigned v)
{
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    return __reduce_add_sync(FULL_MASK, v);
#else
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(FULL_MASK, v, off);
    return v;
#endif
}

__device__ __forceinline__ long long warp_sum_i64(long long v)
{
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(FULL_MASK, v, off);
    return v;
}

// ------------------------------------------------------------ state bundles
// Kernels take related arrays as one struct passed by value (a "bundle"), so
// no parameter list grows long. A bundle holds pointers and plain scalars
// only, one `type name;` per field: nx_gpumatch/gpu/_source.py reads the
// fields from here, host code passes the bundle as a dict of them by name,
// and both back ends pack it in this layout (the emulation checks the
// compiler agrees). Kernels copy the fields into __restrict__ locals.

// One level of community detection as the Louvain and Leiden kernels read it:
// the graph in CSR, each vertex's weight k (the degree for modularity, the
// node weight for CPM) and res_over_m2 (resolution / 2m, or gamma for CPM).
struct LevelGraph {
    const long long* indptr;
    const int* indices;
    const double* w;
    const double* k;
    double res_over_m2;
};

// Adds v to a work counter (tests bound the work of a launch with it); a null
// pointer means nobody counts.
__device__ __forceinline__ void count_work(unsigned long long* work, long long v)
{
    if (work != nullptr && v > 0) atomicAdd(work, (unsigned long long)v);
}

#endif  // NX_GPUMATCH_COMMON_CUH
