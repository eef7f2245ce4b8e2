/*
 * fsim_exact.h - an fsim backend for hostile-input tests: every buffer is
 * allocated with exactly the requested size.
 *
 * libloom's own fsim backend rounds buffers up to 64 bytes (the alignment a
 * segment base needs on hardware), so an fsim DMA that overruns a segment by
 * fewer than 64 bytes lands in slack memory and goes unnoticed.  This table
 * gives each buffer exactly `bytes` of heap, so under AddressSanitizer any
 * access past the end of a segment is a detected heap overflow: that is how
 * the hostile-binary runner and the .loom fuzzer prove that fsim never
 * touches memory outside a job's segments.
 *
 * Open it with loom_device_open_ops(&fsim_exact_backend, options, ...);
 * options: config=NAME (default "tiny"), budget=N (fsim work budget per job,
 * default 1000000; 0 = unlimited), fill=SEED (non-zero: before every job,
 * fill SRAM with pseudo-random bytes drawn from SEED, ACC and OUT kept
 * consistent, OUT = sat8(ACC)).  docs/isa.md leaves SRAM undefined at the
 * start of a job; a program whose outputs change with the fill reads SRAM
 * it never wrote.
 */
#ifndef LOOM_TEST_FSIM_EXACT_H
#define LOOM_TEST_FSIM_EXACT_H

#include "driver/lib/backend.h"

extern const struct loom_backend_ops fsim_exact_backend;

#endif
