// loom_mul2_tb - the packed dual int8 multiplier against plain products:
// every combination of 12 edge values per operand, then random operands,
// one set per cycle (latency 3).
module loom_mul2_tb (
  input  wire clk_i,
  output wire done_o,
  output wire fail_o
);
  reg  [7:0]  x = 8'd0, w0 = 8'd0, w1 = 8'd0;
  wire [15:0] p0, p1;
  reg         done_r = 1'b0, fail_r = 1'b0;
  assign done_o = done_r;
  assign fail_o = fail_r;

  loom_mul2 u_dut (
    .clk_i (clk_i),
    .x_i   (x),
    .w0_i  (w0),
    .w1_i  (w1),
    .p0_o  (p0),
    .p1_o  (p1)
  );

  function [7:0] edge_val(input integer i);
    case (i)
      0: edge_val = 8'h80;  1: edge_val = 8'h81;  2: edge_val = 8'hC0;  3: edge_val = 8'hFE;
      4: edge_val = 8'hFF;  5: edge_val = 8'h00;  6: edge_val = 8'h01;  7: edge_val = 8'h02;
      8: edge_val = 8'h3F;  9: edge_val = 8'h40;  10: edge_val = 8'h7E; default: edge_val = 8'h7F;
    endcase
  endfunction

  reg [23:0] hist [0:3];  // inputs of the last cycles
  integer n, k, errors = 0, checked = 0;
  reg signed [15:0] e0, e1;
  initial begin
    for (n = 0; n < 1728 + 60000 + 3; n = n + 1) begin
      @(negedge clk_i);
      if (n >= 3) begin
        e0 = $signed(hist[(n - 3) % 4][23:16]) * $signed(hist[(n - 3) % 4][15:8]);
        e1 = $signed(hist[(n - 3) % 4][23:16]) * $signed(hist[(n - 3) % 4][7:0]);
        if (p0 !== e0 || p1 !== e1) begin
          if (errors < 5) $display("loom_mul2_tb: %0d * (%0d, %0d) gave (%0d, %0d)",
                                   $signed(hist[(n - 3) % 4][23:16]), $signed(hist[(n - 3) % 4][15:8]),
                                   $signed(hist[(n - 3) % 4][7:0]), $signed(p0), $signed(p1));
          errors = errors + 1;
        end
        checked = checked + 1;
      end
      if (n < 1728) begin
        k  = n;
        x  = edge_val(k % 12);
        w0 = edge_val((k / 12) % 12);
        w1 = edge_val(k / 144);
      end else begin
        x  = $urandom;
        w0 = $urandom;
        w1 = $urandom;
      end
      hist[n % 4] = {x, w0, w1};
    end
    fail_r = errors != 0;
    $display("loom_mul2_tb: %0d products checked, %0d errors: %s", checked, errors,
             fail_r ? "FAIL" : "PASS");
    done_r = 1'b1;
  end
endmodule
