/*
 * hwregs.c - the register programming sequence of driver/lib/hwseq.h in
 * user space, for every backend that drives registers (tsim, xrt) and for
 * the tests.
 *
 * hwseq.h holds the steps, shared with the kernel module; this file adds
 * what user space needs around them:
 *
 *   - the transport: `struct loom_reg_io` reads and writes a 32-bit
 *     register and, in simulation, lets time pass while polling (`idle`);
 *   - bounded waits: an idle wait gives up after LOOM_HW_IDLE_POLLS polls
 *     (LOOM_HW_IDLE_CYCLES simulated cycles apart), so a dead device yields
 *     LOOM_E_TIMEOUT instead of a hang;
 *   - messages: every hwseq status becomes a loom_status and a sentence
 *     naming the register or address at fault.
 */
#include <stdio.h>

#include "hwregs.h"
#include "loom/isa.h"
#include "runtime.h"

/* Polls of CTRL.IDLE before giving up, before a start and after a reset. */
#define LOOM_HW_IDLE_POLLS 100000u
/* Simulated cycles between idle polls. */
#define LOOM_HW_IDLE_CYCLES 16u

static uint32_t seq_read(void *ctx, uint32_t off) {
  const struct loom_reg_io *io = ctx;
  return io->read(io->ctx, off);
}

static void seq_write(void *ctx, uint32_t off, uint32_t v) {
  const struct loom_reg_io *io = ctx;
  io->write(io->ctx, off, v);
}

static bool seq_pause(void *ctx, uint32_t polls) {
  const struct loom_reg_io *io = ctx;
  if (polls + 1 >= LOOM_HW_IDLE_POLLS) return false;
  if (io->idle) io->idle(io->ctx, LOOM_HW_IDLE_CYCLES);
  return true;
}

/* The hwseq transport over the caller's. */
static struct loom_hwseq_io seq_io(const struct loom_reg_io *io) {
  return (struct loom_hwseq_io){
      .ctx = (void *)io, .read = seq_read, .write = seq_write, .pause = seq_pause};
}

/* "'tiny' (0xBE827F10)" or "an unknown config (0x12345678)". */
static void config_text(uint32_t hash, char *out, size_t n) {
  const char *name = loom_hwseq_config_name(hash);
  if (name) snprintf(out, n, "'%s' (0x%08X)", name, hash);
  else snprintf(out, n, "an unknown config (0x%08X)", hash);
}

loom_status loom_hw_probe(const struct loom_reg_io *io, uint32_t expected_hash, uint32_t *hash,
                          char msg[LOOM_MSG_MAX]) {
  struct loom_hwseq_io sio = seq_io(io);
  struct loom_hwseq_ident id;
  switch (loom_hwseq_probe(&sio, &id)) {
  case LOOM_HWSEQ_OK: break;
  case LOOM_HWSEQ_NOT_LOOM:
    return loom_fail(msg, LOOM_E_CONFIG, "no Loom accelerator: ID reads 0x%08X, expected 0x%08X",
                     id.id, LOOM_HW_ID);
  default:
    return loom_fail(msg, LOOM_E_CONFIG, "accelerator speaks ISA version %u, this runtime %u",
                     id.version & 0xFFFFu, LOOM_ISA_VERSION);
  }
  if (hash) *hash = id.config_hash;
  if (expected_hash && id.config_hash != expected_hash) {
    char have[64], want[64];
    config_text(id.config_hash, have, sizeof have);
    config_text(expected_hash, want, sizeof want);
    return loom_fail(msg, LOOM_E_CONFIG, "accelerator implements config %s, expected %s", have,
                     want);
  }
  return LOOM_OK;
}

loom_status loom_hw_start(const struct loom_reg_io *io, uint64_t insn_addr, uint32_t insn_count,
                          const struct loom_hw_segment seg[8], int use_interrupt,
                          char msg[LOOM_MSG_MAX]) {
  struct loom_hwseq_io sio = seq_io(io);
  int bad = 0;
  switch (loom_hwseq_start(&sio, insn_addr, insn_count, seg, use_interrupt != 0, &bad)) {
  case LOOM_HWSEQ_OK: return LOOM_OK;
  case LOOM_HWSEQ_INSN_ALIGN:
    return loom_fail(msg, LOOM_E_INVALID, "instruction address 0x%llx is not 16-byte aligned",
                     (unsigned long long)insn_addr);
  case LOOM_HWSEQ_SEG_ALIGN:
    return loom_fail(msg, LOOM_E_INVALID, "segment %d base 0x%llx is not 64-byte aligned", bad,
                     (unsigned long long)seg[bad].base);
  default:
    return loom_fail(msg, LOOM_E_TIMEOUT, "accelerator never became idle (CTRL.IDLE stays 0)");
  }
}

int loom_hw_poll_done(const struct loom_reg_io *io, uint64_t max_polls, uint32_t idle_cycles) {
  struct loom_hwseq_io sio = seq_io(io);
  for (uint64_t i = 0; i < max_polls; i++) {
    if (loom_hwseq_done(&sio)) return 1;
    if (io->idle) io->idle(io->ctx, idle_cycles);
  }
  return 0;
}

void loom_hw_collect(const struct loom_reg_io *io, struct loom_job_result *res) {
  struct loom_hwseq_io sio = seq_io(io);
  loom_hwseq_collect(&sio, &res->error, &res->error_insn, res->counters);
  res->message[0] = '\0';
}

loom_status loom_hw_reset(const struct loom_reg_io *io, char msg[LOOM_MSG_MAX]) {
  struct loom_hwseq_io sio = seq_io(io);
  if (loom_hwseq_reset(&sio) != LOOM_HWSEQ_OK)
    return loom_fail(msg, LOOM_E_TIMEOUT, "accelerator not idle after SOFT_RESET");
  return LOOM_OK;
}
