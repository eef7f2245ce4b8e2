// A 12-bit adder: one LUT per bit into three chained CARRY4, the top sum bit
// registered.  The critical path is q[0] -> its LUT -> S[0] of the first
// CARRY4 -> CO[3] -> through the second -> O[3] of the third.
module carry_chain (
  input  wire        clk,
  input  wire [11:0] a,
  output wire        y
);
  wire [11:0] q, s;
  wire [3:0] co0, co1, co2, o0, o1, o2;
  genvar i;
  for (i = 0; i < 12; i = i + 1) begin : g_bit
    FDRE r_q (.C(clk), .CE(1'b1), .R(1'b0), .D(a[i]), .Q(q[i]));
    LUT2 #(.INIT(4'h6)) l_s (.I0(q[i]), .I1(a[i]), .O(s[i]));
  end
  CARRY4 c0 (.CI(1'b0), .CYINIT(1'b0), .DI(q[3:0]), .S(s[3:0]), .CO(co0), .O(o0));
  CARRY4 c1 (.CI(co0[3]), .CYINIT(1'b0), .DI(q[7:4]), .S(s[7:4]), .CO(co1), .O(o1));
  CARRY4 c2 (.CI(co1[3]), .CYINIT(1'b0), .DI(q[11:8]), .S(s[11:8]), .CO(co2), .O(o2));
  FDRE r_sum (.C(clk), .CE(1'b1), .R(1'b0), .D(o2[3]), .Q(y));
endmodule
