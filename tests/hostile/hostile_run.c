/*
 * hostile_run.c - running an image on a device in a child process.
 *
 * Each run forks: the child loads the image with loom_model_load_memory,
 * sets every input to deterministic values, runs every step and writes a
 * struct run_result down a pipe; the parent waits with a deadline.  So a
 * crash, a sanitizer report (the child then exits non-zero before writing)
 * or a hang costs one mutant, not the run, and is classified as such.  The
 * device was opened in the parent before the fork, so every child starts
 * from the same device state (fsim's SRAM, the Verilated model, the DRAM
 * model) and a mutant's outcome does not depend on the mutants before it.
 *
 * When the mutant did not complete, the child then runs the unmutated
 * model on the same device: the hardware checks must leave the accelerator
 * able to run the next job correctly (same outputs as a fresh device).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hostile.h"
#include "loom/isa.h"

const char *const run_outcome_names[RUN_COUNT] = {
    [RUN_REJECTED] = "rejected",   [RUN_OK] = "completed",     [RUN_JOB_ERROR] = "job-error",
    [RUN_TIMEOUT] = "timeout",     [RUN_HOST_ERROR] = "host-error", [RUN_VIOLATION] = "VIOLATION",
    [RUN_CRASH] = "CRASH",         [RUN_HANG] = "HANG",
};
_Static_assert(sizeof run_outcome_names / sizeof run_outcome_names[0] == RUN_COUNT,
               "a name per outcome");

#define MAX_ELEMS (1u << 22)

/* ---- deterministic inputs, output hashes ---- */

static uint64_t elems(const struct loom_tensor_info *t) {
  uint64_t n = 1;
  for (int d = 0; d < t->rank; d++) n *= (uint64_t)t->dims[d];
  return n;
}

void hostile_set_inputs(loom_model *m) {
  for (int i = 0; i < loom_model_input_count(m); i++) {
    const struct loom_tensor_info *t = loom_model_input(m, i);
    uint64_t n = elems(t);
    if (n > MAX_ELEMS) continue;
    size_t es = loom_dtype_size(t->dtype);
    uint8_t *v = malloc(n * es + 1);
    uint32_t x = 0x9E3779B9u * (uint32_t)(i + 1);
    for (uint64_t k = 0; k < n; k++) {
      x = x * 1664525u + 1013904223u;
      switch (t->dtype) {
      case LOOM_DT_F32: ((float *)v)[k] = (float)((int32_t)(x >> 24) - 128) / 64.0f; break;
      case LOOM_DT_I32: ((int32_t *)v)[k] = (int32_t)(x >> 20) - 2048; break;
      default: v[k] = (uint8_t)(x >> 24);
      }
    }
    loom_model_set_input(m, t->name, t->dtype, t->rank, t->dims, v);
    free(v);
  }
}

uint64_t hostile_output_hash(loom_model *m) {
  uint64_t h = UINT64_C(1469598103934665603);
  for (int i = 0; i < loom_model_output_count(m); i++) {
    const struct loom_tensor_info *t = loom_model_output(m, i);
    uint64_t n = elems(t);
    if (n > MAX_ELEMS) continue;
    size_t bytes = n * loom_dtype_size(t->dtype);
    uint8_t *v = calloc(1, bytes + 1);
    if (loom_model_get_output(m, t->name, v, bytes) != LOOM_OK) memset(v, 0xEE, bytes);
    for (size_t k = 0; k < bytes; k++) h = (h ^ v[k]) * UINT64_C(1099511628211);
    free(v);
  }
  return h ? h : 1;
}

/* Prints every output byte of a completed run (replay diagnostics). */
static void dump_outputs(loom_model *m, const char *who) {
  for (int i = 0; i < loom_model_output_count(m); i++) {
    const struct loom_tensor_info *t = loom_model_output(m, i);
    uint64_t n = elems(t);
    size_t bytes = n * loom_dtype_size(t->dtype);
    if (n > 4096) continue;
    uint8_t *v = calloc(1, bytes + 1);
    loom_model_get_output(m, t->name, v, bytes);
    printf("%s output '%s' (%s, %llu values):", who, t->name, loom_dtype_name(t->dtype),
           (unsigned long long)n);
    for (size_t k = 0; k < bytes; k++) printf("%s%02x", k % 32 ? " " : "\n  ", v[k]);
    printf("\n");
    free(v);
  }
  fflush(stdout);
}

/* ---- the child ---- */

static void copy_msg(struct run_result *r, const char *msg) {
  snprintf(r->msg, sizeof r->msg, "%s", msg);
}

/* Which step failed and why, from the model's message and job results. */
static void classify_failure(loom_model *m, loom_device *dev, loom_status st, struct run_result *r) {
  const char *msg = loom_device_error(dev);
  unsigned step = 0, job = 0;
  copy_msg(r, msg);
  r->status = st;
  int is_job = sscanf(msg, "step %u (job %u)", &step, &job) == 2;
  r->step = step, r->job = job;
  if (is_job && st == LOOM_E_JOB) {
    const struct loom_job_result *jr = loom_model_job_result(m, (int)job);
    r->err = jr ? jr->error : 0;
    r->err_insn = jr ? jr->error_insn : 0;
    r->outcome = r->err == LOOM_ERR_TIMEOUT ? RUN_TIMEOUT : RUN_JOB_ERROR;
  } else if (is_job && st == LOOM_E_TIMEOUT) {
    r->err = LOOM_ERR_TIMEOUT;
    r->outcome = RUN_TIMEOUT;
  } else if (strstr(msg, "(host op ")) {
    r->outcome = RUN_HOST_ERROR;
  } else {
    r->outcome = RUN_VIOLATION; /* a device-level failure: bus violation, protocol error */
  }
}

/* 1 when the unmutated model runs on `dev` with the expected outputs. */
static int recovers(const struct run_env *env) {
  char msg[LOOM_MSG_MAX];
  loom_model *m;
  if (loom_model_load_memory(env->dev, env->base, env->base_size, "base.loom", &m, msg) != LOOM_OK)
    return 0;
  hostile_set_inputs(m);
  int ok = loom_model_run(m, env->timeout_ms) == LOOM_OK && hostile_output_hash(m) == env->base_hash;
  loom_model_free(m);
  return ok;
}

static void child_run(const struct run_env *env, const uint8_t *bytes, size_t size,
                      struct run_result *r) {
  char msg[LOOM_MSG_MAX] = "";
  loom_model *m;
  memset(r, 0, sizeof *r);
  r->recovery = -1;
  loom_status st = loom_model_load_memory(env->dev, bytes, size, "mutant.loom", &m, msg);
  if (st != LOOM_OK) {
    r->outcome = RUN_REJECTED;
    r->status = st;
    copy_msg(r, msg);
    return;
  }
  hostile_set_inputs(m);
  st = loom_model_run(m, env->timeout_ms);
  if (st == LOOM_OK) {
    r->outcome = RUN_OK;
    r->out_hash = hostile_output_hash(m);
    for (int j = 0; j < loom_model_job_count(m); j++)
      r->cycles += loom_model_job_result(m, j)->counters[LOOM_CNT_CYCLES];
    if (env->dump) dump_outputs(m, env->dump);
  } else {
    classify_failure(m, env->dev, st, r);
  }
  loom_model_free(m);
  if (r->outcome != RUN_OK && env->base_hash) r->recovery = recovers(env);
}

/* ---- the parent ---- */

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

struct child {
  pid_t pid;
  int fd, done;
  double deadline;
};

static void reap(struct child *c, int status, struct run_result *r) {
  ssize_t got = read(c->fd, r, sizeof *r);
  close(c->fd);
  c->done = 1;
  if (got == (ssize_t)sizeof *r && WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
  memset(r, 0, sizeof *r);
  r->recovery = -1;
  r->outcome = RUN_CRASH;
  r->child_status = status;
  if (WIFSIGNALED(status)) snprintf(r->msg, sizeof r->msg, "killed by signal %d", WTERMSIG(status));
  else snprintf(r->msg, sizeof r->msg, "exited with status %d (sanitizer report?)", WEXITSTATUS(status));
}

void hostile_run(const struct run_env *envs, int n, const uint8_t *bytes, size_t size,
                 struct run_result *r) {
  struct child c[8];
  for (int i = 0; i < n; i++) {
    int p[2];
    if (pipe(p) != 0) abort(); /* test harness: no recovery from no pipes */
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
      struct run_result res;
      close(p[0]);
      child_run(&envs[i], bytes, size, &res);
      if (write(p[1], &res, sizeof res) != (ssize_t)sizeof res) _exit(3);
      _exit(0);
    }
    close(p[1]);
    c[i] = (struct child){pid, p[0], pid < 0, now_ms() + envs[i].deadline_ms};
    if (pid < 0) {
      close(p[0]);
      r[i] = (struct run_result){.outcome = RUN_CRASH, .recovery = -1};
      snprintf(r[i].msg, sizeof r[i].msg, "fork failed: %s", strerror(errno));
    }
  }
  for (int left = n; left > 0;) {
    left = 0;
    for (int i = 0; i < n; i++) {
      if (c[i].done) continue;
      int status;
      pid_t w = waitpid(c[i].pid, &status, WNOHANG);
      if (w == c[i].pid) {
        reap(&c[i], status, &r[i]);
      } else if (now_ms() > c[i].deadline) {
        kill(c[i].pid, SIGKILL);
        waitpid(c[i].pid, &status, 0);
        close(c[i].fd);
        c[i].done = 1;
        r[i] = (struct run_result){.outcome = RUN_HANG, .recovery = -1};
        snprintf(r[i].msg, sizeof r[i].msg, "no result after %u ms; killed", envs[i].deadline_ms);
      } else {
        left++;
      }
    }
    if (left) poll(NULL, 0, 2);
  }
}
