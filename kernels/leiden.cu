// Leiden refinement on the GPU (Traag, Waltman, van Eck 2019), read side by
// side with nx_gpumatch/cpu/leiden.py's refine(): the same rules, the same
// float operations in the same order, the same counter-based random numbers.
//
// Local moving and aggregation are the Louvain kernels (kernels/louvain.cu,
// driven by nx_gpumatch/gpu/louvain.py); only the refinement is here.
//
// Refinement of one community never looks outside it: its vertices join
// sub-communities of the same community, and the sub-community ids are the
// ids of its own members. So communities are refined independently, one
// thread each, walking the community's members in the vertex order exactly as
// the CPU walks all vertices; the per-id arrays (ref, ra, rsize, ext, pos) are
// touched at a community's own members only, and no two threads share an
// entry. Parallelism is across communities: one very large community runs on
// one thread.
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

// Communities 0..ncomm-1, community c holding members[cptr[c]:cptr[c+1]] in
// the vertex order; comm[v] its community. On entry ref[v] = v, ra = k,
// rsize = 1, ext[v] = weight of v's arcs inside its community, pos = -1.
// On exit ref is the refined partition (pos is -1 again). Threads
// 0..nthreads-1 take communities t, t + nthreads, ...; thread t keeps its
// candidates in buf_*[t * scratch, (t + 1) * scratch) (scratch > every degree),
// so the scratch memory is nthreads * scratch slots whatever the grid.
extern "C" __global__ void refine_communities(int ncomm, const long long* __restrict__ cptr, const int* __restrict__ members,
                                              const long long* __restrict__ indptr, const int* __restrict__ indices,
                                              const double* __restrict__ w, const double* __restrict__ k,
                                              const int* __restrict__ comm, const double* __restrict__ a, double res_over_m2,
                                              double theta, unsigned long long key, long long salt, int* ref, double* ra,
                                              int* rsize, double* ext, int* pos, int nthreads, long long scratch, int* buf_r,
                                              double* buf_w, double* buf_g)
{
    const long long tid = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (tid >= nthreads) return;
    int* br = buf_r + tid * scratch;
    double* bw = buf_w + tid * scratch;
    double* bg = buf_g + tid * scratch;
    for (long long c = tid; c < ncomm; c += nthreads) {
        const double ac = a[c];
        for (long long t = cptr[c]; t < cptr[c + 1]; ++t) {
            const int v = members[t];
            const int own = ref[v];
            if (rsize[own] != 1) continue;  // others joined v: it is no longer a singleton
            const double kv = k[v];
            const double ev = ext[own];
            const long long lo = indptr[v], hi = indptr[v + 1];
            if (ev < mul_rn(mul_rn(res_over_m2, kv), ac - kv) || hi == lo) continue;  // not well connected
            int cnt = 0;
            for (long long p = lo; p < hi; ++p) {
                const int j = indices[p];
                if (comm[j] != c) continue;
                const int r = ref[j];
                const int q = pos[r];
                if (q < 0) {
                    pos[r] = cnt;
                    br[cnt] = r;
                    bw[cnt] = w[p];
                    ++cnt;
                } else {
                    bw[q] += w[p];
                }
            }
            // Candidates: well-connected sub-communities with gain >= 0;
            // staying alone (gain 0) is one of them.
            double best = 0.0;
            int ncand = 0;
            for (int q = 0; q < cnt; ++q) {
                const int r = br[q];
                pos[r] = -1;
                const double rr = ra[r];
                const double g = sub_rn(bw[q], mul_rn(mul_rn(res_over_m2, kv), rr));
                if (g < 0.0 || ext[r] < mul_rn(mul_rn(res_over_m2, rr), ac - rr)) continue;
                br[ncand] = r;
                bw[ncand] = bw[q];
                bg[ncand] = g;
                ++ncand;
                best = fmax(best, g);
            }
            if (ncand == 0) continue;
            // Exponential race (see the CPU's refine): the smallest
            // log(-log U) - log-weight wins, staying alone included, so the
            // pick does not depend on the order the candidates were found in.
            const unsigned long long h = counter_hash(key, v, salt);
            int pick = -1;
            double win = race(h, own, -best / theta);
            for (int q = 0; q < ncand; ++q) {
                const double d = race(h, br[q], (bg[q] - best) / theta);
                if (d < win || (d == win && br[q] < (pick < 0 ? own : br[pick]))) {
                    win = d;
                    pick = q;
                }
            }
            if (pick < 0) continue;
            const int r = br[pick];
            ext[r] += ev - 2.0 * bw[pick];
            ra[r] += kv;
            rsize[r] += 1;
            rsize[own] = 0;
            ref[v] = r;
        }
    }
}
