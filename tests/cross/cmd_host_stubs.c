/*
 * cmd_host_stubs.c - `loom compile` and `loom dse` in a cross-built loom
 * (make cross): both need the compiler, which needs protobuf-c and LLVM,
 * which the cross build leaves out, so these commands only say where to
 * run them instead.  The native driver/cli/cmd_compile.c, cmd_dse.c and
 * dse_*.c replace them in every other build.  `loom config fmax` (Yosys, the
 * synthesis cache of dse_synth.c) says the same through dse_fmax.
 */
#include <stdio.h>

#include "driver/cli/cli.h"
#include "driver/cli/dse.h"

int dse_fmax(const struct loom_hw_config *c, const struct loom_hw_part *p, int run, double *mhz,
             char *report, size_t report_n, char *msg, size_t n) {
  snprintf(msg, n, "this loom was cross-built without Yosys' cache (docs/cross.md); run `loom config fmax` on the host");
  return run ? -1 : 0;
}

static int run_compile(int argc, char **argv) {
  return cli_error("compile: this loom was cross-built without the compiler (docs/cross.md); "
                   "compile on the host with `loom compile` and copy the .loom file here");
}

static int run_dse(int argc, char **argv) {
  return cli_error("dse: this loom was cross-built without the compiler (docs/cross.md); "
                   "run `loom dse` on the host");
}

const struct cli_cmd cli_cmd_compile = {
    .name = "compile",
    .summary = "not in this build: compile on the host",
    .help = "usage: loom compile ...\n"
            "\n"
            "This loom was cross-built without the compiler (protobuf-c and LLVM are\n"
            "left out of `make cross`).  Compile on the host and copy the .loom file.\n",
    .run = run_compile,
};

const struct cli_cmd cli_cmd_dse = {
    .name = "dse",
    .summary = "not in this build: run it on the host",
    .help = "usage: loom dse ...\n"
            "\n"
            "This loom was cross-built without the compiler (protobuf-c and LLVM are\n"
            "left out of `make cross`), which a design-space sweep runs.  Run it on the host.\n",
    .run = run_dse,
};
