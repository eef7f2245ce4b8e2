/*
 * cli_options.c - argument parsing and error reporting shared by the
 * subcommands.
 *
 * Options take the GNU forms "--name VALUE" and "--name=VALUE"; anything
 * else that starts with '-' is an unknown option and is named in the error.
 * The parser is deliberately small: every subcommand walks its own argv and
 * asks here whether the current word is one of its options.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "loom/hwconfig.h"
#include "driver/core/progress.h"

int cli_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("loom: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return CLI_USER;
}

int cli_usage_error(const struct cli_cmd *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "loom %s: ", cmd->name);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n(see 'loom help %s')\n", cmd->name);
  va_end(ap);
  return CLI_USER;
}

void cli_native_notice(const loom_model *m, const char *model) {
  const char *text;
  if (loom_model_native(m, &text) == LOOM_NATIVE_UNTRUSTED) fprintf(stderr, "loom: %s: %s\n", model, text);
}

void cli_show_run_progress(void *ctx, const struct loom_run_progress *p) {
  char label[96];
  if (p->step < p->steps) snprintf(label, sizeof label, "step %d/%d %.60s", p->step + 1, p->steps, p->name);
  else snprintf(label, sizeof label, "%d steps", p->steps);
  loom_progress_update(ctx, p->fraction, label);
}

void cli_print_help(const struct cli_cmd *cmd, FILE *out) { fputs(cmd->help, out); }

int cli_is_help(const char *arg) { return !strcmp(arg, "--help") || !strcmp(arg, "-h"); }

int cli_option_value(const struct cli_cmd *cmd, int argc, char **argv, int *i, const char *name,
                     const char *alias, const char **value) {
  const char *arg = argv[*i];
  size_t n = strlen(name);
  if (!strncmp(arg, name, n) && arg[n] == '=') {
    *value = arg + n + 1;
    return 1;
  }
  if (strcmp(arg, name) && (!alias || strcmp(arg, alias))) return 0;
  if (*i + 1 >= argc) {
    cli_usage_error(cmd, "option '%s' needs a value", arg);
    return -1;
  }
  *value = argv[++*i];
  return 1;
}

int cli_parse_u32(const char *s, unsigned long *out) {
  char *end;
  if (!*s || *s == '-' || *s == '+') return 0;
  errno = 0;
  unsigned long v = strtoul(s, &end, 10);
  if (errno || *end || v > 0xFFFFFFFFul) return 0;
  *out = v;
  return 1;
}

const char *cli_model_config(const char *model, uint32_t hash) {
  const struct loom_hw_config *c = loom_hw_config_by_hash(hash);
  if (c) return c->name;
  cli_error("%s: built for a hardware configuration with no name here (0x%08X): pass --config FILE, "
            "the configuration file it was compiled for",
            model, hash);
  return NULL;
}
