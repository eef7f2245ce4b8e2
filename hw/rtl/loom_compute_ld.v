// loom_compute_ld - LOAD of UOP and ACC in the compute module.
//
// loom_dma_rd executes the LOAD (checks, bursts on compute's AXI read ID,
// errors, drain), as a LOAD of INP in loom_load.  ACC rows use its rows
// sink (int32, or int8 sign-extended, and padding); each write also
// writes OUT = sat8 (we_o, addr_o, acc_o, out_o: the owner's ACC and OUT
// ports).  Micro-op rows are 4 bytes, so a bus beat holds several: this
// module takes those beats itself (the engine's external sink) and holds
// each (RREADY low) while its micro-ops are written one per cycle,
// starting at the lane of the row's first byte (any 4-byte alignment).
`include "loom_isa.vh"

module loom_compute_ld #(
  parameter integer BusBits  = 64,
  parameter integer Batch    = 1,
  parameter integer BlockOut = 16,
  parameter integer AccAddrW = 11,
  parameter integer UopAddrW = 13,
  localparam integer NumSeg  = `LOOM_NUM_SEGMENTS,
  localparam integer Lanes   = Batch * BlockOut,
  localparam integer AccBits = Lanes * 32,
  localparam integer OutBits = Lanes * 8
) (
  input  wire                 clk_i,
  input  wire                 rst_ni,
  input  wire                 abort_i,
  input  wire                 start_i,
  input  wire [127:0]         cmd_i,
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
  // UOP write port
  output wire                 uop_we_o,
  output wire [UopAddrW-1:0]  uop_waddr_o,
  output wire [31:0]          uop_wdata_o,
  // ACC and OUT rows
  output wire                 we_o,
  output wire [AccAddrW-1:0]  addr_o,
  output reg  [AccBits-1:0]   acc_o,
  output reg  [OutBits-1:0]   out_o,
  // status
  output wire                 done_o,
  output wire                 idle_o,
  output wire                 err_valid_o,
  output wire [3:0]           err_code_o,
  output wire                 mem_stall_o,
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

  // MEM fields
  wire [2:0]  buffer    = cmd_i[`LOOM_MEM_BUFFER_LSB +: `LOOM_MEM_BUFFER_W];
  wire [15:0] sram_base = cmd_i[`LOOM_MEM_SRAM_BASE_LSB +: `LOOM_MEM_SRAM_BASE_W];
  wire [2:0]  segment   = cmd_i[`LOOM_MEM_SEGMENT_LSB +: `LOOM_MEM_SEGMENT_W];
  wire [27:0] dram_off  = cmd_i[`LOOM_MEM_DRAM_OFFSET_LSB +: `LOOM_MEM_DRAM_OFFSET_W];
  wire [15:0] y_size    = cmd_i[`LOOM_MEM_Y_SIZE_LSB +: `LOOM_MEM_Y_SIZE_W];
  wire [15:0] x_size    = cmd_i[`LOOM_MEM_X_SIZE_LSB +: `LOOM_MEM_X_SIZE_W];
  wire [15:0] x_stride  = cmd_i[`LOOM_MEM_X_STRIDE_LSB +: `LOOM_MEM_X_STRIDE_W];
  wire [2:0]  y_pad_t   = cmd_i[`LOOM_MEM_Y_PAD_TOP_LSB +: `LOOM_MEM_Y_PAD_TOP_W];
  wire [2:0]  y_pad_b   = cmd_i[`LOOM_MEM_Y_PAD_BOTTOM_LSB +: `LOOM_MEM_Y_PAD_BOTTOM_W];
  wire [2:0]  x_pad_l   = cmd_i[`LOOM_MEM_X_PAD_LEFT_LSB +: `LOOM_MEM_X_PAD_LEFT_W];
  wire [2:0]  x_pad_r   = cmd_i[`LOOM_MEM_X_PAD_RIGHT_LSB +: `LOOM_MEM_X_PAD_RIGHT_W];
  wire [7:0]  pad_val   = cmd_i[`LOOM_MEM_PAD_VALUE_LSB +: `LOOM_MEM_PAD_VALUE_W];
  wire        src_int8  = cmd_i[`LOOM_MEM_SRC_INT8_LSB];
  wire        is_uop    = (buffer == `LOOM_BUF_UOP);

  // ---- the DMA-read engine
  wire [4:0]  row_shift = is_uop ? 5'd2 : (src_int8 ? Sh8[4:0] : Sh32[4:0]);
  wire        loading, run_start, dma_beat;
  wire        row_valid, ul_hold, ul_done;
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
    .start_i        (start_i),
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
    .wr_valid_o     (we_o),
    .wr_row_o       (row_valid),
    .wr_addr_o      (ld_addr),
    .row_data_o     (row_data),
    .run_start_o    (run_start),
    .running_o      (loading),
    .beat_o         (dma_beat),
    .done_o         (done_o),
    .idle_o         (idle_o),
    .err_valid_o    (err_valid_o),
    .err_code_o     (err_code_o),
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
  integer li;
  always @* begin
    for (li = 0; li < Lanes; li = li + 1) begin
      if (!row_valid) begin
        acc_o[32*li +: 32] = {{24{pad_val[7]}}, pad_val};
        out_o[8*li +: 8]   = pad_val;
      end else if (src_int8) begin
        acc_o[32*li +: 32] = {{24{row8[8*li + 7]}}, row8[8*li +: 8]};
        out_o[8*li +: 8]   = row8[8*li +: 8];
      end else begin
        acc_o[32*li +: 32] = row_data[32*li +: 32];
        out_o[8*li +: 8]   = row_sat8[8*li +: 8];
      end
    end
  end
  assign addr_o = ld_addr[AccAddrW-1:0];
  wire [17-AccAddrW:0] unused_ld_addr = ld_addr[17:AccAddrW];
  // LOAD fields only; the other formats' bits are not this module's
  wire unused_cmd = ^{cmd_i[127:126], cmd_i[6:0]};

  assign uop_word_o = ul_beat;
  assign acc_beat_o = dma_beat && !is_uop;
endmodule
