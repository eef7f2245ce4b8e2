/*
 * cli_output.c - the files the subcommands write, through the core's
 * atomic writer (driver/core/outfile.h), with errors printed the CLI's way.
 *
 * Every output is checked against the command's inputs before any work
 * starts (a compile of ResNet-18 or a tsim run takes minutes; refusing the
 * output name afterwards would waste them), then written to a temporary
 * file and renamed, so an interrupted or failed write leaves the previous
 * file as it was.
 */
#include "cli.h"

int cli_check_output(const char *path, const char *const *inputs) {
  char msg[LOOM_MSG_MAX];
  return loom_outfile_check(path, inputs, msg) == LOOM_OK ? CLI_OK : cli_error("%s", msg);
}

FILE *cli_output_open(const char *path, struct loom_outfile **o) {
  char msg[LOOM_MSG_MAX];
  if (loom_outfile_open(path, o, msg) == LOOM_OK) return loom_outfile_stream(*o);
  cli_error("%s", msg);
  return NULL;
}

int cli_output_commit(struct loom_outfile *o) {
  char msg[LOOM_MSG_MAX];
  return loom_outfile_commit(o, msg) == LOOM_OK ? CLI_OK : cli_error("%s", msg);
}

int cli_output_write(const char *path, const void *bytes, size_t size) {
  char msg[LOOM_MSG_MAX];
  return loom_outfile_write(path, bytes, size, msg) == LOOM_OK ? CLI_OK : cli_error("%s", msg);
}
