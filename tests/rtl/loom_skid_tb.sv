// loom_skid_tb - loom_skid, swept over widths: random VALID (held with its
// payload until accepted, as AXI requires of the source) and random READY.
// Checks that every item arrives once and in order, that the output keeps
// VALID and the payload stable until accepted, and full throughput when
// READY stays high.
module loom_skid_tb (
  input  wire clk_i,
  output wire done_o,
  output wire fail_o
);
  localparam integer NCASE = 3;
  wire [NCASE-1:0] done, fail;
  assign done_o = &done;
  assign fail_o = |fail;

  genvar c;
  generate
    for (c = 0; c < NCASE; c = c + 1) begin : g_case
      localparam integer Width = (c == 0) ? 1 : (c == 1) ? 16 : 76;
      reg              rst_n = 1'b0, in_valid = 1'b0, out_ready = 1'b0;
      reg  [Width-1:0] in_data = {Width{1'b0}};
      wire             in_ready, out_valid;
      wire [Width-1:0] out_data;
      reg              done_r = 1'b0, fail_r = 1'b0;
      assign done[c] = done_r;
      assign fail[c] = fail_r;

      loom_skid #(.Width(Width)) u_dut (
        .clk_i       (clk_i),
        .rst_ni      (rst_n),
        .in_valid_i  (in_valid),
        .in_ready_o  (in_ready),
        .in_data_i   (in_data),
        .out_valid_o (out_valid),
        .out_ready_i (out_ready),
        .out_data_o  (out_data)
      );

      // Items are numbered; the payload is a hash of the number.
      function [Width-1:0] payload(input integer i);
        integer b;
        begin
          for (b = 0; b < Width; b = b + 1) payload[b] = ((i * 2654435761) >> (b % 29)) & 1;
          payload[0] = i[0];
        end
      endfunction

      integer sent = 0, got = 0, cyc, errors = 0, streak = 0, best = 0;
      reg              prev_valid = 1'b0, prev_ready = 1'b0, in_fire = 1'b0;
      reg  [Width-1:0] prev_data = {Width{1'b0}};
      initial begin
        repeat (3) @(negedge clk_i);
        rst_n = 1'b1;
        for (cyc = 0; cyc < 3000; cyc = cyc + 1) begin
          @(negedge clk_i);
          if (prev_valid && !prev_ready && (!out_valid || out_data !== prev_data)) begin
            if (errors < 5) $display("loom_skid_tb width %0d: output changed before READY", Width);
            errors = errors + 1;
          end
          // source: holds an item until it is accepted (at the edge just
          // passed), then maybe a new one
          if (in_fire) begin
            sent = sent + 1;
            in_valid = 1'b0;
          end
          if (!in_valid && (cyc >= 2500 || ($urandom % 100) < 70)) begin
            in_valid = 1'b1;
            in_data  = payload(sent);
          end
          out_ready = (cyc >= 2500) ? 1'b1 : (($urandom % 100) < 60);
          #1;
          if (out_valid && out_ready) begin
            if (out_data !== payload(got)) begin
              if (errors < 5) $display("loom_skid_tb width %0d: item %0d wrong", Width, got);
              errors = errors + 1;
            end
            got = got + 1;
            streak = streak + 1;
            if (streak > best) best = streak;
          end else begin
            streak = 0;
          end
          prev_valid = out_valid;
          prev_ready = out_ready;
          prev_data  = out_data;
          in_fire = in_valid && in_ready;
        end
        fail_r = (errors != 0) || (got < 1000) || (sent - got > 2) || (best < 200);
        $display("loom_skid_tb width %0d: %0d items, longest streak %0d, %0d errors: %s", Width, got,
                 best, errors, fail_r ? "FAIL" : "PASS");
        done_r = 1'b1;
      end
    end
  endgenerate
endmodule
