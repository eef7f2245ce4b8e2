/*
 * backend.h - the interface every libloom backend implements.
 *
 * A backend is a table of function pointers (ggml's backend interface, the
 * ivpu driver's hw_ops).  Members marked optional may be NULL.  Backends
 * that drive real registers (tsim, linux, xrt) program the accelerator only
 * through hwregs.h, so the register sequence exists once.
 */
#ifndef LOOM_BACKEND_H
#define LOOM_BACKEND_H

#include "loom/loom.h"

struct loom_backend_buffer {
  void *host;        /* CPU mapping */
  uint64_t dev_addr; /* bus address the accelerator sees (0 for fsim) */
  size_t size;
  void *priv;        /* backend's own handle */
};

struct loom_backend_ops {
  const char *name;
  /* Opens an instance; *state is passed to every other call. */
  loom_status (*open)(const char *options, void **state, const struct loom_hw_config **cfg,
                      char msg[LOOM_MSG_MAX]);
  void (*close)(void *state);
  loom_status (*alloc)(void *state, size_t bytes, struct loom_backend_buffer *buf,
                       char msg[LOOM_MSG_MAX]);
  void (*free)(void *state, struct loom_backend_buffer *buf);
  /* optional: cache maintenance; NULL when memory is coherent */
  loom_status (*sync)(void *state, struct loom_backend_buffer *buf, loom_sync_dir dir,
                      char msg[LOOM_MSG_MAX]);
  /* segments[i] is NULL when unmapped */
  loom_status (*submit)(void *state, const struct loom_backend_buffer *insns, uint32_t insn_count,
                        const struct loom_backend_buffer *const segments[8],
                        char msg[LOOM_MSG_MAX]);
  loom_status (*wait)(void *state, uint32_t timeout_ms, struct loom_job_result *res,
                      char msg[LOOM_MSG_MAX]);
  /* optional: abort any job and return to idle */
  loom_status (*reset)(void *state, char msg[LOOM_MSG_MAX]);
  /* optional: record per-instruction timelines of the following jobs */
  loom_status (*set_trace)(void *state, int on, char msg[LOOM_MSG_MAX]);
  /* optional: the last finished job's timeline (see loom_device_trace) */
  const struct loom_trace_event *(*trace)(void *state, size_t *count);
  /* optional: from now on, call fn(ctx, done) every so often while a job
   * runs (from submit or wait), `done` being the job's work so far in the
   * backend's own units (fsim: micro-ops and DRAM rows; tsim: cycles), which
   * the compiler's cycle estimate approximates; fn NULL stops */
  void (*set_progress)(void *state, void (*fn)(void *ctx, uint64_t done), void *ctx);
};

/* The compiled-in backends, NULL-terminated (registry in device.c). */
extern const struct loom_backend_ops *const loom_backends[];

extern const struct loom_backend_ops loom_backend_fsim;
extern const struct loom_backend_ops loom_backend_tsim;

/* ---- backend_tsim.c ---- */

struct tsim;

/* The simulator instance behind a device on the tsim backend, and in *lib
 * (when non-NULL) the dlopen() handle of its library, so that tests can
 * reach the fault-injection hooks of sim/tsim/tsim.h (tsim_fault_add,
 * tsim_fault_stall, tsim_fault_interrupt) with dlsym.  NULL when `dev` is
 * not a tsim device.  The instance belongs to the device. */
struct tsim *loom_tsim_instance(loom_device *dev, void **lib);

/* Parses "key=value,key=value": copies the value of `key` into `out`
 * (NUL-terminated, at most n bytes) and returns 1, or 0 when absent. */
int loom_option_get(const char *options, const char *key, char *out, size_t n);

/* Checks that every key of `options` is in the NULL-terminated `known`
 * list and every item has the form key=value; LOOM_E_INVALID with a message
 * prefixed by `who` otherwise. */
loom_status loom_option_check(const char *options, const char *const known[], const char *who,
                              char msg[LOOM_MSG_MAX]);

/* The option config=NAME|FILE (default "default"): a named configuration
 * or a configuration file (loom_hw_config_resolve), into *c.  Messages are
 * prefixed by `who`. */
loom_status loom_backend_config(const char *who, const char *options, struct loom_hw_config *c,
                                char msg[LOOM_MSG_MAX]);

/* A board's configuration: the one config=NAME|FILE names, which must
 * have the `hash` the hardware reports, else the named configuration with
 * that hash.  `where` names the device in messages. */
loom_status loom_backend_hw_config(const char *who, const char *where, uint32_t hash,
                                   const char *options, struct loom_hw_config *c,
                                   char msg[LOOM_MSG_MAX]);

/* Opens a device on a backend table that need not be in loom_backends[]
 * (tests use it for fake backends; loom_device_open calls it). */
loom_status loom_device_open_ops(const struct loom_backend_ops *ops, const char *options,
                                 loom_device **out, char msg[LOOM_MSG_MAX]);

#endif
