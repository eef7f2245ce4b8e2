/*
 * cmd_host_stubs.c - `loom compile` and `loom dse` in a cross-built loom
 * (make cross): both need the compiler, which needs protobuf-c and LLVM,
 * which the cross build leaves out, so these commands only say where to
 * run them instead.  The native driver/cli/cmd_compile.c, cmd_dse.c and
 * dse_*.c replace them in every other build.
 */
#include "driver/cli/cli.h"

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
