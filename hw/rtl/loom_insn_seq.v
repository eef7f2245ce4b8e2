// loom_insn_seq - the instruction life cycle shared by load, compute and
// store (docs/isa.md, "For every instruction a module ...").
//
// Takes the next instruction from the module's command queue only when the
// module has none (so the queue's capacity does not count the current one),
// pops the tokens its flags name (prev first, then next; waiting while the
// queue is empty), hands it to the module's engine and waits for
// exec_done_i, then pushes tokens (prev first, then next; waiting while
// full).  Each wait is a blocking access to a bounded queue and is reported
// on blocked_o, which loom_job combines into the deadlock verdict; the
// states the ISA calls "nothing to do" (idle with an empty command queue)
// count as blocked too.  Phases whose flag is clear are skipped without a
// cycle.  abort_i returns to idle at once (the engine drains its own bus
// traffic) and keeps the queue untouched.
`include "loom_isa.vh"

module loom_insn_seq #(
  parameter integer CmdW = `LOOM_CMD_BITS
) (
  input  wire            clk_i,
  input  wire            rst_ni,
  input  wire            abort_i,
  // command queue head
  input  wire            cmd_valid_i,
  input  wire [CmdW-1:0] cmd_data_i,
  output wire            cmd_pop_o,
  // token queues (prev: shared with the previous module, next: the next one)
  input  wire            prev_empty_i,
  input  wire            prev_full_i,
  input  wire            next_empty_i,
  input  wire            next_full_i,
  output wire            pop_prev_o,
  output wire            pop_next_o,
  output wire            push_prev_o,
  output wire            push_next_o,
  // the engine
  output wire            exec_start_o,
  output wire [CmdW-1:0] cmd_o,
  input  wire            exec_done_i,
  // status
  output wire            idle_o,
  output wire            blocked_o,
  output wire            tok_stall_o,
  output wire            insn_done_o
);
  localparam [2:0] StIdle     = 3'd0,
                   StPopPrev  = 3'd1,
                   StPopNext  = 3'd2,
                   StExec     = 3'd3,
                   StPushPrev = 3'd4,
                   StPushNext = 3'd5;

  reg [2:0]      state_q, state_d;
  reg [CmdW-1:0] cmd_q, cmd_d;
  reg            start_q, start_d;

  wire f_pop_next  = cmd_q[`LOOM_COMMON_POP_NEXT_LSB];
  wire f_push_prev = cmd_q[`LOOM_COMMON_PUSH_PREV_LSB];
  wire f_push_next = cmd_q[`LOOM_COMMON_PUSH_NEXT_LSB];
  wire n_pop_prev  = cmd_data_i[`LOOM_COMMON_POP_PREV_LSB];
  wire n_pop_next  = cmd_data_i[`LOOM_COMMON_POP_NEXT_LSB];

  wire in_idle      = (state_q == StIdle);
  wire in_pop_prev  = (state_q == StPopPrev);
  wire in_pop_next  = (state_q == StPopNext);
  wire in_exec      = (state_q == StExec);
  wire in_push_prev = (state_q == StPushPrev);
  wire in_push_next = (state_q == StPushNext);

  assign cmd_pop_o   = in_idle && cmd_valid_i && !abort_i;
  assign pop_prev_o  = in_pop_prev && !prev_empty_i && !abort_i;
  assign pop_next_o  = in_pop_next && !next_empty_i && !abort_i;
  assign push_prev_o = in_push_prev && !prev_full_i && !abort_i;
  assign push_next_o = in_push_next && !next_full_i && !abort_i;
  assign exec_start_o = start_q;
  assign cmd_o        = cmd_q;
  assign idle_o       = in_idle;
  assign tok_stall_o  = (in_pop_prev && prev_empty_i) || (in_pop_next && next_empty_i) ||
                        (in_push_prev && prev_full_i) || (in_push_next && next_full_i);
  assign blocked_o    = tok_stall_o || (in_idle && !cmd_valid_i);
  assign insn_done_o  = in_exec && exec_done_i && !abort_i;

  // The phase after the pops, and after the pushes, given the flags.
  function [2:0] after_pops(input pp, input pn);
    after_pops = pp ? StPopPrev : (pn ? StPopNext : StExec);
  endfunction
  function [2:0] after_exec(input hp, input hn);
    after_exec = hp ? StPushPrev : (hn ? StPushNext : StIdle);
  endfunction

  always @* begin
    state_d = state_q;
    cmd_d   = cmd_q;
    start_d = 1'b0;
    case (state_q)
      StIdle: begin
        if (cmd_pop_o) begin
          cmd_d   = cmd_data_i;
          state_d = after_pops(n_pop_prev, n_pop_next);
        end
      end
      StPopPrev: if (pop_prev_o) state_d = f_pop_next ? StPopNext : StExec;
      StPopNext: if (pop_next_o) state_d = StExec;
      StExec:    if (exec_done_i) state_d = after_exec(f_push_prev, f_push_next);
      StPushPrev: if (push_prev_o) state_d = f_push_next ? StPushNext : StIdle;
      StPushNext: if (push_next_o) state_d = StIdle;
      default:   state_d = StIdle;
    endcase
    if (state_d == StExec && state_q != StExec) start_d = 1'b1;
    if (abort_i) begin
      state_d = StIdle;
      start_d = 1'b0;
    end
  end

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q <= StIdle;
      start_q <= 1'b0;
    end else begin
      state_q <= state_d;
      start_q <= start_d;
    end
  end

  always @(posedge clk_i) begin
    cmd_q <= cmd_d;
  end
endmodule
