// loom_pad_walk - the padding rows of a LOAD, as a stream of SRAM rows.
//
// A LOAD fills the H x W block (docs/isa.md) row-major from sram_base; the
// cells outside the y_size x x_size DRAM block get pad_value.  The walker
// visits rows yy = 0..H-1 and emits, for each, the columns that are
// padding: all W of a top or bottom padding row, [0, x_pad_left) and
// [x_pad_left + x_size, W) of a data row.  A data row without x padding
// costs one cycle and emits nothing.
//
// The engine writes these rows into SRAM on the cycles its DRAM data does
// not use the write port (pad_ready_i), so padding is inserted "on the fly"
// without ever stalling the AXI read data.  Order does not matter: padding
// and data cells are disjoint.  Addresses are exact after the SRAM bounds
// check passed, which is the only case the walker runs in.
module loom_pad_walk (
  input  wire        clk_i,
  input  wire        rst_ni,
  input  wire        start_i,
  input  wire        abort_i,
  input  wire [15:0] sram_base_i,
  input  wire [15:0] y_size_i,
  input  wire [15:0] x_size_i,
  input  wire [2:0]  y_pad_top_i,
  input  wire [2:0]  y_pad_bottom_i,
  input  wire [2:0]  x_pad_left_i,
  input  wire [2:0]  x_pad_right_i,
  output wire        pad_valid_o,
  input  wire        pad_ready_i,
  output wire [17:0] pad_addr_o,
  output wire        busy_o
);
  reg        active_q, active_d;
  reg [16:0] yy_q, yy_d;
  reg [16:0] xx_q, xx_d;       // == W: this row has no (more) padding
  reg [17:0] row_base_q, row_base_d;

  // The block's bounds, registered: the fields are held while the LOAD
  // executes and start_i (the DMA's run_start) comes at least two cycles
  // after they are set, so the registers hold them from the start on, and
  // the sums no longer run on into the walker's compares (docs/rtl.md,
  // "Timing").  No cycle changes.
  reg  [16:0] w, w_m1, h, xr_beg, yb_beg;
  reg         any_pad, xr_in;  // xr_in: xr_beg < W (there is right padding)
  wire [16:0] xl = {14'd0, x_pad_left_i};
  wire [16:0] yt = {14'd0, y_pad_top_i};
  always @(posedge clk_i) begin
    w       <= {1'b0, x_size_i} + {14'd0, x_pad_left_i} + {14'd0, x_pad_right_i};
    w_m1    <= {1'b0, x_size_i} + {14'd0, x_pad_left_i} + {14'd0, x_pad_right_i} - 17'd1;
    xr_in   <= (x_pad_right_i != 3'd0);
    h       <= {1'b0, y_size_i} + {14'd0, y_pad_top_i} + {14'd0, y_pad_bottom_i};
    xr_beg  <= {14'd0, x_pad_left_i} + {1'b0, x_size_i};  // first right-pad column
    yb_beg  <= {14'd0, y_pad_top_i} + {1'b0, y_size_i};   // first bottom-pad row
    any_pad <= (y_pad_top_i != 3'd0) || (y_pad_bottom_i != 3'd0) ||
               (x_pad_left_i != 3'd0) || (x_pad_right_i != 3'd0);
  end

  // First padding column of row `r` (W if none).
  function [16:0] first_col(input [16:0] r, input [16:0] t, input [16:0] b,
                            input [16:0] l, input [16:0] rb);
    begin
      if (r < t || r >= b) first_col = 17'd0;
      else if (l != 17'd0)  first_col = 17'd0;
      else                  first_col = rb;  // == W when there is no right padding
    end
  endfunction

  wire        full_row = (yy_q < yt) || (yy_q >= yb_beg);
  wire        has_cell = active_q && (xx_q < w);
  wire [16:0] xx_inc   = xx_q + 17'd1;
  // xx + 1 == xl only below 8 (xl is a 3-bit padding), so the jump over the
  // data columns needs no 17-bit add in front of its compare, and whether
  // the next column is still in the row is known from registers: xr_in
  // after the jump, xx < W - 1 otherwise.
  wire        jump     = !full_row && (xx_q[16:3] == 14'd0) && ({1'b0, xx_q[2:0]} + 4'd1 == {1'b0, xl[2:0]});
  wire [16:0] xx_next  = jump ? xr_beg : xx_inc;
  wire        next_in  = jump ? xr_in : (xx_q < w_m1);
  wire [16:0] yy_inc   = yy_q + 17'd1;

  assign pad_valid_o = has_cell;
  assign pad_addr_o  = row_base_q + {1'b0, xx_q};
  assign busy_o      = active_q;

  always @* begin
    active_d   = active_q;
    yy_d       = yy_q;
    xx_d       = xx_q;
    row_base_d = row_base_q;
    if (active_q) begin
      if (has_cell && !pad_ready_i) begin
        // wait for the write port
      end else if (has_cell && next_in) begin
        xx_d = xx_next;
      end else begin
        // next row
        yy_d       = yy_inc;
        row_base_d = row_base_q + {1'b0, w};
        xx_d       = first_col(yy_inc, yt, yb_beg, xl, xr_beg);
        if (yy_inc == h) active_d = 1'b0;
      end
    end
    if (start_i) begin
      active_d   = any_pad;
      yy_d       = 17'd0;
      row_base_d = {2'd0, sram_base_i};
      xx_d       = first_col(17'd0, yt, yb_beg, xl, xr_beg);
    end
    if (abort_i) active_d = 1'b0;
  end

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      active_q   <= 1'b0;
      yy_q       <= 17'd0;
      xx_q       <= 17'd0;
      row_base_q <= 18'd0;
    end else begin
      active_q   <= active_d;
      yy_q       <= yy_d;
      xx_q       <= xx_d;
      row_base_q <= row_base_d;
    end
  end
endmodule
