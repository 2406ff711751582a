// ½-approximate weighted matching on the GPU: Suitor, local max, red-blue.
//
// Kernels read the graph through ranks in the package's edge order (0 = best,
// NO_RANK = never usable). Ranks are unique per edge, so no two offers ever
// tie and every engine returns the same matching (see
// nx_gpumatch/cpu/matching.py, read side by side with this file).
// Results are mate arrays: mate[v] = partner, -1 = unmatched.
//
// Suitor and local max read the rows sorted best-first (sptr, snbr, srank:
// usable edges only) and keep a pointer per vertex past the edges that can
// never serve it again, so a vertex reads each entry of its row a bounded
// number of times over the whole run, however often it is displaced.
//
// Every kernel with a `work` argument adds the row entries it read there (a
// null pointer: nobody counts); the tests bound the work of whole runs with it.
//
// Defines from nx_gpumatch/gpu/matching.py: BLOCK_SIZE (threads per block),
// MAX_VPW (vertices per warp at most in suitor_warp), WIDE_ROW (rows longer
// than this get a block in ld_push_wide).

#include "common.cuh"

#if !defined(BLOCK_SIZE) || !defined(MAX_VPW) || !defined(WIDE_ROW)
#error "compile with -DBLOCK_SIZE=... -DMAX_VPW=... -DWIDE_ROW=... (see nx_gpumatch/gpu/matching.py)"
#endif
#if BLOCK_SIZE % 32 != 0 || MAX_VPW > 32
#error "BLOCK_SIZE must be whole warps and MAX_VPW at most one vertex per lane"
#endif

// ------------------------------------------------------------------ Suitor
// GPU-Suitor, NoSync variant (Naim et al., "Optimizing approximate weighted
// matching on Nvidia Kepler K40", HiPC 2015). Each warp owns a chunk of `vpw`
// vertices kept in its slice of shared memory. Per iteration:
//  1. for each queued vertex in turn, the 32 lanes read the next 32 entries of
//     its sorted row from head[v] on; the first one whose current suitor it
//     beats is its candidate (a ballot), and head[v] moves past it: the entries
//     before it are beaten for good (suitor words only decrease), and the
//     candidate itself is either won or lost for good too. Lane k keeps the
//     candidate of queue entry k;
//  2. lane k offers its vertex to its candidate with a CAS on the packed
//     (rank, suitor) word;
//  3. vertices that must go again (beaten by a better offer, or displaced by
//     this one) are compacted into the queue with a ballot prefix sum.
// Each queued vertex yields at most one vertex for the next round, so the
// queue never outgrows the chunk. Warps never wait for each other. A vertex is
// in at most one queue at a time, so head[v] has one writer at a time; the
// fence before each offer makes head[v] visible to the warp that displaces v.
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
    suitor_warp(int n, const long long* __restrict__ sptr, const int* __restrict__ snbr,
                const int* __restrict__ srank, long long* head, unsigned long long* word, int vpw,
                unsigned long long* work)
{
    __shared__ int queue[(BLOCK_SIZE / 32) * MAX_VPW];
    const int lane = threadIdx.x & 31;
    int* q = queue + (threadIdx.x >> 5) * MAX_VPW;
    const long long first = ((long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5)) * vpw;
    int count = 0;
    if (first < n) count = (int)min((long long)vpw, (long long)n - first);
    if (lane < count) q[lane] = (int)(first + lane);
    __syncwarp();

    long long read = 0;  // row entries this lane read
    while (count > 0) {
        int my_v = -1;
        unsigned long long my_best = NO_KEY;
        long long my_head = 0;
        for (int k = 0; k < count; ++k) {
            const int v = q[k];
            const long long end = sptr[v + 1];
            long long h = load_i64(head + v);
            unsigned long long best = NO_KEY;
            while (h < end) {  // h and end are the same in every lane
                const long long p = h + lane;
                unsigned long long key = NO_KEY;
                if (p < end) {
                    ++read;
                    const int x = snbr[p];
                    const unsigned long long r = (unsigned long long)srank[p] << 32;
                    if (r < (load_u64(word + x) & ~LOW_MASK)) key = r | (unsigned)x;
                }
                const unsigned hit = __ballot_sync(FULL_MASK, key != NO_KEY);
                if (hit) {
                    const int j = __ffs(hit) - 1;
                    best = __shfl_sync(FULL_MASK, key, j);
                    h += j + 1;
                    break;
                }
                h += 32;
            }
            if (lane == k) {
                my_v = v;
                my_best = best;
                my_head = h < end ? h : end;
            }
        }
        __syncwarp();  // every lane has read the queue before it is rewritten

        int next = -1;
        if (my_v >= 0) {
            store_i64(head + my_v, my_head);
            __threadfence();  // head before the offer that may let another warp displace my_v
        }
        if (my_best != NO_KEY) {
            const int x = (int)(my_best & LOW_MASK);
            const unsigned long long offer = (my_best & ~LOW_MASK) | (unsigned)my_v;
            unsigned long long seen = load_u64(word + x);
            while (seen > offer) {
                const unsigned long long got = atomicCAS(word + x, seen, offer);
                if (got == seen) break;
                seen = got;  // what the CAS saw, never a re-read
            }
            if (seen <= offer)
                next = my_v;  // someone better got there first: look again
            else if (seen != EMPTY_WORD)
                next = (int)(seen & LOW_MASK);  // the vertex this offer displaced
            if (next >= 0) __threadfence();  // pairs with the displaced vertex's fence
        }
        const unsigned has = __ballot_sync(FULL_MASK, next >= 0);
        if (next >= 0) q[__popc(has & ((1u << lane) - 1u))] = next;
        count = __popc(has);
        __syncwarp();  // the new queue is visible to every lane
    }
    read = warp_sum_i64(read);
    if (lane == 0) count_work(work, read);
}

// mate[v] from the final suitor words: v and s are matched when each is the
// other's suitor (checked both ways, so the result is always a matching).
extern "C" __global__ void suitor_mates(int n, const unsigned long long* __restrict__ word, long long* mate)
{
    GRID_STRIDE(v, n)
    {
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
// Locally-dominant matching (Preis; on GPUs Naim et al. and Birn, Osipov,
// Sanders, Schulz and Sitchinava, "Efficient parallel and external matching",
// Euro-Par 2013) in rounds over a worklist, so a round costs what changed in
// it, not n. Invariant between rounds: every unmatched vertex outside the
// worklist has cand[v] = its best unmatched neighbour (or -1 for none).
//   ld_candidates: worklist vertices move head past matched neighbours
//            (rows longer than WIDE_ROW: ld_candidates_wide, a block each);
//   ld_match: mutual candidates marry (one thread writes each pair) and go
//             to the list of vertices matched this round;
//   ld_push: a vertex x that pointed at a newly matched vertex is queued for
//            the next round (once, by a stamp); rows longer than WIDE_ROW
//            are left to ld_push_wide, a block each.
// Rounds alternate between two worklists, wl + p * n of size sizes[p]
// (p = round & 1). A round with an empty worklist does nothing, so the host
// enqueues many rounds per synchronisation and stops when a worklist is empty.
// A chain where each edge waits for the previous one (a path of equal
// weights) still needs a round per edge, but each such round is O(1) work.
// A row longer than WIDE_ROW is not walked here: its vertex is queued for
// ld_candidates_wide (wl_wide[0:sizes[4]]), where a block finds its first
// unmatched neighbour, however many matched ones come before it.
//
// Kernels that walk rows take the round's worklists as a Worklists and the
// vertices' state as a LocalMax (see there).

// Worklist q (q = 0, 1) is wl + q * n, of sizes[q] entries; this round's is p.
// sizes[2]: vertices matched this round, sizes[3], sizes[4]: the long rows
// left to ld_push_wide and to ld_candidates_wide.
struct Worklists {
    int* wl;
    long long* sizes;
    int n;
    int p;
};

// Each vertex's row sorted best first (sptr, snbr), the next arc it looks at
// (head), its mate, its candidate and the stamp of its last queuing.
struct LocalMax {
    const long long* sptr;
    const int* snbr;
    long long* head;
    long long* mate;
    int* cand;
    long long* stamp;
};

extern "C" __global__ void ld_candidates(Worklists q, LocalMax st, int* wl_wide, long long* rounds, unsigned long long* work)
{
    const int n = q.n, p = q.p;
    const int* __restrict__ wl = q.wl;
    long long* sizes = q.sizes;
    const long long* __restrict__ sptr = st.sptr;
    const int* __restrict__ snbr = st.snbr;
    long long* head = st.head;
    const long long* __restrict__ mate = st.mate;
    int* cand = st.cand;
    const long long size = sizes[p];
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        sizes[p ^ 1] = 0;  // the next worklist: filled by this round's ld_push
        sizes[2] = 0;      // vertices matched in this round
        sizes[3] = 0;      // their long rows, left to ld_push_wide
        if (size > 0) ++rounds[0];
    }
    const int* w = wl + (long long)p * n;
    long long read = 0;
    GRID_STRIDE(i, size)
    {
        const int u = w[i];
        if (mate[u] >= 0) continue;
        const long long end = sptr[u + 1];
        if (end - sptr[u] > WIDE_ROW) {
            wl_wide[atomicAdd((unsigned long long*)(sizes + 4), 1ull)] = u;
            continue;
        }
        long long h = head[u];
        while (h < end && mate[snbr[h]] >= 0) ++h;
        read += h - head[u] + 1;
        head[u] = h;
        cand[u] = h < end ? snbr[h] : -1;
    }
    count_work(work, read);
}

// The long rows ld_candidates left (wl_wide[0:sizes[4]]), a block each,
// BLOCK_SIZE entries at a time: the first unmatched neighbour from head on.
// ld_match, the next launch, clears sizes[4]. wide_rows counts the rows.
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
    ld_candidates_wide(const long long* __restrict__ sizes, const int* __restrict__ wl_wide,
                       const long long* __restrict__ sptr, const int* __restrict__ snbr, long long* head,
                       const long long* __restrict__ mate, int* cand, unsigned long long* wide_rows,
                       unsigned long long* work)
{
    __shared__ long long first[BLOCK_SIZE / 32];
    const long long count = sizes[4];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (long long i = blockIdx.x; i < count; i += gridDim.x) {
        const int u = wl_wide[i];
        const long long h0 = head[u], end = sptr[u + 1];
        long long h = end;
        for (long long base = h0; base < end; base += BLOCK_SIZE) {
            const long long q = base + threadIdx.x;
            const bool hit = q < end && mate[snbr[q]] < 0;
            if (!__syncthreads_or(hit)) continue;  // the same in every thread
            const unsigned bits = __ballot_sync(FULL_MASK, hit);
            if (lane == 0) first[warp] = bits ? base + warp * 32 + __ffs(bits) - 1 : end;
            __syncthreads();
            for (int x = 0; x < BLOCK_SIZE / 32; ++x) h = min(h, first[x]);
            __syncthreads();  // first is free for the next row
            break;
        }
        __syncthreads();  // every thread has read head[u]
        if (threadIdx.x == 0) {
            head[u] = h;
            cand[u] = h < end ? snbr[h] : -1;
            count_work(work, h - h0 + 1);
            count_work(wide_rows, 1);
        }
    }
}

// stamp[v] == round: v is in this round's worklist.
extern "C" __global__ void ld_match(int n, int p, long long round, const int* __restrict__ wl,
                                    long long* sizes, const int* __restrict__ cand,
                                    const long long* __restrict__ stamp, long long* mate, int* matched)
{
    const int* w = wl + (long long)p * n;
    if (blockIdx.x == 0 && threadIdx.x == 0) sizes[4] = 0;  // ld_candidates_wide is done with it
    GRID_STRIDE(i, sizes[p])
    {
        const int u = w[i];
        const int c = cand[u];
        // mate[u] may be written meanwhile by c's thread (then u skips below):
        // coherent load and stores, so the read is of one value or the other
        if (c < 0 || load_i64(mate + u) >= 0 || cand[c] != u) continue;
        if (c < u && stamp[c] == round) continue;  // c is in the worklist too and writes the pair
        store_i64(mate + u, c);
        store_i64(mate + c, u);
        const long long at = (long long)atomicAdd((unsigned long long*)(sizes + 2), 2ull);
        matched[at] = u;
        matched[at + 1] = c;
    }
}

// A row longer than WIDE_ROW is not walked by one thread: ld_push queues its
// vertex for ld_push_wide (wl_wide, counted in sizes[3]), which gives each
// such row a whole block, so a hub does not serialise the round.
__device__ __forceinline__ void ld_push_arc(int x, int a, long long round, int* out, long long* sizes, int p,
                                            const long long* __restrict__ mate, const int* __restrict__ cand,
                                            long long* stamp)
{
    if (mate[x] >= 0 || cand[x] != a) return;
    if (atomicExch((unsigned long long*)(stamp + x), (unsigned long long)(round + 1)) == (unsigned long long)(round + 1))
        return;  // already queued by another matched neighbour
    out[atomicAdd((unsigned long long*)(sizes + (p ^ 1)), 1ull)] = x;
}

extern "C" __global__ void ld_push(Worklists q, long long round, LocalMax st, const int* __restrict__ matched, int* wl_wide,
                                   unsigned long long* work)
{
    const int n = q.n, p = q.p;
    int* wl = q.wl;
    long long* sizes = q.sizes;
    const long long* __restrict__ sptr = st.sptr;
    const int* __restrict__ snbr = st.snbr;
    const long long* __restrict__ mate = st.mate;
    const int* __restrict__ cand = st.cand;
    long long* stamp = st.stamp;
    int* out = wl + (long long)(p ^ 1) * n;
    long long read = 0;
    GRID_STRIDE(i, sizes[2])
    {
        const int a = matched[i];
        if (sptr[a + 1] - sptr[a] > WIDE_ROW) {
            wl_wide[atomicAdd((unsigned long long*)(sizes + 3), 1ull)] = a;
            continue;
        }
        for (long long j = sptr[a]; j < sptr[a + 1]; ++j) ld_push_arc(snbr[j], a, round, out, sizes, p, mate, cand, stamp);
        read += sptr[a + 1] - sptr[a];
    }
    count_work(work, read);
}

// The long rows ld_push left (wl_wide[0:sizes[3]]): a block per row, blocks
// striding over them. wide_rows counts the rows taken here.
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
    ld_push_wide(Worklists q, long long round, LocalMax st, const int* __restrict__ wl_wide,
                 unsigned long long* wide_rows, unsigned long long* work)
{
    const int n = q.n, p = q.p;
    int* wl = q.wl;
    long long* sizes = q.sizes;
    const long long* __restrict__ sptr = st.sptr;
    const int* __restrict__ snbr = st.snbr;
    const long long* __restrict__ mate = st.mate;
    const int* __restrict__ cand = st.cand;
    long long* stamp = st.stamp;
    int* out = wl + (long long)(p ^ 1) * n;
    const long long count = sizes[3];
    for (long long i = blockIdx.x; i < count; i += gridDim.x) {
        const int a = wl_wide[i];
        for (long long j = sptr[a] + threadIdx.x; j < sptr[a + 1]; j += blockDim.x)
            ld_push_arc(snbr[j], a, round, out, sizes, p, mate, cand, stamp);
        if (threadIdx.x == 0) {
            count_work(work, sptr[a + 1] - sptr[a]);
            count_work(wide_rows, 1);
        }
    }
}

// ---------------------------------------------------------------- red-blue
// Randomized proposals (Fagginger Auer and Bisseling, "A GPU algorithm for
// greedy graph matching", Facing the Multicore Challenge II, 2012): each round
// colours the unfinished vertices blue with probability P_BLUE (a hash of
// (seed, round, vertex) instead of their MD5), blue vertices propose to a red
// neighbour, each red accepts one proposer, and accepted pairs marry. Same
// hash and rules as the CPU engine, so the same seed gives the same matching.
//
// Each vertex keeps its live arcs (usable, other end unmatched) at the front
// of its own copy of its row (lnbr, lrank up to live_end[v]), in row order, so
// a round reads only live arcs and ties fall as in the CPU engine's full scan.
// Rounds stop on the device: rb_check sets *stop after a round in which no
// vertex had a live arc, and every kernel returns at once after that, so the
// host enqueues many rounds per synchronisation.
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
                                    signed char* color, int* sigma, const int* __restrict__ stop)
{
    if (*stop) return;
    GRID_STRIDE(v, n)
    {
        if (color[v] != RB_DONE)
            color[v] = rb_hash3(seed, (unsigned long long)rnd, (unsigned long long)v) < threshold ? RB_BLUE : RB_RED;
        sigma[v] = -1;
    }
}

// Rows of rb_choose get `width` threads: 1, 32 (a warp) or BLOCK_SIZE (a
// block), chosen by the host from the row's length, so a hub's row is read by
// a block rather than by one thread. A group's lanes read consecutive arcs
// and compact the live ones with a prefix count (group_scan), so every row
// keeps its arcs in row order whatever the width.
struct RowGroup {
    int per;   // rows per block
    int g;     // group in the block
    int lane;  // lane in the group
};

__device__ __forceinline__ RowGroup row_group(int width)
{
    return {BLOCK_SIZE / width, (int)threadIdx.x / width, (int)threadIdx.x % width};
}

// Every lane of the group has done its reads and writes before any goes on.
__device__ __forceinline__ void group_sync(int width)
{
    if (width == 32)
        __syncwarp();
    else if (width > 32)
        __syncthreads();
}

// Lanes before this one in the group with `pred` set, and the group's total.
// Ends with the group synchronised (the lanes' reads come before the writes
// the counts place). warp_counts: BLOCK_SIZE / 32 ints of shared memory.
struct Scan {
    int before;
    int total;
};

__device__ __forceinline__ Scan group_scan(bool pred, int width, int* warp_counts)
{
    if (width == 1) return {0, pred ? 1 : 0};
    const unsigned bits = __ballot_sync(FULL_MASK, pred);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    Scan s = {__popc(bits & ((1u << lane) - 1u)), __popc(bits)};
    if (width == 32) {
        __syncwarp();
        return s;
    }
    if (lane == 0) warp_counts[warp] = s.total;
    __syncthreads();
    s.total = 0;
    for (int q = 0; q < BLOCK_SIZE / 32; ++q) {
        if (q < warp) s.before += warp_counts[q];
        s.total += warp_counts[q];
    }
    __syncthreads();  // warp_counts is free for the next chunk
    return s;
}

// A vertex's choice: the smallest key, ties to the earliest arc of the row
// (the CPU engine's scan keeps the first of equal keys).
struct Choice {
    unsigned long long key;
    long long pos;
    int nbr;  // -1: none
};

__device__ __forceinline__ bool precedes(const Choice& x, const Choice& y)
{
    return x.key < y.key || (x.key == y.key && x.pos < y.pos);
}

// The group's first choice, known to lane 0 (every lane for width <= 32).
__device__ __forceinline__ Choice group_min(Choice c, int width, Choice* warp_best)
{
    if (width == 1) return c;
    for (int off = 16; off > 0; off >>= 1) {
        Choice o;
        o.key = __shfl_xor_sync(FULL_MASK, c.key, off);
        o.pos = __shfl_xor_sync(FULL_MASK, c.pos, off);
        o.nbr = __shfl_xor_sync(FULL_MASK, c.nbr, off);
        if (precedes(o, c)) c = o;
    }
    if (width == 32) return c;
    if ((threadIdx.x & 31) == 0) warp_best[threadIdx.x >> 5] = c;
    __syncthreads();
    c = warp_best[0];
    for (int q = 1; q < BLOCK_SIZE / 32; ++q)
        if (precedes(warp_best[q], c)) c = warp_best[q];
    __syncthreads();  // warp_best is free for the next row
    return c;
}

// What rb_choose reads and keeps: the rows (indptr) and each vertex's live
// arcs (lnbr, lrank up to live_end), mate, colour and choice (sigma), and the
// run's constants: the seed of the hashed keys and whether the keys are the
// arcs' ranks (weighted) instead.
struct RedBlue {
    const long long* indptr;
    int* lnbr;
    int* lrank;
    long long* live_end;
    const long long* mate;
    signed char* color;
    int* sigma;
    unsigned long long seed;
    int weighted;
};

// side = RB_BLUE: blue vertices choose a red neighbour; side = RB_RED: red
// vertices choose among the blue neighbours that chose them. Vertices
// rows[0:count] (rows null: 0..count-1), `width` threads each. A vertex with no live arc left is
// done for good; the others count as alive. Within one launch a vertex only
// changes its own colour (from `side` to DONE, which no thread of the same
// launch tests for) and its own row copy.
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
    rb_choose(int count, const int* __restrict__ rows, int width, RedBlue rb, long long rnd, int side,
              unsigned long long* alive, const int* __restrict__ stop, unsigned long long* work)
{
    const long long* __restrict__ indptr = rb.indptr;
    int* lnbr = rb.lnbr;
    int* lrank = rb.lrank;
    long long* live_end = rb.live_end;
    const long long* __restrict__ mate = rb.mate;
    signed char* color = rb.color;
    int* sigma = rb.sigma;
    const unsigned long long seed = rb.seed;
    const int weighted = rb.weighted;
    __shared__ int warp_counts[BLOCK_SIZE / 32];
    __shared__ Choice warp_best[BLOCK_SIZE / 32];
    if (*stop) return;
    const int other = side == RB_BLUE ? RB_RED : RB_BLUE;
    const RowGroup rg = row_group(width);
    unsigned long long my_alive = 0;
    long long read = 0;
    for (long long i = (long long)blockIdx.x * rg.per + rg.g; i < count; i += (long long)gridDim.x * rg.per) {
        const int v = rows != nullptr ? rows[i] : (int)i;
        if (color[v] != side) continue;  // the same for every lane of the group
        const long long start = indptr[v], end = live_end[v];
        long long keep = start;  // the same in every lane
        Choice mine = {NO_KEY, 0, -1};
        for (long long base = start; base < end; base += width) {
            const long long p = base + rg.lane;
            int r = NO_RANK, w = -1;
            if (p < end) {
                r = lrank[p];
                w = lnbr[p];
            }
            const bool live = r != NO_RANK && mate[w] < 0;  // else dead for good: dropped
            const Scan s = group_scan(live, width, warp_counts);
            if (live) {
                lnbr[keep + s.before] = w;
                lrank[keep + s.before] = r;
            }
            keep += s.total;
            if (!live || color[w] != other) continue;
            if (side == RB_RED && sigma[w] != v) continue;
            // the pair is always hashed as (blue, red)
            const unsigned long long pair = side == RB_BLUE ? ((unsigned long long)v << 32) | (unsigned)w
                                                            : ((unsigned long long)w << 32) | (unsigned)v;
            const unsigned long long k = weighted ? (unsigned long long)r : rb_hash3(seed, (unsigned long long)rnd, pair);
            if (k < mine.key) mine = {k, p, w};  // a lane's arcs come in row order
        }
        const Choice best = group_min(mine, width, warp_best);
        group_sync(width);  // every lane has read color[v] and live_end[v]
        if (rg.lane == 0) {
            read += end - start;
            live_end[v] = keep;
            sigma[v] = best.nbr;
            if (keep > start)
                ++my_alive;
            else
                color[v] = RB_DONE;
        }
    }
    if (my_alive) atomicAdd(alive, my_alive);
    count_work(work, read);
}

// One thread: after the two choose launches of round rnd, stop if nobody was
// alive, else count the round; then clear the alive counter for the next.
extern "C" __global__ void rb_check(long long rnd, unsigned long long* alive, int* stop, long long* rounds)
{
    if (blockIdx.x != 0 || threadIdx.x != 0 || *stop) return;
    rounds[0] = rnd + 1;
    if (*alive == 0) *stop = 1;
    *alive = 0;
}

// A blue vertex whose chosen red answered it marries it; each red answers one
// blue, so every write has a single writer.
extern "C" __global__ void rb_marry(int n, signed char* color, const int* __restrict__ sigma, long long* mate,
                                    const int* __restrict__ stop)
{
    if (*stop) return;
    GRID_STRIDE(v, n)
    {
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
