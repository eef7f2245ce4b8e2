// loom_dw_win - the window of depthwise GEMM micro-ops (docs/isa.md "GEMM",
// docs/rtl.md "Depthwise").
//
// A depthwise micro-op (a, x, w) needs, for every output lane o, the T
// window taps INP[x + off(t)][b][o], t < T = min(kh * kw, BLOCK_IN),
// off(t) = (t mod kh) * row + (t div kh) * col.  This module keeps the
// taps in a shift register of T rows (slot t = tap t) and feeds the GEMM
// core's multipliers from it:
//
//   reads    the taps a micro-op does not have yet, t = N - 1 down to 0,
//            from the two INP banks (row parity): a cycle reads the next
//            tap, and the one after it too when that one lies in the other
//            bank.  N = min(n * kh, T) when x is the previous micro-op's x
//            minus n * col (n = 1 or 2, n < kw, col != 0: the window slid
//            n columns left), else N = T.  A returning row enters slot 0
//            and pushes the others up (two rows: two slots), so after a
//            slide the old taps sit n * kh slots higher, where the new
//            window wants them.
//   phases   the core's loom_mul2 cells multiply one input by two weights
//            (output lanes 2p and 2p + 1); a depthwise lane has inputs of
//            its own, so a micro-op takes two cycles: phase 0 feeds lane
//            2p's inputs (slot k, lane 2p, to the cell of column k),
//            phase 1 lane 2p + 1's, which phase 0 also copied into a hold
//            register so that the window may change from then on.  The WGT
//            row is read the cycle before phase 0 (wgt_re_o) and held.
//            Phase 0 is the micro-op's issue into the core's pipeline
//            (issue_o with its a, flags, PAR row), whose write stage
//            combines the two phases' dot products.
//
// The next micro-op's reads overlap the current one's phases: they start
// once the current micro-op is sure to enter phase 0 by the time their
// first row arrives, so a micro-op takes max(read cycles, 2) cycles in a
// stream (loom_dw_read_cycles() in driver/core/isa.c is this rule).
// Slots >= T feed zero.
module loom_dw_win #(
  parameter integer Batch    = 1,
  parameter integer BlockIn  = 16,
  parameter integer BlockOut = 16,
  parameter integer InpAddrW = 11,
  parameter integer AccAddrW = 11,
  parameter integer WgtAddrW = 10,
  localparam integer RowBits = Batch * BlockIn * 8,
  localparam integer DxBits  = Batch * (BlockOut / 2) * BlockIn * 8,
  localparam integer BankW   = InpAddrW - 1,
  localparam integer TW      = $clog2(BlockIn + 1)
) (
  input  wire                clk_i,
  input  wire                rst_ni,
  input  wire                abort_i,
  input  wire                start_i,      // a GEMM begins: no previous window
  // GCFG (stable while the GEMM runs) and its derived offsets
  input  wire [3:0]          kh_i,
  input  wire [11:0]         row_i,
  input  wire [11:0]         col_i,
  input  wire [TW-1:0]       taps_i,       // T
  input  wire [16:0]         off_n1_i,     // offset of tap N - 1 when sliding 1 column
  input  wire [16:0]         off_n2_i,     // ... 2 columns
  input  wire [16:0]         off_all_i,    // ... for a whole window
  input  wire [16:0]         khr_i,        // (kh - 1) * row
  input  wire                n1_ok_i,      // kh <= T and kw > 1
  input  wire                n2_ok_i,      // 2 * kh <= T and kw > 2
  input  wire [TW-1:0]       n1_taps_i,    // kh (n1_ok)
  input  wire [TW-1:0]       n2_taps_i,    // 2 kh (n2_ok)
  input  wire [3:0]          r_all_i,      // row of tap T - 1 (its column: off_all_i)
  input  wire [3:0]          r_n_i,        // row of tap N - 1 for a slide: kh - 1
  // micro-ops from loom_uop_fe
  input  wire                valid_i,
  output wire                ready_o,
  input  wire [AccAddrW-1:0] a_i,
  input  wire [InpAddrW-1:0] x_i,
  input  wire [WgtAddrW-1:0] w_i,
  input  wire                first_i,
  input  wire                final_i,
  input  wire [4:0]          p_i,
  // INP banks (row r of INP is row r >> 1 of bank r & 1)
  output wire                re0_o,
  output wire [BankW-1:0]    addr0_o,
  output wire                re1_o,
  output wire [BankW-1:0]    addr1_o,
  input  wire [RowBits-1:0]  rdata0_i,
  input  wire [RowBits-1:0]  rdata1_i,
  // to the GEMM core
  output wire                wgt_re_o,
  output wire [WgtAddrW-1:0] wgt_raddr_o,
  output wire                issue_o,
  output wire [AccAddrW-1:0] issue_a_o,
  output wire                issue_first_o,
  output wire                issue_final_o,
  output wire [4:0]          issue_p_o,
  output wire [DxBits-1:0]   dx_o,         // multiplier inputs of this cycle's phase
  output wire                busy_o
);
  localparam integer Slots = BlockIn;
  localparam integer Half  = BlockOut / 2;

  generate
    if (BlockIn != BlockOut || (BlockOut % 2) != 0) begin : g_bad
      loom_dw_win_needs_square_even_blocks u_illegal ();
    end
  endgenerate

  // ---- the reader: one micro-op's taps, t = N - 1 down to 0
  reg                rd_v_q, rd_v_d;       // reading a micro-op
  reg [TW-1:0]       left_q, left_d;       // taps left to read
  reg [3:0]          r_q, r_d;             // window row of the next tap
  reg [16:0]         addr_q, addr_d;       // its INP row
  reg [AccAddrW-1:0] ra_q, ra_d;           // the micro-op being read
  reg [WgtAddrW-1:0] rw_q, rw_d;
  reg                rfirst_q, rfirst_d, rfinal_q, rfinal_d;
  reg [4:0]          rp_q, rp_d;
  reg                prev_v_q, prev_v_d;   // x of the last accepted micro-op
  reg [InpAddrW-1:0] prev_x_q, prev_x_d;
  // ---- the micro-op whose reads are all issued, waiting for phase 0
  reg                pend_v_q, pend_v_d;
  reg [AccAddrW-1:0] pa_q, pa_d;
  reg [WgtAddrW-1:0] pw_q, pw_d;
  reg                pfirst_q, pfirst_d, pfinal_q, pfinal_d;
  reg [4:0]          pp_q, pp_d;
  // ---- phases
  reg                ph0_q, ph1_q;         // phase 0 / 1 in this cycle
  reg [AccAddrW-1:0] ia_q;
  reg                ifirst_q, ifinal_q;
  reg [4:0]          ip_q;

  // the tap after the one at (addr, r): one row up, or the next column's last row
  function [20:0] step(input [16:0] addr, input [3:0] r, input [3:0] kh, input [16:0] khr,
                       input [11:0] col, input [11:0] row);
    begin
      if (r == 4'd0) step = {kh - 4'd1, addr + khr - {5'd0, col}};
      else           step = {r - 4'd1, addr - {5'd0, row}};
    end
  endfunction

  wire [20:0] s1 = step(addr_q, r_q, kh_i, khr_i, col_i, row_i);
  wire [20:0] s2 = step(s1[16:0], s1[20:17], kh_i, khr_i, col_i, row_i);
  // The next tap lies in the other bank when the step is odd: the step's
  // parity is the parity of khr - col (r = 0) or of row, all GCFG values.
  // Written so rather than as s1's bit 0, which Yosys built from s1's adder
  // and which fed ready_o (loom_uop_fe's F2 enables) through a carry chain;
  // the same function, so no cycle changes.
  wire        odd_step = (r_q == 4'd0) ? (khr_i[0] ^ col_i[0]) : row_i[0];
  wire        pair = rd_v_q && (left_q >= 2) && odd_step;
  // The reader's micro-op may read (and, its reads done, become the
  // pending one) only while no earlier micro-op would still wait for phase
  // 0 when the row arrives: the pending one goes to phase 0 now or is gone.
  // A pending micro-op always goes within two cycles (phase 0 follows
  // phase 1 of the one before), so this stalls the reader at most one.
  wire go0      = pend_v_q && !ph0_q && !abort_i;  // phase 0 next cycle
  wire slot_ok  = !pend_v_q || go0;
  wire rd_issue = rd_v_q && (left_q != 0) && slot_ok && !abort_i;
  wire rd_last  = rd_issue && (left_q == (pair ? 2 : 1));
  wire move     = rd_v_q && slot_ok && !abort_i && ((left_q == 0) || rd_last);
  wire take     = valid_i && !abort_i && (!rd_v_q || move);
  assign ready_o = take;

  // the new micro-op's first tap
  wire [InpAddrW:0] x1 = {1'b0, x_i} + {1'b0, col_i[InpAddrW-1:0]};
  wire [InpAddrW+1:0] x2 = {2'b0, x_i} + {1'b0, col_i[InpAddrW-1:0], 1'b0};
  wire slide1 = prev_v_q && (col_i != 12'd0) && n1_ok_i && (col_i[11:InpAddrW] == 0) &&
                (x1 == {1'b0, prev_x_q});
  wire slide2 = prev_v_q && (col_i != 12'd0) && n2_ok_i && (col_i[11:InpAddrW] == 0) && !slide1 &&
                (x2 == {2'b0, prev_x_q});

  always @* begin
    rd_v_d = rd_v_q; left_d = left_q; r_d = r_q; addr_d = addr_q;
    ra_d = ra_q; rw_d = rw_q; rfirst_d = rfirst_q; rfinal_d = rfinal_q; rp_d = rp_q;
    prev_v_d = prev_v_q; prev_x_d = prev_x_q;
    pend_v_d = pend_v_q; pa_d = pa_q; pw_d = pw_q; pfirst_d = pfirst_q; pfinal_d = pfinal_q; pp_d = pp_q;
    if (rd_issue) begin
      left_d = left_q - (pair ? 2 : 1);
      {r_d, addr_d} = pair ? s2 : s1;
    end
    if (go0) pend_v_d = 1'b0;
    if (move) begin
      rd_v_d   = 1'b0;
      pend_v_d = 1'b1;
      pa_d = ra_q; pw_d = rw_q; pfirst_d = rfirst_q; pfinal_d = rfinal_q; pp_d = rp_q;
    end
    if (take) begin
      rd_v_d   = 1'b1;
      prev_v_d = 1'b1;
      prev_x_d = x_i;
      ra_d = a_i; rw_d = w_i; rfirst_d = first_i; rfinal_d = final_i; rp_d = p_i;
      if (slide1) begin
        left_d = n1_taps_i; r_d = r_n_i; addr_d = {{(17-InpAddrW){1'b0}}, x_i} + off_n1_i;
      end else if (slide2) begin
        left_d = n2_taps_i; r_d = r_n_i; addr_d = {{(17-InpAddrW){1'b0}}, x_i} + off_n2_i;
      end else begin
        left_d = taps_i; r_d = r_all_i; addr_d = {{(17-InpAddrW){1'b0}}, x_i} + off_all_i;
      end
    end
    if (start_i) prev_v_d = 1'b0;
    if (abort_i || start_i) begin
      rd_v_d   = 1'b0;
      pend_v_d = 1'b0;
    end
  end

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rd_v_q   <= 1'b0;
      pend_v_q <= 1'b0;
      prev_v_q <= 1'b0;
      ph0_q    <= 1'b0;
      ph1_q    <= 1'b0;
    end else begin
      rd_v_q   <= rd_v_d;
      pend_v_q <= pend_v_d;
      prev_v_q <= prev_v_d;
      ph0_q    <= go0;
      ph1_q    <= ph0_q && !abort_i;
    end
  end

  always @(posedge clk_i) begin
    left_q <= left_d; r_q <= r_d; addr_q <= addr_d;
    ra_q <= ra_d; rw_q <= rw_d; rfirst_q <= rfirst_d; rfinal_q <= rfinal_d; rp_q <= rp_d;
    prev_x_q <= prev_x_d;
    pa_q <= pa_d; pw_q <= pw_d; pfirst_q <= pfirst_d; pfinal_q <= pfinal_d; pp_q <= pp_d;
    if (go0) begin
      ia_q <= pa_q; ifirst_q <= pfirst_q; ifinal_q <= pfinal_q; ip_q <= pp_q;
    end
  end

  // ---- INP reads: the first tap from its bank, the second from the other
  wire [16:0] a2 = s1[16:0];
  assign re0_o   = rd_issue && (!addr_q[0] || pair);
  assign re1_o   = rd_issue && (addr_q[0] || pair);
  assign addr0_o = addr_q[0] ? a2[BankW:1] : addr_q[BankW:1];
  assign addr1_o = addr_q[0] ? addr_q[BankW:1] : a2[BankW:1];
  wire [2*(16-BankW)-1:0] unused_hi = {addr_q[16:BankW+1], a2[16:BankW+1]};
  wire                    unused_a2_0 = a2[0];  // the other bank's, by construction

  // ---- the window: rows return the cycle after their read
  reg               ret_v_q, ret_pair_q, ret_bank_q;  // first row's bank
  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) ret_v_q <= 1'b0;
    else         ret_v_q <= rd_issue && !abort_i;
  end
  always @(posedge clk_i) begin
    ret_pair_q <= pair;
    ret_bank_q <= addr_q[0];
  end
  wire [RowBits-1:0] first_row  = ret_bank_q ? rdata1_i : rdata0_i;
  wire [RowBits-1:0] second_row = ret_bank_q ? rdata0_i : rdata1_i;

  reg [Slots*RowBits-1:0] win_q, win_d;
  always @* begin
    win_d = win_q;
    if (ret_v_q) begin
      if (ret_pair_q) win_d = {win_q[(Slots-2)*RowBits-1:0], first_row, second_row};
      else            win_d = {win_q[(Slots-1)*RowBits-1:0], first_row};
    end
  end
  always @(posedge clk_i) win_q <= win_d;

  // ---- phases: multiplier inputs (cell (b, p, k): lane 2p, then 2p + 1, of slot k)
  reg [DxBits-1:0] even_w, odd_w, odd_q;
  integer b, p, k;
  always @* begin
    for (b = 0; b < Batch; b = b + 1)
      for (p = 0; p < Half; p = p + 1)
        for (k = 0; k < Slots; k = k + 1) begin
          even_w[8*((b*Half + p)*Slots + k) +: 8] =
              (k < taps_i) ? win_q[k*RowBits + 8*(b*BlockIn + 2*p) +: 8] : 8'd0;
          odd_w[8*((b*Half + p)*Slots + k) +: 8] =
              (k < taps_i) ? win_q[k*RowBits + 8*(b*BlockIn + 2*p + 1) +: 8] : 8'd0;
        end
  end
  always @(posedge clk_i) if (ph0_q) odd_q <= odd_w;

  assign dx_o          = ph1_q ? odd_q : even_w;
  assign wgt_re_o      = go0;
  assign wgt_raddr_o   = pw_q;
  assign issue_o       = ph0_q && !abort_i;
  assign issue_a_o     = ia_q;
  assign issue_first_o = ifirst_q;
  assign issue_final_o = ifinal_q;
  assign issue_p_o     = ip_q;
  assign busy_o        = rd_v_q || pend_v_q || ph0_q || ph1_q || ret_v_q;
endmodule
