/*
 * hwregs.c - the register programming sequence of docs/registers.md, once,
 * for every backend that drives registers (tsim, linux user-space tests,
 * xrt).
 *
 * The transport is the caller's: `struct loom_reg_io` reads and writes a
 * 32-bit register at a byte offset and, in simulation, lets time pass while
 * polling.  Two hardware facts shape the code:
 *
 *   - CTRL.DONE is clear-on-read, so the only read of CTRL that may observe
 *     DONE is the one in loom_hw_poll_done(); the idle wait before a start
 *     reads CTRL too, which harmlessly clears a stale DONE of the previous
 *     job.
 *   - 64-bit registers (addresses, sizes, counters) are two words written or
 *     read low word first.
 *
 * Polling loops are bounded (LOOM_HW_IDLE_POLLS) so a dead device yields
 * LOOM_E_TIMEOUT instead of a hang.
 */
#include <stdio.h>

#include "hwregs.h"
#include "loom/isa.h"
#include "runtime.h"

/* Polls of CTRL.IDLE before giving up, before a start and after a reset. */
#define LOOM_HW_IDLE_POLLS 100000u
/* Simulated cycles between idle polls. */
#define LOOM_HW_IDLE_CYCLES 16u

static void write64(const struct loom_reg_io *io, uint32_t lo_off, uint64_t v) {
  io->write(io->ctx, lo_off, (uint32_t)v);
  io->write(io->ctx, lo_off + 4, (uint32_t)(v >> 32));
}

static uint64_t read64(const struct loom_reg_io *io, uint32_t lo_off) {
  uint64_t lo = io->read(io->ctx, lo_off);
  uint64_t hi = io->read(io->ctx, lo_off + 4);
  return lo | hi << 32;
}

/* "'tiny' (0xBE827F10)" or "an unknown config (0x12345678)". */
static void config_text(uint32_t hash, char *out, size_t n) {
  const struct loom_hw_config *c = loom_hw_config_by_hash(hash);
  if (c) snprintf(out, n, "'%s' (0x%08X)", c->name, hash);
  else snprintf(out, n, "an unknown config (0x%08X)", hash);
}

loom_status loom_hw_probe(const struct loom_reg_io *io, uint32_t expected_hash, uint32_t *hash,
                          char msg[LOOM_MSG_MAX]) {
  uint32_t id = io->read(io->ctx, LOOM_REG_ID);
  if (id != LOOM_HW_ID)
    return loom_fail(msg, LOOM_E_CONFIG, "no Loom accelerator: ID reads 0x%08X, expected 0x%08X",
                     id, LOOM_HW_ID);
  uint32_t version = io->read(io->ctx, LOOM_REG_VERSION);
  if ((version & 0xFFFFu) != LOOM_ISA_VERSION)
    return loom_fail(msg, LOOM_E_CONFIG, "accelerator speaks ISA version %u, this runtime %u",
                     version & 0xFFFFu, LOOM_ISA_VERSION);
  uint32_t h = io->read(io->ctx, LOOM_REG_CONFIG_HASH);
  if (hash) *hash = h;
  if (expected_hash && h != expected_hash) {
    char have[64], want[64];
    config_text(h, have, sizeof have);
    config_text(expected_hash, want, sizeof want);
    return loom_fail(msg, LOOM_E_CONFIG, "accelerator implements config %s, expected %s", have,
                     want);
  }
  return LOOM_OK;
}

/* Polls CTRL until `bit` is set; 1 when seen. */
static int poll_ctrl(const struct loom_reg_io *io, uint32_t bit, uint64_t max_polls,
                     uint32_t idle_cycles) {
  for (uint64_t i = 0; i < max_polls; i++) {
    if (io->read(io->ctx, LOOM_REG_CTRL) & bit) return 1;
    if (io->idle) io->idle(io->ctx, idle_cycles);
  }
  return 0;
}

static loom_status check_addresses(uint64_t insn_addr, const struct loom_hw_segment seg[8],
                                   char msg[LOOM_MSG_MAX]) {
  if (insn_addr & 15)
    return loom_fail(msg, LOOM_E_INVALID, "instruction address 0x%llx is not 16-byte aligned",
                     (unsigned long long)insn_addr);
  for (int s = 0; s < LOOM_NUM_SEGMENTS; s++)
    if (seg[s].size && (seg[s].base & 63))
      return loom_fail(msg, LOOM_E_INVALID, "segment %d base 0x%llx is not 64-byte aligned", s,
                       (unsigned long long)seg[s].base);
  return LOOM_OK;
}

static void write_segments(const struct loom_reg_io *io, const struct loom_hw_segment seg[8]) {
  for (uint32_t s = 0; s < LOOM_NUM_SEGMENTS; s++) {
    uint32_t off = s * LOOM_REG_SEG_STRIDE;
    write64(io, LOOM_REG_SEG_BASE_LO + off, seg[s].size ? seg[s].base : 0);
    write64(io, LOOM_REG_SEG_SIZE_LO + off, seg[s].size);
  }
}

loom_status loom_hw_start(const struct loom_reg_io *io, uint64_t insn_addr, uint32_t insn_count,
                          const struct loom_hw_segment seg[8], int use_interrupt,
                          char msg[LOOM_MSG_MAX]) {
  loom_status st = check_addresses(insn_addr, seg, msg);
  if (st != LOOM_OK) return st;
  if (!poll_ctrl(io, LOOM_CTRL_IDLE, LOOM_HW_IDLE_POLLS, LOOM_HW_IDLE_CYCLES))
    return loom_fail(msg, LOOM_E_TIMEOUT, "accelerator never became idle (CTRL.IDLE stays 0)");
  write64(io, LOOM_REG_INSN_ADDR_LO, insn_addr);
  io->write(io->ctx, LOOM_REG_INSN_COUNT, insn_count);
  write_segments(io, seg);
  io->write(io->ctx, LOOM_REG_ISR, 1);
  io->write(io->ctx, LOOM_REG_IER, use_interrupt ? 1u : 0u);
  io->write(io->ctx, LOOM_REG_GIE, use_interrupt ? 1u : 0u);
  io->write(io->ctx, LOOM_REG_CTRL, LOOM_CTRL_START);
  return LOOM_OK;
}

int loom_hw_poll_done(const struct loom_reg_io *io, uint64_t max_polls, uint32_t idle_cycles) {
  return poll_ctrl(io, LOOM_CTRL_DONE, max_polls, idle_cycles);
}

void loom_hw_collect(const struct loom_reg_io *io, struct loom_job_result *res) {
  res->error = io->read(io->ctx, LOOM_REG_ERR_STATUS);
  res->error_insn = io->read(io->ctx, LOOM_REG_ERR_INSN);
  for (uint32_t c = 0; c < LOOM_CNT_COUNT; c++)
    res->counters[c] = read64(io, LOOM_REG_COUNTER_BASE + c * LOOM_REG_COUNTER_STRIDE);
  res->message[0] = '\0';
  io->write(io->ctx, LOOM_REG_ISR, 1);
}

/* SOFT_RESET is written 1 and, once the device is idle, back to 0: correct
 * whether the RTL treats it as a pulse or as a level. */
loom_status loom_hw_reset(const struct loom_reg_io *io, char msg[LOOM_MSG_MAX]) {
  io->write(io->ctx, LOOM_REG_SOFT_RESET, 1);
  int idle = poll_ctrl(io, LOOM_CTRL_IDLE, LOOM_HW_IDLE_POLLS, LOOM_HW_IDLE_CYCLES);
  io->write(io->ctx, LOOM_REG_SOFT_RESET, 0);
  io->write(io->ctx, LOOM_REG_ISR, 1);
  if (!idle) return loom_fail(msg, LOOM_E_TIMEOUT, "accelerator not idle after SOFT_RESET");
  return LOOM_OK;
}
