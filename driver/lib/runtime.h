/*
 * runtime.h - libloom's internal map: the objects behind the opaque handles
 * of loom.h and the helpers the runtime's files share.  Nothing here is
 * public; backends see only backend.h.
 *
 * Ownership: a device owns its backend state; a buffer belongs to the device
 * it was allocated from and must be freed before the device is closed; a
 * model owns its parsed file, its buffers and one instruction buffer per job.
 */
#ifndef LOOM_RUNTIME_H
#define LOOM_RUNTIME_H

#include "backend.h"
#include "driver/core/core.h"
#include "driver/core/loomfile.h"

/* ---- device.c ---- */

struct loom_device {
  const struct loom_backend_ops *ops;
  void *state;                        /* the backend's instance */
  const struct loom_hw_config *cfg;
  int job_pending;                    /* a submitted job not yet waited for */
  int trust_native;                   /* option trust_native=1: run unsigned native code */
  char msg[LOOM_MSG_MAX];             /* message of the last failure */
};

/* Passes a job-progress callback to the backend (a no-op on backends
 * without set_progress). */
void loom_device_set_progress(loom_device *dev, void (*fn)(void *ctx, uint64_t done), void *ctx);

/* Options every backend accepts (device.c reads them; loom_option_check
 * lets them through). */
extern const char *const loom_device_option_keys[];

/* ---- buffer.c ---- */

struct loom_dma_buffer {
  loom_device *dev;
  struct loom_backend_buffer bb;
};

#endif
