/*
 * calib.c - calibration: run the float graph on sample inputs and record
 * the range of every float tensor.
 *
 * Post-training quantization needs, for each activation, the interval its
 * values fall in on typical inputs; pass_quantize.c turns the intervals into
 * int8 scales and zero points.  The samples are NumPy files: `path` is one
 * .npy or a directory whose *.npy files are read in name order.  An array
 * whose shape equals the model input's is one sample; one whose leading
 * dimension is a multiple of the input's (and the rest equal) is a batch
 * that is split into samples, so a test set saved as [360,1,8,8] calibrates
 * a [1,1,8,8] model directly.
 *
 * The graph runs node by node on the reference interpreter (ir_eval_node),
 * so every intermediate is visible, and each buffer is freed after its last
 * use: ResNet-18 needs a few of its activations at a time, not all of them.
 * Samples run a few at a time, one thread each (one per core, the float
 * convolutions inside split again, conv_f32.c); each records into its own
 * struct sample_rec, and the records are merged in sample order exactly as
 * a sequential run would have accumulated them (the same min / max, the
 * same subsample, the same channel sums added in the same order), so the
 * ranges do not depend on the thread count.
 * Two ranges are kept per tensor: the observed min / max over all samples
 * (non-finite values skipped: they would make every scale infinite), and a
 * clipping range that minimizes the mean squared int8 quantization error
 * on a subsample of the values (every k-th value of each sample, about
 * 4096 per sample), or, when asked for instead, the (100 - p)th and pth
 * percentiles of that subsample (`loom compile --calib-range
 * percentile=P`: the outliers of attention and LayerNorm).  Clipping a long
 * tail trades a few saturated values for a finer step on all others; for
 * ReLU outputs of ResNet-18 it roughly halves the error
 * (docs/quantization.md).  pass_quantize.c decides which range each tensor
 * uses.
 *
 * A model with several inputs (token ids and an attention mask, two
 * images) reads each input's samples from PATH/NAME/ (a directory of .npy
 * files) or PATH/NAME.npy, NAME the input's name; calibration sample k is
 * the k-th sample of every input, so the inputs must have as many.  Those
 * samples are all loaded at once (calibration sets are small); a single
 * input streams its files.
 */
#include "sw_compiler/compiler.h"

#include <dirent.h>
#include <pthread.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver/core/npy.h"

#define CALIB_MAX_FILES 100000
#define CALIB_SAMPLE_VALUES 4096 /* values kept per tensor and sample */
#define CALIB_MIN_CLIP 0.2f      /* the search never clips below 20% of the range */
#define CALIB_CLIP_STEP 0.02f
#define CALIB_MAX_THREADS 8 /* samples run at once (one thread each, at most one per core) */

/* The samples of one file, checked against the model input. */
struct sample_file {
  struct loom_npy npy;
  int64_t count;        /* samples in the file */
  size_t sample_bytes;  /* bytes of one sample */
};

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int has_npy_suffix(const char *s) {
  size_t n = strlen(s);
  return n > 4 && !strcmp(s + n - 4, ".npy");
}

/* The .npy files of a directory, sorted, or `path` itself. */
static char **list_files(const char *path, int *n, struct ir_error *err) {
  struct stat st;
  *n = 0;
  if (stat(path, &st)) return ir_errorf(err, "%s: cannot read the calibration data", path), NULL;
  if (!S_ISDIR(st.st_mode)) {
    char **one = ir_xmalloc(sizeof *one);
    one[0] = ir_xstrdup(path);
    *n = 1;
    return one;
  }
  DIR *d = opendir(path);
  if (!d) return ir_errorf(err, "%s: cannot open the calibration directory", path), NULL;
  char **names = NULL;
  int cap = 0;
  for (struct dirent *e; (e = readdir(d)) && *n < CALIB_MAX_FILES;) {
    if (!has_npy_suffix(e->d_name)) continue;
    if (*n == cap) names = ir_xrealloc(names, (size_t)(cap = cap ? 2 * cap : 64) * sizeof *names);
    size_t len = strlen(path) + strlen(e->d_name) + 2;
    names[*n] = ir_xmalloc(len);
    snprintf(names[(*n)++], len, "%s/%s", path, e->d_name);
  }
  closedir(d);
  if (!*n) {
    free(names);
    return ir_errorf(err, "%s: no .npy files in the calibration directory", path), NULL;
  }
  qsort(names, (size_t)*n, sizeof *names, cmp_str);
  return names;
}

static void free_files(char **names, int n) {
  for (int i = 0; i < n; i++) free(names[i]);
  free(names);
}

/* Reads a file and checks it holds whole samples of input tensor x. */
static int read_samples(const char *file, const struct ir_tensor *x, struct sample_file *sf,
                        struct ir_error *err) {
  char msg[LOOM_MSG_MAX];
  if (loom_npy_read(file, &sf->npy, msg) != LOOM_OK) return ir_errorf(err, "%s", msg), -1;
  const struct loom_npy *a = &sf->npy;
  int ok = a->dtype == ir_dtype_to_loom(x->dtype) && a->rank == x->rank && x->rank > 0;
  for (int i = 1; ok && i < x->rank; i++) ok = a->dims[i] == x->dims[i];
  ok = ok && x->dims[0] > 0 && a->dims[0] > 0 && a->dims[0] % x->dims[0] == 0;
  if (!ok) {
    loom_npy_free(&sf->npy);
    return ir_errorf(err, "%s: calibration data must be %s of the input's shape (or a batch of it) for input '%s'",
                     file, loom_dtype_name(ir_dtype_to_loom(x->dtype)), x->name), -1;
  }
  sf->count = a->dims[0] / x->dims[0];
  sf->sample_bytes = (size_t)ir_tensor_bytes(x);
  return 0;
}

/* Keeps every k-th value of a sample (k spreading CALIB_SAMPLE_VALUES over
 * it): a deterministic, position-independent subsample for the MSE search. */
static void keep_sample(struct calib_range *r, const float *v, int64_t n) {
  int64_t step = n > CALIB_SAMPLE_VALUES ? n / CALIB_SAMPLE_VALUES : 1, want = (n + step - 1) / step;
  if (r->n_sample + want > r->cap_sample) {
    while (r->n_sample + want > r->cap_sample) r->cap_sample = r->cap_sample ? 2 * r->cap_sample : 4096;
    r->sample = ir_xrealloc(r->sample, (size_t)r->cap_sample * sizeof *r->sample);
  }
  for (int64_t i = 0; i < n; i += step)
    if (isfinite(v[i])) r->sample[r->n_sample++] = v[i];
}

static void widen(struct calib_range *r, const float *v, int64_t n) {
  float lo = r->lo, hi = r->hi; /* locals: r may alias nothing, but the compiler cannot know */
  int seen = r->seen;
  for (int64_t i = 0; i < n; i++) {
    if (!isfinite(v[i])) continue;
    if (!seen || v[i] < lo) lo = v[i];
    if (!seen || v[i] > hi) hi = v[i];
    seen = 1;
  }
  r->lo = lo, r->hi = hi, r->seen = seen;
  keep_sample(r, v, n);
}

/* ---- the clipping range ---- */

/* Mean squared error of int8 quantization over [lo, hi] on the sample. */
static double quant_mse(const struct calib_range *r, float lo, float hi) {
  float scale;
  int32_t zp;
  quant_choose_params(lo, hi, &scale, &zp);
  double e = 0;
  for (int i = 0; i < r->n_sample; i++) {
    double v = r->sample[i], d = v - scale * (double)(quant_value(v, scale, zp) - zp);
    e += d * d;
  }
  return e;
}

/* Best factor a (1 down to CALIB_MIN_CLIP) for one end of the range,
 * the other end fixed. */
static float best_factor(const struct calib_range *r, int upper, float other) {
  float best = 1.0f;
  double best_e = INFINITY;
  for (float a = 1.0f; a >= CALIB_MIN_CLIP - 1e-6f; a -= CALIB_CLIP_STEP) {
    double e = upper ? quant_mse(r, other, r->hi * a) : quant_mse(r, r->lo * a, other);
    if (e < best_e) best_e = e, best = a;
  }
  return best;
}

/* The range minimizing the quantization error on the sample: each end
 * searched in turn (twice), starting from the observed range. */
static void choose_clip(struct calib_range *r) {
  r->clip_lo = r->lo, r->clip_hi = r->hi;
  if (!r->seen || !r->n_sample) return;
  for (int round = 0; round < 2; round++) {
    if (r->hi > 0) r->clip_hi = r->hi * best_factor(r, 1, r->clip_lo);
    if (r->lo < 0) r->clip_lo = r->lo * best_factor(r, 0, r->clip_hi);
  }
}

void calib_choose_clip(struct calib_range *ranges, int n) {
  for (int t = 0; t < n; t++) choose_clip(&ranges[t]);
}

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

/* The pth percentile of a sorted array (linear between neighbours). */
static float percentile_of(const float *v, int n, double p) {
  double at = p / 100.0 * (n - 1);
  int i = (int)at;
  return i + 1 < n ? (float)(v[i] + (at - i) * (v[i + 1] - v[i])) : v[n - 1];
}

int calib_choose_percentile(struct calib_range *ranges, int n, double p, struct ir_error *err) {
  if (!(p > 50.0 && p <= 100.0))
    return ir_errorf(err, "calibration percentile %g: expected a value above 50 and at most 100", p), -1;
  float *v = NULL;
  int cap = 0;
  for (int t = 0; t < n; t++) {
    struct calib_range *r = &ranges[t];
    r->clip_lo = r->lo, r->clip_hi = r->hi;
    if (!r->seen || r->n_sample < 2) continue;
    if (r->n_sample > cap) v = ir_xrealloc(v, (size_t)(cap = r->n_sample) * sizeof *v);
    memcpy(v, r->sample, (size_t)r->n_sample * sizeof *v);
    qsort(v, (size_t)r->n_sample, sizeof *v, cmp_float);
    float lo = percentile_of(v, r->n_sample, 100.0 - p), hi = percentile_of(v, r->n_sample, p);
    r->clip_lo = lo > r->lo ? lo : r->lo;
    r->clip_hi = hi < r->hi ? hi : r->hi;
  }
  free(v);
  return 0;
}

void calib_ranges_free(struct calib_range *ranges, int n) {
  for (int i = 0; ranges && i < n; i++) {
    free(ranges[i].sample);
    free(ranges[i].ch_sum);
    free(ranges[i].ch_lo);
    free(ranges[i].ch_hi);
  }
}

double calib_channel_mean(const struct calib_range *r, int c) {
  return r->ch_sum && c < r->channels && r->ch_count ? r->ch_sum[c] / (double)r->ch_count : 0.0;
}

/* Sums per channel (axis 1): the means pass_quantize.c corrects biases with.
 * The sum of each (outer index, channel) goes to ch_sum[c], or, when `part`
 * is set, to part[o * ch + c]: merge_sample() adds those into the total
 * later, in the same order, so a sample run on another thread sums exactly
 * as a sequential run does. */
static void channel_sums(struct calib_range *r, const struct ir_tensor *x, const float *v,
                         double *part) {
  if (x->rank < 2) return;
  int64_t outer = x->dims[0], ch = x->dims[1], inner = outer > 0 && ch > 0 ? ir_tensor_numel(x) / (outer * ch) : 0;
  if (!r->ch_sum) {
    r->ch_sum = ir_xcalloc((size_t)ch + 1, sizeof *r->ch_sum);
    r->ch_lo = ir_xcalloc((size_t)ch + 1, sizeof *r->ch_lo);
    r->ch_hi = ir_xcalloc((size_t)ch + 1, sizeof *r->ch_hi);
    r->channels = (int)ch;
  }
  for (int64_t o = 0; o < outer; o++)
    for (int64_t c = 0; c < ch; c++) {
      double s = 0;
      float lo = r->ch_lo[c], hi = r->ch_hi[c];
      for (int64_t i = 0; i < inner; i++) {
        float x = v[(o * ch + c) * inner + i];
        if (!isfinite(x)) continue;
        s += x;
        lo = x < lo ? x : lo, hi = x > hi ? x : hi;
      }
      if (part) part[o * ch + c] = s;
      else r->ch_sum[c] += s;
      r->ch_lo[c] = lo, r->ch_hi[c] = hi;
    }
  r->ch_count += outer * inner;
}

/* What one sample records: ranges[t] for every tensor, and (parallel runs
 * only) the per-channel partial sums parts[t] of channel_sums(). */
struct sample_rec {
  struct calib_range *ranges;
  double **parts; /* NULL: sums go straight into ranges[t].ch_sum */
};

static void note_tensor(const struct ir_graph *g, int t, const void *buf, struct sample_rec *rec) {
  const struct ir_tensor *x = &g->tensors[t];
  if (x->dtype != IR_DT_F32 || x->data || !buf) return;
  widen(&rec->ranges[t], buf, ir_tensor_numel(x));
  double *part = NULL;
  if (rec->parts && x->rank >= 2)
    part = rec->parts[t] = ir_xcalloc((size_t)(x->dims[0] * x->dims[1]) + 1, sizeof *part);
  channel_sums(&rec->ranges[t], x, buf, part);
}

/* last[t] = index of the last node reading t (n_nodes for graph outputs). */
static int *last_uses(const struct ir_graph *g) {
  int *last = ir_xmalloc(((size_t)g->n_tensors + 1) * sizeof *last);
  for (int t = 0; t < g->n_tensors; t++) last[t] = -1;
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i].n_in; k++)
      if (g->nodes[i].in[k] >= 0) last[g->nodes[i].in[k]] = i;
  for (int i = 0; i < g->n_outputs; i++) last[g->outputs[i]] = g->n_nodes;
  return last;
}

/* Runs node i, recording its results' ranges; frees operands it used last. */
static int run_node(const struct ir_graph *g, int i, void **vals, const int *last,
                    struct sample_rec *rec, struct ir_error *err) {
  const struct ir_node *n = &g->nodes[i];
  const void **in = ir_xcalloc((size_t)n->n_in + 1, sizeof *in);
  void **out = ir_xcalloc((size_t)n->n_out + 1, sizeof *out);
  for (int k = 0; k < n->n_in; k++) in[k] = n->in[k] >= 0 ? vals[n->in[k]] : NULL;
  for (int k = 0; k < n->n_out; k++) {
    int64_t bytes = ir_tensor_bytes(&g->tensors[n->out[k]]);
    LOOM_ASSERT(bytes >= 0); /* shape inference ran: the compiler checked it */
    out[k] = vals[n->out[k]] = ir_xcalloc(1, (size_t)bytes + 1);
  }
  int rc = ir_eval_node(g, i, in, out, err);
  for (int k = 0; k < n->n_out && !rc; k++) note_tensor(g, n->out[k], out[k], rec);
  for (int k = 0; k < n->n_in; k++) {
    int t = n->in[k];
    if (t >= 0 && last[t] == i && !g->tensors[t].data && !g->tensors[t].is_input) {
      free(vals[t]);
      vals[t] = NULL;
    }
  }
  free(in);
  free(out);
  return rc;
}

/* One sample: inputs[i] is the data of graph input i. */
static int run_sample(const struct ir_graph *g, const void *const *inputs, const int *last,
                      struct sample_rec *rec, struct ir_error *err) {
  void **vals = ir_xcalloc((size_t)g->n_tensors + 1, sizeof *vals);
  int rc = 0;
  for (int t = 0; t < g->n_tensors; t++) vals[t] = g->tensors[t].data;
  for (int i = 0; i < g->n_inputs; i++) {
    vals[g->inputs[i]] = (void *)inputs[i];
    note_tensor(g, g->inputs[i], inputs[i], rec);
  }
  for (int i = 0; i < g->n_nodes && !rc; i++)
    if (!g->nodes[i].dead) rc = run_node(g, i, vals, last, rec, err);
  for (int t = 0; t < g->n_tensors; t++)
    if (!g->tensors[t].data && !g->tensors[t].is_input) free(vals[t]);
  free(vals);
  return rc;
}

/* ---- running the samples, a few at a time ---- */

/* One sample run by one thread into its own record. */
struct sample_job {
  const struct ir_graph *g;
  const void *const *inputs; /* one per graph input */
  const int *last;
  struct sample_rec rec;
  struct ir_error err;
  int rc;
};

static void *sample_job_run(void *arg) {
  struct sample_job *j = arg;
  j->rc = run_sample(j->g, j->inputs, j->last, &j->rec, &j->err);
  return NULL;
}

/* Adds one sample's record to the totals, as if it had been run into them:
 * min / max, the subsample appended, the channel sums added in order. */
static void merge_sample(const struct ir_graph *g, struct calib_range *d, struct sample_rec *rec) {
  for (int t = 0; t < g->n_tensors; t++) {
    struct calib_range *s = &rec->ranges[t];
    if (s->seen) {
      if (!d[t].seen || s->lo < d[t].lo) d[t].lo = s->lo;
      if (!d[t].seen || s->hi > d[t].hi) d[t].hi = s->hi;
      d[t].seen = 1;
    }
    if (s->n_sample) {
      if (d[t].n_sample + s->n_sample > d[t].cap_sample) {
        d[t].cap_sample = d[t].n_sample + s->n_sample;
        d[t].sample = ir_xrealloc(d[t].sample, (size_t)d[t].cap_sample * sizeof *d[t].sample);
      }
      memcpy(d[t].sample + d[t].n_sample, s->sample, (size_t)s->n_sample * sizeof *s->sample);
      d[t].n_sample += s->n_sample;
    }
    if (s->ch_sum) {
      const struct ir_tensor *x = &g->tensors[t];
      int64_t ch = s->channels;
      if (!d[t].ch_sum) {
        d[t].ch_sum = ir_xcalloc((size_t)ch + 1, sizeof *d[t].ch_sum);
        d[t].ch_lo = ir_xcalloc((size_t)ch + 1, sizeof *d[t].ch_lo);
        d[t].ch_hi = ir_xcalloc((size_t)ch + 1, sizeof *d[t].ch_hi);
        d[t].channels = (int)ch;
      }
      for (int64_t o = 0; o < x->dims[0]; o++)
        for (int64_t c = 0; c < ch; c++) d[t].ch_sum[c] += rec->parts[t][o * ch + c];
      for (int64_t c = 0; c < ch; c++) {
        d[t].ch_lo[c] = s->ch_lo[c] < d[t].ch_lo[c] ? s->ch_lo[c] : d[t].ch_lo[c];
        d[t].ch_hi[c] = s->ch_hi[c] > d[t].ch_hi[c] ? s->ch_hi[c] : d[t].ch_hi[c];
      }
      d[t].ch_count += s->ch_count;
    }
  }
}

static void free_rec(const struct ir_graph *g, struct sample_rec *rec) {
  calib_ranges_free(rec->ranges, g->n_tensors);
  for (int t = 0; rec->parts && t < g->n_tensors; t++) free(rec->parts[t]);
  free(rec->ranges);
  free(rec->parts);
}

/* Runs n samples at once (one thread each, the first on this one) and
 * merges them in order: the totals come out as from a sequential run.
 * Sample j's inputs are in[j * g->n_inputs ...]. */
static int run_batch(const struct ir_graph *g, const void *const *in, int n, const int *last,
                     struct calib_range *ranges, int *samples, struct ir_error *err) {
  struct sample_job jobs[CALIB_MAX_THREADS];
  pthread_t tid[CALIB_MAX_THREADS];
  int started[CALIB_MAX_THREADS] = {0}, rc = 0;
  for (int j = 0; j < n; j++) {
    jobs[j] = (struct sample_job){g, in + (size_t)j * (size_t)g->n_inputs, last, {NULL, NULL}, {{0}}, 0};
    jobs[j].rec.ranges = ir_xcalloc((size_t)g->n_tensors + 1, sizeof *jobs[j].rec.ranges);
    jobs[j].rec.parts = ir_xcalloc((size_t)g->n_tensors + 1, sizeof *jobs[j].rec.parts);
  }
  for (int j = 1; j < n; j++) started[j] = !pthread_create(&tid[j], NULL, sample_job_run, &jobs[j]);
  sample_job_run(&jobs[0]);
  for (int j = 1; j < n; j++) started[j] ? (void)pthread_join(tid[j], NULL) : (void)sample_job_run(&jobs[j]);
  for (int j = 0; j < n; j++) {
    if (!rc && jobs[j].rc) rc = -1, *err = jobs[j].err;
    if (!rc) merge_sample(g, ranges, &jobs[j].rec), (*samples)++;
    free_rec(g, &jobs[j].rec);
  }
  return rc;
}

static int thread_count(void) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  return cpus < 1 ? 1 : cpus > CALIB_MAX_THREADS ? CALIB_MAX_THREADS : (int)cpus;
}

/* A single-input model: the samples of all files in order, `width` at a
 * time; the files a batch reads stay loaded until it is done. */
static int run_files(const struct ir_graph *g, char **files, int n_files, const int *last,
                     struct calib_range *ranges, int *samples, const struct ir_progress *prog,
                     struct ir_error *err) {
  int width = thread_count(), rc = 0, next = 0, held = 0;
  struct sample_file sf[CALIB_MAX_THREADS + 1];
  int64_t s = 0; /* next sample of sf[held - 1] */
  while (!rc) {
    const void *in[CALIB_MAX_THREADS];
    int n = 0;
    while (n < width && !rc) {
      if (!held || s == sf[held - 1].count) {
        if (next == n_files) break;
        if (held && !n) loom_npy_free(&sf[--held].npy); /* nothing of it is in this batch */
        rc = read_samples(files[next++], &g->tensors[g->inputs[0]], &sf[held], err);
        if (!rc) held++, s = 0;
        continue;
      }
      in[n++] = (const uint8_t *)sf[held - 1].npy.data + s++ * sf[held - 1].sample_bytes;
    }
    if (!rc && n) rc = run_batch(g, in, n, last, ranges, samples, err);
    /* the total, guessed from the files still to read holding as many as this one */
    if (!rc && n) ir_progress_report(prog, "calibration", *samples,
                                     *samples + (int)(sf[held - 1].count - s) + (n_files - next) * (int)sf[held - 1].count);
    /* keep only the file still being read */
    for (int k = 0; k + 1 < held; k++) loom_npy_free(&sf[k].npy);
    if (held > 1) sf[0] = sf[held - 1], held = 1;
    if (!n) break;
  }
  for (int k = 0; k < held; k++) loom_npy_free(&sf[k].npy);
  return rc;
}

/* The samples of one input of a multi-input model, all loaded. */
struct input_samples {
  struct sample_file *sf;
  int n_files;
  int64_t count;
};

/* PATH/NAME (a directory of .npy files, or a file) or PATH/NAME.npy. */
static int load_input(const char *path, const struct ir_tensor *x, int n_inputs, struct input_samples *in,
                      struct ir_error *err) {
  size_t len = strlen(path) + strlen(x->name) + 8;
  char *where = ir_xmalloc(len);
  struct stat st;
  snprintf(where, len, "%s/%s", path, x->name);
  if (stat(where, &st)) snprintf(where, len, "%s/%s.npy", path, x->name);
  if (stat(where, &st)) {
    free(where);
    return ir_errorf(err, "%s: a model with %d inputs is calibrated from %s/NAME/ (a directory of .npy files) or "
                     "%s/NAME.npy for each input NAME; input '%s' has neither", path, n_inputs, path, path, x->name), -1;
  }
  int n_listed;
  char **files = list_files(where, &n_listed, err);
  free(where);
  if (!files) return -1;
  in->sf = ir_xcalloc((size_t)n_listed, sizeof *in->sf);
  int rc = 0;
  for (int f = 0; f < n_listed && !rc; f++) {
    rc = read_samples(files[f], x, &in->sf[f], err);
    if (!rc) in->count += in->sf[f].count, in->n_files++; /* the files to free: those read */
  }
  free_files(files, n_listed);
  return rc;
}

/* Sample k of one input. */
static const void *input_sample(const struct input_samples *in, int64_t k) {
  for (int f = 0;; k -= in->sf[f++].count)
    if (k < in->sf[f].count) return (const uint8_t *)in->sf[f].npy.data + k * (int64_t)in->sf[f].sample_bytes;
}

/* A model with several inputs: sample k is the k-th sample of every input
 * (each input's files in name order); the inputs must have as many. */
static int run_inputs(const struct ir_graph *g, const char *path, const int *last, struct calib_range *ranges,
                      int *samples, const struct ir_progress *prog, struct ir_error *err) {
  int ni = g->n_inputs, rc = 0, width = thread_count();
  struct input_samples *in = ir_xcalloc((size_t)ni, sizeof *in);
  for (int i = 0; i < ni && !rc; i++) rc = load_input(path, &g->tensors[g->inputs[i]], ni, &in[i], err);
  for (int i = 1; i < ni && !rc; i++)
    if (in[i].count != in[0].count) {
      ir_errorf(err, "%s: input '%s' has %lld calibration samples, input '%s' %lld (sample k of every input "
                "makes calibration sample k)", path, g->tensors[g->inputs[0]].name, (long long)in[0].count,
                g->tensors[g->inputs[i]].name, (long long)in[i].count);
      rc = -1;
    }
  const void **batch = ir_xcalloc((size_t)width * (size_t)ni, sizeof *batch);
  for (int64_t k = 0; !rc && k < in[0].count; k += width) {
    int n = in[0].count - k < width ? (int)(in[0].count - k) : width;
    for (int j = 0; j < n; j++)
      for (int i = 0; i < ni; i++) batch[j * ni + i] = input_sample(&in[i], k + j);
    rc = run_batch(g, batch, n, last, ranges, samples, err);
    if (!rc) ir_progress_report(prog, "calibration", *samples, (int)in[0].count);
  }
  free(batch);
  for (int i = 0; i < ni; i++) {
    for (int f = 0; f < in[i].n_files; f++) loom_npy_free(&in[i].sf[f].npy);
    free(in[i].sf);
  }
  free(in);
  return rc;
}

int calib_collect(const struct ir_graph *g, const char *path, struct calib_range *ranges,
                  int *samples, const struct ir_progress *prog, struct ir_error *err) {
  *samples = 0;
  memset(ranges, 0, (size_t)g->n_tensors * sizeof *ranges);
  for (int i = 0; i < g->n_inputs; i++)
    if (!ir_shape_known(&g->tensors[g->inputs[i]]))
      return ir_errorf(err, "%s: calibration needs inputs of known shape ('%s' is not)", g->source,
                       g->tensors[g->inputs[i]].name), -1;
  if (g->n_inputs < 1) return ir_errorf(err, "%s: the model has no input to calibrate on", g->source), -1;
  int *last = last_uses(g), rc;
  if (g->n_inputs > 1) {
    rc = run_inputs(g, path, last, ranges, samples, prog, err);
  } else {
    int n;
    char **files = list_files(path, &n, err);
    rc = files ? run_files(g, files, n, last, ranges, samples, prog, err) : -1;
    if (files) free_files(files, n);
  }
  free(last);
  return rc;
}
