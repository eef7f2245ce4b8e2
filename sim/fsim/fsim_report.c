/*
 * fsim_report.c - how fsim names instructions and words its errors.
 *
 * Every error fsim reports reads "insn N (LABEL): what went wrong", where N
 * is the stream index the hardware puts in ERR_INSN and LABEL is the opcode
 * with the operand that tells instructions apart at a glance ("LOAD INP",
 * "ALU REQUANT imm", "NOP STORE").  Errors that belong to the job rather
 * than to one instruction (DEADLOCK, NOFINISH) carry their own wording.
 * Only the first error of a job is recorded: the hardware stops there too.
 */
#include <stdarg.h>
#include <stdio.h>

#include "sim/fsim/fsim_internal.h"

void fsim_insn_label(const struct loom_insn *in, char *buf, size_t n) {
  const char *op = loom_opcode_name(in->opcode);
  switch (in->opcode) {
  case LOOM_OP_LOAD:
  case LOOM_OP_STORE: snprintf(buf, n, "%s %s", op, loom_buffer_name(in->mem.buffer)); break;
  case LOOM_OP_ALU:
    snprintf(buf, n, "%s %s%s", op, loom_alu_op_name(in->alu.alu_op),
             in->alu.use_imm ? " imm" : "");
    break;
  case LOOM_OP_NOP: snprintf(buf, n, "%s %s", op, loom_queue_name(in->nop.queue)); break;
  default: snprintf(buf, n, "%s", op); break;
  }
}

static void record(struct fsim *sim, uint32_t code, uint32_t index, const char *prefix,
                   const char *fmt, va_list ap) {
  struct fsim_result *res = sim->st.res;
  LOOM_ASSERT(res->error == LOOM_ERR_NONE && "the first error stops the job");
  LOOM_ASSERT(code != LOOM_ERR_NONE && code < LOOM_ERR_COUNT);
  res->error = code;
  res->err_insn = index;
  int k = snprintf(res->message, sizeof res->message, "%s", prefix);
  if (k < 0 || (size_t)k >= sizeof res->message) return;
  vsnprintf(res->message + k, sizeof res->message - (size_t)k, fmt, ap);
}

uint32_t fsim_fail(struct fsim *sim, uint32_t code, const struct fsim_slot *s, const char *fmt,
                   ...) {
  char label[48], prefix[80];
  fsim_insn_label(&s->insn, label, sizeof label);
  snprintf(prefix, sizeof prefix, "insn %u (%s): ", s->index, label);
  va_list ap;
  va_start(ap, fmt);
  record(sim, code, s->index, prefix, fmt, ap);
  va_end(ap);
  return code;
}

void fsim_fail_at(struct fsim *sim, uint32_t code, uint32_t index, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  record(sim, code, index, "", fmt, ap);
  va_end(ap);
}
