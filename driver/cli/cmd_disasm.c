/*
 * cmd_disasm.c - `loom disasm MODEL.loom [-o OUT.s]`: print a .loom file as
 * assembler source.
 *
 * The output assembles back to the identical bytes for any file the
 * assembler produced (the round trip tests/cli/test_cli.sh checks).  The
 * file is fully validated first; an invalid one is refused with the
 * loader's message.  -o writes atomically (cli_output.c): a failed write
 * leaves the previous file as it was.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "driver/core/asm.h"
#include "driver/core/loomfile.h"

static int disassemble(const char *path, const char *out_path) {
  char msg[LOOM_MSG_MAX];
  struct loom_file f;
  struct loom_outfile *o = NULL;
  const char *inputs[] = {path, NULL};
  if (out_path && cli_check_output(out_path, inputs) != CLI_OK) return CLI_USER;
  if (loom_file_read(path, &f, msg) != LOOM_OK) return cli_error("%s", msg);
  FILE *out = out_path ? cli_output_open(out_path, &o) : stdout;
  if (!out) {
    loom_file_free(&f);
    return CLI_USER;
  }
  loom_status st = loom_disasm(&f, out, msg);
  loom_file_free(&f);
  if (st != LOOM_OK && out_path && ferror(out)) return cli_output_commit(o); /* fails, naming the errno */
  if (st != LOOM_OK) {
    loom_outfile_abort(o);
    return cli_error("%s%s%s", out_path ? out_path : "", out_path ? ": " : "", msg);
  }
  if (out_path) return cli_output_commit(o);
  return fflush(stdout) == 0 ? CLI_OK : cli_error("stdout: write failed: %s", strerror(errno));
}

static int run_disasm(int argc, char **argv) {
  const char *path = NULL, *out = NULL;
  for (int i = 1; i < argc; i++) {
    int r;
    if (cli_is_help(argv[i])) {
      cli_print_help(&cli_cmd_disasm, stdout);
      return CLI_OK;
    }
    if ((r = cli_option_value(&cli_cmd_disasm, argc, argv, &i, "--output", "-o", &out))) {
      if (r < 0) return CLI_USER;
      continue;
    }
    if (argv[i][0] == '-' && argv[i][1])
      return cli_usage_error(&cli_cmd_disasm, "unknown option '%s'", argv[i]);
    if (path) return cli_usage_error(&cli_cmd_disasm, "unexpected argument '%s'", argv[i]);
    path = argv[i];
  }
  if (!path) return cli_usage_error(&cli_cmd_disasm, "no .loom file given");
  return disassemble(path, out);
}

const struct cli_cmd cli_cmd_disasm = {
    .name = "disasm",
    .summary = "print a .loom file as assembler source",
    .help = "usage: loom disasm MODEL.loom [-o OUT.s]\n"
            "\n"
            "Prints every directive, data line and instruction of MODEL.loom in the\n"
            "syntax of docs/asm.md.  'loom asm' of the output gives the same bytes.\n"
            "\n"
            "options:\n"
            "  -o, --output FILE   write to FILE instead of stdout\n"
            "  -h, --help          show this help\n"
            "\n"
            "example:\n"
            "  loom disasm gemm64.loom -o gemm64.s\n",
    .run = run_disasm,
};
