// loom_dma_rd - the DMA-read engine: one LOAD from DRAM into an SRAM
// buffer, shared by loom_load (INP, WGT) and loom_compute (UOP, ACC).
//
// loom_dma_xfer sequences the instruction (checks, bursts on this reader's
// AXI ID, end, error, drain).  In StRun the beats go to one of two sinks:
//   rows      (ext_i low) loom_rd_rows assembles each DRAM row of nb_i
//             beats and presents it, from registers, with its SRAM row;
//             loom_pad_walk (pad_en_i) presents the padding rows in the
//             cycles the data rows leave the write port free.  RREADY is
//             always high, so the shared read data channel never stalls
//             on this engine.  The owner turns the write stream (wr_*)
//             into its SRAM ports: wr_row_o says whether row_data_o or
//             the padding value is written.
//   external  (ext_i high) the owner takes the beats itself (micro-ops,
//             several per beat): it holds a beat with hold_i (RREADY low)
//             and reports the end of its rows with ext_done_i.
// The engine counts the bursts in flight (accepted AR minus RLAST seen);
// the transfer is done when the sink is done and every burst has returned,
// and after an abort it drains until none is left.  A SLVERR/DECERR beat
// raises BUS.  beat_o marks each accepted data beat (the byte counters).
`include "loom_isa.vh"

module loom_dma_rd #(
  parameter integer BusBits = 64,
  parameter integer RowBits = 64,
  parameter integer NbW     = 4,
  parameter [31:0]   ShiftSet = 32'hFFFF_FFFF, // row_shift_i values that occur (loom_dma_xfer)
  localparam integer NumSeg = `LOOM_NUM_SEGMENTS
) (
  input  wire                 clk_i,
  input  wire                 rst_ni,
  input  wire                 abort_i,
  input  wire                 start_i,
  // the transfer (MEM fields of the instruction, held while it executes)
  input  wire [2:0]           segment_i,
  input  wire [27:0]          dram_offset_i,
  input  wire [15:0]          sram_base_i,
  input  wire [15:0]          y_size_i,
  input  wire [15:0]          x_size_i,
  input  wire [15:0]          x_stride_i,
  input  wire [2:0]           y_pad_top_i,
  input  wire [2:0]           y_pad_bottom_i,
  input  wire [2:0]           x_pad_left_i,
  input  wire [2:0]           x_pad_right_i,
  input  wire [4:0]           row_shift_i,  // log2 of the DRAM row size in bytes
  input  wire [16:0]          rows_i,       // rows of the SRAM buffer
  input  wire [NbW-1:0]       nb_i,         // beats per DRAM row (rows sink)
  input  wire                 pad_en_i,     // write the padding rows
  input  wire                 ext_i,        // the owner takes the beats itself
  // segment table
  input  wire [NumSeg*64-1:0] seg_base_i,
  input  wire [NumSeg*64-1:0] seg_size_i,
  // AXI read
  output wire                 ar_valid_o,
  input  wire                 ar_ready_i,
  output wire [63:0]          ar_addr_o,
  output wire [7:0]           ar_len_o,
  input  wire                 r_valid_i,
  input  wire [BusBits-1:0]   r_data_i,
  input  wire [1:0]           r_resp_i,
  input  wire                 r_last_i,
  output wire                 r_ready_o,
  // external sink
  input  wire                 hold_i,
  input  wire                 ext_done_i,
  // the write stream of the rows sink
  output wire                 wr_valid_o,
  output wire                 wr_row_o,     // 1: row_data_o, 0: a padding row
  output wire [17:0]          wr_addr_o,
  output wire [RowBits-1:0]   row_data_o,
  // status
  output wire                 run_start_o,
  output wire                 running_o,
  output wire                 beat_o,
  output wire                 done_o,
  output wire                 idle_o,
  output wire                 err_valid_o,
  output wire [3:0]           err_code_o,
  output wire                 mem_stall_o
);
  // ---- sequencing: checks, bursts, end, error, drain
  reg  [7:0] outst_q, outst_d;  // bursts in flight
  wire       run_start, running, stop, ar_busy, run_done;
  wire       ar_fire    = ar_valid_o && ar_ready_i;
  wire       rlast_seen = r_valid_i && r_ready_o && r_last_i;
  wire       bus_err    = running && r_valid_i && r_resp_i[1];
  wire       unused_resp0 = r_resp_i[0];

  always @* outst_d = outst_q + (ar_fire ? 8'd1 : 8'd0) - (rlast_seen ? 8'd1 : 8'd0);

  loom_dma_xfer #(.BusBytes(BusBits / 8), .ShiftSet(ShiftSet)) u_xfer (
    .clk_i         (clk_i),
    .rst_ni        (rst_ni),
    .abort_i       (abort_i),
    .start_i       (start_i),
    .segment_i     (segment_i),
    .dram_offset_i (dram_offset_i),
    .sram_base_i   (sram_base_i),
    .y_size_i      (y_size_i),
    .x_size_i      (x_size_i),
    .x_stride_i    (x_stride_i),
    .y_pad_i       ({1'b0, y_pad_top_i} + {1'b0, y_pad_bottom_i}),
    .x_pad_i       ({1'b0, x_pad_left_i} + {1'b0, x_pad_right_i}),
    .row_shift_i   (row_shift_i),
    .rows_i        (rows_i),
    .seg_base_i    (seg_base_i),
    .seg_size_i    (seg_size_i),
    .enable_i      (1'b1),
    .ax_valid_o    (ar_valid_o),
    .ax_ready_i    (ar_ready_i),
    .ax_addr_o     (ar_addr_o),
    .ax_len_o      (ar_len_o),
    .run_done_i    (run_done),
    .bus_err_i     (bus_err),
    .quiet_i       (!ar_busy && outst_q == 8'd0),
    .quiet_next_i  (!ar_busy && outst_d == 8'd0),
    .run_start_o   (run_start),
    .running_o     (running),
    .stop_o        (stop),
    .ax_busy_o     (ar_busy),
    .done_o        (done_o),
    .idle_o        (idle_o),
    .err_valid_o   (err_valid_o),
    .err_code_o    (err_code_o)
  );

  // ---- rows sink: DRAM rows and padding rows
  wire        beat     = running && r_valid_i && !r_resp_i[1];
  wire [16:0] w_row    = {1'b0, x_size_i} + {14'd0, x_pad_left_i} + {14'd0, x_pad_right_i};
  wire [17:0] top_rows = (y_pad_top_i[0] ? {1'b0, w_row} : 18'd0) +
                         (y_pad_top_i[1] ? {w_row, 1'b0} : 18'd0) +
                         (y_pad_top_i[2] ? {w_row[15:0], 2'b0} : 18'd0);
  wire        row_valid, rows_done;
  wire [17:0] row_addr;

  loom_rd_rows #(.BusBits(BusBits), .RowBits(RowBits), .NbW(NbW)) u_rows (
    .clk_i        (clk_i),
    .rst_ni       (rst_ni),
    .start_i      (run_start && !ext_i),
    .nb_i         (nb_i),
    .first_addr_i ({2'd0, sram_base_i} + top_rows + {15'd0, x_pad_left_i}),
    .x_size_i     (x_size_i),
    .y_size_i     (y_size_i),
    .skip_i       ({1'b0, x_pad_left_i} + {1'b0, x_pad_right_i}),
    .beat_valid_i (beat && !ext_i),
    .beat_data_i  (r_data_i),
    .row_valid_o  (row_valid),
    .row_addr_o   (row_addr),
    .row_data_o   (row_data_o),
    .done_o       (rows_done)
  );

  wire        pad_valid, pad_busy;
  wire [17:0] pad_addr;
  loom_pad_walk u_pad (
    .clk_i          (clk_i),
    .rst_ni         (rst_ni),
    .start_i        (run_start && pad_en_i && !ext_i),
    .abort_i        (abort_i || stop),
    .sram_base_i    (sram_base_i),
    .y_size_i       (y_size_i),
    .x_size_i       (x_size_i),
    .y_pad_top_i    (y_pad_top_i),
    .y_pad_bottom_i (y_pad_bottom_i),
    .x_pad_left_i   (x_pad_left_i),
    .x_pad_right_i  (x_pad_right_i),
    .pad_valid_o    (pad_valid),
    .pad_ready_i    (!row_valid),
    .pad_addr_o     (pad_addr),
    .busy_o         (pad_busy)
  );

  // Data rows take the write port first; padding fills the gaps.
  assign wr_valid_o = running && (row_valid || pad_valid);
  assign wr_row_o   = row_valid;
  assign wr_addr_o  = row_valid ? row_addr : pad_addr;

  // ---- completion
  wire sink_done = ext_i ? ext_done_i : (rows_done && !pad_busy);
  assign run_done    = sink_done && !row_valid && !ar_busy && (outst_q == 8'd0);
  assign r_ready_o   = !hold_i;
  assign run_start_o = run_start;
  assign running_o   = running;
  assign beat_o      = beat;
  assign mem_stall_o = running && !r_valid_i;

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) outst_q <= 8'd0;
    else         outst_q <= outst_d;
  end
endmodule
