/*
 * model_check.c - end-to-end check of a compiled model on fsim.
 *
 *   model_check MODEL.onnx [--calib PATH] [--config NAME] [--im2col]
 *               --inputs X.npy [--labels Y.npy] [--ref X.npy=REF.npy ...]
 *               [--max-acc-drop PP] [--min-cosine C] [--max-lsb N] [--limit N] [-o OUT.loom]
 *
 * Compiles MODEL.onnx in memory (sw_compiler/compile.h), loads the .loom on
 * an fsim device once, and runs every sample of --inputs (an array whose
 * leading dimension is a multiple of the model input's: a batch is split
 * into single runs).  For each sample it compares:
 *   - fsim against the int8 reference: the fused graph evaluated by the
 *     reference interpreter, which uses the accelerator's integer
 *     semantics.  They must agree bit for bit: a difference is a lowering
 *     or runtime bug, not a quantization effect;
 *   - fsim against the float model (the ONNX graph on the reference
 *     interpreter): argmax agreement, and with --labels the accuracy of
 *     both, which must differ by at most --max-acc-drop percentage points;
 *   - with --ref X=REF: fsim's output for input X against REF (for example
 *     PyTorch's float output): cosine similarity at least --min-cosine, and
 *     for an integer REF (a QLinear model's output) at most --max-lsb codes
 *     apart anywhere (default 1: the reference requantizes in float32,
 *     the accelerator in 31-bit fixed point, so near-ties may differ).
 * With --layers, each --ref input also prints, per fused op, the cosine and
 * relative error of its dequantized result against the float tensor it
 * replaces: where quantization loses accuracy, before any lowering.
 * Prints one summary and exits 0 when every check holds.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "driver/core/npy.h"
#include "driver/core/outfile.h"
#include "loom/loom.h"
#include "sw_compiler/compile.h"

#define MAX_REFS 64

struct args {
  const char *model, *calib, *config, *inputs, *labels, *out;
  const char *ref_in[MAX_REFS], *ref_out[MAX_REFS];
  int n_refs, limit, im2col, layers;
  double max_drop, min_cos, max_lsb;
};

struct ctx {
  struct args a;
  struct compile_result r;
  struct ir_graph *fg;     /* float graph */
  loom_device *dev;
  loom_model *m;
  const struct loom_tensor_info *in, *out;
  size_t out_elems;
  int failures;
};

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int usage(void) {
  fprintf(stderr, "usage: model_check MODEL.onnx [--calib PATH] [--config NAME] [--im2col] --inputs X.npy\n"
                  "       [--labels Y.npy] [--ref X.npy=REF.npy]... [--max-acc-drop PP] [--min-cosine C]\n"
                  "       [--limit N] [-o OUT.loom]\n");
  return 2;
}

static int parse(struct args *a, int argc, char **argv) {
  a->max_drop = 1.0, a->min_cos = 0.98, a->max_lsb = 1;
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(s, "--im2col")) { a->im2col = 1; continue; }
    if (!strcmp(s, "--layers")) { a->layers = 1; continue; }
    if (s[0] != '-') { a->model = s; continue; }
    if (!v) return usage();
    i++;
    if (!strcmp(s, "--calib")) a->calib = v;
    else if (!strcmp(s, "--config")) a->config = v;
    else if (!strcmp(s, "--inputs")) a->inputs = v;
    else if (!strcmp(s, "--labels")) a->labels = v;
    else if (!strcmp(s, "-o")) a->out = v;
    else if (!strcmp(s, "--limit")) a->limit = atoi(v);
    else if (!strcmp(s, "--max-acc-drop")) a->max_drop = atof(v);
    else if (!strcmp(s, "--min-cosine")) a->min_cos = atof(v);
    else if (!strcmp(s, "--max-lsb")) a->max_lsb = atof(v);
    else if (!strcmp(s, "--ref") && strchr(v, '=') && a->n_refs < MAX_REFS) {
      char *eq = strchr(v, '=');
      a->ref_in[a->n_refs] = strndup(v, (size_t)(eq - v));
      a->ref_out[a->n_refs++] = eq + 1;
    } else return usage();
  }
  return a->model && (a->inputs || a->n_refs) ? 0 : usage();
}

static enum ir_dtype ir_dt(loom_dtype d) {
  return d == LOOM_DT_F32 ? IR_DT_F32 : d == LOOM_DT_I8 ? IR_DT_I8 : d == LOOM_DT_U8 ? IR_DT_U8 : IR_DT_I32;
}

static int setup(struct ctx *c) {
  struct compile_options o = {.config = c->a.config, .calib = c->a.calib, .flags = c->a.im2col ? COMPILE_IM2COL : 0};
  struct ir_error err = {{0}};
  char msg[LOOM_MSG_MAX];
  double t0 = now();
  if (compile_onnx(c->a.model, &o, &c->r, &err)) return fprintf(stderr, "compile: %s\n", err.msg), -1;
  printf("compiled %s in %.1f ms: %zu bytes, %d steps\n", c->a.model, 1e3 * (now() - t0), c->r.size, c->r.n_layers);
  if (c->a.out && loom_outfile_write(c->a.out, c->r.bytes, c->r.size, msg) != LOOM_OK)
    return fprintf(stderr, "%s\n", msg), -1;
  c->fg = onnx_import_file(c->a.model, &err);
  if (!c->fg || ir_run_default_passes(c->fg, &err)) return fprintf(stderr, "float model: %s\n", err.msg), -1;
  char opts[64];
  snprintf(opts, sizeof opts, "config=%s", c->r.cfg->name);
  if (loom_device_open("fsim", opts, &c->dev, msg) || loom_model_load_memory(c->dev, c->r.bytes, c->r.size, "model", &c->m, msg))
    return fprintf(stderr, "load: %s\n", msg), -1;
  if (loom_model_input_count(c->m) != 1 || loom_model_output_count(c->m) != 1)
    return fprintf(stderr, "model_check handles one input and one output\n"), -1;
  c->in = loom_model_input(c->m, 0);
  c->out = loom_model_output(c->m, 0);
  c->out_elems = 1;
  for (int i = 0; i < c->out->rank; i++) c->out_elems *= (size_t)c->out->dims[i];
  return 0;
}

/* One sample through fsim: *y gets the output (malloc'd, user dtype). */
static int run_fsim(struct ctx *c, loom_dtype dt, const void *x, void **y) {
  size_t bytes = c->out_elems * loom_dtype_size(c->out->dtype);
  *y = malloc(bytes);
  if (loom_model_set_input(c->m, c->in->name, dt, c->in->rank, c->in->dims, x) || loom_model_run(c->m, 0) ||
      loom_model_get_output(c->m, c->out->name, *y, bytes))
    return fprintf(stderr, "fsim: %s\n", loom_device_error(c->dev)), -1;
  return 0;
}

static void *run_ref(struct ctx *c, const struct ir_graph *g, const void *x) {
  void *out[1] = {NULL};
  struct ir_error err = {{0}};
  const void *in[1] = {x};
  if (ir_eval_ref(g, in, out, &err)) fprintf(stderr, "reference: %s\n", err.msg);
  return out[0];
}

static double as_f(const void *p, enum ir_dtype dt, size_t i) {
  return dt == IR_DT_F32 ? ((const float *)p)[i] : dt == IR_DT_I8 ? ((const int8_t *)p)[i] : ((const uint8_t *)p)[i];
}

static size_t argmax(const void *p, enum ir_dtype dt, size_t n) {
  size_t best = 0;
  for (size_t i = 1; i < n; i++)
    if (as_f(p, dt, i) > as_f(p, dt, best)) best = i;
  return best;
}

static double cosine(const void *a, enum ir_dtype da, const void *b, enum ir_dtype db, size_t n) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < n; i++) {
    double x = as_f(a, da, i), y = as_f(b, db, i);
    ab += x * y, aa += x * x, bb += y * y;
  }
  return aa > 0 && bb > 0 ? ab / sqrt(aa * bb) : (aa == bb ? 1 : 0);
}

struct tally {
  int n, bit_diff, agree, fsim_ok, float_ok;
  double min_cos, fsim_s, ref_s;
};

/* Sample x (dtype dt): fsim vs the int8 and the float reference. */
static int one_sample(struct ctx *c, loom_dtype dt, const void *x, int label, struct tally *t, void **keep) {
  void *y;
  double t0 = now();
  if (run_fsim(c, dt, x, &y)) return -1;
  t->fsim_s += now() - t0;
  t0 = now();
  void *q = run_ref(c, c->r.graph, x), *f = ir_dt(dt) == IR_DT_F32 ? run_ref(c, c->fg, x) : NULL;
  t->ref_s += now() - t0;
  enum ir_dtype ody = ir_dt(c->out->dtype);
  size_t bytes = c->out_elems * loom_dtype_size(c->out->dtype);
  if (!q || memcmp(q, y, bytes)) t->bit_diff++;
  size_t ay = argmax(y, ody, c->out_elems);
  if (f) {
    t->agree += ay == argmax(f, IR_DT_F32, c->out_elems);
    t->float_ok += (int)argmax(f, IR_DT_F32, c->out_elems) == label;
    double cs = cosine(y, ody, f, IR_DT_F32, c->out_elems);
    if (cs < t->min_cos) t->min_cos = cs;
  }
  t->fsim_ok += (int)ay == label;
  t->n++;
  if (keep) *keep = y;
  else free(y);
  free(q);
  free(f);
  return 0;
}

/* ---- --layers: where quantization loses accuracy ---- */

/* Every tensor of g for input x (vals[t], malloc'd or constant data). */
static void **eval_all(const struct ir_graph *g, const void *x) {
  void **vals = calloc((size_t)g->n_tensors + 1, sizeof *vals);
  struct ir_error err = {{0}};
  for (int t = 0; t < g->n_tensors; t++) vals[t] = g->tensors[t].data;
  vals[g->inputs[0]] = (void *)x;
  for (int i = 0; i < g->n_nodes; i++) {
    const struct ir_node *n = &g->nodes[i];
    const void *in[16] = {0};
    void *out[4] = {0};
    for (int k = 0; k < n->n_in && k < 16; k++) in[k] = n->in[k] >= 0 ? vals[n->in[k]] : NULL;
    for (int k = 0; k < n->n_out && k < 4; k++)
      out[k] = vals[n->out[k]] = calloc(1, (size_t)ir_tensor_bytes(&g->tensors[n->out[k]]) + 1);
    if (ir_eval_node(g, i, in, out, &err)) fprintf(stderr, "%s\n", err.msg);
  }
  return vals;
}

static void free_all(const struct ir_graph *g, void **vals) {
  for (int t = 0; t < g->n_tensors; t++)
    if (!g->tensors[t].data && !g->tensors[t].is_input) free(vals[t]);
  free(vals);
}

/* Per fused op: its dequantized result against the float tensor it
 * replaces (named without the ".q" the quantizer appended). */
static void layer_errors(struct ctx *c, const void *x) {
  const struct ir_graph *q = c->r.graph, *f = c->fg;
  void **qv = eval_all(q, x), **fv = eval_all(f, x);
  printf("%-48s %8s %8s %8s\n", "layer (int8 result vs float)", "cosine", "rel rms", "own");
  for (int i = 0; i < q->n_nodes; i++) {
    const struct ir_node *n = &q->nodes[i];
    if (n->op < IR_OP_QCONV) continue;
    const struct ir_tensor *t = &q->tensors[n->out[0]];
    char name[256];
    snprintf(name, sizeof name, "%s", t->name);
    char *dot = strrchr(name, '.');
    if (dot && !strcmp(dot, ".q")) *dot = 0;
    int ft = ir_tensor_find(f, name);
    if (ft < 0 || t->quant.n != 1 || ir_tensor_numel(&f->tensors[ft]) != ir_tensor_numel(t)) continue;
    int64_t m = ir_tensor_numel(t);
    double ab = 0, aa = 0, bb = 0, e = 0, own = 0, sc = t->quant.scale[0];
    int zp = t->quant.zero_point[0];
    for (int64_t k = 0; k < m; k++) {
      double a = (((const int8_t *)qv[n->out[0]])[k] - zp) * sc;
      double b = ((const float *)fv[ft])[k], qb = fmin(fmax(nearbyint(b / sc) + zp, -128), 127);
      ab += a * b, aa += a * a, bb += b * b, e += (a - b) * (a - b), own += ((qb - zp) * sc - b) * ((qb - zp) * sc - b);
    }
    printf("%-48.48s %8.4f %8.4f %8.4f\n", name, ab / sqrt(aa * bb + 1e-30), sqrt(e / (bb + 1e-30)),
           sqrt(own / (bb + 1e-30)));
  }
  free_all(q, qv);
  free_all(f, fv);
}

static int read_npy(const char *path, struct loom_npy *n) {
  char msg[LOOM_MSG_MAX];
  if (loom_npy_read(path, n, msg)) return fprintf(stderr, "%s\n", msg), -1;
  return 0;
}

static int label_at(const struct loom_npy *l, int64_t i) {
  if (!l->data) return -1;
  return l->dtype == LOOM_DT_I32 ? ((const int32_t *)l->data)[i] : ((const int8_t *)l->data)[i];
}

static int run_inputs(struct ctx *c) {
  struct loom_npy x = {0}, y = {0};
  if (read_npy(c->a.inputs, &x) || (c->a.labels && read_npy(c->a.labels, &y))) return -1;
  size_t sample = loom_dtype_size(x.dtype);
  for (int i = 0; i < c->in->rank; i++) sample *= (size_t)c->in->dims[i];
  int64_t n = (int64_t)(x.bytes / sample);
  if (c->a.limit && n > c->a.limit) n = c->a.limit;
  struct tally t = {.min_cos = 1};
  for (int64_t i = 0; i < n; i++)
    if (one_sample(c, x.dtype, (const uint8_t *)x.data + i * sample, label_at(&y, i), &t, NULL)) return -1;
  printf("%d samples: fsim %.2f ms/sample, reference %.2f ms/sample\n", t.n, 1e3 * t.fsim_s / t.n, 1e3 * t.ref_s / t.n);
  printf("fsim vs int8 reference: %d of %d outputs differ\n", t.bit_diff, t.n);
  if (t.bit_diff) c->failures++;
  if (x.dtype == LOOM_DT_F32)
    printf("fsim vs float: argmax agrees on %d of %d, min cosine %.4f\n", t.agree, t.n, t.min_cos);
  if (c->a.labels) {
    double fa = 100.0 * t.float_ok / t.n, qa = 100.0 * t.fsim_ok / t.n;
    printf("accuracy: float %.2f%%, int8 on fsim %.2f%% (drop %.2f pp, limit %.2f)\n", fa, qa, fa - qa, c->a.max_drop);
    if (fa - qa > c->a.max_drop) c->failures++;
  }
  loom_npy_free(&x);
  loom_npy_free(&y);
  return 0;
}

static int run_refs(struct ctx *c) {
  for (int k = 0; k < c->a.n_refs; k++) {
    struct loom_npy x, r;
    if (read_npy(c->a.ref_in[k], &x) || read_npy(c->a.ref_out[k], &r)) return -1;
    struct tally t = {.min_cos = 1};
    void *y;
    if (c->a.layers) layer_errors(c, x.data);
    if (one_sample(c, x.dtype, x.data, -1, &t, &y)) return -1;
    enum ir_dtype rdt = ir_dt(r.dtype), ydt = ir_dt(c->out->dtype);
    int same = r.bytes / loom_dtype_size(r.dtype) == c->out_elems;
    double cs = same ? cosine(y, ydt, r.data, rdt, c->out_elems) : 0, maxd = 0;
    for (size_t i = 0; same && i < c->out_elems; i++) maxd = fmax(maxd, fabs(as_f(y, ydt, i) - as_f(r.data, rdt, i)));
    printf("%s: vs %s cosine %.4f (limit %.2f), max |diff| %g; int8 reference %s; fsim %.0f ms\n",
           c->a.ref_in[k], c->a.ref_out[k], cs, c->a.min_cos, maxd, t.bit_diff ? "DIFFERS" : "bit-exact",
           1e3 * t.fsim_s);
    if (cs < c->a.min_cos || t.bit_diff || (rdt != IR_DT_F32 && maxd > c->a.max_lsb)) c->failures++;
    free(y);
    loom_npy_free(&x);
    loom_npy_free(&r);
  }
  return 0;
}

int main(int argc, char **argv) {
  struct ctx c = {0};
  if (parse(&c.a, argc, argv)) return 2;
  int rc = setup(&c) || (c.a.inputs && run_inputs(&c)) || run_refs(&c);
  loom_model_free(c.m);
  if (c.dev) loom_device_close(c.dev);
  compile_result_free(&c.r);
  ir_graph_free(c.fg);
  for (int k = 0; k < c.a.n_refs; k++) free((char *)c.a.ref_in[k]);
  if (rc) return 1;
  printf("%s\n", c.failures ? "FAILED" : "ok");
  return c.failures ? 1 : 0;
}
