/*
 * gemm_ref.c - reference data for tests/asm/gemm64*.s.
 *
 *   gemm_ref BLOCK SEED OUTDIR
 *
 * writes OUTDIR/a.npy, OUTDIR/b.npy (random int8 inputs in the layout the
 * programs load) and OUTDIR/c_ref.npy (the expected output), for a core
 * of BLOCK x BLOCK (8 for the tiny config, 16 for default):
 *
 *   A  int8 [64, 64]                  row-major: A[m][k]
 *   B  int8 [64/BLOCK, 64/BLOCK, BLOCK, BLOCK]
 *                                     B[nb][kb][o][k] = W[kb*BLOCK + k][nb*BLOCK + o]
 *                                     (one WGT row per (nb, kb) block, [o][k])
 *   C  int8 [64, 64]                  C = requant(A x W), row-major
 *
 * requant is the ALU REQUANT of docs/isa.md with the QCFG the programs set:
 * multiplier 1518500250, shift 41, zero point 3, clamp [-128, 127], ties to
 * even.  The matmul is plain C, so the test checks fsim against arithmetic,
 * not against itself.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/core/npy.h"

#define N 64
#define REQ_MULT INT64_C(1518500250)
#define REQ_SHIFT 41
#define REQ_ZP 3

static uint64_t next_random(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* docs/isa.md, ALU REQUANT with round_even = 1. */
static int8_t requant(int32_t acc) {
  int64_t p = (int64_t)acc * REQ_MULT, half = INT64_C(1) << (REQ_SHIFT - 1);
  int64_t r = (p + half) >> REQ_SHIFT;
  if ((p & ((half << 1) - 1)) == half && (r & 1)) r -= 1;
  r += REQ_ZP;
  return (int8_t)(r < -128 ? -128 : r > 127 ? 127 : r);
}

static int save(const char *dir, const char *name, int rank, const int64_t *dims,
                const int8_t *data) {
  char path[1024], msg[LOOM_MSG_MAX];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  if (loom_npy_write(path, LOOM_DT_I8, rank, dims, data, msg) == LOOM_OK) return 0;
  fprintf(stderr, "gemm_ref: %s\n", msg);
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: gemm_ref BLOCK SEED OUTDIR\n");
    return 1;
  }
  int bs = atoi(argv[1]);
  uint64_t seed = strtoull(argv[2], NULL, 0) * 2654435761u + 88172645463325252u;
  if (bs <= 0 || N % bs) {
    fprintf(stderr, "gemm_ref: BLOCK must divide %d\n", N);
    return 1;
  }
  static int8_t a[N * N], w[N * N], bt[N * N], c[N * N];
  for (int i = 0; i < N * N; i++) a[i] = (int8_t)(next_random(&seed) >> 56);
  for (int i = 0; i < N * N; i++) w[i] = (int8_t)(next_random(&seed) >> 56);
  int nbk = N / bs;
  for (int nb = 0; nb < nbk; nb++)
    for (int kb = 0; kb < nbk; kb++)
      for (int o = 0; o < bs; o++)
        for (int k = 0; k < bs; k++)
          bt[((nb * nbk + kb) * bs + o) * bs + k] = w[(kb * bs + k) * N + nb * bs + o];
  for (int m = 0; m < N; m++)
    for (int n = 0; n < N; n++) {
      int32_t acc = 0;
      for (int k = 0; k < N; k++) acc += a[m * N + k] * w[k * N + n];
      c[m * N + n] = requant(acc);
    }
  const int64_t dims2[2] = {N, N}, dims4[4] = {nbk, nbk, bs, bs};
  return save(argv[3], "a.npy", 2, dims2, a) || save(argv[3], "b.npy", 4, dims4, bt) ||
         save(argv[3], "c_ref.npy", 2, dims2, c);
}
