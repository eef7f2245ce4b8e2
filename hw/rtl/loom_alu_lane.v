// loom_alu_lane - one int32 lane of the vector ALU, fixed latency 6.
//
// a_i is the destination lane, v_i the operand (source lane or the
// sign-extended immediate), sampled in the cycle they are presented;
// res_o is op(a, v) six cycles later (docs/isa.md, "ALU").  EPI (the
// epilogue without its table) is REQUANT of a + b with the multiplier v:
// b_i is the lane's bias (zero for the other ops).  Registers, and the
// logic in front of each:
//   S1  a, b, v; then ADD/MAX/MIN/MOV, the multiplier's first operand a + b
//       and its second (REQUANT with an immediate: the QCFG multiplier,
//       otherwise v)
//   S2  multiplier inputs (DSP A/B)  S3  product (DSP M); then the
//       rounding add of the 64-bit value x and its half h = 2^(s-1) (0 when
//       s = 0), in 65 bits:
//         x = sext(a), s = v & 31        for SHR
//         x = a * m,   s = QCFG shift    for REQUANT (EPI: x = (a + b) * v)
//   S4  product (DSP P) and x + h; then the shift r = (x + h) >>> s and the
//       tie flag (x mod 2^s == h, i.e. (x + h) mod 2^s == 0 when s > 0)
//       (the add sits in front of S4 and the shift behind it, so neither
//       runs on into the other: docs/rtl.md, "Timing")
//   S5  r, r saturated to 12 bits and the round-half-to-even step (odd:
//       round_even, a tie and r odd); then for REQUANT/EPI: - odd + zero point,
//       clamp to [lo, hi] (hi wins when lo > hi)
//   S6  the result selected by op
// MUL is the low word of the same 64-bit product.  The 32 x 32 product
// maps to DSP48E1 slices (synthesis splits it); nothing else does.
//
// en_i[k] is high while a micro-op occupies stage k + 1 (loom_alu's
// pipeline valid bits); the costly registers (the product, the rounding
// shift, the result) load only then and hold otherwise, which is what the
// DSP's CEM and the flip-flops' CE do for free in hardware and spares the
// simulator (tsim) the lane arithmetic in the cycles the ALU is idle.
// res_o is only used in the cycle after en_i[5], so results are unchanged.
// Stages 1, 2 and 4 stay ungated: they are cheap copies, and their delay
// lines (a, simple, n) map to shift registers, which need one common enable.
`include "loom_isa.vh"

module loom_alu_lane (
  input  wire        clk_i,
  input  wire [5:0]  en_i,            // stage k + 1 holds a micro-op
  input  wire [2:0]  op_i,
  input  wire        use_imm_i,
  input  wire [31:0] q_mult_i,
  input  wire [5:0]  q_shift_i,
  input  wire [63:0] q_mask_i,        // (1 << shift) - 1
  input  wire [63:0] q_half_i,        // shift ? 1 << (shift - 1) : 0
  input  wire [7:0]  q_zp_i,
  input  wire [7:0]  q_lo_i,
  input  wire [7:0]  q_hi_i,
  input  wire        q_round_even_i,
  input  wire [31:0] a_i,
  input  wire [31:0] b_i,
  input  wire [31:0] v_i,
  output wire [31:0] res_o
);
  // S1
  reg  [31:0] a1_q, b1_q, v1_q;
  // S2
  reg  signed [31:0] ma2_q, mb2_q;
  reg  [31:0] simple2_q, a2_q;
  reg  [4:0]  n2_q;
  // S3, S4
  reg  signed [63:0] m3_q;
  reg  [31:0] p4_q;  // MUL's low word
  reg  [31:0] simple3_q, simple4_q, a3_q;
  reg  [4:0]  n3_q;
  reg  [64:0] xh4_q;  // x + h
  reg  [5:0]  s4_q;   // s
  // S5
  reg  [63:0] r5_q;
  reg  [11:0] sat5_q;  // r saturated to 12 bits (REQUANT)
  reg         odd5_q;  // round half to even moves this tie down by one
  reg  [31:0] simple5_q, mul5_q;
  // S6
  reg  [31:0] res6_q;

  wire [1:0] unused_en = en_i[1:0];
  wire       unused_r5_msb;

  wire is_shr = (op_i == `LOOM_ALU_SHR);

  // ---- S1: simple ops
  reg [31:0] simple1;
  always @* begin
    case (op_i)
      `LOOM_ALU_ADD: simple1 = a1_q + v1_q;
      `LOOM_ALU_MAX: simple1 = ($signed(a1_q) > $signed(v1_q)) ? a1_q : v1_q;
      `LOOM_ALU_MIN: simple1 = ($signed(a1_q) < $signed(v1_q)) ? a1_q : v1_q;
      `LOOM_ALU_MOV: simple1 = v1_q;
      default:       simple1 = v1_q;
    endcase
  end
  wire [31:0] mb1 = (op_i == `LOOM_ALU_REQUANT && use_imm_i) ? q_mult_i : v1_q;
  wire [31:0] ma1 = a1_q + b1_q;  // (v + bias) mod 2^32 for EPI

  reg signed [63:0] m3_d;
  always @* begin
    m3_d = m3_q;
    if (en_i[2]) m3_d = ma2_q * mb2_q;
  end

  // ---- S3: rounding add
  // The REQUANT mask and half come decoded from loom_alu (QCFG is shared by
  // all lanes); SHR's half is decoded here from the lane's own shift.
  wire [32:0] half_shr_w = {32'd0, 1'b1} << n3_q;  // bit n - 1 of half_shr
  wire [31:0] half_shr   = half_shr_w[32:1];
  wire        unused_half_shr_w = half_shr_w[0];
  wire [63:0] x3    = is_shr ? {{32{a3_q[31]}}, a3_q} : m3_q;
  wire [63:0] half3 = is_shr ? {32'd0, half_shr} : q_half_i;

  reg [64:0] xh4_d;
  always @* begin
    xh4_d = xh4_q;
    if (en_i[3]) xh4_d = {x3[63], x3} + {1'b0, half3};
  end

  // ---- S4: rounding shift, (x + h) >>> s in 65 bits; r keeps the low 64
  // (s picked in S3, so the op's decode does not run on into the shift)
  wire [5:0] s4 = s4_q;
  // The clamp bounds are int8, so r only matters within [-2048, 2047]:
  // outside, r - 1 + zp is beyond every bound on the same side, and the
  // clamp gives the same result for r saturated to 12 bits.  That keeps
  // S5's adds and compares 14 bits wide instead of 64; the saturation is
  // done here, behind the shift.
  function [11:0] sat12(input [63:0] r);
    sat12 = (r[63:11] == {53{r[63]}}) ? r[11:0] : (r[63] ? 12'h800 : 12'h7FF);
  endfunction

  reg [64:0] r5_d;  // bit 64 unused
  wire       tie4 = (q_shift_i != 6'd0) && ((xh4_q[63:0] & q_mask_i) == 64'd0);
  reg [11:0] sat5_d;
  reg        odd5_d;
  always @* begin
    r5_d   = {1'b0, r5_q};
    sat5_d = sat5_q;
    odd5_d = odd5_q;
    if (en_i[4]) begin
      r5_d   = $signed(xh4_q) >>> s4;
      sat5_d = sat12(r5_d[63:0]);
      odd5_d = q_round_even_i && tie4 && sat5_d[0];
    end
  end
  assign unused_r5_msb = r5_d[64];

  // ---- S5: round to even, zero point, clamp (r saturated to 12 bits:
  // above).  r_sat keeps r's parity (r[0]) when r fits, and when it does
  // not, odd_fix cannot matter: r_sat - 1 + zp stays beyond the bound.
  // A function, called only under en_i[5], so that tsim evaluates it only
  // for a micro-op in S6 (a continuous assign would run every cycle).
  // The two compares side by side: below lo gives lo (or hi when lo > hi),
  // above hi gives hi, else y.
  function [31:0] requant_clamp(input [11:0] r_sat, input odd_fix,
                               input [7:0] zp, input [7:0] lo, input [7:0] hi);
    reg [13:0] y, lo14, hi14;
    reg        below, above;
    reg [7:0]  yb;
    begin
      y       = {{2{r_sat[11]}}, r_sat} - {13'd0, odd_fix} + {{6{zp[7]}}, zp};
      lo14    = {{6{lo[7]}}, lo};
      hi14    = {{6{hi[7]}}, hi};
      below   = $signed(y) < $signed(lo14);
      above   = $signed(y) > $signed(hi14);
      yb      = below ? (($signed(lo) > $signed(hi)) ? hi : lo)
                      : (above ? hi : y[7:0]);  // within [lo, hi]: an int8
      requant_clamp = {{24{yb[7]}}, yb};
    end
  endfunction

  reg  [31:0] res5;
  always @* begin
    res5 = res6_q;
    if (en_i[5]) begin
      case (op_i)
        `LOOM_ALU_MUL:     res5 = mul5_q;
        `LOOM_ALU_SHR:     res5 = r5_q[31:0];
        `LOOM_ALU_REQUANT: res5 = requant_clamp(sat5_q, odd5_q, q_zp_i, q_lo_i, q_hi_i);
        `LOOM_ALU_EPI:     res5 = requant_clamp(sat5_q, odd5_q, q_zp_i, q_lo_i, q_hi_i);
        default:           res5 = simple5_q;
      endcase
    end
  end

  always @(posedge clk_i) begin
    a1_q      <= a_i;
    b1_q      <= b_i;
    v1_q      <= v_i;
    ma2_q     <= ma1;
    mb2_q     <= mb1;
    simple2_q <= simple1;
    a2_q      <= a1_q;
    n2_q      <= v1_q[4:0];
    m3_q      <= m3_d;
    simple3_q <= simple2_q;
    a3_q      <= a2_q;
    n3_q      <= n2_q;
    p4_q      <= m3_q[31:0];
    xh4_q     <= xh4_d;
    s4_q      <= is_shr ? {1'b0, n3_q} : q_shift_i;
    simple4_q <= simple3_q;
    r5_q      <= r5_d[63:0];
    sat5_q    <= sat5_d;
    odd5_q    <= odd5_d;
    simple5_q <= simple4_q;
    mul5_q    <= p4_q;
    res6_q    <= res5;
  end

  assign res_o = res6_q;
endmodule
