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

#include <assert.h>
#include <stdarg.h>

#include "backend.h"
#include "loomfile.h"

/* Broken invariants (bugs in Loom, never user input). */
#define LOOM_ASSERT(cond) assert(cond)

/* ---- device.c ---- */

struct loom_device {
  const struct loom_backend_ops *ops;
  void *state;                        /* the backend's instance */
  const struct loom_hw_config *cfg;
  int job_pending;                    /* a submitted job not yet waited for */
  char msg[LOOM_MSG_MAX];             /* message of the last failure */
};

/* Formats a message into `msg` (when non-NULL) and returns `st`. */
loom_status loom_fail(char msg[LOOM_MSG_MAX], loom_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- buffer.c ---- */

struct loom_dma_buffer {
  loom_device *dev;
  struct loom_backend_buffer bb;
};

/* ---- model_io.c: tensors between the user's form and the stored form ---- */

/* Elements of the logical shape; 0 when a dimension is invalid or the
 * product overflows. */
uint64_t loom_tensor_elems(const struct loom_file_tensor *t);

/* Elements the stored layout occupies (channel padding included); 0 on an
 * invalid layout, rank or overflow. */
uint64_t loom_tensor_stored_elems(const struct loom_file_tensor *t);

/* Converts user data of type `ud` in logical C order into the tensor's
 * stored dtype and layout at `stored` (quantizing f32 when the tensor is a
 * quantized integer tensor).  Channel padding gets the zero point. */
loom_status loom_tensor_write(const struct loom_file_tensor *t, void *stored, loom_dtype ud,
                              const void *user, char msg[LOOM_MSG_MAX]);

/* The inverse: stored form into `user` (type `ud`, logical C order),
 * dequantizing to f32 when asked. */
loom_status loom_tensor_read(const struct loom_file_tensor *t, const void *stored, loom_dtype ud,
                             void *user, char msg[LOOM_MSG_MAX]);

/* Quantizes one value: clamp(round_half_even(x / scale) + zp) to the range
 * of `dt` (I8 or U8).  NaN maps to the zero point. */
int32_t loom_quantize1(float x, float scale, int32_t zp, loom_dtype dt);

#endif
