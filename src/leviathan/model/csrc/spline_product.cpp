// Fused CPU kernel for steps 4-5 of the Leviathan generator (docs/DESIGN.md §2):
//
//     phi[u, m, d, c] = sum_g B_g(u[u, m, d]) S[m, d, g, c]      step 4, only the p+1 non-zero knots
//     P[u, m, c]      = prod_d phi[u, m, d, c]                    step 5
//
// and its backward (grad_S, grad_u) from (grad_P, u, S, P): nothing else is kept between the two.
//
// Plain C++ behind a C ABI, loaded with ctypes by ``leviathan.model.spline_kernel`` (which builds it
// once per machine and falls back to the eager torch path if that fails). No torch headers: it builds
// quickly and is independent of the torch ABI. All tensors are contiguous, row-major:
//     u (U, M, d_s), S (M, d_s, kappa, r), P and grad_P (U, M, r), grad_u (U, M, d_s),
//     grad_S (M, d_s, kappa, r), ACCUMULATED into (the caller zeroes it; chunked calls add up).
//
// Loop order. The ids are cut into tiles whose (ids, r) rows of P (forward) or of grad_P * P (backward)
// stay in L2. Per (mode, tile) the kernel walks the d_s seed coordinates, so one coordinate's (kappa, r)
// slice of S (and of grad_S) stays in L1 while every id of the tile reads its p+1 rows:
// - forward multiplies phi into the tile's P rows, two coordinates per pass over P;
// - backward forms grad_phi = grad_P P / phi (P normal), adds B_j(u) grad_phi into grad_S's rows and
//   <d phi / du, grad_phi> into grad_u, all in one pass over r.
// The windows (knot rows, weights, their derivative) are computed per coordinate for the whole tile
// first, from a transposed block of u (a vectorisable loop), with the formulas of ``bspline.window_rows``.
//
// Exactness: (id, mode) rows whose P is zero, subnormal or not finite (some phi is zero, or overflow)
// skip the quotient; a second pass gives them the exact prefix/suffix exclusive product of phi over d,
// as the eager path does. Non-finite u: nothing is computed, the call returns NONFINITE (the caller
// fills NaN, as the eager path does).
//
// Threads: ``threads`` > 1 splits forward over (mode, tile) and backward over ranges of coordinates
// (each owns its grad_S slices: no atomics); results do not depend on the thread count.
//
// Footguns: pointers are trusted (the Python side checks shapes, dtypes, contiguity); degree must be
// 1, 2 or 3 and kappa >= 2 (else an error status, nothing written).

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <new>
#include <thread>
#include <vector>

namespace {

using idx_t = std::int64_t;

enum Status : int { OK = 0, BAD_DEGREE = 1, BAD_KNOTS = 2, NONFINITE = 3, NO_MEMORY = 4 };

struct Shape {
    idx_t U, M, d_s, kappa, r;
};

constexpr idx_t D_BLOCK = 16;  // seed coordinates per transposed block of u (one cache line of fp32)

// The widest vector the target has (-march=native decides), as a GCC/clang vector extension type: the backward's
// hot loop is written with it so that the grad_u reduction stays a vector until a batched horizontal sum.
#if defined(__AVX512F__)
constexpr int VBYTES = 64;
#elif defined(__AVX__)
constexpr int VBYTES = 32;
#else
constexpr int VBYTES = 16;
#endif

template <typename T>
struct Simd {
    static constexpr int L = VBYTES / int(sizeof(T));
    typedef T V __attribute__((vector_size(VBYTES)));
    static V load(const T* p) {
        V v;
        __builtin_memcpy(&v, p, sizeof v);
        return v;
    }
    static void store(T* p, V v) { __builtin_memcpy(p, &v, sizeof v); }
    static V splat(T x) { return V{} + x; }
};

// Ids per tile: the tile's (ids, r) rows of P (forward) or of grad_P * P (backward) stay in L2.
template <typename T>
idx_t tile_ids(idx_t r) {
    const idx_t bytes = 192 * 1024;
    return std::max<idx_t>(16, bytes / std::max<idx_t>(1, r * idx_t(sizeof(T))));
}

template <typename T>
void grow(std::vector<T>& v, std::size_t n) {
    if (v.size() < n) v.resize(n);
}

// Windows of one coordinate for n ids, slot-major: knot[j n + t] (clamped into [0, kappa)), w[j n + t] and,
// if DW, dw[j n + t] = d w / du. interior[t] = 1 when the p+1 knots are distinct (no clamping).
template <typename T, int P1>
struct Windows {
    std::vector<std::int32_t> knot;
    std::vector<T> w, dw;
    std::vector<unsigned char> interior;
    idx_t n = 0;

    void resize(idx_t ids) {
        n = ids;
        grow(knot, std::size_t(P1 * ids));
        grow(w, std::size_t(P1 * ids));
        grow(dw, std::size_t(P1 * ids));
        grow(interior, std::size_t(ids));
    }
};

// The windows at x[0..n) (contiguous). Same formulas as bspline._window_weights / _window_derivative /
// window_rows: weights as polynomials of the position f inside the window, edge windows (those that would
// include knot -1 or kappa) renormalised over their valid knots, d w / du by the quotient rule there.
template <typename T, int P1, bool DW>
void compute_windows(const T* __restrict__ x, idx_t kappa, Windows<T, P1>& win) {
    constexpr int p = P1 - 1;
    const idx_t n = win.n;
    std::int32_t* __restrict__ knot = win.knot.data();
    T* __restrict__ w = win.w.data();
    T* __restrict__ dw = win.dw.data();
    unsigned char* __restrict__ interior = win.interior.data();
    const T scale = T(kappa - 1);
    const T half = T(P1) / T(2);
    const T lo_ok = T(-1), hi_ok = scale - T(p) - T(1);  // fl in [lo_ok, hi_ok]: an interior window
    const T fl_min = T(-(p + 2)), fl_max = scale + T(1);   // keeps the int conversion defined
    int edges = 0;
#pragma omp simd reduction(+ : edges)
    for (idx_t t = 0; t < n; ++t) {
        const T s = x[t] * scale - half;  // s - (p+1)/2 with s = u (kappa - 1)
        T fl = std::floor(s);
        const T f = s - fl;  // in [0, 1): position inside the window
        const T g = T(1) - f;
        const bool inside = (fl >= lo_ok) & (fl <= hi_ok);
        edges += inside ? 0 : 1;
        interior[t] = inside;
        fl = fl >= fl_min ? fl : fl_min;  // (a NaN becomes fl_min: never an undefined conversion)
        fl = fl <= fl_max ? fl : fl_max;
        const std::int32_t first = std::int32_t(fl) + 1;  // knot of slot 0
        for (int j = 0; j < P1; ++j) knot[j * n + t] = first + j;
        if constexpr (p == 1) {
            w[t] = g;
            w[n + t] = f;
            if constexpr (DW) {
                dw[t] = -scale;
                dw[n + t] = scale;
            }
        } else if constexpr (p == 2) {
            w[t] = T(0.5) * g * g;
            w[n + t] = f * g + T(0.5);
            w[2 * n + t] = T(0.5) * f * f;
            if constexpr (DW) {
                dw[t] = -scale * g;
                dw[n + t] = (g - f) * scale;
                dw[2 * n + t] = scale * f;
            }
        } else {
            const T f2 = f * f, g2 = g * g;
            w[t] = g2 * g / T(6);
            w[n + t] = f2 * (f * T(0.5) - T(1)) + T(2.0 / 3.0);
            w[2 * n + t] = g2 * (g * T(0.5) - T(1)) + T(2.0 / 3.0);
            w[3 * n + t] = f2 * f / T(6);
            if constexpr (DW) {
                dw[t] = g2 * (T(-0.5) * scale);
                dw[n + t] = f * (f * T(1.5) - T(2)) * scale;
                dw[2 * n + t] = g * (g * T(-1.5) + T(2)) * scale;
                dw[3 * n + t] = f2 * (T(0.5) * scale);
            }
        }
    }
    if (edges == 0) return;
    const idx_t kmax = kappa - 1;
    for (idx_t t = 0; t < n; ++t) {
        if (interior[t]) continue;
        const std::int32_t first = knot[t];
        T b[P1], db[P1], total = 0, dtotal = 0;
        for (int j = 0; j < P1; ++j) {
            const idx_t k = idx_t(first) + j;
            const bool valid = k >= 0 && k <= kmax;
            b[j] = valid ? w[j * n + t] : T(0);
            total += b[j];
            if constexpr (DW) {
                db[j] = valid ? dw[j * n + t] : T(0);
                dtotal += db[j];
            }
            knot[j * n + t] = std::int32_t(std::min<idx_t>(std::max<idx_t>(k, 0), kmax));
        }
        for (int j = 0; j < P1; ++j) {
            w[j * n + t] = b[j] / total;
            if constexpr (DW) dw[j * n + t] = (db[j] * total - b[j] * dtotal) / (total * total);
        }
        // a window whose valid knots are all distinct rows still counts as interior for the fused update
        bool distinct = true;
        for (int j = 1; j < P1; ++j) distinct &= knot[j * n + t] != knot[(j - 1) * n + t];
        interior[t] = distinct;
    }
}

// xT[dd n + t] = u[a + t, m, d0 + dd] for dd < nd, t < n: a block of coordinates of a tile, id-contiguous.
// (Walking u, or grad_u, one coordinate at a time would step M d_s elements per id: a power-of-two stride
// whose lines all compete for a few cache sets.)
template <typename T>
void gather_block(const T* __restrict__ u, const Shape& sh, idx_t a, idx_t n, idx_t m, idx_t d0, idx_t nd,
                  T* __restrict__ xT) {
    for (idx_t t = 0; t < n; ++t) {
        const T* src = u + ((a + t) * sh.M + m) * sh.d_s + d0;
        for (idx_t dd = 0; dd < nd; ++dd) xT[dd * n + t] = src[dd];
    }
}

// The inverse: grad_u[a + t, m, d0 + dd] = gT[dd n + t].
template <typename T>
void scatter_block(const T* __restrict__ gT, const Shape& sh, idx_t a, idx_t n, idx_t m, idx_t d0, idx_t nd,
                   T* __restrict__ grad_u) {
    for (idx_t t = 0; t < n; ++t) {
        T* dst = grad_u + ((a + t) * sh.M + m) * sh.d_s + d0;
        for (idx_t dd = 0; dd < nd; ++dd) dst[dd] = gT[dd * n + t];
    }
}

template <typename T>
bool all_finite(const T* x, idx_t n) {
    int bad = 0;
#pragma omp simd reduction(+ : bad)
    for (idx_t i = 0; i < n; ++i) bad += (x[i] - x[i] == T(0)) ? 0 : 1;  // inf - inf and NaN are NaN
    return bad == 0;
}

// Per-thread scratch, reused between calls (grows to the largest tile).
template <typename T, int P1>
struct Scratch {
    Windows<T, P1> win[2];
    std::vector<T> xT, gT, rows, lanes, buf;
    std::vector<unsigned char> bad;
};

template <typename T, int P1>
Scratch<T, P1>& scratch() {
    thread_local Scratch<T, P1> s;
    return s;
}

// ------------------------------------------------------------------------------------------------
// forward

// P rows of the tile *= phi of one coordinate (NC = 1) or of two (NC = 2, one pass over P).
template <typename T, int P1, int NC>
void forward_coordinates(const T* const* Sd, const Windows<T, P1>* win, T* __restrict__ P, idx_t P_stride, idx_t n,
                         idx_t r) {
    for (idx_t t = 0; t < n; ++t) {
        const T* row[NC][P1];
        T wt[NC][P1];
        for (int k = 0; k < NC; ++k)
            for (int j = 0; j < P1; ++j) {
                row[k][j] = Sd[k] + idx_t(win[k].knot[j * n + t]) * r;
                wt[k][j] = win[k].w[j * n + t];
            }
        T* __restrict__ Pr = P + t * P_stride;
#pragma omp simd
        for (idx_t c = 0; c < r; ++c) {
            T prod = T(1);
            for (int k = 0; k < NC; ++k) {
                T phi = wt[k][0] * row[k][0][c];
                for (int j = 1; j < P1; ++j) phi += wt[k][j] * row[k][j][c];
                prod = k == 0 ? phi : prod * phi;
            }
            Pr[c] *= prod;
        }
    }
}

template <typename T, int P1>
void forward_items(const T* __restrict__ u, const T* __restrict__ S, T* __restrict__ P, const Shape& sh, idx_t item0,
                   idx_t item1) {
    const idx_t M = sh.M, d_s = sh.d_s, kappa = sh.kappa, r = sh.r;
    const idx_t T_ids = tile_ids<T>(r);
    const idx_t tiles = (sh.U + T_ids - 1) / T_ids;
    Scratch<T, P1>& s = scratch<T, P1>();
    grow(s.xT, std::size_t(D_BLOCK * std::min(T_ids, sh.U)));
    grow(s.rows, std::size_t(std::min(T_ids, sh.U) * r));
    for (idx_t item = item0; item < item1; ++item) {  // item = (mode, tile)
        const idx_t m = item / tiles, a = (item % tiles) * T_ids;
        const idx_t n = std::min(T_ids, sh.U - a);
        s.win[0].resize(n);
        s.win[1].resize(n);
        // the tile's P rows of mode m, contiguous (in P they are M r apart: a power-of-two stride whose rows
        // would compete for a few cache sets)
        T* Pm = s.rows.data();
        std::fill_n(Pm, n * r, T(1));
        for (idx_t d0 = 0; d0 < d_s; d0 += D_BLOCK) {
            const idx_t nd = std::min(D_BLOCK, d_s - d0);
            gather_block(u, sh, a, n, m, d0, nd, s.xT.data());
            idx_t dd = 0;
            for (; dd + 2 <= nd; dd += 2) {
                compute_windows<T, P1, false>(s.xT.data() + dd * n, kappa, s.win[0]);
                compute_windows<T, P1, false>(s.xT.data() + (dd + 1) * n, kappa, s.win[1]);
                const T* Sd[2] = {S + (m * d_s + d0 + dd) * kappa * r, S + (m * d_s + d0 + dd + 1) * kappa * r};
                forward_coordinates<T, P1, 2>(Sd, s.win, Pm, r, n, r);
            }
            for (; dd < nd; ++dd) {
                compute_windows<T, P1, false>(s.xT.data() + dd * n, kappa, s.win[0]);
                const T* Sd[1] = {S + (m * d_s + d0 + dd) * kappa * r};
                forward_coordinates<T, P1, 1>(Sd, s.win, Pm, r, n, r);
            }
        }
        for (idx_t t = 0; t < n; ++t) std::copy_n(Pm + t * r, r, P + ((a + t) * M + m) * r);
    }
}

// ------------------------------------------------------------------------------------------------
// backward

// One coordinate (m, d) over a tile's good rows (bad[t] == 0): grad_S[m, d] += sum_t B(u_t) grad_phi_t and
// grad_u_col[t] = <d phi / du, grad_phi_t>, grad_phi_t = gpp_t / phi_t; gpp (n, r) = grad_P * P of mode m.
// lanes (n, L): scratch for the vector partial sums of the dot products (summed after the loop over ids, so
// no id waits on a horizontal add); q (r,): scratch.
template <typename T, int P1, bool NEED_U, bool NEED_S>
void backward_coordinate(const T* __restrict__ Sd, T* __restrict__ gSd, const T* __restrict__ gpp,
                         const unsigned char* bad, const Windows<T, P1>& win, T* __restrict__ q,
                         T* __restrict__ lanes, T* __restrict__ grad_u_col, idx_t r) {
    using V = typename Simd<T>::V;
    constexpr int L = Simd<T>::L;
    const idx_t n = win.n;
    const idx_t r_vec = r - r % L;
    for (idx_t t = 0; t < n; ++t) {
        V acc = {};
        T dot = 0;
        if (bad[t]) {  // the exact pass writes this row's gradients
            if constexpr (NEED_U) {
                Simd<T>::store(lanes + t * L, acc);
                grad_u_col[t] = T(0);
            }
            continue;
        }
        const T* row[P1];
        T* grad_row[P1];
        T wt[P1], dwt[P1];
        for (int j = 0; j < P1; ++j) {
            const idx_t k = win.knot[j * n + t];
            row[j] = Sd + k * r;
            if constexpr (NEED_S) grad_row[j] = gSd + k * r;
            wt[j] = win.w[j * n + t];
            if constexpr (NEED_U) dwt[j] = win.dw[j * n + t];
        }
        const T* __restrict__ g = gpp + t * r;
        if (!NEED_S || win.interior[t]) {
            // distinct rows: every update in one pass over r
            V wv[P1], dwv[P1];
            for (int j = 0; j < P1; ++j) {
                wv[j] = Simd<T>::splat(wt[j]);
                if constexpr (NEED_U) dwv[j] = Simd<T>::splat(dwt[j]);
            }
            for (idx_t c = 0; c < r_vec; c += L) {
                V sj[P1];
                for (int j = 0; j < P1; ++j) sj[j] = Simd<T>::load(row[j] + c);
                V phi = wv[0] * sj[0];
                for (int j = 1; j < P1; ++j) phi += wv[j] * sj[j];
                const V gphi = Simd<T>::load(g + c) / phi;  // d P / d phi_d = P / phi_d (P is a normal number)
                if constexpr (NEED_U) {
                    V dphi = dwv[0] * sj[0];
                    for (int j = 1; j < P1; ++j) dphi += dwv[j] * sj[j];
                    acc += dphi * gphi;
                }
                if constexpr (NEED_S)
                    for (int j = 0; j < P1; ++j)
                        Simd<T>::store(grad_row[j] + c, Simd<T>::load(grad_row[j] + c) + wv[j] * gphi);
            }
            for (idx_t c = r_vec; c < r; ++c) {
                T phi = wt[0] * row[0][c];
                for (int j = 1; j < P1; ++j) phi += wt[j] * row[j][c];
                const T gphi = g[c] / phi;
                if constexpr (NEED_U) {
                    T dphi = dwt[0] * row[0][c];
                    for (int j = 1; j < P1; ++j) dphi += dwt[j] * row[j][c];
                    dot += dphi * gphi;
                }
                if constexpr (NEED_S)
                    for (int j = 0; j < P1; ++j) grad_row[j][c] += wt[j] * gphi;
            }
        } else {
            // an edge window whose clamped slots share a row: grad_phi first, then one row update at a time
            for (idx_t c = 0; c < r; ++c) {
                T phi = wt[0] * row[0][c];
                for (int j = 1; j < P1; ++j) phi += wt[j] * row[j][c];
                const T gphi = g[c] / phi;
                q[c] = gphi;
                if constexpr (NEED_U) {
                    T dphi = dwt[0] * row[0][c];
                    for (int j = 1; j < P1; ++j) dphi += dwt[j] * row[j][c];
                    dot += dphi * gphi;
                }
            }
            for (int j = 0; j < P1; ++j) {
                T* __restrict__ dst = grad_row[j];
                const T wj = wt[j];
#pragma omp simd
                for (idx_t c = 0; c < r; ++c) dst[c] += wj * q[c];
            }
        }
        if constexpr (NEED_U) {
            Simd<T>::store(lanes + t * L, acc);
            grad_u_col[t] = dot;
        }
    }
    if constexpr (NEED_U)
        for (idx_t t = 0; t < n; ++t) {
            T sum = grad_u_col[t];
            for (int l = 0; l < L; ++l) sum += lanes[t * L + l];
            grad_u_col[t] = sum;
        }
}

// Exact gradient of one (id, mode) row whose P is not a normal number: grad_phi_d = grad_P * prod_{d' != d} phi_d'
// (prefix/suffix products, no division), applied to the coordinates d0..d1-1 of mode m.
template <typename T, int P1, bool NEED_U, bool NEED_S>
void backward_exact_row(const T* u_row, const T* S_m, T* gS_m, const T* grad_P_row, T* grad_u_row, idx_t d0, idx_t d1,
                        const Shape& sh, std::vector<T>& buf) {
    const idx_t d_s = sh.d_s, kappa = sh.kappa, r = sh.r;
    grow(buf, std::size_t((d_s + 3) * r));
    T* suffix = buf.data();                  // (d_s + 1, r): suffix[d] = phi_d ... phi_{d_s-1}, suffix[d_s] = 1
    T* prefix = buf.data() + (d_s + 1) * r;  // (r,) running phi_0 ... phi_{d-1}
    T* gphi = prefix + r;                    // (r,)
    Windows<T, P1> win;
    win.resize(1);
    std::fill_n(suffix + d_s * r, r, T(1));
    for (idx_t d = d_s - 1; d >= 0; --d) {
        compute_windows<T, P1, false>(u_row + d, kappa, win);
        const T* Sd = S_m + d * kappa * r;
        for (idx_t c = 0; c < r; ++c) {
            T phi = win.w[0] * Sd[idx_t(win.knot[0]) * r + c];
            for (int j = 1; j < P1; ++j) phi += win.w[j] * Sd[idx_t(win.knot[j]) * r + c];
            suffix[d * r + c] = suffix[(d + 1) * r + c] * phi;
        }
    }
    std::fill_n(prefix, r, T(1));
    for (idx_t d = 0; d < d1; ++d) {
        compute_windows<T, P1, true>(u_row + d, kappa, win);
        const T* Sd = S_m + d * kappa * r;
        if (d >= d0) {
            T dot = 0;
            for (idx_t c = 0; c < r; ++c) {
                gphi[c] = grad_P_row[c] * (prefix[c] * suffix[(d + 1) * r + c]);
                if constexpr (NEED_U) {
                    T dphi = win.dw[0] * Sd[idx_t(win.knot[0]) * r + c];
                    for (int j = 1; j < P1; ++j) dphi += win.dw[j] * Sd[idx_t(win.knot[j]) * r + c];
                    dot += dphi * gphi[c];
                }
            }
            if constexpr (NEED_U) grad_u_row[d] = dot;
            if constexpr (NEED_S) {
                T* gSd = gS_m + d * kappa * r;
                for (int j = 0; j < P1; ++j)
                    for (idx_t c = 0; c < r; ++c) gSd[idx_t(win.knot[j]) * r + c] += win.w[j] * gphi[c];
            }
        }
        for (idx_t c = 0; c < r; ++c) {
            T phi = win.w[0] * Sd[idx_t(win.knot[0]) * r + c];
            for (int j = 1; j < P1; ++j) phi += win.w[j] * Sd[idx_t(win.knot[j]) * r + c];
            prefix[c] *= phi;
        }
    }
}

// Coordinates q0..q1-1 (q = m d_s + d) for every id.
template <typename T, int P1, bool NEED_U, bool NEED_S>
void backward_range(const T* __restrict__ grad_P, const T* __restrict__ u, const T* __restrict__ S,
                    const T* __restrict__ P, T* __restrict__ grad_u, T* __restrict__ grad_S, const Shape& sh, idx_t q0,
                    idx_t q1) {
    const idx_t M = sh.M, d_s = sh.d_s, kappa = sh.kappa, r = sh.r;
    const idx_t T_ids = tile_ids<T>(r);
    const T tiny = std::numeric_limits<T>::min(), huge = std::numeric_limits<T>::max();
    Scratch<T, P1>& s = scratch<T, P1>();
    const idx_t n_max = std::min(T_ids, sh.U);
    grow(s.xT, std::size_t(D_BLOCK * n_max));
    grow(s.gT, std::size_t(D_BLOCK * n_max));
    grow(s.lanes, std::size_t(Simd<T>::L * n_max));
    grow(s.rows, std::size_t(n_max * r + r));
    grow(s.bad, std::size_t(n_max));
    T* q = s.rows.data() + n_max * r;  // (r,) grad_phi of an edge window
    for (idx_t a = 0; a < sh.U; a += T_ids) {
        const idx_t n = std::min(T_ids, sh.U - a);
        s.win[0].resize(n);
        for (idx_t m = q0 / d_s; m * d_s < q1; ++m) {
            const idx_t d0 = std::max(q0 - m * d_s, idx_t(0)), d1 = std::min(q1 - m * d_s, d_s);
            // grad_P * P for the tile's rows of mode m, and which rows need the exact product
            bool any_bad = false;
            for (idx_t t = 0; t < n; ++t) {
                const T* Pr = P + ((a + t) * M + m) * r;
                const T* Gr = grad_P + ((a + t) * M + m) * r;
                T* out = s.rows.data() + t * r;
                int ok = 0;
#pragma omp simd reduction(+ : ok)
                for (idx_t c = 0; c < r; ++c) {
                    out[c] = Gr[c] * Pr[c];
                    const T mag = std::fabs(Pr[c]);
                    ok += (mag >= tiny) & (mag <= huge);  // false for 0, subnormals, inf, NaN
                }
                s.bad[t] = ok != r;
                any_bad |= ok != r;
            }
            for (idx_t db = d0; db < d1; db += D_BLOCK) {
                const idx_t nd = std::min(D_BLOCK, d1 - db);
                gather_block(u, sh, a, n, m, db, nd, s.xT.data());
                for (idx_t dd = 0; dd < nd; ++dd) {
                    const idx_t qd = m * d_s + db + dd;
                    compute_windows<T, P1, NEED_U>(s.xT.data() + dd * n, kappa, s.win[0]);
                    backward_coordinate<T, P1, NEED_U, NEED_S>(
                        S + qd * kappa * r, NEED_S ? grad_S + qd * kappa * r : nullptr, s.rows.data(), s.bad.data(),
                        s.win[0], q, s.lanes.data(), s.gT.data() + dd * n, r);
                }
                if (NEED_U) scatter_block(s.gT.data(), sh, a, n, m, db, nd, grad_u);
            }
            if (any_bad) {
                for (idx_t t = 0; t < n; ++t) {
                    if (!s.bad[t]) continue;
                    const idx_t row = (a + t) * M + m;
                    backward_exact_row<T, P1, NEED_U, NEED_S>(u + row * d_s, S + m * d_s * kappa * r,
                                                              NEED_S ? grad_S + m * d_s * kappa * r : nullptr,
                                                              grad_P + row * r, NEED_U ? grad_u + row * d_s : nullptr,
                                                              d0, d1, sh, s.buf);
                }
            }
        }
    }
}

// Runs fn(begin, end) over [0, n) on up to `threads` threads (contiguous, nearly equal ranges). An exception
// (out of memory) in any range is rethrown here, after every thread has finished.
template <typename F>
void parallel(idx_t n, int threads, F fn) {
    threads = int(std::max<idx_t>(1, std::min<idx_t>(threads, n)));
    if (threads <= 1) {
        fn(idx_t(0), n);
        return;
    }
    std::atomic<bool> failed{false};
    auto guarded = [&](idx_t b, idx_t e) {
        try {
            fn(b, e);
        } catch (...) {
            failed = true;
        }
    };
    std::vector<std::thread> pool;
    pool.reserve(threads - 1);
    try {
        for (int i = 1; i < threads; ++i) pool.emplace_back(guarded, n * i / threads, n * (i + 1) / threads);
    } catch (...) {  // could not start a thread: this one does the ranges that have none
        for (int i = int(pool.size()) + 1; i < threads; ++i) guarded(n * i / threads, n * (i + 1) / threads);
    }
    guarded(idx_t(0), n / threads);
    for (auto& th : pool) th.join();
    if (failed) throw std::bad_alloc();
}

template <typename T, int P1>
void forward_impl(const T* u, const T* S, T* P, const Shape& sh, int threads) {
    const idx_t T_ids = tile_ids<T>(sh.r);
    const idx_t tiles = (sh.U + T_ids - 1) / T_ids;
    parallel(sh.M * tiles, threads, [&](idx_t b, idx_t e) { forward_items<T, P1>(u, S, P, sh, b, e); });
}

template <typename T, int P1, bool NEED_U, bool NEED_S>
void backward_impl(const T* grad_P, const T* u, const T* S, const T* P, T* grad_u, T* grad_S, const Shape& sh,
                   int threads) {
    parallel(sh.M * sh.d_s, threads, [&](idx_t b, idx_t e) {
        backward_range<T, P1, NEED_U, NEED_S>(grad_P, u, S, P, grad_u, grad_S, sh, b, e);
    });
}

template <typename T>
int forward_dispatch(const T* u, const T* S, T* P, const Shape& sh, int degree, int threads) {
    if (degree < 1 || degree > 3) return BAD_DEGREE;
    if (sh.kappa < 2) return BAD_KNOTS;
    if (sh.U <= 0 || sh.M <= 0 || sh.r <= 0) return OK;
    if (!all_finite(u, sh.U * sh.M * sh.d_s)) return NONFINITE;
    try {
        switch (degree) {
            case 1: forward_impl<T, 2>(u, S, P, sh, threads); break;
            case 2: forward_impl<T, 3>(u, S, P, sh, threads); break;
            default: forward_impl<T, 4>(u, S, P, sh, threads); break;
        }
    } catch (...) {  // scratch allocation failed; nothing may cross the C ABI
        return NO_MEMORY;
    }
    return OK;
}

template <typename T, int P1>
void backward_needs(const T* grad_P, const T* u, const T* S, const T* P, T* grad_u, T* grad_S, const Shape& sh,
                    int threads) {
    if (grad_u && grad_S) backward_impl<T, P1, true, true>(grad_P, u, S, P, grad_u, grad_S, sh, threads);
    else if (grad_u) backward_impl<T, P1, true, false>(grad_P, u, S, P, grad_u, grad_S, sh, threads);
    else if (grad_S) backward_impl<T, P1, false, true>(grad_P, u, S, P, grad_u, grad_S, sh, threads);
}

template <typename T>
int backward_dispatch(const T* grad_P, const T* u, const T* S, const T* P, T* grad_u, T* grad_S, const Shape& sh,
                      int degree, int threads) {
    if (degree < 1 || degree > 3) return BAD_DEGREE;
    if (sh.kappa < 2) return BAD_KNOTS;
    if (sh.U <= 0 || sh.M <= 0 || sh.d_s <= 0 || sh.r <= 0) return OK;
    if (!all_finite(u, sh.U * sh.M * sh.d_s)) return NONFINITE;
    try {
        switch (degree) {
            case 1: backward_needs<T, 2>(grad_P, u, S, P, grad_u, grad_S, sh, threads); break;
            case 2: backward_needs<T, 3>(grad_P, u, S, P, grad_u, grad_S, sh, threads); break;
            default: backward_needs<T, 4>(grad_P, u, S, P, grad_u, grad_S, sh, threads); break;
        }
    } catch (...) {
        return NO_MEMORY;
    }
    return OK;
}

}  // namespace

extern "C" {

// Bumped whenever a signature or status below changes; the loader refuses a library reporting another.
int lev_spline_abi_version() { return 2; }

// P (U, M, r) = prod_d phi. Returns 0 (OK), 1 (degree not 1-3), 2 (kappa < 2), 3 (u not finite; P untouched)
// or 4 (out of memory for scratch; P partly written).
int lev_spline_forward_f32(const float* u, const float* S, float* P, idx_t U, idx_t M, idx_t d_s, idx_t kappa, idx_t r,
                           int degree, int threads) {
    return forward_dispatch<float>(u, S, P, Shape{U, M, d_s, kappa, r}, degree, threads);
}

int lev_spline_forward_f64(const double* u, const double* S, double* P, idx_t U, idx_t M, idx_t d_s, idx_t kappa,
                           idx_t r, int degree, int threads) {
    return forward_dispatch<double>(u, S, P, Shape{U, M, d_s, kappa, r}, degree, threads);
}

// grad_u (U, M, d_s) is written (skipped if null); grad_S (M, d_s, kappa, r) is accumulated into (skipped if
// null). Same status codes as forward (3: nothing written).
int lev_spline_backward_f32(const float* grad_P, const float* u, const float* S, const float* P, float* grad_u,
                            float* grad_S, idx_t U, idx_t M, idx_t d_s, idx_t kappa, idx_t r, int degree, int threads) {
    return backward_dispatch<float>(grad_P, u, S, P, grad_u, grad_S, Shape{U, M, d_s, kappa, r}, degree, threads);
}

int lev_spline_backward_f64(const double* grad_P, const double* u, const double* S, const double* P, double* grad_u,
                            double* grad_S, idx_t U, idx_t M, idx_t d_s, idx_t kappa, idx_t r, int degree,
                            int threads) {
    return backward_dispatch<double>(grad_P, u, S, P, grad_u, grad_S, Shape{U, M, d_s, kappa, r}, degree, threads);
}

}  // extern "C"
