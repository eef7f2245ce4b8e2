// loom_compute - the compute module: LOAD of UOP and ACC, GEMM, ALU, QCFG,
// FINISH and NOPs of the compute queue.
//
// loom_insn_seq runs the instruction life cycle (L2C/S2C pops, C2L/C2S
// pushes).  The engine then executes one instruction at a time:
//   LOAD UOP/ACC  loom_dma_rd (checks, bursts on this module's AXI read
//                 ID, errors, drain), as a LOAD of INP in loom_load.  ACC
//                 rows use its rows sink (int32, or int8 sign-extended,
//                 and padding); each write also writes OUT = sat8.
//                 Micro-op rows are 4 bytes, so a bus beat holds several:
//                 this module takes those beats itself (the engine's
//                 external sink) and holds each (RREADY low) while its
//                 micro-ops are written one per cycle, starting at the
//                 lane of the row's first byte (any 4-byte alignment).
//   GEMM          loom_uop_fe feeds loom_gemm (II = 1, forwarding).
//   ALU           loom_uop_fe feeds loom_alu (interlocked).
//                 Both: an out-of-range index stops issue at that
//                 micro-op; the engine waits until every older micro-op
//                 has written (StOpErr), then raises SRAM.  The instruction
//                 completes when the last write is done.
//   QCFG          loads the requantization registers (zero at job start).
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
  output wire                 inp_re_o,
  output wire [InpAddrW-1:0]  inp_raddr_o,
  input  wire [InpBits-1:0]   inp_rdata_i,
  output wire                 wgt_re_o,
  output wire [WgtAddrW-1:0]  wgt_raddr_o,
  input  wire [WgtBits-1:0]   wgt_rdata_i,
  output wire                 acc_re_o,
  output wire [AccAddrW-1:0]  acc_raddr_o,
  input  wire [AccBits-1:0]   acc_rdata_i,
  output wire                 acc_we_o,
  output wire [AccAddrW-1:0]  acc_waddr_o,
  output wire [AccBits-1:0]   acc_wdata_o,
  output wire [OutBits-1:0]   out_wdata_o,
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
  localparam integer Sh32     = $clog2(Lanes * 4);
  localparam integer Sh8      = $clog2(Lanes);
  localparam integer Nb32     = AccBits / BusBits;
  localparam integer Nb8      = OutBits / BusBits;
  localparam integer NbW      = $clog2(Nb32 + 1) + 1;
  localparam integer UopLanes = BusBits / 32;
  localparam integer LW       = $clog2(UopLanes);
  localparam integer UopRows  = 1 << UopAddrW;
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

  // MEM fields
  wire [2:0]  buffer    = cmd[`LOOM_MEM_BUFFER_LSB +: `LOOM_MEM_BUFFER_W];
  wire [15:0] sram_base = cmd[`LOOM_MEM_SRAM_BASE_LSB +: `LOOM_MEM_SRAM_BASE_W];
  wire [2:0]  segment   = cmd[`LOOM_MEM_SEGMENT_LSB +: `LOOM_MEM_SEGMENT_W];
  wire [27:0] dram_off  = cmd[`LOOM_MEM_DRAM_OFFSET_LSB +: `LOOM_MEM_DRAM_OFFSET_W];
  wire [15:0] y_size    = cmd[`LOOM_MEM_Y_SIZE_LSB +: `LOOM_MEM_Y_SIZE_W];
  wire [15:0] x_size    = cmd[`LOOM_MEM_X_SIZE_LSB +: `LOOM_MEM_X_SIZE_W];
  wire [15:0] x_stride  = cmd[`LOOM_MEM_X_STRIDE_LSB +: `LOOM_MEM_X_STRIDE_W];
  wire [2:0]  y_pad_t   = cmd[`LOOM_MEM_Y_PAD_TOP_LSB +: `LOOM_MEM_Y_PAD_TOP_W];
  wire [2:0]  y_pad_b   = cmd[`LOOM_MEM_Y_PAD_BOTTOM_LSB +: `LOOM_MEM_Y_PAD_BOTTOM_W];
  wire [2:0]  x_pad_l   = cmd[`LOOM_MEM_X_PAD_LEFT_LSB +: `LOOM_MEM_X_PAD_LEFT_W];
  wire [2:0]  x_pad_r   = cmd[`LOOM_MEM_X_PAD_RIGHT_LSB +: `LOOM_MEM_X_PAD_RIGHT_W];
  wire [7:0]  pad_val   = cmd[`LOOM_MEM_PAD_VALUE_LSB +: `LOOM_MEM_PAD_VALUE_W];
  wire        src_int8  = cmd[`LOOM_MEM_SRC_INT8_LSB];
  wire        is_uop    = (buffer == `LOOM_BUF_UOP);
  // GEMM fields
  wire        g_reset   = cmd[`LOOM_GEMM_RESET_LSB];
  // ALU fields
  wire [2:0]  alu_op    = cmd[`LOOM_ALU_ALU_OP_LSB +: `LOOM_ALU_ALU_OP_W];
  wire        use_imm   = cmd[`LOOM_ALU_USE_IMM_LSB];
  wire [15:0] imm       = cmd[`LOOM_ALU_IMM_LSB +: `LOOM_ALU_IMM_W];
  wire        is_gemm   = (opcode == `LOOM_OP_GEMM);
  // token flags are the sequencer's; the top reserved bit is zero
  wire [4:0]  unused_cmd = {cmd[127], cmd[6:3]};

  // ---- QCFG registers (zero at job start)
  reg [31:0] q_mult_q, q_mult_d;
  reg [5:0]  q_shift_q, q_shift_d;
  reg [7:0]  q_zp_q, q_zp_d, q_lo_q, q_lo_d, q_hi_q, q_hi_d;
  reg        q_re_q, q_re_d;

  always @* begin
    q_mult_d  = q_mult_q;
    q_shift_d = q_shift_q;
    q_zp_d    = q_zp_q;
    q_lo_d    = q_lo_q;
    q_hi_d    = q_hi_q;
    q_re_d    = q_re_q;
    if (exec_start && opcode == `LOOM_OP_QCFG) begin
      q_mult_d  = cmd[`LOOM_QCFG_MULTIPLIER_LSB +: `LOOM_QCFG_MULTIPLIER_W];
      q_shift_d = cmd[`LOOM_QCFG_SHIFT_LSB +: `LOOM_QCFG_SHIFT_W];
      q_zp_d    = cmd[`LOOM_QCFG_ZERO_POINT_LSB +: `LOOM_QCFG_ZERO_POINT_W];
      q_lo_d    = cmd[`LOOM_QCFG_CLAMP_LO_LSB +: `LOOM_QCFG_CLAMP_LO_W];
      q_hi_d    = cmd[`LOOM_QCFG_CLAMP_HI_LSB +: `LOOM_QCFG_CLAMP_HI_W];
      q_re_d    = cmd[`LOOM_QCFG_ROUND_EVEN_LSB];
    end
    if (job_start_i) begin
      q_mult_d  = 32'd0;
      q_shift_d = 6'd0;
      q_zp_d    = 8'd0;
      q_lo_d    = 8'd0;
      q_hi_d    = 8'd0;
      q_re_d    = 1'b0;
    end
  end

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      q_mult_q  <= 32'd0;
      q_shift_q <= 6'd0;
      q_zp_q    <= 8'd0;
      q_lo_q    <= 8'd0;
      q_hi_q    <= 8'd0;
      q_re_q    <= 1'b0;
    end else begin
      q_mult_q  <= q_mult_d;
      q_shift_q <= q_shift_d;
      q_zp_q    <= q_zp_d;
      q_lo_q    <= q_lo_d;
      q_hi_q    <= q_hi_d;
      q_re_q    <= q_re_d;
    end
  end

  // ---- engine state
  reg [2:0] state_q, state_d;

  // ---- LOAD UOP / ACC: the DMA-read engine
  wire [4:0]  row_shift = is_uop ? 5'd2 : (src_int8 ? Sh8[4:0] : Sh32[4:0]);
  wire        loading, run_start, dma_beat, dma_done, dma_idle, dma_err;
  wire [3:0]  dma_code;
  wire        ld_we, row_valid, ul_hold, ul_done;
  wire [17:0] ld_addr;
  wire [AccBits-1:0] row_data;

  loom_dma_rd #(
    .BusBits  (BusBits),
    .RowBits  (AccBits),
    .NbW      (NbW),
    .ShiftSet ((32'd1 << 2) | (32'd1 << Sh8) | (32'd1 << Sh32))
  ) u_dma (
    .clk_i          (clk_i),
    .rst_ni         (rst_ni),
    .abort_i        (abort_i),
    .start_i        (exec_start && opcode == `LOOM_OP_LOAD),
    .segment_i      (segment),
    .dram_offset_i  (dram_off),
    .sram_base_i    (sram_base),
    .y_size_i       (y_size),
    .x_size_i       (x_size),
    .x_stride_i     (x_stride),
    .y_pad_top_i    (y_pad_t),
    .y_pad_bottom_i (y_pad_b),
    .x_pad_left_i   (x_pad_l),
    .x_pad_right_i  (x_pad_r),
    .row_shift_i    (row_shift),
    .rows_i         (is_uop ? UopRows[16:0] : AccRows[16:0]),
    .nb_i           (src_int8 ? Nb8[NbW-1:0] : Nb32[NbW-1:0]),
    .pad_en_i       (1'b1),
    .ext_i          (is_uop),
    .seg_base_i     (seg_base_i),
    .seg_size_i     (seg_size_i),
    .ar_valid_o     (ar_valid_o),
    .ar_ready_i     (ar_ready_i),
    .ar_addr_o      (ar_addr_o),
    .ar_len_o       (ar_len_o),
    .r_valid_i      (r_valid_i),
    .r_data_i       (r_data_i),
    .r_resp_i       (r_resp_i),
    .r_last_i       (r_last_i),
    .r_ready_o      (r_ready_o),
    .hold_i         (ul_hold),
    .ext_done_i     (ul_done),
    .wr_valid_o     (ld_we),
    .wr_row_o       (row_valid),
    .wr_addr_o      (ld_addr),
    .row_data_o     (row_data),
    .run_start_o    (run_start),
    .running_o      (loading),
    .beat_o         (dma_beat),
    .done_o         (dma_done),
    .idle_o         (dma_idle),
    .err_valid_o    (dma_err),
    .err_code_o     (dma_code),
    .mem_stall_o    (mem_stall_o)
  );

  // ---- LOAD UOP: micro-ops out of the bus lanes
  reg [LW-1:0] ul_lane_q, ul_lane_d;   // lane of the next micro-op in the beat
  reg [LW-1:0] ul_row_q, ul_row_d;     // lane of the current row's first micro-op
  reg [15:0]   ul_left_q, ul_left_d;   // micro-ops left in the row
  reg [15:0]   ul_y_q, ul_y_d;
  reg [17:0]   ul_addr_q, ul_addr_d;

  wire ul_active  = loading && is_uop && !ul_done;
  wire ul_beat    = ul_active && r_valid_i && !r_resp_i[1];
  wire ul_row_end = (ul_left_q == 16'd1);
  wire ul_consume = ul_row_end || (ul_lane_q == UopLanes[LW-1:0] - {{(LW-1){1'b0}}, 1'b1});
  wire [LW-1:0] ul_next_row = ul_row_q + x_stride[LW-1:0];

  assign uop_we_o    = ul_beat;
  assign uop_waddr_o = ul_addr_q[UopAddrW-1:0];
  assign uop_wdata_o = r_data_i[32*ul_lane_q +: 32];
  assign ul_done     = (ul_y_q == y_size);
  assign ul_hold     = ul_active && !ul_consume;
  wire [17-UopAddrW:0] unused_ul_addr = ul_addr_q[17:UopAddrW];

  always @* begin
    ul_lane_d = ul_lane_q;
    ul_row_d  = ul_row_q;
    ul_left_d = ul_left_q;
    ul_y_d    = ul_y_q;
    ul_addr_d = ul_addr_q;
    if (ul_beat) begin
      ul_addr_d = ul_addr_q + 18'd1;
      if (ul_row_end) begin
        ul_y_d    = ul_y_q + 16'd1;
        ul_left_d = x_size;
        ul_row_d  = ul_next_row;
        ul_lane_d = ul_next_row;
      end else begin
        ul_left_d = ul_left_q - 16'd1;
        ul_lane_d = ul_consume ? {LW{1'b0}} : ul_lane_q + {{(LW-1){1'b0}}, 1'b1};
      end
    end
    if (run_start) begin
      ul_y_d    = 16'd0;
      ul_left_d = x_size;
      ul_row_d  = dram_off[LW-1:0];
      ul_lane_d = dram_off[LW-1:0];
      ul_addr_d = {2'd0, sram_base};
    end
  end

  always @(posedge clk_i) begin
    ul_lane_q <= ul_lane_d;
    ul_row_q  <= ul_row_d;
    ul_left_q <= ul_left_d;
    ul_y_q    <= ul_y_d;
    ul_addr_q <= ul_addr_d;
  end

  // ---- LOAD ACC: sign extension, padding, OUT = sat8
  wire [OutBits-1:0] row_sat8;
  loom_sat8 #(.Lanes(Lanes)) u_ld_sat8 (
    .a_i (row_data),
    .y_o (row_sat8)
  );

  wire [OutBits-1:0] row8 = row_data[AccBits-1 -: OutBits];
  reg  [AccBits-1:0] ld_acc;
  reg  [OutBits-1:0] ld_out;
  integer li;
  always @* begin
    for (li = 0; li < Lanes; li = li + 1) begin
      if (!row_valid) begin
        ld_acc[32*li +: 32] = {{24{pad_val[7]}}, pad_val};
        ld_out[8*li +: 8]   = pad_val;
      end else if (src_int8) begin
        ld_acc[32*li +: 32] = {{24{row8[8*li + 7]}}, row8[8*li +: 8]};
        ld_out[8*li +: 8]   = row8[8*li +: 8];
      end else begin
        ld_acc[32*li +: 32] = row_data[32*li +: 32];
        ld_out[8*li +: 8]   = row_sat8[8*li +: 8];
      end
    end
  end
  wire [17-AccAddrW:0] unused_ld_addr = ld_addr[17:AccAddrW];

  // ---- GEMM / ALU micro-op front end
  wire        fe_start = exec_start && (opcode == `LOOM_OP_GEMM || opcode == `LOOM_OP_ALU);
  wire        fe_valid, fe_ready, fe_err, fe_done;
  wire [AccAddrW-1:0] fe_a;
  wire [BAddrW-1:0]   fe_b;
  wire [WgtAddrW-1:0] fe_c;

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
    .iter_out_i  (is_gemm ? cmd[`LOOM_GEMM_ITER_OUT_LSB +: `LOOM_GEMM_ITER_OUT_W]
                          : cmd[`LOOM_ALU_ITER_OUT_LSB +: `LOOM_ALU_ITER_OUT_W]),
    .iter_in_i   (is_gemm ? cmd[`LOOM_GEMM_ITER_IN_LSB +: `LOOM_GEMM_ITER_IN_W]
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
    .chk_b_i     (is_gemm ? !g_reset : !use_imm),
    .lim_b_i     (is_gemm ? InpRows[16:0] : AccRows[16:0]),
    .chk_c_i     (is_gemm && !g_reset),
    .lim_c_i     (WgtRows[16:0]),
    .uop_re_o    (uop_re_o),
    .uop_raddr_o (uop_raddr_o),
    .uop_rdata_i (uop_rdata_i),
    .valid_o     (fe_valid),
    .ready_i     (fe_ready),
    .a_o         (fe_a),
    .b_o         (fe_b),
    .c_o         (fe_c),
    .err_o       (fe_err),
    .done_o      (fe_done)
  );

  // ---- GEMM core
  wire in_gemm = (state_q == StGemm) || (state_q == StOpErr && is_gemm);
  wire g_acc_re, g_acc_we, g_busy;
  wire [AccAddrW-1:0] g_acc_raddr, g_acc_waddr;
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
    .issue_i     (fe_valid && state_q == StGemm),
    .reset_i     (g_reset),
    .a_i         (fe_a),
    .x_i         (fe_b[InpAddrW-1:0]),
    .w_i         (fe_c),
    .inp_re_o    (inp_re_o),
    .inp_raddr_o (inp_raddr_o),
    .inp_rdata_i (inp_rdata_i),
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
    .busy_o      (g_busy)
  );

  // ---- ALU
  wire a_ready, a_acc_re, a_acc_we, a_busy;
  wire [AccAddrW-1:0] a_acc_raddr, a_acc_waddr;
  wire [AccBits-1:0]  a_acc_wdata;
  wire [OutBits-1:0]  a_out_wdata;

  loom_alu #(.Lanes(Lanes), .AccAddrW(AccAddrW)) u_alu (
    .clk_i          (clk_i),
    .rst_ni         (rst_ni),
    .abort_i        (abort_i),
    .op_i           (alu_op),
    .use_imm_i      (use_imm),
    .imm_i          (imm),
    .q_mult_i       (q_mult_q),
    .q_shift_i      (q_shift_q),
    .q_zp_i         (q_zp_q),
    .q_lo_i         (q_lo_q),
    .q_hi_i         (q_hi_q),
    .q_round_even_i (q_re_q),
    .issue_valid_i  (fe_valid && state_q == StAlu),
    .issue_ready_o  (a_ready),
    .d_i            (fe_a),
    .s_i            (fe_b[AccAddrW-1:0]),
    .acc_re_o       (a_acc_re),
    .acc_raddr_o    (a_acc_raddr),
    .acc_rdata_i    (acc_rdata_i),
    .acc_we_o       (a_acc_we),
    .acc_waddr_o    (a_acc_waddr),
    .acc_wdata_o    (a_acc_wdata),
    .out_wdata_o    (a_out_wdata),
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

  assign fe_ready = (state_q == StGemm) || a_ready;

  // ---- ACC / OUT ports: one instruction at a time uses them
  assign acc_re_o    = in_gemm ? g_acc_re : a_acc_re;
  assign acc_raddr_o = in_gemm ? g_acc_raddr : a_acc_raddr;
  assign acc_we_o    = g_acc_we || a_acc_we || ld_we;
  assign acc_waddr_o = g_acc_we ? g_acc_waddr : a_acc_we ? a_acc_waddr : ld_addr[AccAddrW-1:0];
  assign acc_wdata_o = g_acc_we ? g_acc_wdata : a_acc_we ? a_acc_wdata : ld_acc;
  assign out_wdata_o = g_acc_we ? g_out_wdata : a_acc_we ? a_out_wdata : ld_out;

  // ---- completion, errors, drain
  wire finish_go  = (state_q == StFinish) && others_drained_i && !abort_i;
  wire simple     = exec_start && (opcode == `LOOM_OP_QCFG || opcode == `LOOM_OP_NOP);

  assign exec_done   = dma_done || (state_q == StDone) || simple || finish_go;
  assign finish_o    = finish_go;
  assign err_valid_o = dma_err || (state_q == StErr);
  assign err_code_o  = dma_err ? dma_code : `LOOM_ERR_SRAM;
  assign err_idx_o   = idx;
  assign idle_o      = seq_idle;
  assign blocked_o   = seq_blocked || ((state_q == StFinish) && !others_drained_i);
  assign quiet_o     = (state_q == StIdle) && dma_idle && seq_idle && !g_busy && !a_busy;
  assign gemm_op_o   = fe_valid && (state_q == StGemm) && !g_reset;
  assign alu_op_o    = a_ready && (state_q == StAlu);
  assign uop_word_o  = ul_beat;
  assign acc_beat_o  = dma_beat && !is_uop;

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
        else if (fe_done && !g_busy)    state_d = StDone;
      end
      StAlu: begin
        if (fe_err)                     state_d = StOpErr;
        else if (fe_done && !a_busy)    state_d = StDone;
      end
      StOpErr:  if (!g_busy && !a_busy) state_d = StErr;
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
