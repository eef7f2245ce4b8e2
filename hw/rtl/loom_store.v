// loom_store - the store module: STORE of OUT rows to DRAM, and NOPs of
// the store queue.
//
// loom_insn_seq runs the life cycle (command queue, C2S pops, S2C pushes).
// loom_dma_xfer sequences a STORE as it does every DMA instruction (checks:
// SEGMENT, then SRAM, before any request, empty transfers finishing there;
// then the run; error; drain).  While it runs, three independent streams
// move the data:
//   - its loom_burst_gen issues the write bursts (<= 256 beats, no 4 KiB
//     crossing, one transfer row never shares a burst with another);
//     each accepted AW pushes its length onto a small queue that the W
//     stream follows, so W never runs ahead of its AW;
//   - the OUT reader reads rows sram_base + y * x_size + x in order (one
//     per cycle, registered BRAM read) into a 4-row queue;
//   - the W stream cuts each row into bus beats (row byte 0 in the lowest
//     lane) and marks WLAST at the end of each burst.
// The instruction completes when every burst has been answered on B (the
// ISA: a STORE's writes are acknowledged by the bus).  SLVERR/DECERR on B
// raises BUS.  After an error or abort, AXI still requires the data of
// every burst whose address was accepted: the W stream finishes those
// bursts with WSTRB = 0 (no byte is written), then every B response is
// awaited before the module reports quiet.
`include "loom_isa.vh"

module loom_store #(
  parameter integer BusBits  = 64,
  parameter integer Batch    = 1,
  parameter integer BlockOut = 16,
  parameter integer AccAddrW = 11,
  localparam integer CmdW    = `LOOM_CMD_BITS,
  localparam integer NumSeg  = `LOOM_NUM_SEGMENTS,
  localparam integer OutBits = Batch * BlockOut * 8
) (
  input  wire                 clk_i,
  input  wire                 rst_ni,
  input  wire                 abort_i,
  // command queue
  input  wire                 cmd_valid_i,
  input  wire [CmdW-1:0]      cmd_data_i,
  output wire                 cmd_pop_o,
  // token queues with compute (C2S popped, S2C pushed)
  input  wire                 prev_empty_i,
  input  wire                 prev_full_i,
  output wire                 pop_prev_o,
  output wire                 push_prev_o,
  // segment table
  input  wire [NumSeg*64-1:0] seg_base_i,
  input  wire [NumSeg*64-1:0] seg_size_i,
  // AXI write
  output wire                 aw_valid_o,
  input  wire                 aw_ready_i,
  output wire [63:0]          aw_addr_o,
  output wire [7:0]           aw_len_o,
  output wire                 w_valid_o,
  input  wire                 w_ready_i,
  output wire [BusBits-1:0]   w_data_o,
  output wire [BusBits/8-1:0] w_strb_o,
  output wire                 w_last_o,
  input  wire                 b_valid_i,
  input  wire [1:0]           b_resp_i,
  output wire                 b_ready_o,
  // OUT read port
  output wire                 out_re_o,
  output wire [AccAddrW-1:0]  out_raddr_o,
  input  wire [OutBits-1:0]   out_rdata_i,
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
  output wire                 out_beat_o
);
  localparam integer BusBytes = BusBits / 8;
  localparam integer OutShift = $clog2(Batch * BlockOut);
  localparam integer Nb       = OutBits / BusBits;
  localparam integer NbW      = (Nb > 1) ? $clog2(Nb) : 1;
  localparam integer AccRows  = 1 << AccAddrW;
  localparam integer RowQ     = 4;
  localparam integer LenQ     = 8;
  localparam integer RqW      = $clog2(RowQ + 1);

  generate
    if ((OutBits % BusBits) != 0 || (1 << OutShift) != Batch * BlockOut) begin : g_bad
      loom_store_rows_must_be_power_of_two_bus_words u_illegal ();
    end
  endgenerate

  // ---- instruction life cycle
  wire            exec_start, exec_done;
  wire [CmdW-1:0] cmd;
  wire            seq_idle, seq_blocked;
  wire            unused_pop_next, unused_push_next;

  loom_insn_seq #(.CmdW(CmdW)) u_seq (
    .clk_i        (clk_i),
    .rst_ni       (rst_ni),
    .abort_i      (abort_i),
    .cmd_valid_i  (cmd_valid_i),
    .cmd_data_i   (cmd_data_i),
    .cmd_pop_o    (cmd_pop_o),
    .prev_empty_i (prev_empty_i),
    .prev_full_i  (prev_full_i),
    .next_empty_i (1'b1),
    .next_full_i  (1'b1),
    .pop_prev_o   (pop_prev_o),
    .pop_next_o   (unused_pop_next),
    .push_prev_o  (push_prev_o),
    .push_next_o  (unused_push_next),
    .exec_start_o (exec_start),
    .cmd_o        (cmd),
    .exec_done_i  (exec_done),
    .idle_o       (seq_idle),
    .blocked_o    (seq_blocked),
    .tok_stall_o  (tok_stall_o),
    .insn_done_o  (insn_done_o)
  );

  wire [2:0]  opcode    = cmd[`LOOM_COMMON_OPCODE_LSB +: `LOOM_COMMON_OPCODE_W];
  wire [15:0] sram_base = cmd[`LOOM_MEM_SRAM_BASE_LSB +: `LOOM_MEM_SRAM_BASE_W];
  wire [2:0]  segment   = cmd[`LOOM_MEM_SEGMENT_LSB +: `LOOM_MEM_SEGMENT_W];
  wire [27:0] dram_off  = cmd[`LOOM_MEM_DRAM_OFFSET_LSB +: `LOOM_MEM_DRAM_OFFSET_W];
  wire [15:0] y_size    = cmd[`LOOM_MEM_Y_SIZE_LSB +: `LOOM_MEM_Y_SIZE_W];
  wire [15:0] x_size    = cmd[`LOOM_MEM_X_SIZE_LSB +: `LOOM_MEM_X_SIZE_W];
  wire [15:0] x_stride  = cmd[`LOOM_MEM_X_STRIDE_LSB +: `LOOM_MEM_X_STRIDE_W];
  wire [31:0] idx       = cmd[CmdW-1 -: 32];
  // buffer (always OUT), padding and src_int8 (zero for a legal STORE),
  // token flags (the sequencer's) and reserved bits are not needed here
  wire [29:0] unused_cmd = {cmd[127:105], cmd[9:3]};
  wire [1:0]  unused_tok = {unused_pop_next, unused_push_next};

  assign cur_idx_o = idx;

  // ---- sequencing, write addresses and the burst length queue
  wire       run_start, running, draining, aw_busy, all_done, bus_idle, b_err;
  wire       xfer_done, xfer_idle;
  wire       aw_fire = aw_valid_o && aw_ready_i;
  wire       len_rvalid, len_pop, unused_len_wready;
  wire [7:0] len_head;
  wire [$clog2(LenQ + 1)-1:0] len_count;
  reg  [7:0] b_outst_q, b_outst_d;
  wire       aw_room = ({{(8 - $clog2(LenQ + 1)){1'b0}}, len_count} + 8'd2 <= LenQ[7:0]) &&
                       (b_outst_q < 8'd64);

  loom_dma_xfer #(.BusBytes(BusBytes), .ShiftSet(32'd1 << OutShift)) u_xfer (
    .clk_i         (clk_i),
    .rst_ni        (rst_ni),
    .abort_i       (abort_i),
    .start_i       (exec_start && opcode == `LOOM_OP_STORE),
    .segment_i     (segment),
    .dram_offset_i (dram_off),
    .sram_base_i   (sram_base),
    .y_size_i      (y_size),
    .x_size_i      (x_size),
    .x_stride_i    (x_stride),
    .y_pad_i       (4'd0),
    .x_pad_i       (4'd0),
    .row_shift_i   (OutShift[4:0]),
    .rows_i        (AccRows[16:0]),
    .seg_base_i    (seg_base_i),
    .seg_size_i    (seg_size_i),
    .enable_i      (aw_room),
    .ax_valid_o    (aw_valid_o),
    .ax_ready_i    (aw_ready_i),
    .ax_addr_o     (aw_addr_o),
    .ax_len_o      (aw_len_o),
    .run_done_i    (all_done),
    .bus_err_i     (b_err),
    .quiet_i       (bus_idle),
    .quiet_next_i  (bus_idle && !aw_fire),
    .run_start_o   (run_start),
    .running_o     (running),
    .stop_o        (draining),
    .ax_busy_o     (aw_busy),
    .done_o        (xfer_done),
    .idle_o        (xfer_idle),
    .err_valid_o   (err_valid_o),
    .err_code_o    (err_code_o)
  );

  loom_fifo #(.Width(8), .Depth(LenQ)) u_lenq (
    .clk_i    (clk_i),
    .rst_ni   (rst_ni),
    .clr_i    (1'b0),
    .wvalid_i (aw_fire),
    .wready_o (unused_len_wready),
    .wdata_i  (aw_len_o),
    .rvalid_o (len_rvalid),
    .rready_i (len_pop),
    .rdata_o  (len_head),
    .count_o  (len_count)
  );

  // ---- OUT reader
  reg  [15:0] rx_q, rx_d;
  reg  [15:0] ry_q, ry_d;
  reg  [17:0] raddr_q, raddr_d;
  reg         rpend_q, rpend_d;
  wire        row_rvalid, row_pop, unused_row_wready;
  wire [OutBits-1:0] row_head;
  wire [RqW-1:0] row_count;
  wire        reader_done = (ry_q == y_size);
  wire        rd_issue = running && !reader_done &&
                         ({1'b0, row_count} + {{RqW{1'b0}}, rpend_q} < RowQ[RqW:0]);

  assign out_re_o    = rd_issue;
  assign out_raddr_o = raddr_q[AccAddrW-1:0];
  wire [17-AccAddrW:0] unused_raddr = raddr_q[17:AccAddrW];

  loom_fifo #(.Width(OutBits), .Depth(RowQ)) u_rowq (
    .clk_i    (clk_i),
    .rst_ni   (rst_ni),
    .clr_i    (!running),
    .wvalid_i (rpend_q && running),
    .wready_o (unused_row_wready),
    .wdata_i  (out_rdata_i),
    .rvalid_o (row_rvalid),
    .rready_i (row_pop),
    .rdata_o  (row_head),
    .count_o  (row_count)
  );

  // ---- W stream, through a register slice: AXI wants WVALID, WDATA and
  // WSTRB stable until WREADY, also when an abort turns the remaining
  // beats into empty ones (draining: StErr or StDrain; no burst is left
  // to finish in any other state but StRun).
  reg [7:0]     wcnt_q, wcnt_d;   // beat within the burst
  reg [NbW-1:0] wbeat_q, wbeat_d; // beat within the row
  wire          beat_valid = len_rvalid && (draining || row_rvalid);
  wire          beat_ready;
  wire          w_fire   = beat_valid && beat_ready;
  wire          w_last   = (wcnt_q == len_head);
  wire          row_last = (wbeat_q == Nb[NbW-1:0] - {{(NbW-1){1'b0}}, 1'b1}) || (Nb == 1);
  wire [BusBits-1:0] beat_data;

  assign len_pop    = w_fire && w_last;
  assign row_pop    = w_fire && row_last && running;
  assign out_beat_o = w_fire && running;

  generate
    if (Nb == 1) begin : g_one_beat
      assign beat_data = row_head;
      wire unused_wbeat = wbeat_q[0];
    end else begin : g_beats
      assign beat_data = row_head[BusBits*wbeat_q +: BusBits];
    end
  endgenerate

  loom_skid #(.Width(BusBits + BusBytes + 1)) u_wslice (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .in_valid_i  (beat_valid),
    .in_ready_o  (beat_ready),
    .in_data_i   ({w_last, draining ? {BusBytes{1'b0}} : {BusBytes{1'b1}}, beat_data}),
    .out_valid_o (w_valid_o),
    .out_ready_i (w_ready_i),
    .out_data_o  ({w_last_o, w_strb_o, w_data_o})
  );

  // ---- B responses
  wire b_fire = b_valid_i && b_ready_o;
  assign b_err = b_fire && b_resp_i[1];
  wire unused_bresp0 = b_resp_i[0];
  assign b_ready_o = 1'b1;

  assign all_done = reader_done && !rpend_q && !row_rvalid && !aw_busy && !len_rvalid &&
                    (b_outst_q == 8'd0);
  assign bus_idle = !aw_busy && !len_rvalid && (b_outst_q == 8'd0);

  assign exec_done   = xfer_done || (exec_start && opcode != `LOOM_OP_STORE);
  assign err_idx_o   = idx;
  assign idle_o      = seq_idle;
  assign blocked_o   = seq_blocked;
  assign quiet_o     = xfer_idle && seq_idle;
  assign mem_stall_o = running && ((aw_valid_o && !aw_ready_i) || (w_valid_o && !w_ready_i) ||
                                   (reader_done && !len_rvalid && b_outst_q != 8'd0));

  always @* begin
    rx_d       = rx_q;
    ry_d       = ry_q;
    raddr_d    = raddr_q;
    rpend_d    = rd_issue;
    wcnt_d     = wcnt_q;
    wbeat_d    = wbeat_q;
    b_outst_d  = b_outst_q + (aw_fire ? 8'd1 : 8'd0) - (b_fire ? 8'd1 : 8'd0);

    if (rd_issue) begin
      raddr_d = raddr_q + 18'd1;
      if (rx_q == x_size - 16'd1) begin
        rx_d = 16'd0;
        ry_d = ry_q + 16'd1;
      end else begin
        rx_d = rx_q + 16'd1;
      end
    end
    if (w_fire) begin
      wcnt_d = w_last ? 8'd0 : wcnt_q + 8'd1;
      if (Nb > 1) wbeat_d = row_last ? {NbW{1'b0}} : wbeat_q + {{(NbW-1){1'b0}}, 1'b1};
    end
    if (run_start) begin
      rx_d    = 16'd0;
      ry_d    = 16'd0;
      raddr_d = {2'd0, sram_base};
      wbeat_d = {NbW{1'b0}};
    end
  end

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rx_q       <= 16'd0;
      ry_q       <= 16'd0;
      raddr_q    <= 18'd0;
      rpend_q    <= 1'b0;
      wcnt_q     <= 8'd0;
      wbeat_q    <= {NbW{1'b0}};
      b_outst_q  <= 8'd0;
    end else begin
      rx_q       <= rx_d;
      ry_q       <= ry_d;
      raddr_q    <= raddr_d;
      rpend_q    <= rpend_d;
      wcnt_q     <= wcnt_d;
      wbeat_q    <= wbeat_d;
      b_outst_q  <= b_outst_d;
    end
  end
endmodule
