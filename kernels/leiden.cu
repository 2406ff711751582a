// Leiden refinement on the GPU (Traag, Waltman, van Eck 2019), read side by
// side with nx_gpumatch/cpu/leiden.py's refine(): the same rules, the same
// float operations in the same order, the same counter-based random numbers.
//
// Local moving and aggregation are the Louvain kernels (kernels/louvain.cu,
// driven by nx_gpumatch/gpu/louvain.py); only the refinement is here.
//
// Refinement of one community never looks outside it: its vertices join
// sub-communities of the same community, and the sub-community ids are the
// ids of its own members. So communities are refined independently, each
// walking its members in the vertex order exactly as the CPU walks all
// vertices; the per-id arrays (ref, ra, rsize, ext, pos) are touched at a
// community's own members only, and no two groups share an entry. Small
// communities get a thread each; large ones, and those with a long row, a
// warp each (the host sorts them, see nx_gpumatch/gpu/leiden.py), whose lanes
// share each member's row and candidates: the walk over the members stays
// sequential, as the rule is.
//
// k and res_over_m2 carry the objective as in kernels/louvain.cu: for the
// Constant Potts Model k is the node weight and res_over_m2 is gamma, and the
// well-connectedness test reads E(v, C - v) >= gamma n_v (n_C - n_v).
//
// Defines from nx_gpumatch/gpu/leiden.py: BLOCK (threads per block).

#include "common.cuh"

#if !defined(BLOCK) || BLOCK % 32 != 0
#error "compile with -DBLOCK=<whole warps> (see nx_gpumatch/gpu/leiden.py)"
#endif

#ifdef NX_GPUMATCH_EMULATION
__device__ __forceinline__ double mul_rn(double a, double b) { return a * b; }
__device__ __forceinline__ double sub_rn(double a, double b) { return a - b; }
#else
__device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ double sub_rn(double a, double b) { return __dsub_rn(a, b); }
#endif

// nx_gpumatch/cpu/random.py: mix64 (splitmix64's finalizer) and counter_hash.
__device__ __forceinline__ unsigned long long mix64(unsigned long long x)
{
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

__device__ __forceinline__ unsigned long long counter_hash(unsigned long long seed, long long a, long long b)
{
    return mix64(mix64(seed ^ (unsigned long long)a) + (unsigned long long)b * 0x9E3779B97F4A7C15ull);
}

// nx_gpumatch/cpu/leiden.py: _race, a candidate's draw in the refinement's
// exponential race: log(-log U) - lw, U uniform in (0, 1) from (h, r).
__device__ __forceinline__ double race(unsigned long long h, int r, double lw)
{
    const double u = ((double)(mix64(h ^ (unsigned long long)r) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
    return log(-log(u)) - lw;
}

// A refinement group: `width` threads (1 or 32) refining one community at a
// time. Its lanes read consecutive arcs of the member's row; every float sum
// is still taken in the CPU's order (see gather), so the width changes the
// speed, never the bits.
struct Group {
    int width;
    int lane;
    int base;  // threadIdx.x of lane 0
};

__device__ __forceinline__ void group_sync(const Group& gr)
{
    if (gr.width > 1) __syncwarp();
}

// Lanes before this one with pred set (lane order), and the group's total.
__device__ __forceinline__ int group_prefix(const Group& gr, bool pred, int* total)
{
    if (gr.width == 1) {
        *total = pred ? 1 : 0;
        return 0;
    }
    const unsigned bits = __ballot_sync(FULL_MASK, pred);
    *total = __popc(bits);
    return __popc(bits & ((1u << gr.lane) - 1u));
}

__device__ __forceinline__ double group_max(const Group& gr, double v)
{
    if (gr.width > 1)
        for (int off = 16; off > 0; off >>= 1) v = fmax(v, __shfl_xor_sync(FULL_MASK, v, off));
    return v;
}

// The race's winner among the group's candidates, the smallest (draw, id),
// into every lane (id -1: none); `mine` tells the lane that holds it. The
// draws are reduced first and the ids only among lanes that tie on the draw
// (rare), to keep the exchanges few.
__device__ __forceinline__ bool group_race_min(const Group& gr, double& d, int& id)
{
    if (gr.width == 1) return id >= 0;
    const double dk = id >= 0 ? d : __longlong_as_double(0x7FF0000000000000ll);  // +infinity
    double dmin = dk;
    for (int off = 16; off > 0; off >>= 1) dmin = fmin(dmin, __shfl_xor_sync(FULL_MASK, dmin, off));
    const unsigned tied = __ballot_sync(FULL_MASK, id >= 0 && dk == dmin);
    if (tied == 0) {
        id = -1;
        return false;
    }
    int idmin = id >= 0 && dk == dmin ? id : 0x7FFFFFFF;
    if (tied & (tied - 1))
        for (int off = 16; off > 0; off >>= 1) idmin = min(idmin, __shfl_xor_sync(FULL_MASK, idmin, off));
    else
        idmin = __shfl_sync(FULL_MASK, idmin, __ffs(tied) - 1);
    const bool mine = id == idmin && dk == dmin;
    d = dmin;
    id = idmin;
    return mine;
}

// What the kernel reads and writes, gathered so the helpers stay short.
struct Refinement {
    const long long* indptr;
    const int* indices;
    const double* w;
    const int* comm;
    int* ref;
    double* ra;
    int* rsize;
    double* ext;
    int* pos;
    int* br;     // this community's candidate scratch (its own range)
    double* bw;
    double* bg;
    double* lane_w;  // this group's lanes' (sub-community, weight) of one
    int* lane_r;     // chunk of arcs, in shared memory
};

// The weight from v to each sub-community of community c among its
// neighbours: slot q holds sub-community br[q] with weight bw[q]; returns the
// slot count. As on the CPU, a slot is opened at the first arc to its
// sub-community and each later arc adds its weight in row order: per chunk
// of `width` arcs, the first lane holding a sub-community (its leader) folds
// that chunk's weights to it, in lane order, into the slot.
__device__ __forceinline__ int gather(const Group& gr, const Refinement& R, int c, long long lo, long long hi)
{
    int cnt = 0;
    for (long long base = lo; base < hi; base += gr.width) {
        const long long p = base + gr.lane;
        int r = -1;
        double wt = 0.0;
        if (p < hi) {
            const int j = R.indices[p];
            if (R.comm[j] == c) {
                r = R.ref[j];
                wt = R.w[p];
            }
        }
        R.lane_r[gr.lane] = r;
        R.lane_w[gr.lane] = wt;
        group_sync(gr);
        bool leader = r >= 0;
        for (int q = 0; q < gr.lane && leader; ++q) leader = R.lane_r[q] != r;
        int q = -1;
        if (leader) q = R.pos[r];
        int opened;
        const int at = group_prefix(gr, leader && q < 0, &opened);
        if (leader) {
            double acc = wt;
            if (q < 0) {
                q = cnt + at;
                R.pos[r] = q;
                R.br[q] = r;
            } else {
                acc = R.bw[q] + wt;
            }
            for (int x = gr.lane + 1; x < gr.width; ++x)
                if (R.lane_r[x] == r) acc += R.lane_w[x];
            R.bw[q] = acc;
        }
        cnt += opened;
        group_sync(gr);  // slots and the lane arrays are read again after this
    }
    return cnt;
}

// The communities being refined: community c holds members[cptr[c]:cptr[c+1]]
// in the vertex order, comm[v] is v's community and a[c] its weight.
struct Communities {
    const long long* cptr;
    const int* members;
    const int* comm;
    const double* a;
};

// The refined partition and its scratch. On entry ref[v] = v, ra = k,
// rsize = 1, ext[v] = weight of v's arcs inside its community, pos = -1. On
// exit ref is the refined partition (pos is -1 again). Community c keeps its
// candidates in buf_*[cptr[c]:cptr[c+1]] (a member has fewer distinct
// sub-communities among its neighbours than the community has members), so
// scratch is a slot per vertex, whatever the degrees.
struct Refined {
    int* ref;
    double* ra;
    int* rsize;
    double* ext;
    int* pos;
    int* buf_r;
    double* buf_w;
    double* buf_g;
};

// Communities comms[0:count] (ids of the renumbered communities), one per
// group of `width` threads (1 or 32; BLOCK / width groups per block,
// grid-stride), on level lv; the random choice hashes (key, vertex, salt).
extern "C" __global__ void refine_communities(int count, const int* __restrict__ comms, int width, LevelGraph lv,
                                              Communities cs, Refined rf, double theta, unsigned long long key,
                                              long long salt)
{
    const long long* __restrict__ indptr = lv.indptr;
    const int* __restrict__ indices = lv.indices;
    const double* __restrict__ w = lv.w;
    const double* __restrict__ k = lv.k;
    const double res_over_m2 = lv.res_over_m2;
    const long long* __restrict__ cptr = cs.cptr;
    const int* __restrict__ members = cs.members;
    const int* __restrict__ comm = cs.comm;
    const double* __restrict__ a = cs.a;
    int* ref = rf.ref;
    double* ra = rf.ra;
    int* rsize = rf.rsize;
    double* ext = rf.ext;
    int* pos = rf.pos;
    int* buf_r = rf.buf_r;
    double* buf_w = rf.buf_w;
    double* buf_g = rf.buf_g;
    __shared__ int lane_r[BLOCK];
    __shared__ double lane_w[BLOCK];
    const Group gr = {width, (int)threadIdx.x % width, (int)threadIdx.x - (int)threadIdx.x % width};
    const int per = BLOCK / width;
    Refinement R = {indptr, indices, w, comm, ref, ra, rsize, ext, pos, nullptr, nullptr, nullptr,
                    lane_w + gr.base, lane_r + gr.base};
    for (long long i = (long long)blockIdx.x * per + threadIdx.x / width; i < count; i += (long long)gridDim.x * per) {
        const int c = comms[i];
        const double ac = a[c];
        R.br = buf_r + cptr[c];
        R.bw = buf_w + cptr[c];
        R.bg = buf_g + cptr[c];
        for (long long t = cptr[c]; t < cptr[c + 1]; ++t) {
            // every value read up to the gather is written only by lane 0
            // below, between two group_syncs: the same in every lane
            const int v = members[t];
            const int own = ref[v];
            if (rsize[own] != 1) continue;  // others joined v: it is no longer a singleton
            const double kv = k[v];
            const double ev = ext[own];
            const long long lo = indptr[v], hi = indptr[v + 1];
            if (ev < mul_rn(mul_rn(res_over_m2, kv), ac - kv) || hi == lo) continue;  // not well connected
            const int cnt = gather(gr, R, c, lo, hi);
            if (cnt == 0) continue;  // no neighbour in the community (gather ended synchronised)
            // Candidates: well-connected sub-communities with gain >= 0;
            // staying alone (gain 0) is one of them. Slot q is this lane's
            // if q % width == lane; a slot that is no candidate gets br = -1.
            double best = 0.0;
            for (int q = gr.lane; q < cnt; q += width) {
                const int r = R.br[q];
                pos[r] = -1;
                const double rr = ra[r];
                const double g = sub_rn(R.bw[q], mul_rn(mul_rn(res_over_m2, kv), rr));
                if (g < 0.0 || ext[r] < mul_rn(mul_rn(res_over_m2, rr), ac - rr)) {
                    R.br[q] = -1;
                    continue;
                }
                R.bg[q] = g;
                best = fmax(best, g);
            }
            best = group_max(gr, best);
            // Exponential race (see the CPU's refine): the smallest
            // log(-log U) - log-weight wins, staying alone included, so the
            // pick does not depend on the order the candidates were found in.
            const unsigned long long h = counter_hash(key, v, salt);
            double d = 0.0;
            int id = -1, slot = -1;
            for (int q = gr.lane; q < cnt; q += width) {
                const int r = R.br[q];
                if (r < 0) continue;
                const double dq = race(h, r, (R.bg[q] - best) / theta);
                if (id < 0 || dq < d || (dq == d && r < id)) {
                    d = dq;
                    id = r;
                    slot = q;
                }
            }
            const bool mine = group_race_min(gr, d, id);
            const double stay = race(h, own, -best / theta);
            const bool moves = id >= 0 && (d < stay || (d == stay && id < own));
            group_sync(gr);  // every lane is done with this member's reads
            if (moves && mine) {  // the lane that holds the winner's slot
                ext[id] += ev - 2.0 * R.bw[slot];
                ra[id] += kv;
                rsize[id] += 1;
                rsize[own] = 0;
                ref[v] = id;
            }
            group_sync(gr);  // the move is seen by every lane
        }
    }
}
