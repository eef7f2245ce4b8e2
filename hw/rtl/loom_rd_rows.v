// loom_rd_rows - assembles DRAM rows from read beats and places them.
//
// A DRAM row of a LOAD is nb_i bus beats (rows are whole, aligned bus
// words; micro-ops are handled apart).  Beats shift into a register from
// the top, so after the last beat of a row the row sits in the top
// nb_i * BusBits bits of row_data_o, byte 0 lowest, exactly the SRAM row
// layout.  The row is presented (row_valid_o) in the cycle after its last
// beat, from registers: no path from the AXI inputs to the SRAM.
//
// Placement follows docs/isa.md: DRAM row (y, x) goes to SRAM row
// sram_base + (y + y_pad_top) * W + x_pad_left + x, i.e. consecutive rows,
// with skip_i = x_pad_left + x_pad_right rows jumped at the end of each
// transfer row.  done_o rises when all y_size x x_size rows have been
// presented.
module loom_rd_rows #(
  parameter integer BusBits = 64,
  parameter integer RowBits = 64,
  parameter integer NbW     = 4
) (
  input  wire               clk_i,
  input  wire               rst_ni,
  input  wire               start_i,
  input  wire [NbW-1:0]     nb_i,
  input  wire [17:0]        first_addr_i,
  input  wire [15:0]        x_size_i,
  input  wire [15:0]        y_size_i,
  input  wire [3:0]         skip_i,
  input  wire               beat_valid_i,
  input  wire [BusBits-1:0] beat_data_i,
  output wire               row_valid_o,
  output wire [17:0]        row_addr_o,
  output wire [RowBits-1:0] row_data_o,
  output wire               done_o
);
  generate
    if (RowBits < BusBits || (RowBits % BusBits) != 0) begin : g_bad_params
      loom_rd_rows_illegal_parameters u_illegal ();
    end
  endgenerate

  reg [NbW-1:0]     beat_q, beat_d;
  reg [15:0]        x_q, x_d;
  reg [15:0]        y_q, y_d;
  reg [17:0]        addr_q, addr_d;
  reg               row_valid_q, row_valid_d;
  reg [17:0]        row_addr_q, row_addr_d;
  reg [RowBits-1:0] shreg_q;
  wire [RowBits-1:0] shreg_d;

  generate
    if (RowBits == BusBits) begin : g_one_beat
      assign shreg_d = beat_valid_i ? beat_data_i : shreg_q;
    end else begin : g_shift
      assign shreg_d = beat_valid_i ? {beat_data_i, shreg_q[RowBits-1:BusBits]} : shreg_q;
    end
  endgenerate

  wire last_beat = beat_valid_i && (beat_q == nb_i - {{(NbW-1){1'b0}}, 1'b1});

  assign row_valid_o = row_valid_q;
  assign row_addr_o  = row_addr_q;
  assign row_data_o  = shreg_q;
  assign done_o      = (y_q == y_size_i) && !row_valid_q;

  always @* begin
    beat_d      = beat_q;
    x_d         = x_q;
    y_d         = y_q;
    addr_d      = addr_q;
    row_valid_d = 1'b0;
    row_addr_d  = row_addr_q;
    if (beat_valid_i) beat_d = beat_q + {{(NbW-1){1'b0}}, 1'b1};
    if (last_beat) begin
      beat_d      = {NbW{1'b0}};
      row_valid_d = 1'b1;
      row_addr_d  = addr_q;
      if (x_q == x_size_i - 16'd1) begin
        x_d    = 16'd0;
        y_d    = y_q + 16'd1;
        addr_d = addr_q + 18'd1 + {14'd0, skip_i};
      end else begin
        x_d    = x_q + 16'd1;
        addr_d = addr_q + 18'd1;
      end
    end
    if (start_i) begin
      beat_d = {NbW{1'b0}};
      x_d    = 16'd0;
      y_d    = 16'd0;
      addr_d = first_addr_i;
    end
  end

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      beat_q      <= {NbW{1'b0}};
      x_q         <= 16'd0;
      y_q         <= 16'd0;
      addr_q      <= 18'd0;
      row_valid_q <= 1'b0;
      row_addr_q  <= 18'd0;
    end else begin
      beat_q      <= beat_d;
      x_q         <= x_d;
      y_q         <= y_d;
      addr_q      <= addr_d;
      row_valid_q <= row_valid_d;
      row_addr_q  <= row_addr_d;
    end
  end

  always @(posedge clk_i) begin
    shreg_q <= shreg_d;
  end
endmodule
