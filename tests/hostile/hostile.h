/*
 * hostile.h - the hostile-binary generator and runner (tests/hostile/).
 *
 *   hostile_mutate.c  turns a valid .loom image into a mutant: one or two
 *                     mutations (segments out of range, huge loops, SRAM
 *                     indices, tokens, a missing FINISH, bit flips in
 *                     instructions, micro-ops, records or anywhere), chosen
 *                     by a seed, so mutant K of seed S is always the same;
 *   hostile_run.c     runs an image on a device in a child process with a
 *                     deadline and reports how it ended;
 *   hostile.c         the program: loops over mutants for a time or count
 *                     budget, runs each on fsim and, when a simulator
 *                     library exists, on tsim, classifies the outcomes and
 *                     prints the tables docs/reliability.md quotes.
 *
 * Every mutant must end in one of three ways: the loader refuses it with a
 * message, the hardware checks stop it with an error status (or the job
 * times out and the device is reset), or it completes.  Anything else - a
 * crash, a sanitizer report, a hang past the deadline, a DRAM access
 * outside the job's windows (tsim), a device that does not run the
 * unmutated model correctly afterwards - is a failure, and so is fsim and
 * tsim disagreeing on the error code of a job with one error.
 */
#ifndef LOOM_HOSTILE_H
#define LOOM_HOSTILE_H

#include <stddef.h>
#include <stdint.h>

#include "loom/loom.h"

/* ---- hostile_mutate.c ---- */

struct hrng {
  uint64_t s;
};

uint64_t hrng_next(struct hrng *r);
uint32_t hrng_below(struct hrng *r, uint32_t n); /* 0..n-1; 0 when n == 0 */

enum mut_kind {
  MUT_SEGMENT,      /* LOAD/STORE past its segment's end, or to an unmapped segment */
  MUT_HUGE_LOOP,    /* GEMM/ALU loop extents (or a 2-D transfer) near the field maximum */
  MUT_SRAM,         /* SRAM base, loop factors or micro-op range past a buffer */
  MUT_TOKENS,       /* pop/push flags flipped: unbalanced tokens, illegal flags */
  MUT_NO_FINISH,    /* FINISH turned into a NOP, or cut off the job's range */
  MUT_INSN_BITS,    /* random bit flips in instructions */
  MUT_RANDOM_INSN,  /* an instruction replaced by a random legal one */
  MUT_UOP_DATA,     /* micro-op tables in DATA with out-of-range indices */
  MUT_JOB_TABLE,    /* a job's segment table or instruction range changed */
  MUT_RECORD_BITS,  /* bit flips in header fields and records (crc fixed) */
  MUT_RAW_BITS,     /* bit flips anywhere, crc left stale */
  MUT_COUNT
};

extern const char *const mut_names[MUT_COUNT];

struct mutant {
  uint8_t *bytes;            /* malloc'd image */
  size_t size;
  int n_kinds;
  enum mut_kind kinds[2];
  char what[256];            /* what was changed, for reports */
};

/* Mutant `index` of `seed` from the valid image `base`.  0, or -1 when the
 * base does not parse (then nothing is allocated). */
int hostile_mutate(const uint8_t *base, size_t size, uint64_t seed, uint64_t index,
                   struct mutant *out);

/* ---- hostile_run.c ---- */

enum run_outcome {
  RUN_REJECTED,   /* the loader refused the image (status and message kept) */
  RUN_OK,         /* every step completed */
  RUN_JOB_ERROR,  /* a job stopped with an ISA error code (err, err_insn, job) */
  RUN_TIMEOUT,    /* a job timed out (tsim) or ran out of its work budget (fsim) */
  RUN_HOST_ERROR, /* a host step refused its tensors */
  RUN_VIOLATION,  /* tsim: the DRAM model saw an access outside the windows or an AXI error */
  RUN_CRASH,      /* the child died by a signal or a sanitizer report */
  RUN_HANG,       /* the child outlived its deadline and was killed */
  RUN_COUNT
};

extern const char *const run_outcome_names[RUN_COUNT];

struct run_result {
  enum run_outcome outcome;
  loom_status status;
  uint32_t err, err_insn, job, step;
  uint64_t out_hash;         /* FNV-1a of every output, RUN_OK only */
  uint64_t cycles;           /* CYCLES counter summed over the jobs (0 on fsim) */
  int recovery;              /* 1: the base model ran correctly afterwards, 0: it did not, -1: not tried */
  int child_status;          /* raw wait status, for CRASH */
  char msg[384];
};

struct run_env {
  loom_device *dev;          /* opened before fork; each child gets a copy */
  uint32_t timeout_ms;       /* per job */
  uint32_t deadline_ms;      /* whole child, then SIGKILL */
  const uint8_t *base;       /* recovery check: the unmutated model ... */
  size_t base_size;
  uint64_t base_hash;        /* ... and its expected output hash (0: no check) */
  const char *dump;          /* non-NULL: the child prints every output, prefixed by this */
};

/* Loads and runs `bytes` on each of the n devices envs[i].dev, in n child
 * processes at once; then, in each child whose run did not complete and
 * whose base_hash is set, runs the base model on the same device and checks
 * its outputs.  Fills r[0..n). */
void hostile_run(const struct run_env *envs, int n, const uint8_t *bytes, size_t size,
                 struct run_result *r);

/* Inputs of a model get deterministic values (the same on every backend). */
void hostile_set_inputs(loom_model *m);
uint64_t hostile_output_hash(loom_model *m);

/* ---- hostile_race.c ---- */

/* 1 when some job of the file holds two instructions of different modules
 * that touch the same SRAM rows, one writing, with no token chain ordering
 * them (a race); `what` (n bytes, may be NULL) names the first pair. */
int hostile_races(const uint8_t *bytes, size_t size, char *what, size_t n);

#endif
