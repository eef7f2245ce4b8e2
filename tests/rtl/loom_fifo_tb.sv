// loom_fifo_tb - loom_fifo against a queue model, swept over depths
// (powers of two and not) and widths.  Random pushes (also while full,
// which must be refused), random pops, and clears; checks wready/rvalid
// against the model's occupancy, count_o, and the data order.
module loom_fifo_tb (
  input  wire clk_i,
  output wire done_o,
  output wire fail_o
);
  localparam integer NCASE = 7;
  localparam integer CYCLES = 3000;

  wire [NCASE-1:0] done, fail;
  assign done_o = &done;
  assign fail_o = |fail;

  genvar c;
  generate
    for (c = 0; c < NCASE; c = c + 1) begin : g_case
      localparam integer Depth = (c == 0) ? 1 : (c == 1) ? 2 : (c == 2) ? 3 : (c == 3) ? 5 :
                                 (c == 4) ? 8 : (c == 5) ? 16 : 32;
      localparam integer Width = (c == 0) ? 1 : (c == 6) ? 160 : 8 + c;
      localparam integer CntW  = $clog2(Depth + 1);

      reg              rst_n = 1'b0;
      reg              clr = 1'b0, wvalid = 1'b0, rready = 1'b0;
      reg  [Width-1:0] wdata = {Width{1'b0}};
      wire             wready, rvalid;
      wire [Width-1:0] rdata;
      wire [CntW-1:0]  count;
      reg              done_r = 1'b0, fail_r = 1'b0;
      assign done[c] = done_r;
      assign fail[c] = fail_r;

      loom_fifo #(.Width(Width), .Depth(Depth)) u_dut (
        .clk_i    (clk_i),
        .rst_ni   (rst_n),
        .clr_i    (clr),
        .wvalid_i (wvalid),
        .wready_o (wready),
        .wdata_i  (wdata),
        .rvalid_o (rvalid),
        .rready_i (rready),
        .rdata_o  (rdata),
        .count_o  (count)
      );

      reg [Width-1:0] model [0:63];
      integer head = 0, n = 0, cyc, k, errors = 0, pushes = 0;

      initial begin
        repeat (3) @(negedge clk_i);
        rst_n = 1'b1;
        for (cyc = 0; cyc < CYCLES; cyc = cyc + 1) begin
          @(negedge clk_i);
          // outputs reflect the last edge: compare with the model
          if (wready !== (n < Depth) || rvalid !== (n > 0) || count !== n[CntW-1:0] ||
              (n > 0 && rdata !== model[head])) begin
            if (errors < 5)
              $display("loom_fifo_tb depth %0d: cycle %0d wready %b rvalid %b count %0d (model %0d)",
                       Depth, cyc, wready, rvalid, count, n);
            errors = errors + 1;
          end
          // inputs for the next edge, and the model's view of it
          clr    = ($urandom % 200) == 0;
          wvalid = ($urandom % 100) < ((cyc / 500) % 2 ? 70 : 35);
          rready = ($urandom % 100) < ((cyc / 500) % 2 ? 35 : 70);
          for (k = 0; k < Width; k = k + 1) wdata[k] = $urandom % 2;
          #1;
          if (clr) begin
            n = 0;
          end else begin
            if (rready && n > 0) begin
              head = (head + 1) % 64;
              n = n - 1;
            end
            if (wvalid && wready) begin
              model[(head + n) % 64] = wdata;
              n = n + 1;
              pushes = pushes + 1;
            end
          end
        end
        // a pop and a push in the same cycle while full: the push waits
        fail_r = (errors != 0) || (pushes < CYCLES / 10);
        $display("loom_fifo_tb depth %0d width %0d: %0d pushes, %0d errors: %s", Depth, Width,
                 pushes, errors, fail_r ? "FAIL" : "PASS");
        done_r = 1'b1;
      end
    end
  endgenerate
endmodule
