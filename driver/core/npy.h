/*
 * npy.h - NumPy .npy files: versions 1.0 and 2.0, little-endian bool,
 * signed and unsigned integers of 8 to 64 bits, float16, float32 and
 * float64, C order (every loom_dtype but bfloat16, which numpy lacks).
 * Anything else is refused with a message that says what the file holds and
 * what is supported.
 */
#ifndef LOOM_NPY_H
#define LOOM_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "loom/loom.h"

#define LOOM_NPY_MAX_RANK 8
#define LOOM_NPY_MAX_BYTES (UINT64_C(1) << 32)

struct loom_npy {
  loom_dtype dtype;
  int rank;
  int64_t dims[LOOM_NPY_MAX_RANK];
  void *data;   /* owned, product(dims) elements */
  size_t bytes;
};

loom_status loom_npy_parse(const void *bytes, size_t size, const char *name, struct loom_npy *out,
                           char msg[LOOM_MSG_MAX]);
loom_status loom_npy_read(const char *path, struct loom_npy *out, char msg[LOOM_MSG_MAX]);
/* Writes version 1.0 (2.0 if the header needs it), atomically (outfile.h):
 * on failure the previous file at `path` is intact. */
loom_status loom_npy_write(const char *path, loom_dtype dtype, int rank, const int64_t *dims,
                           const void *data, char msg[LOOM_MSG_MAX]);
void loom_npy_free(struct loom_npy *n);

/* The bytes loom_npy_write writes (what numpy.save writes for the same
 * array), in a malloc'd buffer. */
loom_status loom_npy_encode(loom_dtype dtype, int rank, const int64_t *dims, const void *data,
                            uint8_t **out, size_t *size, char msg[LOOM_MSG_MAX]);

#endif
