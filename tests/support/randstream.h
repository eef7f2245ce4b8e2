/*
 * randstream.h - constrained-random Loom jobs for differential testing.
 *
 * randstream_build() turns (configuration, seed, knobs) into a complete job:
 * DRAM segments filled with random data and an instruction stream that is
 * LEGAL and DETERMINISTIC - its results do not depend on timing, so fsim and
 * the RTL must agree on every output byte and every exact counter:
 *
 *   - every SRAM row a stream reads was written earlier in the same job
 *     (a random working window of each buffer is initialized first);
 *   - every cross-module SRAM hazard (load -> GEMM on INP/WGT and back,
 *     GEMM/ALU -> STORE on OUT and back) is ordered by a dependency token;
 *     inputs and outputs live in different segments, so DRAM has no hazard;
 *   - tokens never deadlock: each pop has its push earlier in the stream and
 *     no queue ever holds more than token_queue_depth tokens in stream order
 *     (then every instruction's wait ends once the instructions before it
 *     have executed, whatever the timing); extra random tokens and NOPs
 *     stress the queues, and every token is drained before FINISH.
 *
 * With knobs.errors set, the stream also contains exactly one instruction
 * that raises an error (ILLEGAL, SEGMENT or SRAM) or ends without FINISH;
 * then only the error code and index are deterministic.
 *
 * The same (config, seed, knobs) always gives the same job, so a failing
 * seed is reproduced from its number.
 */
#ifndef LOOM_RANDSTREAM_H
#define LOOM_RANDSTREAM_H

#include <stdint.h>
#include <stdio.h>

#include "loom/hwconfig.h"
#include "loom/isa.h"

struct randstream_knobs {
  uint32_t actions;     /* random operations after initialization (default 40) */
  uint32_t max_loop;    /* micro-op executions per GEMM/ALU (default 256) */
  uint32_t max_rows;    /* SRAM rows of one LOAD/STORE (default 64) */
  uint32_t max_window;  /* working rows of a buffer (default 256) */
  uint32_t token_noise; /* percent chance of an extra token per instruction (default 10) */
  int errors;           /* 1: plant exactly one error (see above) */
  int v1_only;          /* 1: only ISA version 1 operations (no GEMM first/last/dw, EPI, GCFG,
                         * PAR, LUT, src_out, wgt_transpose): for hardware that lacks them */
};

struct randstream_seg {
  uint8_t *data;  /* host copy of the segment's initial contents */
  uint64_t size;  /* bytes; 0 = unmapped */
  int output;     /* 1: STOREs write it; 0: only read */
};

struct randstream {
  uint8_t *insns;       /* insn_count x 16 bytes */
  uint32_t insn_count;
  struct loom_insn *decoded;   /* the same stream, decoded, for describing */
  struct randstream_seg seg[LOOM_NUM_SEGMENTS];
  uint32_t expect_error;       /* LOOM_ERR_NONE, or the planted error */
  uint32_t expect_error_insn;  /* index of the planted error's instruction */
};

/* The defaults above. */
void randstream_knobs_default(struct randstream_knobs *k);

/* Builds the job for `seed`.  0, or -1 (out of memory) with a message. */
int randstream_build(const struct loom_hw_config *cfg, uint64_t seed,
                     const struct randstream_knobs *k, struct randstream *out, char *msg,
                     size_t msg_size);

void randstream_free(struct randstream *rs);

/* Writes one line describing instruction `i` (index, queue, fields, tokens). */
void randstream_describe_insn(const struct randstream *rs, uint32_t i, FILE *f);

/* The segment table and every instruction. */
void randstream_describe(const struct randstream *rs, FILE *f);

#endif
