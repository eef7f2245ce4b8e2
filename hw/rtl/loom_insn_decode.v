// loom_insn_decode - legality check and routing of one instruction.
//
// Combinational mirror of loom_insn_decode() and loom_insn_queue() in
// driver/core/isa.c, which docs/isa.md names as the reference for ILLEGAL:
// undefined opcode, buffer, queue or ALU op; non-zero reserved bits;
// padding, src_int8, src_out or wgt_transpose where not allowed (a STORE
// also must not set pad_value; src_out only on a LOAD INP of segment 0,
// wgt_transpose only on a LOAD WGT); GEMM reset with
// first, last or dw; a token flag the instruction's queue lacks (load has
// no previous module, store no next one).  LOADs of INP, WGT, PAR and LUT
// go to the load queue, of UOP and ACC to compute.  Field positions come
// only from the generated loom_isa.vh.
`include "loom_isa.vh"

module loom_insn_decode (
  input  wire [127:0] insn_i,
  output reg          legal_o,
  output reg  [1:0]   queue_o,
  output wire         finish_o
);
  wire [2:0] opcode    = insn_i[`LOOM_COMMON_OPCODE_LSB +: `LOOM_COMMON_OPCODE_W];
  wire       pop_prev  = insn_i[`LOOM_COMMON_POP_PREV_LSB];
  wire       pop_next  = insn_i[`LOOM_COMMON_POP_NEXT_LSB];
  wire       push_prev = insn_i[`LOOM_COMMON_PUSH_PREV_LSB];
  wire       push_next = insn_i[`LOOM_COMMON_PUSH_NEXT_LSB];

  wire [2:0] buffer    = insn_i[`LOOM_MEM_BUFFER_LSB +: `LOOM_MEM_BUFFER_W];
  wire       pads      = (insn_i[`LOOM_MEM_Y_PAD_TOP_LSB +: `LOOM_MEM_Y_PAD_TOP_W] != 0) ||
                         (insn_i[`LOOM_MEM_Y_PAD_BOTTOM_LSB +: `LOOM_MEM_Y_PAD_BOTTOM_W] != 0) ||
                         (insn_i[`LOOM_MEM_X_PAD_LEFT_LSB +: `LOOM_MEM_X_PAD_LEFT_W] != 0) ||
                         (insn_i[`LOOM_MEM_X_PAD_RIGHT_LSB +: `LOOM_MEM_X_PAD_RIGHT_W] != 0);
  wire       pad_value = (insn_i[`LOOM_MEM_PAD_VALUE_LSB +: `LOOM_MEM_PAD_VALUE_W] != 0);
  wire       src_int8  = insn_i[`LOOM_MEM_SRC_INT8_LSB];
  wire       src_out   = insn_i[`LOOM_MEM_SRC_OUT_LSB];
  wire       wgt_tr    = insn_i[`LOOM_MEM_WGT_TRANSPOSE_LSB];
  wire [2:0] segment   = insn_i[`LOOM_MEM_SEGMENT_LSB +: `LOOM_MEM_SEGMENT_W];
  wire       g_flags   = insn_i[`LOOM_GEMM_FIRST_LSB] || insn_i[`LOOM_GEMM_LAST_LSB] ||
                         insn_i[`LOOM_GEMM_DW_LSB];
  wire       g_reset   = insn_i[`LOOM_GEMM_RESET_LSB];
  wire       gcfg_rsv  = (insn_i[`LOOM_GCFG_RESERVED_LSB +: `LOOM_GCFG_RESERVED_W] != 0);
  wire       gemm_rsv  = (insn_i[`LOOM_GEMM_RESERVED_LSB +: `LOOM_GEMM_RESERVED_W] != 0);
  wire       alu_rsv   = (insn_i[`LOOM_ALU_RESERVED_LSB +: `LOOM_ALU_RESERVED_W] != 0);
  wire       qcfg_rsv  = (insn_i[`LOOM_QCFG_RESERVED_LSB +: `LOOM_QCFG_RESERVED_W] != 0);
  wire       fin_rsv   = (insn_i[`LOOM_FINISH_RESERVED_LSB +: `LOOM_FINISH_RESERVED_W] != 0);
  wire       nop_rsv   = (insn_i[`LOOM_NOP_RESERVED_LSB +: `LOOM_NOP_RESERVED_W] != 0);
  wire [1:0] nop_queue = insn_i[`LOOM_NOP_QUEUE_LSB +: `LOOM_NOP_QUEUE_W];

  assign finish_o = (opcode == `LOOM_OP_FINISH);

  reg fmt_ok;

  always @* begin
    fmt_ok  = 1'b0;
    queue_o = `LOOM_Q_COMPUTE;
    case (opcode)
      `LOOM_OP_LOAD: begin
        queue_o = (buffer == `LOOM_BUF_UOP || buffer == `LOOM_BUF_ACC) ? `LOOM_Q_COMPUTE
                                                                       : `LOOM_Q_LOAD;
        fmt_ok = buffer != `LOOM_BUF_OUT && buffer <= `LOOM_BUF_LUT &&
                 (!pads || buffer == `LOOM_BUF_INP || buffer == `LOOM_BUF_ACC) &&
                 (!src_int8 || buffer == `LOOM_BUF_ACC) &&
                 (!src_out || (buffer == `LOOM_BUF_INP && segment == 3'd0)) &&
                 (!wgt_tr || buffer == `LOOM_BUF_WGT);
      end
      `LOOM_OP_STORE: begin
        queue_o = `LOOM_Q_STORE;
        fmt_ok  = (buffer == `LOOM_BUF_OUT) && !pads && !src_int8 && !pad_value && !src_out &&
                  !wgt_tr;
      end
      `LOOM_OP_GEMM:   fmt_ok = !gemm_rsv && !(g_reset && g_flags);
      `LOOM_OP_ALU:    fmt_ok = !alu_rsv;
      `LOOM_OP_QCFG:   fmt_ok = !qcfg_rsv;
      `LOOM_OP_GCFG:   fmt_ok = !gcfg_rsv;
      `LOOM_OP_FINISH: fmt_ok = !fin_rsv;
      `LOOM_OP_NOP: begin
        queue_o = nop_queue;
        fmt_ok  = !nop_rsv && (nop_queue <= `LOOM_Q_STORE);
      end
      default: fmt_ok = 1'b0;
    endcase
    legal_o = fmt_ok;
    if (queue_o == `LOOM_Q_LOAD && (pop_prev || push_prev)) legal_o = 1'b0;
    if (queue_o == `LOOM_Q_STORE && (pop_next || push_next)) legal_o = 1'b0;
  end
endmodule
