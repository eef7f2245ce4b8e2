// loom_qgcfg - the compute module's configuration registers: QCFG (the
// requantization and epilogue) and GCFG (the GEMM period and the depthwise
// window), zero at job start (docs/isa.md, "QCFG", "GCFG").
//
// With GCFG it also registers what the depthwise hardware derives from the
// window, computed from the instruction's fields (so they are there the
// cycle after, like the registers): the tap count T = min(kh * kw,
// BLOCK_IN), the row and INP offset of tap T - 1 (where a whole window's
// reads start, loom_dw_win), the same for a slide of one or two columns,
// and the farthest tap's offset (reach, for the INP bounds check of
// loom_uop_fe).  A window with more taps than lanes ends in the middle of
// a column: tap T - 1 is then in column (BLOCK_IN - 1) / kh, a division by
// a constant per kh, given as a table.  The products of at most 4 x 12
// bits are shifts and adds.
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

  // (BLOCK_IN - 1) / kh and mod kh: the last tap of a truncated window
  function [7:0] last_tap(input [3:0] kh);  // {column, row}
    /* verilator lint_off UNUSEDSIGNAL */
    integer k, q, r;  // small values: only their low 4 bits matter
    begin
      last_tap = 8'd0;
      for (k = 1; k < 16; k = k + 1) begin  // constants per k: a table, no divider
        q = (BlockIn - 1) / k;
        r = (BlockIn - 1) - q * k;
        if ({28'd0, kh} == k) last_tap = {q[3:0], r[3:0]};
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
  wire        g_trunc  = g_khkw > BI8;
  wire [TW-1:0] g_taps = g_trunc ? BlockIn[TW-1:0] : g_khkw[TW-1:0];
  wire [3:0]  g_khm1   = (g_kh == 4'd0) ? 4'd0 : g_kh - 4'd1;
  wire [3:0]  g_kwm1   = (g_kw == 4'd0) ? 4'd0 : g_kw - 4'd1;
  wire [7:0]  g_lt     = last_tap(g_kh);
  wire [3:0]  g_c_all  = g_trunc ? g_lt[7:4] : g_kwm1;
  wire [3:0]  g_r_all  = g_trunc ? g_lt[3:0] : g_khm1;
  wire [16:0] g_khr    = mul4(g_khm1, g_row);
  wire [16:0] g_off    = mul4(g_r_all, g_row) + mul4(g_c_all, g_col);
  // truncated: the full column before the last one may reach farther
  wire [16:0] g_prev   = g_khr + mul4(g_c_all - 4'd1, g_col);
  wire [16:0] g_reach  = (g_trunc && g_c_all != 4'd0 && g_prev > g_off) ? g_prev : g_off;
  wire [4:0]  g_kh2    = {g_kh, 1'b0};
  wire [7:0]  kh8      = {4'd0, g_kh};
  wire [7:0]  kh28     = {3'd0, g_kh2};
  wire        unused_kh = ^{kh8[7:TW], kh28[7:TW]};
  // QCFG and GCFG fields only; the opcode, tokens and reserved bits are not this module's
  wire        unused_cmd = ^{cmd_i[127:112], cmd_i[6:0]};

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      q_mult_o <= 32'd0; q_shift_o <= 6'd0; q_zp_o <= 8'd0; q_lo_o <= 8'd0; q_hi_o <= 8'd0;
      q_re_o <= 1'b0; q_bias_o <= 32'd0; q_par_src_o <= 1'b0; q_act_o <= 1'b0; q_par_base_o <= 8'd0;
      period_o <= 6'd0; kh_o <= 4'd0; row_o <= 12'd0; col_o <= 12'd0;
      taps_o <= {TW{1'b0}}; khr_o <= 17'd0; off_all_o <= 17'd0; r_all_o <= 4'd0; off_n2_o <= 17'd0;
      n1_ok_o <= 1'b0; n2_ok_o <= 1'b0; n1_taps_o <= {TW{1'b0}}; n2_taps_o <= {TW{1'b0}};
      reach_o <= 17'd0;
    end else if (job_start_i) begin
      q_mult_o <= 32'd0; q_shift_o <= 6'd0; q_zp_o <= 8'd0; q_lo_o <= 8'd0; q_hi_o <= 8'd0;
      q_re_o <= 1'b0; q_bias_o <= 32'd0; q_par_src_o <= 1'b0; q_act_o <= 1'b0; q_par_base_o <= 8'd0;
      period_o <= 6'd0; kh_o <= 4'd0; row_o <= 12'd0; col_o <= 12'd0;
      taps_o <= {TW{1'b0}}; khr_o <= 17'd0; off_all_o <= 17'd0; r_all_o <= 4'd0; off_n2_o <= 17'd0;
      n1_ok_o <= 1'b0; n2_ok_o <= 1'b0; n1_taps_o <= {TW{1'b0}}; n2_taps_o <= {TW{1'b0}};
      reach_o <= 17'd0;
    end else begin
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
        khr_o     <= g_khr;
        off_all_o <= g_off;
        r_all_o   <= g_r_all;
        off_n2_o  <= g_khr + {5'd0, g_col};
        n1_ok_o   <= (g_kw > 4'd1) && (g_kh != 4'd0) && ({4'd0, g_kh} <= g_khkw) && ({4'd0, g_kh} <= BI8);
        n2_ok_o   <= (g_kw > 4'd2) && (g_kh != 4'd0) && ({3'd0, g_kh2} <= g_khkw) && ({3'd0, g_kh2} <= BI8);
        n1_taps_o <= kh8[TW-1:0];
        n2_taps_o <= kh28[TW-1:0];
        reach_o   <= g_reach;
      end
    end
  end
endmodule
