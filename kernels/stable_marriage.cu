// Stable marriage on the GPU: McVitie-Wilson, one thread per man (McVitie and
// Wilson, "The stable marriage problem", CACM 1971; on GPUs after Naim et al.).
// Read side by side with nx_gpumatch/cpu/stable_marriage.py.
//
// Man m's usable list is packed[ptr[m] .. ptr[m+1]), best first; each entry is
// (her rank of him) << 32 | woman, only for pairs who rank each other.
// A woman's word is (her rank of her suitor) << 32 | suitor, EMPTY_WORD when
// she has none; smaller is better. Words only decrease, so a stale read can
// only make a man try and fail at the CAS, never skip a woman he could win.
// nxt[m] is where man m resumes when he is displaced.

#include "common.cuh"

// Thread t brings man t into the matching. Whenever a proposal displaces a
// man, the same thread carries on with him at once (the McVitie-Wilson
// recursion); the chain ends with a proposal that displaces nobody, or with a
// man who has run out of women.
extern "C" __global__ void sm_mcvitie_wilson(int n_men, const long long* __restrict__ ptr,
                                             const long long* __restrict__ packed, unsigned long long* word,
                                             long long* nxt)
{
    const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (t >= n_men) return;
    long long cur = t;
    while (cur >= 0) {
        long long e = load_i64(nxt + cur);
        const long long end = ptr[cur + 1];
        long long next = -1;
        bool placed = false;
        while (e < end && !placed) {
            const unsigned long long pe = (unsigned long long)packed[e];
            ++e;
            const long long w = (long long)(pe & LOW_MASK);
            const unsigned long long offer = (pe & ~LOW_MASK) | (unsigned long long)cur;
            unsigned long long seen = load_u64(word + w);
            if (offer >= seen) continue;  // she already holds a man she prefers
            // Where cur resumes must be visible before the CAS that lets
            // another thread displace him.
            store_i64(nxt + cur, e);
            __threadfence();
            while (seen > offer) {
                const unsigned long long got = atomicCAS(word + w, seen, offer);
                if (got == seen) break;
                seen = got;  // what the CAS saw, never a re-read
            }
            if (seen > offer) {
                placed = true;
                next = seen == EMPTY_WORD ? -1 : (long long)(seen & LOW_MASK);
            }
            // else a better man got her meanwhile: she is lost for good
        }
        if (!placed) *(volatile long long*)(nxt + cur) = end;
        // Pairs with the displaced man's fence above before his nxt is read.
        __threadfence();
        cur = next;
    }
}

// mate[man] = woman from the final words (mate preset to -1). A man is the
// suitor of at most one woman, so writes never collide.
extern "C" __global__ void sm_mates(int n_women, const unsigned long long* __restrict__ word, long long* mate)
{
    GRID_STRIDE(w, n_women)
    {
        const unsigned long long s = word[w];
        if (s != EMPTY_WORD) mate[s & LOW_MASK] = w;
    }
}
