/*
 * profile.h - the reports of `loom run --profile`, `--profile-json` and
 * `--trace` (profile.c, docs/profiling.md), kept apart from cmd_run.c.
 */
#ifndef LOOM_CLI_PROFILE_H
#define LOOM_CLI_PROFILE_H

#include <stdio.h>

#include "driver/cli/cli.h"
#include "loom/loom.h"

/* A model after loom_model_run, and what to call it. */
struct profile_ctx {
  loom_model *m;
  const struct loom_hw_config *cfg;
  const char *model;   /* file name */
  const char *backend;
};

/* The per-layer table on `out`. */
void profile_print(const struct profile_ctx *p, FILE *out);

/* The same figures as JSON, and the jobs' timelines as a Chrome trace;
 * CLI_OK, or CLI_USER after printing why the file could not be written. */
int profile_write_json(const struct profile_ctx *p, const char *path);
int profile_write_trace(const struct profile_ctx *p, const char *path);

/* Wall time of the host steps of the last run. */
double profile_host_seconds(const struct profile_ctx *p);

#endif
