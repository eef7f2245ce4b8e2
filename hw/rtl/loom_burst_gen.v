// loom_burst_gen - AXI address-channel generator of a 2-D transfer.
//
// A transfer is `rows` rows of row_bytes_i bytes; row y starts at byte
// base_i + y * stride_i.  Each row is covered by the bus-word-aligned INCR
// bursts that hold it: the first starts at the row's start rounded down to
// the bus width (sub-word rows: micro-ops), the last ends at its end rounded
// up.  A burst has at most 256 beats and never crosses a 4 KiB boundary.
// Rows are never merged, so every burst belongs to one row and the
// consumer can follow the beats without a side channel.
//
// The next burst comes either from the current row (cur, rem: the next
// beat's address and the beats left) or, when that is exhausted, from the
// next row (row_addr), and is loaded into the output register when it is
// free, so back-to-back single-beat rows still issue one burst per cycle.
// The output register holds VALID and the payload until READY, as AXI
// requires.  enable_i gates new bursts (store: room in its W length
// queue); abort_i forgets the rest of the transfer but leaves a presented
// burst in place until it is accepted.  base_i and rows_i are read at
// start_i, stride_i and row_bytes_i throughout the transfer.
//
// Timing (docs/rtl.md, "Timing"): everything a burst needs besides the
// two small compares that pick its length is kept ready in registers, one
// set per source: the beats of the next row (row_beats_q) and, for both
// sources, the beats up to the next 4 KiB line (*_to4k_q) and that capped
// at 256 (*_lim_q), and whether the current row has beats left (in_row_q).
// They are updated with the address they describe: a burst from a source
// of t beats to the line moves it to t - len (or a whole page when it ends
// on the line), and a new row's values come from its low address bits.
// The address adds only cross 12 bits (a burst stays within its 4 KiB
// page), with the page number incremented beside them.  Same bursts, same
// cycles as the single-stage form before it.
module loom_burst_gen #(
  parameter integer BusBytes = 8
) (
  input  wire        clk_i,
  input  wire        rst_ni,
  input  wire        start_i,
  input  wire        abort_i,
  input  wire        enable_i,
  input  wire [63:0] base_i,
  input  wire [31:0] stride_i,
  input  wire [31:0] row_bytes_i,
  input  wire [15:0] rows_i,
  output wire        ax_valid_o,
  input  wire        ax_ready_i,
  output wire [63:0] ax_addr_o,
  output wire [7:0]  ax_len_o,
  output wire        busy_o
);
  localparam integer Shift = $clog2(BusBytes);
  localparam [12:0]  Page  = 13'h1000 >> Shift;  // beats in 4 KiB

  generate
    if ((1 << Shift) != BusBytes || BusBytes < 4 || BusBytes > 128) begin : g_bad_params
      loom_burst_gen_illegal_parameters u_illegal ();
    end
  endgenerate

  reg [63:0] row_addr_q, row_addr_d;  // start byte of the next row
  reg [16:0] rows_left_q, rows_left_d;
  reg        rows_nz_q, rows_nz_d;    // rows_left_q != 0
  reg [31:0] row_beats_q, row_beats_d;  // beats of the row at row_addr_q
  reg        row_nz_q, row_nz_d;      // row_beats_q != 0
  reg [12:0] row_to4k_q, row_to4k_d;  // its beats up to the 4 KiB line
  reg [8:0]  row_lim_q, row_lim_d;    // min(256, row_to4k_q)
  reg [63:0] cur_q, cur_d;            // next beat address of the current row
  reg [31:0] rem_q, rem_d;            // beats left in the current row (if in_row_q)
  reg        in_row_q, in_row_d;      // rem_q != 0
  reg [12:0] cur_to4k_q, cur_to4k_d;  // beats from cur_q to the 4 KiB line
  reg [8:0]  cur_lim_q, cur_lim_d;    // min(256, cur_to4k_q)
  reg        ax_valid_q, ax_valid_d;
  reg [63:0] ax_addr_q, ax_addr_d;
  reg [7:0]  ax_len_q, ax_len_d;

  // ---- beats to the 4 KiB line from a bus-word address a (its bits
  // [11:Shift]): (4096 - a) / BusBytes, 1 .. Page
  function [12:0] to4k_of(input [11-Shift:0] a_word);
    to4k_of = Page - {{(Shift + 1){1'b0}}, a_word};
  endfunction

  function [8:0] lim_of(input [12:0] to4k);
    lim_of = (to4k > 13'd256) ? 9'd256 : to4k[8:0];
  endfunction

  // ---- the next burst: from the current row, or else from the next one
  wire        new_row  = !in_row_q && rows_nz_q;
  wire [51:0] src_page = in_row_q ? cur_q[63:12] : row_addr_q[63:12];
  wire [11:0] src_lo   = in_row_q ? cur_q[11:0] : {row_addr_q[11:Shift], {Shift{1'b0}}};
  wire [31:0] src_rem  = in_row_q ? rem_q : row_beats_q;
  wire [8:0]  src_lim  = in_row_q ? cur_lim_q : row_lim_q;
  // The burst is min(src_rem, src_lim) beats: the row ends in it (short)
  // or it runs to the limit, 256 beats or the 4 KiB line.
  wire        cur_short = (rem_q[31:9] == 23'd0) && (rem_q[8:0] <= cur_lim_q);
  wire        row_short = (row_beats_q[31:9] == 23'd0) && (row_beats_q[8:0] <= row_lim_q);
  wire        short     = in_row_q ? cur_short : row_short;
  wire [7:0]  len_m1    = short ? src_rem[7:0] - 8'd1 : src_lim[7:0] - 8'd1;

  wire slot_free = !ax_valid_q || ax_ready_i;
  wire issue     = (in_row_q || (new_row && row_nz_q)) && slot_free && enable_i && !abort_i;
  // A row of zero bytes has no beats: skip it (never happens for the
  // instructions, which are empty as a whole when x_size is zero).
  wire skip_row  = new_row && !row_nz_q && !abort_i;

  // After a burst to the limit (only then does the row go on): on the 4 KiB
  // line when the line was within 256 beats, else 256 beats further.
  // Computed for both sources from their registers, then picked.
  function [63:0] after_lim(input [63:0] a, input [12:0] to4k);
    after_lim = (to4k <= 13'd256) ? {a[63:12] + 52'd1, 12'd0}
                                  : {a[63:12], a[11:0] + (12'd256 << Shift)};  // no wrap here
  endfunction
  function [12:0] to4k_after(input [12:0] to4k);
    to4k_after = (to4k <= 13'd256) ? Page : to4k - 13'd256;
  endfunction
  function [8:0] lim_after(input [12:0] to4k);
    lim_after = (to4k <= 13'd256) ? lim_of(Page) : lim_of(to4k - 13'd256);
  endfunction
  wire [63:0] row_word  = {row_addr_q[63:Shift], {Shift{1'b0}}};
  wire [63:0] cur_next  = in_row_q ? after_lim(cur_q, cur_to4k_q) : after_lim(row_word, row_to4k_q);
  wire [12:0] to4k_next = in_row_q ? to4k_after(cur_to4k_q) : to4k_after(row_to4k_q);
  wire [8:0]  lim_next  = in_row_q ? lim_after(cur_to4k_q) : lim_after(row_to4k_q);

  // The next row's start and the values that describe it: its beats (its
  // bytes from its start rounded down to the bus word, rounded up) and its
  // beats to the line.  row_bytes_i is fixed during a transfer, so only the
  // low address bits vary.
  // Both candidates (the transfer's first row, the row after row_addr_q)
  // are worked out in full and start_i picks one at the end, so the start
  // (the DMA's checks) does not run on into the adds and compares
  // (docs/rtl.md, "Timing").
  // (the span's low Shift bits are dropped: beats = ceil(span / BusBytes))
  // (row_bytes is an argument, not read from the port inside: a continuous
  // assignment is sensitive to a function's arguments only, so a 4-state
  // simulator such as Icarus kept the span of the reset value.)
  function [32:0] span_of(input [31:0] row_bytes, input [Shift-1:0] lo);
    span_of = {1'b0, row_bytes} + {{(33 - Shift){1'b0}}, lo} + {{(33 - Shift){1'b0}}, {Shift{1'b1}}};
  endfunction
  wire [32:0] base_span = span_of(row_bytes_i, base_i[Shift-1:0]);
  wire [63:0]      row_next   = row_addr_q + {32'd0, stride_i};
  wire [Shift-1:0] next_lo    = row_addr_q[Shift-1:0] + stride_i[Shift-1:0];
  wire [12:0]      base_to4k  = to4k_of(base_i[11:Shift]);
  wire [12:0]      next_to4k  = to4k_of(row_next[11:Shift]);
  wire [63:0]      row_new    = start_i ? base_i : row_next;
  wire [Shift-1:0] row_new_lo = start_i ? base_i[Shift-1:0] : next_lo;
  wire [32:0]      next_span  = span_of(row_bytes_i, next_lo);
  wire [32:0]      row_span   = start_i ? base_span : next_span;
  wire [31:0]      row_beats_new = {{(Shift - 1){1'b0}}, row_span[32:Shift]};
  wire [Shift-1:0] unused_row_span = row_span[Shift-1:0];
  wire [12:0]      row_to4k_new  = start_i ? base_to4k : next_to4k;
  wire [8:0]       row_lim_new   = start_i ? lim_of(base_to4k) : lim_of(next_to4k);

  assign ax_valid_o = ax_valid_q;
  assign ax_addr_o  = ax_addr_q;
  assign ax_len_o   = ax_len_q;
  assign busy_o     = ax_valid_q || in_row_q || rows_nz_q;

  always @* begin
    row_addr_d  = row_addr_q;
    rows_left_d = rows_left_q;
    rows_nz_d   = rows_nz_q;
    row_beats_d = row_beats_q;
    row_nz_d    = row_nz_q;
    row_to4k_d  = row_to4k_q;
    row_lim_d   = row_lim_q;
    cur_d       = cur_q;
    rem_d       = rem_q;
    in_row_d    = in_row_q;
    cur_to4k_d  = cur_to4k_q;
    cur_lim_d   = cur_lim_q;
    ax_valid_d  = ax_valid_q;
    ax_addr_d   = ax_addr_q;
    ax_len_d    = ax_len_q;
    if (ax_valid_q && ax_ready_i) ax_valid_d = 1'b0;
    if ((issue || skip_row) && new_row) begin
      rows_left_d = rows_left_q - 17'd1;
      rows_nz_d   = (rows_left_q[16:1] != 16'd0);
    end
    if (((issue || skip_row) && new_row) || start_i) begin
      row_addr_d  = row_new;
      row_beats_d = row_beats_new;
      row_nz_d    = (row_bytes_i != 32'd0) || (row_new_lo != {Shift{1'b0}});
      row_to4k_d  = row_to4k_new;
      row_lim_d   = row_lim_new;
    end
    if (issue) begin
      ax_valid_d = 1'b1;
      ax_addr_d  = {src_page, src_lo};
      ax_len_d   = len_m1;
      in_row_d   = !short;
      // The rest only matters when the row goes on (!short), after
      // src_lim beats: the values below assume that.
      cur_d      = cur_next;
      rem_d      = src_rem - {23'd0, src_lim};
      cur_to4k_d = to4k_next;
      cur_lim_d  = lim_next;
    end
    if (start_i) begin
      rows_left_d = {1'b0, rows_i};
      rows_nz_d   = (rows_i != 16'd0);
      in_row_d    = 1'b0;
    end
    if (abort_i) begin
      rows_left_d = 17'd0;
      rows_nz_d   = 1'b0;
      in_row_d    = 1'b0;
    end
  end

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      row_addr_q  <= 64'd0;
      rows_left_q <= 17'd0;
      rows_nz_q   <= 1'b0;
      row_beats_q <= 32'd0;
      row_nz_q    <= 1'b0;
      row_to4k_q  <= 13'd0;
      row_lim_q   <= 9'd0;
      cur_q       <= 64'd0;
      rem_q       <= 32'd0;
      in_row_q    <= 1'b0;
      cur_to4k_q  <= 13'd0;
      cur_lim_q   <= 9'd0;
      ax_valid_q  <= 1'b0;
      ax_addr_q   <= 64'd0;
      ax_len_q    <= 8'd0;
    end else begin
      row_addr_q  <= row_addr_d;
      rows_left_q <= rows_left_d;
      rows_nz_q   <= rows_nz_d;
      row_beats_q <= row_beats_d;
      row_nz_q    <= row_nz_d;
      row_to4k_q  <= row_to4k_d;
      row_lim_q   <= row_lim_d;
      cur_q       <= cur_d;
      rem_q       <= rem_d;
      in_row_q    <= in_row_d;
      cur_to4k_q  <= cur_to4k_d;
      cur_lim_q   <= cur_lim_d;
      ax_valid_q  <= ax_valid_d;
      ax_addr_q   <= ax_addr_d;
      ax_len_q    <= ax_len_d;
    end
  end
endmodule
