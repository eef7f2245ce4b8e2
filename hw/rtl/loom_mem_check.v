// loom_mem_check - the bounds checks of a LOAD or STORE, done before any
// request of the instruction is issued (docs/isa.md, "LOAD and STORE").
//
//   last = dram_offset + (y_size - 1) * x_stride + x_size     (34 bits, exact)
//   SEGMENT if seg_size == 0 or (last << row_shift) > seg_size  (64 bits)
//   SRAM    if sram_base + H * W > rows                        (35 bits, exact)
// with H = y_size + y pads, W = x_size + x pads (a STORE passes zero pads).
// Row sizes are powers of two (checked where the configuration is
// elaborated), so last * R is a shift.  The two products map to one DSP
// each; the result is ready (done_o) three cycles after start_i, with the
// inputs held stable meanwhile.  An empty transfer (x_size or y_size zero)
// is flagged and never fails: it checks nothing.
module loom_mem_check #(
  parameter integer RowsW = 17
) (
  input  wire             clk_i,
  input  wire             rst_ni,
  input  wire             start_i,
  input  wire [27:0]      dram_offset_i,
  input  wire [15:0]      y_size_i,
  input  wire [15:0]      x_size_i,
  input  wire [15:0]      x_stride_i,
  input  wire [3:0]       y_pad_i,
  input  wire [3:0]       x_pad_i,
  input  wire [15:0]      sram_base_i,
  input  wire [4:0]       row_shift_i,
  input  wire [RowsW-1:0] rows_i,
  input  wire [63:0]      seg_size_i,
  output wire             done_o,
  output wire             empty_o,
  output wire             seg_err_o,
  output wire             sram_err_o
);
  reg        v1_q, v2_q, v3_q;
  reg [31:0] span_q;       // (y_size - 1) * x_stride
  reg [33:0] area_q;       // H * W
  reg [63:0] end_q;        // (last << row_shift)
  reg [34:0] sram_end_q;   // sram_base + H * W
  reg        seg_err_q, sram_err_q;

  wire [16:0] h = {1'b0, y_size_i} + {13'd0, y_pad_i};
  wire [16:0] w = {1'b0, x_size_i} + {13'd0, x_pad_i};
  wire [15:0] y_minus_1 = y_size_i - 16'd1;
  wire [33:0] last = {6'd0, dram_offset_i} + {2'd0, span_q} + {18'd0, x_size_i};

  // registered like the verdicts (read only with done_o): the field
  // compares end here instead of running on into the DMA's start
  // (docs/rtl.md, "Timing")
  reg empty_q;
  always @(posedge clk_i) empty_q <= (x_size_i == 16'd0) || (y_size_i == 16'd0);
  assign empty_o    = empty_q;
  assign done_o     = v3_q;
  assign seg_err_o  = seg_err_q;
  assign sram_err_o = sram_err_q;

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      v1_q <= 1'b0;
      v2_q <= 1'b0;
      v3_q <= 1'b0;
    end else begin
      v1_q <= start_i;
      v2_q <= v1_q;
      v3_q <= v2_q;
    end
  end

  wire [31:0] span_d     = y_minus_1 * x_stride_i;
  wire [33:0] area_d     = h * w;
  wire [63:0] end_d      = {30'd0, last} << row_shift_i;
  wire [34:0] sram_end_d = {19'd0, sram_base_i} + {1'b0, area_q};
  wire        seg_err_d  = (seg_size_i == 64'd0) || (end_q > seg_size_i);
  wire        sram_err_d = (sram_end_q > {{(35 - RowsW){1'b0}}, rows_i});

  // Datapath registers (no reset: they feed and absorb into DSPs).
  always @(posedge clk_i) begin
    span_q     <= span_d;
    area_q     <= area_d;
    end_q      <= end_d;
    sram_end_q <= sram_end_d;
    seg_err_q  <= seg_err_d;
    sram_err_q <= sram_err_d;
  end
endmodule
