/*
 * cmd_eval.c - `loom eval MODEL.loom --data X.npy --labels Y.npy`: run a
 * classifier over a labelled data set and report its top-1 accuracy and
 * what the accelerator spent on it.
 *
 * X holds N samples stacked on a new leading axis: its shape is N followed
 * by the shape of the model's (single) input, or N replacing a leading 1
 * (a [1,1,8,8] input takes a [N,1,8,8] file).  Y holds N integer labels.
 * The model is loaded once and run N times, so the figures are those of a
 * resident model: summed job counters, cycles per sample (timed backends
 * only: tsim and boards), the GEMM core's occupancy (GEMM_OPS / CYCLES) and
 * the latency the cycle count gives at the configuration's clock.  Host
 * steps run on this CPU and are not in the cycle count; the report says so.
 * The progress display counts samples and follows the current one's steps
 * (loom_model_set_progress); errors are printed after it is cleared.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "driver/core/loomfile.h"
#include "driver/core/npy.h"
#include "driver/core/progress.h"
#include "loom/loom.h"

struct eval_args {
  const char *model, *backend, *config, *options, *data, *labels;
  unsigned long limit, timeout_ms;
  int quiet, trust_native;
};

struct eval_totals {
  uint64_t counters[LOOM_CNT_COUNT];
  uint64_t correct, samples;
};

static int parse_option(struct eval_args *a, int argc, char **argv, int *i) {
  const char *v;
  int r;
  if ((r = cli_option_value(&cli_cmd_eval, argc, argv, i, "--backend", "-b", &a->backend))) return r;
  if ((r = cli_option_value(&cli_cmd_eval, argc, argv, i, "--config", "-c", &a->config))) return r;
  if ((r = cli_option_value(&cli_cmd_eval, argc, argv, i, "--options", NULL, &a->options))) return r;
  if ((r = cli_option_value(&cli_cmd_eval, argc, argv, i, "--data", "-d", &a->data))) return r;
  if ((r = cli_option_value(&cli_cmd_eval, argc, argv, i, "--labels", "-l", &a->labels))) return r;
  if ((r = cli_option_value(&cli_cmd_eval, argc, argv, i, "--limit", "-n", &v))) {
    if (r > 0 && !cli_parse_u32(v, &a->limit))
      return cli_usage_error(&cli_cmd_eval, "--limit '%s' is not a number", v), -1;
    return r;
  }
  if ((r = cli_option_value(&cli_cmd_eval, argc, argv, i, "--timeout", NULL, &v))) {
    if (r > 0 && !cli_parse_u32(v, &a->timeout_ms))
      return cli_usage_error(&cli_cmd_eval, "--timeout '%s' is not a number of milliseconds", v), -1;
    return r;
  }
  if (!strcmp(argv[*i], "--quiet") || !strcmp(argv[*i], "-q")) return a->quiet = 1;
  if (!strcmp(argv[*i], "--trust-native")) return a->trust_native = 1;
  return 0;
}

/* Returns -1 to continue, else the exit status. */
static int parse_args(struct eval_args *a, int argc, char **argv) {
  a->backend = "fsim";
  for (int i = 1; i < argc; i++) {
    if (cli_is_help(argv[i])) {
      cli_print_help(&cli_cmd_eval, stdout);
      return CLI_OK;
    }
    int r = parse_option(a, argc, argv, &i);
    if (r < 0) return CLI_USER;
    if (r > 0) continue;
    if (argv[i][0] == '-' && argv[i][1])
      return cli_usage_error(&cli_cmd_eval, "unknown option '%s'", argv[i]);
    if (a->model) return cli_usage_error(&cli_cmd_eval, "unexpected argument '%s'", argv[i]);
    a->model = argv[i];
  }
  if (!a->model) return cli_usage_error(&cli_cmd_eval, "no model file given");
  if (!a->data || !a->labels) return cli_usage_error(&cli_cmd_eval, "--data and --labels are required");
  return -1;
}

/* Elements of one sample of X, if X's shape is N x the input's shape, or
 * N replacing the input's leading 1; 0 (after an error) otherwise. */
static size_t sample_elems(const struct loom_npy *x, const struct loom_tensor_info *in,
                           const char *path) {
  int lead = (in->rank == x->rank && in->dims[0] == 1) ? 1 : 0;
  size_t n = 1;
  if (x->rank != in->rank + 1 - lead) goto bad;
  for (int i = lead; i < in->rank; i++) {
    if (x->dims[i + 1 - lead] != in->dims[i]) goto bad;
    n *= (size_t)in->dims[i];
  }
  return n;
bad:
  cli_error("%s: shape does not stack samples of input '%s' (rank %d) on axis 0", path, in->name,
            in->rank);
  return 0;
}

static int64_t label_at(const struct loom_npy *y, uint64_t i) {
  switch (y->dtype) {
  case LOOM_DT_I8: return ((const int8_t *)y->data)[i];
  case LOOM_DT_U8: return ((const uint8_t *)y->data)[i];
  case LOOM_DT_I32: return ((const int32_t *)y->data)[i];
  default: return -1;
  }
}

static int argmax(const float *v, size_t n) {
  size_t best = 0;
  for (size_t i = 1; i < n; i++)
    if (v[i] > v[best]) best = i;
  return (int)best;
}

static size_t info_elems(const struct loom_tensor_info *t) {
  size_t n = 1;
  for (int i = 0; i < t->rank; i++) n *= (size_t)t->dims[i];
  return n;
}

static void add_counters(loom_model *m, struct eval_totals *t) {
  for (int j = 0; j < loom_model_job_count(m); j++) {
    const struct loom_job_result *r = loom_model_job_result(m, j);
    for (int c = 0; c < LOOM_CNT_COUNT; c++) t->counters[c] += r->counters[c];
  }
}

/* The display: samples done, and how far the current one is. */
struct eval_progress {
  struct loom_progress *display;
  uint64_t sample, samples;
};

static void show_sample(void *ctx, const struct loom_run_progress *p) {
  struct eval_progress *e = ctx;
  char label[128];
  snprintf(label, sizeof label, "sample %llu/%llu, step %d/%d %.50s", (unsigned long long)e->sample + 1,
           (unsigned long long)e->samples, p->step < p->steps ? p->step + 1 : p->steps, p->steps,
           p->step < p->steps ? p->name : "");
  loom_progress_update(e->display, ((double)e->sample + p->fraction) / (double)e->samples, label);
}

/* Runs sample i; returns the predicted class, or -1 with the device's
 * message (printed by the caller, once the display is gone). */
static int run_sample(loom_model *m, const struct eval_args *a, const struct loom_npy *x, size_t elems,
                      uint64_t i, float *out, size_t out_elems) {
  const struct loom_tensor_info *in = loom_model_input(m, 0);
  const uint8_t *base = (const uint8_t *)x->data + i * elems * loom_dtype_size(x->dtype);
  if (loom_model_set_input(m, in->name, x->dtype, in->rank, in->dims, base) != LOOM_OK ||
      loom_model_run(m, (uint32_t)a->timeout_ms) != LOOM_OK ||
      loom_model_get_output(m, loom_model_output(m, 0)->name, out, out_elems * sizeof *out) !=
          LOOM_OK)
    return -1;
  return argmax(out, out_elems);
}

static void print_report(const struct eval_args *a, const struct loom_hw_config *cfg,
                         const struct eval_totals *t) {
  uint64_t cycles = t->counters[LOOM_CNT_CYCLES], ops = t->counters[LOOM_CNT_GEMM_OPS];
  printf("accuracy: %.2f%% (%" PRIu64 " of %" PRIu64 " samples) on %s, config %s\n",
         100.0 * (double)t->correct / (double)t->samples, t->correct, t->samples, a->backend,
         cfg->name);
  printf("GEMM micro-ops: %" PRIu64 " (%.0f MACs per sample at %u MACs each)\n", ops,
         (double)ops * loom_hw_peak_macs(cfg) / (double)t->samples, loom_hw_peak_macs(cfg));
  if (!cycles) {
    printf("cycles: not measured by the %s backend (use --backend tsim)\n", a->backend);
    return;
  }
  double per = (double)cycles / (double)t->samples;
  printf("cycles: %" PRIu64 " in all, %.0f per sample\n", cycles, per);
  printf("GEMM-core occupancy: %.1f%% (GEMM micro-ops / cycles)\n", 100.0 * (double)ops / (double)cycles);
  printf("latency: %.1f us per sample at %d MHz (accelerator jobs only; host steps run on this CPU)\n",
         per / cfg->clock_mhz, cfg->clock_mhz);
}

static int evaluate(const struct eval_args *a, loom_device *dev, loom_model *m,
                    const struct loom_npy *x, const struct loom_npy *y) {
  struct eval_totals t = {{0}, 0, 0};
  if (loom_model_input_count(m) != 1 || loom_model_output_count(m) != 1)
    return cli_error("%s: eval needs a model with one input and one output", a->model);
  size_t elems = sample_elems(x, loom_model_input(m, 0), a->data);
  const struct loom_tensor_info *o = loom_model_output(m, 0);
  if (!elems) return CLI_USER;
  if (o->dtype != LOOM_DT_F32) return cli_error("%s: output '%s' is not float32", a->model, o->name);
  uint64_t n = (uint64_t)x->dims[0];
  if (y->rank != 1 || (uint64_t)y->dims[0] != n || y->dtype == LOOM_DT_F32)
    return cli_error("%s: expected %" PRIu64 " integer labels", a->labels, n);
  if (a->limit && a->limit < n) n = a->limit;
  float *out = malloc(info_elems(o) * sizeof *out);
  if (!out) return cli_error("out of memory");
  struct eval_progress ep = {loom_progress_start(stderr, "loom eval", a->quiet), 0, n};
  if (ep.display) loom_model_set_progress(m, show_sample, &ep);
  int pred = 0;
  for (ep.sample = 0; ep.sample < n; ep.sample++) {
    if ((pred = run_sample(m, a, x, elems, ep.sample, out, info_elems(o))) < 0) break;
    t.correct += pred == label_at(y, ep.sample);
    t.samples++;
    add_counters(m, &t);
  }
  loom_model_set_progress(m, NULL, NULL);
  loom_progress_finish(ep.display);
  free(out);
  if (pred < 0)
    return cli_error("%s: sample %" PRIu64 ": %s", a->model, ep.sample, loom_device_error(dev)), CLI_JOB;
  print_report(a, loom_device_config(dev), &t);
  return CLI_OK;
}

static int eval_loaded(const struct eval_args *a, loom_device *dev) {
  char msg[LOOM_MSG_MAX];
  loom_model *m = NULL;
  struct loom_npy x = {0}, y = {0};
  int r = CLI_USER;
  if (loom_model_load(dev, a->model, &m, msg) != LOOM_OK) return cli_error("%s", msg);
  cli_native_notice(m, a->model);
  if (loom_npy_read(a->data, &x, msg) != LOOM_OK) cli_error("%s", msg);
  else if (loom_npy_read(a->labels, &y, msg) != LOOM_OK) cli_error("%s", msg);
  else r = evaluate(a, dev, m, &x, &y);
  loom_npy_free(&x);
  loom_npy_free(&y);
  loom_model_free(m);
  return r;
}

/* The configuration the model was built for, unless --config names one. */
static int model_config(struct eval_args *a) {
  char msg[LOOM_MSG_MAX];
  struct loom_file f;
  if (a->config) return CLI_OK;
  if (loom_file_read(a->model, &f, msg) != LOOM_OK) return cli_error("%s", msg);
  a->config = cli_model_config(a->model, f.config_hash);
  loom_file_free(&f);
  return a->config ? CLI_OK : CLI_USER;
}

static int run_eval(int argc, char **argv) {
  struct eval_args a = {0};
  char msg[LOOM_MSG_MAX], options[LOOM_MSG_MAX + 64];
  int r = parse_args(&a, argc, argv);
  if (r >= 0) return r;
  if ((r = model_config(&a)) != CLI_OK) return r;
  snprintf(options, sizeof options, "config=%s%s%s%s", a.config, a.trust_native ? ",trust_native=1" : "",
           a.options ? "," : "", a.options ? a.options : "");
  loom_device *dev = NULL;
  if (loom_device_open(a.backend, options, &dev, msg) != LOOM_OK) return cli_error("%s", msg);
  r = eval_loaded(&a, dev);
  loom_device_close(dev);
  return r;
}

const struct cli_cmd cli_cmd_eval = {
    "eval",
    "run a classifier over a labelled data set: accuracy, cycles, latency",
    "usage: loom eval MODEL.loom --data X.npy --labels Y.npy [options]\n"
    "\n"
    "Runs the model once per sample of X (samples stacked on axis 0) and\n"
    "compares the arg-max of its output with the integer labels in Y.\n"
    "\n"
    "options:\n"
    "  -d, --data X.npy       the samples: N x the input's shape (or N in place of a leading 1)\n"
    "  -l, --labels Y.npy     N int8/uint8/int32 labels\n"
    "  -b, --backend NAME     fsim (default), tsim, linux, xrt\n"
    "  -c, --config NAME|FILE hardware configuration to open, a name or a file\n"
    "                         (default: the model's own, when it has a name)\n"
    "      --options K=V,...  extra backend options\n"
    "  -n, --limit N          evaluate only the first N samples\n"
    "      --timeout MS       per-job timeout\n"
    "      --trust-native     run native host code not signed with your key\n"
    "  -q, --quiet            no progress display (shown on stderr for runs\n"
    "                         longer than 2 s)\n"
    "\n"
    "exit status: 0 ok, 1 usage or input error, 2 a job failed or timed out\n"
    "\n"
    "example:\n"
    "  loom eval digits_cnn.loom --backend tsim --data build/models/digits_test_x.npy \\\n"
    "      --labels build/models/digits_test_y.npy\n",
    run_eval,
};
