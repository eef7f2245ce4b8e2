// loom_mem_check_tb - loom_mem_check against exact wide arithmetic, swept
// over the width of the buffer-rows input (RowsW 10, 17 as the modules
// use it, 24).  Each check holds random inputs for four cycles after a
// start pulse; done_o must rise exactly three cycles after the start and
// only then.  The model (docs/isa.md, "LOAD and STORE"):
//   empty = x_size == 0 || y_size == 0
//   last  = dram_offset + (y_size - 1) * x_stride + x_size
//   SEGMENT if seg_size == 0 || last << row_shift > seg_size
//   SRAM    if sram_base + (y_size + y_pad) * (x_size + x_pad) > rows
// Inputs are drawn around the edges: the segment end exactly at, one byte
// below and above the transfer's end, the buffer exactly full, one row
// short and one row over, and the largest field values (the products do
// not wrap).  An empty transfer checks nothing, so its error outputs are
// not compared.
module loom_mem_check_tb (
  input  wire clk_i,
  output wire done_o,
  output wire fail_o
);
  localparam integer NCASE  = 3;
  localparam integer CHECKS = 3000;

  wire [NCASE-1:0] done, fail;
  assign done_o = &done;
  assign fail_o = |fail;

  genvar c;
  generate
    for (c = 0; c < NCASE; c = c + 1) begin : g_case
      localparam integer RowsW = (c == 0) ? 10 : (c == 1) ? 17 : 24;

      reg              rst_n = 1'b0, start = 1'b0;
      reg  [27:0]      dram_offset = 28'd0;
      reg  [15:0]      y_size = 16'd0, x_size = 16'd0, x_stride = 16'd0, sram_base = 16'd0;
      reg  [3:0]       y_pad = 4'd0, x_pad = 4'd0;
      reg  [4:0]       row_shift = 5'd0;
      reg  [RowsW-1:0] rows = {RowsW{1'b0}};
      reg  [63:0]      seg_size = 64'd0;
      wire             chk_done, empty, seg_err, sram_err;
      reg              done_r = 1'b0, fail_r = 1'b0;
      assign done[c] = done_r;
      assign fail[c] = fail_r;

      loom_mem_check #(.RowsW(RowsW)) u_dut (
        .clk_i         (clk_i),
        .rst_ni        (rst_n),
        .start_i       (start),
        .dram_offset_i (dram_offset),
        .y_size_i      (y_size),
        .x_size_i      (x_size),
        .x_stride_i    (x_stride),
        .y_pad_i       (y_pad),
        .x_pad_i       (x_pad),
        .sram_base_i   (sram_base),
        .row_shift_i   (row_shift),
        .rows_i        (rows),
        .seg_size_i    (seg_size),
        .done_o        (chk_done),
        .empty_o       (empty),
        .seg_err_o     (seg_err),
        .sram_err_o    (sram_err)
      );

      // a field value: small, large or the largest
      function automatic [15:0] pick16(input integer lim);
        case ($urandom % 5)
          0:       pick16 = 16'hFFFF - $urandom % 3;
          1:       pick16 = $urandom;
          default: pick16 = $urandom % lim;
        endcase
      endfunction

      reg [127:0] last, send, area, sram_end;
      reg         m_empty, m_seg, m_sram;
      integer     n, k, errors = 0, segs = 0, srams = 0, empties = 0, oks = 0;

      initial begin
        repeat (3) @(negedge clk_i);
        rst_n = 1'b1;
        for (n = 0; n < CHECKS; n = n + 1) begin
          @(negedge clk_i);
          dram_offset = ($urandom % 4 == 0) ? 28'hFFFFFFF - $urandom % 3 : $urandom % 5000;
          y_size      = ($urandom % 10 == 0) ? 16'd0 : pick16(12);
          x_size      = ($urandom % 10 == 0) ? 16'd0 : pick16(40);
          x_stride    = pick16(100);
          y_pad       = $urandom % 16;
          x_pad       = $urandom % 16;
          sram_base   = ($urandom % 4 == 0) ? 16'hFFFF : $urandom % 600;
          row_shift   = $urandom % 13;
          // the model, in 128 bits
          m_empty  = (x_size == 16'd0) || (y_size == 16'd0);
          last     = {100'd0, dram_offset} + ({112'd0, y_size} - 128'd1) * {112'd0, x_stride} +
                     {112'd0, x_size};
          send     = last << row_shift;
          area     = ({112'd0, y_size} + {124'd0, y_pad}) * ({112'd0, x_size} + {124'd0, x_pad});
          sram_end = {112'd0, sram_base} + area;
          // the segment and the buffer around the transfer's edges
          case ($urandom % 6)
            0:       seg_size = 64'd0;
            1:       seg_size = send[63:0];
            2:       seg_size = send[63:0] - 64'd1;
            3:       seg_size = send[63:0] + 64'd1;
            4:       seg_size = {$urandom, $urandom};
            default: seg_size = send[63:0] + ($urandom % 100000);
          endcase
          case ($urandom % 5)
            0:       rows = sram_end[RowsW-1:0];
            1:       rows = sram_end[RowsW-1:0] - 1'b1;
            2:       rows = sram_end[RowsW-1:0] + 1'b1;
            default: for (k = 0; k < RowsW; k = k + 1) rows[k] = $urandom % 2;
          endcase
          m_seg  = (seg_size == 64'd0) || (send > {64'd0, seg_size});
          m_sram = sram_end > {{(128 - RowsW){1'b0}}, rows};
          start = 1'b1;
          for (k = 1; k <= 4; k = k + 1) begin
            @(negedge clk_i);
            start = 1'b0;
            if (chk_done !== (k == 3) || empty !== m_empty ||
                (k == 3 && !m_empty && (seg_err !== m_seg || sram_err !== m_sram))) begin
              if (errors < 5)
                $display("loom_mem_check_tb rows %0d: check %0d cycle %0d done %b empty %b seg %b sram %b, expected %b %b %b",
                         RowsW, n, k, chk_done, empty, seg_err, sram_err, m_empty, m_seg, m_sram);
              errors = errors + 1;
            end
          end
          if (m_empty)     empties = empties + 1;
          else if (m_seg)  segs = segs + 1;
          else if (m_sram) srams = srams + 1;
          else             oks = oks + 1;
        end
        fail_r = (errors != 0) || (empties < CHECKS / 20) || (segs < CHECKS / 10) ||
                 (srams < CHECKS / 20) || (oks < CHECKS / 20);
        $display("loom_mem_check_tb rows width %0d: %0d checks (%0d ok, %0d SEGMENT, %0d SRAM, %0d empty), %0d errors: %s",
                 RowsW, CHECKS, oks, segs, srams, empties, errors, fail_r ? "FAIL" : "PASS");
        done_r = 1'b1;
      end
    end
  endgenerate
endmodule
