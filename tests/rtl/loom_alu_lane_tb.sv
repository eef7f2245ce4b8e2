// loom_alu_lane_tb - one ALU lane against the integer semantics of
// docs/isa.md ("ALU"), computed here in wide arithmetic.  Blocks of 64
// operations share an op and QCFG setting (as one ALU instruction does),
// with the pipeline drained in between; operands mix random words, edge
// values (0, +-1, INT_MIN, INT_MAX) and small values that make REQUANT's
// rounding ties frequent.  Odd blocks leave random idle cycles (en_i low,
// operands still changing) between operations, as the ALU does between
// micro-ops; only the valid results are checked, which proves the gated
// stages keep each operation's values.
`include "loom_isa.vh"

module loom_alu_lane_tb (
  input  wire clk_i,
  output wire done_o,
  output wire fail_o
);
  reg  [2:0]  op = 3'd0;
  reg         use_imm = 1'b0, q_re = 1'b0;
  reg  [31:0] q_mult = 32'd0, a = 32'd0, v = 32'd0;
  reg  [5:0]  q_shift = 6'd0;
  reg  [7:0]  q_zp = 8'd0, q_lo = 8'd0, q_hi = 8'd0;
  reg  [63:0] q_mask = 64'd0, q_half = 64'd0;
  reg  [5:0]  en = 6'd0;  // stage k + 1 holds an operation
  reg         vld;
  wire [31:0] res;
  reg         done_r = 1'b0, fail_r = 1'b0;
  assign done_o = done_r;
  assign fail_o = fail_r;

  loom_alu_lane u_dut (
    .clk_i          (clk_i),
    .en_i           (en),
    .op_i           (op),
    .use_imm_i      (use_imm),
    .q_mult_i       (q_mult),
    .q_shift_i      (q_shift),
    .q_mask_i       (q_mask),
    .q_half_i       (q_half),
    .q_zp_i         (q_zp),
    .q_lo_i         (q_lo),
    .q_hi_i         (q_hi),
    .q_round_even_i (q_re),
    .a_i            (a),
    .v_i            (v),
    .res_o          (res)
  );

  function [31:0] ref_op(input [31:0] fa, input [31:0] fv);
    reg signed [127:0] p, r, y, half;
    reg [127:0] mask;
    integer n, s;
    begin
      case (op)
        `LOOM_ALU_ADD: ref_op = fa + fv;
        `LOOM_ALU_MAX: ref_op = ($signed(fa) > $signed(fv)) ? fa : fv;
        `LOOM_ALU_MIN: ref_op = ($signed(fa) < $signed(fv)) ? fa : fv;
        `LOOM_ALU_MUL: ref_op = fa * fv;
        `LOOM_ALU_MOV: ref_op = fv;
        `LOOM_ALU_SHR: begin
          n = fv[4:0];
          p = $signed(fa);
          if (n == 0) r = p;
          else r = (p + (128'sd1 <<< (n - 1))) >>> n;
          ref_op = r[31:0];
        end
        default: begin  // REQUANT
          p = $signed(fa) * $signed(use_imm ? q_mult : fv);
          s = q_shift;
          if (s == 0) begin
            r = p;
          end else begin
            half = 128'sd1 <<< (s - 1);
            mask = (128'd1 << s) - 128'd1;
            r = (p + half) >>> s;
            if (q_re && ((p & mask) == half) && r[0]) r = r - 1;
          end
          y = r + $signed(q_zp);
          if (y < $signed(q_lo)) y = $signed(q_lo);
          if (y > $signed(q_hi)) y = $signed(q_hi);
          ref_op = y[31:0];
        end
      endcase
    end
  endfunction

  function [31:0] operand(input integer kind);
    case (kind % 8)
      0: operand = 32'd0;
      1: operand = 32'd1;
      2: operand = 32'hFFFF_FFFF;
      3: operand = 32'h8000_0000;
      4: operand = 32'h7FFF_FFFF;
      5: operand = $urandom % 64 - 32;
      6: operand = $urandom % 4096 - 2048;
      default: operand = $urandom;
    endcase
  endfunction

  reg [31:0] exp_q [0:7];
  reg        vld_q [0:7];
  integer blk, i, errors = 0, checked = 0, b;
  initial begin
    for (blk = 0; blk < 600; blk = blk + 1) begin
      @(negedge clk_i);
      op      = blk % 7;
      use_imm = ($urandom % 2) == 1;
      q_mult  = (blk % 3 == 0) ? ($urandom % 64 - 32) : $urandom;
      q_shift = (blk % 4 == 0) ? $urandom % 8 : $urandom % 64;
      q_zp    = $urandom;
      q_lo    = ($urandom % 4 == 0) ? $urandom : 8'h80;
      q_hi    = ($urandom % 4 == 0) ? $urandom : 8'h7F;
      q_re    = ($urandom % 2) == 1;
      for (b = 0; b < 64; b = b + 1) begin
        q_mask[b] = b < q_shift;
        q_half[b] = (b + 1) == q_shift;
      end
      for (i = 0; i < 64 + 6; i = i + 1) begin
        if (i >= 6 && vld_q[(i - 6) % 8]) begin
          if (res !== exp_q[(i - 6) % 8]) begin
            if (errors < 8) $display("loom_alu_lane_tb: op %0d imm %0d shift %0d re %0d: got %h want %h",
                                     op, use_imm, q_shift, q_re, res, exp_q[(i - 6) % 8]);
            errors = errors + 1;
          end
          checked = checked + 1;
        end
        vld = i < 64 && (blk % 2 == 0 || $urandom % 3 != 0);
        vld_q[i % 8] = vld;
        en = {en[4:0], vld};
        if (i < 64) begin
          a = operand($urandom);
          v = operand($urandom);
          if (blk % 4 == 0) begin
            a = $urandom % 64 - 32;
            v = $urandom % 64 - 32;
          end
          exp_q[i % 8] = ref_op(a, v);
        end
        @(negedge clk_i);
      end
    end
    fail_r = errors != 0;
    $display("loom_alu_lane_tb: %0d results checked, %0d errors: %s", checked, errors,
             fail_r ? "FAIL" : "PASS");
    done_r = 1'b1;
  end
endmodule
