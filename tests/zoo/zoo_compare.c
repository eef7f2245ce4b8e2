/*
 * zoo_compare.c - the model zoo's accuracy metrics (docs/zoo.md).
 *
 *   zoo_compare REFDIR OUTDIR [--min-cos C] [--top1 MIN]
 *   zoo_compare --self-test REFDIR [--min-cos C] [--top1 MIN]
 *
 * REFDIR holds a reference output per check input (NNN.npy, e.g. PyTorch's
 * fp32 logits), OUTDIR the outputs under test with the same names.  The
 * metrics are ones a constant output cannot pass:
 *   - centered cosine: for each input i, the cosine between out_i - mean(out)
 *     and ref_i - mean(ref), the means taken over the check inputs.  What
 *     every input shares (a bias, a mean activation) cancels; what is left is
 *     the part of the output that depends on the input.  A constant output
 *     has none (cosine 0), an output of the wrong input points elsewhere.
 *     The minimum over the inputs must reach --min-cos;
 *   - with --top1, the output is a classifier's (rows of the last dimension
 *     are logits): the share of rows whose argmax agrees must reach MIN.
 * Any non-finite output fails.  The plain cosine and the relative error are
 * printed for information.  The last line reads
 *   zoo_compare: PASS|FAIL cos_min=... cos_mean=... top1=... (or -) cos=... relerr=...
 *
 * --self-test checks the metrics on REFDIR's own references: the references
 * themselves and the references plus noise (a tenth of the input-dependent
 * part's RMS) must pass; a constant output (the mean reference), the
 * references of the wrong inputs (rotated by one) and each reference's values
 * shuffled must fail.  Run on every model, it also proves that the model's
 * outputs depend enough on its input for the metrics to mean something.
 * Exit status: 0 pass, 1 fail, 2 usage or unreadable files.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/core/npy.h"

#define MAX_INPUTS 64

struct set {
  int n;
  size_t elems, last; /* values per output; size of the last dimension */
  double *v[MAX_INPUTS];
};

struct metrics {
  double cos_min, cos_mean, top1, cos, relerr;
  int nonfinite, pass;
};

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The NNN.npy names of dir, sorted. */
static int list_npy(const char *dir, char *names[MAX_INPUTS]) {
  DIR *d = opendir(dir);
  if (!d) return fprintf(stderr, "zoo_compare: %s: cannot open directory\n", dir), -1;
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) {
    size_t l = strlen(e->d_name);
    if (l < 5 || strcmp(e->d_name + l - 4, ".npy")) continue;
    if (n == MAX_INPUTS) {
      closedir(d);
      return fprintf(stderr, "zoo_compare: %s: more than %d .npy files\n", dir, MAX_INPUTS), -1;
    }
    names[n++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(names, (size_t)n, sizeof *names, cmp_str);
  return n;
}

static double *read_values(const char *dir, const char *name, size_t *elems, size_t *last) {
  char path[4096], msg[LOOM_MSG_MAX];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  struct loom_npy a;
  if (loom_npy_read(path, &a, msg) != LOOM_OK) return fprintf(stderr, "zoo_compare: %s\n", msg), NULL;
  size_t n = 1;
  for (int i = 0; i < a.rank; i++) n *= (size_t)a.dims[i];
  double *v = malloc((n ? n : 1) * sizeof *v);
  for (size_t i = 0; v && i < n; i++) {
    switch (a.dtype) {
    case LOOM_DT_F32: v[i] = ((const float *)a.data)[i]; break;
    case LOOM_DT_I8: v[i] = ((const int8_t *)a.data)[i]; break;
    case LOOM_DT_U8: v[i] = ((const uint8_t *)a.data)[i]; break;
    case LOOM_DT_I32: v[i] = ((const int32_t *)a.data)[i]; break;
    default:
      fprintf(stderr, "zoo_compare: %s: outputs must be float32, int8, uint8 or int32\n", path);
      free(v), loom_npy_free(&a);
      return NULL;
    }
  }
  *elems = n;
  *last = a.rank ? (size_t)a.dims[a.rank - 1] : 1;
  loom_npy_free(&a);
  return v;
}

static int read_set(const char *dir, char *names[], int n, struct set *s) {
  s->n = n;
  for (int i = 0; i < n; i++) {
    size_t elems, last;
    if (!(s->v[i] = read_values(dir, names[i], &elems, &last))) return -1;
    if (i && elems != s->elems)
      return fprintf(stderr, "zoo_compare: %s/%s: %zu values, %s has %zu\n", dir, names[i], elems,
                     names[0], s->elems), -1;
    s->elems = elems, s->last = last;
  }
  return 0;
}

static double cosine(const double *a, const double *b, size_t n) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < n; i++) ab += a[i] * b[i], aa += a[i] * a[i], bb += b[i] * b[i];
  return aa > 0 && bb > 0 ? ab / sqrt(aa * bb) : 0;
}

static size_t argmax(const double *v, size_t n) {
  size_t k = 0;
  for (size_t i = 1; i < n; i++)
    if (v[i] > v[k]) k = i;
  return k;
}

/* The input-dependent parts: each output minus the mean over the set. */
static double *centered(const struct set *s) {
  double *c = calloc((size_t)s->n * s->elems, sizeof *c);
  for (size_t j = 0; c && j < s->elems; j++) {
    double m = 0;
    for (int i = 0; i < s->n; i++) m += s->v[i][j];
    m /= s->n;
    for (int i = 0; i < s->n; i++) c[(size_t)i * s->elems + j] = s->v[i][j] - m;
  }
  return c;
}

static struct metrics measure(const struct set *ref, const struct set *out, double min_cos,
                              double min_top1) {
  struct metrics m = {.cos_min = 2, .top1 = -1};
  for (int i = 0; i < out->n; i++)
    for (size_t j = 0; j < out->elems; j++) m.nonfinite += !isfinite(out->v[i][j]);
  double *cr = centered(ref), *co = centered(out), err = 0, norm = 0;
  size_t rows = 0, agree = 0, last = ref->last ? ref->last : 1;
  for (int i = 0; i < ref->n; i++) {
    const double *r = ref->v[i], *o = out->v[i];
    double c = cosine(cr + (size_t)i * ref->elems, co + (size_t)i * ref->elems, ref->elems);
    if (m.nonfinite) c = 0;
    m.cos_min = c < m.cos_min ? c : m.cos_min;
    m.cos_mean += c / ref->n;
    m.cos += cosine(r, o, ref->elems) / ref->n;
    for (size_t j = 0; j < ref->elems; j++) err += (o[j] - r[j]) * (o[j] - r[j]), norm += r[j] * r[j];
    for (size_t k = 0; k + last <= ref->elems; k += last, rows++)
      agree += argmax(r + k, last) == argmax(o + k, last);
  }
  free(cr), free(co);
  m.relerr = norm > 0 ? sqrt(err / norm) : 0;
  if (min_top1 >= 0) m.top1 = rows ? (double)agree / rows : 0;
  m.pass = !m.nonfinite && m.cos_min >= min_cos && (min_top1 < 0 || m.top1 >= min_top1);
  return m;
}

static void print(const char *what, const struct metrics *m) {
  char top1[32] = "-";
  if (m->top1 >= 0) snprintf(top1, sizeof top1, "%.4f", m->top1);
  printf("%s: %s cos_min=%.4f cos_mean=%.4f top1=%s cos=%.4f relerr=%.4f%s\n", what,
         m->pass ? "PASS" : "FAIL", m->cos_min, m->cos_mean, top1, m->cos, m->relerr,
         m->nonfinite ? " (non-finite values)" : "");
}

/* A deterministic N(0,1) stream (xorshift + Box-Muller): no libc state. */
static double gauss(unsigned long long *s) {
  double u[2];
  for (int k = 0; k < 2; k++) {
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    u[k] = ((double)(*s >> 11) + 0.5) / 9007199254740992.0;
  }
  return sqrt(-2 * log(u[0])) * cos(6.283185307179586 * u[1]);
}

static int self_test(const struct set *ref, double min_cos, double min_top1) {
  enum { SAME, NOISY, CONSTANT, ROTATED, SHUFFLED, CASES };
  static const char *const names[CASES] = {"self-test identical", "self-test noisy (must pass)",
                                           "self-test constant (must fail)",
                                           "self-test wrong input (must fail)",
                                           "self-test shuffled values (must fail)"};
  struct set o = *ref;
  double *c = centered(ref), rms = 0;
  for (size_t j = 0; j < (size_t)ref->n * ref->elems; j++) rms += c[j] * c[j];
  rms = sqrt(rms / ((double)ref->n * ref->elems));
  free(c);
  int bad = 0;
  for (int k = 0; k < CASES; k++) {
    unsigned long long s = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < ref->n; i++) {
      o.v[i] = malloc(ref->elems * sizeof(double));
      for (size_t j = 0; j < ref->elems; j++) {
        double v = ref->v[i][j];
        if (k == NOISY) v += 0.1 * rms * gauss(&s);
        if (k == ROTATED) v = ref->v[(i + 1) % ref->n][j];
        if (k == CONSTANT) {
          v = 0;
          for (int t = 0; t < ref->n; t++) v += ref->v[t][j] / ref->n;
        }
        o.v[i][j] = v;
      }
      for (size_t j = ref->elems; k == SHUFFLED && j > 1; j--) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        size_t t = (size_t)(s % j);
        double tmp = o.v[i][j - 1];
        o.v[i][j - 1] = o.v[i][t], o.v[i][t] = tmp;
      }
    }
    struct metrics m = measure(ref, &o, min_cos, min_top1);
    print(names[k], &m);
    bad += m.pass != (k == SAME || k == NOISY);
    for (int i = 0; i < ref->n; i++) free(o.v[i]);
  }
  printf("zoo_compare: self-test %s\n", bad ? "FAIL" : "PASS");
  return bad ? 1 : 0;
}

int main(int argc, char **argv) {
  const char *dirs[2] = {0};
  int nd = 0, selftest = 0;
  double min_cos = 0.9, min_top1 = -1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--self-test")) selftest = 1;
    else if (!strcmp(argv[i], "--min-cos") && i + 1 < argc) min_cos = atof(argv[++i]);
    else if (!strcmp(argv[i], "--top1") && i + 1 < argc) min_top1 = atof(argv[++i]);
    else if (argv[i][0] != '-' && nd < 2) dirs[nd++] = argv[i];
    else return fprintf(stderr, "zoo_compare: unknown or incomplete option '%s'\n", argv[i]), 2;
  }
  if (nd != 2 - selftest) {
    fprintf(stderr, "usage: zoo_compare REFDIR OUTDIR [--min-cos C] [--top1 MIN]\n"
                    "       zoo_compare --self-test REFDIR [--min-cos C] [--top1 MIN]\n");
    return 2;
  }
  char *names[MAX_INPUTS];
  int n = list_npy(dirs[0], names);
  if (n < 2) {
    if (n >= 0) fprintf(stderr, "zoo_compare: %s: needs at least 2 outputs\n", dirs[0]);
    return 2;
  }
  struct set ref = {0}, out = {0};
  if (read_set(dirs[0], names, n, &ref)) return 2;
  if (selftest) return self_test(&ref, min_cos, min_top1);
  if (read_set(dirs[1], names, n, &out)) return printf("zoo_compare: FAIL (outputs missing)\n"), 1;
  if (out.elems != ref.elems)
    return printf("zoo_compare: FAIL %zu values per output, the reference has %zu\n", out.elems,
                  ref.elems), 1;
  struct metrics m = measure(&ref, &out, min_cos, min_top1);
  print("zoo_compare", &m);
  return m.pass ? 0 : 1;
}
