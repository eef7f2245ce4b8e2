// loom_rd_rows_tb - loom_rd_rows against a row model, swept over bus and
// row widths (64/64, 64/128, 64/512, 128/256, 128/2048, 32/96) with every
// beats-per-row value nb_i up to RowBits / BusBits (a module's narrower
// buffers use fewer beats than its row register holds).  Random transfers
// (x_size, y_size, skip, first address near the 18-bit top) receive random
// beats with random gaps.  The model: DRAM row (y, x) is the next nb_i
// beats, beat 0 lowest, and must appear in the top nb_i * BusBits bits of
// row_data_o with row_valid_o exactly one cycle after its last beat, at
// first_addr + y * (x_size + skip) + x; done_o rises once every row has
// been presented, and not before.  A restart in the middle of a transfer
// (start_i again) must begin the new one from scratch.
module loom_rd_rows_tb (
  input  wire clk_i,
  output wire done_o,
  output wire fail_o
);
  localparam integer NCASE = 6;
  localparam integer XFERS = 300;

  wire [NCASE-1:0] done, fail;
  assign done_o = &done;
  assign fail_o = |fail;

  genvar c;
  generate
    for (c = 0; c < NCASE; c = c + 1) begin : g_case
      localparam integer BusBits = (c == 3 || c == 4) ? 128 : (c == 5) ? 32 : 64;
      localparam integer RowBits = (c == 0) ? 64 : (c == 1) ? 128 : (c == 2) ? 512 :
                                   (c == 3) ? 256 : (c == 4) ? 2048 : 96;
      localparam integer MaxNb   = RowBits / BusBits;
      localparam integer NbW     = $clog2(MaxNb + 1) + 1;

      reg                rst_n = 1'b0, start = 1'b0, beat_valid = 1'b0;
      reg  [NbW-1:0]     nb = {NbW{1'b0}};
      reg  [17:0]        first_addr = 18'd0;
      reg  [15:0]        x_size = 16'd0, y_size = 16'd0;
      reg  [3:0]         skip = 4'd0;
      reg  [BusBits-1:0] beat_data = {BusBits{1'b0}};
      wire               row_valid, rows_done;
      wire [17:0]        row_addr;
      wire [RowBits-1:0] row_data;
      reg                done_r = 1'b0, fail_r = 1'b0;
      assign done[c] = done_r;
      assign fail[c] = fail_r;

      loom_rd_rows #(.BusBits(BusBits), .RowBits(RowBits), .NbW(NbW)) u_dut (
        .clk_i        (clk_i),
        .rst_ni       (rst_n),
        .start_i      (start),
        .nb_i         (nb),
        .first_addr_i (first_addr),
        .x_size_i     (x_size),
        .y_size_i     (y_size),
        .skip_i       (skip),
        .beat_valid_i (beat_valid),
        .beat_data_i  (beat_data),
        .row_valid_o  (row_valid),
        .row_addr_o   (row_addr),
        .row_data_o   (row_data),
        .done_o       (rows_done)
      );

      reg [RowBits-1:0] exp_row;    // the row being assembled (top-aligned)
      reg [RowBits-1:0] want_row;
      reg [17:0]        want_addr;
      reg               want;       // a row is due after this edge
      reg [RowBits+BusBits-1:0] shifted;
      integer x, k, b, nrows, got, sent, cyc, abandon, errors = 0, rows_seen = 0, restarts = 0;
      integer ry, rx;

      initial begin
        repeat (3) @(negedge clk_i);
        rst_n = 1'b1;
        for (x = 0; x < XFERS; x = x + 1) begin
          @(negedge clk_i);
          nb         = 1 + $urandom % MaxNb;
          x_size     = 1 + $urandom % 7;
          y_size     = 1 + $urandom % 5;
          skip       = $urandom % 16;
          first_addr = ($urandom % 4 == 0) ? 18'h3FFFF - $urandom % 40 : $urandom % 5000;
          nrows      = x_size * y_size;
          abandon    = (x % 10 == 7) ? 1 + $urandom % (nrows * nb) : -1;
          start      = 1'b1;
          want       = 1'b0;
          got        = 0;
          sent       = 0;
          ry         = 0;
          rx         = 0;
          @(negedge clk_i);
          start = 1'b0;
          for (cyc = 0; cyc < 5000 && (got < nrows || want); cyc = cyc + 1) begin
            // outputs after the last edge
            if (row_valid !== want || (want && (row_addr !== want_addr ||
                row_data[RowBits-1 -: BusBits] !== want_row[RowBits-1 -: BusBits] ||
                row_data[RowBits - BusBits * nb +: BusBits] !== want_row[RowBits - BusBits * nb +: BusBits]))) begin
              if (errors < 5)
                $display("loom_rd_rows_tb %0d/%0d: transfer %0d row %0d valid %b addr %0d, expected %b %0d",
                         BusBits, RowBits, x, got, row_valid, row_addr, want, want_addr);
              errors = errors + 1;
            end
            if (want) begin
              // every beat of the row, not only the first and last
              for (b = 0; b < nb; b = b + 1)
                if (row_data[RowBits - BusBits * nb + BusBits * b +: BusBits] !==
                    want_row[RowBits - BusBits * nb + BusBits * b +: BusBits]) begin
                  if (errors < 5)
                    $display("loom_rd_rows_tb %0d/%0d: transfer %0d row %0d beat %0d wrong",
                             BusBits, RowBits, x, got, b);
                  errors = errors + 1;
                end
              got = got + 1;
              rows_seen = rows_seen + 1;
            end
            if (rows_done !== (got == nrows && !want && sent == nrows * nb)) begin
              if (errors < 5)
                $display("loom_rd_rows_tb %0d/%0d: transfer %0d done %b after %0d of %0d rows",
                         BusBits, RowBits, x, rows_done, got, nrows);
              errors = errors + 1;
            end
            if (sent == abandon) begin
              restarts = restarts + 1;
              got = nrows;  // abandoned: the next transfer restarts the cell
              want = 1'b0;
            end else begin
              // the next beat, and the row it completes
              beat_valid = (sent < nrows * nb) && ($urandom % 100 < 70);
              for (k = 0; k < BusBits; k = k + 1) beat_data[k] = $urandom % 2;
              want = 1'b0;
              if (beat_valid) begin
                shifted = {beat_data, exp_row};
                exp_row = shifted[RowBits+BusBits-1:BusBits];
                sent = sent + 1;
                if (sent % nb == 0) begin
                  want      = 1'b1;
                  want_row  = exp_row;
                  want_addr = first_addr + ry * (x_size + skip) + rx;
                  rx = rx + 1;
                  if (rx == x_size) begin
                    rx = 0;
                    ry = ry + 1;
                  end
                end
              end
            end
            @(negedge clk_i);
            beat_valid = 1'b0;
          end
          if (got != nrows) begin
            if (errors < 5)
              $display("loom_rd_rows_tb %0d/%0d: transfer %0d stalled", BusBits, RowBits, x);
            errors = errors + 1;
          end
        end
        fail_r = (errors != 0) || (rows_seen < XFERS * 5) || (restarts < XFERS / 20);
        $display("loom_rd_rows_tb bus %0d row %0d: %0d transfers, %0d rows, %0d restarts, %0d errors: %s",
                 BusBits, RowBits, XFERS, rows_seen, restarts, errors, fail_r ? "FAIL" : "PASS");
        done_r = 1'b1;
      end
    end
  endgenerate
endmodule
