/*
 * testcalib.h - calibration data for compiler tests: random float samples
 * of a model input's shape written to a temporary .npy (one batch of n
 * samples), removed again after the test.
 */
#ifndef LOOM_TESTCALIB_H
#define LOOM_TESTCALIB_H

#include <stdint.h>

struct calib_file {
  char dir[64], path[96];
};

/* n samples of dims[1..rank) (dims[0] is the batch), uniform in [-1, 2),
 * seeded; 0, or -1 when the file cannot be written. */
int write_calib(struct calib_file *c, int rank, const int64_t *dims, int n, unsigned seed);
void remove_calib(struct calib_file *c);

#endif
