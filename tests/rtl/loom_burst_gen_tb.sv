// loom_burst_gen_tb - loom_burst_gen against a burst model, swept over bus
// widths (4 to 128 bytes: the 256-beat limit binds below 16, the 4 KiB
// line above).  Random 2-D transfers start on and around 4 KiB lines and
// above 4 GiB, with any byte alignment (sub-word rows: micro-ops), strides
// of zero to several pages, rows of zero bytes, and rows long enough to
// need several bursts.  The model lists the bursts a transfer must issue,
// in order: each row covered by bus-word-aligned INCR bursts of at most
// 256 beats that never cross 4 KiB.  The bench drives random READY and
// enable_i and, on some transfers, an abort at a random cycle (after it
// only the burst presented then may still be accepted).  Checked: every
// accepted burst against the model, VALID and the payload held until
// READY, busy_o until the last burst is accepted, and one burst per cycle
// when READY and enable_i stay high.
module loom_burst_gen_tb (
  input  wire clk_i,
  output wire done_o,
  output wire fail_o
);
  localparam integer NCASE = 5;
  localparam integer XFERS = 1000;

  wire [NCASE-1:0] done, fail;
  assign done_o = &done;
  assign fail_o = |fail;

  genvar c;
  generate
    for (c = 0; c < NCASE; c = c + 1) begin : g_case
      localparam integer BusBytes = (c == 0) ? 4 : (c == 1) ? 8 : (c == 2) ? 16 :
                                    (c == 3) ? 64 : 128;

      reg         rst_n = 1'b0;
      reg         start = 1'b0, abort = 1'b0, enable = 1'b0, ready = 1'b0;
      reg  [63:0] base = 64'd0;
      reg  [31:0] stride = 32'd0, row_bytes = 32'd0;
      reg  [15:0] rows = 16'd0;
      wire        ax_valid, busy;
      wire [63:0] ax_addr;
      wire [7:0]  ax_len;
      reg         done_r = 1'b0, fail_r = 1'b0;
      assign done[c] = done_r;
      assign fail[c] = fail_r;

      loom_burst_gen #(.BusBytes(BusBytes)) u_dut (
        .clk_i       (clk_i),
        .rst_ni      (rst_n),
        .start_i     (start),
        .abort_i     (abort),
        .enable_i    (enable),
        .base_i      (base),
        .stride_i    (stride),
        .row_bytes_i (row_bytes),
        .rows_i      (rows),
        .ax_valid_o  (ax_valid),
        .ax_ready_i  (ready),
        .ax_addr_o   (ax_addr),
        .ax_len_o    (ax_len),
        .busy_o      (busy)
      );

      // the expected bursts of the current transfer, in order
      reg [63:0] exp_addr [0:4095];
      reg [7:0]  exp_len  [0:4095];
      integer    head, tail, zero_rows;

      task automatic model;
        reg [63:0] s, a, e, beats, to4k;
        integer y;
        begin
          head = 0;
          tail = 0;
          zero_rows = 0;
          for (y = 0; y < rows; y = y + 1) begin
            s = base + y * {32'd0, stride};
            if (row_bytes == 32'd0) zero_rows = zero_rows + 1;
            a = s & ~(BusBytes - 64'd1);
            e = (s + {32'd0, row_bytes} + BusBytes - 64'd1) & ~(BusBytes - 64'd1);
            while (a < e) begin
              beats = (e - a) / BusBytes;
              if (beats > 64'd256) beats = 64'd256;
              to4k = (64'd4096 - (a & 64'd4095)) / BusBytes;
              if (beats > to4k) beats = to4k;
              exp_addr[tail % 4096] = a;
              exp_len[tail % 4096]  = beats[7:0] - 8'd1;
              tail = tail + 1;
              a = a + beats * BusBytes;
            end
          end
        end
      endtask

      // a random transfer: starts on and around 4 KiB lines, sometimes
      // above 4 GiB, any byte alignment, rows of 0 to ~3 pages
      task automatic pick;
        reg [63:0] page;
        begin
          page = 64'd1 + ($urandom % 64) + (($urandom % 4 == 0) ? 64'h1_0000_0000 >> 12 : 64'd0);
          base = (page << 12) - ($urandom % 700);
          if ($urandom % 3 != 0) base = base & ~(BusBytes - 64'd1);
          case ($urandom % 6)
            0:       row_bytes = 32'd0;
            1:       row_bytes = $urandom % 16;
            2:       row_bytes = BusBytes * (1 + $urandom % 8);
            3:       row_bytes = BusBytes * 256 - BusBytes * ($urandom % 3) + ($urandom % 2) * 4;
            4:       row_bytes = 4096 * (1 + $urandom % 2) + ($urandom % 5) * BusBytes;
            default: row_bytes = $urandom % 12000;
          endcase
          case ($urandom % 4)
            0:       stride = 32'd0;
            1:       stride = row_bytes;
            2:       stride = row_bytes + BusBytes * ($urandom % 5);
            default: stride = $urandom % 20000;
          endcase
          rows = ($urandom % 8 == 0) ? 16'd0 : 16'd1 + $urandom % 6;
        end
      endtask

      integer x, cyc, errors = 0, bursts = 0, aborts = 0, stalls = 0;
      integer fast, busy_cyc;
      reg     held, aborted;
      reg [63:0] held_addr;
      reg [7:0]  held_len;

      initial begin
        repeat (3) @(negedge clk_i);
        rst_n = 1'b1;
        for (x = 0; x < XFERS; x = x + 1) begin
          @(negedge clk_i);
          pick();
          model();
          fast = (x % 3 == 0);
          aborted = 1'b0;
          held = 1'b0;
          start = 1'b1;
          @(negedge clk_i);
          start = 1'b0;
          busy_cyc = 0;
          for (cyc = 0; cyc < 20000 && (busy || ax_valid); cyc = cyc + 1) begin
            // outputs after the last edge: a presented burst stays put
            if (held && (!ax_valid || ax_addr !== held_addr || ax_len !== held_len)) begin
              if (errors < 5) $display("loom_burst_gen_tb bus %0d: burst dropped or changed", BusBytes);
              errors = errors + 1;
            end
            ready  = fast || ($urandom % 100) < 60;
            enable = fast || ($urandom % 100) < 75;
            abort  = !fast && !aborted && (x % 4 == 1) && ($urandom % 20 == 0);
            #1;
            if (ax_valid && ready) begin
              if (head >= tail || ax_addr !== exp_addr[head % 4096] || ax_len !== exp_len[head % 4096]) begin
                if (errors < 5)
                  $display("loom_burst_gen_tb bus %0d: transfer %0d burst %0d addr %h len %0d, expected %h len %0d",
                           BusBytes, x, head, ax_addr, ax_len, exp_addr[head % 4096], exp_len[head % 4096]);
                errors = errors + 1;
              end
              head = head + 1;
              bursts = bursts + 1;
            end
            if (abort) begin
              aborted = 1'b1;
              aborts = aborts + 1;
              tail = head + ((ax_valid && !ready) ? 1 : 0);
            end
            held = ax_valid && !ready;
            held_addr = ax_addr;
            held_len = ax_len;
            if (ax_valid && !ready) stalls = stalls + 1;
            busy_cyc = busy_cyc + 1;
            @(negedge clk_i);
            abort = 1'b0;
          end
          if (head != tail || busy || ax_valid) begin
            if (errors < 5)
              $display("loom_burst_gen_tb bus %0d: transfer %0d ended after %0d of %0d bursts (busy %b)",
                       BusBytes, x, head, tail, busy);
            errors = errors + 1;
          end
          // full throughput: one burst per cycle, a cycle per empty row
          if (fast && busy_cyc > tail + zero_rows + 2) begin
            if (errors < 5)
              $display("loom_burst_gen_tb bus %0d: transfer %0d took %0d cycles for %0d bursts",
                       BusBytes, x, busy_cyc, tail);
            errors = errors + 1;
          end
          ready = 1'b0;
          enable = 1'b0;
        end
        fail_r = (errors != 0) || (bursts < XFERS) || (aborts < XFERS / 20) || (stalls < XFERS);
        $display("loom_burst_gen_tb bus %0d bytes: %0d transfers, %0d bursts, %0d aborts, %0d errors: %s",
                 BusBytes, XFERS, bursts, aborts, errors, fail_r ? "FAIL" : "PASS");
        done_r = 1'b1;
      end
    end
  endgenerate
endmodule
