// Two LUTs feeding each other: a combinational loop, which no static
// timing analysis can order.
module comb_loop (
  input  wire clk,
  input  wire a,
  output wire y
);
  wire n1, n2;
  LUT2 #(.INIT(4'h6)) l1 (.I0(a), .I1(n2), .O(n1));
  LUT1 #(.INIT(2'b01)) l2 (.I0(n1), .O(n2));
  FDRE r_y (.C(clk), .CE(1'b1), .R(1'b0), .D(n1), .Q(y));
endmodule
