// loom_perf - the 64-bit performance counters (docs/registers.md).
//
// Counter i adds inc_i[8*i +: 8] every cycle; loom_top turns each event
// into its increment (1 per cycle or micro-op or instruction, the bytes of
// a bus beat, 4 per micro-op, 16 per instruction).  Every counter clears at
// job start and then holds its value after done until the next start, so
// software reads the finished job's figures.
//
// The increments are registered first (docs/rtl.md, "Timing": the event
// logic of loom_top no longer runs on into a 64-bit add), so a counter
// shows an event one cycle late; an increment of the clearing cycle is
// dropped as before, and the job's figures are complete long before
// software can read them (done waits for the drain).
module loom_perf #(
  parameter integer NumCnt = 21
) (
  input  wire                 clk_i,
  input  wire                 rst_ni,
  input  wire                 clr_i,
  input  wire [NumCnt*8-1:0]  inc_i,
  output wire [NumCnt*64-1:0] counters_o
);
  reg [NumCnt*8-1:0] inc_q;
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni)    inc_q <= {NumCnt*8{1'b0}};
    else if (clr_i) inc_q <= {NumCnt*8{1'b0}};
    else            inc_q <= inc_i;
  end

  genvar i;
  generate
    for (i = 0; i < NumCnt; i = i + 1) begin : g_cnt
      reg [63:0] cnt_q, cnt_d;
      always @* begin
        cnt_d = cnt_q + {56'd0, inc_q[8*i +: 8]};
        if (clr_i) cnt_d = 64'd0;
      end
      always @(posedge clk_i or negedge rst_ni) begin
        if (!rst_ni) cnt_q <= 64'd0;
        else         cnt_q <= cnt_d;
      end
      assign counters_o[64*i +: 64] = cnt_q;
    end
  endgenerate
endmodule
