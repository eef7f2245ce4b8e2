/*
 * onnx_node_runner.c - ONNX's own backend node tests through Loom.
 *
 *   onnx_node_runner DIR [--config NAME] [--filter TEXT] [--tsim] [-v]
 *
 * DIR is what scripts/gen_onnx_node_tests.py writes: DIR/node/test_NAME/
 * model.onnx with test_data_set_N/{input,output}_K.pb TensorProtos.  Each
 * test model is imported, put through the default passes and run on the
 * reference interpreter for every data set; outputs are compared with the
 * expected ones (floats within rtol 1e-3 + atol 1e-5, the tolerance of
 * ONNX's own backend tests; integers exactly).
 *
 * The integer ops QLinearConv, QLinearMatMul, ConvInteger and
 * MatMulInteger also go through the compiler and fsim: every input but the
 * first is frozen into a constant (weights, scales and zero points must be
 * constants for the accelerator), the graph is compiled (it must contain
 * at least one accelerator job), and fsim's output must equal the expected
 * output bit for bit, and equal the compiled int8 graph on the reference
 * interpreter (the CPU integer reference).  With --tsim the same binary
 * also runs on the Verilated RTL of the configuration, which must give
 * the same bytes as fsim.  QuantizeLinear and DequantizeLinear go the same
 * way, as host steps of the compiled model (no job, no tsim): the
 * runtime's quantization must reproduce ONNX's expected outputs.
 *
 * Tests of ops the IR keeps as generic nodes (IR_OP_ONNX), which the
 * portable host kernels run, are tests/onnx/run_node_suite.py's: that
 * runner takes every node test through `loom compile` and `loom run`.
 *
 * Per op (the single node's op type; multi-node "expanded" tests count
 * under their first op with a "+"), it prints passed / failed / skipped.
 * A test is skipped only for a documented reason (docs/compiler.md,
 * "ONNX node tests"): a data type, attribute or input form the IR does not
 * support, reported by the importer's own message.  Tests of ops the IR
 * does not have are counted apart.  Exits 1 when any test failed.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/core/kernel.h"
#include "driver/core/loomfile.h"
#include "loom/loom.h"
#include "onnx/onnx.pb-c.h"
#include "sw_compiler/compile.h"

#define MAX_IO 16
#define MAX_OPS 256

struct op_stats {
  char name[80];
  int passed, failed, skipped, accel_passed, accel_failed, accel_skipped;
};

struct runner {
  const char *dir, *config, *filter;
  int verbose;
  struct op_stats ops[MAX_OPS];
  int n_ops, unsupported, failures;
  loom_device *dev, *tsim; /* tsim: NULL without --tsim */
};

struct blob {
  enum ir_dtype dt;
  int rank;
  int64_t dims[IR_MAX_RANK];
  void *data;
  size_t bytes;
};

/* ---- files ---- */

static uint8_t *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *buf = malloc((size_t)n + 1);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) free(buf), buf = NULL;
  fclose(f);
  *len = (size_t)n;
  return buf;
}

static int ir_dt_of(int32_t onnx) {
  switch (onnx) {
  case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: return IR_DT_F32;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT8: return IR_DT_I8;
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8: return IR_DT_U8;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: return IR_DT_I32;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: return IR_DT_I64;
  default: return -1;
  }
}

/* Typed fields of a TensorProto into b->data. */
static void typed_fields(const Onnx__TensorProto *t, struct blob *b, int64_t n) {
  for (int64_t i = 0; i < n; i++) switch (b->dt) {
    case IR_DT_F32: ((float *)b->data)[i] = (size_t)i < t->n_float_data ? t->float_data[i] : 0; break;
    case IR_DT_I64: ((int64_t *)b->data)[i] = (size_t)i < t->n_int64_data ? t->int64_data[i] : 0; break;
    case IR_DT_I32: ((int32_t *)b->data)[i] = (size_t)i < t->n_int32_data ? t->int32_data[i] : 0; break;
    case IR_DT_I8: ((int8_t *)b->data)[i] = (int8_t)((size_t)i < t->n_int32_data ? t->int32_data[i] : 0); break;
    case IR_DT_U8: ((uint8_t *)b->data)[i] = (uint8_t)((size_t)i < t->n_int32_data ? t->int32_data[i] : 0); break;
    default: break;
    }
}

/* A TensorProto file; 0, or -1 with *why (unsupported dtype, bad file). */
static int read_blob(const char *path, struct blob *b, const char **why) {
  size_t len;
  uint8_t *buf = slurp(path, &len);
  Onnx__TensorProto *t = buf ? onnx__tensor_proto__unpack(NULL, len, buf) : NULL;
  free(buf);
  memset(b, 0, sizeof *b);
  if (!t) return *why = "unreadable TensorProto", -1;
  int dt = ir_dt_of(t->data_type);
  int64_t n = ir_numel_checked((int)t->n_dims, t->dims);
  if (dt < 0 || t->n_dims > IR_MAX_RANK || n < 0) {
    onnx__tensor_proto__free_unpacked(t, NULL);
    return *why = "a tensor of a data type the IR does not support", -1;
  }
  b->dt = (enum ir_dtype)dt, b->rank = (int)t->n_dims;
  for (size_t i = 0; i < t->n_dims; i++) b->dims[i] = t->dims[i];
  b->bytes = (size_t)n * ir_dtype_size(b->dt);
  b->data = calloc(1, b->bytes + 1);
  if (t->has_raw_data && t->raw_data.len == b->bytes) {
    if (b->bytes) memcpy(b->data, t->raw_data.data, b->bytes);
  }
  else typed_fields(t, b, n);
  onnx__tensor_proto__free_unpacked(t, NULL);
  return 0;
}

/* ---- bookkeeping ---- */

static struct op_stats *stats_for(struct runner *r, const char *op) {
  for (int i = 0; i < r->n_ops; i++)
    if (!strcmp(r->ops[i].name, op)) return &r->ops[i];
  if (r->n_ops == MAX_OPS) return &r->ops[MAX_OPS - 1];
  struct op_stats *s = &r->ops[r->n_ops++];
  memset(s, 0, sizeof *s);
  snprintf(s->name, sizeof s->name, "%s", op);
  return s;
}

/* The test's op: the single node's type, or "First+" for several nodes;
 * *known tells whether the IR has every op of the model. */
static int model_ops(const char *path, char *op, size_t len, int *known) {
  size_t n;
  uint8_t *buf = slurp(path, &n);
  Onnx__ModelProto *m = buf ? onnx__model_proto__unpack(NULL, n, buf) : NULL;
  free(buf);
  if (!m || !m->graph || !m->graph->n_node) {
    if (m) onnx__model_proto__free_unpacked(m, NULL);
    return -1;
  }
  Onnx__GraphProto *g = m->graph;
  snprintf(op, len, "%s%s", g->node[0]->op_type, g->n_node > 1 ? "+" : "");
  *known = 1;
  for (size_t i = 0; i < g->n_node; i++) {
    int k = ir_op_from_name(g->node[i]->op_type);
    if (k < 0 || k >= IR_OP_QCONV || strcmp(g->node[i]->domain ? g->node[i]->domain : "", "")) *known = 0;
  }
  onnx__model_proto__free_unpacked(m, NULL);
  return 0;
}

/* ---- comparing ---- */

static double val(const struct blob *b, size_t i) {
  switch (b->dt) {
  case IR_DT_F32: return ((const float *)b->data)[i];
  case IR_DT_I8: return ((const int8_t *)b->data)[i];
  case IR_DT_U8: return ((const uint8_t *)b->data)[i];
  case IR_DT_I32: return ((const int32_t *)b->data)[i];
  case IR_DT_I64: return (double)((const int64_t *)b->data)[i];
  default: return 0;
  }
}

/* Expected `want` against `got` (bytes of dtype dt); "" when equal. */
static const char *compare(const struct blob *want, enum ir_dtype dt, const void *got, size_t bytes, char *msg,
                           size_t len) {
  if (dt != want->dt || bytes != want->bytes) return snprintf(msg, len, "type or size differs"), msg;
  struct blob g = *want;
  g.data = (void *)got;
  size_t n = bytes / ir_dtype_size(dt);
  for (size_t i = 0; i < n; i++) {
    double a = val(&g, i), b = val(want, i);
    if (dt == IR_DT_F32 ? (isnan(a) != isnan(b) || (!isnan(b) && fabs(a - b) > 1e-5 + 1e-3 * fabs(b))) : a != b)
      return snprintf(msg, len, "element %zu is %g, expected %g", i, a, b), msg;
  }
  return "";
}

/* ---- one test ---- */

struct dataset {
  struct blob in[MAX_IO], out[MAX_IO];
  int n_in, n_out;
};

static void free_dataset(struct dataset *d) {
  for (int i = 0; i < d->n_in; i++) free(d->in[i].data);
  for (int i = 0; i < d->n_out; i++) free(d->out[i].data);
  d->n_in = d->n_out = 0;
}

static int read_dataset(const char *dir, struct dataset *d, const char **why) {
  char path[1400];
  memset(d, 0, sizeof *d);
  for (int k = 0; k < MAX_IO; k++) {
    snprintf(path, sizeof path, "%s/input_%d.pb", dir, k);
    FILE *f = fopen(path, "rb");
    if (!f) break;
    fclose(f);
    if (read_blob(path, &d->in[d->n_in++], why)) return -1;
  }
  for (int k = 0; k < MAX_IO; k++) {
    snprintf(path, sizeof path, "%s/output_%d.pb", dir, k);
    FILE *f = fopen(path, "rb");
    if (!f) break;
    fclose(f);
    if (read_blob(path, &d->out[d->n_out++], why)) return -1;
  }
  return 0;
}

/* Reference run of data set d; "" on success, else what went wrong. */
static const char *run_ref(const struct ir_graph *g, const struct dataset *d, char *msg, size_t len) {
  struct ir_error err = {{0}};
  const void *in[MAX_IO];
  void *out[MAX_IO] = {0};
  if (d->n_in != g->n_inputs || d->n_out != g->n_outputs) return snprintf(msg, len, "input/output count differs"), msg;
  for (int k = 0; k < d->n_in; k++) {
    const struct ir_tensor *t = &g->tensors[g->inputs[k]];
    if (d->in[k].dt != t->dtype || (int64_t)d->in[k].bytes != ir_tensor_bytes(t))
      return snprintf(msg, len, "input %d does not match the model's type", k), msg;
    in[k] = d->in[k].data;
  }
  const char *r = "";
  if (ir_eval_ref(g, in, out, &err)) r = (snprintf(msg, len, "%s", err.msg), msg);
  for (int k = 0; k < d->n_out && !r[0]; k++) {
    const struct ir_tensor *t = &g->tensors[g->outputs[k]];
    r = compare(&d->out[k], t->dtype, out[k], (size_t)ir_tensor_bytes(t), msg, len);
  }
  for (int k = 0; k < d->n_out; k++) free(out[k]);
  return r;
}

static int is_accel_op(const char *op) {
  return !strcmp(op, "QLinearConv") || !strcmp(op, "QLinearMatMul") || !strcmp(op, "ConvInteger") ||
         !strcmp(op, "MatMulInteger");
}

/* Ops that compile to host steps only. */
static int is_host_op(const char *op) { return !strcmp(op, "QuantizeLinear") || !strcmp(op, "DequantizeLinear"); }

/* Inputs 1.. become constants with data set d's values. */
static void freeze_inputs(struct ir_graph *g, const struct dataset *d) {
  for (int k = 1; k < g->n_inputs; k++) {
    int t = g->inputs[k];
    ir_tensor_set_data(g, t, d->in[k].data, d->in[k].bytes);
    g->tensors[t].is_input = 0;
  }
  g->n_inputs = 1;
}

static loom_dtype loom_dt(enum ir_dtype dt) {
  return dt == IR_DT_I8 ? LOOM_DT_I8 : dt == IR_DT_U8 ? LOOM_DT_U8 : dt == IR_DT_I32 ? LOOM_DT_I32 : LOOM_DT_F32;
}

/* Runs the compiled model on device dev (named `what`); out gets the
 * output's bytes.  0, or -1 with *msg. */
static int run_on(loom_device *dev, const char *what, const struct compile_result *cr, const char *model,
                  const struct dataset *d, void *out, char *msg, size_t len) {
  loom_model *m = NULL;
  char lmsg[LOOM_MSG_MAX];
  int rc = -1;
  const struct loom_tensor_info *ti, *to;
  if (loom_model_load_memory(dev, cr->bytes, cr->size, model, &m, lmsg)) {
    snprintf(msg, len, "%s: load: %s", what, lmsg);
  } else if ((ti = loom_model_input(m, 0)), (to = loom_model_output(m, 0)),
             loom_model_set_input(m, ti->name, loom_dt(d->in[0].dt), d->in[0].rank, d->in[0].dims, d->in[0].data) ||
                 loom_model_run(m, 0)) {
    snprintf(msg, len, "%s: %s", what, loom_device_error(dev));
  } else if (loom_model_get_output(m, to->name, out, d->out[0].bytes)) {
    snprintf(msg, len, "%s: output: %s", what, loom_device_error(dev));
  } else {
    rc = 0;
  }
  loom_model_free(m);
  return rc;
}

static int count_jobs(const struct compile_result *cr) {
  int n = 0;
  for (int i = 0; i < cr->n_layers; i++) n += cr->layers[i].is_job;
  return n;
}

/* The compiled int8 graph on the reference interpreter: the CPU integer
 * reference of what the accelerator computes.  "" when it equals `got`. */
static const char *check_int_ref(const struct compile_result *cr, const struct dataset *d, const void *got,
                                 char *msg, size_t len) {
  struct ir_error err = {{0}};
  const void *in[1] = {d->in[0].data};
  void *out[MAX_IO] = {0};
  const char *res = "";
  if (cr->graph->n_inputs != 1 || cr->graph->n_outputs < 1) res = (snprintf(msg, len, "compiled graph I/O"), msg);
  else if (ir_eval_ref(cr->graph, in, out, &err)) res = (snprintf(msg, len, "integer reference: %.900s", err.msg), msg);
  else if (memcmp(out[0], got, d->out[0].bytes)) res = (snprintf(msg, len, "fsim differs from the integer reference"), msg);
  for (int k = 0; k < cr->graph->n_outputs && k < MAX_IO; k++) free(out[k]);
  return res;
}

/* The first op a KERNEL step of the compiled model needs and this build's
 * host kernels lack, or NULL. */
static const char *missing_kernel(const struct compile_result *cr, char *buf, size_t len) {
  struct loom_file f;
  char msg[LOOM_MSG_MAX];
  const char *res = NULL;
  if (loom_file_parse(cr->bytes, cr->size, "compiled", &f, msg)) return NULL;
  for (uint32_t i = 0; i < f.kernel_count && !res; i++)
    if (!loom_kernel_find(loom_file_string(&f, f.kernels[i].op)))
      res = (snprintf(buf, len, "%s", loom_file_string(&f, f.kernels[i].op)), buf);
  loom_file_free(&f);
  return res;
}

/* Compiles and runs on fsim (and tsim, for an accelerator op); 1 passed,
 * 0 skipped (*msg why), -1 failed. */
static int run_accel(struct runner *r, const char *model, int accel, const struct dataset *d, char *msg, size_t len) {
  struct ir_error err = {{0}};
  struct ir_graph *g = onnx_import_file(model, &err);
  if (!g) return snprintf(msg, len, "%s", err.msg), -1;
  freeze_inputs(g, d);
  struct compile_options o = {.config = r->config};
  struct compile_result cr;
  if (compile_graph(g, &o, &cr, &err)) {
    compile_result_free(&cr);
    return snprintf(msg, len, "does not lower: %.900s", err.msg), 0;
  }
  int rc = -1;
  char kop[64];
  if (missing_kernel(&cr, kop, sizeof kop)) {
    compile_result_free(&cr);
    return snprintf(msg, len, "needs the host kernel of %s, which this build lacks", kop), 0;
  }
  void *out = calloc(1, d->out[0].bytes + 1), *tout = calloc(1, d->out[0].bytes + 1);
  if (accel && !count_jobs(&cr)) snprintf(msg, len, "compiled without an accelerator job");
  else if (run_on(r->dev, "fsim", &cr, model, d, out, msg, len)) (void)0;
  else if (compare(&d->out[0], d->out[0].dt, out, d->out[0].bytes, msg, len)[0]) (void)0;
  else if (!accel) rc = 1, snprintf(msg, len, "compiled: host steps only, as expected");
  else if (check_int_ref(&cr, d, out, msg, len)[0]) (void)0;
  else if (r->tsim && run_on(r->tsim, "tsim", &cr, model, d, tout, msg, len)) (void)0;
  else if (r->tsim && memcmp(out, tout, d->out[0].bytes)) snprintf(msg, len, "tsim differs from fsim");
  else rc = 1, snprintf(msg, len, "%d job(s), bit-exact on fsim%s", count_jobs(&cr), r->tsim ? " and tsim" : "");
  free(out);
  free(tout);
  compile_result_free(&cr);
  return rc;
}

/* The import and the passes; NULL with *msg when the model is refused. */
static struct ir_graph *load(const char *model, char *msg, size_t len) {
  struct ir_error err = {{0}};
  struct ir_graph *g = onnx_import_file(model, &err);
  if (g && !ir_run_default_passes(g, &err)) return g;
  snprintf(msg, len, "%s", err.msg);
  ir_graph_free(g);
  return NULL;
}

static void report(struct runner *r, const char *test, const char *what, const char *msg) {
  if (r->verbose || !strcmp(what, "FAIL")) printf("  %-4s %s%s%s\n", what, test, msg[0] ? ": " : "", msg);
}

static void accel_sets(struct runner *r, struct op_stats *s, const char *test, const char *model, int accel,
                       const char *dir) {
  char path[1200], msg[1024];
  const char *why = "";
  for (int k = 0;; k++) {
    struct dataset d;
    snprintf(path, sizeof path, "%s/test_data_set_%d", dir, k);
    DIR *dd = opendir(path);
    if (!dd) break;
    closedir(dd);
    if (read_dataset(path, &d, &why)) {
      free_dataset(&d);
      break;
    }
    msg[0] = '\0';
    int rc = run_accel(r, model, accel, &d, msg, sizeof msg);
    if (rc > 0) s->accel_passed++, report(r, test, "ok", msg);
    else if (rc == 0) s->accel_skipped++, report(r, test, "skip", msg);
    else s->accel_failed++, r->failures++, report(r, test, "FAIL", msg);
    free_dataset(&d);
  }
}

/* Every data set of one test on the reference; 1 passed, 0 skipped, -1 failed. */
static int ref_sets(struct runner *r, const struct ir_graph *g, const char *dir, char *msg, size_t len) {
  char path[1200];
  int ran = 0;
  for (int k = 0;; k++) {
    struct dataset d;
    const char *why = "";
    snprintf(path, sizeof path, "%s/test_data_set_%d", dir, k);
    DIR *dd = opendir(path);
    if (!dd) break;
    closedir(dd);
    if (read_dataset(path, &d, &why)) {
      free_dataset(&d);
      return snprintf(msg, len, "%s", why), 0;
    }
    const char *res = run_ref(g, &d, msg, len);
    free_dataset(&d);
    if (res[0]) return -1;
    ran++;
  }
  return ran ? 1 : (snprintf(msg, len, "no data sets"), 0);
}

static void run_test(struct runner *r, const char *name) {
  char dir[1024], model[1100], op[80], msg[1024] = "";
  int known;
  snprintf(dir, sizeof dir, "%s/node/%s", r->dir, name);
  snprintf(model, sizeof model, "%s/model.onnx", dir);
  if (model_ops(model, op, sizeof op, &known)) return;
  if (!known) {
    r->unsupported++;
    if (r->verbose) printf("  --   %s: %s is not an IR op\n", name, op);
    return;
  }
  struct op_stats *s = stats_for(r, op);
  struct ir_graph *g = load(model, msg, sizeof msg);
  int generic = 0;
  for (int i = 0; g && i < g->n_nodes; i++) generic |= g->nodes[i].op == IR_OP_ONNX;
  if (generic) snprintf(msg, sizeof msg, "a form the IR keeps as a generic node: the host kernels run it (run_node_suite.py)");
  int rc = g && !generic ? ref_sets(r, g, dir, msg, sizeof msg) : 0;
  ir_graph_free(g);
  if (rc > 0) s->passed++, report(r, name, "ok", "");
  else if (rc == 0) s->skipped++, report(r, name, "skip", msg);
  else s->failed++, r->failures++, report(r, name, "FAIL", msg);
  if (rc > 0 && (is_accel_op(op) || is_host_op(op))) accel_sets(r, s, name, model, is_accel_op(op), dir);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int run_all(struct runner *r) {
  char path[1024];
  snprintf(path, sizeof path, "%s/node", r->dir);
  DIR *d = opendir(path);
  if (!d) return fprintf(stderr, "onnx_node_runner: %s: cannot open (run scripts/gen_onnx_node_tests.py)\n", path), -1;
  char **names = NULL;
  int n = 0, cap = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (strncmp(e->d_name, "test_", 5) || (r->filter && !strstr(e->d_name, r->filter))) continue;
    if (n == cap) names = realloc(names, (size_t)(cap = cap ? 2 * cap : 256) * sizeof *names);
    names[n++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(names, (size_t)n, sizeof *names, cmp_str);
  for (int i = 0; i < n; i++) run_test(r, names[i]), free(names[i]);
  free(names);
  return n;
}

static void summary(const struct runner *r, int tests) {
  int p = 0, f = 0, s = 0, ap = 0, af = 0, as = 0;
  printf("%-28s %6s %6s %7s   %s\n", "op", "passed", "failed", "skipped", "compiled (passed/failed/skipped)");
  for (int i = 0; i < r->n_ops; i++) {
    const struct op_stats *o = &r->ops[i];
    printf("%-28s %6d %6d %7d", o->name, o->passed, o->failed, o->skipped);
    if (o->accel_passed + o->accel_failed + o->accel_skipped)
      printf("   %d/%d/%d", o->accel_passed, o->accel_failed, o->accel_skipped);
    printf("\n");
    p += o->passed, f += o->failed, s += o->skipped, ap += o->accel_passed, af += o->accel_failed, as += o->accel_skipped;
  }
  printf("onnx node tests: %d tests, %d of ops the IR lacks; of the rest %d passed, %d failed, %d skipped; "
         "compiled %d passed, %d failed, %d skipped\n", tests, r->unsupported, p, f, s, ap, af, as);
}

int main(int argc, char **argv) {
  struct runner r = {.config = "default"};
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-v")) r.verbose = 1;
    else if (!strcmp(argv[i], "--config") && i + 1 < argc) r.config = argv[++i];
    else if (!strcmp(argv[i], "--filter") && i + 1 < argc) r.filter = argv[++i];
    else if (!strcmp(argv[i], "--tsim")) r.tsim = (loom_device *)1; /* opened below */
    else r.dir = argv[i];
  }
  if (!r.dir) return fprintf(stderr, "usage: onnx_node_runner DIR [--config NAME] [--filter TEXT] [--tsim] [-v]\n"), 2;
  char msg[LOOM_MSG_MAX], opts[80];
  snprintf(opts, sizeof opts, "config=%s", r.config);
  if (loom_device_open("fsim", opts, &r.dev, msg)) return fprintf(stderr, "onnx_node_runner: %s\n", msg), 2;
  if (r.tsim && loom_device_open("tsim", opts, &r.tsim, msg)) {
    loom_device_close(r.dev);
    return fprintf(stderr, "onnx_node_runner: --tsim: %s\n", msg), 2;
  }
  int tests = run_all(&r);
  loom_device_close(r.dev);
  if (r.tsim) loom_device_close(r.tsim);
  if (tests < 0) return 2;
  summary(&r, tests);
  return r.failures ? 1 : 0;
}
