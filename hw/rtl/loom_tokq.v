// loom_tokq - one dependency-token queue (docs/isa.md, "Machine model").
//
// Tokens carry no data, so the queue is a counter from 0 to Depth.  A push
// is refused while Depth tokens are held and a pop while none are, so the
// capacity is exactly the configuration's token_queue_depth.  A push and a
// pop in the same cycle are both taken (when each is allowed on its own).
// clr_i empties the queue at job start.
module loom_tokq #(
  parameter integer Depth = 4
) (
  input  wire clk_i,
  input  wire rst_ni,
  input  wire clr_i,
  input  wire push_i,
  input  wire pop_i,
  output wire full_o,
  output wire empty_o
);
  localparam integer CntW = $clog2(Depth + 1);

  generate
    if (Depth < 1) begin : g_bad_params
      loom_tokq_illegal_parameters u_illegal ();
    end
  endgenerate

  reg [CntW-1:0] count_q, count_d;

  assign full_o  = (count_q == Depth[CntW-1:0]);
  assign empty_o = (count_q == {CntW{1'b0}});

  wire push = push_i && !full_o;
  wire pop  = pop_i && !empty_o;

  always @* begin
    count_d = count_q;
    if (clr_i) count_d = {CntW{1'b0}};
    else if (push && !pop) count_d = count_q + {{(CntW-1){1'b0}}, 1'b1};
    else if (pop && !push) count_d = count_q - {{(CntW-1){1'b0}}, 1'b1};
  end

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) count_q <= {CntW{1'b0}};
    else         count_q <= count_d;
  end
endmodule
