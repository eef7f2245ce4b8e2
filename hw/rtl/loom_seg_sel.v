// loom_seg_sel - picks one entry of the segment table.
//
// An explicit 8-way multiplexer: written as a variable part-select of the
// flat 512-bit table, synthesis builds a barrel shifter several times the
// size.
module loom_seg_sel #(
  parameter integer NumSeg = 8,
  localparam integer SelW  = $clog2(NumSeg)
) (
  input  wire [NumSeg*64-1:0] seg_base_i,
  input  wire [NumSeg*64-1:0] seg_size_i,
  input  wire [SelW-1:0]      sel_i,
  output reg  [63:0]          base_o,
  output reg  [63:0]          size_o
);
  integer s;
  always @* begin
    base_o = 64'd0;
    size_o = 64'd0;
    for (s = 0; s < NumSeg; s = s + 1) begin
      if (sel_i == s[SelW-1:0]) begin
        base_o = seg_base_i[64*s +: 64];
        size_o = seg_size_i[64*s +: 64];
      end
    end
  end
endmodule
