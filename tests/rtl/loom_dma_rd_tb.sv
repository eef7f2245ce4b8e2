// loom_dma_rd_tb - the DMA-read engine behind a randomizing AXI read
// memory, against a model of the LOAD it executes, swept over bus and row
// widths (64/128, 64/512, 128/1024, 128/128) with every beats-per-row value
// the row register allows (rows are powers of two bytes).
//
// Each transfer picks a segment of an 8-entry table, a random 2-D block
// with padding, and a buffer size; the memory answers with random ARREADY,
// random gaps in the read data and, on some transfers, a SLVERR beat.  The
// model (docs/isa.md) predicts SEGMENT and SRAM from exact arithmetic and
// the contents of the H x W block: DRAM row (y, x) of nb beats at SRAM row
// sram_base + (y + y_pad_top) * W + x_pad_left + x (bytes of the memory
// function, row byte 0 lowest in the top nb beats of the row), padding
// elsewhere.  Checked for every transfer:
//   - the error code (none, SEGMENT, SRAM, BUS), and no request at all
//     after a failed check;
//   - every burst: at most 256 beats, no 4 KiB crossing, inside the
//     segment; RREADY high in the rows sink;
//   - every write: inside the block, data rows with the right bytes,
//     padding only at padding cells, no cell twice; a completed transfer
//     wrote every cell once, counted nb beats per row (beat_o) and
//     pulsed done_o once, with every burst answered;
//   - after an abort (after an error, or at a random cycle as a soft
//     reset does): the engine goes idle only when no burst is in flight
//     and none is presented, and issues no new one.
// Every fourth transfer uses the external sink instead (4-byte rows of any
// alignment, as micro-ops): the bench holds beats at random (RREADY must
// follow), counts them, and reports the end of its rows.
`include "loom_isa.vh"

module loom_dma_rd_tb (
  input  wire clk_i,
  output wire done_o,
  output wire fail_o
);
  localparam integer NCASE = 4;
  localparam integer XFERS = 160;

  wire [NCASE-1:0] done, fail;
  assign done_o = &done;
  assign fail_o = |fail;

  // the memory: one byte per address
  function automatic [7:0] mem_byte(input [63:0] a);
    reg [31:0] h;
    begin
      h = a[31:0] * 32'h9E3779B1 + {24'd0, a[39:32]};
      mem_byte = h[31:24] ^ h[7:0];
    end
  endfunction

  genvar c;
  generate
    for (c = 0; c < NCASE; c = c + 1) begin : g_case
      localparam integer BusBits  = (c < 2) ? 64 : 128;
      localparam integer RowBits  = (c == 0) ? 128 : (c == 1) ? 512 : (c == 2) ? 1024 : 128;
      localparam integer BusBytes = BusBits / 8;
      localparam integer MaxNb    = RowBits / BusBits;
      localparam integer NbW      = $clog2(MaxNb + 1) + 1;
      localparam integer Cells    = 2048;

      reg                 rst_n = 1'b0, start = 1'b0, abort = 1'b0;
      reg  [2:0]          segment = 3'd0;
      reg  [27:0]         dram_off = 28'd0;
      reg  [15:0]         sram_base = 16'd0, y_size = 16'd0, x_size = 16'd0, x_stride = 16'd0;
      reg  [2:0]          ypt = 3'd0, ypb = 3'd0, xpl = 3'd0, xpr = 3'd0;
      reg  [4:0]          row_shift = 5'd0;
      reg  [16:0]         rows = 17'd0;
      reg  [NbW-1:0]      nb = {NbW{1'b0}};
      reg                 pad_en = 1'b0, ext = 1'b0, hold = 1'b0, ext_done = 1'b0;
      reg  [8*64-1:0]     seg_base = {8 * 64{1'b0}}, seg_size = {8 * 64{1'b0}};
      wire                ar_valid, r_ready;
      reg                 ar_ready = 1'b0;
      wire [63:0]         ar_addr;
      wire [7:0]          ar_len;
      reg                 r_valid = 1'b0, r_last = 1'b0;
      reg  [BusBits-1:0]  r_data = {BusBits{1'b0}};
      reg  [1:0]          r_resp = 2'd0;
      wire                wr_valid, wr_row, run_start, running, beat, x_done, idle, err_valid;
      wire                mem_stall;
      wire [17:0]         wr_addr;
      wire [RowBits-1:0]  row_data;
      wire [3:0]          err_code;
      reg                 done_r = 1'b0, fail_r = 1'b0;
      assign done[c] = done_r;
      assign fail[c] = fail_r;

      loom_dma_rd #(.BusBits(BusBits), .RowBits(RowBits), .NbW(NbW)) u_dut (
        .clk_i          (clk_i),
        .rst_ni         (rst_n),
        .abort_i        (abort),
        .start_i        (start),
        .segment_i      (segment),
        .dram_offset_i  (dram_off),
        .sram_base_i    (sram_base),
        .y_size_i       (y_size),
        .x_size_i       (x_size),
        .x_stride_i     (x_stride),
        .y_pad_top_i    (ypt),
        .y_pad_bottom_i (ypb),
        .x_pad_left_i   (xpl),
        .x_pad_right_i  (xpr),
        .row_shift_i    (row_shift),
        .rows_i         (rows),
        .nb_i           (nb),
        .pad_en_i       (pad_en),
        .ext_i          (ext),
        .seg_base_i     (seg_base),
        .seg_size_i     (seg_size),
        .ar_valid_o     (ar_valid),
        .ar_ready_i     (ar_ready),
        .ar_addr_o      (ar_addr),
        .ar_len_o       (ar_len),
        .r_valid_i      (r_valid),
        .r_data_i       (r_data),
        .r_resp_i       (r_resp),
        .r_last_i       (r_last),
        .r_ready_o      (r_ready),
        .hold_i         (hold),
        .ext_done_i     (ext_done),
        .wr_valid_o     (wr_valid),
        .wr_row_o       (wr_row),
        .wr_addr_o      (wr_addr),
        .row_data_o     (row_data),
        .run_start_o    (run_start),
        .running_o      (running),
        .beat_o         (beat),
        .done_o         (x_done),
        .idle_o         (idle),
        .err_valid_o    (err_valid),
        .err_code_o     (err_code),
        .mem_stall_o    (mem_stall)
      );

      // ---- the AXI read memory: accepted bursts, answered in order
      reg [63:0] q_addr [0:255];
      reg [8:0]  q_beats [0:255];
      integer    q_head, q_tail, q_beat;
      reg        err_beat_armed;

      // ---- the model of the transfer
      reg [63:0]  sbase, ssize, last, send;
      reg [127:0] area;
      integer     wcells, hcells, nrows_exp, beats_exp, ext_beats;
      integer     exp_code;   // 0 none, else LOOM_ERR_*
      reg [1:0]   written [0:Cells-1];

      function automatic integer cell_kind(input integer a);  // 0 outside, 1 pad, 2 data
        integer rel, yy, xx;
        begin
          rel = a - sram_base;
          if (a < sram_base || rel >= wcells * hcells) begin
            cell_kind = 0;
          end else begin
            yy = rel / wcells;
            xx = rel % wcells;
            cell_kind = (yy >= ypt && yy < ypt + y_size && xx >= xpl && xx < xpl + x_size) ? 2 : 1;
          end
        end
      endfunction

      // a random transfer, its segment table and the expected outcome
      task automatic pick(input integer n);
        integer s, rb;
        begin
          ext    = (n % 4 == 3);
          nb     = ext ? 1 : 1 << ($urandom % ($clog2(MaxNb) + 1));  // rows: powers of two
          rb     = ext ? 4 : nb * BusBytes;
          row_shift = $clog2(rb);
          pad_en = !ext && ($urandom % 4 != 0);
          x_size = 1 + $urandom % 5;
          y_size = 1 + $urandom % 4;
          if ($urandom % 25 == 0) x_size = 16'd0;
          x_stride = x_size + $urandom % 4;
          if ($urandom % 8 == 0) x_stride = 16'd0;
          if (pad_en) begin
            ypt = $urandom % 3;
            ypb = $urandom % 3;
            xpl = $urandom % 3;
            xpr = $urandom % 3;
          end else begin
            ypt = 3'd0;
            ypb = 3'd0;
            xpl = 3'd0;
            xpr = 3'd0;
          end
          segment  = $urandom % 8;
          dram_off = $urandom % 300;
          for (s = 0; s < 8; s = s + 1) begin
            // 64-byte aligned bases, some just below a 4 KiB line
            seg_base[64*s +: 64] = ((64'd1 + ($urandom % 100)) << 12) - 64'd64 * ($urandom % 4);
            seg_size[64*s +: 64] = 64'd64 * (1 + $urandom % 400);
          end
          sbase = seg_base[64*segment +: 64];
          wcells = x_size + xpl + xpr;
          hcells = y_size + ypt + ypb;
          last  = {36'd0, dram_off} + ({48'd0, y_size} - 64'd1) * {48'd0, x_stride} + {48'd0, x_size};
          send  = last << row_shift;
          case ($urandom % 8)
            0:       ssize = 64'd0;
            1:       ssize = send - rb;
            2:       ssize = send;
            default: ssize = send + 64'd64 * ($urandom % 50);
          endcase
          if (ext) ssize = (ssize + BusBytes - 1) & ~(BusBytes - 64'd1);  // whole words
          seg_size[64*segment +: 64] = ssize;
          sram_base = $urandom % 600;
          area = wcells * hcells;
          rows = ($urandom % 6 == 0) ? sram_base + area[16:0] - $urandom % 2 : Cells;
          nrows_exp = x_size * y_size;
          beats_exp = nrows_exp * nb;
          exp_code = 0;
          if (x_size != 16'd0 && y_size != 16'd0) begin
            if (ssize == 64'd0 || send > ssize)                  exp_code = `LOOM_ERR_SEGMENT;
            else if ({111'd0, sram_base} + area > {111'd0, rows}) exp_code = `LOOM_ERR_SRAM;
          end
          err_beat_armed = (exp_code == 0) && (n % 5 == 2);
        end
      endtask

      integer n, k, cyc, errors = 0, dones, beats, writes, aborted_at, missing;
      integer n_ok = 0, n_seg = 0, n_sram = 0, n_bus = 0, n_abort = 0, n_ext = 0;
      integer got_code, ars, rel, y, x, b, rr;
      reg [63:0] a, row_a;
      reg        abort_soft, fin, ar_allowed, empty;

      initial begin
        repeat (3) @(negedge clk_i);
        rst_n = 1'b1;
        for (n = 0; n < XFERS; n = n + 1) begin
          @(negedge clk_i);
          pick(n);
          for (k = 0; k < Cells; k = k + 1) written[k] = 2'd0;
          q_head = 0;
          q_tail = 0;
          q_beat = 0;
          dones = 0;
          beats = 0;
          writes = 0;
          ext_beats = 0;
          ext_done = 1'b0;
          got_code = 0;
          ars = 0;
          aborted_at = -1;
          abort_soft = (n % 7 == 4);
          fin = 1'b0;
          ar_allowed = 1'b0;
          empty = (x_size == 16'd0) || (y_size == 16'd0);
          start = 1'b1;
          @(negedge clk_i);
          start = 1'b0;
          for (cyc = 0; cyc < 20000 && !fin; cyc = cyc + 1) begin
            // ---- outputs after the last edge
            if (x_done) dones = dones + 1;
            if (err_valid && got_code == 0) got_code = err_code;
            if (idle && (aborted_at >= 0 || dones > 0 || got_code != 0) &&
                (ar_valid || q_head != q_tail)) begin
              if (errors < 5) $display("loom_dma_rd_tb %0d/%0d: transfer %0d idle with a burst in flight",
                                       BusBits, RowBits, n);
              errors = errors + 1;
            end
            if (idle && (dones > 0 || aborted_at >= 0)) fin = 1'b1;
            if (mem_stall !== (running && !r_valid)) begin
              if (errors < 5) $display("loom_dma_rd_tb: mem_stall wrong");
              errors = errors + 1;
            end
            if (!ext && !r_ready) begin
              if (errors < 5) $display("loom_dma_rd_tb: RREADY low in the rows sink");
              errors = errors + 1;
            end
            // ---- writes of this cycle
            if (wr_valid) begin
              writes = writes + 1;
              rel = cell_kind(wr_addr);
              if (rel == 0 || wr_addr >= Cells || (rel == 2) !== wr_row) begin
                if (errors < 5)
                  $display("loom_dma_rd_tb %0d/%0d: transfer %0d write at %0d (%s) outside its cells",
                           BusBits, RowBits, n, wr_addr, wr_row ? "row" : "pad");
                errors = errors + 1;
              end else begin
                if (written[wr_addr] != 2'd0) begin
                  if (errors < 5) $display("loom_dma_rd_tb: transfer %0d cell %0d written twice", n, wr_addr);
                  errors = errors + 1;
                end
                written[wr_addr] = 2'd1;
                if (wr_row) begin
                  y = (wr_addr - sram_base) / wcells - ypt;
                  x = (wr_addr - sram_base) % wcells - xpl;
                  row_a = sbase + (({36'd0, dram_off} + y * x_stride + x) << row_shift);
                  for (b = 0; b < nb * BusBytes; b = b + 1)
                    if (row_data[RowBits - nb * BusBits + 8 * b +: 8] !== mem_byte(row_a + b)) begin
                      if (errors < 5)
                        $display("loom_dma_rd_tb %0d/%0d: transfer %0d row (%0d, %0d) byte %0d wrong",
                                 BusBits, RowBits, n, y, x, b);
                      errors = errors + 1;
                      b = nb * BusBytes;
                    end
                end
              end
            end
            // ---- inputs for the next edge
            abort = (got_code != 0 && aborted_at < 0 && $urandom % 4 == 0) ||
                    (abort_soft && aborted_at < 0 && running && $urandom % 8 == 0);
            if (abort || fin) aborted_at = (aborted_at < 0 && abort) ? cyc : aborted_at;
            if (fin) abort = 1'b0;
            ar_ready = ($urandom % 100) < 60;
            hold = ext && ($urandom % 100) < 40;
            if (!r_valid || r_ready) begin
              // present the next beat of the oldest burst, or nothing
              r_valid = (q_head != q_tail) && ($urandom % 100) < 70;
              if (r_valid) begin
                a = q_addr[q_head % 256] + q_beat * BusBytes;
                for (b = 0; b < BusBytes; b = b + 1) r_data[8*b +: 8] = mem_byte(a + b);
                r_last = (q_beat + 1 == q_beats[q_head % 256]);
                r_resp = 2'd0;
                if (err_beat_armed && $urandom % 10 == 0) begin
                  r_resp = 2'd2;
                  err_beat_armed = 1'b0;
                end
              end
            end
            #1;
            // ---- handshakes at the next edge
            if (fin) begin
              // the transfer is over: nothing more moves
              ar_ready = 1'b0;
              r_valid = 1'b0;
            end
            if (ar_valid && ar_ready) begin
              ars = ars + 1;
              if (ar_len > 8'd255 || (ar_addr[11:0] + (ar_len + 1) * BusBytes) > 4096 ||
                  ar_addr < (sbase & ~(BusBytes - 64'd1)) ||
                  ar_addr + (ar_len + 1) * BusBytes > ((sbase + ssize + BusBytes - 1) & ~(BusBytes - 64'd1)) ||
                  (aborted_at >= 0 && aborted_at < cyc && !ar_allowed)) begin
                if (errors < 5)
                  $display("loom_dma_rd_tb %0d/%0d: transfer %0d burst %h len %0d illegal",
                           BusBits, RowBits, n, ar_addr, ar_len);
                errors = errors + 1;
              end
              if (aborted_at >= 0 && aborted_at < cyc) ar_allowed = 1'b0;
              q_addr[q_tail % 256]  = ar_addr;
              q_beats[q_tail % 256] = ar_len + 9'd1;
              q_tail = q_tail + 1;
            end
            if (abort && ar_valid && !ar_ready) ar_allowed = 1'b1;  // presented: may still go
            if (beat) beats = beats + 1;
            if (r_valid && r_ready) begin
              if (ext && running && r_resp == 2'd0) ext_beats = ext_beats + 1;
              q_beat = q_beat + 1;
              if (r_last) begin
                q_beat = 0;
                q_head = q_head + 1;
              end
            end
            if (!fin) @(negedge clk_i);
            // the external sink: done once it has its rows' beats
            if (ext) begin
              rr = 0;
              for (y = 0; y < y_size; y = y + 1) begin
                row_a = sbase + (({36'd0, dram_off} + y * x_stride) << 2);
                rr = rr + ((row_a % BusBytes) + 4 * x_size + BusBytes - 1) / BusBytes;
              end
              ext_done = (ext_beats == rr);
            end
            abort = 1'b0;
          end
          r_valid = 1'b0;
          hold = 1'b0;
          // ---- the outcome
          if (got_code == 0 && aborted_at < 0 && exp_code == 0 && err_beat_armed == 1'b0 &&
              (n % 5 == 2)) begin
            // the SLVERR beat went out but no error came back
            if (errors < 5) $display("loom_dma_rd_tb: transfer %0d: BUS not raised", n);
            errors = errors + 1;
          end
          if (exp_code != 0) begin
            if (got_code != exp_code || ars != 0 || writes != 0) begin
              if (errors < 5)
                $display("loom_dma_rd_tb %0d/%0d: transfer %0d error %0d (%0d bursts), expected %0d",
                         BusBits, RowBits, n, got_code, ars, exp_code);
              errors = errors + 1;
            end
            if (exp_code == `LOOM_ERR_SEGMENT) n_seg = n_seg + 1;
            else               n_sram = n_sram + 1;
          end else if (got_code != 0) begin
            if (got_code != `LOOM_ERR_BUS || (n % 5 != 2)) begin
              if (errors < 5) $display("loom_dma_rd_tb: transfer %0d unexpected error %0d", n, got_code);
              errors = errors + 1;
            end
            n_bus = n_bus + 1;
          end else if (aborted_at >= 0) begin
            n_abort = n_abort + 1;
          end else begin
            // completed: every cell once, every beat counted, one done
            missing = 0;
            if (!ext && !empty)
              for (k = sram_base; k < sram_base + wcells * hcells; k = k + 1)
                if (written[k] == 2'd0 && (pad_en || cell_kind(k) == 2)) missing = missing + 1;
            if (dones != 1 || missing != 0 || q_head != q_tail || (empty && (writes != 0 || ars != 0)) ||
                (!ext && !empty && (beats != beats_exp || writes != (pad_en ? wcells * hcells : nrows_exp)))) begin
              if (errors < 5)
                $display("loom_dma_rd_tb %0d/%0d: transfer %0d done %0d, %0d cells missing, %0d/%0d beats, %0d writes",
                         BusBits, RowBits, n, dones, missing, beats, beats_exp, writes);
              errors = errors + 1;
            end
            if (ext) n_ext = n_ext + 1;
            else     n_ok = n_ok + 1;
          end
          if (!idle) begin
            if (errors < 5) $display("loom_dma_rd_tb %0d/%0d: transfer %0d never went idle", BusBits, RowBits, n);
            errors = errors + 1;
            abort = 1'b1;
            repeat (300) @(negedge clk_i);
            abort = 1'b0;
          end
        end
        fail_r = (errors != 0) || n_ok < XFERS / 5 || n_seg < 3 || n_sram < 3 || n_bus < 3 ||
                 n_abort < 3 || n_ext < XFERS / 10;
        $display("loom_dma_rd_tb bus %0d row %0d: %0d loads, %0d external, %0d SEGMENT, %0d SRAM, %0d BUS, %0d aborted, %0d errors: %s",
                 BusBits, RowBits, n_ok, n_ext, n_seg, n_sram, n_bus, n_abort, errors,
                 fail_r ? "FAIL" : "PASS");
        done_r = 1'b1;
      end
    end
  endgenerate
endmodule
