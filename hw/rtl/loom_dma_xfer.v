// loom_dma_xfer - the sequencing every DMA instruction shares (LOAD of any
// buffer, STORE): bounds checks first, then the address bursts, then the
// end, an error or a drain.
//
//   StIdle   waits for start_i (the instruction's execution begins).
//   StCheck  loom_mem_check: SEGMENT, then SRAM, before any request; an
//            empty transfer (x_size or y_size zero) finishes here.
//   StRun    loom_burst_gen issues the bursts (enable_i gates new ones);
//            the data side moves the beats and reports run_done_i (every
//            row written, every burst answered) or bus_err_i (a
//            SLVERR/DECERR response: BUS).
//   StDone   one cycle: the instruction's execution is done (done_o).
//   StErr    the error is raised (err_valid_o) and held until abort_i.
//   StDrain  after abort_i: the presented address is let through and the
//            data side receives and drops everything outstanding; back to
//            idle once quiet_i.
// abort_i in any state goes to StIdle when the data side will be quiet
// after this cycle (quiet_next_i), else to StDrain.  The data side defines
// "quiet" (reads: no burst in flight; writes: every W beat sent and every
// B response received), which is the only difference between a read and a
// write transfer here.
//
// The address of row y of the transfer is seg_base + (dram_offset +
// y * x_stride) << row_shift_i and a row is x_size << row_shift_i bytes
// (docs/isa.md); the segment table entry is picked here as well.
// ShiftSet names the row_shift_i values an instance can see (bit k: shift
// k): the three address shifts are built from those constants only, so a
// LOAD/STORE with one or two row sizes gets wiring and a small mux instead
// of three general 64-bit barrel shifters (about 580 cells an instance:
// Yosys does not flatten, so it cannot see a constant port from outside).
`include "loom_isa.vh"

module loom_dma_xfer #(
  parameter integer BusBytes = 8,
  parameter [31:0]   ShiftSet = 32'hFFFF_FFFF,
  localparam integer NumSeg  = `LOOM_NUM_SEGMENTS
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
  input  wire [3:0]           y_pad_i,      // y_pad_top + y_pad_bottom
  input  wire [3:0]           x_pad_i,      // x_pad_left + x_pad_right
  input  wire [4:0]           row_shift_i,  // log2 of the row size in bytes
  input  wire [16:0]          rows_i,       // rows of the SRAM buffer
  // segment table
  input  wire [NumSeg*64-1:0] seg_base_i,
  input  wire [NumSeg*64-1:0] seg_size_i,
  // address channel
  input  wire                 enable_i,
  output wire                 ax_valid_o,
  input  wire                 ax_ready_i,
  output wire [63:0]          ax_addr_o,
  output wire [7:0]           ax_len_o,
  // from the data side
  input  wire                 run_done_i,
  input  wire                 bus_err_i,
  input  wire                 quiet_i,
  input  wire                 quiet_next_i,
  // status
  output wire                 run_start_o,  // StCheck -> StRun: the data side starts
  output wire                 running_o,
  output wire                 stop_o,       // StErr or StDrain: the data side stops
  output wire                 ax_busy_o,
  output wire                 done_o,
  output wire                 idle_o,
  output wire                 err_valid_o,
  output wire [3:0]           err_code_o
);
  localparam [2:0] StIdle = 3'd0, StCheck = 3'd1, StRun = 3'd2, StErr = 3'd3, StDrain = 3'd4,
                   StDone = 3'd5;

  reg [2:0] state_q, state_d;
  reg [3:0] err_code_q, err_code_d;

  wire [63:0] seg_base, seg_size;
  loom_seg_sel #(.NumSeg(NumSeg)) u_seg (
    .seg_base_i (seg_base_i),
    .seg_size_i (seg_size_i),
    .sel_i      (segment_i),
    .base_o     (seg_base),
    .size_o     (seg_size)
  );

  wire chk_done, chk_empty, chk_seg, chk_sram;
  loom_mem_check #(.RowsW(17)) u_check (
    .clk_i         (clk_i),
    .rst_ni        (rst_ni),
    .start_i       (start_i),
    .dram_offset_i (dram_offset_i),
    .y_size_i      (y_size_i),
    .x_size_i      (x_size_i),
    .x_stride_i    (x_stride_i),
    .y_pad_i       (y_pad_i),
    .x_pad_i       (x_pad_i),
    .sram_base_i   (sram_base_i),
    .row_shift_i   (row_shift_i),
    .rows_i        (rows_i),
    .seg_size_i    (seg_size),
    .done_o        (chk_done),
    .empty_o       (chk_empty),
    .seg_err_o     (chk_seg),
    .sram_err_o    (chk_sram)
  );

  // x << row_shift_i over the shifts ShiftSet allows (one term is nonzero)
  function automatic [63:0] shl(input [63:0] x, input [4:0] sh);
    integer k;
    begin
      shl = 64'd0;
      for (k = 0; k < 32; k = k + 1)
        if (ShiftSet[k] && (sh == k[4:0])) shl = shl | (x << k);
    end
  endfunction

  function automatic [31:0] shl32(input [31:0] x, input [4:0] sh);
    integer k;
    begin
      shl32 = 32'd0;
      for (k = 0; k < 32; k = k + 1)
        if (ShiftSet[k] && (sh == k[4:0])) shl32 = shl32 | (x << k);
    end
  endfunction

  wire checked   = (state_q == StCheck) && chk_done;
  wire run_start = checked && !chk_empty && !chk_seg && !chk_sram && !abort_i;
  wire stop      = (state_q == StErr) || (state_q == StDrain);

  // The bursts start (run_start) three cycles after start_i at the
  // earliest, once the checks are done, and the fields are held while the
  // instruction executes: the burst generator's operands are registered
  // here, so the instruction's decode, the segment multiplexer and the
  // base address add end at a register instead of running on into the
  // burst arithmetic (docs/rtl.md, "Timing").  No cycle changes.
  wire [63:0] ax_base_d      = seg_base + shl({36'd0, dram_offset_i}, row_shift_i);
  wire [31:0] ax_stride_d    = shl32({16'd0, x_stride_i}, row_shift_i);
  wire [31:0] ax_row_bytes_d = shl32({16'd0, x_size_i}, row_shift_i);
  reg  [63:0] ax_base_q;
  reg  [31:0] ax_stride_q, ax_row_bytes_q;
  reg  [15:0] ax_rows_q;
  always @(posedge clk_i) begin
    ax_base_q      <= ax_base_d;
    ax_stride_q    <= ax_stride_d;
    ax_row_bytes_q <= ax_row_bytes_d;
    ax_rows_q      <= y_size_i;
  end

  loom_burst_gen #(.BusBytes(BusBytes)) u_ax (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .start_i     (run_start),
    .abort_i     (abort_i || stop),
    .enable_i    (enable_i),
    .base_i      (ax_base_q),
    .stride_i    (ax_stride_q),
    .row_bytes_i (ax_row_bytes_q),
    .rows_i      (ax_rows_q),
    .ax_valid_o  (ax_valid_o),
    .ax_ready_i  (ax_ready_i),
    .ax_addr_o   (ax_addr_o),
    .ax_len_o    (ax_len_o),
    .busy_o      (ax_busy_o)
  );

  assign run_start_o = run_start;
  assign running_o   = (state_q == StRun);
  assign stop_o      = stop;
  assign done_o      = (state_q == StDone) || (checked && chk_empty);
  assign idle_o      = (state_q == StIdle);
  assign err_valid_o = (state_q == StErr);
  assign err_code_o  = err_code_q;

  always @* begin
    state_d    = state_q;
    err_code_d = err_code_q;
    case (state_q)
      StIdle: if (start_i) state_d = StCheck;
      StCheck: begin
        if (chk_done) begin
          if (chk_empty) begin
            state_d = StIdle;
          end else if (chk_seg) begin
            state_d    = StErr;
            err_code_d = `LOOM_ERR_SEGMENT;
          end else if (chk_sram) begin
            state_d    = StErr;
            err_code_d = `LOOM_ERR_SRAM;
          end else begin
            state_d = StRun;
          end
        end
      end
      StRun: begin
        if (bus_err_i) begin
          state_d    = StErr;
          err_code_d = `LOOM_ERR_BUS;
        end else if (run_done_i) begin
          state_d = StDone;
        end
      end
      StDone:  state_d = StIdle;
      StErr:   state_d = StErr;
      StDrain: if (quiet_i) state_d = StIdle;
      default: state_d = StIdle;
    endcase
    if (abort_i) state_d = quiet_next_i ? StIdle : StDrain;
  end

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q    <= StIdle;
      err_code_q <= `LOOM_ERR_NONE;
    end else begin
      state_q    <= state_d;
      err_code_q <= err_code_d;
    end
  end
endmodule
