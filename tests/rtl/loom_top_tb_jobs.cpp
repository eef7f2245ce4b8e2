// loom_top_tb_jobs.cpp - the random instruction streams of the bring-up
// test (loom_top_tb.h), encoded through the real encoder:
//
//   gen_tile   a VTA-like double-buffered tile program, race free, so the
//              whole final state is compared;
//   gen_chaos  random queues, tokens and at most one erroneous instruction,
//              where only schedule-independent state is compared;
//   gen_perf   throughput probes of one long GEMM or ALU loop;
//   fill_dram  random DRAM contents with micro-ops that are mostly in range.
#include <cstdlib>
#include <cstring>

#include "loom_top_tb.h"

namespace tb {

// ---------------------------------------------------------------- jobs
static void emit(job &j, const struct loom_insn &in) {
  uint8_t b[16];
  const char *bad = nullptr;
  if (loom_insn_encode(&in, b, &bad)) {
    fprintf(stderr, "tb bug: field %s does not fit\n", bad ? bad : "?");
    exit(2);
  }
  j.insns.insert(j.insns.end(), b, b + 16);
}

static struct loom_insn mem_insn(int op, int buf, uint32_t base, int seg, uint32_t off, uint32_t y,
                                 uint32_t x, uint32_t stride) {
  struct loom_insn in;
  memset(&in, 0, sizeof in);
  in.opcode = (uint32_t)op;
  in.mem.buffer = (uint32_t)buf;
  in.mem.sram_base = base;
  in.mem.segment = (uint32_t)seg;
  in.mem.dram_offset = off;
  in.mem.y_size = y;
  in.mem.x_size = x;
  in.mem.x_stride = stride;
  return in;
}

static uint32_t row_bytes(int buf, int src_int8) { return loom_hw_row_bytes(cfg, buf, src_int8); }

// A random transfer that fits `rows` SRAM rows and mostly its segment.
static void rand_xfer(struct loom_insn &in, uint32_t rows, uint64_t seg_size, bool pads) {
  uint32_t r = row_bytes((int)in.mem.buffer, (int)in.mem.src_int8);
  if (pads) {
    in.mem.y_pad_top = (uint32_t)rnd(3);
    in.mem.y_pad_bottom = (uint32_t)rnd(3);
    in.mem.x_pad_left = (uint32_t)rnd(3);
    in.mem.x_pad_right = (uint32_t)rnd(3);
    in.mem.pad_value = (int32_t)rnd(256) - 128;
  }
  uint32_t ph = in.mem.y_pad_top + in.mem.y_pad_bottom, pw = in.mem.x_pad_left + in.mem.x_pad_right;
  uint32_t x = 1 + (uint32_t)rnd(6), y = 1 + (uint32_t)rnd(4);
  if (chance(12)) {  // long rows: bursts split at 256 beats and 4 KiB
    x = 1 + (uint32_t)rnd(rows);
    y = 1 + (uint32_t)rnd(2);
  }
  while ((y + ph) * (x + pw) > rows && x > 1) x--;
  while ((y + ph) * (x + pw) > rows && y > 1) y--;
  // fits its segment (strides add at most 3 rows)
  while (((uint64_t)(y - 1) * (x + 3) + x) * r > seg_size && (x > 1 || y > 1)) {
    if (x > 1) x = (x + 1) / 2;
    else y--;
  }
  in.mem.x_size = x;
  in.mem.y_size = y;
  in.mem.x_stride = x + (uint32_t)rnd(4);
  uint32_t used = (y + ph) * (x + pw);
  in.mem.sram_base = used <= rows ? (uint32_t)rnd(rows - used + 1) : 0;
  uint64_t span = (uint64_t)(y - 1) * in.mem.x_stride + x;
  uint64_t max_off = seg_size / r > span ? seg_size / r - span : 0;
  in.mem.dram_offset = (uint32_t)rnd(max_off + 1);
}

// A VTA-like double-buffered tile program: no token imbalance, indices in
// range; exercises every instruction and both ALU operand forms.
void gen_tile(job &j) {
  unsigned lanes = (unsigned)(cfg->batch * cfg->block_out);
  uint32_t uop_n = 1 + (uint32_t)rnd(24);
  int tiles = 1 + (int)rnd(5);
  // segments: 0 inp, 1 wgt, 2 uop, 3 acc, 4 out
  uint64_t at = 0;
  uint64_t sizes[5] = {16384, 65536, 4096, 32768, 16384};
  for (int s = 0; s < 8; s++) j.seg_base[s] = j.seg_size[s] = 0;
  for (int s = 0; s < 5; s++) {
    j.seg_base[s] = at;
    j.seg_size[s] = sizes[s] - (chance(30) ? rnd(64) * 4 : 0);
    at += sizes[s] + 4096 * rnd(2);
  }
  struct loom_insn in;
  // micro-ops, at any 4-byte alignment
  in = mem_insn(LOOM_OP_LOAD, LOOM_BUF_UOP, (uint32_t)rnd(64), 2, (uint32_t)rnd(200), 1, uop_n, uop_n);
  uint32_t uop_base = in.mem.sram_base;
  if (chance(50)) {  // two rows of micro-ops
    in.mem.y_size = 2;
    in.mem.x_size = (uop_n + 1) / 2;
    in.mem.x_stride = in.mem.x_size + (uint32_t)rnd(3);
    uop_n = 2 * in.mem.x_size;
  }
  emit(j, in);
  uint32_t inp_rows_used = 32, wgt_rows_used = 32, acc_rows_used = 64;
  for (int t = 0; t < tiles; t++) {
    // load: INP with padding, WGT
    in = mem_insn(LOOM_OP_LOAD, LOOM_BUF_INP, 0, 0, 0, 1, 1, 1);
    rand_xfer(in, inp_rows_used, j.seg_size[0], chance(60));
    in.pop_next = t > 0;
    emit(j, in);
    in = mem_insn(LOOM_OP_LOAD, LOOM_BUF_WGT, 0, 1, 0, 1, 1, 1);
    rand_xfer(in, wgt_rows_used, j.seg_size[1], false);
    in.push_next = 1;
    emit(j, in);
    // compute
    in = mem_insn(LOOM_OP_LOAD, LOOM_BUF_ACC, 0, 3, 0, 1, 1, 1);
    in.mem.src_int8 = chance(50);
    rand_xfer(in, acc_rows_used, j.seg_size[3], chance(50));
    in.pop_prev = 1;
    in.pop_next = t > 0;
    emit(j, in);
    int ops = 1 + (int)rnd(5);
    for (int k = 0; k < ops; k++) {
      memset(&in, 0, sizeof in);
      if (chance(50)) {
        in.opcode = LOOM_OP_GEMM;
        in.gemm.reset = chance(15);
        in.gemm.uop_begin = uop_base + (uint32_t)rnd(uop_n);
        in.gemm.uop_end = in.gemm.uop_begin + 1 + (uint32_t)rnd(uop_base + uop_n - in.gemm.uop_begin);
        in.gemm.iter_out = 1 + (uint32_t)rnd(3);
        in.gemm.iter_in = 1 + (uint32_t)rnd(3);
        in.gemm.acc_factor_out = (uint32_t)rnd(8);
        in.gemm.acc_factor_in = (uint32_t)rnd(4);
        in.gemm.inp_factor_out = (uint32_t)rnd(6);
        in.gemm.inp_factor_in = (uint32_t)rnd(3);
        in.gemm.wgt_factor_out = (uint32_t)rnd(5);
        in.gemm.wgt_factor_in = (uint32_t)rnd(3);
      } else if (chance(30)) {
        in.opcode = LOOM_OP_QCFG;
        in.qcfg.multiplier = (int32_t)(uint32_t)rng();
        if (chance(50)) in.qcfg.multiplier = (int32_t)((1u << 30) + rnd(1u << 30));
        in.qcfg.shift = (uint32_t)rnd(64);
        in.qcfg.zero_point = (int32_t)rnd(256) - 128;
        in.qcfg.clamp_lo = (int32_t)rnd(256) - 128;
        in.qcfg.clamp_hi = chance(80) ? 127 : (int32_t)rnd(256) - 128;
        in.qcfg.round_even = chance(50);
      } else {
        in.opcode = LOOM_OP_ALU;
        in.alu.alu_op = (uint32_t)rnd(LOOM_ALU_COUNT);
        in.alu.use_imm = chance(50);
        in.alu.imm = (int32_t)rnd(65536) - 32768;
        if (chance(30)) in.alu.imm = (int32_t)rnd(40) - 4;
        in.alu.uop_begin = uop_base + (uint32_t)rnd(uop_n);
        in.alu.uop_end = in.alu.uop_begin + 1 + (uint32_t)rnd(uop_base + uop_n - in.alu.uop_begin);
        in.alu.iter_out = 1 + (uint32_t)rnd(3);
        in.alu.iter_in = 1 + (uint32_t)rnd(3);
        in.alu.dst_factor_out = (uint32_t)rnd(8);
        in.alu.dst_factor_in = (uint32_t)rnd(3);
        in.alu.src_factor_out = (uint32_t)rnd(8);
        in.alu.src_factor_in = (uint32_t)rnd(3);
      }
      emit(j, in);
    }
    memset(&in, 0, sizeof in);
    in.opcode = LOOM_OP_NOP;
    in.nop.queue = LOOM_Q_COMPUTE;
    in.push_prev = 1;
    in.push_next = 1;
    emit(j, in);
    // store
    in = mem_insn(LOOM_OP_STORE, LOOM_BUF_OUT, 0, 4, 0, 1, 1, 1);
    rand_xfer(in, acc_rows_used, j.seg_size[4], false);
    in.pop_prev = 1;
    in.push_prev = 1;
    emit(j, in);
  }
  (void)lanes;
  memset(&in, 0, sizeof in);
  in.opcode = LOOM_OP_FINISH;
  emit(j, in);
}

// Random queues and tokens (deadlocks, NOFINISH, FINISH anywhere), with at
// most one instruction that can raise an error (a bad segment, SRAM range,
// micro-op index or encoding), so that the reported error does not depend
// on timing.  Chaos programs race on the shared buffers (nothing orders a
// STORE after the GEMM that fills OUT), so only schedule-independent state
// is compared: the error, its index and the exact counters.
void gen_chaos(job &j) {
  // segments 0..5: 16 KiB; 6: 64 bytes; 7: unmapped.  Micro-ops come from
  // segment 2, which fill_dram() fills with in-range micro-ops.
  for (int s = 0; s < 8; s++) {
    j.seg_base[s] = (uint64_t)s * (16384 + 4096);
    j.seg_size[s] = s < 6 ? 16384 : s == 6 ? 64 : 0;
  }
  int n = 1 + (int)rnd(40);
  int bad = chance(40) ? (int)rnd(n) : -1;
  for (int i = 0; i < n; i++) {
    struct loom_insn in;
    memset(&in, 0, sizeof in);
    int kind = (int)rnd(100);
    int q;
    bool make_bad = i == bad;
    if (kind < 30) {
      int buf = (int)rnd(4);
      int seg = buf == LOOM_BUF_UOP ? 2 : (int)rnd(6);
      in = mem_insn(LOOM_OP_LOAD, buf, 0, seg, 0, 1, 1, 1);
      in.mem.src_int8 = buf == LOOM_BUF_ACC && chance(50);
      rand_xfer(in, buf == LOOM_BUF_UOP ? 64 : 48, buf == LOOM_BUF_UOP ? 4096 : 16384,
                (buf == LOOM_BUF_INP || buf == LOOM_BUF_ACC) && chance(50));
      if (chance(5)) in.mem.x_size = 0;
      if (make_bad) {
        switch (rnd(3)) {
        case 0: in.mem.segment = 6 + (uint32_t)rnd(2); break;
        case 1: in.mem.dram_offset += 100000; break;
        default: in.mem.sram_base = loom_hw_buffer_rows(cfg, buf) - (uint32_t)rnd(3); break;
        }
      }
      q = (buf == LOOM_BUF_INP || buf == LOOM_BUF_WGT) ? LOOM_Q_LOAD : LOOM_Q_COMPUTE;
    } else if (kind < 45) {
      in = mem_insn(LOOM_OP_STORE, LOOM_BUF_OUT, 0, (int)rnd(6), 0, 1, 1, 1);
      rand_xfer(in, 48, 16384, false);
      if (make_bad) {
        if (chance(50)) in.mem.segment = 6 + (uint32_t)rnd(2);
        else in.mem.sram_base = (uint32_t)cfg->acc_rows - (uint32_t)rnd(3);
      }
      q = LOOM_Q_STORE;
    } else if (kind < 60) {
      in.opcode = LOOM_OP_GEMM;
      in.gemm.reset = chance(20);
      in.gemm.uop_begin = (uint32_t)rnd(64);
      in.gemm.uop_end = in.gemm.uop_begin + (uint32_t)rnd(8);
      in.gemm.iter_out = (uint32_t)rnd(3);
      in.gemm.iter_in = (uint32_t)rnd(3);
      in.gemm.acc_factor_out = (uint32_t)rnd(40);
      in.gemm.inp_factor_out = (uint32_t)rnd(40);
      in.gemm.wgt_factor_out = (uint32_t)rnd(40);
      in.gemm.acc_factor_in = (uint32_t)rnd(3);
      if (make_bad) {
        in.gemm.iter_out = 3;
        switch (rnd(4)) {
        case 0: in.gemm.acc_factor_out = 2000; break;
        case 1: in.gemm.inp_factor_out = 2000; break;
        case 2: in.gemm.wgt_factor_out = 1000; break;
        default: in.gemm.uop_begin = (uint32_t)cfg->uop_rows - 2; in.gemm.uop_end = in.gemm.uop_begin + 4; break;
        }
      }
      q = LOOM_Q_COMPUTE;
    } else if (kind < 72) {
      in.opcode = LOOM_OP_ALU;
      in.alu.alu_op = (uint32_t)rnd(LOOM_ALU_COUNT);
      in.alu.use_imm = chance(50);
      in.alu.imm = (int32_t)rnd(65536) - 32768;
      in.alu.uop_begin = (uint32_t)rnd(64);
      in.alu.uop_end = in.alu.uop_begin + (uint32_t)rnd(8);
      in.alu.iter_out = (uint32_t)rnd(3);
      in.alu.iter_in = (uint32_t)rnd(3);
      in.alu.dst_factor_out = (uint32_t)rnd(60);
      in.alu.src_factor_out = (uint32_t)rnd(60);
      if (make_bad) {
        in.alu.iter_out = 3;
        in.alu.use_imm = 0;
        if (chance(50)) in.alu.dst_factor_out = 2000;
        else in.alu.src_factor_out = 2000;
      }
      q = LOOM_Q_COMPUTE;
    } else if (kind < 77) {
      in.opcode = LOOM_OP_QCFG;
      in.qcfg.multiplier = (int32_t)(uint32_t)rng();
      in.qcfg.shift = (uint32_t)rnd(64);
      in.qcfg.clamp_lo = -128;
      in.qcfg.clamp_hi = 127;
      q = LOOM_Q_COMPUTE;
    } else if (kind < 80) {
      in.opcode = LOOM_OP_FINISH;
      q = LOOM_Q_COMPUTE;
    } else {
      in.opcode = LOOM_OP_NOP;
      in.nop.queue = (uint32_t)rnd(3);
      q = (int)in.nop.queue;
    }
    if (chance(40)) {
      in.pop_prev = chance(50) && q != LOOM_Q_LOAD;
      in.push_prev = chance(50) && q != LOOM_Q_LOAD;
      in.pop_next = chance(50) && q != LOOM_Q_STORE;
      in.push_next = chance(50) && q != LOOM_Q_STORE;
    }
    emit(j, in);
    if (make_bad && chance(25)) {  // or make it illegal, in one of several ways
      uint8_t *b = &j.insns[j.insns.size() - 16];
      switch (rnd(4)) {
      case 0: loom_bits_set(b, 127, 1, 1); break;  // reserved, or wgt_transpose (legal on LOAD WGT)
      case 1: loom_bits_set(b, 0, 3, 7); break;                              // opcode 7
      case 2: loom_bits_set(b, 3, 1, 1); loom_bits_set(b, 5, 1, 1); break;   // tokens
      default: loom_bits_set(b, 7, 3, 5 + (unsigned)rnd(3)); break;          // buffer/op/queue
      }
    }
  }
  if (chance(70)) {
    struct loom_insn in;
    memset(&in, 0, sizeof in);
    in.opcode = LOOM_OP_FINISH;
    emit(j, in);
  }
}

// Pre-fill DRAM segments with random bytes (micro-ops made mostly valid).
void fill_dram(const job &j) {
  for (auto &b : dram) b = (uint8_t)rng();
  // micro-ops in segment 2 of tile jobs: keep indices small
  unsigned lanes = (unsigned)(cfg->batch * cfg->block_out);
  (void)lanes;
  for (uint64_t o = 0; o + 4 <= j.seg_size[2] && o < 4096; o += 4) {
    struct loom_uop u = {(uint32_t)rnd(64), (uint32_t)rnd(32), (uint32_t)rnd(32)};
    uint8_t b[4];
    loom_uop_encode(&u, b);
    memcpy(&dram[j.seg_base[2] + o], b, 4);
  }
}

// Throughput probes: a job of one UOP load and one long loop instruction.
void gen_perf(job &j, int what) {
  for (int s = 0; s < 8; s++) j.seg_base[s] = j.seg_size[s] = 0;
  j.seg_base[2] = 0;
  j.seg_size[2] = 4096;
  struct loom_insn in = mem_insn(LOOM_OP_LOAD, LOOM_BUF_UOP, 0, 2, 0, 1, 64, 64);
  emit(j, in);
  memset(&in, 0, sizeof in);
  if (what == 0 || what == 3) {  // GEMM: 4 x 4 x 64 micro-ops
    in.opcode = LOOM_OP_GEMM;
    in.gemm.uop_begin = 0;
    in.gemm.uop_end = 64;
    in.gemm.iter_out = 4;
    in.gemm.iter_in = 4;
  } else {  // ALU: same loop, immediate (1) or vector (2) operand
    in.opcode = LOOM_OP_ALU;
    in.alu.alu_op = what == 1 ? LOOM_ALU_ADD : LOOM_ALU_MAX;
    in.alu.use_imm = what == 1;
    in.alu.imm = 3;
    in.alu.uop_begin = 0;
    in.alu.uop_end = 64;
    in.alu.iter_out = 4;
    in.alu.iter_in = 4;
  }
  emit(j, in);
  memset(&in, 0, sizeof in);
  in.opcode = LOOM_OP_FINISH;
  emit(j, in);
}

}  // namespace tb
