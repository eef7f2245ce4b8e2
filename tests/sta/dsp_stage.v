// A multiplier without input or M registers: the path runs from the
// operand registers through the DSP's multiplier and ALU into its P
// register; P then feeds a LUT into a register.
module dsp_stage (
  input  wire        clk,
  input  wire [7:0]  a,
  output wire        y
);
  wire [7:0] q;
  wire [47:0] p;
  wire n;
  genvar i;
  for (i = 0; i < 8; i = i + 1) begin : g_bit
    FDRE r_q (.C(clk), .CE(1'b1), .R(1'b0), .D(a[i]), .Q(q[i]));
  end
  DSP48E1 #(.AREG(0), .BREG(0), .ACASCREG(0), .BCASCREG(0), .MREG(0), .PREG(1), .CREG(0),
            .OPMODEREG(0), .ALUMODEREG(0), .INMODEREG(0), .CARRYINREG(0), .CARRYINSELREG(0),
            .USE_MULT("MULTIPLY"))
    u_dsp (.CLK(clk), .A({22'd0, q}), .B({10'd0, q}), .OPMODE(7'b0000101), .ALUMODE(4'd0),
           .INMODE(5'd0), .CARRYINSEL(3'd0), .CEP(1'b1), .P(p));
  LUT2 #(.INIT(4'h6)) l_p (.I0(p[0]), .I1(p[1]), .O(n));
  FDRE r_y (.C(clk), .CE(1'b1), .R(1'b0), .D(n), .Q(y));
endmodule
