// ½-approximate weighted matching on the GPU: Suitor, local max, red-blue.
//
// Kernels read the graph through arc_rank, the rank of each arc's edge in the
// package's edge order (0 = best, NO_RANK = never usable). Ranks are unique per
// edge, so no two offers ever tie and every engine returns the same matching
// (see nx_gpumatch/cpu/matching.py, read side by side with this file).
// Results are mate arrays: mate[v] = partner, -1 = unmatched.

#define NO_RANK 0x7FFFFFFF
#define FULL_MASK 0xFFFFFFFFu
// Suitor word of a vertex: (rank of the edge to its suitor) << 32 | suitor id.
// Smaller is a better offer; an empty slot holds the largest word.
#define EMPTY_WORD 0x7FFFFFFFFFFFFFFFull
#define LOW_MASK 0xFFFFFFFFull
#define NO_KEY 0xFFFFFFFFFFFFFFFFull
#define MAX_VPW 32
#define MAX_WARPS_PER_BLOCK 32

// Words are changed by other warps while this one reads them; volatile keeps
// each read a real load (a stale value is still safe: words only decrease).
__device__ __forceinline__ unsigned long long load_word(const unsigned long long* word, int v)
{
    return *(const volatile unsigned long long*)(word + v);
}

__device__ __forceinline__ unsigned long long warp_min_u64(unsigned long long v)
{
    for (int off = 16; off > 0; off >>= 1) {
        const unsigned long long o = __shfl_xor_sync(FULL_MASK, v, off);
        v = o < v ? o : v;
    }
    return v;
}

// ------------------------------------------------------------------ Suitor
// GPU-Suitor, NoSync variant (seed 000, paper I). Each warp owns a chunk of
// `vpw` vertices kept in its slice of shared memory. Per iteration:
//  1. for each queued vertex in turn, the 32 lanes scan its neighbourhood
//     together and a butterfly reduction picks the best neighbour whose
//     current suitor it beats; lane k keeps the candidate of queue entry k;
//  2. lane k offers its vertex to its candidate with a CAS on the packed
//     (rank, suitor) word;
//  3. vertices that must go again (beaten by a better offer, or displaced by
//     this one) are compacted into the queue with a ballot prefix sum.
// Each queued vertex yields at most one vertex for the next round, so the
// queue never outgrows the chunk. Warps never wait for each other.
extern "C" __global__ void suitor_warp(int n, const long long* __restrict__ indptr, const int* __restrict__ indices,
                                       const int* __restrict__ arc_rank, unsigned long long* word, int vpw)
{
    __shared__ int queue[MAX_WARPS_PER_BLOCK * MAX_VPW];
    const int lane = threadIdx.x & 31;
    int* q = queue + (threadIdx.x >> 5) * MAX_VPW;
    const long long first = ((long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5)) * vpw;
    int count = 0;
    if (first < n) count = (int)min((long long)vpw, (long long)n - first);
    if (lane < count) q[lane] = (int)(first + lane);
    __syncwarp();

    while (count > 0) {
        int my_v = -1;
        unsigned long long my_best = NO_KEY;
        for (int k = 0; k < count; ++k) {
            const int v = q[k];
            const long long end = indptr[v + 1];
            unsigned long long best = NO_KEY;
            for (long long p = indptr[v] + lane; p < end; p += 32) {
                const int r = arc_rank[p];
                if (r == NO_RANK) continue;
                const int x = indices[p];
                const unsigned long long key = ((unsigned long long)r << 32) | (unsigned)x;
                if (key < best && ((unsigned long long)r << 32) < (load_word(word, x) & ~LOW_MASK)) best = key;
            }
            best = warp_min_u64(best);
            if (lane == k) {
                my_v = v;
                my_best = best;
            }
        }
        __syncwarp();  // every lane has read the queue before it is rewritten

        int next = -1;
        if (my_best != NO_KEY) {
            const int x = (int)(my_best & LOW_MASK);
            const unsigned long long offer = (my_best & ~LOW_MASK) | (unsigned)my_v;
            unsigned long long seen = load_word(word, x);
            while (seen > offer) {
                const unsigned long long got = atomicCAS(word + x, seen, offer);
                if (got == seen) break;
                seen = got;  // what the CAS saw, never a re-read
            }
            if (seen <= offer)
                next = my_v;  // someone better got there first: look again
            else if (seen != EMPTY_WORD)
                next = (int)(seen & LOW_MASK);  // the vertex this offer displaced
        }
        const unsigned has = __ballot_sync(FULL_MASK, next >= 0);
        if (next >= 0) q[__popc(has & ((1u << lane) - 1u))] = next;
        count = __popc(has);
        __syncwarp();  // the new queue is visible to every lane
    }
}

// mate[v] from the final suitor words: v and s are matched when each is the
// other's suitor (checked both ways, so the result is always a matching).
extern "C" __global__ void suitor_mates(int n, const unsigned long long* __restrict__ word, long long* mate)
{
    for (long long v = blockIdx.x * (long long)blockDim.x + threadIdx.x; v < n; v += (long long)gridDim.x * blockDim.x) {
        const unsigned long long w = word[v];
        long long m = -1;
        if (w != EMPTY_WORD) {
            const long long s = (long long)(w & LOW_MASK);
            const unsigned long long ws = word[s];
            if (ws != EMPTY_WORD && (long long)(ws & LOW_MASK) == v) m = s;
        }
        mate[v] = m;
    }
}

// --------------------------------------------------------------- local max
// Locally-dominant matching in rounds (seed 000 GPU-LD, seed 003), one thread
// per active vertex. Rows of (sptr, snbr) list usable neighbours best-first,
// so a vertex's best free neighbour is found by moving head past matched ones.

// Phase 1: every active vertex points at its best unmatched neighbour. mate is
// only read here (phase 2 is a separate launch).
extern "C" __global__ void ld_candidates(int k, const int* __restrict__ active, const long long* __restrict__ sptr,
                                         const int* __restrict__ snbr, long long* head, const long long* __restrict__ mate,
                                         int* cand)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < k; i += (long long)gridDim.x * blockDim.x) {
        const int u = active[i];
        long long h = head[u];
        const long long end = sptr[u + 1];
        while (h < end && mate[snbr[h]] >= 0) ++h;
        head[u] = h;
        cand[u] = h < end ? snbr[h] : -1;
    }
}

// Phase 2: mutual pointers are locally dominant edges. Each pair is written by
// its smaller end only, so no two threads write the same entry.
extern "C" __global__ void ld_match(int k, const int* __restrict__ active, const int* __restrict__ cand, long long* mate)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < k; i += (long long)gridDim.x * blockDim.x) {
        const int u = active[i];
        const int c = cand[u];
        if (c > u && cand[c] == u) {
            mate[u] = c;
            mate[c] = u;
        }
    }
}

// ---------------------------------------------------------------- red-blue
// Randomized proposals (seed 001): each round colours the unfinished vertices
// blue with probability P_BLUE (a hash of (seed, round, vertex) instead of the
// seed's MD5), blue vertices propose to a red neighbour, each red accepts one
// proposer, and accepted pairs marry. Same hash and rules as the CPU engine,
// so the same seed gives the same matching.
#define RB_BLUE 0
#define RB_RED 1
#define RB_DONE 2

__device__ __forceinline__ unsigned long long rb_mix(unsigned long long x)
{
    // splitmix64 finalizer
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

__device__ __forceinline__ unsigned long long rb_hash3(unsigned long long seed, unsigned long long a, unsigned long long b)
{
    return rb_mix(rb_mix(seed ^ a) + b * 0x9E3779B97F4A7C15ull);
}

extern "C" __global__ void rb_color(int n, unsigned long long seed, long long rnd, unsigned long long threshold,
                                    signed char* color, int* sigma)
{
    for (long long v = blockIdx.x * (long long)blockDim.x + threadIdx.x; v < n; v += (long long)gridDim.x * blockDim.x) {
        if (color[v] != RB_DONE)
            color[v] = rb_hash3(seed, (unsigned long long)rnd, (unsigned long long)v) < threshold ? RB_BLUE : RB_RED;
        sigma[v] = -1;
    }
}

// side = RB_BLUE: blue vertices choose a red neighbour; side = RB_RED: red
// vertices choose among the blue neighbours that chose them. A vertex with no
// unmatched usable neighbour at all is done for good; the others count as
// alive. Within one launch a vertex only changes its own colour from `side`
// to DONE, which no thread of the same launch tests for.
extern "C" __global__ void rb_choose(int n, const long long* __restrict__ indptr, const int* __restrict__ indices,
                                     const int* __restrict__ arc_rank, const long long* __restrict__ mate,
                                     signed char* color, int* sigma, unsigned long long seed, long long rnd,
                                     int weighted, int side, unsigned long long* alive)
{
    const int other = side == RB_BLUE ? RB_RED : RB_BLUE;
    unsigned long long my_alive = 0;
    for (long long v = blockIdx.x * (long long)blockDim.x + threadIdx.x; v < n; v += (long long)gridDim.x * blockDim.x) {
        if (color[v] != side) continue;
        int best = -1;
        unsigned long long key = NO_KEY;
        bool usable = false;
        for (long long p = indptr[v]; p < indptr[v + 1]; ++p) {
            const int r = arc_rank[p];
            if (r == NO_RANK) continue;
            const int w = indices[p];
            if (mate[w] >= 0) continue;
            usable = true;
            if (color[w] != other) continue;
            if (side == RB_RED && sigma[w] != v) continue;
            // the pair is always hashed as (blue, red)
            const unsigned long long pair = side == RB_BLUE ? ((unsigned long long)v << 32) | (unsigned)w
                                                            : ((unsigned long long)w << 32) | (unsigned)v;
            const unsigned long long k = weighted ? (unsigned long long)r : rb_hash3(seed, (unsigned long long)rnd, pair);
            if (k < key) {
                key = k;
                best = w;
            }
        }
        sigma[v] = best;
        if (usable)
            ++my_alive;
        else
            color[v] = RB_DONE;
    }
    if (my_alive) atomicAdd(alive, my_alive);
}

// A blue vertex whose chosen red answered it marries it; each red answers one
// blue, so every write has a single writer.
extern "C" __global__ void rb_marry(int n, signed char* color, const int* __restrict__ sigma, long long* mate)
{
    for (long long v = blockIdx.x * (long long)blockDim.x + threadIdx.x; v < n; v += (long long)gridDim.x * blockDim.x) {
        if (color[v] != RB_BLUE) continue;
        const int w = sigma[v];
        if (w >= 0 && sigma[w] == v) {
            mate[v] = w;
            mate[w] = v;
            color[v] = RB_DONE;
            color[w] = RB_DONE;
        }
    }
}
