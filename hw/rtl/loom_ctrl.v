// loom_ctrl - the AXI4-Lite register block (docs/registers.md).
//
// Owns every software-visible register except the counters themselves
// (loom_perf) and the job state (loom_job):
//   - ap_ctrl_hs CTRL: START is set by software and cleared when loom_job
//     accepts the job; DONE and READY are set when a job ends and cleared
//     when CTRL is read; IDLE is loom_job's idle; AUTO_RESTART re-arms START
//     at every done.  GIE/IER/ISR: ISR bit n is set at done when IER bit n
//     is set (bit 0 done, bit 1 ready) and cleared by writing 1;
//     interrupt_o = GIE & (ISR != 0), a level.
//   - the job arguments: INSN_ADDR, INSN_COUNT and the segment table.  The
//     low 4 bits of INSN_ADDR and the low 6 bits of every SEG_BASE are
//     read-only zero (the documented alignments), so the DMA engines can
//     rely on beat-aligned rows.
//   - ID, VERSION, CONFIG_HASH, ERR_STATUS, ERR_INSN (read-only) and
//     SOFT_RESET (write 1 to abort; reads 1 while the abort drains).
//   - 64-bit counters at COUNTER_BASE + 8 * index: reading the low word
//     snapshots the high word, and the next read of that counter's high
//     word returns the snapshot, so LO-then-HI reads are consistent.
// Register offsets and bit numbers come from the generated loom_isa.vh.
`include "loom_isa.vh"

module loom_ctrl #(
  parameter [31:0]  ConfigHash = 32'd0,
  parameter [15:0]  HwVersion  = 16'd1,
  parameter integer NumCnt     = 21,
  localparam integer NumSeg    = `LOOM_NUM_SEGMENTS
) (
  input  wire                   clk_i,
  input  wire                   rst_ni,
  // AXI4-Lite slave
  input  wire [11:0]            s_axil_awaddr_i,
  input  wire                   s_axil_awvalid_i,
  output wire                   s_axil_awready_o,
  input  wire [31:0]            s_axil_wdata_i,
  input  wire [3:0]             s_axil_wstrb_i,
  input  wire                   s_axil_wvalid_i,
  output wire                   s_axil_wready_o,
  output wire [1:0]             s_axil_bresp_o,
  output wire                   s_axil_bvalid_o,
  input  wire                   s_axil_bready_i,
  input  wire [11:0]            s_axil_araddr_i,
  input  wire                   s_axil_arvalid_i,
  output wire                   s_axil_arready_o,
  output wire [31:0]            s_axil_rdata_o,
  output wire [1:0]             s_axil_rresp_o,
  output wire                   s_axil_rvalid_o,
  input  wire                   s_axil_rready_i,
  // job control (loom_job)
  output wire                   start_req_o,
  input  wire                   start_ack_i,
  output wire                   soft_reset_o,
  input  wire                   job_idle_i,
  input  wire                   job_done_i,
  input  wire                   soft_busy_i,
  input  wire [3:0]             err_code_i,
  input  wire [31:0]            err_insn_i,
  // job arguments
  output wire [63:0]            insn_addr_o,
  output wire [31:0]            insn_count_o,
  output wire [NumSeg*64-1:0]   seg_base_o,
  output wire [NumSeg*64-1:0]   seg_size_o,
  // counters (loom_perf), counter i at bits [64*i +: 64]
  input  wire [NumCnt*64-1:0]   counters_i,
  output wire                   interrupt_o
);
  localparam integer SEG_SHIFT = $clog2(`LOOM_REG_SEG_STRIDE);
  localparam integer CNT_SHIFT = 3;  // 64-bit counters, 8 bytes apart
  localparam integer SegEndI = {20'd0, `LOOM_REG_SEG_BASE_LO} + NumSeg * {20'd0, `LOOM_REG_SEG_STRIDE};
  localparam integer CntEndI = {20'd0, `LOOM_REG_COUNTER_BASE} + NumCnt * 8;
  localparam [11:0] SEG_END = SegEndI[11:0];
  localparam [11:0] CNT_END = CntEndI[11:0];
  localparam [11:0] SEG_W_BASE_HI = `LOOM_REG_SEG_BASE_HI - `LOOM_REG_SEG_BASE_LO;
  localparam [11:0] SEG_W_SIZE_LO = `LOOM_REG_SEG_SIZE_LO - `LOOM_REG_SEG_BASE_LO;
  localparam [11:0] SEG_W_SIZE_HI = `LOOM_REG_SEG_SIZE_HI - `LOOM_REG_SEG_BASE_LO;
  localparam integer CntIdxW = $clog2(NumCnt);

  generate
    if (NumCnt < 2 || (1 << SEG_SHIFT) != `LOOM_REG_SEG_STRIDE) begin : g_bad_params
      loom_ctrl_illegal_parameters u_illegal ();
    end
  endgenerate

  wire        reg_we, reg_re;
  wire [11:0] reg_waddr, reg_raddr;
  wire [31:0] reg_wdata;
  wire [3:0]  reg_wstrb;
  reg  [31:0] reg_rdata;

  loom_axil_slave u_axil (
    .clk_i            (clk_i),
    .rst_ni           (rst_ni),
    .s_axil_awaddr_i  (s_axil_awaddr_i),
    .s_axil_awvalid_i (s_axil_awvalid_i),
    .s_axil_awready_o (s_axil_awready_o),
    .s_axil_wdata_i   (s_axil_wdata_i),
    .s_axil_wstrb_i   (s_axil_wstrb_i),
    .s_axil_wvalid_i  (s_axil_wvalid_i),
    .s_axil_wready_o  (s_axil_wready_o),
    .s_axil_bresp_o   (s_axil_bresp_o),
    .s_axil_bvalid_o  (s_axil_bvalid_o),
    .s_axil_bready_i  (s_axil_bready_i),
    .s_axil_araddr_i  (s_axil_araddr_i),
    .s_axil_arvalid_i (s_axil_arvalid_i),
    .s_axil_arready_o (s_axil_arready_o),
    .s_axil_rdata_o   (s_axil_rdata_o),
    .s_axil_rresp_o   (s_axil_rresp_o),
    .s_axil_rvalid_o  (s_axil_rvalid_o),
    .s_axil_rready_i  (s_axil_rready_i),
    .reg_we_o         (reg_we),
    .reg_waddr_o      (reg_waddr),
    .reg_wdata_o      (reg_wdata),
    .reg_wstrb_o      (reg_wstrb),
    .reg_re_o         (reg_re),
    .reg_raddr_o      (reg_raddr),
    .reg_rdata_i      (reg_rdata)
  );

  // Byte-strobed update of a 32-bit register.
  function [31:0] strb_merge(input [31:0] old, input [31:0] val, input [3:0] strb);
    integer b;
    begin
      strb_merge = old;
      for (b = 0; b < 4; b = b + 1)
        if (strb[b]) strb_merge[8*b +: 8] = val[8*b +: 8];
    end
  endfunction

  reg        start_q, start_d;
  reg        done_q, done_d;
  reg        ready_q, ready_d;
  reg        auto_q, auto_d;
  reg        gie_q, gie_d;
  reg [1:0]  ier_q, ier_d;
  reg [1:0]  isr_q, isr_d;
  reg [63:0] insn_addr_q, insn_addr_d;
  reg [31:0] insn_count_q, insn_count_d;
  reg [NumSeg*64-1:0] seg_base_q, seg_base_d;
  reg [NumSeg*64-1:0] seg_size_q, seg_size_d;
  reg        soft_reset_q, soft_reset_d;
  reg [31:0] snap_q, snap_d;
  reg [CntIdxW-1:0] snap_idx_q, snap_idx_d;
  reg        snap_valid_q, snap_valid_d;

  assign start_req_o  = start_q;
  assign soft_reset_o = soft_reset_q;
  assign insn_addr_o  = insn_addr_q;
  assign insn_count_o = insn_count_q;
  assign seg_base_o   = seg_base_q;
  assign seg_size_o   = seg_size_q;
  assign interrupt_o  = gie_q && (isr_q != 2'b00);

  // Address decode of the segment table and the counters.
  wire [11:0] seg_off_w = reg_waddr - `LOOM_REG_SEG_BASE_LO;
  wire [11:0] seg_off_r = reg_raddr - `LOOM_REG_SEG_BASE_LO;
  wire        seg_hit_w = (reg_waddr >= `LOOM_REG_SEG_BASE_LO) && (reg_waddr < SEG_END);
  wire        seg_hit_r = (reg_raddr >= `LOOM_REG_SEG_BASE_LO) && (reg_raddr < SEG_END);
  wire [11:0] seg_word_w = seg_off_w & (`LOOM_REG_SEG_STRIDE - 12'd1);
  wire [11:0] seg_word_r = seg_off_r & (`LOOM_REG_SEG_STRIDE - 12'd1);
  wire [11:0] seg_idx_w12 = seg_off_w >> SEG_SHIFT;
  wire [11:0] seg_idx_r12 = seg_off_r >> SEG_SHIFT;
  wire [2:0]  seg_idx_w = seg_idx_w12[2:0];
  wire [2:0]  seg_idx_r = seg_idx_r12[2:0];
  wire [11:0] cnt_off_r = reg_raddr - `LOOM_REG_COUNTER_BASE;
  wire        cnt_hit_r = (reg_raddr >= `LOOM_REG_COUNTER_BASE) && (reg_raddr < CNT_END);
  wire [11:0] cnt_idx_r12 = cnt_off_r >> CNT_SHIFT;
  wire [CntIdxW-1:0] cnt_idx_r = cnt_idx_r12[CntIdxW-1:0];
  wire        cnt_hi_r = cnt_off_r[2];

  // Explicit multiplexers (a variable part-select of the flat vectors would
  // become a barrel shifter).
  reg [63:0] cnt_sel, seg_base_sel, seg_size_sel;
  integer c, sr;
  always @* begin
    cnt_sel = 64'd0;
    for (c = 0; c < NumCnt; c = c + 1)
      if (cnt_idx_r == c[CntIdxW-1:0]) cnt_sel = counters_i[64*c +: 64];
    seg_base_sel = 64'd0;
    seg_size_sel = 64'd0;
    for (sr = 0; sr < NumSeg; sr = sr + 1)
      if (seg_idx_r == sr[2:0]) begin
        seg_base_sel = seg_base_q[64*sr +: 64];
        seg_size_sel = seg_size_q[64*sr +: 64];
      end
  end

  wire [8:0]  unused_seg_idx_w = seg_idx_w12[11:3];
  wire [8:0]  unused_seg_idx_r = seg_idx_r12[11:3];
  wire [11:0] unused_cnt_idx = cnt_idx_r12;
  wire [2:0]  unused_cnt_off = {cnt_off_r[11], cnt_off_r[1:0]};

  wire ctrl_read = reg_re && (reg_raddr == `LOOM_REG_CTRL);

  // ---- read mux (combinational; sampled by the slave on the read strobe)
  always @* begin
    reg_rdata = 32'd0;
    case (reg_raddr)
      `LOOM_REG_CTRL: begin
        reg_rdata[`LOOM_CTRL_START]        = start_q;
        reg_rdata[`LOOM_CTRL_DONE]         = done_q;
        reg_rdata[`LOOM_CTRL_IDLE]         = job_idle_i;
        reg_rdata[`LOOM_CTRL_READY]        = ready_q;
        reg_rdata[`LOOM_CTRL_AUTO_RESTART] = auto_q;
      end
      `LOOM_REG_GIE:          reg_rdata = {31'd0, gie_q};
      `LOOM_REG_IER:          reg_rdata = {30'd0, ier_q};
      `LOOM_REG_ISR:          reg_rdata = {30'd0, isr_q};
      `LOOM_REG_INSN_ADDR_LO: reg_rdata = insn_addr_q[31:0];
      `LOOM_REG_INSN_ADDR_HI: reg_rdata = insn_addr_q[63:32];
      `LOOM_REG_INSN_COUNT:   reg_rdata = insn_count_q;
      `LOOM_REG_ID:           reg_rdata = `LOOM_HW_ID;
      `LOOM_REG_VERSION:      reg_rdata = {HwVersion, `LOOM_ISA_VERSION};
      `LOOM_REG_CONFIG_HASH:  reg_rdata = ConfigHash;
      `LOOM_REG_ERR_STATUS:   reg_rdata = {28'd0, err_code_i};
      `LOOM_REG_ERR_INSN:     reg_rdata = err_insn_i;
      `LOOM_REG_SOFT_RESET:   reg_rdata = {31'd0, soft_busy_i};
      default: begin
        if (seg_hit_r) begin
          case (seg_word_r)
            12'd0:         reg_rdata = seg_base_sel[31:0];
            SEG_W_BASE_HI: reg_rdata = seg_base_sel[63:32];
            SEG_W_SIZE_LO: reg_rdata = seg_size_sel[31:0];
            SEG_W_SIZE_HI: reg_rdata = seg_size_sel[63:32];
            default:       reg_rdata = 32'd0;
          endcase
        end else if (cnt_hit_r) begin
          if (!cnt_hi_r)                                reg_rdata = cnt_sel[31:0];
          else if (snap_valid_q && snap_idx_q == cnt_idx_r) reg_rdata = snap_q;
          else                                          reg_rdata = cnt_sel[63:32];
        end
      end
    endcase
  end

  // ---- register updates
  integer sw;
  always @* begin
    start_d      = start_q;
    done_d       = done_q;
    ready_d      = ready_q;
    auto_d       = auto_q;
    gie_d        = gie_q;
    ier_d        = ier_q;
    isr_d        = isr_q;
    insn_addr_d  = insn_addr_q;
    insn_count_d = insn_count_q;
    seg_base_d   = seg_base_q;
    seg_size_d   = seg_size_q;
    soft_reset_d = 1'b0;
    snap_d       = snap_q;
    snap_idx_d   = snap_idx_q;
    snap_valid_d = snap_valid_q;

    // Software writes.
    if (reg_we) begin
      case (reg_waddr)
        `LOOM_REG_CTRL: begin
          if (reg_wstrb[0]) begin
            if (reg_wdata[`LOOM_CTRL_START]) start_d = 1'b1;
            auto_d = reg_wdata[`LOOM_CTRL_AUTO_RESTART];
          end
        end
        `LOOM_REG_GIE: if (reg_wstrb[0]) gie_d = reg_wdata[0];
        `LOOM_REG_IER: if (reg_wstrb[0]) ier_d = reg_wdata[1:0];
        `LOOM_REG_ISR: if (reg_wstrb[0]) isr_d = isr_q & ~reg_wdata[1:0];
        `LOOM_REG_INSN_ADDR_LO:
          insn_addr_d[31:0] = strb_merge(insn_addr_q[31:0], reg_wdata, reg_wstrb) & 32'hFFFF_FFF0;
        `LOOM_REG_INSN_ADDR_HI:
          insn_addr_d[63:32] = strb_merge(insn_addr_q[63:32], reg_wdata, reg_wstrb);
        `LOOM_REG_INSN_COUNT:
          insn_count_d = strb_merge(insn_count_q, reg_wdata, reg_wstrb);
        `LOOM_REG_SOFT_RESET: if (reg_wstrb[0] && reg_wdata[0]) soft_reset_d = 1'b1;
        default: begin
          for (sw = 0; sw < NumSeg; sw = sw + 1) begin
            if (seg_hit_w && seg_idx_w == sw[2:0]) begin
              case (seg_word_w)
                12'd0: seg_base_d[64*sw +: 32] =
                    strb_merge(seg_base_q[64*sw +: 32], reg_wdata, reg_wstrb) & 32'hFFFF_FFC0;
                SEG_W_BASE_HI: seg_base_d[64*sw + 32 +: 32] =
                    strb_merge(seg_base_q[64*sw + 32 +: 32], reg_wdata, reg_wstrb);
                SEG_W_SIZE_LO: seg_size_d[64*sw +: 32] =
                    strb_merge(seg_size_q[64*sw +: 32], reg_wdata, reg_wstrb);
                SEG_W_SIZE_HI: seg_size_d[64*sw + 32 +: 32] =
                    strb_merge(seg_size_q[64*sw + 32 +: 32], reg_wdata, reg_wstrb);
                default: ;
              endcase
            end
          end
        end
      endcase
    end

    // Read side effects.
    if (ctrl_read) begin
      done_d  = 1'b0;
      ready_d = 1'b0;
    end
    if (reg_re && cnt_hit_r) begin
      if (!cnt_hi_r) begin
        snap_d       = cnt_sel[63:32];
        snap_idx_d   = cnt_idx_r;
        snap_valid_d = 1'b1;
      end else begin
        snap_valid_d = 1'b0;
      end
    end

    // Job events (after software so that an event in the same cycle wins).
    if (start_ack_i) start_d = 1'b0;
    if (job_done_i) begin
      done_d  = 1'b1;
      ready_d = 1'b1;
      if (ier_q[0]) isr_d[0] = 1'b1;
      if (ier_q[1]) isr_d[1] = 1'b1;
      if (auto_q) start_d = 1'b1;
    end
    if (soft_reset_d) begin
      start_d = 1'b0;
      done_d  = 1'b0;
      ready_d = 1'b0;
    end
  end

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      start_q      <= 1'b0;
      done_q       <= 1'b0;
      ready_q      <= 1'b0;
      auto_q       <= 1'b0;
      gie_q        <= 1'b0;
      ier_q        <= 2'b00;
      isr_q        <= 2'b00;
      insn_addr_q  <= 64'd0;
      insn_count_q <= 32'd0;
      seg_base_q   <= {NumSeg*64{1'b0}};
      seg_size_q   <= {NumSeg*64{1'b0}};
      soft_reset_q <= 1'b0;
      snap_q       <= 32'd0;
      snap_idx_q   <= {CntIdxW{1'b0}};
      snap_valid_q <= 1'b0;
    end else begin
      start_q      <= start_d;
      done_q       <= done_d;
      ready_q      <= ready_d;
      auto_q       <= auto_d;
      gie_q        <= gie_d;
      ier_q        <= ier_d;
      isr_q        <= isr_d;
      insn_addr_q  <= insn_addr_d;
      insn_count_q <= insn_count_d;
      seg_base_q   <= seg_base_d;
      seg_size_q   <= seg_size_d;
      soft_reset_q <= soft_reset_d;
      snap_q       <= snap_d;
      snap_idx_q   <= snap_idx_d;
      snap_valid_q <= snap_valid_d;
    end
  end
endmodule
