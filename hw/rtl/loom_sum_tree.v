// loom_sum_tree - pipelined adder tree: sum_o = sum of N signed inputs.
//
// Exact: the output is InW + log2(N) bits wide.  Levels are combinational
// in pairs; the result of every second level, and of the last one, is
// registered, so the latency is (log2(N) + 1) / 2 cycles (0 for
// N == 1).  All levels live in one flat vector: level l starts at element
// 2N - 2N / 2^l, every element OutW bits wide (synthesis trims the unused
// high bits of the lower levels).
module loom_sum_tree #(
  parameter integer N   = 16,
  parameter integer InW = 16,
  localparam integer L    = $clog2(N),
  localparam integer OutW = InW + L
) (
  input  wire              clk_i,
  input  wire [N*InW-1:0]  in_i,
  output wire [OutW-1:0]   sum_o
);
  generate
    if ((1 << L) != N) begin : g_bad_params
      loom_sum_tree_n_must_be_a_power_of_two u_illegal ();
    end
  endgenerate

  wire [(2*N-1)*OutW-1:0] t /* verilator split_var */;

  genvar i, l;
  generate
    for (i = 0; i < N; i = i + 1) begin : g_in
      assign t[i*OutW +: OutW] = {{L{in_i[i*InW + InW - 1]}}, in_i[i*InW +: InW]};
    end
    for (l = 1; l <= L; l = l + 1) begin : g_lvl
      for (i = 0; i < (N >> l); i = i + 1) begin : g_add
        localparam integer Src = 2 * N - ((2 * N) >> (l - 1)) + 2 * i;
        localparam integer Dst = 2 * N - ((2 * N) >> l) + i;
        wire [OutW-1:0] s = t[Src*OutW +: OutW] + t[(Src+1)*OutW +: OutW];
        if ((l % 2) == 0 || l == L) begin : g_reg
          reg [OutW-1:0] s_q;
          always @(posedge clk_i) s_q <= s;
          assign t[Dst*OutW +: OutW] = s_q;
        end else begin : g_comb
          assign t[Dst*OutW +: OutW] = s;
        end
      end
    end
  endgenerate

  assign sum_o = t[(2*N-2)*OutW +: OutW];
endmodule
