/*
 * cmd_compile.c - `loom compile MODEL.onnx [-o OUT.loom]`: quantize (when
 * the model is float), fuse, partition and lower an ONNX model for a
 * hardware configuration, write the .loom file and print the per-layer
 * table.
 *
 * The compiler (sw_compiler/compile.h) does the work and reports
 * "file: where: what is wrong"; this file parses options, writes the file
 * and prints the report.  Host steps get native code from LLVM
 * (sw_compiler/llvm/hostgen.h) for --host-triple, this machine by default;
 * `--host-triple none` leaves them to the runtime's portable C ops.
 * `--target cpu` builds a host-only model: the whole float graph as one
 * LLVM-compiled host step, the baseline the benchmarks put beside PyTorch.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sw_compiler/compile.h"
#include "sw_compiler/llvm/hostgen.h"

/* Belongs in cli.h with the other subcommands (a repeated extern is
 * harmless once it is there). */
extern const struct cli_cmd cli_cmd_compile;

struct compile_args {
  const char *model, *out, *config, *calib, *trace, *target, *triple, *cpu;
  int quiet, no_im2col;
  struct loom_hw_config hw; /* --config, a name or a file (default: default) */
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

/* One option at argv[*i]: 1 handled, 0 not an option, -1 error. */
static int parse_option(struct compile_args *a, int argc, char **argv, int *i) {
  const struct cli_cmd *c = &cli_cmd_compile;
  int r;
  if ((r = cli_option_value(c, argc, argv, i, "--output", "-o", &a->out))) return r;
  if ((r = cli_option_value(c, argc, argv, i, "--config", "-c", &a->config))) return r;
  if ((r = cli_option_value(c, argc, argv, i, "--calib", NULL, &a->calib))) return r;
  if ((r = cli_option_value(c, argc, argv, i, "--trace", NULL, &a->trace))) return r;
  if ((r = cli_option_value(c, argc, argv, i, "--target", NULL, &a->target))) return r;
  if ((r = cli_option_value(c, argc, argv, i, "--host-triple", NULL, &a->triple))) return r;
  if ((r = cli_option_value(c, argc, argv, i, "--host-cpu", NULL, &a->cpu))) return r;
  if (!strcmp(argv[*i], "--quiet") || !strcmp(argv[*i], "-q")) return a->quiet = 1;
  if (!strcmp(argv[*i], "--no-im2col")) return a->no_im2col = 1;
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
  char msg[LOOM_MSG_MAX];
  if (loom_hw_config_resolve(a->config ? a->config : "default", &a->hw, msg, sizeof msg))
    return cli_error("%s: --config: %s", a->model, msg);
  return -1;
}

static int write_file(const char *path, const uint8_t *bytes, size_t size) {
  FILE *f = fopen(path, "wb");
  if (!f) return cli_error("%s: cannot create: %s", path, strerror(errno));
  int ok = fwrite(bytes, 1, size, f) == size;
  ok = fclose(f) == 0 && ok;
  return ok ? CLI_OK : cli_error("%s: write failed: %s", path, strerror(errno));
}

static int native_wanted(const struct compile_args *a) {
  return !a->triple || strcmp(a->triple, "none");
}

/* Replaces *bytes with a copy carrying native code for its host steps. */
static int add_host_code(const struct compile_args *a, uint8_t **bytes, size_t *size,
                         struct hostgen_summary *sum) {
  struct hostgen_options ho = {.triple = a->triple, .cpu = a->cpu};
  struct ir_error err = {{0}};
  uint8_t *out = NULL;
  size_t out_size = 0;
  if (hostgen_loom(*bytes, *size, a->model, &ho, &out, &out_size, sum, &err))
    return cli_error("%s", err.msg);
  free(*bytes);
  *bytes = out;
  *size = out_size;
  return CLI_OK;
}

static void print_host_summary(const struct hostgen_summary *sum) {
  printf("host code: %u native step%s for %s, %u portable, %llu bytes of native code\n",
         sum->native_steps, sum->native_steps == 1 ? "" : "s", sum->triple, sum->portable_steps,
         (unsigned long long)sum->image_bytes);
  if (sum->portable_steps) printf("host code: portable %s%s\n", sum->first_portable, sum->portable_steps > 1 ? ", ..." : "");
}

/* --target cpu: the float graph as one native host step. */
static int compile_cpu(const struct compile_args *a, const char *out) {
  struct hostgen_options ho = {.triple = native_wanted(a) ? a->triple : NULL, .cpu = a->cpu};
  struct hostgen_summary sum = {0};
  struct ir_error err = {{0}};
  uint8_t *bytes = NULL;
  size_t size = 0;
  if (hostgen_compile_onnx(a->model, &ho, &a->hw, &bytes, &size, &sum, &err))
    return cli_error("%s", err.msg);
  int rc = write_file(out, bytes, size);
  if (rc == CLI_OK && !a->quiet) {
    print_host_summary(&sum);
    printf("wrote %s (%zu bytes, target cpu)\n", out, size);
  }
  free(bytes);
  return rc;
}

static int compile(const struct compile_args *a, const char *out) {
  struct compile_options o = {.hw = &a->hw, .calib = a->calib,
                              .flags = a->no_im2col ? 0 : COMPILE_IM2COL};
  struct compile_result r;
  struct ir_error err = {{0}};
  FILE *trace = NULL;
  if (a->trace && !(trace = strcmp(a->trace, "-") ? fopen(a->trace, "w") : stderr))
    return cli_error("%s: cannot create: %s", a->trace, strerror(errno));
  o.trace = trace;
  int rc = compile_onnx(a->model, &o, &r, &err);
  if (trace && trace != stderr) fclose(trace);
  if (rc) {
    compile_result_free(&r);
    return cli_error("%s", err.msg);
  }
  struct hostgen_summary sum = {0};
  rc = native_wanted(a) ? add_host_code(a, &r.bytes, &r.size, &sum) : CLI_OK;
  if (rc == CLI_OK) rc = write_file(out, r.bytes, r.size);
  if (rc == CLI_OK && !a->quiet) {
    compile_report_print(stdout, &r);
    if (native_wanted(a)) print_host_summary(&sum);
    printf("wrote %s (%zu bytes, config %s%s)\n", out, r.size, r.cfg->name,
           r.calib_samples ? ", calibrated" : "");
  }
  compile_result_free(&r);
  return rc;
}

static int run_compile(int argc, char **argv) {
  struct compile_args a = {0};
  int r = parse_args(&a, argc, argv);
  if (r >= 0) return r;
  char *dflt = a.out ? NULL : default_output(a.model);
  if (!a.out && !dflt) return cli_error("out of memory");
  if (a.target && !strcmp(a.target, "cpu")) r = compile_cpu(&a, a.out ? a.out : dflt);
  else r = compile(&a, a.out ? a.out : dflt);
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
            "  --no-im2col         never fold small-channel stem convolutions with a\n"
            "                      host-side im2col (folding needs the runtime's IM2COL\n"
            "                      host op)\n"
            "  --target accel|cpu  accel (default): accelerator jobs plus host steps;\n"
            "                      cpu: the whole float graph as native host code\n"
            "  --host-triple T     native host code for T (default: this machine;\n"
            "                      aarch64-linux-gnu, armv7-linux-gnueabihf; none: no\n"
            "                      native code, the runtime's portable C ops run)\n"
            "  --host-cpu CPU      LLVM CPU name for the host code (default: baseline)\n"
            "  --trace FILE        print the IR after each stage to FILE ('-': stderr)\n"
            "  -q, --quiet         do not print the per-layer table\n"
            "  -h, --help          show this help\n"
            "\n"
            "example:\n"
            "  loom compile build/models/digits_cnn.onnx --calib build/models/calib_digits_cnn \\\n"
            "      -o digits_cnn.loom\n"
            "  loom run digits_cnn.loom -i digits_cnn_in0.npy -o out.npy\n",
    .run = run_compile,
};
