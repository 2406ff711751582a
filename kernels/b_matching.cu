// ½-approximate weighted b-matching on the GPU: b-Suitor, delayed (Khan,
// Pothen, Patwary, Halappanavar et al., "Efficient approximation algorithms
// for weighted b-matching", SIAM J. Sci. Comput. 2016).
//
// Read side by side with nx_gpumatch/cpu/b_matching.py. Edges are compared by
// arc_rank (0 = best, NO_RANK = never usable), unique per edge, so no two
// offers tie and the result is the greedy b-matching, whatever the schedule.
//
// State per vertex v:
//   slots[sptr[v] .. sptr[v+1])  its suitors S(v), cap(v) words
//       (rank << 32 | suitor), EMPTY_WORD where free; unsorted;
//   hint[v]   a bound an offer must beat to be worth trying: >= the rank of the
//             worst suitor while S(v) is full, NO_RANK while it has room,
//             0 for cap 0 (nothing beats it); only ever lowered (atomicMin);
//   need[u]   proposals u still owes, plus QUEUED while u waits in the next
//             round's queue.
// Candidates, partially sorted: u's best remaining candidates sit sorted in
// cbuf[cpos[u] .. cend[u]) (a batch inside u's own arc range of cbuf); every
// rank in a batch exceeds clo[u] of the batches before it. When a batch runs
// out, the warp selects the next cnext[u] best ranks above clo[u] (a radix
// select, four passes of 8 bits), sorts them, and doubles cnext[u]. The first
// batch holds about b(u)*k candidates (cnext is set by the host), which is
// mostly all a vertex ever looks at; doubling keeps a long search at
// O(deg log deg) instead of O(deg^2) for re-reading the row per proposal.
//
// Lock-free insertion: every slot only ever decreases, so if a CAS replaces the
// largest word read from S(v), that word was the largest at the moment of the
// CAS (words read earlier can only have dropped since): the worst suitor is
// displaced exactly as a locked heap would do it. The warp reads S(v)
// together.
//
// Defines from nx_gpumatch/gpu/b_matching.py: BLOCK_SIZE (threads per block
// of bs_round, whole warps).

#include "common.cuh"

#ifndef BLOCK_SIZE
#error "compile with -DBLOCK_SIZE=... (see nx_gpumatch/gpu/b_matching.py)"
#endif

#define QUEUED (1ull << 40)
#define COUNT_MASK (QUEUED - 1ull)
#define RADIX 256

// Claim the proposals u owes (its QUEUED bit stays).
__device__ __forceinline__ long long take_debts(unsigned long long* need, int u)
{
    unsigned long long old = load_u64(need + u);
    while ((old & COUNT_MASK) != 0) {
        const unsigned long long got = atomicCAS(need + u, old, old & QUEUED);
        if (got == old) return (long long)(old & COUNT_MASK);
        old = got;  // what the CAS saw, never a re-read
    }
    return 0;
}

// y lost a proposal: it owes one more, and waits for the next round (queued once).
__device__ __forceinline__ void displace(unsigned long long* need, int y, int* nextq, unsigned long long* qtail)
{
    unsigned long long old = load_u64(need + y);
    while (true) {
        const unsigned long long got = atomicCAS(need + y, old, (old + 1ull) | QUEUED);
        if (got == old) break;
        old = got;
    }
    if ((old & QUEUED) == 0) nextq[atomicAdd(qtail, 1ull)] = y;
}

// Whole warp: the rank of S(v)'s worst suitor (NO_RANK while a slot is free).
__device__ __forceinline__ int worst_rank(const unsigned long long* slots, long long a, long long e)
{
    const int lane = threadIdx.x & 31;
    unsigned top = 0;
    for (long long j = a + lane; j < e; j += 32) {
        const unsigned r = (unsigned)(load_u64(slots + j) >> 32);
        top = r > top ? r : top;
    }
    return (int)warp_max_u32(top);
}

// Whole warp: make u a suitor of v with the edge of rank r. Returns -2 if the
// offer does not beat S(v)'s worst suitor, -1 if it took a free slot, else
// the displaced suitor. Occupied slots hold distinct edges, so the rank half
// of a word names the worst one (empty slots tie: any of them will do); the
// lane that read it makes the CAS.
__device__ __forceinline__ long long make_suitor(unsigned long long* slots, const long long* __restrict__ sptr,
                                                 int* hint, int v, int r, int u)
{
    const int lane = threadIdx.x & 31;
    const long long a = sptr[v], e = sptr[v + 1];
    if (a == e) return -2;  // cap(v) = 0
    const unsigned long long offer = ((unsigned long long)r << 32) | (unsigned)u;
    while (true) {
        unsigned long long mine = 0;
        long long mine_at = -1;
        for (long long j = a + lane; j < e; j += 32) {
            const unsigned long long w = load_u64(slots + j);
            if (mine_at < 0 || w > mine) {
                mine = w;
                mine_at = j;
            }
        }
        const unsigned top = warp_max_u32(mine_at < 0 ? 0u : (unsigned)(mine >> 32));
        if ((unsigned)r >= top) return -2;
        const unsigned who = __ballot_sync(FULL_MASK, mine_at >= 0 && (unsigned)(mine >> 32) == top);
        const int owner = __ffs(who) - 1;
        long long got = -3;  // lost the slot to another offer: look again
        if (lane == owner && atomicCAS(slots + mine_at, mine, offer) == mine)
            got = mine == EMPTY_WORD ? -1 : (long long)(mine & LOW_MASK);
        got = __shfl_sync(FULL_MASK, got, owner);
        if (got == -3) continue;
        // Lower the hint to the new worst rank (NO_RANK while a slot is free).
        const int worst = worst_rank(slots, a, e);
        if (lane == 0) atomicMin(hint + v, worst);
        return got;
    }
}

// Whole warp: sort cbuf[b .. b+k) ascending. Up to 32 keys: each lane counts
// the keys below its own (keys are distinct) and writes it there. More:
// bitonic, every step puts the smaller key first, so positions past k act as
// +infinity and are skipped.
__device__ __forceinline__ void warp_sort(unsigned long long* cbuf, long long b, long long k)
{
    const int lane = threadIdx.x & 31;
    if (k <= 32) {
        const unsigned long long mine = lane < k ? cbuf[b + lane] : 0;
        int below = 0;
        for (long long j = 0; j < k; ++j) below += cbuf[b + j] < mine;
        __syncwarp();  // every lane has read the keys before any moves
        if (lane < k) cbuf[b + below] = mine;
        __syncwarp();
        return;
    }
    long long size2 = 1;
    while (size2 < k) size2 <<= 1;
    for (long long size = 2; size <= size2; size <<= 1) {
        for (long long stride = size >> 1; stride > 0; stride >>= 1) {
            for (long long i = lane; i < (size2 >> 1); i += 32) {
                long long x, y;
                if (stride == (size >> 1)) {  // flip: mirror pairs of each block
                    const long long blk = i / stride, off = i % stride;
                    x = blk * size + off;
                    y = blk * size + size - 1 - off;
                } else {  // half-cleaner
                    const long long blk = i / stride, off = i % stride;
                    x = blk * 2 * stride + off;
                    y = x + stride;
                }
                if (y < k) {
                    const unsigned long long kx = cbuf[b + x], ky = cbuf[b + y];
                    if (ky < kx) {
                        cbuf[b + x] = ky;
                        cbuf[b + y] = kx;
                    }
                }
            }
            __syncwarp();
        }
    }
}

// Whole warp: the next batch of u's candidates (see the top of the file).
// Returns its size, 0 when u has no usable edge left. `hist` is the warp's
// RADIX counters in shared memory; lane 0 adds the row entries read to *read.
__device__ __forceinline__ long long next_batch(int u, const long long* __restrict__ indptr, const int* __restrict__ indices,
                                const int* __restrict__ arc_rank, unsigned long long* cbuf, int* clo,
                                long long* cnext, int* hist, long long* read)
{
    const int lane = threadIdx.x & 31;
    const long long b = indptr[u], e = indptr[u + 1];
    // Only lane 0 reads and writes clo[u] / cnext[u], and broadcasts them:
    // shuffles and ballots order no memory, so a lane reading back what lane 0
    // wrote in the previous call could see the old value, and lanes that
    // disagree on `want` would run the collectives below divergently.
    int lo = 0;
    long long want = 0;
    if (lane == 0) {
        lo = clo[u];
        want = cnext[u];
    }
    lo = __shfl_sync(FULL_MASK, lo, 0);
    want = __shfl_sync(FULL_MASK, want, 0);
    long long left = 0;  // usable ranks above lo
    for (long long base = b; base < e; base += 32) {
        const long long p = base + lane;
        const int r = p < e ? arc_rank[p] : NO_RANK;
        left += __popc(__ballot_sync(FULL_MASK, r > lo && r != NO_RANK));
    }
    if (lane == 0) *read += e - b;
    if (left == 0) return 0;
    // Largest rank to take: all that are left, or the want-th smallest above lo.
    int last = NO_RANK - 1;
    if (left > want) {
        unsigned prefix = 0;
        long long rest = want;  // still to pass, counting from the smallest
        for (int shift = 24; shift >= 0; shift -= 8) {
            for (int i = lane; i < RADIX; i += 32) hist[i] = 0;
            __syncwarp();
            for (long long p = b + lane; p < e; p += 32) {
                const int r = arc_rank[p];
                if (r <= lo || r == NO_RANK) continue;
                if (shift < 24 && ((unsigned)r >> (shift + 8)) != (prefix >> (shift + 8))) continue;
                atomicAdd(hist + (((unsigned)r >> shift) & (RADIX - 1)), 1);
            }
            if (lane == 0) *read += e - b;
            __syncwarp();
            // Lane l holds bins 8l .. 8l+7; the digit is where the running count reaches rest.
            long long mine = 0;
            for (int j = 0; j < 8; ++j) mine += hist[8 * lane + j];
            long long incl = mine;
            for (int off = 1; off < 32; off <<= 1) {
                const long long o = __shfl_up_sync(FULL_MASK, incl, off);
                if (lane >= off) incl += o;
            }
            const unsigned reach = __ballot_sync(FULL_MASK, incl >= rest);
            const int owner = __ffs(reach) - 1;
            long long before = __shfl_sync(FULL_MASK, incl - mine, owner);
            int digit = 0;
            if (lane == owner) {
                int j = 0;
                while (before + hist[8 * lane + j] < rest) before += hist[8 * lane + j++];
                digit = 8 * lane + j;
            }
            digit = __shfl_sync(FULL_MASK, digit, owner);
            before = __shfl_sync(FULL_MASK, before, owner);
            prefix |= (unsigned)digit << shift;
            rest -= before;
            __syncwarp();  // hist is cleared for the next digit only after every lane read it
        }
        last = (int)prefix;  // ranks are unique: exactly `want` ranks in (lo, last]
    }
    // Gather the chosen keys at the front of u's range, in any order, then sort;
    // first every lane is done reading the previous batch there.
    __syncwarp();
    long long k = 0;
    for (long long base = b; base < e; base += 32) {
        const long long p = base + lane;
        int r = NO_RANK;
        if (p < e) r = arc_rank[p];
        const bool take = p < e && r > lo && r <= last && r != NO_RANK;
        const unsigned mask = __ballot_sync(FULL_MASK, take);
        const unsigned long long key = take ? ((unsigned long long)r << 32) | (unsigned)indices[p] : 0;
        if (take) cbuf[b + k + __popc(mask & ((1u << lane) - 1u))] = key;
        k += __popc(mask);
    }
    if (lane == 0) *read += e - b;
    __syncwarp();
    warp_sort(cbuf, b, k);
    if (lane == 0) {  // read back by lane 0 alone (see above)
        clo[u] = last;
        cnext[u] = 2 * want;
    }
    return k;
}

// needs[u] &= ~QUEUED for the vertices of this round's queue (before the round,
// so a vertex displaced during the round is queued again for the next).
extern "C" __global__ void bs_unqueue(int nq, const int* __restrict__ q, unsigned long long* need)
{
    GRID_STRIDE(i, nq) need[q[i]] &= COUNT_MASK;
}

// The graph as bs_round reads it: rows (indptr, indices) and each arc's rank.
struct RankedRows {
    const long long* indptr;
    const int* indices;
    const int* arc_rank;
};

// Each vertex's suitor words (slots[sptr[v]:sptr[v+1]]) and the rank an
// offer to it must beat (hint).
struct Suitors {
    const long long* sptr;
    unsigned long long* slots;
    int* hint;
};

// Each vertex's sorted batch of candidates in cbuf (inside its own arc range),
// its cursor cpos .. cend in it, the rank below which batches were taken (clo)
// and the size of the next batch (cnext).
struct Candidates {
    unsigned long long* cbuf;
    long long* cpos;
    long long* cend;
    int* clo;
    long long* cnext;
};

// One round of delayed b-Suitor: one warp per queued vertex u. Launch bounds:
// at least 4 blocks per SM, which leaves ptxas up to 128 registers (with the
// default heuristics it stopped at 64 and spilled). The warp reads
// u's sorted candidates from cpos[u] on, 32 at a time, and proposes to the
// first whose hint the edge beats (the ones before it are beaten for good:
// hints only drop); repeat until u owes nothing or has no candidate left.
// Displaced suitors go to the next round's queue. Only u's warp touches u's
// cursor, and u is in a round's queue once.
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE, 4)
    bs_round(int nq, const int* __restrict__ q, RankedRows g, Suitors su, Candidates cd, unsigned long long* need,
             int* nextq, unsigned long long* qtail, unsigned long long* work)
{
    const long long* __restrict__ indptr = g.indptr;
    const int* __restrict__ indices = g.indices;
    const int* __restrict__ arc_rank = g.arc_rank;
    const long long* __restrict__ sptr = su.sptr;
    unsigned long long* slots = su.slots;
    int* hint = su.hint;
    unsigned long long* cbuf = cd.cbuf;
    long long* cpos = cd.cpos;
    long long* cend = cd.cend;
    int* clo = cd.clo;
    long long* cnext = cd.cnext;
    __shared__ int hists[(BLOCK_SIZE / 32) * RADIX];
    const int lane = threadIdx.x & 31;
    int* hist = hists + (threadIdx.x >> 5) * RADIX;
    const long long warp = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5;
    const long long warps = ((long long)gridDim.x * blockDim.x) >> 5;
    long long read = 0;
    for (long long i = warp; i < nq; i += warps) {
        const int u = q[i];
        long long todo = 0;
        if (lane == 0) todo = take_debts(need, u);
        todo = __shfl_sync(FULL_MASK, todo, 0);
        long long pos = 0, end = 0;  // u's cursor: lane 0 alone touches the memory (see next_batch)
        if (lane == 0) {
            pos = cpos[u];
            end = cend[u];
        }
        pos = __shfl_sync(FULL_MASK, pos, 0);
        end = __shfl_sync(FULL_MASK, end, 0);
        while (todo > 0) {
            if (pos == end) {
                const long long k = next_batch(u, indptr, indices, arc_rank, cbuf, clo, cnext, hist, &read);
                if (k == 0) break;  // no candidate left: u stays short
                pos = indptr[u];
                end = pos + k;
            }
            const long long p = pos + lane;
            unsigned long long key = NO_KEY;
            if (p < end) {
                key = cbuf[p];
                if ((int)(key >> 32) >= load_i32(hint + (int)(key & LOW_MASK))) key = NO_KEY;
            }
            read += p < end;
            const unsigned hit = __ballot_sync(FULL_MASK, key != NO_KEY);
            if (!hit) {
                pos = min(pos + 32, end);
                continue;
            }
            const int j = __ffs(hit) - 1;
            key = __shfl_sync(FULL_MASK, key, j);
            pos += j + 1;  // never look at this edge again: taken, or beaten for good
            const long long y = make_suitor(slots, sptr, hint, (int)(key & LOW_MASK), (int)(key >> 32), u);
            if (y == -2) continue;  // the same for every lane
            if (lane == 0) {
                --todo;
                if (y >= 0) displace(need, (int)y, nextq, qtail);
                if (todo == 0) todo = take_debts(need, u);
            }
            todo = __shfl_sync(FULL_MASK, todo, 0);
        }
        if (lane == 0) {
            cpos[u] = pos;
            cend[u] = end;
        }
        __syncwarp();
    }
    read = warp_sum_i64(read);
    if (lane == 0) count_work(work, read);
}

// Per vertex v: how many of its suitors have a larger id (each matched edge is
// then counted once, at its smaller end), and how many suitors it has.
extern "C" __global__ void bs_count(int n, const long long* __restrict__ sptr, const unsigned long long* __restrict__ slots,
                                    long long* upper, long long* total)
{
    GRID_STRIDE(v, n)
    {
        long long c = 0, t = 0;
        for (long long j = sptr[v]; j < sptr[v + 1]; ++j) {
            const unsigned long long w = slots[j];
            if (w == EMPTY_WORD) continue;
            ++t;
            if ((long long)(w & LOW_MASK) > v) ++c;
        }
        upper[v] = c;
        total[v] = t;
    }
}

// Edge ids of the matched edges: v's suitors u > v, found in v's row (columns
// ascending) by binary search; written from off[v] on, in slot order.
extern "C" __global__ void bs_edges(int n, const long long* __restrict__ sptr, const unsigned long long* __restrict__ slots,
                                    const long long* __restrict__ indptr, const int* __restrict__ indices,
                                    const int* __restrict__ arc_edge, const long long* __restrict__ off, long long* out)
{
    GRID_STRIDE(v, n)
    {
        long long w_at = off[v];
        for (long long j = sptr[v]; j < sptr[v + 1]; ++j) {
            const unsigned long long w = slots[j];
            if (w == EMPTY_WORD) continue;
            const int u = (int)(w & LOW_MASK);
            if (u <= v) continue;
            long long lo = indptr[v], hi = indptr[v + 1];
            while (lo < hi) {
                const long long mid = (lo + hi) >> 1;
                if (indices[mid] < u)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            out[w_at++] = arc_edge[lo];
        }
    }
}
