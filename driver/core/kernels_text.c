/*
 * kernels_text.c - TfIdfVectorizer over integer token ids.
 *
 * Each row of tokens is scanned for every n-gram length in [min, max] and
 * every skip in [0, max_skip_count] (an n-gram of skip s takes every
 * (s+1)-th token; unigrams are counted once, whatever the skip); an n-gram
 * found in the pool adds one to its output slot (ngram_indexes), then the
 * mode applies: TF keeps counts, IDF turns each non-zero count into its
 * weight, TFIDF multiplies counts by weights.  The pool lists the n-grams
 * of each length in turn, ngram_counts[i] being where the (i+1)-grams
 * start.
 *
 * String pools and string tensors (pool_strings, and StringNormalizer
 * altogether) are not supported: Loom has no string dtype.
 */
#include <string.h>

#include "kernel_util.h"

struct pool {
  const int64_t *ids, *counts, *index;
  int n_ids, n_counts, n_index;
};

/* The pool slot of the n-gram at tokens[start + k*gap], or -1. */
static int64_t lookup(const struct pool *p, const struct loom_kt *x, int64_t row, int64_t start, int64_t gap, int64_t n) {
  if (n > p->n_counts) return -1;
  int64_t lo = p->counts[n - 1], hi = n < p->n_counts ? p->counts[n] : p->n_ids, number = 0;
  for (int64_t g = 0; g < n - 1; g++) /* n-grams numbered before this length */
    number += ((g + 1 < p->n_counts ? p->counts[g + 1] : p->n_ids) - p->counts[g]) / (g + 1);
  for (int64_t at = lo; at + n <= hi; at += n, number++) {
    int64_t k = 0;
    while (k < n && p->ids[at + k] == loom_kt_get_i64(x, row + start + k * gap)) k++;
    if (k == n) return number < p->n_index ? p->index[number] : -1;
  }
  return -1;
}

static loom_status k_tfidf(const struct loom_kcall *c) {
  loom_status st = loom_k_arity(c, 1, 1, 1, 1);
  const struct loom_kt *x = &c->in[0];
  struct loom_kt *y = &c->out[0];
  struct pool p;
  static const char *const modes[] = {"TF", "IDF", "TFIDF", NULL};
  int mode = 0;
  if (!st) st = loom_k_dtype(c, x, "input", DTM_INDEX);
  if (!st) st = loom_k_rank(c, x, "input", 1, 2);
  if (!st) st = loom_k_dtype(c, y, "output", DTM(LOOM_DT_F32));
  if (!st) st = loom_k_choice(c, "mode", "TF", modes, &mode);
  if (!st && loom_kattr_find(c, "pool_strings")) st = KFAIL(c, LOOM_E_UNSUPPORTED, "pool_strings: Loom has no string tensors");
  if (st) return st;
  p.n_ids = loom_kattr_ints(c, "pool_int64s", &p.ids);
  p.n_counts = loom_kattr_ints(c, "ngram_counts", &p.counts);
  p.n_index = loom_kattr_ints(c, "ngram_indexes", &p.index);
  const float *wts = NULL;
  int n_w = loom_kattr_floats(c, "weights", &wts);
  int64_t lo = loom_kattr_int(c, "min_gram_length", 1), hi = loom_kattr_int(c, "max_gram_length", 1);
  int64_t skips = loom_kattr_int(c, "max_skip_count", 0), width = 0;
  if (p.n_ids < 0 || p.n_counts < 1 || p.n_index < 1 || lo < 1 || hi < lo || skips < 0 || (n_w >= 0 && n_w != p.n_index))
    return KFAIL(c, LOOM_E_INVALID, "bad n-gram attributes");
  for (int i = 0; i < p.n_counts; i++)
    if (p.counts[i] < 0 || p.counts[i] > p.n_ids) return KFAIL(c, LOOM_E_INVALID, "ngram_counts is out of range");
  for (int i = 0; i < p.n_index; i++) width = p.index[i] + 1 > width ? p.index[i] + 1 : width;
  int64_t rows = x->rank == 2 ? x->dims[0] : 1, len = x->dims[x->rank - 1], dims[2] = {rows, width};
  if ((st = loom_k_out_shape(c, y, x->rank, x->rank == 2 ? dims : dims + 1))) return st;
  float *out = y->data;
  memset(out, 0, (size_t)(rows * width) * sizeof(float));
  for (int64_t r = 0; r < rows; r++)
    for (int64_t n = lo; n <= hi; n++)
      for (int64_t s = 0; s <= (n == 1 ? 0 : skips); s++)
        for (int64_t start = 0; start + (n - 1) * (s + 1) < len; start++) {
          int64_t slot = lookup(&p, x, r * len, start, s + 1, n);
          if (slot >= 0 && slot < width) out[r * width + slot] += 1;
        }
  for (int64_t i = 0; mode && i < rows * width; i++) {
    if (!out[i]) continue;
    int64_t k = 0; /* the pool n-gram whose slot this is, for its weight */
    while (k < p.n_index && p.index[k] != i % width) k++;
    float w = wts && k < p.n_index ? wts[k] : 1;
    out[i] = mode == 1 ? w : out[i] * w;
  }
  return LOOM_OK;
}

const struct loom_kernel loom_kernels_text[] = {
    {"TfIdfVectorizer", k_tfidf, 0, NULL},
    {NULL, NULL, 0, NULL},
};
