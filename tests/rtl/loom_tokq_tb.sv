// loom_tokq_tb - loom_tokq against a counter model, swept over depths:
// pushes are refused exactly when Depth tokens are held, pops when none,
// both in one cycle are both taken, clear empties.
module loom_tokq_tb (
  input  wire clk_i,
  output wire done_o,
  output wire fail_o
);
  localparam integer NCASE = 5;
  wire [NCASE-1:0] done, fail;
  assign done_o = &done;
  assign fail_o = |fail;

  genvar c;
  generate
    for (c = 0; c < NCASE; c = c + 1) begin : g_case
      localparam integer Depth = (c == 0) ? 1 : (c == 1) ? 2 : (c == 2) ? 7 : (c == 3) ? 8 : 16;
      reg  rst_n = 1'b0, clr = 1'b0, push = 1'b0, pop = 1'b0;
      wire full, empty;
      reg  done_r = 1'b0, fail_r = 1'b0;
      assign done[c] = done_r;
      assign fail[c] = fail_r;

      loom_tokq #(.Depth(Depth)) u_dut (
        .clk_i   (clk_i),
        .rst_ni  (rst_n),
        .clr_i   (clr),
        .push_i  (push),
        .pop_i   (pop),
        .full_o  (full),
        .empty_o (empty)
      );

      integer n = 0, cyc, errors = 0, fulls = 0;
      initial begin
        repeat (3) @(negedge clk_i);
        rst_n = 1'b1;
        for (cyc = 0; cyc < 2000; cyc = cyc + 1) begin
          @(negedge clk_i);
          if (full !== (n == Depth) || empty !== (n == 0)) begin
            if (errors < 5) $display("loom_tokq_tb depth %0d: cycle %0d full %b empty %b model %0d",
                                     Depth, cyc, full, empty, n);
            errors = errors + 1;
          end
          if (n == Depth) fulls = fulls + 1;
          clr  = ($urandom % 300) == 0;
          push = ($urandom % 100) < ((cyc / 400) % 2 ? 70 : 30);
          pop  = ($urandom % 100) < ((cyc / 400) % 2 ? 30 : 70);
          #1;
          if (clr) n = 0;
          else n = n + ((push && n < Depth) ? 1 : 0) - ((pop && n > 0) ? 1 : 0);
        end
        fail_r = (errors != 0) || (fulls == 0);
        $display("loom_tokq_tb depth %0d: %0d cycles full, %0d errors: %s", Depth, fulls, errors,
                 fail_r ? "FAIL" : "PASS");
        done_r = 1'b1;
      end
    end
  endgenerate
endmodule
