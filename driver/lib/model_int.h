/*
 * model_int.h - a loaded model's state, shared by model.c (load, tensors,
 * runs of jobs and host ops) and model_kernel.c (kernel steps).
 */
#ifndef LOOM_MODEL_INT_H
#define LOOM_MODEL_INT_H

#include "hostcode.h"
#include "runtime.h"

struct model_tensor {
  uint32_t index;               /* into file.tensors */
  struct loom_tensor_info info;
  int set;                      /* input written since load */
};

struct loom_model {
  loom_device *dev;
  struct loom_file file;
  char name[256];               /* file name, prefixes messages */
  loom_buffer **bufs;           /* per file buffer */
  loom_buffer **insns;          /* per job */
  struct loom_job_result *results; /* per job, last run */
  struct model_tensor *in, *out;
  int n_in, n_out;
  struct loom_hostcode *hostcode; /* native host code, NULL when the file has none */
  struct loom_job_info *info;   /* per job */
  char (*job_names)[24];        /* "job N" for files without JOBMETA */
  struct loom_step_info *steps; /* per step, last run */
  int64_t (*dims)[LOOM_MAX_RANK]; /* per tensor: its current dims (data-dependent results change) */
  int tracing;
  struct model_trace *traces;   /* per job, last run */
  loom_run_progress_fn progress; /* loom_model_set_progress, NULL: none */
  void *progress_ctx;
  double *weight_before;        /* per step: weight of the steps before it; [step_count]: all */
  struct loom_run_progress now; /* the step running */
  double step_units;            /* the backend units its job is expected to take, 0: unknown */
};

struct model_trace {
  struct loom_trace_event *ev;
  size_t n;
};

/* "name: what i: why" (LOOM_E_FORMAT) into msg. */
loom_status model_bad(loom_model *m, char msg[LOOM_MSG_MAX], const char *what, uint32_t i, const char *why);
/* The stored bytes of tensor t in its mapped buffer. */
void *model_tensor_data(loom_model *m, const struct loom_file_tensor *t);

/* model_kernel.c */
loom_status model_check_kernel_step(loom_model *m, uint32_t i, const struct loom_file_step *s, char msg[LOOM_MSG_MAX]);
loom_status model_run_kernel(loom_model *m, uint32_t i, const struct loom_file_step *s);

#endif
