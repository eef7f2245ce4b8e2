// A block RAM read without output register, through one LUT into a
// register: the block RAM's clock-to-out starts the path.
module bram_read (
  input  wire       clk,
  input  wire [9:0] addr,
  output wire       y
);
  wire [31:0] do_a;
  wire n;
  RAMB18E1 #(.READ_WIDTH_A(18), .DOA_REG(0))
    u_ram (.CLKARDCLK(clk), .CLKBWRCLK(clk), .ENARDEN(1'b1), .ADDRARDADDR({addr, 4'd0}), .DOADO(do_a));
  LUT2 #(.INIT(4'h8)) l_y (.I0(do_a[0]), .I1(do_a[1]), .O(n));
  FDRE r_y (.C(clk), .CE(1'b1), .R(1'b0), .D(n), .Q(y));
endmodule
