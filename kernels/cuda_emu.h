// CPU emulation of the CUDA built-ins used by kernels/*.cu.
//
// The launcher (nx_gpumatch/gpu/_launch.py) compiles a kernel file as C++20
// with this header force-included. Each block's threads are real OS threads
// running concurrently, so the kernel's synchronisation is exercised for real:
//   * __syncthreads is a block barrier; a thread that returned while others wait
//     at one is reported as an error (undefined behaviour on the GPU);
//   * warp intrinsics (__shfl*_sync, __ballot_sync, __any/__all_sync,
//     __syncwarp, __reduce_*_sync) are exchanges among the lanes named in the
//     mask; a lane that exited, or lanes that disagree on the mask, are errors;
//   * atomics are std::atomic_ref operations on the caller's memory;
//   * built with -fsanitize=thread (NX_GPUMATCH_EMU_SANITIZE=thread), the
//     ordering is CUDA's, for ThreadSanitizer to judge: atomics are relaxed,
//     and shuffles, ballots, votes and reductions order no memory (only
//     __syncwarp, __syncthreads, __threadfence and launches do);
//   * built with -fsanitize=address,undefined (NX_GPUMATCH_EMU_SANITIZE=address),
//     each block's dynamic shared memory is a heap buffer of exactly the
//     launch's size, and `__shared__` arrays are globals with redzones, so an
//     overrun of either is reported with the kernel's line;
//   * in poison mode (NX_GPUMATCH_EMU_SANITIZE=poison) `__shared__` and dynamic
//     shared memory are filled with garbage at each block start, and blocks
//     are handed out in the order the launcher gives (reverse, random);
//   * when every live thread of a block is blocked, the launch reports a
//     deadlock at once; anything else that stops making progress hits the
//     launch's time limit.
// One copy of the compiled library is loaded per concurrently running block
// ("slot"), so `__shared__` (mapped to `static`) is private to each block.
// This file is not for NVRTC: kernels never include it.
#ifndef NX_GPUMATCH_CUDA_EMU_H
#define NX_GPUMATCH_CUDA_EMU_H

// Warnings belong to the kernels, not to this header.
#pragma GCC system_header

#define NX_GPUMATCH_EMULATION 1

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstddef>
#include <cstdlib>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>

#if defined(__SANITIZE_THREAD__)
#define NXG_EMU_TSAN 1
extern "C" void AnnotateIgnoreSyncBegin(const char* f, int l);
extern "C" void AnnotateIgnoreSyncEnd(const char* f, int l);
extern "C" void AnnotateIgnoreReadsBegin(const char* f, int l);
extern "C" void AnnotateIgnoreReadsEnd(const char* f, int l);
extern "C" void AnnotateIgnoreWritesBegin(const char* f, int l);
extern "C" void AnnotateIgnoreWritesEnd(const char* f, int l);
#endif

// ------------------------------------------------------------ qualifiers
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#ifdef NXG_EMU_POISON
// one section holds every `__shared__` variable, so a block start can fill it
#define __shared__ static __attribute__((section("nxg_shared")))
extern "C" unsigned char __start_nxg_shared[] __attribute__((weak, visibility("hidden")));
extern "C" unsigned char __stop_nxg_shared[] __attribute__((weak, visibility("hidden")));
#else
#define __shared__ static
#endif
#define __constant__ static
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define warpSize 32

// ---------------------------------------------------------------- vector types
struct uint3 { unsigned int x, y, z; };
struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1) : x(x_), y(y_), z(z_) {}
};
#define NXG_EMU_VEC2(T, N) \
    struct N { T x, y; };  \
    static inline N make_##N(T x, T y) { return N{x, y}; }
NXG_EMU_VEC2(int, int2)
NXG_EMU_VEC2(unsigned int, uint2)
NXG_EMU_VEC2(long long, longlong2)
NXG_EMU_VEC2(unsigned long long, ulonglong2)
NXG_EMU_VEC2(float, float2)
NXG_EMU_VEC2(double, double2)
#undef NXG_EMU_VEC2

namespace nxg_emu {

// Shared by every slot of one launch; the layout is mirrored by ctypes in
// _launch.py (keep the two in sync).
struct Control {
    int32_t abort;        // 0 while running; set once by the first error
    int32_t chaos;        // yield at a primitive with probability chaos/1024
    double timeout_s;     // wall-clock limit of the launch
    int64_t next_block;   // blocks are handed out through this counter
    int64_t num_blocks;
    uint64_t seed;        // seeds the chaos generator (and the poison pattern)
    int64_t dyn_smem;     // bytes of dynamic shared memory per block
    const int64_t* order; // the i-th block handed out is order[i] (null: i)
    char msg[4096];       // what went wrong
};

struct Abort {};  // unwinds a thread once the launch has failed

typedef void (*Body)(void**);

// ------------------------------------------------- per-slot launch state
static Control* g_ctl = nullptr;
static std::chrono::steady_clock::time_point g_deadline;
static dim3 g_grid, g_block;
static unsigned g_nthreads = 0;
static Body g_body = nullptr;
static void** g_args = nullptr;
static int64_t g_cur_block = -1;

// Dynamic shared memory of the block running in this slot: g_dyn_store, or
// (address mode) a heap buffer of the launch's exact size, so ASan sees overruns.
alignas(16) static unsigned char g_dyn_store[48 * 1024];
static unsigned char* g_dyn_smem = g_dyn_store;

static thread_local unsigned t_tid = 0, t_lane = 0, t_warp = 0;
static thread_local uint64_t t_rng = 0;
static thread_local unsigned t_ticks = 0;

}  // namespace nxg_emu

static thread_local uint3 threadIdx;
static thread_local uint3 blockIdx;
static thread_local dim3 blockDim;
static thread_local dim3 gridDim;

namespace nxg_emu {

static inline bool aborted() {
    return std::atomic_ref<int32_t>(g_ctl->abort).load(std::memory_order_acquire) != 0;
}

// Record the first failure of the launch (later ones are consequences).
static void report(const std::string& what) {
    int32_t expected = 0;
    if (std::atomic_ref<int32_t>(g_ctl->abort).compare_exchange_strong(expected, 1)) {
        std::snprintf(g_ctl->msg, sizeof(g_ctl->msg), "%s", what.c_str());
    }
}

static std::string where() {
    char buf[160];
    std::snprintf(buf, sizeof(buf), "block %lld, thread %u (warp %u, lane %u)",
                  (long long)g_cur_block, t_tid, t_warp, t_lane);
    return buf;
}

static inline bool past_deadline() { return std::chrono::steady_clock::now() > g_deadline; }

static void wake_all();

[[noreturn]] static void fail(const std::string& what) {
    report(what);
    wake_all();
    throw Abort{};
}

static inline uint64_t next_rand() {
    uint64_t x = t_rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    t_rng = x;
    return x;
}

// Called at every emulated primitive: stops the thread once the launch has
// failed or run out of time, and (chaos mode) yields to shake out races.
static inline void tick(const char* what) {
    if (g_ctl->chaos && (int32_t)(next_rand() & 1023) < g_ctl->chaos) sched_yield();
    if ((++t_ticks & 63) == 0) {
        if (aborted()) throw Abort{};
        if ((t_ticks & 4095) == 0 && past_deadline())
            fail(std::string("time limit reached while ") + where() + " was spinning in " + what +
                 " (a loop that never ends, e.g. waiting for a value no thread writes)");
    }
}

// ------------------------------------------------------- block state
enum Kind { K_NONE = 0, K_SYNCWARP, K_SHFL, K_SHFL_UP, K_SHFL_DOWN, K_SHFL_XOR, K_BALLOT, K_ANY, K_ALL,
            K_RED_ADD, K_RED_MIN, K_RED_MAX, K_RED_AND, K_RED_OR, K_RED_XOR };

static const char* kind_name(int k) {
    switch (k) {
        case K_SYNCWARP: return "__syncwarp";
        case K_SHFL: return "__shfl_sync";
        case K_SHFL_UP: return "__shfl_up_sync";
        case K_SHFL_DOWN: return "__shfl_down_sync";
        case K_SHFL_XOR: return "__shfl_xor_sync";
        case K_BALLOT: return "__ballot_sync";
        case K_ANY: return "__any_sync";
        case K_ALL: return "__all_sync";
        case K_RED_ADD: return "__reduce_add_sync";
        case K_RED_MIN: return "__reduce_min_sync";
        case K_RED_MAX: return "__reduce_max_sync";
        case K_RED_AND: return "__reduce_and_sync";
        case K_RED_OR: return "__reduce_or_sync";
        case K_RED_XOR: return "__reduce_xor_sync";
        default: return "?";
    }
}

// One warp-level exchange in progress: lanes deposit a value, wait until
// every lane of the mask has arrived, then read what they need.
struct Coll {
    int state = 0;  // 0 free, 1 collecting, 2 draining
    unsigned mask = 0, arrived = 0;
    int readers = 0;
    int kind = K_NONE;
    int width = 32;
    uint64_t gen = 0;
    uint64_t val[32];
    uint64_t result = 0;  // ballot / reductions
    bool is_signed = false;
};

constexpr int kCollSlots = 4;

struct Warp {
    Coll coll[kCollSlots];
    std::condition_variable cv;
    unsigned exited = 0;   // lanes that returned from the kernel
    unsigned present = 0;  // lanes that exist (a last, partial warp has fewer)
};

struct Block {
    std::mutex m;
    std::condition_variable cv;  // __syncthreads
    unsigned n = 0, live = 0, blocked = 0, arrived = 0;
    uint64_t gen = 0;
    int count = 0, result = 0;
    unsigned nwarps = 0;
    Warp warps[32];
};

static Block g_blk;

static void wake_all() {
    g_blk.cv.notify_all();
    for (unsigned w = 0; w < 32; ++w) g_blk.warps[w].cv.notify_all();
}

static std::string hexmask(unsigned m) {
    char buf[16];
    std::snprintf(buf, sizeof(buf), "0x%08x", m);
    return buf;
}

// Who is waiting where (for deadlock and time-limit messages). Lock held.
static std::string block_summary() {
    std::string s;
    char buf[200];
    std::snprintf(buf, sizeof(buf), "block %lld: %u threads, %u returned, %u waiting at __syncthreads",
                  (long long)g_cur_block, g_blk.n, g_blk.n - g_blk.live, g_blk.arrived);
    s += buf;
    for (unsigned w = 0; w < g_blk.nwarps; ++w) {
        const Warp& W = g_blk.warps[w];
        for (int c = 0; c < kCollSlots; ++c) {
            const Coll& C = W.coll[c];
            if (C.state == 1) {
                std::snprintf(buf, sizeof(buf), "; warp %u: lanes %s wait in %s(mask=%s)", w,
                              hexmask(C.arrived).c_str(), kind_name(C.kind), hexmask(C.mask).c_str());
                s += buf;
            }
        }
        if (W.exited) {
            std::snprintf(buf, sizeof(buf), "; warp %u: lanes %s returned", w, hexmask(W.exited).c_str());
            s += buf;
        }
    }
    return s;
}

// Wait (lock held) until done() holds. Whoever makes done() true subtracts
// the waiters it releases from `blocked`, so `blocked == live` means that no
// thread can ever release anyone: a deadlock.
template <class Pred>
static void block_wait(std::unique_lock<std::mutex>& lk, std::condition_variable& cv, Pred done, const char* what) {
    if (done()) return;
    g_blk.blocked++;
    if (g_blk.blocked == g_blk.live) {
        std::string msg = std::string("deadlock: every live thread is blocked (last to block: ") + where() +
                          " in " + what + "); " + block_summary();
        report(msg);
        lk.unlock();
        wake_all();
        throw Abort{};
    }
    while (!done()) {
        cv.wait_for(lk, std::chrono::milliseconds(20));
        if (done()) break;
        if (aborted()) throw Abort{};
        if (past_deadline()) {
            std::string msg = std::string("time limit reached: ") + where() + " waits in " + what +
                              " while other threads never arrive; " + block_summary();
            report(msg);
            lk.unlock();
            wake_all();
            throw Abort{};
        }
    }
}

// ------------------------------------------------------- __syncthreads
static int block_sync(int pred, const char* what) {
    tick(what);
    std::unique_lock<std::mutex> lk(g_blk.m);
    if (aborted()) throw Abort{};
    if (g_blk.live < g_blk.n) {
        std::string msg = std::string(what) + " reached by " + where() +
                          " after other threads of the block returned (they never arrive: undefined on the GPU); " +
                          block_summary();
        report(msg);
        lk.unlock();
        wake_all();
        throw Abort{};
    }
    g_blk.arrived++;
    g_blk.count += pred != 0;
    if (g_blk.arrived == g_blk.n) {
        g_blk.result = g_blk.count;
        g_blk.count = 0;
        g_blk.arrived = 0;
        g_blk.gen++;
        g_blk.blocked -= g_blk.n - 1;
        g_blk.cv.notify_all();
        return g_blk.result;
    }
    uint64_t my = g_blk.gen;
    block_wait(lk, g_blk.cv, [&] { return g_blk.gen != my; }, what);
    // result cannot change before this thread arrives at the next barrier
    return g_blk.result;
}

// ---------------------------------------------------- warp collectives
// Under ThreadSanitizer a warp exchange other than __syncwarp must not order
// memory, as on the GPU: the emulator's own locking and bookkeeping inside it
// is hidden from the race checker.
struct CollQuiet {
#ifdef NXG_EMU_TSAN
    bool on;
    explicit CollQuiet(bool quiet) : on(quiet) {
        if (!on) return;
        AnnotateIgnoreSyncBegin(__FILE__, __LINE__);
        AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
        AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
    }
    ~CollQuiet() {
        if (!on) return;
        AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
        AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
        AnnotateIgnoreSyncEnd(__FILE__, __LINE__);
    }
#else
    explicit CollQuiet(bool) {}
#endif
};

static uint64_t warp_collective(int kind, unsigned mask, uint64_t value, int arg, int width, bool is_signed) {
    CollQuiet quiet(kind != K_SYNCWARP);
    const char* what = kind_name(kind);
    tick(what);
    const unsigned bit = 1u << t_lane;
    std::unique_lock<std::mutex> lk(g_blk.m);
    if (aborted()) throw Abort{};
    Warp& W = g_blk.warps[t_warp];
    auto bad = [&](const std::string& why) {
        std::string msg = std::string(what) + " by " + where() + ": " + why + "; " + block_summary();
        report(msg);
        lk.unlock();
        wake_all();
        throw Abort{};
    };
    if (!(mask & bit)) bad("the calling lane is not in mask " + hexmask(mask));
    if (mask & ~W.present) bad("mask " + hexmask(mask) + " names lanes that do not exist in this warp");
    if (mask & W.exited)
        bad("mask " + hexmask(mask) + " names lanes that already returned (" + hexmask(mask & W.exited) + ")");
    if (width <= 0 || width > 32 || (width & (width - 1)))
        bad("width must be a power of two in 1..32");
    Coll* C = nullptr;
    for (;;) {
        for (int c = 0; c < kCollSlots; ++c) {
            Coll& X = W.coll[c];
            if (X.state != 1) continue;
            if (X.mask == mask) {
                C = &X;
            } else if (X.mask & bit) {
                bad("lanes disagree: this lane passes mask " + hexmask(mask) + " while lanes " + hexmask(X.arrived) +
                    " wait in " + kind_name(X.kind) + " with mask " + hexmask(X.mask));
            } else if (X.arrived & mask) {
                bad("lanes " + hexmask(X.arrived & mask) + " of mask " + hexmask(mask) + " are waiting in " +
                    kind_name(X.kind) + " with mask " + hexmask(X.mask));
            }
        }
        if (C) break;
        // An exchange that is still being read (state 2) keeps its slot until
        // its last lane has read; a new one takes a free slot.
        for (int c = 0; c < kCollSlots; ++c)
            if (W.coll[c].state == 0) { C = &W.coll[c]; break; }
        if (C) {
            C->state = 1;
            C->mask = mask;
            C->arrived = 0;
            C->kind = kind;
            C->width = width;
            C->is_signed = is_signed;
            C->gen++;
            break;
        }
        // All slots are draining: a short transient wait, not a block on a lane.
        W.cv.wait_for(lk, std::chrono::milliseconds(5));
        if (aborted()) throw Abort{};
        if (past_deadline()) bad("time limit reached waiting for a free exchange slot");
    }
    if (C->kind != kind || C->width != width)
        bad(std::string("lanes of mask ") + hexmask(mask) + " are in different intrinsics (" + kind_name(C->kind) +
            " width " + std::to_string(C->width) + " vs " + what + " width " + std::to_string(width) + ")");
    if (C->arrived & bit) bad("lane arrived twice");
    C->val[t_lane] = value;
    C->arrived |= bit;
    Coll& X = *C;
    if (X.arrived == mask) {
        X.state = 2;
        int k = __builtin_popcount(mask);
        X.readers = k;
        g_blk.blocked -= k - 1;
        // compute the warp-wide results once
        switch (kind) {
            case K_BALLOT: case K_ANY: case K_ALL: {
                uint64_t b = 0;
                for (int l = 0; l < 32; ++l)
                    if ((mask >> l) & 1u) b |= (uint64_t)(X.val[l] != 0) << l;
                X.result = b;
                break;
            }
            case K_RED_ADD: case K_RED_MIN: case K_RED_MAX: case K_RED_AND: case K_RED_OR: case K_RED_XOR: {
                bool first = true;
                uint64_t acc = 0;
                for (int l = 0; l < 32; ++l) {
                    if (!((mask >> l) & 1u)) continue;
                    uint32_t v = (uint32_t)X.val[l];
                    if (first) { acc = v; first = false; continue; }
                    uint32_t a = (uint32_t)acc;
                    switch (kind) {
                        case K_RED_ADD: a += v; break;
                        case K_RED_MIN: a = X.is_signed ? (uint32_t)std::min((int32_t)a, (int32_t)v) : std::min(a, v); break;
                        case K_RED_MAX: a = X.is_signed ? (uint32_t)std::max((int32_t)a, (int32_t)v) : std::max(a, v); break;
                        case K_RED_AND: a &= v; break;
                        case K_RED_OR: a |= v; break;
                        case K_RED_XOR: a ^= v; break;
                    }
                    acc = a;
                }
                X.result = acc;
                break;
            }
            default: break;
        }
        W.cv.notify_all();
    } else {
        uint64_t my = X.gen;
        // The slot cannot be reused before this lane has read it (readers).
        block_wait(lk, W.cv, [&] { return X.gen == my && X.state == 2; }, what);
    }
    // read this lane's answer
    uint64_t out = 0;
    const int lane = (int)t_lane;
    const int base = lane & ~(width - 1);
    int src = lane;
    switch (kind) {
        case K_SHFL: src = base + (arg & (width - 1)); break;
        case K_SHFL_UP: src = (lane - base) >= arg ? lane - arg : lane; break;
        case K_SHFL_DOWN: src = (lane - base) + arg < width ? lane + arg : lane; break;
        case K_SHFL_XOR: src = lane ^ arg; if (src >= base + width) src = lane; break;
        default: break;
    }
    switch (kind) {
        case K_SHFL: case K_SHFL_UP: case K_SHFL_DOWN: case K_SHFL_XOR:
            // Reading a lane outside the mask is undefined on the GPU: poison it.
            out = (src >= 0 && src < 32 && ((mask >> src) & 1u)) ? X.val[src] : 0xDEADBEEFDEADBEEFull;
            break;
        case K_BALLOT: out = X.result; break;
        case K_ANY: out = X.result != 0; break;
        case K_ALL: out = X.result == (uint64_t)mask; break;
        case K_SYNCWARP: break;
        default: out = X.result; break;
    }
    if (--X.readers == 0) {
        X.state = 0;
        X.mask = 0;
        X.arrived = 0;
        W.cv.notify_all();
    }
    return out;
}

// ------------------------------------------------------- thread exit
// A thread that returns while others wait for it at a barrier or in a warp
// exchange would leave them hanging on the GPU: report it.
static void thread_exit(bool failed) {
    std::unique_lock<std::mutex> lk(g_blk.m);
    g_blk.live--;
    Warp& W = g_blk.warps[t_warp];
    W.exited |= 1u << t_lane;
    if (failed || aborted()) return;
    std::string msg;
    if (g_blk.arrived > 0) {
        msg = "thread " + where() + " returned while " + std::to_string(g_blk.arrived) +
              " threads wait for it at __syncthreads; ";
    } else {
        for (int c = 0; c < kCollSlots; ++c) {
            const Coll& C = W.coll[c];
            if (C.state == 1 && (C.mask >> t_lane) & 1u) {
                msg = "lane " + where() + " returned while lanes " + hexmask(C.arrived) + " wait for it in " +
                      kind_name(C.kind) + "(mask=" + hexmask(C.mask) + "); ";
                break;
            }
        }
    }
    if (msg.empty() && g_blk.live > 0 && g_blk.blocked == g_blk.live)
        msg = "deadlock after " + where() + " returned: every live thread is blocked; ";
    if (!msg.empty()) {
        report(msg + block_summary());
        lk.unlock();
        wake_all();
    }
}

// ------------------------------------------------------- launch driver
// All worker threads of a slot meet here between blocks; the last to arrive
// takes the next block off the shared counter and resets the block state.
static std::mutex g_tm;
static std::condition_variable g_tcv;
static unsigned g_tarrived = 0;
static uint64_t g_tgen = 0;
static int64_t g_tnext = -1;
static unsigned g_finished = 0;
static std::condition_variable g_fcv;

static void free_dyn_smem() {
#ifdef __SANITIZE_ADDRESS__
    if (g_dyn_smem != g_dyn_store) std::free(g_dyn_smem);
    g_dyn_smem = g_dyn_store;
#endif
}

// Garbage in, so a kernel that reads shared memory it did not write gets
// neither zeros nor the previous block's values.
static void poison(unsigned char* p, unsigned char* end, uint64_t x) {
    for (; p < end; ++p) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *p = (unsigned char)(x >> 24);
    }
}

static void reset_block(int64_t b) {
    g_cur_block = b;
    const size_t dyn = (size_t)g_ctl->dyn_smem;
#ifdef __SANITIZE_ADDRESS__
    free_dyn_smem();
    void* mem = nullptr;
    if (posix_memalign(&mem, 16, dyn) != 0 || (!mem && dyn)) report("out of memory for dynamic shared memory");
    else g_dyn_smem = static_cast<unsigned char*>(mem);
#endif
#ifdef NXG_EMU_POISON
    const uint64_t x = (((g_ctl->seed + 1) * 0x9E3779B97F4A7C15ull) ^ (0xD1B54A32D192ED03ull * (uint64_t)(b + 1))) | 1;
    if (g_dyn_smem) poison(g_dyn_smem, g_dyn_smem + dyn, x);
    if (__start_nxg_shared) poison(__start_nxg_shared, __stop_nxg_shared, x * 3);
#endif
    g_blk.n = g_blk.live = g_nthreads;
    g_blk.blocked = g_blk.arrived = 0;
    g_blk.count = g_blk.result = 0;
    g_blk.nwarps = (g_nthreads + 31) / 32;
    for (unsigned w = 0; w < 32; ++w) {
        Warp& W = g_blk.warps[w];
        W.exited = 0;
        unsigned lanes = w < g_blk.nwarps ? std::min(32u, g_nthreads - 32 * w) : 0;
        W.present = lanes == 32 ? 0xFFFFFFFFu : ((1u << lanes) - 1u);
        for (int c = 0; c < kCollSlots; ++c) {
            W.coll[c].state = 0;
            W.coll[c].arrived = W.coll[c].mask = 0;
            W.coll[c].readers = 0;
        }
    }
}

static int64_t next_block() {
    std::unique_lock<std::mutex> lk(g_tm);
    if (++g_tarrived == g_nthreads) {
        g_tarrived = 0;
        int64_t b = std::atomic_ref<int64_t>(g_ctl->next_block).fetch_add(1);
        if (b >= g_ctl->num_blocks || aborted()) b = -1;
        else if (g_ctl->order) b = g_ctl->order[b];
        if (b >= 0) reset_block(b);
        g_tnext = b;
        g_tgen++;
        g_tcv.notify_all();
        return b;
    }
    uint64_t my = g_tgen;
    while (g_tgen == my) {
        g_tcv.wait_for(lk, std::chrono::milliseconds(20));
        if (g_tgen != my) break;
        if (aborted()) return -1;
        if (past_deadline()) {
            report("time limit reached: block " + std::to_string(g_cur_block) + " still has " +
                   std::to_string(g_nthreads - g_tarrived) +
                   " running threads that call no CUDA primitive (an endless loop on plain memory?)");
            return -1;
        }
    }
    return g_tnext;
}

// One launch's share of worker t: block after block until none is left.
static void run_blocks(unsigned t) {
    t_tid = t;
    t_lane = t & 31;
    t_warp = t >> 5;
    t_rng = (g_ctl->seed ^ (0x9E3779B97F4A7C15ull * (t + 1))) | 1;
    t_ticks = 0;
    blockDim = g_block;
    gridDim = g_grid;
    threadIdx.x = t % g_block.x;
    threadIdx.y = (t / g_block.x) % g_block.y;
    threadIdx.z = t / (g_block.x * g_block.y);
    for (;;) {
        int64_t b = next_block();
        if (b < 0) break;
        blockIdx.x = (unsigned)(b % g_grid.x);
        blockIdx.y = (unsigned)((b / g_grid.x) % g_grid.y);
        blockIdx.z = (unsigned)(b / ((int64_t)g_grid.x * g_grid.y));
        bool failed = false;
        try {
            g_body(g_args);
        } catch (Abort&) {
            failed = true;
        } catch (std::exception& e) {
            report(std::string("C++ exception in ") + where() + ": " + e.what());
            failed = true;
        } catch (...) {
            report("unknown C++ exception in " + where());
            failed = true;
        }
        thread_exit(failed);
    }
    // notified under the lock: the launcher, once it sees the count, must not
    // run ahead of this worker's last touch of the slot (its exit destroys g_fcv)
    std::lock_guard<std::mutex> lk(g_tm);
    g_finished++;
    g_fcv.notify_all();
}

// ------------------------------------------------------- worker pool
// The block threads outlive a launch: starting and joining an OS thread costs
// about as much as a small launch runs (launches come by the thousand). Worker
// t waits on its own semaphore, which a launch using it posts; a worker idle
// for POOL_IDLE_S seconds ends, so the pools of modules no longer launched
// hold no threads. Launches of one slot never overlap (the launcher's lock).
static constexpr unsigned POOL_MAX = 1024;  // CUDA's most threads per block
static constexpr int POOL_IDLE_S = 1;
static std::mutex g_pm;  // g_alive, and a worker deciding to end
static bool g_alive[POOL_MAX];
static sem_t g_go[POOL_MAX];
static bool g_go_init[POOL_MAX];

static void* worker(void* p) {
    unsigned t = (unsigned)(uintptr_t)p;
    for (;;) {
        timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += POOL_IDLE_S;
        if (sem_timedwait(&g_go[t], &until) == 0) {
            run_blocks(t);
            continue;
        }
        if (errno == EINTR) continue;
        std::unique_lock<std::mutex> lk(g_pm);
        if (sem_trywait(&g_go[t]) == 0) {  // posted as the wait ran out
            lk.unlock();
            run_blocks(t);
            continue;
        }
        g_alive[t] = false;  // a later launch starts a new worker t
        return nullptr;
    }
}

// Starts the launch on workers 0..n-1, starting those not alive; returns how
// many run it (fewer: a thread failed to start, and the launch is failed).
// Posting under g_pm: a worker seen alive here cannot end before its post.
static unsigned start_workers(unsigned n) {
    std::lock_guard<std::mutex> lk(g_pm);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 1 << 20);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    unsigned t = 0;
    for (; t < n; ++t) {
        if (g_alive[t]) continue;
        if (!g_go_init[t]) {
            sem_init(&g_go[t], 0, 0);
            g_go_init[t] = true;
        }
        pthread_t tid;
        if (pthread_create(&tid, &attr, worker, (void*)(uintptr_t)t) != 0) break;
        g_alive[t] = true;
    }
    pthread_attr_destroy(&attr);
    // failed first: the started ones give up at the first block hand-out
    if (t < n) report("could not start emulation thread " + std::to_string(t));
    for (unsigned i = 0; i < t; ++i) sem_post(&g_go[i]);
    return t;
}

// Runs blocks of one launch in this slot until the shared counter runs out.
// Returns 0 when all threads finished, 1 after a reported failure, 2 when
// some threads could not be stopped (left running; the launcher retires the slot).
static int run(Control* ctl, const unsigned* dims, Body body, void** args) {
    g_ctl = ctl;
    g_grid = dim3(dims[0], dims[1], dims[2]);
    g_block = dim3(dims[3], dims[4], dims[5]);
    g_nthreads = dims[3] * dims[4] * dims[5];
    g_body = body;
    g_args = args;
    g_deadline = std::chrono::steady_clock::now() +
                 std::chrono::microseconds((int64_t)(ctl->timeout_s * 1e6));
    g_tarrived = 0;
    g_finished = 0;
    g_cur_block = -1;
    unsigned started = start_workers(std::min(g_nthreads, POOL_MAX));
    if (started < g_nthreads) {
        report("a block of " + std::to_string(g_nthreads) + " threads: started " + std::to_string(started));
        g_tcv.notify_all();
    }
    std::unique_lock<std::mutex> lk(g_tm);
    auto grace_end = std::chrono::steady_clock::time_point::max();
    while (g_finished < started) {
        g_fcv.wait_for(lk, std::chrono::milliseconds(20));
        if (g_finished == started) break;
        if (aborted() || past_deadline()) {
            if (!aborted()) report("time limit reached (threads still running)");
            lk.unlock();
            wake_all();
            g_tcv.notify_all();
            lk.lock();
            auto now = std::chrono::steady_clock::now();
            if (grace_end == std::chrono::steady_clock::time_point::max()) grace_end = now + std::chrono::seconds(2);
            if (now > grace_end) return 2;  // the launcher retires the slot
        }
    }
    lk.unlock();
    free_dyn_smem();
    return aborted() ? 1 : 0;
}

// Calls a kernel with arguments given CUDA-style: args[i] points at the value
// of parameter i.
template <class... A, std::size_t... I>
static void invoke_impl(void (*f)(A...), void** a, std::index_sequence<I...>) {
    f(*static_cast<std::remove_cv_t<std::remove_reference_t<A>>*>(a[I])...);
}
template <class... A>
static void invoke(void (*f)(A...), void** a) {
    invoke_impl(f, a, std::index_sequence_for<A...>{});
}

// Parameter types as text for the launcher's checks: "p" + pointee for
// pointers, then kind (i signed, u unsigned, f float, b bool, v void) + size.
template <class T>
static std::string type_code() {
    using U = std::remove_cv_t<T>;
    if constexpr (std::is_pointer_v<U>) {
        using P = std::remove_cv_t<std::remove_pointer_t<U>>;
        if constexpr (std::is_void_v<P>) return "pv0";
        else if constexpr (std::is_pointer_v<P>) return "pp8";
        else return "p" + type_code<P>();
    } else if constexpr (std::is_same_v<U, bool>) {
        return "b1";
    } else if constexpr (std::is_floating_point_v<U>) {
        return "f" + std::to_string(sizeof(U));
    } else if constexpr (std::is_integral_v<U>) {
        return (std::is_signed_v<U> ? "i" : "u") + std::to_string(sizeof(U));
    } else {
        return "s" + std::to_string(sizeof(U));  // struct passed by value
    }
}
template <class... A>
static std::string signature(void (*)(A...)) {
    std::string s;
    ((s += type_code<A>() + ","), ...);
    return s;
}

}  // namespace nxg_emu

// ------------------------------------------------------------ CUDA API
static inline void __syncthreads() { nxg_emu::block_sync(1, "__syncthreads"); }
static inline int __syncthreads_count(int p) { return nxg_emu::block_sync(p, "__syncthreads_count"); }
static inline int __syncthreads_and(int p) {
    return nxg_emu::block_sync(p, "__syncthreads_and") == (int)nxg_emu::g_blk.n;
}
static inline int __syncthreads_or(int p) { return nxg_emu::block_sync(p, "__syncthreads_or") != 0; }

static inline void __syncwarp(unsigned mask = 0xFFFFFFFFu) {
    nxg_emu::warp_collective(nxg_emu::K_SYNCWARP, mask, 0, 0, 32, false);
}
static inline unsigned __ballot_sync(unsigned mask, int pred) {
    return (unsigned)nxg_emu::warp_collective(nxg_emu::K_BALLOT, mask, pred != 0, 0, 32, false);
}
static inline int __any_sync(unsigned mask, int pred) {
    return (int)nxg_emu::warp_collective(nxg_emu::K_ANY, mask, pred != 0, 0, 32, false);
}
static inline int __all_sync(unsigned mask, int pred) {
    return (int)nxg_emu::warp_collective(nxg_emu::K_ALL, mask, pred != 0, 0, 32, false);
}
// Lanes that have not returned. The GPU reports the lanes converged at this
// point, which the emulation cannot know; kernels should not depend on it.
static inline unsigned __activemask() {
    std::lock_guard<std::mutex> lk(nxg_emu::g_blk.m);
    const nxg_emu::Warp& W = nxg_emu::g_blk.warps[nxg_emu::t_warp];
    return W.present & ~W.exited;
}

namespace nxg_emu {
template <class T>
static inline uint64_t to_bits(T v) {
    static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>, "shuffle of a type wider than 8 bytes");
    uint64_t b = 0;
    std::memcpy(&b, &v, sizeof(T));
    return b;
}
template <class T>
static inline T from_bits(uint64_t b) {
    T v;
    std::memcpy(&v, &b, sizeof(T));
    return v;
}
}  // namespace nxg_emu

#define NXG_EMU_SHFL(NAME, KIND, ARG)                                                             \
    template <class T>                                                                            \
    static inline T NAME(unsigned mask, T var, ARG a, int width = 32) {                            \
        return nxg_emu::from_bits<T>(nxg_emu::warp_collective(nxg_emu::KIND, mask, nxg_emu::to_bits(var), \
                                                              (int)a, width, false));             \
    }
NXG_EMU_SHFL(__shfl_sync, K_SHFL, int)
NXG_EMU_SHFL(__shfl_up_sync, K_SHFL_UP, unsigned)
NXG_EMU_SHFL(__shfl_down_sync, K_SHFL_DOWN, unsigned)
NXG_EMU_SHFL(__shfl_xor_sync, K_SHFL_XOR, int)
#undef NXG_EMU_SHFL

#define NXG_EMU_RED(NAME, KIND, T, SIGNED)                                                                   \
    static inline T NAME(unsigned mask, T v) {                                                               \
        return (T)nxg_emu::warp_collective(nxg_emu::KIND, mask, (uint64_t)(uint32_t)v, 0, 32, SIGNED);       \
    }
NXG_EMU_RED(__reduce_add_sync, K_RED_ADD, int, true)
NXG_EMU_RED(__reduce_add_sync, K_RED_ADD, unsigned, false)
NXG_EMU_RED(__reduce_min_sync, K_RED_MIN, int, true)
NXG_EMU_RED(__reduce_min_sync, K_RED_MIN, unsigned, false)
NXG_EMU_RED(__reduce_max_sync, K_RED_MAX, int, true)
NXG_EMU_RED(__reduce_max_sync, K_RED_MAX, unsigned, false)
NXG_EMU_RED(__reduce_and_sync, K_RED_AND, unsigned, false)
NXG_EMU_RED(__reduce_or_sync, K_RED_OR, unsigned, false)
NXG_EMU_RED(__reduce_xor_sync, K_RED_XOR, unsigned, false)
#undef NXG_EMU_RED

// ---------------------------------------------------------------- atomics
// Exactly CUDA's overload sets, so a call NVRTC rejects is rejected here too.
namespace nxg_emu {
// CUDA's atomics are relaxed. Under ThreadSanitizer they are relaxed here too,
// so that it sees only the ordering a kernel asks for; otherwise sequentially
// consistent (what x86 gives read-modify-writes anyway).
#ifdef NXG_EMU_TSAN
constexpr std::memory_order kOrder = std::memory_order_relaxed;
#else
constexpr std::memory_order kOrder = std::memory_order_seq_cst;
#endif
template <class T>
struct Ref {
    std::atomic_ref<T> r;
    T load() const { return r.load(kOrder); }
    bool compare_exchange_strong(T& e, T d) { return r.compare_exchange_strong(e, d, kOrder); }
    bool compare_exchange_weak(T& e, T d) { return r.compare_exchange_weak(e, d, kOrder); }
    T exchange(T v) { return r.exchange(v, kOrder); }
    T fetch_add(T v) { return r.fetch_add(v, kOrder); }
    T fetch_sub(T v) { return r.fetch_sub(v, kOrder); }
    T fetch_and(T v) { return r.fetch_and(v, kOrder); }
    T fetch_or(T v) { return r.fetch_or(v, kOrder); }
    T fetch_xor(T v) { return r.fetch_xor(v, kOrder); }
};
template <class T>
static inline Ref<T> ref(T* p) {
    tick("an atomic");
    return Ref<T>{std::atomic_ref<T>(*p)};
}
// load_u64 & co. of common.cuh: a read of memory other threads write, i.e. a
// relaxed atomic load (what the race checker must see; a plain load on x86).
template <class T>
static inline T coherent_load(const T* p) {
    return __atomic_load_n(p, __ATOMIC_RELAXED);
}
template <class T>
static inline void coherent_store(T* p, T v) {
    __atomic_store_n(p, v, __ATOMIC_RELAXED);
}
template <class T>
static inline T cas(T* p, T compare, T val) {
    T expected = compare;
    ref(p).compare_exchange_strong(expected, val);
    return expected;
}
template <class T>
static inline T fetch_min(T* p, T v) {
    auto r = ref(p);
    T old = r.load();
    while (v < old && !r.compare_exchange_weak(old, v)) {
    }
    return old;
}
template <class T>
static inline T fetch_max(T* p, T v) {
    auto r = ref(p);
    T old = r.load();
    while (v > old && !r.compare_exchange_weak(old, v)) {
    }
    return old;
}
}  // namespace nxg_emu

static inline int atomicCAS(int* p, int c, int v) { return nxg_emu::cas(p, c, v); }
static inline unsigned atomicCAS(unsigned* p, unsigned c, unsigned v) { return nxg_emu::cas(p, c, v); }
static inline unsigned long long atomicCAS(unsigned long long* p, unsigned long long c, unsigned long long v) {
    return nxg_emu::cas(p, c, v);
}
static inline unsigned short atomicCAS(unsigned short* p, unsigned short c, unsigned short v) {
    return nxg_emu::cas(p, c, v);
}

static inline int atomicAdd(int* p, int v) { return nxg_emu::ref(p).fetch_add(v); }
static inline unsigned atomicAdd(unsigned* p, unsigned v) { return nxg_emu::ref(p).fetch_add(v); }
static inline unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) {
    return nxg_emu::ref(p).fetch_add(v);
}
static inline float atomicAdd(float* p, float v) { return nxg_emu::ref(p).fetch_add(v); }
static inline double atomicAdd(double* p, double v) { return nxg_emu::ref(p).fetch_add(v); }

static inline int atomicSub(int* p, int v) { return nxg_emu::ref(p).fetch_sub(v); }
static inline unsigned atomicSub(unsigned* p, unsigned v) { return nxg_emu::ref(p).fetch_sub(v); }

static inline int atomicExch(int* p, int v) { return nxg_emu::ref(p).exchange(v); }
static inline unsigned atomicExch(unsigned* p, unsigned v) { return nxg_emu::ref(p).exchange(v); }
static inline unsigned long long atomicExch(unsigned long long* p, unsigned long long v) {
    return nxg_emu::ref(p).exchange(v);
}
static inline float atomicExch(float* p, float v) { return nxg_emu::ref(p).exchange(v); }

static inline int atomicMin(int* p, int v) { return nxg_emu::fetch_min(p, v); }
static inline unsigned atomicMin(unsigned* p, unsigned v) { return nxg_emu::fetch_min(p, v); }
static inline long long atomicMin(long long* p, long long v) { return nxg_emu::fetch_min(p, v); }
static inline unsigned long long atomicMin(unsigned long long* p, unsigned long long v) {
    return nxg_emu::fetch_min(p, v);
}
static inline int atomicMax(int* p, int v) { return nxg_emu::fetch_max(p, v); }
static inline unsigned atomicMax(unsigned* p, unsigned v) { return nxg_emu::fetch_max(p, v); }
static inline long long atomicMax(long long* p, long long v) { return nxg_emu::fetch_max(p, v); }
static inline unsigned long long atomicMax(unsigned long long* p, unsigned long long v) {
    return nxg_emu::fetch_max(p, v);
}

#define NXG_EMU_BITOP(NAME, OP)                                                                   \
    static inline int NAME(int* p, int v) { return nxg_emu::ref(p).OP(v); }                       \
    static inline unsigned NAME(unsigned* p, unsigned v) { return nxg_emu::ref(p).OP(v); }        \
    static inline unsigned long long NAME(unsigned long long* p, unsigned long long v) {          \
        return nxg_emu::ref(p).OP(v);                                                             \
    }
NXG_EMU_BITOP(atomicAnd, fetch_and)
NXG_EMU_BITOP(atomicOr, fetch_or)
NXG_EMU_BITOP(atomicXor, fetch_xor)
#undef NXG_EMU_BITOP

static inline unsigned atomicInc(unsigned* p, unsigned limit) {
    auto r = nxg_emu::ref(p);
    unsigned old = r.load();
    while (!r.compare_exchange_weak(old, old >= limit ? 0u : old + 1u)) {
    }
    return old;
}
static inline unsigned atomicDec(unsigned* p, unsigned limit) {
    auto r = nxg_emu::ref(p);
    unsigned old = r.load();
    while (!r.compare_exchange_weak(old, (old == 0u || old > limit) ? limit : old - 1u)) {
    }
    return old;
}

// ------------------------------------------------------- misc intrinsics
static inline void __threadfence() {
    nxg_emu::tick("__threadfence");
    std::atomic_thread_fence(std::memory_order_seq_cst);
}
static inline void __threadfence_block() { __threadfence(); }
static inline void __nanosleep(unsigned) {
    nxg_emu::tick("__nanosleep");
    sched_yield();
}
static inline long long clock64() {
    return (long long)std::chrono::steady_clock::now().time_since_epoch().count();
}
template <class T>
static inline T __ldg(const T* p) { return *p; }

static inline int __popc(unsigned x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
static inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
static inline unsigned __brev(unsigned x) {
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0F0F0F0Fu) | ((x & 0x0F0F0F0Fu) << 4);
    x = ((x >> 8) & 0x00FF00FFu) | ((x & 0x00FF00FFu) << 8);
    return (x >> 16) | (x << 16);
}
static inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
static inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
static inline long long __double_as_longlong(double x) { return nxg_emu::from_bits<long long>(nxg_emu::to_bits(x)); }
static inline double __longlong_as_double(long long x) { return nxg_emu::from_bits<double>(nxg_emu::to_bits(x)); }
static inline int __float_as_int(float x) { return nxg_emu::from_bits<int>(nxg_emu::to_bits(x)); }
static inline float __int_as_float(int x) { return nxg_emu::from_bits<float>(nxg_emu::to_bits(x)); }

// CUDA's min/max are overloaded for the integer and floating types.
#define NXG_EMU_MINMAX(T)                                   \
    static inline T min(T a, T b) { return b < a ? b : a; } \
    static inline T max(T a, T b) { return a < b ? b : a; }
NXG_EMU_MINMAX(int)
NXG_EMU_MINMAX(unsigned int)
NXG_EMU_MINMAX(long long)
NXG_EMU_MINMAX(unsigned long long)
NXG_EMU_MINMAX(long)
NXG_EMU_MINMAX(unsigned long)
NXG_EMU_MINMAX(float)
NXG_EMU_MINMAX(double)
#undef NXG_EMU_MINMAX

#endif  // NX_GPUMATCH_CUDA_EMU_H
