// loom_load - the load module: LOAD of INP, WGT, PAR and LUT, and NOPs of
// the load queue.
//
// loom_insn_seq runs the instruction life cycle (command queue, C2L pops,
// L2C pushes); loom_dma_rd executes a LOAD (checks, bursts on the load
// port's AXI ID, row assembly, padding for INP, errors, drain).  This
// module picks the row geometry of the buffer and turns the engine's write
// stream into the INP, WGT or PAR write port: a data row in the top bits
// of the row register, a padding row of pad_value.  RREADY is high but
// for LUT: the table's 256 bytes are written one per cycle into the ALU
// lanes' copies (lut_*_o), each beat held until its last byte is taken.
// A LOAD INP with src_out is loom_move's (OUT rows, no DRAM).  A LOAD WGT
// with wgt_transpose writes each row's B x B block transposed: a byte
// permutation of the assembled row on the way to the write port.
`include "loom_isa.vh"

module loom_load #(
  parameter integer BusBits  = 64,
  parameter integer Batch    = 1,
  parameter integer BlockIn  = 16,
  parameter integer BlockOut = 16,
  parameter integer InpAddrW = 11,
  parameter integer WgtAddrW = 10,
  parameter integer AccAddrW = 11,
  localparam integer CmdW    = `LOOM_CMD_BITS,
  localparam integer NumSeg  = `LOOM_NUM_SEGMENTS,
  localparam integer InpBits = Batch * BlockIn * 8,
  localparam integer WgtBits = BlockOut * BlockIn * 8,
  localparam integer ParBits = Batch * BlockOut * 64
) (
  input  wire                 clk_i,
  input  wire                 rst_ni,
  input  wire                 abort_i,
  // command queue
  input  wire                 cmd_valid_i,
  input  wire [CmdW-1:0]      cmd_data_i,
  output wire                 cmd_pop_o,
  // token queues with compute (C2L popped, L2C pushed)
  input  wire                 next_empty_i,
  input  wire                 next_full_i,
  output wire                 pop_next_o,
  output wire                 push_next_o,
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
  // SRAM write ports
  output wire                 inp_we_o,
  output wire [InpAddrW-1:0]  inp_waddr_o,
  output wire [InpBits-1:0]   inp_wdata_o,
  output wire                 wgt_we_o,
  output wire [WgtAddrW-1:0]  wgt_waddr_o,
  output wire [WgtBits-1:0]   wgt_wdata_o,
  output wire                 par_we_o,
  output wire [4:0]           par_waddr_o,
  output wire [ParBits-1:0]   par_wdata_o,
  output wire                 lut_we_o,
  output wire [7:0]           lut_waddr_o,
  output wire [7:0]           lut_wdata_o,
  // OUT read port (src_out), when the store leaves it free
  output wire                 out_re_o,
  output wire [AccAddrW-1:0]  out_raddr_o,
  input  wire                 out_gnt_i,
  input  wire [InpBits-1:0]   out_rdata_i,
  // status
  output wire                 err_valid_o,
  output wire [3:0]           err_code_o,
  output wire [31:0]          err_idx_o,
  output wire                 idle_o,
  output wire                 blocked_o,
  output wire [31:0]          cur_idx_o,
  output wire                 quiet_o,
  output wire                 tok_stall_o,
  output wire                 mem_stall_o,
  output wire                 insn_done_o,
  output wire                 inp_beat_o,
  output wire                 wgt_beat_o,
  output wire [7:0]           par_bytes_o     // PAR and LUT bytes read this cycle
);
  localparam integer RowMax   = (WgtBits > InpBits) ? WgtBits : InpBits;
  localparam integer RowBits  = (ParBits > RowMax) ? ParBits : RowMax;
  localparam integer InpShift = $clog2(Batch * BlockIn);
  localparam integer WgtShift = $clog2(BlockOut * BlockIn);
  localparam integer ParShift = $clog2(Batch * BlockOut * 8);
  localparam integer NbInp    = InpBits / BusBits;
  localparam integer NbWgt    = WgtBits / BusBits;
  localparam integer NbPar    = ParBits / BusBits;
  localparam integer NbMax    = (NbWgt > NbPar) ? NbWgt : NbPar;
  localparam integer NbW      = $clog2(NbMax + 1) + 1;
  localparam integer InpRows  = 1 << InpAddrW;
  localparam integer WgtRows  = 1 << WgtAddrW;
  localparam integer BusBytes = BusBits / 8;
  localparam integer LB       = $clog2(BusBytes);

  generate
    if ((InpBits % BusBits) != 0 || (WgtBits % BusBits) != 0 || (ParBits % BusBits) != 0 ||
        (1 << InpShift) != Batch * BlockIn || (1 << WgtShift) != BlockOut * BlockIn ||
        (1 << ParShift) != Batch * BlockOut * 8 || BlockIn != BlockOut) begin : g_bad
      loom_load_rows_must_be_power_of_two_bus_words u_illegal ();
    end
  endgenerate

  // ---- instruction life cycle
  wire            exec_start, exec_done;
  wire [CmdW-1:0] cmd;
  wire            seq_idle, seq_blocked;
  wire            unused_pop_prev, unused_push_prev;

  loom_insn_seq #(.CmdW(CmdW)) u_seq (
    .clk_i        (clk_i),
    .rst_ni       (rst_ni),
    .abort_i      (abort_i),
    .cmd_valid_i  (cmd_valid_i),
    .cmd_data_i   (cmd_data_i),
    .cmd_pop_o    (cmd_pop_o),
    .prev_empty_i (1'b1),
    .prev_full_i  (1'b1),
    .next_empty_i (next_empty_i),
    .next_full_i  (next_full_i),
    .pop_prev_o   (unused_pop_prev),
    .pop_next_o   (pop_next_o),
    .push_prev_o  (unused_push_prev),
    .push_next_o  (push_next_o),
    .exec_start_o (exec_start),
    .cmd_o        (cmd),
    .exec_done_i  (exec_done),
    .idle_o       (seq_idle),
    .blocked_o    (seq_blocked),
    .tok_stall_o  (tok_stall_o),
    .insn_done_o  (insn_done_o)
  );

  // ---- instruction fields
  wire [2:0]  opcode   = cmd[`LOOM_COMMON_OPCODE_LSB +: `LOOM_COMMON_OPCODE_W];
  wire [2:0]  buffer   = cmd[`LOOM_MEM_BUFFER_LSB +: `LOOM_MEM_BUFFER_W];
  wire [15:0] sram_base = cmd[`LOOM_MEM_SRAM_BASE_LSB +: `LOOM_MEM_SRAM_BASE_W];
  wire [2:0]  segment  = cmd[`LOOM_MEM_SEGMENT_LSB +: `LOOM_MEM_SEGMENT_W];
  wire [27:0] dram_off = cmd[`LOOM_MEM_DRAM_OFFSET_LSB +: `LOOM_MEM_DRAM_OFFSET_W];
  wire [15:0] y_size   = cmd[`LOOM_MEM_Y_SIZE_LSB +: `LOOM_MEM_Y_SIZE_W];
  wire [15:0] x_size   = cmd[`LOOM_MEM_X_SIZE_LSB +: `LOOM_MEM_X_SIZE_W];
  wire [15:0] x_stride = cmd[`LOOM_MEM_X_STRIDE_LSB +: `LOOM_MEM_X_STRIDE_W];
  wire [2:0]  y_pad_t  = cmd[`LOOM_MEM_Y_PAD_TOP_LSB +: `LOOM_MEM_Y_PAD_TOP_W];
  wire [2:0]  y_pad_b  = cmd[`LOOM_MEM_Y_PAD_BOTTOM_LSB +: `LOOM_MEM_Y_PAD_BOTTOM_W];
  wire [2:0]  x_pad_l  = cmd[`LOOM_MEM_X_PAD_LEFT_LSB +: `LOOM_MEM_X_PAD_LEFT_W];
  wire [2:0]  x_pad_r  = cmd[`LOOM_MEM_X_PAD_RIGHT_LSB +: `LOOM_MEM_X_PAD_RIGHT_W];
  wire [7:0]  pad_val  = cmd[`LOOM_MEM_PAD_VALUE_LSB +: `LOOM_MEM_PAD_VALUE_W];
  wire [31:0] idx      = cmd[CmdW-1 -: 32];
  wire        src_out  = cmd[`LOOM_MEM_SRC_OUT_LSB];
  wire        wgt_tr   = cmd[`LOOM_MEM_WGT_TRANSPOSE_LSB];
  wire        is_inp   = (buffer == `LOOM_BUF_INP);
  wire        is_wgt   = (buffer == `LOOM_BUF_WGT);
  wire        is_par   = (buffer == `LOOM_BUF_PAR);
  wire        is_lut   = (buffer == `LOOM_BUF_LUT);
  wire        is_load  = (opcode == `LOOM_OP_LOAD);

  assign cur_idx_o = idx;

  wire [4:0]  row_shift = is_inp ? InpShift[4:0] : is_wgt ? WgtShift[4:0] : is_par ? ParShift[4:0] : 5'd8;
  wire [16:0] rows      = is_inp ? InpRows[16:0] : is_wgt ? WgtRows[16:0] : is_par ? 17'd`LOOM_PAR_ROWS : 17'd1;
  wire [NbW-1:0] nb     = is_inp ? NbInp[NbW-1:0] : is_wgt ? NbWgt[NbW-1:0] : NbPar[NbW-1:0];
  wire        wr_en, wr_row, beat, dma_err, run_start, running;
  wire [3:0]  dma_code;
  wire [17:0] wr_addr;
  wire [RowBits-1:0] row_data;
  wire        dma_done, dma_idle;
  wire        lut_hold, lut_done;

  loom_dma_rd #(
    .BusBits  (BusBits),
    .RowBits  (RowBits),
    .NbW      (NbW),
    .ShiftSet ((32'd1 << InpShift) | (32'd1 << WgtShift) | (32'd1 << ParShift) | (32'd1 << 8))
  ) u_dma (
    .clk_i          (clk_i),
    .rst_ni         (rst_ni),
    .abort_i        (abort_i),
    .start_i        (exec_start && is_load && !src_out),
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
    .rows_i         (rows),
    .nb_i           (nb),
    .pad_en_i       (is_inp),
    .ext_i          (is_lut),
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
    .hold_i         (lut_hold),
    .ext_done_i     (lut_done),
    .wr_valid_o     (wr_en),
    .wr_row_o       (wr_row),
    .wr_addr_o      (wr_addr),
    .row_data_o     (row_data),
    .run_start_o    (run_start),
    .running_o      (running),
    .beat_o         (beat),
    .done_o         (dma_done),
    .idle_o         (dma_idle),
    .err_valid_o    (dma_err),
    .err_code_o     (dma_code),
    .mem_stall_o    (mem_stall_o)
  );

  // ---- LOAD LUT: one byte per cycle out of each beat
  reg  [8:0] lut_n_q, lut_n_d;  // bytes written
  wire       lut_active = running && is_lut && !lut_n_q[8];
  wire       lut_beat   = lut_active && r_valid_i && !r_resp_i[1];
  wire [LB-1:0] lane    = lut_n_q[LB-1:0];
  assign lut_done    = lut_n_q[8];
  assign lut_hold    = lut_active && (lane != {LB{1'b1}});
  assign lut_we_o    = lut_beat;
  assign lut_waddr_o = lut_n_q[7:0];
  assign lut_wdata_o = r_data_i[8*lane +: 8];
  always @* begin
    lut_n_d = lut_n_q;
    if (lut_beat) lut_n_d = lut_n_q + 9'd1;
    if (run_start) lut_n_d = 9'd0;
  end
  always @(posedge clk_i) lut_n_q <= lut_n_d;

  // ---- LOAD INP from OUT
  wire mv_we, mv_done, mv_err, mv_idle;
  wire [InpAddrW-1:0] mv_waddr;
  wire [InpBits-1:0]  mv_wdata;

  loom_move #(.RowBits(InpBits), .InpAddrW(InpAddrW), .AccAddrW(AccAddrW)) u_move (
    .clk_i          (clk_i),
    .rst_ni         (rst_ni),
    .abort_i        (abort_i),
    .start_i        (exec_start && is_load && src_out),
    .dram_offset_i  (dram_off),
    .sram_base_i    (sram_base),
    .y_size_i       (y_size),
    .x_size_i       (x_size),
    .x_stride_i     (x_stride),
    .y_pad_top_i    (y_pad_t),
    .y_pad_bottom_i (y_pad_b),
    .x_pad_left_i   (x_pad_l),
    .x_pad_right_i  (x_pad_r),
    .pad_value_i    (pad_val),
    .out_re_o       (out_re_o),
    .out_raddr_o    (out_raddr_o),
    .gnt_i          (out_gnt_i),
    .out_rdata_i    (out_rdata_i),
    .inp_we_o       (mv_we),
    .inp_waddr_o    (mv_waddr),
    .inp_wdata_o    (mv_wdata),
    .done_o         (mv_done),
    .err_valid_o    (mv_err),
    .idle_o         (mv_idle)
  );
  assign err_valid_o = dma_err || mv_err;
  assign err_code_o  = dma_err ? dma_code : `LOOM_ERR_SRAM;

  // ---- SRAM write ports
  wire [InpBits-1:0] pad_row = {(InpBits / 8){pad_val}};

  assign inp_we_o    = (wr_en && is_inp) || mv_we;
  assign inp_waddr_o = mv_we ? mv_waddr : wr_addr[InpAddrW-1:0];
  assign inp_wdata_o = mv_we ? mv_wdata : wr_row ? row_data[RowBits-1 -: InpBits] : pad_row;
  // wgt_transpose: byte [o][k] of the SRAM row is byte [k][o] of the DRAM
  // row (BlockIn == BlockOut, checked above), a fixed permutation of wires.
  wire [WgtBits-1:0] wgt_row = row_data[RowBits-1 -: WgtBits];
  wire [WgtBits-1:0] wgt_row_t;
  genvar o, k;
  generate
    for (o = 0; o < BlockOut; o = o + 1) begin : g_wgt_t_o
      for (k = 0; k < BlockIn; k = k + 1) begin : g_wgt_t_k
        assign wgt_row_t[(o * BlockIn + k) * 8 +: 8] = wgt_row[(k * BlockIn + o) * 8 +: 8];
      end
    end
  endgenerate

  assign wgt_we_o    = wr_en && is_wgt;
  assign wgt_waddr_o = wr_addr[WgtAddrW-1:0];
  assign wgt_wdata_o = wgt_tr ? wgt_row_t : wgt_row;
  assign par_we_o    = wr_en && is_par;
  assign par_waddr_o = wr_addr[4:0];
  assign par_wdata_o = row_data[RowBits-1 -: ParBits];

  wire [17-InpAddrW:0] unused_inp_addr = wr_addr[17:InpAddrW];
  wire [17-WgtAddrW:0] unused_wgt_addr = wr_addr[17:WgtAddrW];
  wire [1:0] unused_ops = {unused_pop_prev, unused_push_prev};
  // token flags are the sequencer's; src_int8 is zero here
  wire [4:0] unused_cmd = {cmd[125], cmd[6:3]};

  // ---- status
  assign exec_done   = dma_done || mv_done || (exec_start && !is_load);
  assign err_idx_o   = idx;
  assign idle_o      = seq_idle;
  assign blocked_o   = seq_blocked;
  assign quiet_o     = dma_idle && mv_idle && seq_idle;
  assign inp_beat_o  = beat && is_inp;
  assign wgt_beat_o  = beat && is_wgt;
  assign par_bytes_o = (beat && is_par) ? BusBytes[7:0] : {7'd0, lut_beat};
endmodule
