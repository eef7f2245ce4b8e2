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
  reg [8:0]         to4k_q, to4k_d;          // instructions from req_addr_q to the 4 KiB line
  reg [8:0]         a_q, a_d;                // min(MaxBurst, req_left_q, to4k_q)
  reg               a_ok_q, a_ok_d;          // a burst of a_q would be issued
  reg               near_q, near_d;          // req_left_q <= 2 MaxBurst
  reg [BufCntW-1:0] room_q, room_d;          // BufDepth - buffered - in flight
  reg [63:0]        req_addr_q, req_addr_d;
  reg [BufCntW-1:0] inflight_q, inflight_d;
  reg               ar_valid_q, ar_valid_d;
  reg [63:0]        ar_addr_q, ar_addr_d;
  reg [7:0]         ar_len_q, ar_len_d;
  reg [31:0]        idx_q, idx_d;
  reg [31:0]        count_q, count_d;
  reg               fin_q, fin_d;
  reg               counted_q, counted_d;

  // ---- instruction buffer: {decode, bus error, instruction}
  // Each instruction is decoded as it arrives and its verdict (legal,
  // queue, FINISH) is buffered with it, so dispatch reads the head's
  // decode instead of computing it behind the buffer's read (docs/rtl.md,
  // "Timing"); the decode depends on the instruction alone.
  wire               buf_wvalid;
  wire [128:0]       buf_wdata;
  wire               buf_rvalid;
  wire [132:0]       buf_rdata;
  wire               buf_pop;
  wire [BufCntW-1:0] buf_count;
  wire               buf_wready;
  wire               insn_arrived;

  wire       in_legal, in_finish;
  wire [1:0] in_queue;
  loom_insn_decode u_decode (
    .insn_i   (buf_wdata[127:0]),
    .legal_o  (in_legal),
    .queue_o  (in_queue),
    .finish_o (in_finish)
  );

  loom_fifo #(.Width(133), .Depth(BufDepth)) u_buf (
    .clk_i    (clk_i),
    .rst_ni   (rst_ni),
    .clr_i    (job_start_i || abort_i),
    .wvalid_i (buf_wvalid),
    .wready_o (buf_wready),
    .wdata_i  ({in_legal, in_queue, in_finish, buf_wdata}),
    .rvalid_o (buf_rvalid),
    .rready_i (buf_pop),
    .rdata_o  (buf_rdata),
    .count_o  (buf_count)
  );
  wire unused_buf_wready = buf_wready;  // never full: reads are issued against free room
  wire [BufCntW-1:0] unused_buf_count = buf_count;  // room_q follows it

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
  wire         is_finish = buf_rdata[129];
  wire [1:0]   queue     = buf_rdata[131:130];
  wire         legal     = buf_rdata[132];

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
  // A burst reads n = min(MaxBurst, instructions left, instructions to the
  // 4 KiB line, free room) instructions, and is issued once n reaches the
  // stream's end, the line, or Chunk.  To keep that decision two small
  // compares deep (docs/rtl.md, "Timing"), the first three terms are kept
  // reduced in registers: a_q = min(MaxBurst, left, to the line) and a_ok_q
  // (a burst of a_q would be issued), with room_q, the buffer's entries not
  // yet filled or requested.  After a burst the terms are those of either
  // n = a_q or n = room_q, both prepared from the registers.  Same bursts in
  // the same cycles as computing every term from the counters.
  // The terms of `left` instructions left (near_q: left <= 2 MaxBurst, so
  // its low bits are all of it) and `to4k` to the line.
  function [10:0] terms(input [8:0] left_lo, input near, input [8:0] to4k);  // {a_ok, 0, a}
    reg       le, ok;
    reg [8:0] tcap;
    begin
      le   = near && (left_lo <= MaxBurst[8:0]);   // left <= MaxBurst
      tcap = (to4k > MaxBurst[8:0]) ? MaxBurst[8:0] : to4k;
      // a = min(left, MaxBurst, to4k) would end the stream, reach the line,
      // or be at least Chunk: three parallel compares, not one after a.
      ok   = (le && left_lo != 9'd0 && left_lo <= tcap) ||
             (to4k <= MaxBurst[8:0] && (!le || to4k <= left_lo)) ||
             ((!le || left_lo >= Chunk[8:0]) && to4k >= Chunk[8:0]);
      terms = {ok, 1'b0, (le && left_lo < tcap) ? left_lo : tcap};
    end
  endfunction
  localparam [31:0] Near = 2 * MaxBurst;
  localparam [9:0]  MB10 = MaxBurst[9:0];
  localparam [9:0]  CH10 = Chunk[9:0];

  // The terms after a burst of n: terms(L - n, near, n == T ? 256 : T - n)
  // for L the low bits of the instructions left and T the instructions to
  // the line, rewritten so that every compare is between the registers and
  // n (plus a constant), side by side, instead of behind the two
  // subtractions (docs/rtl.md, "Timing").  It relies on n <= T and, when
  // near, n <= L (a burst never passes the line or the stream's end).
  function [10:0] terms_after(input [8:0] l, input near, input [8:0] t, input [8:0] n);
    reg [9:0] l10, t10, nmb, nch;
    reg       line, tbig, le, lt, t1, t2, t3;
    begin
      l10  = {1'b0, l};
      t10  = {1'b0, t};
      nmb  = {1'b0, n} + MB10;
      nch  = {1'b0, n} + CH10;
      line = (n == t);                       // the new T is 256
      tbig = line || (t10 > nmb);            // the new T > MaxBurst
      le   = near && (l10 <= nmb);           // the new left <= MaxBurst
      lt   = le && (tbig ? (l10 < nmb) : (l10 < t10));
      t1   = le && (l != n) && (tbig || (l10 <= t10));
      t2   = !tbig && (!le || (t10 <= l10));
      t3   = (!le || (l10 >= nch)) && (line || (t10 >= nch));
      terms_after = {t1 || t2 || t3, 1'b0, lt ? l - n : (tbig ? MB10[8:0] : t - n)};
    end
  endfunction

  wire [8:0] room    = {{(9 - BufCntW){1'b0}}, room_q};
  wire       room_lt = (room < a_q);
  wire [8:0] n_insns = room_lt ? room : a_q;
  wire       n_ok    = room_lt ? (room >= Chunk[8:0]) : a_ok_q;
  // ar_ready_i comes late (the arbiter's grant): everything a burst
  // changes is worked out for both outcomes first and `issue` picks.
  wire slot_free = !ar_valid_q || ar_ready_i;
  wire issue_ok  = (state_q != StIdle) && !abort_i && !fin_q && n_ok;
  wire issue     = issue_ok && slot_free;
  wire [9:0] beats = {1'b0, n_insns} << BeatShift;  // <= 256
  wire [1:0] unused_beats = beats[9:8];
  wire [4:0] unused_bits = {insn_addr_i[3:0], r_resp_i[0]};  // aligned; SLVERR and DECERR both have bit 1

  // The counters after a burst of a_q (1) or of room_q (2) instructions.
  wire [31:0] left1 = req_left_q - {23'd0, a_q};
  wire [31:0] left2 = req_left_q - {23'd0, room};
  wire [8:0]  to4k1 = (a_q == to4k_q) ? 9'd256 : to4k_q - a_q;
  wire [8:0]  to4k2 = (room == to4k_q) ? 9'd256 : to4k_q - room;
  // near_q: req_left_q <= 2 MaxBurst; a burst takes at most MaxBurst, so
  // the low bits suffice for the next terms (terms_after), and the full
  // subtraction only has to say whether the result is near, a cycle later.
  wire [10:0] terms1 = terms_after(req_left_q[8:0], near_q, to4k_q, a_q);
  wire [10:0] terms2 = terms_after(req_left_q[8:0], near_q, to4k_q, room);
  wire [10:0] terms0 = terms(insn_count_i[8:0], insn_count_i <= Near, 9'd256 - {1'b0, insn_addr_i[11:4]});
  wire [1:0]  unused_terms = {terms0[9], terms1[9] ^ terms2[9]};
  wire [BufCntW-1:0] inflight_0 = inflight_q - {{(BufCntW-1){1'b0}}, insn_arrived};
  wire [BufCntW-1:0] inflight_1 = inflight_0 + n_insns[BufCntW-1:0];
  wire [BufCntW-1:0] inflight_n = issue ? inflight_1 : inflight_0;
  wire [BufCntW-1:0] room_freed = {{(BufCntW-1){1'b0}}, buf_pop}
                                  + {{(BufCntW-1){1'b0}}, insn_arrived && !buf_wvalid};
  wire [BufCntW-1:0] room_0 = room_q + room_freed;
  wire [BufCntW-1:0] room_1 = (room_lt ? {BufCntW{1'b0}} : room_q - a_q[BufCntW-1:0]) + room_freed;
  wire [BufCntW-1:0] room_clr_0 = BufDepth[BufCntW-1:0] - inflight_0;
  wire [BufCntW-1:0] room_clr_1 = BufDepth[BufCntW-1:0] - inflight_1;

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

    to4k_d = to4k_q;
    near_d = near_q;
    a_d    = a_q;
    a_ok_d = a_ok_q;
    // the buffer's room: reserved by a request, freed by a pop, by a clear
    // (job start, abort) and by an instruction that arrives while not
    // running (dropped)
    room_d = issue ? room_1 : room_0;

    if (ar_valid_q && ar_ready_i) ar_valid_d = 1'b0;
    if (issue) begin
      ar_valid_d   = 1'b1;
      ar_addr_d    = req_addr_q;
      ar_len_d     = beats[7:0] - 8'd1;
      req_addr_d   = req_addr_q + {51'd0, n_insns, 4'd0};
      req_left_d   = room_lt ? left2 : left1;
      to4k_d       = room_lt ? to4k2 : to4k1;
      a_d          = room_lt ? terms2[8:0] : terms1[8:0];
      a_ok_d       = room_lt ? terms2[10] : terms1[10];
      near_d       = room_lt ? (left2 <= Near) : (left1 <= Near);
    end
    inflight_d = inflight_n;

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

    if (job_start_i || abort_i) room_d = issue ? room_clr_1 : room_clr_0;
    if (job_start_i) begin
      req_addr_d   = {insn_addr_i[63:4], 4'd0};
      to4k_d       = 9'd256 - {1'b0, insn_addr_i[11:4]};
      req_left_d   = insn_count_i;
      a_d          = terms0[8:0];
      a_ok_d       = terms0[10];
      near_d       = (insn_count_i <= Near);
      count_d    = insn_count_i;
      idx_d      = 32'd0;
      fin_d      = 1'b0;
      counted_d  = 1'b0;
      state_d    = (insn_count_i == 32'd0) ? StDone : StRun;
    end
    if (abort_i) begin
      state_d      = StIdle;
      req_left_d   = 32'd0;
      a_d          = 9'd0;
      a_ok_d       = 1'b0;
      near_d       = 1'b1;
      counted_d    = 1'b0;
    end
  end

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q    <= StIdle;
      req_left_q <= 32'd0;
      to4k_q     <= 9'd256;
      a_q        <= 9'd0;
      a_ok_q     <= 1'b0;
      near_q     <= 1'b1;
      room_q     <= BufDepth[BufCntW-1:0];
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
      to4k_q     <= to4k_d;
      a_q        <= a_d;
      a_ok_q     <= a_ok_d;
      near_q     <= near_d;
      room_q     <= room_d;
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
