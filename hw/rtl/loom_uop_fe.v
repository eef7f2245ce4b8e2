// loom_uop_fe - micro-op front end of GEMM and ALU instructions.
//
// Walks the two-level loop of docs/isa.md,
//   for i < iter_out, j < iter_in, u in [uop_begin, uop_end)
// and issues one micro-op per cycle with its three row indices
//   a = UOP[u].acc + i * fa_out + j * fa_in    (ACC row; ALU: destination)
//   b = UOP[u].inp + i * fb_out + j * fb_in    (INP row; ALU: source ACC row)
//   c = UOP[u].wgt + i * fc_out + j * fc_in    (WGT row; ALU: unused)
// The products are kept as running sums (no multipliers).  Stages:
//   F0  loop counters; UOP[u] read issued (registered block RAM read)
//   F1  UOP[u] arrives
//   F2  indices formed and checked, exactly and unwrapped:
//       u >= uop rows, a >= ACC rows, b + reach >= lim_b (if chk_b; reach:
//       a depthwise window's farthest tap, else 0), c >= lim_c (if chk_c),
//       p >= LOOM_PAR_ROWS (chk_p: 1 for final micro-ops, 2 for all).
//       A bad micro-op is never issued: F2 holds it, err_o rises and the
//       younger micro-ops are dropped; the older ones have all been
//       issued, so the rows they update keep their values (docs/isa.md).
// With each micro-op go the ISA v2 flags of its position: first_o (first
// outer iteration, r mod P == 0), final_o (last outer iteration, r mod P
// == P - 1; r the position in the pass, P = max(period, 1)) and its PAR
// row p_o = par_base + j.
// ready_i back-pressures the whole front end (the ALU's interlock and its
// two-cycle vector operands); the block RAM output holds while F1 stalls.
// Between F1 and F2 sits a one-entry skid register S: F1's micro-op moves
// on every cycle S is empty (to F2, or to S when F2 stalls), so F0 reads
// the next one whenever F1 is empty or S is, which depends on registers
// only: ready_i ends at F2 and S instead of running on into the loop
// counters' enables (docs/rtl.md, "Timing").  F2 is fed from S first; a
// stall leaves S and F1 full, so F2 is issued the same micro-ops in the
// same cycles as without S.
`include "loom_isa.vh"

module loom_uop_fe #(
  parameter integer UopAddrW = 13,
  parameter integer AccAddrW = 11,
  parameter integer BAddrW   = 11,
  parameter integer CAddrW   = 10
) (
  input  wire                clk_i,
  input  wire                rst_ni,
  input  wire                start_i,
  input  wire                abort_i,
  input  wire [12:0]         uop_begin_i,
  input  wire [13:0]         uop_end_i,
  input  wire [13:0]         iter_out_i,
  input  wire [13:0]         iter_in_i,
  input  wire [10:0]         fa_out_i,
  input  wire [10:0]         fa_in_i,
  input  wire [10:0]         fb_out_i,
  input  wire [10:0]         fb_in_i,
  input  wire [9:0]          fc_out_i,
  input  wire [9:0]          fc_in_i,
  input  wire                chk_b_i,
  input  wire [16:0]         lim_b_i,
  input  wire                chk_c_i,
  input  wire [16:0]         lim_c_i,
  input  wire [16:0]         reach_i,
  input  wire                first_i,
  input  wire                last_i,
  input  wire [5:0]          period_i,
  input  wire [7:0]          par_base_i,
  input  wire [1:0]          chk_p_i,
  // UOP buffer read port
  output wire                uop_re_o,
  output wire [UopAddrW-1:0] uop_raddr_o,
  input  wire [31:0]         uop_rdata_i,
  // issue
  output wire                valid_o,
  input  wire                ready_i,
  output wire [AccAddrW-1:0] a_o,
  output wire [BAddrW-1:0]   b_o,
  output wire [CAddrW-1:0]   c_o,
  output wire                first_o,
  output wire                final_o,
  output wire [12:0]         p_o,
  output wire                err_o,
  output wire                done_o
);
  localparam integer UopRows = 1 << UopAddrW;
  localparam integer AccRows = 1 << AccAddrW;

  // F0
  reg        active_q, active_d;
  reg [13:0] u_q, u_d, j_q, j_d, i_q, i_d;
  reg [26:0] oa_i_q, oa_i_d, oa_q, oa_d;
  reg [26:0] ob_i_q, ob_i_d, ob_q, ob_d;
  reg [26:0] oc_i_q, oc_i_d, oc_q, oc_d;
  reg [5:0]  rp_q, rp_d;              // position in the pass, mod P
  // F1
  reg        v1_q, v1_d, badu1_q, badu1_d;
  reg [26:0] oa1_q, oa1_d, ob1_q, ob1_d, oc1_q, oc1_d;
  reg        first1_q, first1_d, final1_q, final1_d;
  reg [12:0] p1_q, p1_d;
  // S
  reg        vs_q, vs_d, bads_q, bads_d;
  reg [26:0] as_q, as_d, bs_q, bs_d, cs_q, cs_d;
  reg        firsts_q, firsts_d, finals_q, finals_d;
  reg [12:0] ps_q, ps_d;
  // F2
  reg        v2_q, v2_d, bad2_q, bad2_d;
  reg [26:0] a2_q, a2_d, b2_q, b2_d, c2_q, c2_d;
  reg        first2_q, first2_d, final2_q, final2_d;
  reg [12:0] p2_q, p2_d;

  // The loop's parameters, captured at start: the instruction's fields are
  // held while it runs, so these are the same values, but the loop
  // compares and adds start at registers instead of behind compute's field
  // decode (docs/rtl.md, "Timing").  start_i itself uses the inputs.
  reg [12:0] p_uop_begin_q;
  reg [13:0] p_uop_end_q, p_iter_out_q, p_iter_in_q;
  reg [10:0] p_fa_out_q, p_fa_in_q, p_fb_out_q, p_fb_in_q;
  reg [9:0]  p_fc_out_q, p_fc_in_q;
  reg        p_chk_b_q, p_chk_c_q;
  reg [16:0] p_lim_b_q, p_lim_c_q;
  // ISA v2's, the same way (GCFG/QCFG and a GEMM's flags change only
  // between instructions): reach, first, last, P, par_base, chk_p
  reg [16:0] p_reach_q;
  reg        p_first_q, p_last_q;
  reg [5:0]  p_per_q;
  reg [7:0]  p_par_base_q;
  reg [1:0]  p_chk_p_q;
  always @(posedge clk_i) begin
    if (start_i) begin
      p_reach_q     <= reach_i;
      p_first_q     <= first_i;
      p_last_q      <= last_i;
      p_per_q       <= (period_i == 6'd0) ? 6'd1 : period_i;
      p_par_base_q  <= par_base_i;
      p_chk_p_q     <= chk_p_i;
      p_uop_begin_q <= uop_begin_i;
      p_uop_end_q   <= uop_end_i;
      p_iter_out_q  <= iter_out_i;
      p_iter_in_q   <= iter_in_i;
      p_fa_out_q    <= fa_out_i;
      p_fa_in_q     <= fa_in_i;
      p_fb_out_q    <= fb_out_i;
      p_fb_in_q     <= fb_in_i;
      p_fc_out_q    <= fc_out_i;
      p_fc_in_q     <= fc_in_i;
      p_chk_b_q     <= chk_b_i;
      p_chk_c_q     <= chk_c_i;
      p_lim_b_q     <= lim_b_i;
      p_lim_c_q     <= lim_c_i;
    end
  end

  wire rp_last = (rp_q + 6'd1 == p_per_q);
  wire first0  = p_first_q && (i_q == 14'd0) && (rp_q == 6'd0);
  wire final0  = p_last_q && (i_q + 14'd1 == p_iter_out_q) && rp_last;

  wire adv2   = !v2_q || (ready_i && !bad2_q);
  wire move0  = active_q && (!v1_q || !vs_q) && !abort_i;  // registers only
  wire move1  = (vs_q || v1_q) && adv2 && !abort_i;        // into F2, from S first
  wire f1_out = v1_q && (!vs_q || adv2) && !abort_i;       // F1 moves (to F2 or S)

  wire [10:0] uop_acc = uop_rdata_i[`LOOM_UOP_ACC_LSB +: `LOOM_UOP_ACC_W];
  wire [10:0] uop_inp = uop_rdata_i[`LOOM_UOP_INP_LSB +: `LOOM_UOP_INP_W];
  wire [9:0]  uop_wgt = uop_rdata_i[`LOOM_UOP_WGT_LSB +: `LOOM_UOP_WGT_W];

  wire [26:0] a1 = oa1_q + {16'd0, uop_acc};
  wire [26:0] b1 = ob1_q + {16'd0, uop_inp};
  wire [26:0] c1 = oc1_q + {17'd0, uop_wgt};
  wire        bad_p1 = (p_chk_p_q == 2'd2 || (p_chk_p_q == 2'd1 && final1_q)) &&
                       (p1_q >= `LOOM_PAR_ROWS);
  wire        bad1 = badu1_q || (a1 >= AccRows[26:0]) || bad_p1 ||
                     (p_chk_b_q && b1 + {10'd0, p_reach_q} >= {10'd0, p_lim_b_q}) ||
                     (p_chk_c_q && c1 >= {10'd0, p_lim_c_q});

  assign uop_re_o    = move0;
  assign uop_raddr_o = u_q[UopAddrW-1:0];
  assign valid_o     = v2_q && !bad2_q;
  assign a_o         = a2_q[AccAddrW-1:0];
  assign b_o         = b2_q[BAddrW-1:0];
  assign c_o         = c2_q[CAddrW-1:0];
  assign first_o     = first2_q;
  assign final_o     = final2_q;
  assign p_o         = p2_q;
  assign err_o       = v2_q && bad2_q;
  assign done_o      = !active_q && !v1_q && !vs_q && !v2_q;

  wire [26-AccAddrW:0] unused_a = a2_q[26:AccAddrW];
  wire [26-BAddrW:0]   unused_b = b2_q[26:BAddrW];
  wire [26-CAddrW:0]   unused_c = c2_q[26:CAddrW];
  wire [13-UopAddrW:0] unused_u = u_q[13:UopAddrW];
  wire [1:0]           unused_j = j_q[13:12];

  always @* begin
    active_d = active_q;
    u_d = u_q; j_d = j_q; i_d = i_q; rp_d = rp_q;
    first1_d = first1_q; final1_d = final1_q; p1_d = p1_q;
    first2_d = first2_q; final2_d = final2_q; p2_d = p2_q;
    oa_i_d = oa_i_q; oa_d = oa_q;
    ob_i_d = ob_i_q; ob_d = ob_q;
    oc_i_d = oc_i_q; oc_d = oc_q;
    v1_d = v1_q; badu1_d = badu1_q;
    oa1_d = oa1_q; ob1_d = ob1_q; oc1_d = oc1_q;
    vs_d = vs_q; bads_d = bads_q;
    as_d = as_q; bs_d = bs_q; cs_d = cs_q;
    firsts_d = firsts_q; finals_d = finals_q; ps_d = ps_q;
    v2_d = v2_q; bad2_d = bad2_q;
    a2_d = a2_q; b2_d = b2_q; c2_d = c2_q;

    // F2
    if (adv2) v2_d = 1'b0;
    if (move1) begin
      v2_d     = 1'b1;
      bad2_d   = vs_q ? bads_q : bad1;
      a2_d     = vs_q ? as_q : a1;
      b2_d     = vs_q ? bs_q : b1;
      c2_d     = vs_q ? cs_q : c1;
      first2_d = vs_q ? firsts_q : first1_q;
      final2_d = vs_q ? finals_q : final1_q;
      p2_d     = vs_q ? ps_q : p1_q;
    end
    // S: emptied into F2, and F1's micro-op parked when it cannot go to F2
    if (vs_q && adv2) vs_d = 1'b0;
    if (f1_out && (vs_q || !adv2)) begin
      vs_d     = 1'b1;
      bads_d   = bad1;
      as_d     = a1;
      bs_d     = b1;
      cs_d     = c1;
      firsts_d = first1_q;
      finals_d = final1_q;
      ps_d     = p1_q;
    end
    // F1
    if (f1_out) v1_d = 1'b0;
    if (move0) begin
      v1_d    = 1'b1;
      badu1_d = ({1'b0, u_q} >= UopRows[14:0]);
      oa1_d   = oa_q;
      ob1_d   = ob_q;
      oc1_d   = oc_q;
      first1_d = first0;
      final1_d = final0;
      p1_d     = {5'd0, p_par_base_q} + {1'b0, j_q[11:0]};
    end
    // F0: the loop
    if (move0) begin
      if (u_q + 14'd1 < p_uop_end_q) begin
        u_d  = u_q + 14'd1;
        rp_d = rp_last ? 6'd0 : rp_q + 6'd1;
      end else begin
        u_d  = {1'b0, p_uop_begin_q};
        rp_d = 6'd0;
        if (j_q + 14'd1 < p_iter_in_q) begin
          j_d  = j_q + 14'd1;
          oa_d = oa_q + {16'd0, p_fa_in_q};
          ob_d = ob_q + {16'd0, p_fb_in_q};
          oc_d = oc_q + {17'd0, p_fc_in_q};
        end else begin
          j_d = 14'd0;
          if (i_q + 14'd1 < p_iter_out_q) begin
            i_d    = i_q + 14'd1;
            oa_i_d = oa_i_q + {16'd0, p_fa_out_q};
            ob_i_d = ob_i_q + {16'd0, p_fb_out_q};
            oc_i_d = oc_i_q + {17'd0, p_fc_out_q};
            oa_d   = oa_i_q + {16'd0, p_fa_out_q};
            ob_d   = ob_i_q + {16'd0, p_fb_out_q};
            oc_d   = oc_i_q + {17'd0, p_fc_out_q};
          end else begin
            active_d = 1'b0;
          end
        end
      end
    end
    // A bad micro-op in F2 stops the loop and drops the younger ones.
    if (v2_q && bad2_q) begin
      active_d = 1'b0;
      v1_d     = 1'b0;
      vs_d     = 1'b0;
    end
    if (start_i) begin
      active_d = (iter_out_i != 14'd0) && (iter_in_i != 14'd0) &&
                 ({1'b0, uop_begin_i} < uop_end_i);
      u_d = {1'b0, uop_begin_i};
      j_d = 14'd0;
      i_d = 14'd0;
      rp_d = 6'd0;
      oa_i_d = 27'd0; oa_d = 27'd0;
      ob_i_d = 27'd0; ob_d = 27'd0;
      oc_i_d = 27'd0; oc_d = 27'd0;
      v1_d = 1'b0;
      vs_d = 1'b0;
      v2_d = 1'b0;
    end
    if (abort_i) begin
      active_d = 1'b0;
      v1_d     = 1'b0;
      vs_d     = 1'b0;
      v2_d     = 1'b0;
    end
  end

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      active_q <= 1'b0;
      v1_q     <= 1'b0;
      vs_q     <= 1'b0;
      v2_q     <= 1'b0;
    end else begin
      active_q <= active_d;
      v1_q     <= v1_d;
      vs_q     <= vs_d;
      v2_q     <= v2_d;
    end
  end

  always @(posedge clk_i) begin
    u_q <= u_d; j_q <= j_d; i_q <= i_d; rp_q <= rp_d;
    first1_q <= first1_d; final1_q <= final1_d; p1_q <= p1_d;
    first2_q <= first2_d; final2_q <= final2_d; p2_q <= p2_d;
    oa_i_q <= oa_i_d; oa_q <= oa_d;
    ob_i_q <= ob_i_d; ob_q <= ob_d;
    oc_i_q <= oc_i_d; oc_q <= oc_d;
    badu1_q <= badu1_d;
    oa1_q <= oa1_d; ob1_q <= ob1_d; oc1_q <= oc1_d;
    bads_q <= bads_d;
    as_q <= as_d; bs_q <= bs_d; cs_q <= cs_d;
    firsts_q <= firsts_d; finals_q <= finals_d; ps_q <= ps_d;
    bad2_q <= bad2_d;
    a2_q <= a2_d; b2_q <= b2_d; c2_q <= c2_d;
  end
endmodule
