// loom_gemm - the GEMM core datapath: one micro-op per cycle, II = 1.
//
// For a micro-op (a, x, w) it computes, for every batch row b and output
// lane o, ACC[a][b][o] += sum_k INP[x][b][k] * WGT[w][o][k] (or writes
// zero when reset_i), and OUT[a] = sat8(ACC[a]).  Stages, from the issue
// cycle E0:
//   E0       INP and WGT reads issued (registered block RAM reads)
//   E1..E4   products: loom_mul2 packs the two lanes o = 2p, 2p+1 that
//            share INP[x][b][k] into one DSP (A/B, M and P registers)
//   E4..ED   loom_sum_tree over k (registered every second level)
//   ED-1     ACC[a] read issued, so it arrives with the dot product
//   ED       sum = ACC[a] + dot (mod 2^32), written to ACC and OUT
// The accumulator is read as late as possible, so the only micro-op whose
// write is not yet in the RAM when another reads the same row is the one
// right before it: its sum is forwarded (last_*) instead of the RAM data.
// Back-to-back micro-ops on one row therefore still run at one per cycle
// and always see the finished value.  Nothing here stalls; busy_o is high
// while any micro-op is in flight.
//
// ISA v2: a `first` micro-op adds its dot product to zero instead of the
// row; in a `last` GEMM (last_i) only the final micro-ops update OUT, and
// not here: at ED-1 such a micro-op is handed to the epilogue (epi_*_o,
// the ALU lanes, loom_alu), which takes its sum at ED and writes E(sum)
// into OUT.  In depthwise mode (dw_i) the multipliers' inputs come from
// loom_dw_win (dx_i, per cell, two phases per micro-op): the micro-op is
// issued with its phase 0, so its write stage sees phase 1's dot products
// (odd lanes) while phase 0's (even lanes) wait one cycle in dot_even_q.
module loom_gemm #(
  parameter integer Batch    = 1,
  parameter integer BlockIn  = 16,
  parameter integer BlockOut = 16,
  parameter integer InpAddrW = 11,
  parameter integer WgtAddrW = 10,
  parameter integer AccAddrW = 11,
  localparam integer InpBits = Batch * BlockIn * 8,
  localparam integer WgtBits = BlockOut * BlockIn * 8,
  localparam integer Lanes   = Batch * BlockOut,
  localparam integer AccBits = Lanes * 32,
  localparam integer OutBits = Lanes * 8
) (
  input  wire                clk_i,
  input  wire                rst_ni,
  input  wire                abort_i,
  input  wire                issue_i,
  input  wire                reset_i,
  input  wire                first_i,
  input  wire                final_i,
  input  wire [4:0]          p_i,
  input  wire [AccAddrW-1:0] a_i,
  input  wire [InpAddrW-1:0] x_i,
  input  wire                wre_i,      // WGT read (with the issue, or the cycle before a dw phase 0)
  input  wire [WgtAddrW-1:0] w_i,
  input  wire                last_i,     // the instruction is a `last` GEMM
  input  wire                dw_i,       // depthwise micro-ops
  input  wire [Batch*(BlockOut/2)*BlockIn*8-1:0] dx_i,
  output wire                inp_re_o,
  output wire [InpAddrW-1:0] inp_raddr_o,
  input  wire [InpBits-1:0]  inp_rdata_i,
  output wire                wgt_re_o,
  output wire [WgtAddrW-1:0] wgt_raddr_o,
  input  wire [WgtBits-1:0]  wgt_rdata_i,
  output wire                acc_re_o,
  output wire [AccAddrW-1:0] acc_raddr_o,
  input  wire [AccBits-1:0]  acc_rdata_i,
  output wire                acc_we_o,
  output wire [AccAddrW-1:0] acc_waddr_o,
  output wire [AccBits-1:0]  acc_wdata_o,
  output wire [OutBits-1:0]  out_wdata_o,
  output wire                out_we_o,
  // the epilogue: a final micro-op at ED-1, its sum (acc_wdata_o) at ED
  output wire                epi_v_o,
  output wire [AccAddrW-1:0] epi_a_o,
  output wire [4:0]          epi_p_o,
  output wire                busy_o
);
  localparam integer L    = $clog2(BlockIn);
  localparam integer DotW = 16 + L;
  localparam integer TLat = (L + 1) / 2;
  localparam integer D    = 4 + TLat;  // stage of the accumulate/write
  localparam integer MW   = 9 + AccAddrW;  // {valid, reset, first, final, p, a}
  localparam integer Half = BlockOut / 2;

  generate
    if ((BlockOut % 2) != 0 || (1 << L) != BlockIn || DotW > 32) begin : g_bad_params
      loom_gemm_illegal_block_sizes u_illegal ();
    end
  endgenerate

  // ---- micro-op metadata through the pipeline
  reg  [D*MW-1:0] pipe_q;  // stage k (1..D) at [(k-1)*MW +: MW]
  wire [D*MW-1:0] pipe_d = {pipe_q[(D-1)*MW-1:0], issue_i && !abort_i, reset_i, first_i, final_i, p_i, a_i};
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) pipe_q <= {D*MW{1'b0}};
    else         pipe_q <= pipe_d;
  end
  wire                rd_v   = pipe_q[(D-2)*MW + AccAddrW + 8];
  wire                rd_r   = pipe_q[(D-2)*MW + AccAddrW + 7];
  wire                rd_fin = pipe_q[(D-2)*MW + AccAddrW + 5];
  wire [4:0]          rd_p   = pipe_q[(D-2)*MW + AccAddrW +: 5];
  wire [AccAddrW-1:0] rd_a   = pipe_q[(D-2)*MW +: AccAddrW];
  wire                wr_v   = pipe_q[(D-1)*MW + AccAddrW + 8];
  wire                wr_r   = pipe_q[(D-1)*MW + AccAddrW + 7];
  wire                wr_f   = pipe_q[(D-1)*MW + AccAddrW + 6];
  wire [AccAddrW-1:0] wr_a   = pipe_q[(D-1)*MW +: AccAddrW];
  wire [7:0]          unused_meta = {rd_r, pipe_q[(D-2)*MW + AccAddrW + 6], pipe_q[(D-1)*MW + AccAddrW +: 6]};

  assign inp_re_o    = issue_i && !dw_i;
  assign inp_raddr_o = x_i;
  assign wgt_re_o    = wre_i;
  assign wgt_raddr_o = w_i;
  assign epi_v_o     = rd_v && rd_fin && !abort_i;
  assign epi_a_o     = rd_a;
  assign epi_p_o     = rd_p;
  assign acc_re_o    = rd_v;
  assign acc_raddr_o = rd_a;

  // ---- products and dot products
  wire [Lanes*DotW-1:0] dot;
  genvar b, p, k;
  generate
    for (b = 0; b < Batch; b = b + 1) begin : g_b
      for (p = 0; p < BlockOut / 2; p = p + 1) begin : g_p
        wire [BlockIn*16-1:0] prod0, prod1;
        for (k = 0; k < BlockIn; k = k + 1) begin : g_k
          wire [7:0] x = dw_i ? dx_i[8*((b*Half + p)*BlockIn + k) +: 8] : inp_rdata_i[8*(b*BlockIn + k) +: 8];
          loom_mul2 u_mul (
            .clk_i (clk_i),
            .x_i   (x),
            .w0_i  (wgt_rdata_i[8*((2*p)*BlockIn + k) +: 8]),
            .w1_i  (wgt_rdata_i[8*((2*p+1)*BlockIn + k) +: 8]),
            .p0_o  (prod0[16*k +: 16]),
            .p1_o  (prod1[16*k +: 16])
          );
        end
        loom_sum_tree #(.N(BlockIn), .InW(16)) u_tree0 (
          .clk_i (clk_i),
          .in_i  (prod0),
          .sum_o (dot[DotW*(b*BlockOut + 2*p) +: DotW])
        );
        loom_sum_tree #(.N(BlockIn), .InW(16)) u_tree1 (
          .clk_i (clk_i),
          .in_i  (prod1),
          .sum_o (dot[DotW*(b*BlockOut + 2*p + 1) +: DotW])
        );
      end
    end
  endgenerate

  // ---- accumulate, with forwarding of the previous micro-op's sum
  // fwd_q: the micro-op now at ED writes the row the previous one wrote
  // (compared a cycle early, between ED and ED-1, so the address compare
  // does not run on into the add; docs/rtl.md, "Timing").
  reg                fwd_q;
  reg [AccBits-1:0]  last_sum_q;
  wire               fwd = fwd_q;
  wire [AccBits-1:0] old = fwd ? last_sum_q : acc_rdata_i;
  wire [AccBits-1:0] sum;

  // depthwise: the even lanes' dot products of phase 0, a cycle earlier
  reg [Lanes*DotW-1:0] dot_even_q;
  always @(posedge clk_i) dot_even_q <= dot;

  genvar o;
  generate
    for (o = 0; o < Lanes; o = o + 1) begin : g_acc
      wire [DotW-1:0] dsel = (dw_i && (o % 2) == 0) ? dot_even_q[DotW*o +: DotW] : dot[DotW*o +: DotW];
      wire [31:0] d32 = {{(32 - DotW){dsel[DotW - 1]}}, dsel};
      wire [31:0] s   = wr_r ? 32'd0 : (wr_f ? 32'd0 : old[32*o +: 32]) + d32;
      assign sum[32*o +: 32] = s;
    end
  endgenerate

  loom_sat8 #(.Lanes(Lanes)) u_sat8 (
    .a_i (sum),
    .y_o (out_wdata_o)
  );

  wire fwd_d = wr_v && !abort_i && (wr_a == rd_a);
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) fwd_q <= 1'b0;
    else         fwd_q <= fwd_d;
  end
  always @(posedge clk_i) last_sum_q <= sum;

  assign acc_we_o    = wr_v && !abort_i;
  assign out_we_o    = wr_v && !abort_i && !last_i;
  assign acc_waddr_o = wr_a;
  assign acc_wdata_o = sum;

  reg inflight;
  integer j;
  always @* begin
    inflight = 1'b0;
    for (j = 0; j < D; j = j + 1) inflight = inflight | pipe_q[j*MW + AccAddrW + 8];
  end
  assign busy_o = inflight;
endmodule
