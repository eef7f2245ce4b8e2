/*
 * hwregs.h - register-level programming of a Loom accelerator from user
 * space.
 *
 * The sequence itself is driver/lib/hwseq.h, shared with the kernel
 * module; this is its user-space face for tsim, the XRT backend and the
 * tests: a register transport with an optional `idle` that lets simulated
 * time pass while polling, bounded polls, and errors as loom_status with a
 * message.  Nothing here knows how a register is reached.
 */
#ifndef LOOM_HWREGS_H
#define LOOM_HWREGS_H

#include <stdint.h>

#include "driver/lib/hwseq.h"
#include "loom/loom.h"

struct loom_reg_io {
  void *ctx;
  uint32_t (*read)(void *ctx, uint32_t offset);
  void (*write)(void *ctx, uint32_t offset, uint32_t value);
  /* optional: let simulated time pass while polling (tsim); NULL on boards */
  void (*idle)(void *ctx, uint32_t cycles);
};

/* Reads ID/VERSION/CONFIG_HASH; LOOM_E_CONFIG with a message when the
 * hardware is not a Loom or not `expected_hash` (0 = accept any). */
loom_status loom_hw_probe(const struct loom_reg_io *io, uint32_t expected_hash, uint32_t *hash,
                          char msg[LOOM_MSG_MAX]);

/* Programs and starts one job (steps 2-5).  The DONE latch (IER) is always
 * enabled; use_interrupt sets GIE, which drives the interrupt line. */
loom_status loom_hw_start(const struct loom_reg_io *io, uint64_t insn_addr, uint32_t insn_count,
                          const struct loom_hw_segment seg[8], int use_interrupt,
                          char msg[LOOM_MSG_MAX]);

/* Polls ISR.DONE up to max_polls times (calling io->idle between polls
 * when set); returns 1 when the job has ended, 0 when still running. */
int loom_hw_poll_done(const struct loom_reg_io *io, uint64_t max_polls, uint32_t idle_cycles);

/* After done: CTRL (acknowledge), ERR_STATUS, ERR_INSN and every counter;
 * clears ISR. */
void loom_hw_collect(const struct loom_reg_io *io, struct loom_job_result *res);

/* SOFT_RESET and wait for idle. */
loom_status loom_hw_reset(const struct loom_reg_io *io, char msg[LOOM_MSG_MAX]);

#endif
