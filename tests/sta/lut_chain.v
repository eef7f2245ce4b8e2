// Four LUTs in a row between two registers; the first register also feeds
// the second LUT directly, so it drives a net of fanout 2 (a shorter path
// to the same end that the estimate must not take).
module lut_chain (
  input  wire clk,
  input  wire a,
  output wire y
);
  wire q0, n1, n2, n3, n4;
  FDRE r_src (.C(clk), .CE(1'b1), .R(1'b0), .D(a), .Q(q0));
  LUT1 #(.INIT(2'b01)) l1 (.I0(q0), .O(n1));
  LUT2 #(.INIT(4'h6)) l2 (.I0(n1), .I1(q0), .O(n2));
  LUT1 #(.INIT(2'b01)) l3 (.I0(n2), .O(n3));
  LUT1 #(.INIT(2'b01)) l4 (.I0(n3), .O(n4));
  FDRE r_dst (.C(clk), .CE(1'b1), .R(1'b0), .D(n4), .Q(y));
endmodule
