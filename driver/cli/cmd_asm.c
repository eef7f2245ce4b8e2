/*
 * cmd_asm.c - `loom asm PROGRAM.s -o PROGRAM.loom`: assemble a program
 * (docs/asm.md) into a .loom file.
 *
 * The assembler (driver/core/asm.c) does the work and has already validated
 * the result as the loader would; this file only picks the output name and
 * reports "file:line:column: what" errors.  The output is written atomically
 * and may not be the source itself.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "driver/core/asm.h"
#include "driver/core/loomfile.h"

/* "dir/prog.s" -> "dir/prog.loom" (malloc'd). */
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

static int assemble(const char *src, const char *out, const char *config) {
  char msg[LOOM_MSG_MAX];
  struct loom_file_builder *b = NULL;
  const char *inputs[] = {src, NULL};
  if (cli_check_output(out, inputs) != CLI_OK) return CLI_USER;
  if (loom_asm_file(src, config, &b, msg) != LOOM_OK) return cli_error("%s", msg);
  loom_status st = loom_file_builder_write(b, out, msg);
  loom_file_builder_free(b);
  return st == LOOM_OK ? CLI_OK : cli_error("%s", msg);
}

static int run_asm(int argc, char **argv) {
  const char *src = NULL, *out = NULL, *config = NULL;
  for (int i = 1; i < argc; i++) {
    int r;
    if (cli_is_help(argv[i])) {
      cli_print_help(&cli_cmd_asm, stdout);
      return CLI_OK;
    }
    if ((r = cli_option_value(&cli_cmd_asm, argc, argv, &i, "--output", "-o", &out))) {
      if (r < 0) return CLI_USER;
      continue;
    }
    if ((r = cli_option_value(&cli_cmd_asm, argc, argv, &i, "--config", "-c", &config))) {
      if (r < 0) return CLI_USER;
      continue;
    }
    if (argv[i][0] == '-' && argv[i][1])
      return cli_usage_error(&cli_cmd_asm, "unknown option '%s'", argv[i]);
    if (src) return cli_usage_error(&cli_cmd_asm, "unexpected argument '%s'", argv[i]);
    src = argv[i];
  }
  if (!src) return cli_usage_error(&cli_cmd_asm, "no source file given");
  char *dflt = out ? NULL : default_output(src);
  if (!out && !dflt) return cli_error("out of memory");
  int r = assemble(src, out ? out : dflt, config);
  free(dflt);
  return r;
}

const struct cli_cmd cli_cmd_asm = {
    .name = "asm",
    .summary = "assemble a program (.s) into a .loom file",
    .help = "usage: loom asm PROGRAM.s [-o OUT.loom] [--config NAME]\n"
            "\n"
            "Assembles PROGRAM.s (syntax: docs/asm.md) into a .loom file, validated as\n"
            "the loader validates it.  Errors name file:line:column.\n"
            "\n"
            "options:\n"
            "  -o, --output FILE   output file (default: PROGRAM.loom next to the source)\n"
            "  -c, --config NAME   hardware configuration (a name such as tiny, or a hash\n"
            "                      such as 0xbe827f10), replacing the source's .config\n"
            "  -h, --help          show this help\n"
            "\n"
            "example:\n"
            "  loom asm tests/asm/gemm64.s -o gemm64.loom\n",
    .run = run_asm,
};
