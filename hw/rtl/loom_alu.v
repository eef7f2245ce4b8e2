// loom_alu - the vector ALU on accumulator rows.
//
// One micro-op per cycle (II = 1) with an immediate operand; two cycles
// with a vector operand, because the ACC buffer has one read port: the
// source row is read first and parked, then the destination row.  Each
// lane (loom_alu_lane) has a fixed latency, so a micro-op whose
// destination row is read in cycle R writes it back, with its OUT mirror,
// in cycle R + 8 (the last stage looks the activation table up).
//
// EPI (ISA v2) is the epilogue E: the lanes add the bias and requantize
// with the multiplier (both per lane from the PAR row p, read with the ACC
// row, or from QCFG with par_src), and with QCFG.act the result indexes the
// activation table, one 256-entry copy per lane (block RAM, written by
// LOAD LUT through lut_*_i).  ALU EPI reads one row (the destination, or
// with a vector operand the source: the moving form), so it runs at one
// micro-op per cycle.  The GEMM's `last` micro-ops use the same lanes
// while the ALU is idle (gemm_i): epi_v_i announces one the cycle its ACC
// row is read, its sum arrives on gemm_sum_i the cycle after, and E(sum)
// is written into OUT only (out_we_o without acc_we_o), Lat cycles later.
//
// Hazards: a micro-op must see every earlier micro-op's result.  Instead of
// forwarding seven stages of full rows, the issue stage interlocks: it
// waits while any micro-op in flight (read issued, write not yet done,
// including the one writing this cycle, because the RAM reads first) has
// a destination equal to the row about to be read (d, and s for a vector
// operand).  Independent micro-ops -- the common case: requantize or ReLU
// a tile -- stream at one per cycle; a chain on one row waits the latency.
`include "loom_isa.vh"

module loom_alu #(
  parameter integer Lanes    = 16,
  parameter integer AccAddrW = 11,
  localparam integer AccBits = Lanes * 32,
  localparam integer OutBits = Lanes * 8
) (
  input  wire                clk_i,
  input  wire                rst_ni,
  input  wire                abort_i,
  // instruction (stable while it runs) and QCFG registers; epi_i (op_i is
  // EPI), vector_i (a vector operand: neither EPI nor use_imm_i) and
  // src_row_i (EPI without use_imm_i: the moving form reads s) come decoded
  // from flip-flops, because they gate the interlock's compares; src_row_i
  // is a flip-flop of its own, since epi_i also drives every lane's operand
  // multiplexers and so has a fanout of thousands
  input  wire [2:0]          op_i,
  input  wire                epi_i,
  input  wire                vector_i,
  input  wire                src_row_i,
  input  wire                use_imm_i,
  input  wire [15:0]         imm_i,
  input  wire [31:0]         q_mult_i,
  input  wire [5:0]          q_shift_i,
  input  wire [7:0]          q_zp_i,
  input  wire [7:0]          q_lo_i,
  input  wire [7:0]          q_hi_i,
  input  wire                q_round_even_i,
  input  wire [31:0]         q_bias_i,
  input  wire                q_par_src_i,
  input  wire                q_act_i,
  // the GEMM's final micro-ops (gemm_i: a GEMM runs, op_i is EPI)
  input  wire                gemm_i,
  input  wire                epi_v_i,
  input  wire [AccAddrW-1:0] epi_a_i,
  input  wire [4:0]          epi_p_i,
  input  wire [AccBits-1:0]  gemm_sum_i,
  // PAR read port (rows of Lanes biases, then Lanes multipliers)
  output wire                par_re_o,
  output wire [4:0]          par_raddr_o,
  input  wire [2*AccBits-1:0] par_rdata_i,
  // activation table writes (LOAD LUT)
  input  wire                lut_we_i,
  input  wire [7:0]          lut_waddr_i,
  input  wire [7:0]          lut_wdata_i,
  // micro-ops from loom_uop_fe
  input  wire                issue_valid_i,
  output wire                issue_ready_o,
  input  wire [AccAddrW-1:0] d_i,
  input  wire [AccAddrW-1:0] s_i,
  input  wire [4:0]          p_i,
  // ACC read port
  output wire                acc_re_o,
  output wire [AccAddrW-1:0] acc_raddr_o,
  input  wire [AccBits-1:0]  acc_rdata_i,
  // ACC and OUT write ports
  output wire                acc_we_o,
  output wire [AccAddrW-1:0] acc_waddr_o,
  output wire [AccBits-1:0]  acc_wdata_o,
  output wire [OutBits-1:0]  out_wdata_o,
  output wire                out_we_o,
  output wire [AccAddrW-1:0] out_waddr_o,
  output wire                busy_o
);
  localparam integer Lat = 8;  // read issue to write cycle
  localparam integer MW  = 1 + AccAddrW;

  reg                phase_q, phase_d;  // vector operand: source row read
  reg                cap_q, cap_d;      // acc_rdata_i holds the source row
  reg [AccBits-1:0]  vrow_q, vrow_d;
  reg [Lat*MW-1:0]   pipe_q;            // stage k (1..Lat) at [(k-1)*MW +: MW]
  reg                vec1_q;            // stage 1 op uses vrow_q

  // ---- hazard check against every micro-op in flight
  // EPI reads one row (the source in the moving form); other ops read the
  // destination, and with a vector operand the source first.
  wire                is_epi = epi_i;
  wire                vector = vector_i;
  wire [AccAddrW-1:0] row    = src_row_i ? s_i : d_i;
  // The rows in flight are compared with d and with s directly, and the
  // operand flags pick among the results afterwards (rather than
  // multiplexing the row in front of the compares): the same verdict, with
  // the flags off the compares' inputs, which end in the front end's F2
  // enables through issue_ready_o.
  reg hit_d, hit_s;
  integer k;
  always @* begin
    hit_d = 1'b0;
    hit_s = 1'b0;
    for (k = 0; k < Lat; k = k + 1) begin
      if (pipe_q[k*MW + AccAddrW] && pipe_q[k*MW +: AccAddrW] == d_i) hit_d = 1'b1;
      if (pipe_q[k*MW + AccAddrW] && pipe_q[k*MW +: AccAddrW] == s_i) hit_s = 1'b1;
    end
  end
  wire hazard = (src_row_i ? hit_s : hit_d) || (vector && hit_s);

  wire go      = issue_valid_i && !abort_i && (phase_q || !hazard);
  wire read_s  = go && vector && !phase_q;
  wire accept  = go && (!vector || phase_q);

  assign issue_ready_o = accept;
  assign acc_re_o      = read_s || accept;
  assign acc_raddr_o   = read_s ? s_i : row;
  assign par_re_o      = gemm_i ? epi_v_i : (accept && is_epi);
  assign par_raddr_o   = gemm_i ? epi_p_i : p_i;

  always @* begin
    phase_d = phase_q;
    if (read_s) phase_d = 1'b1;
    if (accept) phase_d = 1'b0;
    if (abort_i) phase_d = 1'b0;
    cap_d  = read_s;
    vrow_d = cap_q ? acc_rdata_i : vrow_q;
  end
  wire              inject = gemm_i ? epi_v_i : accept;
  wire [Lat*MW-1:0] pipe_d = {pipe_q[(Lat-1)*MW-1:0], inject && !abort_i, gemm_i ? epi_a_i : d_i};
  wire              vec1_d = vector;

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      phase_q <= 1'b0;
      cap_q   <= 1'b0;
      pipe_q  <= {Lat*MW{1'b0}};
    end else begin
      phase_q <= phase_d;
      cap_q   <= cap_d;
      pipe_q  <= pipe_d;
    end
  end

  always @(posedge clk_i) begin
    vrow_q <= vrow_d;
    vec1_q <= vec1_d;
  end

  // ---- REQUANT rounding constants, decoded once for all lanes
  // mask: bits below shift; half: bit shift - 1 (none for shift 0).
  // Shifts of constants (decoders, no adders), not per-bit loops.
  reg  [63:0] q_mask_q, q_half_q;
  wire [63:0] q_mask_d = ~(64'hFFFF_FFFF_FFFF_FFFF << q_shift_i);
  wire [64:0] q_half_w = {64'd0, 1'b1} << q_shift_i;
  wire [63:0] q_half_d = q_half_w[64:1];
  wire        unused_q_half_w = q_half_w[0];
  always @(posedge clk_i) begin
    q_mask_q <= q_mask_d;
    q_half_q <= q_half_d;
  end

  // ---- lanes: inputs in stage 1 (the row leaves the RAM, with its PAR row)
  // EPI: a = the row (or the GEMM's sum), b = bias, v = multiplier.
  wire [31:0]        imm32 = {{16{imm_i[15]}}, imm_i};
  wire [AccBits-1:0] par_bias = par_rdata_i[0 +: AccBits];
  wire [AccBits-1:0] par_mult = par_rdata_i[AccBits +: AccBits];
  wire [AccBits-1:0] vsel  = is_epi ? (q_par_src_i ? {Lanes{q_mult_i}} : par_mult)
                                    : (vec1_q ? vrow_q : {Lanes{imm32}});
  wire [AccBits-1:0] bsel  = is_epi ? (q_par_src_i ? {Lanes{q_bias_i}} : par_bias) : {AccBits{1'b0}};
  wire [AccBits-1:0] asel  = gemm_i ? gemm_sum_i : acc_rdata_i;
  wire [AccBits-1:0] res;
  // Stage k + 1 valid, k = 0..5: lets each lane skip idle cycles.
  wire [5:0]         lane_en;
  genvar e;
  generate
    for (e = 0; e < 6; e = e + 1) begin : g_en
      assign lane_en[e] = pipe_q[e*MW + AccAddrW];
    end
  endgenerate

  genvar i;
  generate
    for (i = 0; i < Lanes; i = i + 1) begin : g_lane
      loom_alu_lane u_lane (
        .clk_i          (clk_i),
        .en_i           (lane_en),
        .op_i           (op_i),
        .use_imm_i      (use_imm_i),
        .q_mult_i       (q_mult_i),
        .q_shift_i      (q_shift_i),
        .q_mask_i       (q_mask_q),
        .q_half_i       (q_half_q),
        .q_zp_i         (q_zp_i),
        .q_lo_i         (q_lo_i),
        .q_hi_i         (q_hi_i),
        .q_round_even_i (q_round_even_i),
        .a_i            (asel[32*i +: 32]),
        .b_i            (bsel[32*i +: 32]),
        .v_i            (vsel[32*i +: 32]),
        .res_o          (res[32*i +: 32])
      );
    end
  endgenerate

  // ---- stage 8: the activation table (a copy per lane; its index is the
  // int8 result's bit pattern), or the result itself
  wire               lut_on = is_epi && q_act_i;
  wire               st7 = pipe_q[(Lat-2)*MW + AccAddrW];
  reg  [AccBits-1:0] res8_q;
  wire [AccBits-1:0] fin;
  always @(posedge clk_i) if (st7) res8_q <= res;
  generate
    for (i = 0; i < Lanes; i = i + 1) begin : g_lut
      (* ram_style = "block" *) reg [7:0] lut [0:255];
      reg [7:0] lut_q;
      always @(posedge clk_i) begin
        if (lut_we_i) lut[lut_waddr_i] <= lut_wdata_i;
      end
      always @(posedge clk_i) begin
        if (st7 && lut_on) lut_q <= lut[res[32*i +: 8]];
      end
      assign fin[32*i +: 32] = lut_on ? {{24{lut_q[7]}}, lut_q} : res8_q[32*i +: 32];
    end
  endgenerate

  loom_sat8 #(.Lanes(Lanes)) u_sat8 (
    .a_i (fin),
    .y_o (out_wdata_o)
  );

  wire wr_v = pipe_q[(Lat-1)*MW + AccAddrW] && !abort_i;
  assign acc_we_o    = wr_v && !gemm_i;
  assign acc_waddr_o = pipe_q[(Lat-1)*MW +: AccAddrW];
  assign acc_wdata_o = fin;
  assign out_we_o    = wr_v;
  assign out_waddr_o = pipe_q[(Lat-1)*MW +: AccAddrW];
  reg inflight;
  integer j;
  always @* begin
    inflight = 1'b0;
    for (j = 0; j < Lat; j = j + 1) inflight = inflight | pipe_q[j*MW + AccAddrW];
  end
  assign busy_o = phase_q || inflight;
endmodule
