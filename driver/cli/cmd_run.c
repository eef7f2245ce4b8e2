/*
 * cmd_run.c - `loom run MODEL.loom`: load a model on a backend, feed it
 * .npy inputs, run it, write or summarize its outputs.
 *
 * The device is opened for the model's own configuration unless --config
 * says otherwise, so `loom run x.loom` works for a binary of any
 * configuration fsim knows, and `--config` against a binary of another
 * configuration is refused by the loader with both names.  Everything
 * about the inputs (names, types, shapes) is checked by libloom; this file
 * only adds the file names to its messages.  Exit status: 1 for anything
 * the user can fix, 2 when the device stopped a job (error or timeout).
 * The profile and trace reports are profile.c's.  Output files are checked
 * against the inputs before anything runs and written atomically
 * (cli_output.c); a long run shows progress on stderr (driver/core/
 * progress.c, fed by loom_model_set_progress); native host code runs only
 * when signed with the user's key or with --trust-native (docs/hostcode.md),
 * and cli_native_notice says so in one line otherwise.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "driver/cli/profile.h"
#include "driver/core/loomfile.h"
#include "driver/core/npy.h"
#include "driver/core/progress.h"
#include "driver/core/readfile.h"
#include "loom/isa.h"
#include "loom/loom.h"

#define SUMMARY_VALUES 8

struct tensor_spec {
  char name[128];
  const char *path;
};

struct run_args {
  const char *model, *backend, *config, *options;
  struct tensor_spec *in, *out;
  int n_in, n_out;
  unsigned long timeout_ms;
  int counters;
  int timing; /* --timing: fsim's timing model estimates the cycle counters */
  int profile;                              /* --profile */
  int trust_native;                         /* --trust-native */
  int quiet;                                /* -q: no progress display */
  const char *profile_json, *trace_path;    /* --profile-json, --trace */
};

struct run_ctx {
  struct run_args a;
  uint8_t *bytes;
  size_t size;
  loom_device *dev;
  loom_model *m;
};

/* "NAME=PATH", or just "PATH" (name left empty: the model's only tensor). */
static int parse_spec(const char *opt, const char *spec, struct tensor_spec *t) {
  const char *eq = strchr(spec, '=');
  t->name[0] = '\0';
  t->path = spec;
  if (!eq) return 1;
  if ((size_t)(eq - spec) >= sizeof t->name || eq == spec || !eq[1])
    return cli_usage_error(&cli_cmd_run, "%s '%s': expected NAME=FILE.npy", opt, spec), 0;
  memcpy(t->name, spec, (size_t)(eq - spec));
  t->name[eq - spec] = '\0';
  t->path = eq + 1;
  return 1;
}

/* --profile, --profile-json FILE, --trace FILE (same return as parse_option). */
static int parse_profile_option(struct run_args *a, int argc, char **argv, int *i) {
  int r;
  if (!strcmp(argv[*i], "--profile")) return a->profile = 1;
  if ((r = cli_option_value(&cli_cmd_run, argc, argv, i, "--profile-json", NULL, &a->profile_json)))
    return r;
  return cli_option_value(&cli_cmd_run, argc, argv, i, "--trace", NULL, &a->trace_path);
}

/* One option at argv[*i]: 1 handled, 0 not an option of run, -1 error. */
static int parse_option(struct run_args *a, int argc, char **argv, int *i) {
  const char *v;
  int r;
  if ((r = cli_option_value(&cli_cmd_run, argc, argv, i, "--backend", "-b", &a->backend))) return r;
  if ((r = cli_option_value(&cli_cmd_run, argc, argv, i, "--config", "-c", &a->config))) return r;
  if ((r = cli_option_value(&cli_cmd_run, argc, argv, i, "--options", NULL, &a->options))) return r;
  if ((r = cli_option_value(&cli_cmd_run, argc, argv, i, "--input", "-i", &v)))
    return r < 0 ? r : parse_spec("--input", v, &a->in[a->n_in++]) ? 1 : -1;
  if ((r = cli_option_value(&cli_cmd_run, argc, argv, i, "--output", "-o", &v)))
    return r < 0 ? r : parse_spec("--output", v, &a->out[a->n_out++]) ? 1 : -1;
  if ((r = cli_option_value(&cli_cmd_run, argc, argv, i, "--timeout", NULL, &v))) {
    if (r > 0 && !cli_parse_u32(v, &a->timeout_ms))
      return cli_usage_error(&cli_cmd_run, "--timeout '%s' is not a number of milliseconds", v), -1;
    return r;
  }
  if (!strcmp(argv[*i], "--counters")) return a->counters = 1;
  if (!strcmp(argv[*i], "--timing")) return a->timing = 1;
  if (!strcmp(argv[*i], "--trust-native")) return a->trust_native = 1;
  if (!strcmp(argv[*i], "--quiet") || !strcmp(argv[*i], "-q")) return a->quiet = 1;
  return parse_profile_option(a, argc, argv, i);
}

/* Returns -1 to continue, else the exit status. */
static int parse_args(struct run_args *a, int argc, char **argv) {
  a->backend = "fsim";
  a->in = calloc((size_t)argc, sizeof *a->in);
  a->out = calloc((size_t)argc, sizeof *a->out);
  if (!a->in || !a->out) return cli_error("out of memory");
  for (int i = 1; i < argc; i++) {
    if (cli_is_help(argv[i])) {
      cli_print_help(&cli_cmd_run, stdout);
      return CLI_OK;
    }
    int r = parse_option(a, argc, argv, &i);
    if (r < 0) return CLI_USER;
    if (r > 0) continue;
    if (argv[i][0] == '-' && argv[i][1])
      return cli_usage_error(&cli_cmd_run, "unknown option '%s'", argv[i]);
    if (a->model) return cli_usage_error(&cli_cmd_run, "unexpected argument '%s'", argv[i]);
    a->model = argv[i];
  }
  if (!a->model) return cli_usage_error(&cli_cmd_run, "no model file given");
  if (a->timing && strcmp(a->backend, "fsim"))
    return cli_usage_error(&cli_cmd_run, "--timing is fsim's timing model: it needs --backend fsim");
  return -1;
}

/* The configuration to open: --config, else the one the model was built for. */
static int pick_config(struct run_ctx *c, const char **config) {
  char msg[LOOM_MSG_MAX];
  struct loom_file f;
  *config = c->a.config;
  if (loom_read_file(c->a.model, LOOM_FILE_MAX_SIZE, &c->bytes, &c->size, msg) != LOOM_OK ||
      loom_file_parse(c->bytes, c->size, c->a.model, &f, msg) != LOOM_OK)
    return cli_error("%s", msg);
  if (!*config) *config = cli_model_config(c->a.model, f.config_hash);
  loom_file_free(&f);
  return *config ? CLI_OK : CLI_USER;
}

static int open_and_load(struct run_ctx *c) {
  const char *config;
  char msg[LOOM_MSG_MAX], options[LOOM_MSG_MAX + 64];
  int r = pick_config(c, &config);
  if (r != CLI_OK) return r;
  snprintf(options, sizeof options, "config=%s%s%s%s%s", config, c->a.timing ? ",timing=1" : "",
           c->a.trust_native ? ",trust_native=1" : "", c->a.options ? "," : "", c->a.options ? c->a.options : "");
  if (loom_device_open(c->a.backend, options, &c->dev, msg) != LOOM_OK)
    return cli_error("%s", msg);
  if (loom_model_load_memory(c->dev, c->bytes, c->size, c->a.model, &c->m, msg) != LOOM_OK)
    return cli_error("%s", msg);
  cli_native_notice(c->m, c->a.model);
  return CLI_OK;
}

/* The tensor a spec names; an empty name means the only one there is. */
static const char *spec_name(struct run_ctx *c, struct tensor_spec *t, int input) {
  int n = input ? loom_model_input_count(c->m) : loom_model_output_count(c->m);
  if (t->name[0]) return t->name;
  if (n != 1) {
    cli_error("%s: the model has %d %ss: name one as NAME=%s", t->path, n,
              input ? "input" : "output", t->path);
    return NULL;
  }
  return (input ? loom_model_input(c->m, 0) : loom_model_output(c->m, 0))->name;
}

static int set_input(struct run_ctx *c, struct tensor_spec *t) {
  char msg[LOOM_MSG_MAX];
  struct loom_npy npy;
  const char *name = spec_name(c, t, 1);
  if (!name) return CLI_USER;
  if (loom_npy_read(t->path, &npy, msg) != LOOM_OK) return cli_error("%s", msg);
  loom_status st = LOOM_E_INVALID;
  if (npy.rank > LOOM_MAX_RANK)
    cli_error("%s: rank %d exceeds %d", t->path, npy.rank, LOOM_MAX_RANK);
  else if ((st = loom_model_set_input(c->m, name, npy.dtype, npy.rank, npy.dims, npy.data)))
    cli_error("%s: %s", t->path, loom_device_error(c->dev));
  loom_npy_free(&npy);
  return st == LOOM_OK ? CLI_OK : CLI_USER;
}

static int find_input(struct run_ctx *c, const char *name) {
  for (int j = 0; j < c->a.n_in; j++) {
    const char *given = spec_name(c, &c->a.in[j], 1);
    if (given && !strcmp(given, name)) return 1;
  }
  return 0;
}

static int set_inputs(struct run_ctx *c) {
  for (int i = 0; i < c->a.n_in; i++)
    if (set_input(c, &c->a.in[i]) != CLI_OK) return CLI_USER;
  for (int i = 0; i < loom_model_input_count(c->m); i++) {
    const char *name = loom_model_input(c->m, i)->name;
    if (!find_input(c, name))
      return cli_error("%s: input '%s' not given (use --input %s=FILE.npy)", c->a.model, name,
                       name);
  }
  return CLI_OK;
}

static const struct loom_tensor_info *output_info(struct run_ctx *c, const char *name) {
  for (int i = 0; i < loom_model_output_count(c->m); i++)
    if (!strcmp(loom_model_output(c->m, i)->name, name)) return loom_model_output(c->m, i);
  return NULL;
}

/* Checks every --output name before anything runs. */
static int check_outputs(struct run_ctx *c) {
  for (int i = 0; i < c->a.n_out; i++) {
    const char *name = spec_name(c, &c->a.out[i], 0);
    if (!name) return CLI_USER;
    if (!output_info(c, name)) return cli_error("%s: no output named '%s'", c->a.model, name);
  }
  return CLI_OK;
}

static size_t info_elems(const struct loom_tensor_info *t) {
  size_t n = 1;
  for (int i = 0; i < t->rank; i++) n *= (size_t)t->dims[i];
  return n;
}

/* Reads an output into a malloc'd array; NULL after printing an error. */
static void *fetch(struct run_ctx *c, const struct loom_tensor_info *t, size_t *n) {
  *n = info_elems(t);
  size_t bytes = *n * loom_dtype_size(t->dtype);
  void *data = malloc(bytes ? bytes : 1);
  if (!data) return cli_error("out of memory"), NULL;
  if (loom_model_get_output(c->m, t->name, data, bytes) != LOOM_OK) {
    cli_error("%s: %s", c->a.model, loom_device_error(c->dev));
    free(data);
    return NULL;
  }
  return data;
}

static void print_value(const void *data, loom_dtype dt, size_t i) {
  switch (dt) {
  case LOOM_DT_I8: printf("%d", ((const int8_t *)data)[i]); break;
  case LOOM_DT_U8: case LOOM_DT_BOOL: printf("%u", ((const uint8_t *)data)[i]); break;
  case LOOM_DT_I16: printf("%d", ((const int16_t *)data)[i]); break;
  case LOOM_DT_U16: case LOOM_DT_BF16: case LOOM_DT_F16: printf("0x%04x", ((const uint16_t *)data)[i]); break;
  case LOOM_DT_I32: printf("%d", ((const int32_t *)data)[i]); break;
  case LOOM_DT_U32: printf("%u", ((const uint32_t *)data)[i]); break;
  case LOOM_DT_I64: printf("%lld", (long long)((const int64_t *)data)[i]); break;
  case LOOM_DT_U64: printf("%llu", (unsigned long long)((const uint64_t *)data)[i]); break;
  case LOOM_DT_F32: printf("%g", (double)((const float *)data)[i]); break;
  case LOOM_DT_F64: printf("%g", ((const double *)data)[i]); break;
  default: printf("?"); break;
  }
}

/* "C: int8 [64, 64] = [12, -3, ...] (4096 values)" */
static void summarize(const struct loom_tensor_info *t, const void *data, size_t n) {
  printf("%s: %s [", t->name, loom_dtype_name(t->dtype));
  for (int i = 0; i < t->rank; i++) printf("%s%lld", i ? ", " : "", (long long)t->dims[i]);
  printf("] = [");
  for (size_t i = 0; i < n && i < SUMMARY_VALUES; i++) {
    if (i) printf(", ");
    print_value(data, t->dtype, i);
  }
  printf("%s] (%zu values)\n", n > SUMMARY_VALUES ? ", ..." : "", n);
}

static int write_output(struct run_ctx *c, const struct loom_tensor_info *t, const char *path) {
  char msg[LOOM_MSG_MAX];
  size_t n;
  void *data = fetch(c, t, &n);
  if (!data) return CLI_USER;
  /* numpy has no bfloat16: its raw bits go out as uint16 */
  loom_status st = loom_npy_write(path, t->dtype == LOOM_DT_BF16 ? LOOM_DT_U16 : t->dtype, t->rank, t->dims, data, msg);
  free(data);
  return st == LOOM_OK ? CLI_OK : cli_error("%s", msg);
}

static int outputs(struct run_ctx *c) {
  for (int i = 0; i < c->a.n_out; i++) {
    const char *name = spec_name(c, &c->a.out[i], 0);
    if (write_output(c, output_info(c, name), c->a.out[i].path) != CLI_OK) return CLI_USER;
  }
  if (c->a.n_out) return CLI_OK;
  for (int i = 0; i < loom_model_output_count(c->m); i++) {
    size_t n;
    const struct loom_tensor_info *t = loom_model_output(c->m, i);
    void *data = fetch(c, t, &n);
    if (!data) return CLI_USER;
    summarize(t, data, n);
    free(data);
  }
  return CLI_OK;
}

static void print_counters(const char *title, const uint64_t *v) {
  printf("%s:\n", title);
  for (int k = 0; k < LOOM_CNT_COUNT; k++)
    printf("  %-20s %llu\n", loom_counter_name((uint32_t)k), (unsigned long long)v[k]);
}

static void counters(struct run_ctx *c) {
  uint64_t total[LOOM_CNT_COUNT] = {0};
  int jobs = loom_model_job_count(c->m);
  for (int j = 0; j < jobs; j++) {
    const struct loom_job_result *r = loom_model_job_result(c->m, j);
    char title[48];
    snprintf(title, sizeof title, "job %d counters%s", j, c->a.timing ? " (cycles estimated)" : "");
    print_counters(title, r->counters);
    for (int k = 0; k < LOOM_CNT_COUNT; k++) total[k] += r->counters[k];
  }
  if (jobs > 1)
    print_counters(c->a.timing ? "total counters (cycles estimated)" : "total counters", total);
}

/* Timelines are recorded only for --trace: counters are enough for a profile. */
static int start_trace(struct run_ctx *c) {
  if (!c->a.trace_path || loom_model_set_trace(c->m, 1) == LOOM_OK) return CLI_OK;
  return cli_error("--trace: %s", loom_device_error(c->dev));
}

static int reports(struct run_ctx *c) {
  struct profile_ctx p = {c->m, loom_device_config(c->dev), c->a.model, loom_device_backend(c->dev)};
  if (c->a.profile) profile_print(&p, stdout);
  if (c->a.profile_json && profile_write_json(&p, c->a.profile_json) != CLI_OK) return CLI_USER;
  if (c->a.trace_path && profile_write_trace(&p, c->a.trace_path) != CLI_OK) return CLI_USER;
  return CLI_OK;
}

static int run_model(struct run_ctx *c) {
  if (start_trace(c) != CLI_OK) return CLI_USER;
  struct loom_progress *prog = loom_progress_start(stderr, "loom run", c->a.quiet);
  if (prog) loom_model_set_progress(c->m, cli_show_run_progress, prog);
  loom_status st = loom_model_run(c->m, (uint32_t)c->a.timeout_ms);
  loom_model_set_progress(c->m, NULL, NULL);
  loom_progress_finish(prog);
  if (c->a.counters) counters(c);
  if (st == LOOM_OK && reports(c) != CLI_OK) return CLI_USER;
  if (st == LOOM_OK) return outputs(c);
  cli_error("%s: %s", c->a.model, loom_device_error(c->dev));
  return st == LOOM_E_JOB || st == LOOM_E_TIMEOUT ? CLI_JOB : CLI_USER;
}

/* Every output file: no input, and no other output (checked before anything runs). */
static int check_files(const struct run_args *a) {
  const char **inputs = calloc((size_t)a->n_in + 2, sizeof *inputs);
  const char **outs = calloc((size_t)a->n_out + 2, sizeof *outs);
  int r = inputs && outs ? CLI_OK : cli_error("out of memory"), n = 0;
  for (int i = 0; r == CLI_OK && i <= a->n_in; i++) inputs[i] = i ? a->in[i - 1].path : a->model;
  for (int i = 0; r == CLI_OK && i < a->n_out; i++) outs[n++] = a->out[i].path;
  if (r == CLI_OK && a->profile_json) outs[n++] = a->profile_json;
  if (r == CLI_OK && a->trace_path) outs[n++] = a->trace_path;
  for (int i = 0; r == CLI_OK && i < n; i++) {
    r = cli_check_output(outs[i], inputs);
    for (int j = 0; r == CLI_OK && j < i; j++)
      if (!strcmp(outs[i], outs[j])) r = cli_error("%s: named as two outputs", outs[i]);
  }
  free(inputs);
  free(outs);
  return r;
}

static int run_run(int argc, char **argv) {
  struct run_ctx c;
  memset(&c, 0, sizeof c);
  int r = parse_args(&c.a, argc, argv);
  if (r < 0) r = check_files(&c.a) == CLI_OK ? -1 : CLI_USER;
  if (r < 0) r = open_and_load(&c);
  if (r == CLI_OK && c.m) r = check_outputs(&c);
  if (r == CLI_OK && c.m) r = set_inputs(&c);
  if (r == CLI_OK && c.m) r = run_model(&c);
  loom_model_free(c.m);
  loom_device_close(c.dev);
  free(c.bytes);
  free(c.a.in);
  free(c.a.out);
  return r;
}

const struct cli_cmd cli_cmd_run = {
    .name = "run",
    .summary = "run a .loom model on a backend with .npy inputs",
    .help =
        "usage: loom run MODEL.loom [options]\n"
        "\n"
        "Loads MODEL.loom on a backend, sets its inputs from .npy files, runs every\n"
        "step and writes or prints its outputs.\n"
        "\n"
        "options:\n"
        "  -b, --backend NAME      backend to run on (default fsim; see 'loom devices')\n"
        "  -c, --config NAME|FILE  hardware configuration, a name or a configuration\n"
        "                          file (default: the model's own, when it has a name)\n"
        "      --options K=V,...   extra backend options (e.g. lib=PATH for tsim)\n"
        "  -i, --input NAME=FILE   set input NAME from a .npy file (repeatable); a\n"
        "                          model with one input also takes just FILE\n"
        "  -o, --output NAME=FILE  write output NAME to a .npy file (repeatable); without\n"
        "                          any, every output is summarized on stdout\n"
        "      --timeout MS        per-job timeout in milliseconds (0: backend default)\n"
        "      --counters          print the performance counters of every job\n"
        "  -q, --quiet             no progress display (shown on stderr for runs\n"
        "                          longer than 2 s)\n"
        "      --trust-native      run the model's native host code even when it is not\n"
        "                          signed with your key (docs/hostcode.md)\n"
        "      --timing            fsim only: estimate the cycle counters with fsim's\n"
        "                          timing model (option timing=1; see docs/fsim-timing.md)\n"
        "      --profile           print a table per layer: cycles, MACs, utilization,\n"
        "                          DMA bytes, roofline bound, stalls by cause\n"
        "      --profile-json FILE the same figures as JSON\n"
        "      --trace FILE        write a Chrome trace (Perfetto, chrome://tracing) of\n"
        "                          every instruction; needs a backend with a clock (tsim,\n"
        "                          fsim with timing)\n"
        "  -h, --help              show this help\n"
        "\n"
        "Inputs take the tensor's type (float32 for a quantized int8 tensor, which\n"
        "is then quantized; its stored type is accepted too) and its exact shape.\n"
        "\n"
        "exit status: 0 ok, 1 usage or input error, 2 a job failed or timed out\n"
        "\n"
        "example:\n"
        "  loom run gemm64.loom --input A=a.npy --input B=b.npy --output C=c.npy\n",
    .run = run_run,
};
