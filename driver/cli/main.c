/*
 * main.c - `loom`, one binary with subcommands (git-style):
 *
 *   loom [--help | --version] COMMAND [ARGS...]
 *
 * main() only dispatches: it finds the subcommand in cli_cmds[] and hands
 * it the rest of argv.  Each subcommand parses its own options, so adding
 * one is a new cmd_NAME.c plus a line in the table below.  --version prints
 * the release (VERSION, in loom_version.h) and the git commit the binary
 * was built from (scripts/gen-commit.sh bakes it into loom_commit.h).
 */
#include <string.h>

#include "cli.h"
#include "driver/core/loomfile.h"
#include "loom_commit.h"
#include "loom_isa_gen.h"
#include "loom_version.h"

const struct cli_cmd *const cli_cmds[] = {
    &cli_cmd_compile, &cli_cmd_run, &cli_cmd_eval, &cli_cmd_asm, &cli_cmd_disasm, &cli_cmd_inspect,
    &cli_cmd_devices, &cli_cmd_config, &cli_cmd_dse, &cli_cmd_help, NULL,
};

const struct cli_cmd *cli_find(const char *name) {
  for (int i = 0; cli_cmds[i]; i++)
    if (!strcmp(cli_cmds[i]->name, name)) return cli_cmds[i];
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    cli_list_commands(stderr);
    return CLI_USER;
  }
  const char *name = argv[1];
  if (cli_is_help(name)) return cli_cmd_help.run(1, argv + 1);
  if (!strcmp(name, "--version")) {
    printf("loom %s (git %s), ISA version %d, .loom format %d.%d\n", LOOM_VERSION, LOOM_GIT_COMMIT,
           LOOM_ISA_VERSION, LOOM_FILE_VERSION_MAJOR, LOOM_FILE_VERSION_MINOR);
    return CLI_OK;
  }
  const struct cli_cmd *cmd = cli_find(name);
  if (!cmd) {
    cli_error("'%s' is not a loom command (see 'loom --help')", name);
    return CLI_USER;
  }
  return cmd->run(argc - 1, argv + 1);
}
