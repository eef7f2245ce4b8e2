/*
 * cmd_help.c - `loom help [COMMAND]`: the command list, or one command's
 * help (the same text as `loom COMMAND --help`).
 */
#include <string.h>

#include "cli.h"

void cli_list_commands(FILE *out) {
  fputs("usage: loom COMMAND [ARGS...]\n"
        "\n"
        "Loom: compile, assemble and run programs for the Loom deep-learning accelerator.\n"
        "\n"
        "commands:\n",
        out);
  for (int i = 0; cli_cmds[i]; i++) fprintf(out, "  %-9s %s\n", cli_cmds[i]->name, cli_cmds[i]->summary);
  fputs("\n"
        "'loom help COMMAND' or 'loom COMMAND --help' shows a command's options.\n"
        "Exit status: 0 success, 1 usage or input error, 2 a job failed on the device.\n",
        out);
}

static int run_help(int argc, char **argv) {
  if (argc < 2) {
    cli_list_commands(stdout);
    return CLI_OK;
  }
  if (cli_is_help(argv[1])) {
    cli_print_help(&cli_cmd_help, stdout);
    return CLI_OK;
  }
  if (argc > 2) return cli_usage_error(&cli_cmd_help, "too many arguments");
  const struct cli_cmd *cmd = cli_find(argv[1]);
  if (!cmd) return cli_error("'%s' is not a loom command (see 'loom --help')", argv[1]);
  cli_print_help(cmd, stdout);
  return CLI_OK;
}

const struct cli_cmd cli_cmd_help = {
    .name = "help",
    .summary = "list the commands, or show one command's help",
    .help = "usage: loom help [COMMAND]\n"
            "\n"
            "Without COMMAND, lists every command.  With it, prints that command's\n"
            "options, as 'loom COMMAND --help' does.\n",
    .run = run_help,
};
