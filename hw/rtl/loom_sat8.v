// loom_sat8 - narrows int32 lanes to int8 with saturation: OUT = sat8(ACC)
// (docs/isa.md), for every writer of the OUT buffer (GEMM, ALU, LOAD ACC).
//
// Lane i of a_i (bits 32i..32i+31, two's complement) becomes lane i of y_o
// (bits 8i..8i+7): -128 below -128, 127 above 127, else its low byte.
module loom_sat8 #(
  parameter integer Lanes = 16
) (
  input  wire [Lanes*32-1:0] a_i,
  output wire [Lanes*8-1:0]  y_o
);
  genvar i;
  generate
    for (i = 0; i < Lanes; i = i + 1) begin : g_lane
      wire [31:0] a = a_i[32*i +: 32];
      assign y_o[8*i +: 8] = ($signed(a) < -32'sd128) ? 8'h80 :
                             ($signed(a) > 32'sd127)  ? 8'h7F : a[7:0];
    end
  endgenerate
endmodule
