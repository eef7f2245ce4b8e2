/*
 * testcalib.c - calibration files for compiler tests (testcalib.h).
 */
#include "testcalib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver/core/npy.h"

int write_calib(struct calib_file *c, int rank, const int64_t *dims, int n, unsigned seed) {
  char msg[LOOM_MSG_MAX];
  int64_t d[8] = {n};
  int64_t count = n;
  for (int i = 1; i < rank && i < 8; i++) d[i] = dims[i], count *= dims[i];
  float *x = malloc((size_t)count * sizeof *x + 1);
  if (!x) return -1;
  srand(seed);
  for (int64_t i = 0; i < count; i++) x[i] = (float)rand() / RAND_MAX * 3.0f - 1.0f;
  strcpy(c->dir, "/tmp/loom_compile_XXXXXX");
  int rc = mkdtemp(c->dir) ? 0 : -1;
  snprintf(c->path, sizeof c->path, "%s/a.npy", c->dir);
  if (!rc && loom_npy_write(c->path, LOOM_DT_F32, rank, d, x, msg) != LOOM_OK) rc = -1;
  free(x);
  return rc;
}

void remove_calib(struct calib_file *c) {
  unlink(c->path);
  rmdir(c->dir);
}
