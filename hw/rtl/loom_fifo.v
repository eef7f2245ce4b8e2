// loom_fifo - synchronous first-word-fall-through FIFO.
//
// Holds exactly Depth entries (any Depth >= 1, not only powers of two): the
// command queues rely on this, because their capacity is part of the ISA
// (docs/isa.md) and fsim's deadlock verdicts assume it.  A write is refused
// while the FIFO is full even if a read happens in the same cycle, so a
// producer sees "full" exactly as a blocking write of a Kahn process would.
// The storage is a plain array with an asynchronous read, which synthesis
// maps to distributed RAM; rdata_o is valid whenever rvalid_o is.
// clr_i empties the FIFO (job start, abort).
module loom_fifo #(
  parameter integer Width = 8,
  parameter integer Depth = 4,
  localparam integer CntW = $clog2(Depth + 1)
) (
  input  wire                  clk_i,
  input  wire                  rst_ni,
  input  wire                  clr_i,
  input  wire                  wvalid_i,
  output wire                  wready_o,
  input  wire [Width-1:0]      wdata_i,
  output wire                  rvalid_o,
  input  wire                  rready_i,
  output wire [Width-1:0]      rdata_o,
  output wire [CntW-1:0]       count_o
);
  localparam integer PtrW = (Depth > 1) ? $clog2(Depth) : 1;
  localparam [PtrW-1:0] LAST = Depth[PtrW-1:0] - {{(PtrW-1){1'b0}}, 1'b1};

  // Illegal parameter combinations fail at elaboration.
  generate
    if (Depth < 1 || Width < 1) begin : g_bad_params
      loom_fifo_illegal_parameters u_illegal ();
    end
  endgenerate

  reg [Width-1:0] mem [0:Depth-1];
  reg [PtrW-1:0]  wptr_q, wptr_d, rptr_q, rptr_d;
  reg [CntW-1:0]  count_q, count_d;

  wire full  = (count_q == Depth[CntW-1:0]);
  wire empty = (count_q == {CntW{1'b0}});
  wire push  = wvalid_i && !full;
  wire pop   = rready_i && !empty;

  assign wready_o = !full;
  assign rvalid_o = !empty;
  assign rdata_o  = mem[rptr_q];
  assign count_o  = count_q;

  always @* begin
    wptr_d  = wptr_q;
    rptr_d  = rptr_q;
    count_d = count_q;
    if (clr_i) begin
      wptr_d  = {PtrW{1'b0}};
      rptr_d  = {PtrW{1'b0}};
      count_d = {CntW{1'b0}};
    end else begin
      if (push) wptr_d = (wptr_q == LAST) ? {PtrW{1'b0}} : wptr_q + {{(PtrW-1){1'b0}}, 1'b1};
      if (pop)  rptr_d = (rptr_q == LAST) ? {PtrW{1'b0}} : rptr_q + {{(PtrW-1){1'b0}}, 1'b1};
      if (push && !pop) count_d = count_q + {{(CntW-1){1'b0}}, 1'b1};
      if (pop && !push) count_d = count_q - {{(CntW-1){1'b0}}, 1'b1};
    end
  end

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      wptr_q  <= {PtrW{1'b0}};
      rptr_q  <= {PtrW{1'b0}};
      count_q <= {CntW{1'b0}};
    end else begin
      wptr_q  <= wptr_d;
      rptr_q  <= rptr_d;
      count_q <= count_d;
    end
  end

  // Storage: written only, never reset (distributed RAM).
  always @(posedge clk_i) begin
    if (push && !clr_i) mem[wptr_q] <= wdata_i;
  end
endmodule
