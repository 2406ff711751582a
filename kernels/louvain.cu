// Louvain community detection on the GPU (Naim, Manne, Halappanavar, Tumeo 2017).
//
// Read side by side with nx_gpumatch/cpu/louvain/: the rules are the same,
// so on weights whose sums are exact (integers) both engines return the same
// partition. Per sweep the host walks the degree buckets and their commit
// batches (the schedule itself is drawn on the device, gpu/louvain.py); for
// each batch it launches
//   * compute_moves_group / compute_moves_block: the new community of every
//     vertex of the batch (computeMove), with threads per vertex scaled to
//     the degree: 4, 8, 16 or 32 lanes of a warp, or a whole block, each
//     vertex with its own open-addressing hash table of neighbour
//     communities in shared memory (or, for the largest degrees, in global
//     memory, a chunk of the batch at a time), slots claimed with CAS;
//   * commit_moves: the batch's moves applied, community degrees and sizes
//     updated with atomics, neighbours of movers flagged for another look;
// and after the sweep intra_weights recomputes the inner weight of flagged
// vertices for the modularity. Aggregation gathers the arcs of a chunk of
// communities (gather_arcs), sorts them by (community of the tail, community
// of the head) and sums each run (segment_sums).
//
// Row kernels (commit_moves, intra_weights, row_sums, gather_arcs,
// segment_sums) take `width`: the threads given to one row, a power of two
// up to 32 (BLOCK / width rows per block) or BLOCK (a block per row), chosen
// by the host from the row's length, so a hub row never runs on one thread.
// Their sums are taken in a fixed order (lane-strided partial sums, then a
// butterfly): the same bits on every run.
//
// The move rule: v joins the neighbouring community c maximising
// w(v, c) - a[c] * resolution * k[v] / 2m (ties: lowest priority), if that
// beats staying, w(v, own - v) - (a[own] - k[v]) * resolution * k[v] / 2m. A
// singleton may not join a singleton of its own batch with a higher priority
// (no swaps). Products and differences are rounded separately (no fused
// multiply-add) so that they match the CPU engine bit for bit.
//
// The objective is the host's choice of k and resolution (res_over_m2 =
// resolution / 2m): for modularity k is the weighted degree; for the Constant
// Potts Model k is the node weight (summed on aggregation) and res_over_m2 is
// gamma, so the same gain reads w(v, c) - gamma * n_c * n_v (see
// nx_gpumatch/community/quality.py). row_sums below gives the degrees only.
//
// Defines from nx_gpumatch/gpu/louvain.py: BLOCK (threads per block).

#include "common.cuh"

#if !defined(BLOCK) || BLOCK % 32 != 0
#error "compile with -DBLOCK=<whole warps> (see nx_gpumatch/gpu/louvain.py)"
#endif
#define WARPS (BLOCK / 32)
#define EMPTY_KEY (-1)
#define NO_PRIO 0x7FFFFFFF

#ifdef NX_GPUMATCH_EMULATION
__device__ __forceinline__ double mul_rn(double a, double b) { return a * b; }
__device__ __forceinline__ double sub_rn(double a, double b) { return a - b; }
#else
__device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ double sub_rn(double a, double b) { return __dsub_rn(a, b); }
#endif


// Add wt to community c's slot of the table (key, val, rep) of `size` slots,
// claiming an empty slot with CAS if c is not there yet (double hashing; the
// step is coprime to the size: size is prime, or a power of two with an odd
// step). The thread that claims a slot records neighbour j in rep.
__device__ __forceinline__ void table_add(int* key, double* val, int* rep, long long size, int pow2, int c, int j, double wt)
{
    long long h, step;
    if (pow2) {
        const unsigned long long x = (unsigned long long)(unsigned)c * 0x9E3779B97F4A7C15ull;
        h = (long long)((x >> 32) & (unsigned long long)(size - 1));
        step = (long long)(((x >> 16) | 1ull) & (unsigned long long)(size - 1));
        if (step == 0) step = 1;
    } else {
        h = c % size;
        step = size > 1 ? 1 + c % (size - 1) : 1;
    }
    for (;;) {
        int cur = load_i32(key + h);
        if (cur == EMPTY_KEY) {
            cur = atomicCAS(key + h, EMPTY_KEY, c);
            if (cur == EMPTY_KEY) {
                atomicAdd(val + h, wt);
                if (rep) rep[h] = j;
                return;
            }
        }
        if (cur == c) {
            atomicAdd(val + h, wt);
            return;
        }
        h += step;
        if (h >= size) h -= size;
    }
}

// Best candidate so far: highest score, ties to the lowest priority.
struct Cand {
    double score;
    int prio;
    int comm;  // -1: none
};

__device__ __forceinline__ bool better(double s1, int p1, int c1, double s2, int p2, int c2)
{
    if (c2 < 0) return c1 >= 0;
    if (c1 < 0) return false;
    return s1 > s2 || (s1 == s2 && p1 < p2);
}

// Look at one table slot for vertex v: its own community's weight goes to
// e_own, any other community is a candidate unless the singleton rule bars it.
__device__ __forceinline__ void consider(int c, double wc, int j, int own, double scale, bool single, int bv, int prio_own,
                                         const double* __restrict__ a, const int* __restrict__ size,
                                         const int* __restrict__ prio, const int* __restrict__ batch, double& e_own, Cand& best)
{
    if (c == EMPTY_KEY) return;
    if (c == own) {
        e_own += wc;
        return;
    }
    const double sc = sub_rn(wc, mul_rn(a[c], scale));
    const int pc = prio[c];
    if (!better(sc, pc, c, best.score, best.prio, best.comm)) return;
    if (single && size[c] == 1 && batch[j] == bv && pc > prio_own) return;
    best.score = sc;
    best.prio = pc;
    best.comm = c;
}

__device__ __forceinline__ int decide(const Cand& best, double e_own, int own, double kv, double scale, const double* __restrict__ a)
{
    if (best.comm < 0) return own;
    const double stay = sub_rn(e_own, mul_rn(a[own] - kv, scale));
    return best.score > stay ? best.comm : own;
}

// Reduce (best, e_own) over the `width` lanes of a group (xor butterfly: every
// lane ends with the result). e_own is held by at most one lane, so the sum
// is exact.
__device__ __forceinline__ void group_reduce(unsigned mask, int width, Cand& best, double& e_own)
{
    for (int off = width >> 1; off > 0; off >>= 1) {
        const double s = __shfl_xor_sync(mask, best.score, off, width);
        const int p = __shfl_xor_sync(mask, best.prio, off, width);
        const int c = __shfl_xor_sync(mask, best.comm, off, width);
        const double e = __shfl_xor_sync(mask, e_own, off, width);
        if (better(s, p, c, best.score, best.prio, best.comm)) {
            best.score = s;
            best.prio = p;
            best.comm = c;
        }
        e_own += e;
    }
}

// The partition a batch's moves read and commit_moves updates: each vertex's
// community, each community's weight a (sum of k) and size, each community's
// priority (its vertex's place in the vertex order), each vertex's batch of
// the sweep, and the flags of vertices to look at again.
struct Partition {
    int* comm;
    double* a;
    int* size;
    const int* prio;
    const int* batch;
    unsigned char* active;
};

// The hash tables of compute_moves_block in global memory: the batch's vertex
// i uses slots off[i] .. off[i+1] of key/val/rep. off null: the tables are in
// shared memory.
struct GlobalTables {
    const long long* off;
    int* key;
    double* val;
    int* rep;
};

// ------------------------------------------------------------ computeMove
// Vertices verts[0:count] of one batch, `width` lanes each (4, 8, 16 or 32;
// BLOCK / width vertices per block), each with a table of `slots` entries
// (a prime above 1.5 times the bucket's largest degree) in dynamic shared
// memory: slots doubles, then slots keys, then slots neighbours per vertex.
extern "C" __global__ void compute_moves_group(int count, const int* __restrict__ verts, LevelGraph lv, Partition pt,
                                               int width, int slots, int* newc)
{
    const long long* __restrict__ indptr = lv.indptr;
    const int* __restrict__ indices = lv.indices;
    const double* __restrict__ w = lv.w;
    const double* __restrict__ k = lv.k;
    const double res_over_m2 = lv.res_over_m2;
    const int* __restrict__ comm = pt.comm;
    const double* __restrict__ a = pt.a;
    const int* __restrict__ size = pt.size;
    const int* __restrict__ prio = pt.prio;
    const int* __restrict__ batch = pt.batch;
    unsigned char* active = pt.active;
    extern __shared__ double smem[];
    const int groups = BLOCK / width;
    const int g = threadIdx.x / width;
    const int lane = threadIdx.x % width;
    const unsigned mask = width == 32 ? FULL_MASK : (((1u << width) - 1u) << (threadIdx.x & 31 & ~(width - 1)));
    double* val = smem + (long long)g * slots;
    int* key = (int*)(smem + (long long)groups * slots) + g * slots;
    int* rep = (int*)(smem + (long long)groups * slots) + (groups + g) * slots;

    const long long i = (long long)blockIdx.x * groups + g;
    if (i >= count) return;  // the whole group leaves together
    const int v = verts[i];
    const int act = active[v];
    __syncwarp(mask);  // every lane has read the flag before it is cleared
    if (!act) {
        if (lane == 0) newc[v] = comm[v];
        return;
    }
    if (lane == 0) active[v] = 0;
    for (int s = lane; s < slots; s += width) {
        key[s] = EMPTY_KEY;
        val[s] = 0.0;
    }
    __syncwarp(mask);
    const long long lo = indptr[v], hi = indptr[v + 1];
    for (long long p = lo + lane; p < hi; p += width) {
        const int j = indices[p];
        table_add(key, val, rep, slots, 0, comm[j], j, w[p]);
    }
    __syncwarp(mask);
    const int own = comm[v];
    const double kv = k[v];
    const double scale = mul_rn(res_over_m2, kv);
    const bool single = size[own] == 1;
    const int bv = batch[v];
    const int po = prio[own];
    Cand best = {0.0, NO_PRIO, -1};
    double e_own = 0.0;
    for (int s = lane; s < slots; s += width) consider(key[s], val[s], rep[s], own, scale, single, bv, po, a, size, prio, batch, e_own, best);
    group_reduce(mask, width, best, e_own);
    if (lane == 0) newc[v] = decide(best, e_own, own, kv, scale, a);
}

// A whole block per vertex. Shared table (gt.off null): `slots` entries in
// dynamic shared memory as above. Global table: the batch's vertex i uses
// slots gt.off[i] .. gt.off[i+1] of gt.key/val/rep (a power of two of at
// least 1.5 times its degree). Blocks stride over the batch.
extern "C" __global__ void compute_moves_block(int count, const int* __restrict__ verts, LevelGraph lv, Partition pt,
                                               int slots, GlobalTables gt, int* newc)
{
    const long long* __restrict__ indptr = lv.indptr;
    const int* __restrict__ indices = lv.indices;
    const double* __restrict__ w = lv.w;
    const double* __restrict__ k = lv.k;
    const double res_over_m2 = lv.res_over_m2;
    const int* __restrict__ comm = pt.comm;
    const double* __restrict__ a = pt.a;
    const int* __restrict__ size = pt.size;
    const int* __restrict__ prio = pt.prio;
    const int* __restrict__ batch = pt.batch;
    unsigned char* active = pt.active;
    const bool global_table = gt.off != nullptr;
    const long long* __restrict__ table_off = gt.off;
    int* tkey = gt.key;
    double* tval = gt.val;
    int* trep = gt.rep;
    extern __shared__ double smem[];
    __shared__ double red_score[WARPS], red_e[WARPS];
    __shared__ int red_prio[WARPS], red_comm[WARPS];
    __shared__ int s_act;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (long long i = blockIdx.x; i < count; i += gridDim.x) {
        const int v = verts[i];
        int* key;
        double* val;
        int* rep;
        long long tsize;
        int pow2;
        if (global_table) {
            key = tkey + table_off[i];
            val = tval + table_off[i];
            rep = trep + table_off[i];
            tsize = table_off[i + 1] - table_off[i];
            pow2 = 1;
        } else {
            val = smem;
            key = (int*)(smem + slots);
            rep = key + slots;
            tsize = slots;
            pow2 = 0;
        }
        if (threadIdx.x == 0) s_act = active[v];
        __syncthreads();
        const int act = s_act;
        if (!act) {
            if (threadIdx.x == 0) newc[v] = comm[v];
            __syncthreads();  // s_act is read by all before the next vertex writes it
            continue;
        }
        if (threadIdx.x == 0) active[v] = 0;
        for (long long s = threadIdx.x; s < tsize; s += BLOCK) {
            key[s] = EMPTY_KEY;
            val[s] = 0.0;
        }
        __syncthreads();
        const long long lo = indptr[v], hi = indptr[v + 1];
        for (long long p = lo + threadIdx.x; p < hi; p += BLOCK) {
            const int j = indices[p];
            table_add(key, val, rep, tsize, pow2, comm[j], j, w[p]);
        }
        __syncthreads();
        const int own = comm[v];
        const double kv = k[v];
        const double scale = mul_rn(res_over_m2, kv);
        const bool single = size[own] == 1;
        const int bv = batch[v];
        const int po = prio[own];
        Cand best = {0.0, NO_PRIO, -1};
        double e_own = 0.0;
        for (long long s = threadIdx.x; s < tsize; s += BLOCK)
            consider(key[s], val[s], rep[s], own, scale, single, bv, po, a, size, prio, batch, e_own, best);
        group_reduce(FULL_MASK, 32, best, e_own);
        if (lane == 0) {
            red_score[warp] = best.score;
            red_prio[warp] = best.prio;
            red_comm[warp] = best.comm;
            red_e[warp] = e_own;
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            for (int q = 1; q < WARPS; ++q) {
                if (better(red_score[q], red_prio[q], red_comm[q], best.score, best.prio, best.comm)) {
                    best.score = red_score[q];
                    best.prio = red_prio[q];
                    best.comm = red_comm[q];
                }
                e_own += red_e[q];
            }
            newc[v] = decide(best, e_own, own, kv, scale, a);
        }
        __syncthreads();  // the table and the reduction slots are free again
    }
}

// ---------------------------------------------------------------- row groups
// A launch of a row kernel covers rows 0..count-1 with `width` threads each
// (see the top of the file). The group of this thread, its lane, and the
// shuffle mask of its lanes (the full warp for width >= 32).
struct RowGroup {
    int per;   // rows per block
    int g;     // group in the block
    int lane;  // lane in the group
    unsigned mask;
};

__device__ __forceinline__ RowGroup row_group(int width)
{
    RowGroup r;
    r.per = BLOCK / width;
    r.g = threadIdx.x / width;
    r.lane = threadIdx.x % width;
    r.mask = width >= 32 ? FULL_MASK : (((1u << width) - 1u) << (threadIdx.x & 31 & ~(width - 1)));
    return r;
}

// Sum of v over the group's lanes, known to every lane. A block-wide group
// (width == BLOCK) meets at barriers: every thread of the block must call it
// equally often, which the row loops guarantee (one row per block at a time).
__device__ __forceinline__ double group_sum(double v, int width, unsigned mask, double* red)
{
    if (width <= 32) {
        for (int off = width >> 1; off > 0; off >>= 1) v += __shfl_xor_sync(mask, v, off, width);
        return v;
    }
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(FULL_MASK, v, off);
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
    __syncthreads();
    double s = 0.0;
    for (int q = 0; q < WARPS; ++q) s += red[q];
    __syncthreads();  // red is free for the next row
    return s;
}

// Row loop: rows i of this group, grid-stride. Every block runs the same
// number of iterations per group when width == BLOCK (one group per block).
#define ROW_LOOP(i, count, rg)                                                                   \
    for (long long i = (long long)blockIdx.x * (rg).per + (rg).g; i < (count); i += (long long)gridDim.x * (rg).per)

// ------------------------------------------------------------------ commit
// Apply the batch's moves: community degrees and sizes change atomically
// (exact on integer weights, so the order does not matter there); a mover and
// its neighbours are flagged dirty (inner weight to recompute) and the
// neighbours active (to be looked at again), by all lanes of the row's group.
// Flags only go from 0 to 1.
extern "C" __global__ void commit_moves(int count, const int* __restrict__ verts, const int* __restrict__ newc, LevelGraph lv,
                                        Partition pt, unsigned char* dirty, int* moved, int width)
{
    const long long* __restrict__ indptr = lv.indptr;
    const int* __restrict__ indices = lv.indices;
    const double* __restrict__ k = lv.k;
    int* comm = pt.comm;
    double* a = pt.a;
    int* size = pt.size;
    unsigned char* active = pt.active;
    const RowGroup rg = row_group(width);
    int mine = 0;
    ROW_LOOP(i, count, rg)
    {
        const int v = verts[i];
        const int c = newc[v], o = comm[v];
        if (c == o) continue;  // the same for every lane of the group
        // every lane has read comm[v] before lane 0 rewrites it (block-wide:
        // one row per block, so the whole block takes this branch together)
        if (width <= 32)
            __syncwarp(rg.mask);
        else
            __syncthreads();
        if (rg.lane == 0) {
            const double kv = k[v];
            atomicAdd(a + o, -kv);
            atomicAdd(a + c, kv);
            atomicSub(size + o, 1);
            atomicAdd(size + c, 1);
            comm[v] = c;
            dirty[v] = 1;
            ++mine;
        }
        for (long long p = indptr[v] + rg.lane; p < indptr[v + 1]; p += width) {
            const int j = indices[p];
            active[j] = 1;
            dirty[j] = 1;
        }
    }
    if (mine) atomicAdd(moved, mine);
}

// intra[v] = weight of v's arcs inside its community plus twice its
// self-loop, for the dirty vertices among verts[0:count]; clears the flags.
extern "C" __global__ void intra_weights(int count, const int* __restrict__ verts, const long long* __restrict__ indptr,
                                         const int* __restrict__ indices, const double* __restrict__ w,
                                         const double* __restrict__ loop, const int* __restrict__ comm, unsigned char* dirty,
                                         double* intra, int width)
{
    __shared__ double red[WARPS];
    const RowGroup rg = row_group(width);
    ROW_LOOP(i, count, rg)
    {
        const int v = verts[i];
        if (!dirty[v]) continue;  // uniform over the group (block-wide: one row per block)
        const int c = comm[v];
        double s = 0.0;
        for (long long p = indptr[v] + rg.lane; p < indptr[v + 1]; p += width)
            if (comm[indices[p]] == c) s += w[p];
        s = group_sum(s, width, rg.mask, red);
        // every lane has read dirty[v] before lane 0 clears it (shuffles do not
        // order memory; the block-wide sum ends with a barrier)
        if (width <= 32) __syncwarp(rg.mask);
        if (rg.lane == 0) {
            intra[v] = s + 2.0 * loop[v];
            dirty[v] = 0;
        }
    }
}

// k[v] = row sum plus twice the self-loop (weighted degree) for verts[0:count].
extern "C" __global__ void row_sums(int count, const int* __restrict__ verts, const long long* __restrict__ indptr,
                                    const double* __restrict__ w, const double* __restrict__ loop, double* k, int width)
{
    __shared__ double red[WARPS];
    const RowGroup rg = row_group(width);
    ROW_LOOP(i, count, rg)
    {
        const int v = verts[i];
        double s = 0.0;
        for (long long p = indptr[v] + rg.lane; p < indptr[v + 1]; p += width) s += w[p];
        s = group_sum(s, width, rg.mask, red);
        if (rg.lane == 0) k[v] = s + 2.0 * loop[v];
    }
}

// ------------------------------------------------------------- aggregation
// Where gather_arcs writes: row i's arcs from off[i] on, each with its sort
// key cx[v] * K + cx[head] (cx: the new vertex of each old one) and weight.
struct GatheredArcs {
    const int* cx;
    long long K;
    const long long* off;
    long long* keys;
    double* vals;
};

// The arcs of rows verts[0:count] (one chunk of the aggregation), see
// GatheredArcs.
extern "C" __global__ void gather_arcs(int count, const int* __restrict__ verts, const long long* __restrict__ indptr,
                                       const int* __restrict__ indices, const double* __restrict__ w, GatheredArcs out,
                                       int width)
{
    const int* __restrict__ cx = out.cx;
    const long long K = out.K;
    const long long* __restrict__ out_off = out.off;
    long long* keys = out.keys;
    double* vals = out.vals;
    const RowGroup rg = row_group(width);
    ROW_LOOP(i, count, rg)
    {
        const int v = verts[i];
        const long long base = (long long)cx[v] * K;
        const long long lo = indptr[v], dst = out_off[i] - lo;
        for (long long p = lo + rg.lane; p < indptr[v + 1]; p += width) {
            keys[dst + p] = base + cx[indices[p]];
            vals[dst + p] = w[p];
        }
    }
}

// out[s] = sum of vals[ptr[s]:ptr[s+1]] for the segments segs[0:count] (runs
// of equal keys after a stable sort: their members in input order).
extern "C" __global__ void segment_sums(int count, const int* __restrict__ segs, const long long* __restrict__ ptr,
                                        const double* __restrict__ vals, double* out, int width)
{
    __shared__ double red[WARPS];
    const RowGroup rg = row_group(width);
    ROW_LOOP(i, count, rg)
    {
        const int s = segs[i];
        double t = 0.0;
        for (long long p = ptr[s] + rg.lane; p < ptr[s + 1]; p += width) t += vals[p];
        t = group_sum(t, width, rg.mask, red);
        if (rg.lane == 0) out[s] = t;
    }
}
