/*
 * randstream_describe.c - one line per instruction of a random job, for the
 * differential test's failure reports (randstream.h).
 *
 * The line is made from the decoded form the generator kept, and the
 * encoded bytes are decoded again as fetch would: an instruction planted to
 * be illegal is marked with the reason loom_insn_decode() gives.
 */
#include "randstream.h"

static void describe_tokens(const struct loom_insn *in, FILE *f) {
  if (in->pop_prev) fputs(" pop_prev", f);
  if (in->pop_next) fputs(" pop_next", f);
  if (in->push_prev) fputs(" push_prev", f);
  if (in->push_next) fputs(" push_next", f);
}

static void describe_mem(const struct loom_insn_mem *m, FILE *f) {
  fprintf(f, " %s sram=%u seg=%u off=%u y=%u x=%u stride=%u", loom_buffer_name(m->buffer),
          m->sram_base, m->segment, m->dram_offset, m->y_size, m->x_size, m->x_stride);
  if (m->y_pad_top || m->y_pad_bottom || m->x_pad_left || m->x_pad_right)
    fprintf(f, " pad=%u/%u/%u/%u", m->y_pad_top, m->y_pad_bottom, m->x_pad_left, m->x_pad_right);
  if (m->pad_value) fprintf(f, " pad_value=%d", m->pad_value);
  if (m->src_int8) fputs(" int8", f);
  if (m->src_out) fputs(" src_out", f);
  if (m->wgt_transpose) fputs(" wgt_transpose", f);
}

void randstream_describe_insn(const struct randstream *rs, uint32_t i, FILE *f) {
  const struct loom_insn *in = &rs->decoded[i];
  struct loom_insn check;
  const char *why = NULL;
  int err = loom_insn_decode(rs->insns + 16 * i, &check, &why);
  fprintf(f, "%5u %-7s %-6s", i, loom_queue_name((uint32_t)loom_insn_queue(in)),
          loom_opcode_name(in->opcode));
  switch (in->opcode) {
  case LOOM_OP_LOAD:
  case LOOM_OP_STORE: describe_mem(&in->mem, f); break;
  case LOOM_OP_GEMM:
    fprintf(f, "%s%s%s%s uop=%u..%u iter=%ux%u acc=%u,%u inp=%u,%u wgt=%u,%u", in->gemm.reset ? " reset" : "",
            in->gemm.first ? " first" : "", in->gemm.last ? " last" : "", in->gemm.dw ? " dw" : "",
            in->gemm.uop_begin, in->gemm.uop_end, in->gemm.iter_out, in->gemm.iter_in,
            in->gemm.acc_factor_out, in->gemm.acc_factor_in, in->gemm.inp_factor_out,
            in->gemm.inp_factor_in, in->gemm.wgt_factor_out, in->gemm.wgt_factor_in);
    break;
  case LOOM_OP_ALU:
    fprintf(f, " %s %s%d uop=%u..%u iter=%ux%u dst=%u,%u src=%u,%u", loom_alu_op_name(in->alu.alu_op),
            in->alu.use_imm ? "imm=" : "vec (imm ", in->alu.imm, in->alu.uop_begin, in->alu.uop_end,
            in->alu.iter_out, in->alu.iter_in, in->alu.dst_factor_out, in->alu.dst_factor_in,
            in->alu.src_factor_out, in->alu.src_factor_in);
    if (!in->alu.use_imm) fputs(" ignored)", f);
    break;
  case LOOM_OP_QCFG:
    fprintf(f, " mul=%d shift=%u zp=%d clamp=%d..%d%s", in->qcfg.multiplier, in->qcfg.shift,
            in->qcfg.zero_point, in->qcfg.clamp_lo, in->qcfg.clamp_hi,
            in->qcfg.round_even ? " round_even" : "");
    fprintf(f, " bias=%d%s%s par=%u", in->qcfg.bias, in->qcfg.par_src ? " par_src" : "",
            in->qcfg.act ? " act" : "", in->qcfg.par_base);
    break;
  case LOOM_OP_GCFG:
    fprintf(f, " period=%u win=%ux%u step=%u,%u", in->gcfg.period, in->gcfg.dw_kh, in->gcfg.dw_kw,
            in->gcfg.dw_row, in->gcfg.dw_col);
    break;
  case LOOM_OP_NOP: fprintf(f, " queue=%s", loom_queue_name(in->nop.queue)); break;
  default: break;
  }
  describe_tokens(in, f);
  if (err) fprintf(f, "   <- ILLEGAL as encoded: %s", why ? why : "?");
  fputc('\n', f);
}

void randstream_describe(const struct randstream *rs, FILE *f) {
  for (int s = 0; s < LOOM_NUM_SEGMENTS; s++)
    if (rs->seg[s].size)
      fprintf(f, "segment %d: %llu bytes, %s\n", s, (unsigned long long)rs->seg[s].size,
              rs->seg[s].output ? "output" : "input");
  if (rs->expect_error)
    fprintf(f, "planted error: %s at insn %u\n", loom_error_name(rs->expect_error),
            rs->expect_error_insn);
  for (uint32_t i = 0; i < rs->insn_count; i++) randstream_describe_insn(rs, i, f);
}
