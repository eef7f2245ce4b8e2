/*
 * cli.h - the `loom` command line: the subcommand table and the helpers
 * every subcommand shares.
 *
 * Each subcommand lives in its own cmd_NAME.c and exports one
 * `struct cli_cmd`; main.c lists them.  A subcommand gets argv with argv[0]
 * its own name, prints its help for --help/-h, and returns an exit status:
 *
 *   0  success
 *   1  usage or user error (bad flag, unreadable or invalid file, wrong
 *      tensor, wrong configuration)
 *   2  the accelerator (or simulator) stopped a job with an error or a
 *      timeout
 *
 * Messages go to stderr as "loom: FILE: WHERE: WHAT" (the library's
 * messages already carry the file and offset).
 */
#ifndef LOOM_CLI_H
#define LOOM_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "driver/core/outfile.h"
#include "loom/loom.h"

enum cli_exit {
  CLI_OK = 0,
  CLI_USER = 1,
  CLI_JOB = 2,
};

struct cli_cmd {
  const char *name;
  const char *summary; /* one line for `loom --help` */
  const char *help;    /* the whole text of `loom help NAME` */
  int (*run)(int argc, char **argv);
};

/* ---- main.c ---- */

/* Every subcommand, NULL-terminated, in the order `loom --help` lists them. */
extern const struct cli_cmd *const cli_cmds[];

const struct cli_cmd *cli_find(const char *name);

/* ---- cmd_*.c ---- */

extern const struct cli_cmd cli_cmd_compile, cli_cmd_asm, cli_cmd_disasm, cli_cmd_run,
    cli_cmd_eval, cli_cmd_inspect, cli_cmd_devices, cli_cmd_help;
extern const struct cli_cmd cli_cmd_config, cli_cmd_dse;

/* cmd_help.c: the command overview of `loom --help`. */
void cli_list_commands(FILE *out);

/* ---- cli_options.c ---- */

/* Prints "loom: <message>" on stderr and returns CLI_USER. */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints "loom CMD: <message>" and a pointer to `loom help CMD`; returns
 * CLI_USER. */
int cli_usage_error(const struct cli_cmd *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The one line on stderr when a model's native code is not run for want of
 * consent: not signed with the user's key, and no --trust-native. */
void cli_native_notice(const loom_model *m, const char *model);

/* A loom_run_progress_fn drawing on the progress display `ctx`
 * (driver/core/progress.h): "step 7/21 LAYER". */
void cli_show_run_progress(void *ctx, const struct loom_run_progress *p);

/* Prints the subcommand's help text to `out`. */
void cli_print_help(const struct cli_cmd *cmd, FILE *out);

/* Matches argv[*i] against an option that takes a value, spelt `name`
 * ("--output"), `alias` ("-o", may be NULL) or "name=VALUE".  Returns 1 and
 * sets *value (advancing *i past a separate value), 0 when argv[*i] is
 * another argument, -1 (after printing the error) when the value is
 * missing. */
int cli_option_value(const struct cli_cmd *cmd, int argc, char **argv, int *i, const char *name,
                     const char *alias, const char **value);

/* True for "--help" and "-h". */
int cli_is_help(const char *arg);

/* The configuration to open a device with for `model`, built for `hash`,
 * when the user gave no --config: the named configuration with that hash;
 * NULL after printing the error when there is none (a configuration file's
 * binary needs --config FILE). */
const char *cli_model_config(const char *model, uint32_t hash);

/* Parses a non-negative decimal integer that fits uint32_t; 0 on error. */
int cli_parse_u32(const char *s, unsigned long *out);

/* ---- cli_output.c: files the commands write (atomically, outfile.h) ---- */

/* CLI_USER after printing why, when `path` is one of the NULL-terminated
 * `inputs` (the same file); call it before the work starts. */
int cli_check_output(const char *path, const char *const *inputs);
/* The stream of a new output, or NULL after printing why. */
FILE *cli_output_open(const char *path, struct loom_outfile **o);
/* Renames the finished output into place; CLI_USER after printing why (the
 * previous file is then intact). */
int cli_output_commit(struct loom_outfile *o);
/* A whole output at once. */
int cli_output_write(const char *path, const void *bytes, size_t size);

#endif
