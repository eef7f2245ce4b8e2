// loom_load - the load module: LOAD of INP and WGT tiles, and NOPs of the
// load queue.
//
// loom_insn_seq runs the instruction life cycle (command queue, C2L pops,
// L2C pushes).  A LOAD then goes through:
//   StCheck  loom_mem_check: SEGMENT, then SRAM, before any request; an
//            empty transfer finishes here.
//   StRun    loom_burst_gen issues the read bursts (AXI ID of the load
//            port); loom_rd_rows assembles each DRAM row from its beats and
//            writes it to its SRAM row; loom_pad_walk writes the padding
//            rows (INP only) in the cycles the DRAM rows leave the write
//            port free.  RREADY is always high: nothing here waits on
//            another module, so the shared read data channel never stalls
//            on the load module.  Done when every row and pad is written
//            and every burst has returned.
//   StErr    an error is raised (held until loom_job aborts the job).
//   StDrain  after abort: the presented burst is let through, every
//            outstanding burst is received and dropped, then idle.
// A SLVERR/DECERR beat raises BUS.
`include "loom_isa.vh"

module loom_load #(
  parameter integer BusBits  = 64,
  parameter integer Batch    = 1,
  parameter integer BlockIn  = 16,
  parameter integer BlockOut = 16,
  parameter integer InpAddrW = 11,
  parameter integer WgtAddrW = 10,
  localparam integer CmdW    = `LOOM_CMD_BITS,
  localparam integer NumSeg  = `LOOM_NUM_SEGMENTS,
  localparam integer InpBits = Batch * BlockIn * 8,
  localparam integer WgtBits = BlockOut * BlockIn * 8
) (
  input  wire                 clk_i,
  input  wire                 rst_ni,
  input  wire                 abort_i,
  // command queue
  input  wire                 cmd_valid_i,
  input  wire [CmdW-1:0]      cmd_data_i,
  output wire                 cmd_pop_o,
  // token queues with compute (C2L popped, L2C pushed)
  input  wire                 next_empty_i,
  input  wire                 next_full_i,
  output wire                 pop_next_o,
  output wire                 push_next_o,
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
  // SRAM write ports
  output wire                 inp_we_o,
  output wire [InpAddrW-1:0]  inp_waddr_o,
  output wire [InpBits-1:0]   inp_wdata_o,
  output wire                 wgt_we_o,
  output wire [WgtAddrW-1:0]  wgt_waddr_o,
  output wire [WgtBits-1:0]   wgt_wdata_o,
  // status
  output wire                 err_valid_o,
  output wire [3:0]           err_code_o,
  output wire [31:0]          err_idx_o,
  output wire                 idle_o,
  output wire                 blocked_o,
  output wire [31:0]          cur_idx_o,
  output wire                 quiet_o,
  output wire                 tok_stall_o,
  output wire                 mem_stall_o,
  output wire                 insn_done_o,
  output wire                 inp_beat_o,
  output wire                 wgt_beat_o
);
  localparam integer BusBytes = BusBits / 8;
  localparam integer RowBits  = (WgtBits > InpBits) ? WgtBits : InpBits;
  localparam integer InpShift = $clog2(Batch * BlockIn);
  localparam integer WgtShift = $clog2(BlockOut * BlockIn);
  localparam integer NbInp    = InpBits / BusBits;
  localparam integer NbWgt    = WgtBits / BusBits;
  localparam integer NbW      = $clog2(NbWgt + 1) + 1;
  localparam integer InpRows  = 1 << InpAddrW;
  localparam integer WgtRows  = 1 << WgtAddrW;
  localparam [2:0] StIdle = 3'd0, StCheck = 3'd1, StRun = 3'd2, StErr = 3'd3, StDrain = 3'd4,
                   StDone = 3'd5;

  generate
    if ((InpBits % BusBits) != 0 || (WgtBits % BusBits) != 0 ||
        (1 << InpShift) != Batch * BlockIn || (1 << WgtShift) != BlockOut * BlockIn) begin : g_bad
      loom_load_rows_must_be_power_of_two_bus_words u_illegal ();
    end
  endgenerate

  // ---- instruction life cycle
  wire            exec_start, exec_done;
  wire [CmdW-1:0] cmd;
  wire            seq_idle, seq_blocked;
  wire            unused_pop_prev, unused_push_prev;

  loom_insn_seq #(.CmdW(CmdW)) u_seq (
    .clk_i        (clk_i),
    .rst_ni       (rst_ni),
    .abort_i      (abort_i),
    .cmd_valid_i  (cmd_valid_i),
    .cmd_data_i   (cmd_data_i),
    .cmd_pop_o    (cmd_pop_o),
    .prev_empty_i (1'b1),
    .prev_full_i  (1'b1),
    .next_empty_i (next_empty_i),
    .next_full_i  (next_full_i),
    .pop_prev_o   (unused_pop_prev),
    .pop_next_o   (pop_next_o),
    .push_prev_o  (unused_push_prev),
    .push_next_o  (push_next_o),
    .exec_start_o (exec_start),
    .cmd_o        (cmd),
    .exec_done_i  (exec_done),
    .idle_o       (seq_idle),
    .blocked_o    (seq_blocked),
    .tok_stall_o  (tok_stall_o),
    .insn_done_o  (insn_done_o)
  );

  // ---- instruction fields
  wire [2:0]  opcode   = cmd[`LOOM_COMMON_OPCODE_LSB +: `LOOM_COMMON_OPCODE_W];
  wire [2:0]  buffer   = cmd[`LOOM_MEM_BUFFER_LSB +: `LOOM_MEM_BUFFER_W];
  wire [15:0] sram_base = cmd[`LOOM_MEM_SRAM_BASE_LSB +: `LOOM_MEM_SRAM_BASE_W];
  wire [2:0]  segment  = cmd[`LOOM_MEM_SEGMENT_LSB +: `LOOM_MEM_SEGMENT_W];
  wire [27:0] dram_off = cmd[`LOOM_MEM_DRAM_OFFSET_LSB +: `LOOM_MEM_DRAM_OFFSET_W];
  wire [15:0] y_size   = cmd[`LOOM_MEM_Y_SIZE_LSB +: `LOOM_MEM_Y_SIZE_W];
  wire [15:0] x_size   = cmd[`LOOM_MEM_X_SIZE_LSB +: `LOOM_MEM_X_SIZE_W];
  wire [15:0] x_stride = cmd[`LOOM_MEM_X_STRIDE_LSB +: `LOOM_MEM_X_STRIDE_W];
  wire [2:0]  y_pad_t  = cmd[`LOOM_MEM_Y_PAD_TOP_LSB +: `LOOM_MEM_Y_PAD_TOP_W];
  wire [2:0]  y_pad_b  = cmd[`LOOM_MEM_Y_PAD_BOTTOM_LSB +: `LOOM_MEM_Y_PAD_BOTTOM_W];
  wire [2:0]  x_pad_l  = cmd[`LOOM_MEM_X_PAD_LEFT_LSB +: `LOOM_MEM_X_PAD_LEFT_W];
  wire [2:0]  x_pad_r  = cmd[`LOOM_MEM_X_PAD_RIGHT_LSB +: `LOOM_MEM_X_PAD_RIGHT_W];
  wire [7:0]  pad_val  = cmd[`LOOM_MEM_PAD_VALUE_LSB +: `LOOM_MEM_PAD_VALUE_W];
  wire [31:0] idx      = cmd[CmdW-1 -: 32];
  wire        is_inp   = (buffer == `LOOM_BUF_INP);

  assign cur_idx_o = idx;

  wire [4:0]  row_shift = is_inp ? InpShift[4:0] : WgtShift[4:0];
  wire [63:0] seg_base, seg_size;
  loom_seg_sel #(.NumSeg(NumSeg)) u_seg (
    .seg_base_i (seg_base_i),
    .seg_size_i (seg_size_i),
    .sel_i      (segment),
    .base_o     (seg_base),
    .size_o     (seg_size)
  );

  // ---- engine state
  reg [2:0] state_q, state_d;
  reg [3:0] err_code_q, err_code_d;
  reg [7:0] outst_q, outst_d;  // bursts in flight

  wire check_start = exec_start && (opcode == `LOOM_OP_LOAD);
  wire chk_done, chk_empty, chk_seg, chk_sram;

  loom_mem_check #(.RowsW(17)) u_check (
    .clk_i         (clk_i),
    .rst_ni        (rst_ni),
    .start_i       (check_start),
    .dram_offset_i (dram_off),
    .y_size_i      (y_size),
    .x_size_i      (x_size),
    .x_stride_i    (x_stride),
    .y_pad_i       ({1'b0, y_pad_t} + {1'b0, y_pad_b}),
    .x_pad_i       ({1'b0, x_pad_l} + {1'b0, x_pad_r}),
    .sram_base_i   (sram_base),
    .row_shift_i   (row_shift),
    .rows_i        (is_inp ? InpRows[16:0] : WgtRows[16:0]),
    .seg_size_i    (seg_size),
    .done_o        (chk_done),
    .empty_o       (chk_empty),
    .seg_err_o     (chk_seg),
    .sram_err_o    (chk_sram)
  );

  wire run_start = (state_q == StCheck) && chk_done && !chk_empty && !chk_seg && !chk_sram &&
                   !abort_i;

  // ---- read requests
  wire ar_busy;
  loom_burst_gen #(.BusBytes(BusBytes)) u_ar (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .start_i     (run_start),
    .abort_i     (abort_i || state_q == StErr),
    .enable_i    (1'b1),
    .base_i      (seg_base + ({36'd0, dram_off} << row_shift)),
    .stride_i    ({16'd0, x_stride} << row_shift),
    .row_bytes_i ({16'd0, x_size} << row_shift),
    .rows_i      (y_size),
    .ax_valid_o  (ar_valid_o),
    .ax_ready_i  (ar_ready_i),
    .ax_addr_o   (ar_addr_o),
    .ax_len_o    (ar_len_o),
    .busy_o      (ar_busy)
  );

  // ---- rows and padding
  wire        running  = (state_q == StRun);
  wire        beat_ok  = running && r_valid_i && !r_resp_i[1];
  wire        bus_err  = running && r_valid_i && r_resp_i[1];
  wire [16:0] w_row    = {1'b0, x_size} + {14'd0, x_pad_l} + {14'd0, x_pad_r};
  wire [17:0] top_rows = (y_pad_t[0] ? {1'b0, w_row} : 18'd0) +
                         (y_pad_t[1] ? {w_row, 1'b0} : 18'd0) +
                         (y_pad_t[2] ? {w_row[15:0], 2'b0} : 18'd0);
  wire [17:0] first_addr = {2'd0, sram_base} + top_rows + {15'd0, x_pad_l};
  wire        row_valid, rows_done;
  wire [17:0] row_addr;
  wire [RowBits-1:0] row_data;

  loom_rd_rows #(.BusBits(BusBits), .RowBits(RowBits), .NbW(NbW)) u_rows (
    .clk_i        (clk_i),
    .rst_ni       (rst_ni),
    .start_i      (run_start),
    .nb_i         (is_inp ? NbInp[NbW-1:0] : NbWgt[NbW-1:0]),
    .first_addr_i (first_addr),
    .x_size_i     (x_size),
    .y_size_i     (y_size),
    .skip_i       ({1'b0, x_pad_l} + {1'b0, x_pad_r}),
    .beat_valid_i (beat_ok),
    .beat_data_i  (r_data_i),
    .row_valid_o  (row_valid),
    .row_addr_o   (row_addr),
    .row_data_o   (row_data),
    .done_o       (rows_done)
  );

  wire        pad_valid, pad_busy;
  wire [17:0] pad_addr;
  loom_pad_walk u_pad (
    .clk_i          (clk_i),
    .rst_ni         (rst_ni),
    .start_i        (run_start && is_inp),
    .abort_i        (abort_i || state_q == StErr),
    .sram_base_i    (sram_base),
    .y_size_i       (y_size),
    .x_size_i       (x_size),
    .y_pad_top_i    (y_pad_t),
    .y_pad_bottom_i (y_pad_b),
    .x_pad_left_i   (x_pad_l),
    .x_pad_right_i  (x_pad_r),
    .pad_valid_o    (pad_valid),
    .pad_ready_i    (!row_valid),
    .pad_addr_o     (pad_addr),
    .busy_o         (pad_busy)
  );

  // Data rows take the write port first; padding fills the gaps.
  wire        wr_pad  = pad_valid && !row_valid;
  wire        wr_en   = (running || state_q == StDone) && (row_valid || wr_pad);
  wire [17:0] wr_addr = row_valid ? row_addr : pad_addr;
  wire [InpBits-1:0] pad_row = {(InpBits / 8){pad_val}};

  assign inp_we_o    = wr_en && is_inp;
  assign inp_waddr_o = wr_addr[InpAddrW-1:0];
  assign inp_wdata_o = row_valid ? row_data[RowBits-1 -: InpBits] : pad_row;
  assign wgt_we_o    = wr_en && !is_inp;
  assign wgt_waddr_o = wr_addr[WgtAddrW-1:0];
  assign wgt_wdata_o = row_data[RowBits-1 -: WgtBits];

  wire [17-InpAddrW:0] unused_inp_addr = wr_addr[17:InpAddrW];
  wire [17-WgtAddrW:0] unused_wgt_addr = wr_addr[17:WgtAddrW];
  wire [1:0] unused_ops = {unused_pop_prev, unused_push_prev};
  wire       unused_resp0 = r_resp_i[0];
  // token flags are the sequencer's; src_int8 and reserved are zero here
  wire [6:0] unused_cmd = {cmd[127:125], cmd[6:3]};

  // ---- completion, errors, drain
  wire rlast_seen = r_valid_i && r_last_i;
  wire ar_fire    = ar_valid_o && ar_ready_i;
  wire all_in     = rows_done && !pad_busy && !ar_busy && (outst_q == 8'd0);

  assign r_ready_o   = 1'b1;
  assign exec_done   = (state_q == StDone) ||
                       (exec_start && opcode != `LOOM_OP_LOAD) ||
                       ((state_q == StCheck) && chk_done && chk_empty);
  assign err_valid_o = (state_q == StErr);
  assign err_code_o  = err_code_q;
  assign err_idx_o   = idx;
  assign idle_o      = seq_idle;
  assign blocked_o   = seq_blocked;
  assign quiet_o     = (state_q == StIdle) && seq_idle;
  assign mem_stall_o = running && !r_valid_i;
  assign inp_beat_o  = beat_ok && is_inp;
  assign wgt_beat_o  = beat_ok && !is_inp;

  always @* begin
    state_d    = state_q;
    err_code_d = err_code_q;
    outst_d    = outst_q + (ar_fire ? 8'd1 : 8'd0) - (rlast_seen ? 8'd1 : 8'd0);
    case (state_q)
      StIdle: if (check_start) state_d = StCheck;
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
        if (bus_err) begin
          state_d    = StErr;
          err_code_d = `LOOM_ERR_BUS;
        end else if (all_in && !row_valid) begin
          state_d = StDone;
        end
      end
      StDone:  state_d = StIdle;
      StErr:   state_d = StErr;
      StDrain: if (!ar_busy && outst_q == 8'd0) state_d = StIdle;
      default: state_d = StIdle;
    endcase
    if (abort_i) state_d = (!ar_busy && outst_d == 8'd0) ? StIdle : StDrain;
  end

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q    <= StIdle;
      err_code_q <= `LOOM_ERR_NONE;
      outst_q    <= 8'd0;
    end else begin
      state_q    <= state_d;
      err_code_q <= err_code_d;
      outst_q    <= outst_d;
    end
  end
endmodule
