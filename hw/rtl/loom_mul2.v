// loom_mul2 - two int8 x int8 products that share one operand, in one
// DSP48E1 (25 x 18 multiplier).
//
//   A = w1 * 2^16 + w0     (25-bit signed: fits, |A| <= 2^23 + 128)
//   P = A * x = w1*x * 2^16 + w0*x
// w0*x lies in [-16256, 16384], so it is the low 16 bits of P read as
// signed, and w1*x = (P >>> 16) + P[15] (the borrow the negative low
// product took from the high half).  The three pipeline registers (A/B,
// M, P) are the DSP's own; the packing add and the borrow fix-up are
// a few LUTs.  Latency 3: p0_o/p1_o belong to the inputs of three cycles
// earlier.  This halves the DSPs of the GEMM core (128 for 1x16x16) and
// leaves room for the ALU's multipliers on an xc7z020 (220 DSP48E1).
module loom_mul2 (
  input  wire        clk_i,
  input  wire [7:0]  x_i,
  input  wire [7:0]  w0_i,
  input  wire [7:0]  w1_i,
  output wire [15:0] p0_o,
  output wire [15:0] p1_o
);
  reg signed [24:0] a_q;
  reg signed [7:0]  b_q;
  reg signed [32:0] m_q, p_q;

  wire signed [24:0] a_d = $signed({w1_i, 16'd0}) + $signed({{17{w0_i[7]}}, w0_i});
  wire signed [32:0] m_d = a_q * b_q;

  always @(posedge clk_i) begin
    a_q <= a_d;
    b_q <= x_i;
    m_q <= m_d;
    p_q <= m_q;
  end

  assign p0_o = p_q[15:0];
  assign p1_o = p_q[31:16] + {15'd0, p_q[15]};
  wire unused_p_msb = p_q[32];
endmodule
