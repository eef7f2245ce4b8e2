// A primitive the delay model does not describe (a PLL here): loomsta must
// name it and stop rather than leave a hole in the timing graph.
module unknown_cell (
  input  wire clk,
  output wire locked
);
  PLLE2_BASE u_pll (.CLKIN1(clk), .CLKFBIN(clk), .LOCKED(locked));
endmodule
