/*
 * cmd_compile.c - `loom compile MODEL.onnx [-o OUT.loom]`: quantize (when
 * the model is float), fuse, partition and lower an ONNX model for a
 * hardware configuration, write the .loom file and print the per-layer
 * table.
 *
 * The compiler's compile_model() (sw_compiler/compile.h) does all the
 * work, host code included, and reports "file: where: what is wrong"; this
 * file parses options, writes the file and prints the report.  Host steps
 * get native code from LLVM for --host-triple, this machine by default;
 * `--host-triple none` leaves them to the runtime's portable C code.
 * `--target cpu` builds a host-only model: a float graph the LLVM graph
 * compiler takes whole as one native step (the baseline the benchmarks put
 * beside PyTorch), any other graph as one portable kernel step per node.
 * A file with native code is signed with the user's key (made on first
 * use, driver/core/hostcode_trust.c), which is the user's consent for
 * `loom run` to run that code; a key that cannot be made or read leaves
 * the file unsigned, with a warning (docs/hostcode.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "driver/core/hostcode_format.h"
#include "driver/core/progress.h"
#include "sw_compiler/compile.h"

/* Belongs in cli.h with the other subcommands (a repeated extern is
 * harmless once it is there). */
extern const struct cli_cmd cli_cmd_compile;

#define MAX_SHAPES 64

struct compile_args {
  const char *model, *out, *config, *calib, *trace, *target, *triple, *cpu, *calib_range;
  int quiet, no_im2col, no_chain, no_act, table_jobs;
  struct loom_hw_config hw; /* --config, a name or a file (default: default) */
  struct compile_input_shape shapes[MAX_SHAPES];
  char shape_names[MAX_SHAPES][128];
  int n_shapes;
};

/* "dir/net.onnx" -> "dir/net.loom" (malloc'd). */
static char *default_output(const char *src) {
  size_t n = strlen(src);
  const char *dot = strrchr(src, '.'), *slash = strrchr(src, '/');
  if (dot && (!slash || dot > slash)) n = (size_t)(dot - src);
  char *out = malloc(n + 6);
  if (out) {
    memcpy(out, src, n);
    strcpy(out + n, ".loom");
  }
  return out;
}

/* --input-shape NAME=D0,D1,...: 1, or -1 after a usage message. */
static int parse_shape(struct compile_args *a, const char *spec) {
  const struct cli_cmd *c = &cli_cmd_compile;
  const char *eq = strrchr(spec, '=');
  if (a->n_shapes == MAX_SHAPES) return cli_usage_error(c, "--input-shape: at most %d", MAX_SHAPES), -1;
  if (!eq || eq == spec || (size_t)(eq - spec) >= sizeof a->shape_names[0])
    return cli_usage_error(c, "--input-shape '%s': expected NAME=D0,D1,... (e.g. input=1,3,224,224)", spec), -1;
  struct compile_input_shape *s = &a->shapes[a->n_shapes];
  memcpy(a->shape_names[a->n_shapes], spec, (size_t)(eq - spec));
  a->shape_names[a->n_shapes][eq - spec] = 0;
  s->name = a->shape_names[a->n_shapes];
  s->rank = 0;
  for (const char *p = eq + 1; *p;) {
    char *end;
    errno = 0;
    long long v = strtoll(p, &end, 10);
    if (end == p || errno || (*end && *end != ',') || s->rank == IR_MAX_RANK || v < 1)
      return cli_usage_error(c, "--input-shape '%s': dimensions must be positive integers separated by commas "
                             "(at most %d)", spec, IR_MAX_RANK), -1;
    s->dims[s->rank++] = v;
    p = *end ? end + 1 : end;
  }
  a->n_shapes++;
  return 1;
}

/* One option at argv[*i]: 1 handled, 0 not an option, -1 error. */
static int parse_option(struct compile_args *a, int argc, char **argv, int *i) {
  const struct cli_cmd *c = &cli_cmd_compile;
  int r;
  if ((r = cli_option_value(c, argc, argv, i, "--output", "-o", &a->out))) return r;
  if ((r = cli_option_value(c, argc, argv, i, "--config", "-c", &a->config))) return r;
  if ((r = cli_option_value(c, argc, argv, i, "--calib", NULL, &a->calib))) return r;
  if ((r = cli_option_value(c, argc, argv, i, "--calib-range", NULL, &a->calib_range))) return r;
  if ((r = cli_option_value(c, argc, argv, i, "--trace", NULL, &a->trace))) return r;
  if ((r = cli_option_value(c, argc, argv, i, "--target", NULL, &a->target))) return r;
  if ((r = cli_option_value(c, argc, argv, i, "--host-triple", NULL, &a->triple))) return r;
  if ((r = cli_option_value(c, argc, argv, i, "--host-cpu", NULL, &a->cpu))) return r;
  const char *shape;
  if ((r = cli_option_value(c, argc, argv, i, "--input-shape", NULL, &shape))) return r < 0 ? r : parse_shape(a, shape);
  if (!strcmp(argv[*i], "--quiet") || !strcmp(argv[*i], "-q")) return a->quiet = 1;
  if (!strcmp(argv[*i], "--no-im2col")) return a->no_im2col = 1;
  if (!strcmp(argv[*i], "--no-chain")) return a->no_chain = 1;
  if (!strcmp(argv[*i], "--no-act")) return a->no_act = 1;
  if (!strcmp(argv[*i], "--table-jobs")) return a->table_jobs = 1;
  return 0;
}

/* --calib-range minmax|mse|percentile=P: the COMPILE_* flag and P; -1 when
 * the text is none of them. */
static int calib_range_flags(const char *s, unsigned *flags, double *p) {
  unsigned f = 0;
  double v = 0;
  char *end;
  if (!strcmp(s, "minmax")) f = 0;
  else if (!strcmp(s, "mse")) f = COMPILE_CLIP_MSE;
  else if (!strncmp(s, "percentile=", 11) && (v = strtod(s + 11, &end), end != s + 11 && !*end) && v > 50.0 && v <= 100.0)
    f = COMPILE_CLIP_PERCENTILE;
  else return -1;
  if (flags) *flags = f;
  if (p) *p = v;
  return 0;
}

/* Returns -1 to go on, else the exit status. */
static int parse_args(struct compile_args *a, int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (cli_is_help(argv[i])) {
      cli_print_help(&cli_cmd_compile, stdout);
      return CLI_OK;
    }
    int r = parse_option(a, argc, argv, &i);
    if (r < 0) return CLI_USER;
    if (r > 0) continue;
    if (argv[i][0] == '-' && argv[i][1])
      return cli_usage_error(&cli_cmd_compile, "unknown option '%s'", argv[i]);
    if (a->model) return cli_usage_error(&cli_cmd_compile, "unexpected argument '%s'", argv[i]);
    a->model = argv[i];
  }
  if (!a->model) return cli_usage_error(&cli_cmd_compile, "no model file given");
  if (a->target && strcmp(a->target, "accel") && strcmp(a->target, "cpu"))
    return cli_usage_error(&cli_cmd_compile, "--target '%s': expected accel or cpu", a->target);
  if (a->calib_range && calib_range_flags(a->calib_range, NULL, NULL))
    return cli_usage_error(&cli_cmd_compile, "--calib-range '%s': expected minmax, mse or percentile=P (50 < P <= 100)",
                           a->calib_range);
  char msg[LOOM_MSG_MAX];
  if (loom_hw_config_resolve(a->config ? a->config : "default", &a->hw, msg, sizeof msg))
    return cli_error("%s: --config: %s", a->model, msg);
  return -1;
}

/* The compiler's progress (calibration, tiling, host code) on the display. */
static void show_stage(void *ctx, const char *stage, int done, int total) {
  char label[64];
  if (total > 0) snprintf(label, sizeof label, "%s %d/%d", stage, done, total);
  else snprintf(label, sizeof label, "%s", stage);
  loom_progress_update(ctx, total > 0 ? (double)done / total : -1, label);
}

/* Ends the progress display, before anything is printed (a bar would run into it). */
static void progress_done(struct loom_progress **prog) {
  loom_progress_finish(*prog);
  *prog = NULL;
}

/* Signs *bytes when it carries native code; sets *signed_by to the key's
 * path (empty when unsigned).  Only an out-of-memory is an error: without
 * a key the file stays unsigned, and `loom run` says so when it loads it. */
static int sign(const char *out, uint8_t **bytes, size_t *size, char *signed_by, size_t n) {
  struct loom_key k;
  struct loom_file f;
  char msg[LOOM_MSG_MAX];
  uint8_t *p;
  size_t m;
  signed_by[0] = 0;
  if (loom_file_parse(*bytes, *size, out, &f, msg) != LOOM_OK) return cli_error("%s", msg);
  int native = f.hostcode != NULL;
  loom_file_free(&f);
  if (!native) return CLI_OK;
  if (loom_key_load(1, &k, msg) != LOOM_OK) {
    fprintf(stderr, "loom: warning: %s; %s is not signed, so 'loom run' uses its native code only "
            "with --trust-native\n", msg, out);
    return CLI_OK;
  }
  if (loom_file_sign(*bytes, *size, out, &k, &p, &m, msg) != LOOM_OK) return cli_error("%s", msg);
  free(*bytes);
  *bytes = p, *size = m;
  snprintf(signed_by, n, "%s", k.path);
  return CLI_OK;
}

static void print_host_summary(const struct hostgen_summary *sum) {
  printf("host code: %u native step%s for %s, %u portable, %llu bytes of native code\n",
         sum->native_steps, sum->native_steps == 1 ? "" : "s", sum->triple, sum->portable_steps,
         (unsigned long long)sum->image_bytes);
  if (sum->portable_steps) printf("host code: portable %s%s\n", sum->first_portable, sum->portable_steps > 1 ? ", ..." : "");
}

static int compile(const struct compile_args *a, const char *out, struct loom_progress **prog) {
  unsigned clip = 0;
  double percentile = 0;
  if (a->calib_range) calib_range_flags(a->calib_range, &clip, &percentile); /* checked by parse_args */
  struct compile_options o = {.config = a->config, .hw = &a->hw, .calib = a->calib, .clip_percentile = percentile,
                              .flags = (a->no_im2col ? 0 : COMPILE_IM2COL) | (a->no_chain ? COMPILE_NO_CHAIN : 0) |
                                       (a->no_act ? COMPILE_NO_ACT : 0) | (a->table_jobs ? COMPILE_TABLE_JOBS : 0) | clip,
                              .target = a->target && !strcmp(a->target, "cpu") ? COMPILE_TARGET_CPU : COMPILE_TARGET_ACCEL,
                              .input_shapes = a->shapes, .n_input_shapes = a->n_shapes,
                              .host_triple = a->triple, .host_cpu = a->cpu, .progress = {show_stage, *prog}};
  struct compile_result r;
  struct ir_error err = {{0}};
  struct loom_outfile *trace = NULL;
  if (a->trace && !(o.trace = strcmp(a->trace, "-") ? cli_output_open(a->trace, &trace) : stderr))
    return CLI_USER;
  int rc = compile_model(a->model, &o, &r, &err);
  progress_done(prog); /* signing may warn, the report follows */
  /* The trace is kept when the compile fails: it shows the stages before. */
  int trace_rc = trace ? cli_output_commit(trace) : CLI_OK;
  if (rc || trace_rc != CLI_OK) {
    compile_result_free(&r);
    return rc ? cli_error("%s", err.msg) : CLI_USER;
  }
  char key[4096] = "";
  rc = sign(out, &r.bytes, &r.size, key, sizeof key);
  if (rc == CLI_OK) rc = cli_output_write(out, r.bytes, r.size);
  if (rc == CLI_OK && !a->quiet) {
    if (r.layers) compile_report_print(stdout, &r);
    if (r.native) print_host_summary(&r.host);
    if (key[0]) printf("host code: signed with your key (%s)\n", key);
    if (r.targets) compile_placement_print(stdout, &r);
    if (o.target == COMPILE_TARGET_CPU)
      printf("wrote %s (%zu bytes, target cpu%s)\n", out, r.size, r.layers ? ", host kernels" : "");
    else
      printf("wrote %s (%zu bytes, config %s%s)\n", out, r.size, r.cfg->name, r.calib_samples ? ", calibrated" : "");
  }
  compile_result_free(&r);
  return rc;
}

/* The output and the trace may be neither an input nor each other. */
static int check_outputs(const struct compile_args *a, const char *out) {
  const char *trace = a->trace && strcmp(a->trace, "-") ? a->trace : NULL, *inputs[4] = {a->model};
  int n = 1;
  if (a->calib) inputs[n++] = a->calib;
  if (cli_check_output(out, inputs) != CLI_OK) return CLI_USER;
  if (!trace) return CLI_OK;
  if (!strcmp(trace, out)) return cli_error("%s: the IR trace and the output are the same file", out);
  inputs[n++] = out; /* an existing file of that name is what --trace would replace */
  return cli_check_output(trace, inputs);
}

static int run_compile(int argc, char **argv) {
  struct compile_args a = {0};
  int r = parse_args(&a, argc, argv);
  if (r >= 0) return r;
  char *dflt = a.out ? NULL : default_output(a.model);
  if (!a.out && !dflt) return cli_error("out of memory");
  if (check_outputs(&a, a.out ? a.out : dflt) != CLI_OK) return free(dflt), CLI_USER;
  struct loom_progress *prog = loom_progress_start(stderr, "loom compile", a.quiet);
  r = compile(&a, a.out ? a.out : dflt, &prog);
  loom_progress_finish(prog); /* when an error came first */
  free(dflt);
  return r;
}

const struct cli_cmd cli_cmd_compile = {
    .name = "compile",
    .summary = "compile an ONNX model into a .loom file",
    .help = "usage: loom compile MODEL.onnx [-o OUT.loom] [--config NAME|FILE] [--calib DIR]\n"
            "\n"
            "Compiles an ONNX model for a hardware configuration: a float model is\n"
            "quantized to int8 from calibration inputs (--calib), a quantized model\n"
            "(QuantizeLinear/DequantizeLinear, QLinearConv, QLinearMatMul) keeps its\n"
            "scales.  Convolutions, fully connected layers, pools and residual adds run\n"
            "on the accelerator; the rest (quantization at the edges, Softmax, layout\n"
            "changes) runs on the host.  Prints one row per layer: op, shape, MACs,\n"
            "tiling, DMA bytes, estimated cycles, compute- or memory-bound, utilization.\n"
            "\n"
            "options:\n"
            "  -o, --output FILE   output file (default: MODEL.loom next to the model)\n"
            "  -c, --config NAME|FILE  hardware configuration: a name or a configuration\n"
            "                      file (default: default; docs/configs.md)\n"
            "  --calib PATH        calibration inputs for a float model: a directory of\n"
            "                      .npy files (or one .npy), each one input or a batch\n"
            "  --calib-range minmax|mse|percentile=P\n"
            "                      each activation's range: the observed min and max\n"
            "                      (minmax, the default), the range of least squared\n"
            "                      int8 error (mse), or the (100-P)th to Pth percentile\n"
            "                      of its values, e.g. percentile=99.99; model inputs,\n"
            "                      outputs and float host code keep min and max\n"
            "                      (docs/quantization.md)\n"
            "  --no-im2col         never fold small-channel stem convolutions with a\n"
            "                      host-side im2col (folding needs the runtime's IM2COL\n"
            "                      host op)\n"
            "  --no-chain          run every convolution as its own job (no fused\n"
            "                      1x1 -> depthwise -> 1x1 chains)\n"
            "  --no-act            keep Sigmoid, SiLU, HardSwish, GELU, ... in float on\n"
            "                      the host (no activation tables in the epilogues)\n"
            "  --table-jobs        run every activation table the epilogues do not take\n"
            "                      as a job of its own, even where the host's lookup\n"
            "                      costs less (tests of the accelerator's form)\n"
            "  --target accel|cpu  accel (default): accelerator jobs plus host steps;\n"
            "                      cpu: every node on the host (native code for a graph\n"
            "                      LLVM takes whole, else the portable host kernels)\n"
            "  --input-shape NAME=D0,D1,...\n"
            "                      fix the dimensions of input NAME the model leaves\n"
            "                      dynamic (repeat for each input)\n"
            "  --host-triple T     native host code for T (default: this machine;\n"
            "                      aarch64-linux-gnu, armv7-linux-gnueabihf; none: no\n"
            "                      native code, the runtime's portable C ops run)\n"
            "  --host-cpu CPU      LLVM CPU name for the host code (default: baseline)\n"
            "                      Native code is signed with your key ($LOOM_KEY_FILE,\n"
            "                      else ~/.config/loom/key, made on first use), so that\n"
            "                      'loom run' runs it for you (docs/hostcode.md)\n"
            "  --trace FILE        print the IR after each stage to FILE ('-': stderr)\n"
            "  -q, --quiet         do not print the per-layer table\n"
            "  -h, --help          show this help\n"
            "\n"
            "example:\n"
            "  loom compile build/models/digits_cnn.onnx --calib build/models/calib_digits_cnn \\\n"
            "      -o digits_cnn.loom\n"
            "  loom run digits_cnn.loom -i build/models/digits_cnn_in0.npy -o out.npy\n",
    .run = run_compile,
};
