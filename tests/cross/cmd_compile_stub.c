/*
 * cmd_compile_stub.c - `loom compile` in a cross-built loom (make cross):
 * the compiler needs protobuf-c and LLVM, which the cross build leaves
 * out, so this command only says where to compile instead.  The native
 * driver/cli/cmd_compile.c replaces it in every other build.
 */
#include "driver/cli/cli.h"

static int run_compile(int argc, char **argv) {
  return cli_error("compile: this loom was cross-built without the compiler (docs/cross.md); "
                   "compile on the host with `loom compile` and copy the .loom file here");
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
