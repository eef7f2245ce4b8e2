// loom_move - LOAD INP with src_out: the on-chip move of a fused chain of
// layers, OUT rows into INP (docs/isa.md, "LOAD INP from OUT").
//
// The transfer is an INP load whose "DRAM rows" are OUT rows: row (y, x)
// is OUT[dram_offset + y * x_stride + x], written with the padding
// densely from sram_base on.  loom_mem_check checks it first (three
// cycles): the source against the OUT rows (its segment check, with the
// "segment" being OUT's rows of one byte each, raises SRAM here), then the
// destination against INP; an empty transfer does nothing.  Then one SRAM
// row per cycle in order: a data row reads OUT when the store module
// leaves OUT's read port free (gnt_i; the store has priority) and writes
// INP the cycle after, with the row read; a padding row writes pad_value
// one cycle after its turn too, so the INP write port sees one row per
// cycle in order.  No DRAM is touched and nothing is counted.
module loom_move #(
  parameter integer RowBits  = 128,
  parameter integer InpAddrW = 11,
  parameter integer AccAddrW = 11
) (
  input  wire                clk_i,
  input  wire                rst_ni,
  input  wire                abort_i,
  input  wire                start_i,
  // the transfer (MEM fields, held while it executes)
  input  wire [27:0]         dram_offset_i,
  input  wire [15:0]         sram_base_i,
  input  wire [15:0]         y_size_i,
  input  wire [15:0]         x_size_i,
  input  wire [15:0]         x_stride_i,
  input  wire [2:0]          y_pad_top_i,
  input  wire [2:0]          y_pad_bottom_i,
  input  wire [2:0]          x_pad_left_i,
  input  wire [2:0]          x_pad_right_i,
  input  wire [7:0]          pad_value_i,
  // OUT read port (shared with the store module)
  output wire                out_re_o,
  output wire [AccAddrW-1:0] out_raddr_o,
  input  wire                gnt_i,
  input  wire [RowBits-1:0]  out_rdata_i,
  // INP write port
  output wire                inp_we_o,
  output wire [InpAddrW-1:0] inp_waddr_o,
  output wire [RowBits-1:0]  inp_wdata_o,
  // status
  output wire                done_o,
  output wire                err_valid_o,
  output wire                idle_o
);
  localparam [1:0] StIdle = 2'd0, StCheck = 2'd1, StRun = 2'd2, StErr = 2'd3;
  localparam integer InpRows = 1 << InpAddrW;
  localparam [63:0]  AccRows64 = 64'd1 << AccAddrW;

  reg [1:0] state_q, state_d;
  wire      chk_done, chk_empty, chk_src_err, chk_dst_err;

  loom_mem_check #(.RowsW(17)) u_check (
    .clk_i         (clk_i),
    .rst_ni        (rst_ni),
    .start_i       (start_i),
    .dram_offset_i (dram_offset_i),
    .y_size_i      (y_size_i),
    .x_size_i      (x_size_i),
    .x_stride_i    (x_stride_i),
    .y_pad_i       ({1'b0, y_pad_top_i} + {1'b0, y_pad_bottom_i}),
    .x_pad_i       ({1'b0, x_pad_left_i} + {1'b0, x_pad_right_i}),
    .sram_base_i   (sram_base_i),
    .row_shift_i   (5'd0),
    .rows_i        (InpRows[16:0]),
    .seg_size_i    (AccRows64),
    .done_o        (chk_done),
    .empty_o       (chk_empty),
    .seg_err_o     (chk_src_err),
    .sram_err_o    (chk_dst_err)
  );

  // ---- the walk over the padded window
  wire [15:0] h = y_size_i + {13'd0, y_pad_top_i} + {13'd0, y_pad_bottom_i};
  wire [15:0] w = x_size_i + {13'd0, x_pad_left_i} + {13'd0, x_pad_right_i};
  reg  [15:0] yy_q, yy_d, xx_q, xx_d;
  reg  [16:0] dst_q, dst_d;       // INP row of (yy, xx)
  reg  [27:0] src_row_q, src_row_d; // OUT row of (yy - pad_top, 0)
  reg  [27:0] src_q, src_d;       // OUT row of (yy - pad_top, xx - pad_left)
  reg         wv_q, wpad_q;       // a row to write this cycle
  reg  [16:0] waddr_q;

  // The window's bounds, summed from the instruction's fields at start_i:
  // the walk compares against them only in StRun, which comes after
  // StCheck, so taking them from flip-flops changes no cycle, and the
  // instruction's adders no longer sit in front of done_o (the load
  // module's sequencer) and the walk's compares.  (x + 1 == w is
  // x == w - 1 in 16-bit arithmetic.)
  reg  [15:0] h_q, w_m1_q, y_end_q, x_end_q;
  always @(posedge clk_i) begin
    if (start_i) begin
      h_q     <= h;
      w_m1_q  <= w - 16'd1;
      y_end_q <= {13'd0, y_pad_top_i} + y_size_i;
      x_end_q <= {13'd0, x_pad_left_i} + x_size_i;
    end
  end

  wire at_end   = (yy_q == h_q);
  wire in_y     = (yy_q >= {13'd0, y_pad_top_i}) && (yy_q < y_end_q);
  wire in_x     = (xx_q >= {13'd0, x_pad_left_i}) && (xx_q < x_end_q);
  wire is_data  = in_y && in_x;
  wire running  = (state_q == StRun) && !at_end;
  wire advance  = running && (!is_data || gnt_i) && !abort_i;
  wire row_end  = (xx_q == w_m1_q);

  always @* begin
    state_d = state_q;
    yy_d = yy_q; xx_d = xx_q; dst_d = dst_q; src_row_d = src_row_q; src_d = src_q;
    case (state_q)
      StIdle:  if (start_i) state_d = StCheck;
      StCheck: if (chk_done) begin
        if (chk_empty) state_d = StIdle;
        else if (chk_src_err || chk_dst_err) state_d = StErr;
        else state_d = StRun;
      end
      StRun:   if (at_end && !wv_q) state_d = StIdle;
      StErr:   state_d = StErr;
      default: state_d = StIdle;
    endcase
    if (advance) begin
      dst_d = dst_q + 17'd1;
      if (is_data) src_d = src_q + 28'd1;
      if (row_end) begin
        xx_d = 16'd0;
        yy_d = yy_q + 16'd1;
        if (in_y) src_row_d = src_row_q + {12'd0, x_stride_i};
        src_d = in_y ? src_row_q + {12'd0, x_stride_i} : src_row_q;
      end else begin
        xx_d = xx_q + 16'd1;
      end
    end
    if (start_i) begin
      yy_d = 16'd0; xx_d = 16'd0;
      dst_d = {1'b0, sram_base_i};
      src_row_d = dram_offset_i;
      src_d = dram_offset_i;
    end
    if (abort_i) state_d = StIdle;
  end

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q <= StIdle;
      wv_q    <= 1'b0;
    end else begin
      state_q <= state_d;
      wv_q    <= advance;
    end
  end

  always @(posedge clk_i) begin
    yy_q <= yy_d; xx_q <= xx_d; dst_q <= dst_d; src_row_q <= src_row_d; src_q <= src_d;
    wpad_q  <= !is_data;
    waddr_q <= dst_q;
  end

  assign out_re_o    = running && is_data && gnt_i && !abort_i;
  assign out_raddr_o = src_q[AccAddrW-1:0];
  assign inp_we_o    = wv_q && !abort_i;
  assign inp_waddr_o = waddr_q[InpAddrW-1:0];
  assign inp_wdata_o = wpad_q ? {(RowBits / 8){pad_value_i}} : out_rdata_i;
  assign done_o      = (state_q == StCheck && chk_done && chk_empty) ||
                       (state_q == StRun && at_end && !wv_q);
  assign err_valid_o = (state_q == StErr);
  assign idle_o      = (state_q == StIdle) && !wv_q;
  wire [27-AccAddrW:0] unused_src  = src_q[27:AccAddrW];
  wire [16-InpAddrW:0] unused_dst  = waddr_q[16:InpAddrW];
endmodule
