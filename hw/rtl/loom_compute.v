// loom_compute - the compute module: LOAD of UOP and ACC, GEMM, ALU, QCFG,
// GCFG, FINISH and NOPs of the compute queue.
//
// loom_insn_seq runs the instruction life cycle (L2C/S2C pops, C2L/C2S
// pushes).  The engine then executes one instruction at a time:
//   LOAD UOP/ACC  loom_compute_ld (a loom_dma_rd; ACC rows also write
//                 OUT = sat8).
//   GEMM          loom_uop_fe feeds loom_gemm (II = 1, forwarding); with
//                 `dw` through loom_dw_win (the depthwise window, two INP
//                 reads per cycle from the banks); the final micro-ops of a
//                 `last` GEMM go through the ALU lanes (the epilogue),
//                 which write OUT while the GEMM writes ACC.
//   ALU           loom_uop_fe feeds loom_alu (interlocked).
//                 Both: an out-of-range index stops issue at that
//                 micro-op; the engine waits until every older micro-op
//                 has written (StOpErr), then raises SRAM.  The instruction
//                 completes when the last write is done.
//   QCFG, GCFG    load the registers of loom_qgcfg (zero at job start).
//   FINISH        waits until load and store are idle with empty command
//                 queues (blocked meanwhile, for the deadlock verdict),
//                 then signals finish_o; its push flags have no effect (the
//                 job ends), as in fsim.
`include "loom_isa.vh"

module loom_compute #(
  parameter integer BusBits  = 64,
  parameter integer Batch    = 1,
  parameter integer BlockIn  = 16,
  parameter integer BlockOut = 16,
  parameter integer InpAddrW = 11,
  parameter integer WgtAddrW = 10,
  parameter integer AccAddrW = 11,
  parameter integer UopAddrW = 13,
  localparam integer CmdW    = `LOOM_CMD_BITS,
  localparam integer NumSeg  = `LOOM_NUM_SEGMENTS,
  localparam integer Lanes   = Batch * BlockOut,
  localparam integer InpBits = Batch * BlockIn * 8,
  localparam integer WgtBits = BlockOut * BlockIn * 8,
  localparam integer AccBits = Lanes * 32,
  localparam integer OutBits = Lanes * 8
) (
  input  wire                 clk_i,
  input  wire                 rst_ni,
  input  wire                 job_start_i,
  input  wire                 abort_i,
  // command queue
  input  wire                 cmd_valid_i,
  input  wire [CmdW-1:0]      cmd_data_i,
  output wire                 cmd_pop_o,
  // token queues: prev = load (L2C popped, C2L pushed), next = store
  input  wire                 prev_empty_i,
  input  wire                 prev_full_i,
  input  wire                 next_empty_i,
  input  wire                 next_full_i,
  output wire                 pop_prev_o,
  output wire                 pop_next_o,
  output wire                 push_prev_o,
  output wire                 push_next_o,
  // FINISH: load and store idle with empty queues
  input  wire                 others_drained_i,
  // segment table
  input  wire [NumSeg*64-1:0] seg_base_i,
  input  wire [NumSeg*64-1:0] seg_size_i,
  // AXI read
  output wire                 ar_valid_o,
  input  wire                 ar_ready_i,
  output wire [63:0]          ar_addr_o,
  output wire [7:0]           ar_len_o,
  input  wire                 r_valid_i,
  input  wire [BusBits-1:0]   r_data_i,
  input  wire [1:0]           r_resp_i,
  input  wire                 r_last_i,
  output wire                 r_ready_o,
  // SRAM ports
  output wire                 uop_we_o,
  output wire [UopAddrW-1:0]  uop_waddr_o,
  output wire [31:0]          uop_wdata_o,
  output wire                 uop_re_o,
  output wire [UopAddrW-1:0]  uop_raddr_o,
  input  wire [31:0]          uop_rdata_i,
  output wire                 inp_re0_o,       // INP bank 0: even rows
  output wire [InpAddrW-2:0]  inp_raddr0_o,
  input  wire [InpBits-1:0]   inp_rdata0_i,
  output wire                 inp_re1_o,       // INP bank 1: odd rows
  output wire [InpAddrW-2:0]  inp_raddr1_o,
  input  wire [InpBits-1:0]   inp_rdata1_i,
  output wire                 wgt_re_o,
  output wire [WgtAddrW-1:0]  wgt_raddr_o,
  input  wire [WgtBits-1:0]   wgt_rdata_i,
  output wire                 acc_re_o,
  output wire [AccAddrW-1:0]  acc_raddr_o,
  input  wire [AccBits-1:0]   acc_rdata_i,
  output wire                 acc_we_o,
  output wire [AccAddrW-1:0]  acc_waddr_o,
  output wire [AccBits-1:0]   acc_wdata_o,
  output wire                 out_we_o,
  output wire [AccAddrW-1:0]  out_waddr_o,
  output wire [OutBits-1:0]   out_wdata_o,
  output wire                 par_re_o,
  output wire [4:0]           par_raddr_o,
  input  wire [2*AccBits-1:0] par_rdata_i,
  // LOAD LUT (the load module) into the ALU lanes' tables
  input  wire                 lut_we_i,
  input  wire [7:0]           lut_waddr_i,
  input  wire [7:0]           lut_wdata_i,
  // status
  output wire                 err_valid_o,
  output wire [3:0]           err_code_o,
  output wire [31:0]          err_idx_o,
  output wire                 idle_o,
  output wire                 blocked_o,
  output wire [31:0]          cur_idx_o,
  output wire                 quiet_o,
  output wire                 finish_o,
  output wire                 tok_stall_o,
  output wire                 mem_stall_o,
  output wire                 insn_done_o,
  output wire                 gemm_op_o,
  output wire                 alu_op_o,
  output wire                 uop_word_o,
  output wire                 acc_beat_o
);
  localparam integer Sh8      = $clog2(Lanes);
  localparam integer LW       = $clog2(BusBits / 32);
  localparam integer AccRows  = 1 << AccAddrW;
  localparam integer InpRows  = 1 << InpAddrW;
  localparam integer WgtRows  = 1 << WgtAddrW;
  localparam integer BAddrW   = (InpAddrW > AccAddrW) ? InpAddrW : AccAddrW;
  localparam [2:0] StIdle = 3'd0, StGemm = 3'd1, StAlu = 3'd2, StFinish = 3'd3, StErr = 3'd4,
                   StDone = 3'd5, StOpErr = 3'd6;

  generate
    if ((OutBits % BusBits) != 0 || (1 << Sh8) != Lanes || LW < 1) begin : g_bad
      loom_compute_illegal_parameters u_illegal ();
    end
  endgenerate

  // ---- instruction life cycle
  wire            exec_start, exec_done;
  wire [CmdW-1:0] cmd;
  wire            seq_idle, seq_blocked;

  loom_insn_seq #(.CmdW(CmdW)) u_seq (
    .clk_i        (clk_i),
    .rst_ni       (rst_ni),
    .abort_i      (abort_i),
    .cmd_valid_i  (cmd_valid_i),
    .cmd_data_i   (cmd_data_i),
    .cmd_pop_o    (cmd_pop_o),
    .prev_empty_i (prev_empty_i),
    .prev_full_i  (prev_full_i),
    .next_empty_i (next_empty_i),
    .next_full_i  (next_full_i),
    .pop_prev_o   (pop_prev_o),
    .pop_next_o   (pop_next_o),
    .push_prev_o  (push_prev_o),
    .push_next_o  (push_next_o),
    .exec_start_o (exec_start),
    .cmd_o        (cmd),
    .exec_done_i  (exec_done),
    .idle_o       (seq_idle),
    .blocked_o    (seq_blocked),
    .tok_stall_o  (tok_stall_o),
    .insn_done_o  (insn_done_o)
  );

  wire [2:0]  opcode = cmd[`LOOM_COMMON_OPCODE_LSB +: `LOOM_COMMON_OPCODE_W];
  wire [31:0] idx    = cmd[CmdW-1 -: 32];
  assign cur_idx_o = idx;

  // GEMM fields
  wire        g_reset   = cmd[`LOOM_GEMM_RESET_LSB];
  wire        g_first   = cmd[`LOOM_GEMM_FIRST_LSB];
  wire        g_last    = cmd[`LOOM_GEMM_LAST_LSB];
  wire        g_dw      = cmd[`LOOM_GEMM_DW_LSB];
  // ALU fields
  wire        use_imm   = cmd[`LOOM_ALU_USE_IMM_LSB];
  wire [15:0] imm       = cmd[`LOOM_ALU_IMM_LSB +: `LOOM_ALU_IMM_W];
  // ---- the instruction's decode, registered beside cmd_q
  // cmd_q fans out to the ALU interlock, fe_ready, the ACC/PAR ports, OUT's
  // writer and the event counters; decoding it there put a decode LUT and
  // cmd_q's wide fanout in front of each (13.6 ns on the xc7z020 -1).  These
  // flip-flops decode the command queue's head instead and load in the cycle
  // cmd_q loads (cmd_pop_o), as loom_fetch decodes on arrival: they hold
  // exactly what cmd_q's decode would, for as long as cmd_q holds the
  // instruction, so no cycle changes.
  // dec_op_q is the operation the ALU lanes run: EPI for a GEMM (its
  // epilogue), else the ALU's op.  (The ALU looks at it only while the
  // instruction runs; before, it saw EPI only in StGemm and StOpErr, but in
  // the other states nothing is in its pipeline and no micro-op issues.)
  // dec_epi_q, dec_vec_q and dec_srow_q are loom_alu's decode of that op
  // and use_imm (EPI; a vector operand; the interlock reads s).
  wire [2:0] n_opcode = cmd_data_i[`LOOM_COMMON_OPCODE_LSB +: `LOOM_COMMON_OPCODE_W];
  wire [2:0] n_alu_op = cmd_data_i[`LOOM_ALU_ALU_OP_LSB +: `LOOM_ALU_ALU_OP_W];
  wire       n_gemm   = (n_opcode == `LOOM_OP_GEMM);
  wire       n_epi    = n_gemm || (n_alu_op == `LOOM_ALU_EPI);
  reg        dec_gemm_q, dec_fe_q, dec_simple_q, dec_dw_q, dec_epi_q, dec_vec_q, dec_srow_q;
  reg [2:0]  dec_op_q;
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      dec_gemm_q   <= 1'b0;
      dec_fe_q     <= 1'b0;
      dec_simple_q <= 1'b0;
      dec_dw_q     <= 1'b0;
      dec_epi_q    <= 1'b0;
      dec_vec_q    <= 1'b0;
      dec_srow_q   <= 1'b0;
      dec_op_q     <= 3'd0;
    end else if (cmd_pop_o) begin
      dec_gemm_q   <= n_gemm;
      dec_fe_q     <= n_gemm || (n_opcode == `LOOM_OP_ALU);
      dec_simple_q <= (n_opcode == `LOOM_OP_QCFG) || (n_opcode == `LOOM_OP_GCFG) ||
                      (n_opcode == `LOOM_OP_NOP);
      dec_dw_q     <= n_gemm && cmd_data_i[`LOOM_GEMM_DW_LSB];
      dec_epi_q    <= n_epi;
      dec_vec_q    <= !n_epi && !cmd_data_i[`LOOM_ALU_USE_IMM_LSB];
      dec_srow_q   <= n_epi && !cmd_data_i[`LOOM_ALU_USE_IMM_LSB];
      dec_op_q     <= n_gemm ? `LOOM_ALU_EPI : n_alu_op;
    end
  end
  wire        is_gemm   = dec_gemm_q;
  wire        dw_mode   = dec_dw_q;
  // token flags are the sequencer's; the top reserved bit and src_out
  // (legal only for the load module) are zero
  wire [5:0]  unused_cmd = {cmd[127:126], cmd[6:3]};

  // ---- QCFG and GCFG registers
  localparam integer TW = $clog2(BlockIn + 1);
  wire [31:0]   q_mult, q_bias;
  wire [5:0]    q_shift, period;
  wire [7:0]    q_zp, q_lo, q_hi, q_par_base;
  wire          q_re, q_par_src, q_act, n1_ok, n2_ok;
  wire [3:0]    dw_kh, dw_r_all;
  wire [11:0]   dw_row, dw_col;
  wire [TW-1:0] dw_taps, dw_n1_taps, dw_n2_taps;
  wire [16:0]   dw_khr, dw_off_all, dw_off_n2, dw_reach;

  loom_qgcfg #(.BlockIn(BlockIn)) u_cfg (
    .clk_i        (clk_i),
    .rst_ni       (rst_ni),
    .job_start_i  (job_start_i),
    .qcfg_i       (exec_start && opcode == `LOOM_OP_QCFG),
    .gcfg_i       (exec_start && opcode == `LOOM_OP_GCFG),
    .cmd_i        (cmd[127:0]),
    .q_mult_o     (q_mult),
    .q_shift_o    (q_shift),
    .q_zp_o       (q_zp),
    .q_lo_o       (q_lo),
    .q_hi_o       (q_hi),
    .q_re_o       (q_re),
    .q_bias_o     (q_bias),
    .q_par_src_o  (q_par_src),
    .q_act_o      (q_act),
    .q_par_base_o (q_par_base),
    .period_o     (period),
    .kh_o         (dw_kh),
    .row_o        (dw_row),
    .col_o        (dw_col),
    .taps_o       (dw_taps),
    .khr_o        (dw_khr),
    .off_all_o    (dw_off_all),
    .r_all_o      (dw_r_all),
    .off_n2_o     (dw_off_n2),
    .n1_ok_o      (n1_ok),
    .n2_ok_o      (n2_ok),
    .n1_taps_o    (dw_n1_taps),
    .n2_taps_o    (dw_n2_taps),
    .reach_o      (dw_reach)
  );

  // ---- engine state
  reg [2:0] state_q, state_d;

  // ---- LOAD UOP / ACC
  wire               ld_we, dma_done, dma_idle, dma_err, ld_beat;
  wire [3:0]         dma_code;
  wire [AccAddrW-1:0] ld_addr;
  wire [AccBits-1:0] ld_acc;
  wire [OutBits-1:0] ld_out;

  loom_compute_ld #(
    .BusBits  (BusBits),
    .Batch    (Batch),
    .BlockOut (BlockOut),
    .AccAddrW (AccAddrW),
    .UopAddrW (UopAddrW)
  ) u_ld (
    .clk_i        (clk_i),
    .rst_ni       (rst_ni),
    .abort_i      (abort_i),
    .start_i      (exec_start && opcode == `LOOM_OP_LOAD),
    .cmd_i        (cmd[127:0]),
    .seg_base_i   (seg_base_i),
    .seg_size_i   (seg_size_i),
    .ar_valid_o   (ar_valid_o),
    .ar_ready_i   (ar_ready_i),
    .ar_addr_o    (ar_addr_o),
    .ar_len_o     (ar_len_o),
    .r_valid_i    (r_valid_i),
    .r_data_i     (r_data_i),
    .r_resp_i     (r_resp_i),
    .r_last_i     (r_last_i),
    .r_ready_o    (r_ready_o),
    .uop_we_o     (uop_we_o),
    .uop_waddr_o  (uop_waddr_o),
    .uop_wdata_o  (uop_wdata_o),
    .we_o         (ld_we),
    .addr_o       (ld_addr),
    .acc_o        (ld_acc),
    .out_o        (ld_out),
    .done_o       (dma_done),
    .idle_o       (dma_idle),
    .err_valid_o  (dma_err),
    .err_code_o   (dma_code),
    .mem_stall_o  (mem_stall_o),
    .uop_word_o   (uop_word_o),
    .acc_beat_o   (ld_beat)
  );

  // ---- GEMM / ALU micro-op front end
  wire        fe_start = exec_start && dec_fe_q;
  wire        fe_valid, fe_ready, fe_err, fe_done;
  wire [AccAddrW-1:0] fe_a;
  wire [BAddrW-1:0]   fe_b;
  wire [WgtAddrW-1:0] fe_c;
  wire                fe_first, fe_final;
  wire [12:0]         fe_p;
  wire [7:0]          unused_fe_p = fe_p[12:5];

  loom_uop_fe #(
    .UopAddrW (UopAddrW),
    .AccAddrW (AccAddrW),
    .BAddrW   (BAddrW),
    .CAddrW   (WgtAddrW)
  ) u_fe (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .start_i     (fe_start),
    .abort_i     (abort_i),
    .uop_begin_i (is_gemm ? cmd[`LOOM_GEMM_UOP_BEGIN_LSB +: `LOOM_GEMM_UOP_BEGIN_W]
                          : cmd[`LOOM_ALU_UOP_BEGIN_LSB +: `LOOM_ALU_UOP_BEGIN_W]),
    .uop_end_i   (is_gemm ? cmd[`LOOM_GEMM_UOP_END_LSB +: `LOOM_GEMM_UOP_END_W]
                          : cmd[`LOOM_ALU_UOP_END_LSB +: `LOOM_ALU_UOP_END_W]),
    .iter_out_i  (is_gemm ? {2'd0, cmd[`LOOM_GEMM_ITER_OUT_LSB +: `LOOM_GEMM_ITER_OUT_W]}
                          : cmd[`LOOM_ALU_ITER_OUT_LSB +: `LOOM_ALU_ITER_OUT_W]),
    .iter_in_i   (is_gemm ? {2'd0, cmd[`LOOM_GEMM_ITER_IN_LSB +: `LOOM_GEMM_ITER_IN_W]}
                          : cmd[`LOOM_ALU_ITER_IN_LSB +: `LOOM_ALU_ITER_IN_W]),
    .fa_out_i    (is_gemm ? cmd[`LOOM_GEMM_ACC_FACTOR_OUT_LSB +: `LOOM_GEMM_ACC_FACTOR_OUT_W]
                          : cmd[`LOOM_ALU_DST_FACTOR_OUT_LSB +: `LOOM_ALU_DST_FACTOR_OUT_W]),
    .fa_in_i     (is_gemm ? cmd[`LOOM_GEMM_ACC_FACTOR_IN_LSB +: `LOOM_GEMM_ACC_FACTOR_IN_W]
                          : cmd[`LOOM_ALU_DST_FACTOR_IN_LSB +: `LOOM_ALU_DST_FACTOR_IN_W]),
    .fb_out_i    (is_gemm ? cmd[`LOOM_GEMM_INP_FACTOR_OUT_LSB +: `LOOM_GEMM_INP_FACTOR_OUT_W]
                          : cmd[`LOOM_ALU_SRC_FACTOR_OUT_LSB +: `LOOM_ALU_SRC_FACTOR_OUT_W]),
    .fb_in_i     (is_gemm ? cmd[`LOOM_GEMM_INP_FACTOR_IN_LSB +: `LOOM_GEMM_INP_FACTOR_IN_W]
                          : cmd[`LOOM_ALU_SRC_FACTOR_IN_LSB +: `LOOM_ALU_SRC_FACTOR_IN_W]),
    .fc_out_i    (is_gemm ? cmd[`LOOM_GEMM_WGT_FACTOR_OUT_LSB +: `LOOM_GEMM_WGT_FACTOR_OUT_W]
                          : 10'd0),
    .fc_in_i     (is_gemm ? cmd[`LOOM_GEMM_WGT_FACTOR_IN_LSB +: `LOOM_GEMM_WGT_FACTOR_IN_W]
                          : 10'd0),
    .chk_b_i     (is_gemm ? !g_reset && (!g_dw || dw_taps != 0) : !use_imm),
    .lim_b_i     (is_gemm ? InpRows[16:0] : AccRows[16:0]),
    .chk_c_i     (is_gemm && !g_reset),
    .lim_c_i     (WgtRows[16:0]),
    .reach_i     (dw_mode ? dw_reach : 17'd0),
    .first_i     (is_gemm && g_first),
    .last_i      (is_gemm && g_last),
    .period_i    (period),
    .par_base_i  (q_par_base),
    .chk_p_i     (q_par_src ? 2'd0 : is_gemm ? {1'b0, g_last} : {dec_epi_q, 1'b0}),
    .uop_re_o    (uop_re_o),
    .uop_raddr_o (uop_raddr_o),
    .uop_rdata_i (uop_rdata_i),
    .valid_o     (fe_valid),
    .ready_i     (fe_ready),
    .a_o         (fe_a),
    .b_o         (fe_b),
    .c_o         (fe_c),
    .first_o     (fe_first),
    .final_o     (fe_final),
    .p_o         (fe_p),
    .err_o       (fe_err),
    .done_o      (fe_done)
  );

  // ---- INP banks: a dense GEMM reads row x from bank x & 1
  wire                g_inp_re;
  wire [InpAddrW-1:0] g_inp_raddr;
  reg                 g_bank_q;
  always @(posedge clk_i) if (g_inp_re) g_bank_q <= g_inp_raddr[0];
  wire [InpBits-1:0]  g_inp_rdata = g_bank_q ? inp_rdata1_i : inp_rdata0_i;

  // ---- depthwise window
  wire in_gemm = (state_q == StGemm) || (state_q == StOpErr && is_gemm);
  wire dw_ready, dw_re0, dw_re1, dw_wre, dw_issue, dw_ifirst, dw_ifinal, dw_busy;
  wire [InpAddrW-2:0] dw_addr0, dw_addr1;
  wire [WgtAddrW-1:0] dw_waddr;
  wire [AccAddrW-1:0] dw_ia;
  wire [4:0]          dw_ip;
  wire [Batch*(BlockOut/2)*BlockIn*8-1:0] dw_dx;

  loom_dw_win #(
    .Batch    (Batch),
    .BlockIn  (BlockIn),
    .BlockOut (BlockOut),
    .InpAddrW (InpAddrW),
    .AccAddrW (AccAddrW),
    .WgtAddrW (WgtAddrW)
  ) u_dw (
    .clk_i         (clk_i),
    .rst_ni        (rst_ni),
    .abort_i       (abort_i),
    .start_i       (fe_start),
    .kh_i          (dw_kh),
    .row_i         (dw_row),
    .col_i         (dw_col),
    .taps_i        (dw_taps),
    .off_n1_i      (dw_khr),
    .off_n2_i      (dw_off_n2),
    .off_all_i     (dw_off_all),
    .khr_i         (dw_khr),
    .n1_ok_i       (n1_ok),
    .n2_ok_i       (n2_ok),
    .n1_taps_i     (dw_n1_taps),
    .n2_taps_i     (dw_n2_taps),
    .r_all_i       (dw_r_all),
    .r_n_i         (dw_kh - 4'd1),
    .valid_i       (fe_valid && state_q == StGemm && dw_mode),
    .ready_o       (dw_ready),
    .a_i           (fe_a),
    .x_i           (fe_b[InpAddrW-1:0]),
    .w_i           (fe_c),
    .first_i       (fe_first),
    .final_i       (fe_final),
    .p_i           (fe_p[4:0]),
    .re0_o         (dw_re0),
    .addr0_o       (dw_addr0),
    .re1_o         (dw_re1),
    .addr1_o       (dw_addr1),
    .rdata0_i      (inp_rdata0_i),
    .rdata1_i      (inp_rdata1_i),
    .wgt_re_o      (dw_wre),
    .wgt_raddr_o   (dw_waddr),
    .issue_o       (dw_issue),
    .issue_a_o     (dw_ia),
    .issue_first_o (dw_ifirst),
    .issue_final_o (dw_ifinal),
    .issue_p_o     (dw_ip),
    .dx_o          (dw_dx),
    .busy_o        (dw_busy)
  );

  assign inp_re0_o    = dw_mode ? dw_re0 : (g_inp_re && !g_inp_raddr[0]);
  assign inp_raddr0_o = dw_mode ? dw_addr0 : g_inp_raddr[InpAddrW-1:1];
  assign inp_re1_o    = dw_mode ? dw_re1 : (g_inp_re && g_inp_raddr[0]);
  assign inp_raddr1_o = dw_mode ? dw_addr1 : g_inp_raddr[InpAddrW-1:1];

  // ---- GEMM core
  wire g_issue = dw_mode ? dw_issue : (fe_valid && state_q == StGemm);
  wire g_acc_re, g_acc_we, g_out_we, g_busy, g_epi_v;
  wire [AccAddrW-1:0] g_acc_raddr, g_acc_waddr, g_epi_a;
  wire [4:0]          g_epi_p;
  wire [AccBits-1:0]  g_acc_wdata;
  wire [OutBits-1:0]  g_out_wdata;

  loom_gemm #(
    .Batch    (Batch),
    .BlockIn  (BlockIn),
    .BlockOut (BlockOut),
    .InpAddrW (InpAddrW),
    .WgtAddrW (WgtAddrW),
    .AccAddrW (AccAddrW)
  ) u_gemm (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .abort_i     (abort_i),
    .issue_i     (g_issue),
    .reset_i     (g_reset),
    .first_i     (dw_mode ? dw_ifirst : fe_first),
    .final_i     (dw_mode ? dw_ifinal : fe_final),
    .p_i         (dw_mode ? dw_ip : fe_p[4:0]),
    .a_i         (dw_mode ? dw_ia : fe_a),
    .x_i         (fe_b[InpAddrW-1:0]),
    .wre_i       (dw_mode ? dw_wre : g_issue),
    .w_i         (dw_mode ? dw_waddr : fe_c),
    .last_i      (g_last),
    .dw_i        (dw_mode),
    .dx_i        (dw_dx),
    .inp_re_o    (g_inp_re),
    .inp_raddr_o (g_inp_raddr),
    .inp_rdata_i (g_inp_rdata),
    .wgt_re_o    (wgt_re_o),
    .wgt_raddr_o (wgt_raddr_o),
    .wgt_rdata_i (wgt_rdata_i),
    .acc_re_o    (g_acc_re),
    .acc_raddr_o (g_acc_raddr),
    .acc_rdata_i (acc_rdata_i),
    .acc_we_o    (g_acc_we),
    .acc_waddr_o (g_acc_waddr),
    .acc_wdata_o (g_acc_wdata),
    .out_wdata_o (g_out_wdata),
    .out_we_o    (g_out_we),
    .epi_v_o     (g_epi_v),
    .epi_a_o     (g_epi_a),
    .epi_p_o     (g_epi_p),
    .busy_o      (g_busy)
  );

  // ---- ALU (and the GEMM's epilogue)
  wire a_ready, a_acc_re, a_acc_we, a_out_we, a_busy;
  wire [AccAddrW-1:0] a_acc_raddr, a_acc_waddr, a_out_waddr;
  wire [AccBits-1:0]  a_acc_wdata;
  wire [OutBits-1:0]  a_out_wdata;

  loom_alu #(.Lanes(Lanes), .AccAddrW(AccAddrW)) u_alu (
    .clk_i          (clk_i),
    .rst_ni         (rst_ni),
    .abort_i        (abort_i),
    .op_i           (dec_op_q),
    .epi_i          (dec_epi_q),
    .vector_i       (dec_vec_q),
    .src_row_i      (dec_srow_q),
    .use_imm_i      (use_imm),
    .imm_i          (imm),
    .q_mult_i       (q_mult),
    .q_shift_i      (q_shift),
    .q_zp_i         (q_zp),
    .q_lo_i         (q_lo),
    .q_hi_i         (q_hi),
    .q_round_even_i (q_re),
    .q_bias_i       (q_bias),
    .q_par_src_i    (q_par_src),
    .q_act_i        (q_act),
    .gemm_i         (in_gemm),
    .epi_v_i        (g_epi_v),
    .epi_a_i        (g_epi_a),
    .epi_p_i        (g_epi_p),
    .gemm_sum_i     (g_acc_wdata),
    .par_re_o       (par_re_o),
    .par_raddr_o    (par_raddr_o),
    .par_rdata_i    (par_rdata_i),
    .lut_we_i       (lut_we_i),
    .lut_waddr_i    (lut_waddr_i),
    .lut_wdata_i    (lut_wdata_i),
    .issue_valid_i  (fe_valid && state_q == StAlu),
    .issue_ready_o  (a_ready),
    .d_i            (fe_a),
    .s_i            (fe_b[AccAddrW-1:0]),
    .p_i            (fe_p[4:0]),
    .acc_re_o       (a_acc_re),
    .acc_raddr_o    (a_acc_raddr),
    .acc_rdata_i    (acc_rdata_i),
    .acc_we_o       (a_acc_we),
    .acc_waddr_o    (a_acc_waddr),
    .acc_wdata_o    (a_acc_wdata),
    .out_wdata_o    (a_out_wdata),
    .out_we_o       (a_out_we),
    .out_waddr_o    (a_out_waddr),
    .busy_o         (a_busy)
  );

  generate
    if (BAddrW > InpAddrW) begin : g_unused_bx
      wire [BAddrW-InpAddrW-1:0] unused_bx = fe_b[BAddrW-1:InpAddrW];
    end
    if (BAddrW > AccAddrW) begin : g_unused_bs
      wire [BAddrW-AccAddrW-1:0] unused_bs = fe_b[BAddrW-1:AccAddrW];
    end
  endgenerate

  assign fe_ready = (state_q == StGemm) ? (!dw_mode || dw_ready) : a_ready;

  // ---- ACC / OUT ports: one instruction at a time uses them, but a
  // `last` GEMM writes ACC (the sums) while its epilogue writes OUT
  assign acc_re_o    = in_gemm ? g_acc_re : a_acc_re;
  assign acc_raddr_o = in_gemm ? g_acc_raddr : a_acc_raddr;
  assign acc_we_o    = g_acc_we || a_acc_we || ld_we;
  assign acc_waddr_o = g_acc_we ? g_acc_waddr : a_acc_we ? a_acc_waddr : ld_addr;
  assign acc_wdata_o = g_acc_we ? g_acc_wdata : a_acc_we ? a_acc_wdata : ld_acc;
  assign out_we_o    = g_out_we || a_out_we || ld_we;
  assign out_waddr_o = a_out_we ? a_out_waddr : g_out_we ? g_acc_waddr : ld_addr;
  assign out_wdata_o = a_out_we ? a_out_wdata : g_out_we ? g_out_wdata : ld_out;

  // ---- completion, errors, drain
  wire finish_go  = (state_q == StFinish) && others_drained_i && !abort_i;
  wire simple     = exec_start && dec_simple_q;

  assign exec_done   = dma_done || (state_q == StDone) || simple || finish_go;
  assign finish_o    = finish_go;
  assign err_valid_o = dma_err || (state_q == StErr);
  assign err_code_o  = dma_err ? dma_code : `LOOM_ERR_SRAM;
  assign err_idx_o   = idx;
  assign idle_o      = seq_idle;
  assign blocked_o   = seq_blocked || ((state_q == StFinish) && !others_drained_i);
  assign quiet_o     = (state_q == StIdle) && dma_idle && seq_idle && !g_busy && !a_busy && !dw_busy;
  assign gemm_op_o   = fe_valid && fe_ready && (state_q == StGemm) && !g_reset;
  assign alu_op_o    = a_ready && (state_q == StAlu);
  assign acc_beat_o  = ld_beat;

  // A LOAD is the engine's (this state machine stays in StIdle); GEMM and
  // ALU errors wait in StOpErr for the pipelines to drain, then raise SRAM.
  always @* begin
    state_d = state_q;
    case (state_q)
      StIdle: begin
        if (exec_start) begin
          case (opcode)
            `LOOM_OP_GEMM:   state_d = StGemm;
            `LOOM_OP_ALU:    state_d = StAlu;
            `LOOM_OP_FINISH: state_d = StFinish;
            default:         state_d = StIdle;
          endcase
        end
      end
      StGemm: begin
        if (fe_err)                     state_d = StOpErr;
        else if (fe_done && !g_busy && !dw_busy && !a_busy) state_d = StDone;
      end
      StAlu: begin
        if (fe_err)                     state_d = StOpErr;
        else if (fe_done && !a_busy)    state_d = StDone;
      end
      StOpErr:  if (!g_busy && !a_busy && !dw_busy) state_d = StErr;
      StFinish: if (finish_go) state_d = StIdle;
      StDone:   state_d = StIdle;
      StErr:    state_d = StErr;
      default:  state_d = StIdle;
    endcase
    if (abort_i) state_d = StIdle;
  end

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) state_q <= StIdle;
    else         state_q <= state_d;
  end
endmodule
