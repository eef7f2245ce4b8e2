/*
 * kernel_gemm.c - the float32 matrix product the heavy kernels share
 * (MatMul, Gemm, Conv through im2col, ConvTranspose, the RNNs, Einsum):
 * C = alpha * op(A) op(B) + beta * C.
 *
 * It is blocked the way BLAS libraries are (Goto's scheme): a KC x NC
 * panel of B is packed into NR-wide column strips that stay in L2, a
 * MC x KC block of A into MR-high row strips that stay in L1, and a
 * micro-kernel keeps an MR x NR tile of C in registers while it streams
 * both strips.  Packing also absorbs the transposes (and zero-pads the
 * edges), so the micro-kernel is one fixed-size loop nest the compiler
 * vectorizes.  On x86-64 the micro-kernel is also built for x86-64-v3
 * (AVX2) and -v4 (AVX-512) and picked at load time (LOOM_TARGET_CLONES,
 * core.h), as fsim's GEMM rows are; ISO C mode contracts no multiply-add into an FMA, so every variant
 * rounds the same way and results do not depend on the CPU.  Single-
 * threaded.
 */
#include <string.h>

#include "kernel_util.h"

#define MR 6
#define NR 16
#define KC 256
#define MC 72
#define NC 1024

#if defined(__GNUC__)
/* GCC/Clang vector extensions: eight floats, loaded without alignment.
 * The default build splits each into two SSE registers; the x86-64-v3
 * clone keeps the 6 x 16 tile in twelve AVX registers. */
typedef float v8 __attribute__((vector_size(32)));
typedef float v8u __attribute__((vector_size(32), aligned(4)));

/* acc = sum over k of a[k][0..MR) x b[k][0..NR); c[r][j] += alpha * acc
 * for the m x n valid corner. */
LOOM_TARGET_CLONES static void micro(int64_t kc, const float *restrict a, const float *restrict b,
                              float *restrict c, int64_t ldc, int64_t m, int64_t n, float alpha) {
  v8 acc[MR][2];
  memset(acc, 0, sizeof acc);
  for (int64_t k = 0; k < kc; k++) {
    v8 b0 = *(const v8u *)(b + k * NR), b1 = *(const v8u *)(b + k * NR + 8);
    for (int r = 0; r < MR; r++) {
      v8 av = {0};
      av += a[k * MR + r];
      acc[r][0] += av * b0;
      acc[r][1] += av * b1;
    }
  }
  float t[MR][NR];
  memcpy(t, acc, sizeof t);
  for (int64_t r = 0; r < m; r++)
    for (int64_t j = 0; j < n; j++) c[r * ldc + j] += alpha * t[r][j];
}
#else
static void micro(int64_t kc, const float *restrict a, const float *restrict b, float *restrict c,
                  int64_t ldc, int64_t m, int64_t n, float alpha) {
  float acc[MR][NR] = {{0}};
  for (int64_t k = 0; k < kc; k++)
    for (int r = 0; r < MR; r++)
      for (int j = 0; j < NR; j++) acc[r][j] += a[k * MR + r] * b[k * NR + j];
  for (int64_t r = 0; r < m; r++)
    for (int64_t j = 0; j < n; j++) c[r * ldc + j] += alpha * acc[r][j];
}
#endif

/* Element (i, k) of op(A). */
static float at(const float *a, int64_t ld, int trans, int64_t i, int64_t k) {
  return trans ? a[k * ld + i] : a[i * ld + k];
}

/* MR-high strips of op(A)[i0 .. i0+mc, k0 .. k0+kc). */
static void pack_a(float *dst, const float *a, int64_t lda, int trans, int64_t i0, int64_t mc,
                   int64_t k0, int64_t kc) {
  for (int64_t p = 0; p < mc; p += MR)
    for (int64_t k = 0; k < kc; k++)
      for (int r = 0; r < MR; r++)
        *dst++ = p + r < mc ? at(a, lda, trans, i0 + p + r, k0 + k) : 0.0f;
}

/* NR-wide strips of op(B)[k0 .. k0+kc, j0 .. j0+nc). */
static void pack_b(float *dst, const float *b, int64_t ldb, int trans, int64_t k0, int64_t kc,
                   int64_t j0, int64_t nc) {
  for (int64_t q = 0; q < nc; q += NR)
    for (int64_t k = 0; k < kc; k++) {
      if (!trans && q + NR <= nc) {
        memcpy(dst, b + (k0 + k) * ldb + j0 + q, NR * sizeof(float));
        dst += NR;
        continue;
      }
      for (int j = 0; j < NR; j++)
        *dst++ = q + j < nc ? (trans ? b[(j0 + q + j) * ldb + k0 + k] : b[(k0 + k) * ldb + j0 + q + j]) : 0.0f;
    }
}

/* x . y over n elements (x at stride xs) in eight interleaved partial sums,
 * so the loop vectorizes without reassociating a single sum. */
static float dot(const float *x, int64_t xs, const float *y, int64_t n) {
  float part[8] = {0};
  int64_t i = 0;
  if (xs == 1)
    for (; i + 8 <= n; i += 8)
      for (int j = 0; j < 8; j++) part[j] += x[i + j] * y[i + j];
  for (; i < n; i++) part[i & 7] += x[i * xs] * y[i];
  return ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
}

/* Fewer rows than a micro-tile (a batch-1 RNN step, one sample through a
 * Gemm) do not repay packing: each row streams B once, as axpy updates
 * along B's rows or as dot products with B's transposed rows. */
static void few_rows(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda, int trans_a,
                     const float *b, int64_t ldb, int trans_b, float *y, int64_t ldc) {
  for (int64_t i = 0; i < m; i++) {
    float *yr = y + i * ldc;
    const float *ar = trans_a ? a + i : a + i * lda;
    int64_t as = trans_a ? lda : 1;
    if (trans_b) {
      for (int64_t j = 0; j < n; j++) yr[j] += alpha * dot(ar, as, b + j * ldb, k);
      continue;
    }
    for (int64_t p = 0; p < k; p++) {
      float av = alpha * ar[p * as];
      const float *br = b + p * ldb;
      for (int64_t j = 0; j < n; j++) yr[j] += av * br[j];
    }
  }
}

loom_status loom_k_sgemm(const struct loom_kcall *c, int64_t m, int64_t n, int64_t k, float alpha,
                         const float *a, int64_t lda, int trans_a, const float *b, int64_t ldb,
                         int trans_b, float beta, float *y, int64_t ldc) {
  for (int64_t i = 0; i < m; i++) {
    float *row = y + i * ldc;
    if (beta == 0) memset(row, 0, (size_t)n * sizeof(float));
    else if (beta != 1)
      for (int64_t j = 0; j < n; j++) row[j] *= beta;
  }
  if (k == 0 || alpha == 0 || m == 0 || n == 0) return LOOM_OK;
  if (m < MR) {
    few_rows(m, n, k, alpha, a, lda, trans_a, b, ldb, trans_b, y, ldc);
    return LOOM_OK;
  }
  float *ap = loom_k_alloc(c, (MC + MR) * KC, sizeof(float));
  float *bp = ap ? loom_k_alloc(c, (NC + NR) * KC, sizeof(float)) : NULL;
  if (!bp) return free(ap), LOOM_E_NOMEM;
  for (int64_t jc = 0; jc < n; jc += NC) {
    int64_t nc = n - jc < NC ? n - jc : NC;
    for (int64_t pc = 0; pc < k; pc += KC) {
      int64_t kc = k - pc < KC ? k - pc : KC;
      pack_b(bp, b, ldb, trans_b, pc, kc, jc, nc);
      for (int64_t ic = 0; ic < m; ic += MC) {
        int64_t mc = m - ic < MC ? m - ic : MC;
        pack_a(ap, a, lda, trans_a, ic, mc, pc, kc);
        for (int64_t jr = 0; jr < nc; jr += NR)
          for (int64_t ir = 0; ir < mc; ir += MR)
            micro(kc, ap + ir * kc, bp + jr * kc, y + (ic + ir) * ldc + jc + jr, ldc,
                  mc - ir < MR ? mc - ir : MR, nc - jr < NR ? nc - jr : NR, alpha);
      }
    }
  }
  free(ap);
  free(bp);
  return LOOM_OK;
}
