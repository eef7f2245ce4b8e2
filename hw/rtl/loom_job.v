// loom_job - the life of one job: start, end, errors, NOFINISH, DEADLOCK,
// soft reset.
//
// StIdle -> StRun on START (job_start_o pulses: queues, token queues,
// counters and the requantization registers clear).  The job ends, in
// StRun, at the first of:
//   - an error raised by fetch, load, compute or store (the first one is
//     kept; simultaneous ones are ranked fetch, load, compute, store);
//   - FINISH completing in compute (no error);
//   - NOFINISH: fetch reached the end of the stream without FINISH and
//     every module is idle with an empty command queue (ERR_INSN =
//     INSN_COUNT, as fsim reports it);
//   - DEADLOCK: fetch is finished or waits on a full command queue and
//     every module is blocked (loom_insn_seq's blocked_o: waiting on a token
//     queue or idle with nothing queued; compute's FINISH waiting for the
//     drain), while not all of them are drained.  Nothing can then ever
//     change, because every module's progress waits on another's.  The
//     verdict is taken after the condition held for two cycles.  ERR_INSN is
//     the smallest stream index among the modules holding an instruction,
//     as fsim reports it;
//   - SOFT_RESET.
// Then StDrain holds abort_o until every unit reports quiet (no bus
// transaction in flight, engines idle) and returns to StIdle, pulsing
// done_o unless the job was soft-reset.
`include "loom_isa.vh"

module loom_job (
  input  wire        clk_i,
  input  wire        rst_ni,
  // from loom_ctrl
  input  wire        start_req_i,
  output wire        start_ack_o,
  input  wire        soft_reset_i,
  input  wire [31:0] insn_count_i,
  // unit status: index 0 fetch, 1 load, 2 compute, 3 store
  input  wire [3:0]  err_valid_i,
  input  wire [15:0] err_code_i,
  input  wire [127:0] err_idx_i,
  input  wire        finish_i,
  input  wire        fetch_eos_i,
  input  wire        fetch_blocked_i,
  input  wire [2:0]  mod_drained_i,
  input  wire [2:0]  mod_blocked_i,
  input  wire [2:0]  mod_idle_i,
  input  wire [95:0] mod_idx_i,
  input  wire [3:0]  quiet_i,
  // job control
  output wire        job_start_o,
  output wire        abort_o,
  output wire        running_o,
  output wire        idle_o,
  output wire        done_o,
  output wire        soft_busy_o,
  output wire [3:0]  err_code_o,
  output wire [31:0] err_insn_o
);
  localparam [1:0] StIdle  = 2'd0,
                   StRun   = 2'd1,
                   StDrain = 2'd2;

  reg [1:0]  state_q, state_d;
  reg        soft_q, soft_d;
  reg [3:0]  code_q, code_d;
  reg [31:0] insn_q, insn_d;
  reg        dead_q, dead_d;
  reg        start_q, start_d;
  reg        done_d;

  wire all_drained = &mod_drained_i;
  wire nofinish    = fetch_eos_i && all_drained;
  wire deadlock    = fetch_blocked_i && (&mod_blocked_i) && !all_drained;

  // Smallest stream index among the modules that hold an instruction,
  // registered: the verdict is taken in the second cycle of a deadlock, and
  // in a deadlock nothing changes, so the index registered in the first
  // cycle is the one of the second (docs/rtl.md, "Timing": the three 32-bit
  // compares no longer run on into the ERR_INSN register).
  reg [31:0] dead_idx, dead_idx_q;
  // The three pairwise compares side by side, then a pick, so no compare
  // waits on another (equal indices are one value, whichever module has it).
  wire [31:0] idx0 = mod_idx_i[31:0], idx1 = mod_idx_i[63:32], idx2 = mod_idx_i[95:64];
  wire        h0 = !mod_idle_i[0], h1 = !mod_idle_i[1], h2 = !mod_idle_i[2];
  wire        le01 = idx0 <= idx1, le02 = idx0 <= idx2, le12 = idx1 <= idx2;
  wire        win0 = h0 && (!h1 || le01) && (!h2 || le02);
  wire        win1 = h1 && (!h2 || le12);
  always @* begin
    if (win0)      dead_idx = idx0;
    else if (win1) dead_idx = idx1;
    else if (h2)   dead_idx = idx2;
    else           dead_idx = 32'hFFFF_FFFF;
  end

  // The first error, ranked by unit.
  reg [3:0]  first_code;
  reg [31:0] first_idx;
  integer u;
  always @* begin
    first_code = `LOOM_ERR_NONE;
    first_idx  = 32'd0;
    for (u = 3; u >= 0; u = u - 1)
      if (err_valid_i[u]) begin
        first_code = err_code_i[4*u +: 4];
        first_idx  = err_idx_i[32*u +: 32];
      end
  end

  assign start_ack_o = start_q;
  assign job_start_o = start_q;
  // abort_o from a flip-flop of its own (state_d == StDrain a cycle
  // earlier): no decode in front of the net that reaches every unit.
  reg drain_q;
  assign abort_o     = drain_q;
  assign running_o   = (state_q != StIdle);
  assign idle_o      = (state_q == StIdle);
  assign done_o      = done_d;  // with the step to StIdle, so DONE and IDLE rise together
  assign soft_busy_o = (state_q == StDrain) && soft_q;
  assign err_code_o  = code_q;
  assign err_insn_o  = insn_q;

  always @* begin
    state_d = state_q;
    soft_d  = soft_q;
    code_d  = code_q;
    insn_d  = insn_q;
    dead_d  = 1'b0;
    start_d = 1'b0;
    done_d  = 1'b0;
    case (state_q)
      StIdle: begin
        if (soft_reset_i) begin
          // Nothing runs; still sweep every unit back to idle.
          state_d = StDrain;
          soft_d  = 1'b1;
          code_d  = `LOOM_ERR_NONE;
          insn_d  = 32'd0;
        end else if (start_req_i) begin
          state_d = StRun;
          start_d = 1'b1;
          soft_d  = 1'b0;
          code_d  = `LOOM_ERR_NONE;
          insn_d  = 32'd0;
        end
      end
      StRun: begin
        // start_q (job_start) is high in the first StRun cycle; every
        // status input is meaningful from the next one.
        if (start_q) begin
          state_d = StRun;
        end else if (soft_reset_i) begin
          state_d = StDrain;
          soft_d  = 1'b1;
          code_d  = `LOOM_ERR_NONE;
          insn_d  = 32'd0;
        end else if (err_valid_i != 4'd0) begin
          state_d = StDrain;
          code_d  = first_code;
          insn_d  = first_idx;
        end else if (finish_i) begin
          state_d = StDrain;
        end else if (nofinish) begin
          state_d = StDrain;
          code_d  = `LOOM_ERR_NOFINISH;
          insn_d  = insn_count_i;
        end else if (deadlock) begin
          dead_d = 1'b1;
          if (dead_q) begin
            state_d = StDrain;
            code_d  = `LOOM_ERR_DEADLOCK;
            insn_d  = dead_idx_q;
          end
        end
      end
      StDrain: begin
        if (soft_reset_i) begin
          soft_d = 1'b1;
          code_d = `LOOM_ERR_NONE;
          insn_d = 32'd0;
        end
        if (&quiet_i) begin
          state_d = StIdle;
          done_d  = !soft_q && !soft_reset_i;
        end
      end
      default: state_d = StIdle;
    endcase
  end

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q <= StIdle;
      soft_q  <= 1'b0;
      code_q  <= `LOOM_ERR_NONE;
      insn_q  <= 32'd0;
      dead_q  <= 1'b0;
      start_q <= 1'b0;
      dead_idx_q <= 32'd0;
      drain_q <= 1'b0;
    end else begin
      state_q <= state_d;
      soft_q  <= soft_d;
      code_q  <= code_d;
      insn_q  <= insn_d;
      dead_q  <= dead_d;
      start_q <= start_d;
      dead_idx_q <= dead_idx;
      drain_q <= (state_d == StDrain);
    end
  end
endmodule
