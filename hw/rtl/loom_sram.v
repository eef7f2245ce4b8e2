// loom_sram - simple dual-port RAM with a registered read, the shape
// synthesis maps to block RAM (RAMB36E1/RAMB18E1 on 7-series).
//
// One write port and one read port on the same clock.  rdata_o holds the
// row read in the last cycle re_i was high.  A read of the row written in
// the same cycle returns the old contents (read-first); the GEMM and ALU
// pipelines never depend on it (they forward or interlock, see
// docs/rtl.md).  The contents are not reset: SRAM is undefined at job start
// (docs/isa.md, "State").  Block = 1 asks synthesis for block RAM even
// where the shape (few rows, wide) would make it choose distributed RAM:
// PAR, whose LUTs the xc7z020 cannot spare.
module loom_sram #(
  parameter integer Width = 32,
  parameter integer Depth = 1024,
  parameter integer AddrW = 10,
  parameter integer Block = 0
) (
  input  wire             clk_i,
  input  wire             we_i,
  input  wire [AddrW-1:0] waddr_i,
  input  wire [Width-1:0] wdata_i,
  input  wire             re_i,
  input  wire [AddrW-1:0] raddr_i,
  output wire [Width-1:0] rdata_o
);
  generate
    if ((1 << AddrW) != Depth) begin : g_bad_params
      loom_sram_illegal_parameters u_illegal ();
    end
  endgenerate

  reg [Width-1:0] rdata_q;

  assign rdata_o = rdata_q;

  // Memory arrays are the one exception to "a clocked block holds only
  // reset and q <= d": this is the template block RAM inference expects.
  generate
    if (Block != 0) begin : g_block
      (* ram_style = "block" *) reg [Width-1:0] mem [0:Depth-1];
      always @(posedge clk_i) begin
        if (we_i) mem[waddr_i] <= wdata_i;
      end
      always @(posedge clk_i) begin
        if (re_i) rdata_q <= mem[raddr_i];
      end
    end else begin : g_auto
      reg [Width-1:0] mem [0:Depth-1];
      always @(posedge clk_i) begin
        if (we_i) mem[waddr_i] <= wdata_i;
      end
      always @(posedge clk_i) begin
        if (re_i) rdata_q <= mem[raddr_i];
      end
    end
  endgenerate
endmodule
