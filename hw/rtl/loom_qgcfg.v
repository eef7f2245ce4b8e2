// loom_qgcfg - the compute module's configuration registers: QCFG (the
// requantization and epilogue) and GCFG (the GEMM period and the depthwise
// window), zero at job start (docs/isa.md, "QCFG", "GCFG").
//
// With GCFG it also registers what the depthwise hardware derives from the
// window: the tap count T = min(kh * kw, BLOCK_IN), the row and INP offset
// of tap T - 1 (where a whole window's reads start, loom_dw_win), the same
// for a slide of one or two columns, and the farthest tap's offset (reach,
// for the INP bounds check of loom_uop_fe).  A window with more taps than
// lanes ends in the middle of a column: tap T - 1 is then in column
// (BLOCK_IN - 1) / kh, a division by a constant per kh, given as a table.
// The products of at most 4 x 12 bits are shifts and adds.
//
// Two register stages (docs/rtl.md, "Timing"): in one cycle kh * kw, the
// compare with BLOCK_IN, the table, two products, a sum and a compare were
// the design's longest path.  Stage 1 registers, in GCFG's cycle, the
// fields and what the 4-bit values give (T, tap T - 1's row and column,
// n1_ok, n2_ok); stage 2, in the next cycle, the 17-bit offsets khr,
// off_all, off_n2 and reach from stage 1's registers.  No reader sees a
// stage-2 value early, so no cycle changes.  Say GCFG executes in cycle t
// (loom_insn_seq's exec_start): compute treats it as done in t (`simple`),
// so the sequencer is back in StIdle (or pushing tokens) in t + 1, pops the
// next instruction there at the earliest, and raises exec_start for it in
// t + 2 at the earliest (start_q is a register).  Everything that reads the
// window starts from that exec_start: loom_uop_fe captures reach (and the
// period, T) at start_i, i.e. in t + 2, and loom_dw_win reads the offsets
// only while a depthwise GEMM runs (valid_i needs compute's StGemm, from
// t + 3).  The instruction before GCFG no longer reads them: GCFG starts
// only after its exec_done, which for a GEMM waits until loom_dw_win is
// idle.  Stage 1's values are final in t + 1, stage 2's in t + 2: a
// decode of the next instruction as the sequencer pops it (t + 1) may use
// stage 1's outputs, not stage 2's.  The differential test's generator puts
// a GCFG right before some depthwise GEMMs; with stage 2 a cycle later
// still, tsim reports false SRAM errors there (reach captured stale).
`include "loom_isa.vh"

module loom_qgcfg #(
  parameter integer BlockIn = 16,
  localparam integer TW     = $clog2(BlockIn + 1)
) (
  input  wire          clk_i,
  input  wire          rst_ni,
  input  wire          job_start_i,
  input  wire          qcfg_i,        // a QCFG executes (cmd_i holds it)
  input  wire          gcfg_i,        // a GCFG executes
  input  wire [127:0]  cmd_i,
  // QCFG
  output reg  [31:0]   q_mult_o,
  output reg  [5:0]    q_shift_o,
  output reg  [7:0]    q_zp_o,
  output reg  [7:0]    q_lo_o,
  output reg  [7:0]    q_hi_o,
  output reg           q_re_o,
  output reg  [31:0]   q_bias_o,
  output reg           q_par_src_o,
  output reg           q_act_o,
  output reg  [7:0]    q_par_base_o,
  // GCFG and the window
  output reg  [5:0]    period_o,
  output reg  [3:0]    kh_o,
  output reg  [11:0]   row_o,
  output reg  [11:0]   col_o,
  output reg  [TW-1:0] taps_o,
  output reg  [16:0]   khr_o,
  output reg  [16:0]   off_all_o,
  output reg  [3:0]    r_all_o,
  output reg  [16:0]   off_n2_o,
  output reg           n1_ok_o,
  output reg           n2_ok_o,
  output reg  [TW-1:0] n1_taps_o,
  output reg  [TW-1:0] n2_taps_o,
  output reg  [16:0]   reach_o
);
  // a x b for a <= 15 (shifts and adds, no DSP)
  function [16:0] mul4(input [3:0] a, input [11:0] b);
    begin
      mul4 = (a[0] ? {5'd0, b} : 17'd0) + (a[1] ? {4'd0, b, 1'b0} : 17'd0) +
             (a[2] ? {3'd0, b, 2'b0} : 17'd0) + (a[3] ? {2'd0, b, 3'b0} : 17'd0);
    end
  endfunction

  // Per kh, constants (a table, no divider): the largest kw whose window
  // fits the lanes, min(BLOCK_IN / kh, 15), and the last tap of a truncated
  // window, column (BLOCK_IN - 1) / kh and row (BLOCK_IN - 1) mod kh, and
  // that column minus 1 (stage 2's c_all - 1, without a subtraction).
  function [15:0] win_tab(input [3:0] kh);  // {kw max, column, row, column - 1}
    /* verilator lint_off UNUSEDSIGNAL */
    integer k, m, q, r;  // small values: only their low 4 bits matter
    begin
      win_tab = {4'd15, 12'd0};
      for (k = 1; k < 16; k = k + 1) begin
        m = (BlockIn / k > 15) ? 15 : BlockIn / k;
        q = (BlockIn - 1) / k;
        r = (BlockIn - 1) - q * k;
        if ({28'd0, kh} == k) win_tab = {m[3:0], q[3:0], r[3:0], q[3:0] - 4'd1};
      end
    end
    /* verilator lint_on UNUSEDSIGNAL */
  endfunction

  // ---- GCFG fields of the instruction and what follows from them
  wire [5:0]  g_period = cmd_i[`LOOM_GCFG_PERIOD_LSB +: `LOOM_GCFG_PERIOD_W];
  wire [3:0]  g_kh     = cmd_i[`LOOM_GCFG_DW_KH_LSB +: `LOOM_GCFG_DW_KH_W];
  wire [3:0]  g_kw     = cmd_i[`LOOM_GCFG_DW_KW_LSB +: `LOOM_GCFG_DW_KW_W];
  wire [11:0] g_row    = cmd_i[`LOOM_GCFG_DW_ROW_LSB +: `LOOM_GCFG_DW_ROW_W];
  wire [11:0] g_col    = cmd_i[`LOOM_GCFG_DW_COL_LSB +: `LOOM_GCFG_DW_COL_W];
  wire [7:0]  g_khkw   = {4'd0, g_kh} * {4'd0, g_kw};
  localparam [7:0] BI8 = BlockIn[7:0];
  wire [15:0] g_tab    = win_tab(g_kh);
  wire        g_trunc  = g_kw > g_tab[15:12];  // kh * kw > BLOCK_IN, without the product
  wire [TW-1:0] g_taps = g_trunc ? BlockIn[TW-1:0] : g_khkw[TW-1:0];
  wire [3:0]  g_khm1   = (g_kh == 4'd0) ? 4'd0 : g_kh - 4'd1;
  wire [3:0]  g_kwm1   = (g_kw == 4'd0) ? 4'd0 : g_kw - 4'd1;
  wire [3:0]  g_c_all  = g_trunc ? g_tab[11:8] : g_kwm1;
  wire [3:0]  g_r_all  = g_trunc ? g_tab[7:4] : g_khm1;
  // truncated with a full column before the last one: that column's last
  // tap, (kh - 1, c_all - 1), may reach farther than tap T - 1
  wire        g_far    = g_trunc && g_tab[11:8] != 4'd0;
  wire [3:0]  g_cm1    = g_trunc ? g_tab[3:0] : g_kwm1 - 4'd1;  // c_all - 1
  wire [4:0]  g_kh2    = {g_kh, 1'b0};
  wire [7:0]  kh8      = {4'd0, g_kh};
  wire [7:0]  kh28     = {3'd0, g_kh2};
  wire        unused_kh = ^{kh8[7:TW], kh28[7:TW], g_khkw[7:TW]};
  // QCFG and GCFG fields only; the opcode, tokens and reserved bits are not this module's
  wire        unused_cmd = ^{cmd_i[127:112], cmd_i[6:0]};

  // ---- stage 2: the offsets, from stage 1's registers
  reg         gcfg_q;   // a GCFG executed in the previous cycle: load stage 2
  reg  [3:0]  c_all_q;  // column of tap T - 1
  reg  [3:0]  khm1_q;   // kh - 1
  reg  [3:0]  cm1_q;    // c_all - 1
  reg         far_q;    // g_far
  wire [16:0] s_khr  = mul4(khm1_q, row_o);
  wire [16:0] s_off  = mul4(r_all_o, row_o) + mul4(c_all_q, col_o);
  wire [16:0] s_prev = s_khr + mul4(cm1_q, col_o);
  wire        s_far  = far_q && s_prev > s_off;

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      q_mult_o <= 32'd0; q_shift_o <= 6'd0; q_zp_o <= 8'd0; q_lo_o <= 8'd0; q_hi_o <= 8'd0;
      q_re_o <= 1'b0; q_bias_o <= 32'd0; q_par_src_o <= 1'b0; q_act_o <= 1'b0; q_par_base_o <= 8'd0;
      period_o <= 6'd0; kh_o <= 4'd0; row_o <= 12'd0; col_o <= 12'd0;
      taps_o <= {TW{1'b0}}; khr_o <= 17'd0; off_all_o <= 17'd0; r_all_o <= 4'd0; off_n2_o <= 17'd0;
      n1_ok_o <= 1'b0; n2_ok_o <= 1'b0; n1_taps_o <= {TW{1'b0}}; n2_taps_o <= {TW{1'b0}};
      reach_o <= 17'd0; gcfg_q <= 1'b0; c_all_q <= 4'd0; khm1_q <= 4'd0;
      cm1_q <= 4'd0; far_q <= 1'b0;
    end else if (job_start_i) begin
      q_mult_o <= 32'd0; q_shift_o <= 6'd0; q_zp_o <= 8'd0; q_lo_o <= 8'd0; q_hi_o <= 8'd0;
      q_re_o <= 1'b0; q_bias_o <= 32'd0; q_par_src_o <= 1'b0; q_act_o <= 1'b0; q_par_base_o <= 8'd0;
      period_o <= 6'd0; kh_o <= 4'd0; row_o <= 12'd0; col_o <= 12'd0;
      taps_o <= {TW{1'b0}}; khr_o <= 17'd0; off_all_o <= 17'd0; r_all_o <= 4'd0; off_n2_o <= 17'd0;
      n1_ok_o <= 1'b0; n2_ok_o <= 1'b0; n1_taps_o <= {TW{1'b0}}; n2_taps_o <= {TW{1'b0}};
      reach_o <= 17'd0; gcfg_q <= 1'b0; c_all_q <= 4'd0; khm1_q <= 4'd0;
      cm1_q <= 4'd0; far_q <= 1'b0;
    end else begin
      gcfg_q <= gcfg_i;
      if (qcfg_i) begin
        q_mult_o     <= cmd_i[`LOOM_QCFG_MULTIPLIER_LSB +: `LOOM_QCFG_MULTIPLIER_W];
        q_shift_o    <= cmd_i[`LOOM_QCFG_SHIFT_LSB +: `LOOM_QCFG_SHIFT_W];
        q_zp_o       <= cmd_i[`LOOM_QCFG_ZERO_POINT_LSB +: `LOOM_QCFG_ZERO_POINT_W];
        q_lo_o       <= cmd_i[`LOOM_QCFG_CLAMP_LO_LSB +: `LOOM_QCFG_CLAMP_LO_W];
        q_hi_o       <= cmd_i[`LOOM_QCFG_CLAMP_HI_LSB +: `LOOM_QCFG_CLAMP_HI_W];
        q_re_o       <= cmd_i[`LOOM_QCFG_ROUND_EVEN_LSB];
        q_bias_o     <= cmd_i[`LOOM_QCFG_BIAS_LSB +: `LOOM_QCFG_BIAS_W];
        q_par_src_o  <= cmd_i[`LOOM_QCFG_PAR_SRC_LSB];
        q_act_o      <= cmd_i[`LOOM_QCFG_ACT_LSB];
        q_par_base_o <= cmd_i[`LOOM_QCFG_PAR_BASE_LSB +: `LOOM_QCFG_PAR_BASE_W];
      end
      if (gcfg_i) begin
        period_o  <= g_period;
        kh_o      <= g_kh;
        row_o     <= g_row;
        col_o     <= g_col;
        taps_o    <= g_taps;
        r_all_o   <= g_r_all;
        c_all_q   <= g_c_all;
        khm1_q    <= g_khm1;
        cm1_q     <= g_cm1;
        far_q     <= g_far;
        // kh <= kh * kw and 2 kh <= kh * kw follow from kh != 0 and kw > 1, > 2
        n1_ok_o   <= (g_kw > 4'd1) && (g_kh != 4'd0) && ({4'd0, g_kh} <= BI8);
        n2_ok_o   <= (g_kw > 4'd2) && (g_kh != 4'd0) && ({3'd0, g_kh2} <= BI8);
        n1_taps_o <= kh8[TW-1:0];
        n2_taps_o <= kh28[TW-1:0];
      end
      // stage 2, the cycle after GCFG, from stage 1's registers
      if (gcfg_q) begin
        khr_o     <= s_khr;
        off_all_o <= s_off;
        off_n2_o  <= s_khr + {5'd0, col_o};
        reach_o   <= s_far ? s_prev : s_off;
      end
    end
  end
endmodule
