// Maximum-cardinality bipartite matching on the GPU: APFB and APsB of Deveci,
// Kaya, Ucar and Catalyurek (Euro-Par 2013). Read side by side with
// augment_bfs in nx_gpumatch/cpu/bipartite.py; nx_gpumatch/gpu/bipartite.py
// drives the phases.
//
// The graph is a biadjacency by column: rows of column c are
// crows[cptr[c] .. cptr[c+1]). rmatch[r] / cmatch[c] hold the mate, -1 free;
// rmatch[r] == ENDPOINT marks a free row claimed as the end of a path.
//
// One phase: bp_init_levels, then bp_bfs (or bp_bfs_wr) once per level, then
// bp_alternate and bp_fix_matching. Every kernel walks its vertices with a
// grid-stride loop (GRID_STRIDE of common.cuh), so one launch shape gives the
// paper's MT layout (one thread per vertex: grid * block >= n) and another its
// CT layout (a fixed grid, many vertices per thread).
//
// Unlike the paper, a column joins the search by a CAS on its level, so it has
// exactly one parent and the root of that parent: the search is a forest, and
// ALTERNATE flips at most one path per tree (the first endpoint to claim the
// tree's root). Flipped paths are vertex-disjoint, so no write ever races and
// FIXMATCHING only frees the endpoints whose path lost its claim.

#include "common.cuh"

// The sentinels are the CPU engine's (nx_gpumatch/cpu/bipartite.py), passed as
// -D defines by nx_gpumatch/gpu/bipartite.py, so the two never disagree.
#if !defined(UNSEEN) || !defined(ENDPOINT)
#error "compile with -DUNSEEN=... -DENDPOINT=... (see nx_gpumatch/gpu/bipartite.py)"
#endif

// level[c] = 0 and root[c] = c for free columns, UNSEEN / -1 for matched ones.
extern "C" __global__ void bp_init_levels(int ncols, const int* __restrict__ cmatch, int* level,
                                          int* parent, int* root, int* found, int* owner)
{
    GRID_STRIDE(c, ncols) {
        const bool free_col = cmatch[c] < 0;
        level[c] = free_col ? 0 : UNSEEN;
        root[c] = free_col ? (int)c : -1;
        parent[c] = -1;
        found[c] = 0;
        owner[c] = -1;
    }
}

// One BFS level: every column at level `depth` looks at its rows. A matched row
// leads to its mate, which joins level depth + 1 if its CAS wins; a free row is
// an augmenting path's end, claimed by CAS on its rmatch. flags[0] is set when a
// column joined the next level, flags[1] when a path was found. With `wr` (the
// paper's GPUBFS-WR) a tree that has found a path stops growing.
template <bool wr>
__device__ __forceinline__ void bfs_level(int depth, int ncols, const long long* __restrict__ cptr,
                                          const int* __restrict__ crows, int* rmatch, int* level,
                                          int* parent, int* root, int* pred, int* found, int* flags)
{
    GRID_STRIDE(c, ncols) {
        // level[c] may go from UNSEEN to depth + 1 meanwhile (neither is depth)
        if (load_i32(level + c) != depth) continue;
        const int rt = root[c];
        if (wr && load_i32(found + rt)) continue;
        for (long long k = cptr[c]; k < cptr[c + 1]; ++k) {
            const int r = crows[k];
            const int c2 = load_i32(rmatch + r);
            if (c2 >= 0) {
                if (load_i32(level + c2) == UNSEEN && atomicCAS(level + c2, UNSEEN, depth + 1) == UNSEEN) {
                    parent[c2] = (int)c;  // read only by later launches
                    root[c2] = rt;
                    store_i32(flags, 1);  // the same value from many threads
                }
            } else if (c2 == -1 && atomicCAS(rmatch + r, -1, ENDPOINT) == -1) {
                pred[r] = (int)c;
                store_i32(found + rt, 1);  // read by load_i32 meanwhile
                store_i32(flags + 1, 1);
                if (wr) break;
            }
        }
    }
}

// The search forest of a phase: each column's level, parent and root, each
// row's predecessor column on a path, and per root whether its tree found one.
struct Forest {
    int* level;
    int* parent;
    int* root;
    int* pred;
    int* found;
};

extern "C" __global__ void bp_bfs(int depth, int ncols, const long long* __restrict__ cptr,
                                  const int* __restrict__ crows, int* rmatch, Forest f, int* flags)
{
    bfs_level<false>(depth, ncols, cptr, crows, rmatch, f.level, f.parent, f.root, f.pred, f.found, flags);
}

extern "C" __global__ void bp_bfs_wr(int depth, int ncols, const long long* __restrict__ cptr,
                                     const int* __restrict__ crows, int* rmatch, Forest f, int* flags)
{
    bfs_level<true>(depth, ncols, cptr, crows, rmatch, f.level, f.parent, f.root, f.pred, f.found, flags);
}

// ALTERNATE: the thread of an endpoint row whose path first claims its tree's
// root flips the path back to the root along parent links. The owner CAS makes
// it the only thread touching the vertices of that tree.
extern "C" __global__ void bp_alternate(int nrows, int* rmatch, int* cmatch, const int* __restrict__ parent,
                                        const int* __restrict__ root, const int* __restrict__ pred,
                                        int* owner)
{
    GRID_STRIDE(t, nrows) {
        int r = (int)t;
        // only this row's thread changes an endpoint; another tree's flip may be
        // rewriting this (matched) row meanwhile, hence the coherent load
        if (load_i32(rmatch + r) != ENDPOINT) continue;
        int c = pred[r];
        if (atomicCAS(owner + root[c], -1, r) != -1) continue;
        while (true) {
            const int next_row = cmatch[c];
            cmatch[c] = r;
            store_i32(rmatch + r, c);  // read by other threads' endpoint checks
            if (parent[c] < 0) break;  // c was the free root
            r = next_row;
            c = parent[c];
        }
    }
}

// FIXMATCHING: endpoints that lost their tree's claim are free again, and a row
// whose column points elsewhere is freed (the paper's repair of racing flips;
// with claimed trees it finds none).
extern "C" __global__ void bp_fix_matching(int nrows, int* rmatch, const int* __restrict__ cmatch)
{
    GRID_STRIDE(r, nrows) {
        const int c = rmatch[r];
        if (c == ENDPOINT || (c >= 0 && cmatch[c] != (int)r)) rmatch[r] = -1;
    }
}
