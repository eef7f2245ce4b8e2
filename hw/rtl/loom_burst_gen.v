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
// The next burst is computed combinationally from the current row (or from
// the next row when the current one is exhausted) and loaded into the
// output register when it is free, so back-to-back single-beat rows still
// issue one burst per cycle.  The output register holds VALID and the
// payload until READY, as AXI requires.  enable_i gates new bursts (store:
// room in its W length queue); abort_i forgets the rest of the transfer
// but leaves a presented burst in place until it is accepted.
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

  generate
    if ((1 << Shift) != BusBytes || BusBytes < 4 || BusBytes > 128) begin : g_bad_params
      loom_burst_gen_illegal_parameters u_illegal ();
    end
  endgenerate

  reg [63:0] row_addr_q, row_addr_d;  // start byte of the next row
  reg [16:0] rows_left_q, rows_left_d;
  reg [63:0] cur_q, cur_d;            // next beat address of the current row
  reg [31:0] rem_q, rem_d;            // beats left in the current row
  reg        ax_valid_q, ax_valid_d;
  reg [63:0] ax_addr_q, ax_addr_d;
  reg [7:0]  ax_len_q, ax_len_d;

  // Where the next burst starts and how many beats its row has left.
  wire        in_row   = (rem_q != 32'd0);
  wire        new_row  = !in_row && (rows_left_q != 17'd0);
  wire [63:0] row_word = {row_addr_q[63:Shift], {Shift{1'b0}}};
  wire [32:0] row_span = {1'b0, row_bytes_i} + {{(33 - Shift){1'b0}}, row_addr_q[Shift-1:0]}
                         + {{(33 - Shift){1'b0}}, {Shift{1'b1}}};
  wire [31:0] row_beats = {{(Shift - 1){1'b0}}, row_span[32:Shift]};
  wire [63:0] src_addr  = in_row ? cur_q : row_word;
  wire [31:0] src_rem   = in_row ? rem_q : row_beats;
  wire [12:0] to_4k_b   = 13'h1000 - {1'b0, src_addr[11:0]};
  wire [12:0] to_4k     = to_4k_b >> Shift;  // beats up to the 4 KiB line, >= 1
  reg  [8:0]  len;
  always @* begin
    len = 9'd256;
    if (src_rem < {23'd0, len}) len = src_rem[8:0];
    if ({4'd0, len} > to_4k) len = to_4k[8:0];
  end

  wire slot_free = !ax_valid_q || ax_ready_i;
  wire issue     = (in_row || new_row) && slot_free && enable_i && !abort_i && (src_rem != 32'd0);
  // A row of zero bytes has no beats: skip it (never happens for the
  // instructions, which are empty as a whole when x_size is zero).
  wire skip_row  = new_row && (row_beats == 32'd0) && !abort_i;

  assign ax_valid_o = ax_valid_q;
  assign ax_addr_o  = ax_addr_q;
  assign ax_len_o   = ax_len_q;
  assign busy_o     = ax_valid_q || in_row || (rows_left_q != 17'd0);

  wire [Shift-1:0] unused_row_span = row_span[Shift-1:0];

  always @* begin
    row_addr_d  = row_addr_q;
    rows_left_d = rows_left_q;
    cur_d       = cur_q;
    rem_d       = rem_q;
    ax_valid_d  = ax_valid_q;
    ax_addr_d   = ax_addr_q;
    ax_len_d    = ax_len_q;
    if (ax_valid_q && ax_ready_i) ax_valid_d = 1'b0;
    if (issue || skip_row) begin
      if (new_row) begin
        row_addr_d  = row_addr_q + {32'd0, stride_i};
        rows_left_d = rows_left_q - 17'd1;
      end
    end
    if (issue) begin
      ax_valid_d = 1'b1;
      ax_addr_d  = src_addr;
      ax_len_d   = len[7:0] - 8'd1;
      cur_d      = src_addr + ({55'd0, len} << Shift);
      rem_d      = src_rem - {23'd0, len};
    end
    if (start_i) begin
      row_addr_d  = base_i;
      rows_left_d = {1'b0, rows_i};
      rem_d       = 32'd0;
    end
    if (abort_i) begin
      rows_left_d = 17'd0;
      rem_d       = 32'd0;
    end
  end

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      row_addr_q  <= 64'd0;
      rows_left_q <= 17'd0;
      cur_q       <= 64'd0;
      rem_q       <= 32'd0;
      ax_valid_q  <= 1'b0;
      ax_addr_q   <= 64'd0;
      ax_len_q    <= 8'd0;
    end else begin
      row_addr_q  <= row_addr_d;
      rows_left_q <= rows_left_d;
      cur_q       <= cur_d;
      rem_q       <= rem_d;
      ax_valid_q  <= ax_valid_d;
      ax_addr_q   <= ax_addr_d;
      ax_len_q    <= ax_len_d;
    end
  end
endmodule
