// loom_fetch - reads the instruction stream and dispatches it in order.
//
// Reading: INSN_COUNT 16-byte instructions from INSN_ADDR (16-byte
// aligned) in INCR bursts on AXI ID 0.  Bursts never cross 4 KiB, and are
// only issued for instructions the local buffer (BufDepth instructions) has
// room for, counting those already requested: read data is therefore
// always accepted at once (RREADY stays high), so a busy fetch can never
// hold up the read data of the load or compute DMA behind it on the shared
// R channel.  Reading ahead is invisible to the machine model: only
// dispatch into the command queues has capacity semantics.
//
// Dispatching: the instruction at the head of the buffer is decoded
// (loom_insn_decode) exactly when fsim's fetch would read it: it counts 16
// bytes of BYTES_RD_INSN, raises ILLEGAL (or BUS, if its beats came back
// with SLVERR/DECERR) with its stream index, or waits until its command
// queue has room and pushes {index, instruction}.  After FINISH, or after
// the last instruction, fetch dispatches nothing more (eos_o tells loom_job
// the stream ended without FINISH).  blocked_o: finished, or holding an
// instruction for a full queue.
//
// abort_i stops everything; read bursts still in flight are received and
// dropped, and quiet_o rises once none is left.
`include "loom_isa.vh"

module loom_fetch #(
  parameter integer BusBits  = 64,
  parameter integer BufDepth = 16,
  localparam integer CmdW    = `LOOM_CMD_BITS,
  localparam integer BufCntW = $clog2(BufDepth + 1)
) (
  input  wire               clk_i,
  input  wire               rst_ni,
  input  wire               job_start_i,
  input  wire               abort_i,
  input  wire [63:0]        insn_addr_i,
  input  wire [31:0]        insn_count_i,
  // AXI read address (ID assigned by the arbiter) and data
  output wire               ar_valid_o,
  input  wire               ar_ready_i,
  output wire [63:0]        ar_addr_o,
  output wire [7:0]         ar_len_o,
  input  wire               r_valid_i,
  input  wire [BusBits-1:0] r_data_i,
  input  wire [1:0]         r_resp_i,
  output wire               r_ready_o,
  // command queues: 0 load, 1 compute, 2 store
  output wire [2:0]         q_valid_o,
  input  wire [2:0]         q_ready_i,
  output wire [CmdW-1:0]    q_data_o,
  // status
  output wire               err_valid_o,
  output wire [3:0]         err_code_o,
  output wire [31:0]        err_idx_o,
  output wire               eos_o,
  output wire               blocked_o,
  output wire               quiet_o,
  output wire               insn_read_o
);
  localparam integer BeatsPerInsn = 128 / BusBits;
  localparam integer BeatShift = (BusBits == 64) ? 1 : 0;
  localparam integer MaxBurst = (BufDepth < 256 / BeatsPerInsn) ? BufDepth : 256 / BeatsPerInsn;
  localparam integer Chunk = (BufDepth / 2 > 0) ? BufDepth / 2 : 1;
  localparam [1:0] StIdle = 2'd0, StRun = 2'd1, StDone = 2'd2;

  generate
    if (BusBits != 64 && BusBits != 128) begin : g_bad_bus
      loom_fetch_bus_must_be_64_or_128 u_illegal ();
    end
    if (BufDepth < 2 || BufDepth > 255) begin : g_bad_depth
      loom_fetch_illegal_buf_depth u_illegal ();
    end
  endgenerate

  reg [1:0]         state_q, state_d;
  reg [31:0]        req_left_q, req_left_d;
  reg [63:0]        req_addr_q, req_addr_d;
  reg [BufCntW-1:0] inflight_q, inflight_d;
  reg               ar_valid_q, ar_valid_d;
  reg [63:0]        ar_addr_q, ar_addr_d;
  reg [7:0]         ar_len_q, ar_len_d;
  reg [31:0]        idx_q, idx_d;
  reg [31:0]        count_q, count_d;
  reg               fin_q, fin_d;
  reg               counted_q, counted_d;

  // ---- instruction buffer: {bus error, instruction}
  wire               buf_wvalid;
  wire [128:0]       buf_wdata;
  wire               buf_rvalid;
  wire [128:0]       buf_rdata;
  wire               buf_pop;
  wire [BufCntW-1:0] buf_count;
  wire               buf_wready;
  wire               insn_arrived;

  loom_fifo #(.Width(129), .Depth(BufDepth)) u_buf (
    .clk_i    (clk_i),
    .rst_ni   (rst_ni),
    .clr_i    (job_start_i || abort_i),
    .wvalid_i (buf_wvalid),
    .wready_o (buf_wready),
    .wdata_i  (buf_wdata),
    .rvalid_o (buf_rvalid),
    .rready_i (buf_pop),
    .rdata_o  (buf_rdata),
    .count_o  (buf_count)
  );
  wire unused_buf_wready = buf_wready;  // never full: reads are issued against free room

  // ---- beat assembly
  generate
    if (BeatsPerInsn == 1) begin : g_one_beat
      assign insn_arrived = r_valid_i;
      assign buf_wdata    = {r_resp_i[1], r_data_i};
    end else begin : g_two_beats
      reg        half_q, half_d;
      reg [63:0] lo_q, lo_d;
      reg        lo_err_q, lo_err_d;
      always @* begin
        half_d   = half_q;
        lo_d     = lo_q;
        lo_err_d = lo_err_q;
        if (r_valid_i) begin
          half_d = !half_q;
          if (!half_q) begin
            lo_d     = r_data_i;
            lo_err_d = r_resp_i[1];
          end
        end
      end
      always @(posedge clk_i or negedge rst_ni) begin
        if (!rst_ni) half_q <= 1'b0;
        else         half_q <= half_d;
      end
      always @(posedge clk_i) begin
        lo_q     <= lo_d;
        lo_err_q <= lo_err_d;
      end
      assign insn_arrived = r_valid_i && half_q;
      assign buf_wdata    = {lo_err_q | r_resp_i[1], r_data_i, lo_q};
    end
  endgenerate

  assign r_ready_o  = 1'b1;
  assign buf_wvalid = insn_arrived && (state_q == StRun) && !abort_i;

  // ---- dispatch
  wire [127:0] head_insn = buf_rdata[127:0];
  wire         head_err  = buf_rdata[128];
  wire         legal;
  wire [1:0]   queue;
  wire         is_finish;

  loom_insn_decode u_decode (
    .insn_i   (head_insn),
    .legal_o  (legal),
    .queue_o  (queue),
    .finish_o (is_finish)
  );

  wire dispatching = (state_q == StRun) && !abort_i && buf_rvalid;
  wire head_ok     = dispatching && !head_err && legal;
  wire [2:0] q_sel = (queue == `LOOM_Q_LOAD)    ? 3'b001 :
                     (queue == `LOOM_Q_COMPUTE) ? 3'b010 :
                     (queue == `LOOM_Q_STORE)   ? 3'b100 : 3'b000;
  wire q_ready     = |(q_sel & q_ready_i);

  assign buf_pop     = head_ok && q_ready;
  assign q_valid_o   = head_ok ? q_sel : 3'b000;
  assign q_data_o    = {idx_q, head_insn};
  assign err_valid_o = dispatching && (head_err || !legal);
  assign err_code_o  = head_err ? `LOOM_ERR_BUS : `LOOM_ERR_ILLEGAL;
  assign err_idx_o   = idx_q;
  assign insn_read_o = dispatching && !counted_q;
  assign eos_o       = (state_q == StDone) && !fin_q;
  assign blocked_o   = (state_q == StDone) || (head_ok && !q_ready);
  assign quiet_o     = (state_q != StRun) && !ar_valid_q && (inflight_q == {BufCntW{1'b0}});

  // ---- read requests
  wire [8:0] to_4k = 9'd256 - {1'b0, req_addr_q[11:4]};  // instructions to the 4 KiB line
  wire [BufCntW:0] free = BufDepth[BufCntW:0] - {1'b0, buf_count} - {1'b0, inflight_q};
  reg  [8:0] n_insns;
  always @* begin
    n_insns = MaxBurst[8:0];
    if ({23'd0, n_insns} > req_left_q) n_insns = req_left_q[8:0];
    if (n_insns > to_4k) n_insns = to_4k;
    if ({{(8 - BufCntW){1'b0}}, free} < n_insns) n_insns = {{(8 - BufCntW){1'b0}}, free};
  end
  wire n_ok = (n_insns != 9'd0) &&
              ({23'd0, n_insns} == req_left_q || n_insns == to_4k || n_insns >= Chunk[8:0]);
  wire slot_free = !ar_valid_q || ar_ready_i;
  wire issue = (state_q != StIdle) && !abort_i && !fin_q && slot_free && n_ok;
  wire [9:0] beats = {1'b0, n_insns} << BeatShift;  // <= 256
  wire [1:0] unused_beats = beats[9:8];
  wire [4:0] unused_bits = {insn_addr_i[3:0], r_resp_i[0]};  // aligned; SLVERR and DECERR both have bit 1

  assign ar_valid_o = ar_valid_q;
  assign ar_addr_o  = ar_addr_q;
  assign ar_len_o   = ar_len_q;

  always @* begin
    state_d    = state_q;
    req_left_d = req_left_q;
    req_addr_d = req_addr_q;
    inflight_d = inflight_q;
    ar_valid_d = ar_valid_q;
    ar_addr_d  = ar_addr_q;
    ar_len_d   = ar_len_q;
    idx_d      = idx_q;
    count_d    = count_q;
    fin_d      = fin_q;
    counted_d  = counted_q;

    if (ar_valid_q && ar_ready_i) ar_valid_d = 1'b0;
    if (issue) begin
      ar_valid_d = 1'b1;
      ar_addr_d  = req_addr_q;
      ar_len_d   = beats[7:0] - 8'd1;
      req_addr_d = req_addr_q + {51'd0, n_insns, 4'd0};
      req_left_d = req_left_q - {23'd0, n_insns};
    end
    inflight_d = inflight_q + (issue ? n_insns[BufCntW-1:0] : {BufCntW{1'b0}})
                            - (insn_arrived ? {{(BufCntW-1){1'b0}}, 1'b1} : {BufCntW{1'b0}});

    if (insn_read_o) counted_d = 1'b1;
    if (buf_pop) begin
      counted_d = 1'b0;
      idx_d     = idx_q + 32'd1;
      if (is_finish) begin
        fin_d   = 1'b1;
        state_d = StDone;
      end else if (idx_q + 32'd1 == count_q) begin
        state_d = StDone;
      end
    end

    if (job_start_i) begin
      req_addr_d = {insn_addr_i[63:4], 4'd0};
      req_left_d = insn_count_i;
      count_d    = insn_count_i;
      idx_d      = 32'd0;
      fin_d      = 1'b0;
      counted_d  = 1'b0;
      state_d    = (insn_count_i == 32'd0) ? StDone : StRun;
    end
    if (abort_i) begin
      state_d    = StIdle;
      req_left_d = 32'd0;
      counted_d  = 1'b0;
    end
  end

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q    <= StIdle;
      req_left_q <= 32'd0;
      req_addr_q <= 64'd0;
      inflight_q <= {BufCntW{1'b0}};
      ar_valid_q <= 1'b0;
      ar_addr_q  <= 64'd0;
      ar_len_q   <= 8'd0;
      idx_q      <= 32'd0;
      count_q    <= 32'd0;
      fin_q      <= 1'b0;
      counted_q  <= 1'b0;
    end else begin
      state_q    <= state_d;
      req_left_q <= req_left_d;
      req_addr_q <= req_addr_d;
      inflight_q <= inflight_d;
      ar_valid_q <= ar_valid_d;
      ar_addr_q  <= ar_addr_d;
      ar_len_q   <= ar_len_d;
      idx_q      <= idx_d;
      count_q    <= count_d;
      fin_q      <= fin_d;
      counted_q  <= counted_d;
    end
  end
endmodule
