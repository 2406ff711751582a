// ½-approximate weighted b-matching on the GPU: b-Suitor (seed 004), delayed.
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
//   last[u]   rank of the last edge u considered; u only looks further down;
//   need[u]   proposals u still owes, plus QUEUED while u waits in the next
//             round's queue.
//
// Lock-free insertion: every slot only ever decreases, so if a CAS replaces the
// largest word read from S(v), that word was the largest at the moment of the
// CAS (words read earlier can only have dropped since) — the worst suitor is
// displaced exactly as a locked heap would do it.

#define NO_RANK 0x7FFFFFFF
#define FULL_MASK 0xFFFFFFFFu
#define EMPTY_WORD 0x7FFFFFFFFFFFFFFFull
#define LOW_MASK 0xFFFFFFFFull
#define NO_KEY 0xFFFFFFFFFFFFFFFFull
#define QUEUED (1ull << 40)
#define COUNT_MASK (QUEUED - 1ull)

// Read words other warps change; volatile keeps each a real load (a stale
// value is safe: every word here only moves one way).
__device__ __forceinline__ unsigned long long load_u64(const unsigned long long* p)
{
    return *(const volatile unsigned long long*)p;
}

__device__ __forceinline__ int load_i32(const int* p)
{
    return *(const volatile int*)p;
}

__device__ __forceinline__ unsigned long long warp_min_u64(unsigned long long v)
{
    for (int off = 16; off > 0; off >>= 1) {
        const unsigned long long o = __shfl_xor_sync(FULL_MASK, v, off);
        v = o < v ? o : v;
    }
    return v;
}

// Claim the proposals u owes (its QUEUED bit stays).
__device__ long long take_debts(unsigned long long* need, int u)
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
__device__ void displace(unsigned long long* need, int y, int* nextq, unsigned long long* qtail)
{
    unsigned long long old = load_u64(need + y);
    while (true) {
        const unsigned long long got = atomicCAS(need + y, old, (old + 1ull) | QUEUED);
        if (got == old) break;
        old = got;
    }
    if ((old & QUEUED) == 0) nextq[atomicAdd(qtail, 1ull)] = y;
}

// Make u a suitor of v with the edge of rank r. Returns -2 if the offer does not
// beat S(v)'s worst suitor, -1 if it took a free slot, else the displaced suitor.
__device__ long long make_suitor(unsigned long long* slots, const long long* __restrict__ sptr, int* hint, int v,
                                 int r, int u)
{
    const long long a = sptr[v], e = sptr[v + 1];
    const unsigned long long offer = ((unsigned long long)r << 32) | (unsigned)u;
    while (true) {
        long long at = -1;
        unsigned long long worst = 0;
        for (long long j = a; j < e; ++j) {
            const unsigned long long w = load_u64(slots + j);
            if (at < 0 || w > worst) {
                worst = w;
                at = j;
            }
        }
        if (at < 0 || offer >= worst) return -2;
        if (atomicCAS(slots + at, worst, offer) != worst) continue;  // that slot moved: look again
        // Lower the hint to the new worst rank (NO_RANK while a slot is free).
        unsigned long long top = 0;
        for (long long j = a; j < e; ++j) {
            const unsigned long long w = load_u64(slots + j);
            top = w > top ? w : top;
        }
        atomicMin(hint + v, (int)(top >> 32));
        return worst == EMPTY_WORD ? -1 : (long long)(worst & LOW_MASK);
    }
}

// needs[u] &= ~QUEUED for the vertices of this round's queue (before the round,
// so a vertex displaced during the round is queued again for the next).
extern "C" __global__ void bs_unqueue(int nq, const int* __restrict__ q, unsigned long long* need)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < nq; i += (long long)gridDim.x * blockDim.x)
        need[q[i]] &= COUNT_MASK;
}

// One round of delayed b-Suitor: one warp per queued vertex u. The lanes scan
// u's row together for the best edge ranked after last[u] whose other end's
// hint it beats; lane 0 proposes; repeat until u owes nothing or has no
// candidate left. Displaced suitors go to the next round's queue.
extern "C" __global__ void bs_round(int nq, const int* __restrict__ q, const long long* __restrict__ indptr,
                                    const int* __restrict__ indices, const int* __restrict__ arc_rank,
                                    const long long* __restrict__ sptr, unsigned long long* slots, int* hint,
                                    int* last, unsigned long long* need, int* nextq, unsigned long long* qtail)
{
    const int lane = threadIdx.x & 31;
    const long long warp = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5;
    const long long warps = ((long long)gridDim.x * blockDim.x) >> 5;
    for (long long i = warp; i < nq; i += warps) {
        const int u = q[i];
        const long long begin = indptr[u], end = indptr[u + 1];
        long long todo = 0;
        if (lane == 0) todo = take_debts(need, u);
        todo = __shfl_sync(FULL_MASK, todo, 0);
        int after = last[u];
        while (todo > 0) {
            unsigned long long best = NO_KEY;
            for (long long p = begin + lane; p < end; p += 32) {
                const int r = arc_rank[p];
                if (r == NO_RANK || r <= after) continue;
                const int x = indices[p];
                const unsigned long long key = ((unsigned long long)r << 32) | (unsigned)x;
                if (key < best && r < load_i32(hint + x)) best = key;
            }
            best = warp_min_u64(best);
            if (best == NO_KEY) break;  // no candidate left: u stays short
            const int r = (int)(best >> 32);
            const int v = (int)(best & LOW_MASK);
            after = r;  // never look at this edge again: taken, or beaten for good
            long long y = -2;
            if (lane == 0) {
                y = make_suitor(slots, sptr, hint, v, r, u);
                if (y != -2) {
                    --todo;
                    if (y >= 0) displace(need, (int)y, nextq, qtail);
                    if (todo == 0) todo = take_debts(need, u);
                }
            }
            todo = __shfl_sync(FULL_MASK, todo, 0);
        }
        if (lane == 0) last[u] = after;
        __syncwarp();
    }
}

// Per vertex v: how many of its suitors have a larger id (each matched edge is
// then counted once, at its smaller end), and how many suitors it has.
extern "C" __global__ void bs_count(int n, const long long* __restrict__ sptr, const unsigned long long* __restrict__ slots,
                                    long long* upper, long long* total)
{
    for (long long v = blockIdx.x * (long long)blockDim.x + threadIdx.x; v < n; v += (long long)gridDim.x * blockDim.x) {
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
    for (long long v = blockIdx.x * (long long)blockDim.x + threadIdx.x; v < n; v += (long long)gridDim.x * blockDim.x) {
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
