/*
 * conv_f32.c - the float convolution of the reference interpreter, fast.
 *
 * Calibration runs the float graph on every sample, and ResNet-18's convs
 * are 1.8 G multiply-adds an image, so the float conv decides how long
 * `loom compile --calib` takes.  This kernel computes exactly what the
 * plain loop in ir_eval_ref.c computes: every output starts from its bias
 * and adds w * x for k = (ci, kh, kw) in ascending order, one rounding per
 * multiply and per add (C11 mode: no FMA contraction).  Only the order in
 * which outputs are visited changes, so the results are the same floats;
 * the one difference is that a padded tap adds w * 0 instead of being
 * skipped, which can only turn a -0 result into +0 (and would turn an
 * infinite weight's padded tap into NaN; weights are finite).
 *
 * Form: per group, Y[m][p] = b[m] + sum_k W[m][k] * X[k][p] with X the
 * im2col matrix (K = cg*kh*kw rows, P = oh*ow columns).  X is packed a
 * panel of CONV_PB columns and CONV_KC rows at a time (zeros in padding and
 * past P), and a micro-kernel keeps MR rows x CONV_PB columns of Y in
 * registers while it walks k; between row blocks Y holds the partial sums.
 * The micro-kernel is compiled for AVX-512, AVX2 and baseline x86-64 and
 * chosen at run time.  Panels are split between threads (one per core, at
 * most CONV_MAX_THREADS); each output belongs to one thread, so threading
 * does not change the results either.
 */
#include "sw_compiler/compiler.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CONV_PB 32           /* output columns per panel */
#define CONV_KC 256          /* im2col rows packed at a time */
#define CONV_MAX_THREADS 8
#define CONV_MAX_MR 8     /* rows of the widest micro-kernel */
#define CONV_MIN_THREAD_MACS (1 << 20) /* smaller convs run on one thread */

/* Y rows [m0, m0+MR) x panel columns: acc = Y (or bias), acc += W[m][k] * Xp[k].
 * VT is the target's native vector (a wider generic vector would live in
 * memory); the fully unrolled loops let every accumulator stay in a
 * register. */
#define MICRO_KERNEL(NAME, MR, VT, ATTR)                                                     \
  ATTR static void NAME(const float *w, int64_t ldw, const float *xp, int64_t kc,            \
                        float *acc_io) {                                                     \
    enum { NV = CONV_PB * sizeof(float) / sizeof(VT) };                                      \
    VT acc[MR][NV];                                                                          \
    _Pragma("GCC unroll 16") for (int r = 0; r < MR; r++)                                    \
      _Pragma("GCC unroll 16") for (int v = 0; v < NV; v++)                                  \
        memcpy(&acc[r][v], acc_io + r * CONV_PB + v * (int)(sizeof(VT) / 4), sizeof(VT));   \
    for (int64_t k = 0; k < kc; k++) {                                                       \
      VT x[NV];                                                                              \
      memcpy(x, xp + k * CONV_PB, sizeof x);                                                 \
      _Pragma("GCC unroll 16") for (int r = 0; r < MR; r++) {                                \
        float wr = w[r * ldw + k];                                                           \
        _Pragma("GCC unroll 16") for (int v = 0; v < NV; v++) acc[r][v] += wr * x[v];        \
      }                                                                                      \
    }                                                                                        \
    _Pragma("GCC unroll 16") for (int r = 0; r < MR; r++)                                    \
      _Pragma("GCC unroll 16") for (int v = 0; v < NV; v++)                                  \
        memcpy(acc_io + r * CONV_PB + v * (int)(sizeof(VT) / 4), &acc[r][v], sizeof(VT));   \
  }

typedef float v4f __attribute__((vector_size(16)));
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CONV_X86 1
typedef float v8f __attribute__((vector_size(32)));
typedef float v16f __attribute__((vector_size(64)));
MICRO_KERNEL(mk8_avx512, 8, v16f, __attribute__((target("avx512f"))))
MICRO_KERNEL(mk1_avx512, 1, v16f, __attribute__((target("avx512f"))))
MICRO_KERNEL(mk2_avx2, 2, v8f, __attribute__((target("avx2"))))
MICRO_KERNEL(mk1_avx2, 1, v8f, __attribute__((target("avx2"))))
#endif
MICRO_KERNEL(mk1_base, 1, v4f, )

typedef void micro_fn(const float *, int64_t, const float *, int64_t, float *);

struct kernels {
  micro_fn *big, *one; /* `mr` rows at a time, and one row for the rest */
  int mr;
};

static struct kernels pick_kernels(void) {
#ifdef CONV_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return (struct kernels){mk8_avx512, mk1_avx512, 8};
  if (__builtin_cpu_supports("avx2")) return (struct kernels){mk2_avx2, mk1_avx2, 2};
#endif
  return (struct kernels){mk1_base, mk1_base, 1};
}

/* dst[i] = src[start + i*stride] for i < n, 0 where that is outside [0, w). */
static void copy_stretch(const float *src, int64_t w, int64_t start, int64_t stride, float *dst,
                         int64_t n) {
  int64_t lo = start >= 0 ? 0 : (-start + stride - 1) / stride;
  int64_t hi = w - start <= 0 ? 0 : (w - start + stride - 1) / stride;
  if (lo > n) lo = n;
  if (hi > n) hi = n;
  if (hi < lo) hi = lo;
  for (int64_t i = 0; i < lo; i++) dst[i] = 0.0f;
  if (stride == 1) memcpy(dst + lo, src + start + lo, (size_t)(hi - lo) * sizeof *dst);
  else for (int64_t i = lo; i < hi; i++) dst[i] = src[start + i * stride];
  for (int64_t i = hi; i < n; i++) dst[i] = 0.0f;
}

/* Packs im2col rows [k0, k0+kc) x columns [p0, p0+CONV_PB) of group input
 * x; columns walk output positions (oh, ow) row-major, zero past the end.
 * Each stretch of one output row reads input row ih at stride sw. */
static void pack_panel(const struct conv_geo *g, const float *x, int64_t k0, int64_t kc,
                       int64_t p0, float *xp) {
  int64_t np = g->oh * g->ow, khw = g->kh * g->kw;
  int64_t cols = np - p0 < CONV_PB ? np - p0 : CONV_PB;
  for (int64_t k = k0; k < k0 + kc; k++) {
    int64_t ci = k / khw, kh = k % khw / g->kw, kw = k % g->kw, off = kw * g->dw - g->pl;
    const float *xc = x + ci * g->h * g->w;
    float *row = xp + (k - k0) * CONV_PB;
    for (int64_t j = 0; j < cols;) {
      int64_t p = p0 + j, oh = p / g->ow, ow0 = p % g->ow;
      int64_t run = g->ow - ow0 < cols - j ? g->ow - ow0 : cols - j;
      int64_t ih = oh * g->sh - g->pt + kh * g->dh;
      const float *xr = xc + ih * g->w;
      if (ih < 0 || ih >= g->h) memset(row + j, 0, (size_t)run * sizeof *row);
      else copy_stretch(xr, g->w, ow0 * g->sw + off, g->sw, row + j, run);
      j += run;
    }
    for (int64_t j = cols; j < CONV_PB; j++) row[j] = 0.0f;
  }
}

struct conv_job {
  const struct conv_geo *g;
  const float *x, *w, *b;
  float *y;
  struct kernels kern;
  int64_t panel_lo, panel_hi; /* this thread's panels, over all images and groups */
};

/* One panel of one (image, group): all its output rows, k-block by k-block. */
static void run_panel(const struct conv_job *j, int64_t n, int64_t grp, int64_t p0, float *xp,
                      float *acc) {
  const struct conv_geo *g = j->g;
  int64_t mg = g->m / g->group, kk = g->cg * g->kh * g->kw, np = g->oh * g->ow;
  int64_t cols = np - p0 < CONV_PB ? np - p0 : CONV_PB;
  const float *x = j->x + (n * g->c + grp * g->cg) * g->h * g->w;
  for (int64_t k0 = 0; k0 < kk; k0 += CONV_KC) {
    int64_t kc = kk - k0 < CONV_KC ? kk - k0 : CONV_KC;
    pack_panel(g, x, k0, kc, p0, xp);
    for (int64_t m = 0; m < mg;) {
      int mr = mg - m >= j->kern.mr ? j->kern.mr : 1;
      int64_t mo = grp * mg + m;
      for (int r = 0; r < mr; r++) {
        float *yr = j->y + ((n * g->m + mo + r) * np + p0), *ar = acc + r * CONV_PB;
        if (k0) memcpy(ar, yr, (size_t)cols * sizeof *ar);
        else for (int64_t c = 0; c < cols; c++) ar[c] = j->b ? j->b[mo + r] : 0.0f;
      }
      (mr > 1 ? j->kern.big : j->kern.one)(j->w + mo * kk + k0, kk, xp, kc, acc);
      for (int r = 0; r < mr; r++)
        memcpy(j->y + ((n * g->m + mo + r) * np + p0), acc + r * CONV_PB, (size_t)cols * sizeof *acc);
      m += mr;
    }
  }
}

static void *run_job(void *arg) {
  const struct conv_job *j = arg;
  const struct conv_geo *g = j->g;
  int64_t per = (g->oh * g->ow + CONV_PB - 1) / CONV_PB;
  float *xp = ir_xmalloc((size_t)CONV_KC * CONV_PB * sizeof *xp);
  float *acc = ir_xmalloc((size_t)CONV_MAX_MR * CONV_PB * sizeof *acc);
  for (int64_t q = j->panel_lo; q < j->panel_hi; q++) {
    int64_t ng = q / per; /* image * group */
    run_panel(j, ng / g->group, ng % g->group, q % per * CONV_PB, xp, acc);
  }
  free(xp);
  free(acc);
  return NULL;
}

static int thread_count(const struct conv_geo *g, int64_t panels) {
  int64_t macs = g->n * g->m * g->cg * g->kh * g->kw * g->oh * g->ow;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  int64_t t = cpus < 1 ? 1 : cpus > CONV_MAX_THREADS ? CONV_MAX_THREADS : cpus;
  if (macs < CONV_MIN_THREAD_MACS) t = 1;
  return (int)(t < panels ? t : panels > 0 ? panels : 1);
}

void conv_f32(const struct conv_geo *g, const float *x, const float *w, const float *b, float *y) {
  int64_t panels = g->n * g->group * ((g->oh * g->ow + CONV_PB - 1) / CONV_PB);
  int nt = thread_count(g, panels);
  struct conv_job jobs[CONV_MAX_THREADS];
  pthread_t tid[CONV_MAX_THREADS];
  int started[CONV_MAX_THREADS] = {0};
  struct kernels kern = pick_kernels();
  for (int t = 0; t < nt; t++)
    jobs[t] = (struct conv_job){g, x, w, b, y, kern, panels * t / nt, panels * (t + 1) / nt};
  for (int t = 1; t < nt; t++) started[t] = !pthread_create(&tid[t], NULL, run_job, &jobs[t]);
  run_job(&jobs[0]);
  /* a thread that could not start: its panels run here */
  for (int t = 1; t < nt; t++) started[t] ? (void)pthread_join(tid[t], NULL) : (void)run_job(&jobs[t]);
}
