// loom_top.v (stub) - a stand-in for the real accelerator top level.
//
// Used only to prove the tsim harness, its DRAM model, the C API and the
// libloom backend before (or without) the real RTL: `make tsim
// TSIM_RTL=stub`.  It implements the register map's control part (ap_ctrl_hs
// CTRL with clear-on-read DONE, GIE/IER/ISR and interrupt_o, ID, VERSION,
// CONFIG_HASH, ERR_STATUS, SOFT_RESET, the CYCLES and BYTES_RD_INSN
// counters) and one "job": read the first instruction (16 bytes) from
// INSN_ADDR and write those bytes to the base of segment 0, then report
// done.  That exercises 64-bit addresses, a read burst and a write burst.
// An AXI error response ends the job with ERR_STATUS = BUS.
`include "loom_cfg.vh"
`include "loom_isa.vh"

module loom_top (
  input  wire         clk_i,
  input  wire         rst_ni,
  input  wire [11:0]  s_axil_awaddr_i,
  input  wire         s_axil_awvalid_i,
  output wire         s_axil_awready_o,
  input  wire [31:0]  s_axil_wdata_i,
  input  wire [3:0]   s_axil_wstrb_i,
  input  wire         s_axil_wvalid_i,
  output wire         s_axil_wready_o,
  output wire [1:0]   s_axil_bresp_o,
  output wire         s_axil_bvalid_o,
  input  wire         s_axil_bready_i,
  input  wire [11:0]  s_axil_araddr_i,
  input  wire         s_axil_arvalid_i,
  output wire         s_axil_arready_o,
  output wire [31:0]  s_axil_rdata_o,
  output wire [1:0]   s_axil_rresp_o,
  output wire         s_axil_rvalid_o,
  input  wire         s_axil_rready_i,
  output wire [3:0]   m_axi_awid_o,
  output wire [63:0]  m_axi_awaddr_o,
  output wire [7:0]   m_axi_awlen_o,
  output wire [2:0]   m_axi_awsize_o,
  output wire [1:0]   m_axi_awburst_o,
  output wire         m_axi_awvalid_o,
  input  wire         m_axi_awready_i,
  output wire [`LOOM_CFG_BUS_BITS-1:0]   m_axi_wdata_o,
  output wire [`LOOM_CFG_BUS_BITS/8-1:0] m_axi_wstrb_o,
  output wire         m_axi_wlast_o,
  output wire         m_axi_wvalid_o,
  input  wire         m_axi_wready_i,
  input  wire [3:0]   m_axi_bid_i,
  input  wire [1:0]   m_axi_bresp_i,
  input  wire         m_axi_bvalid_i,
  output wire         m_axi_bready_o,
  output wire [3:0]   m_axi_arid_o,
  output wire [63:0]  m_axi_araddr_o,
  output wire [7:0]   m_axi_arlen_o,
  output wire [2:0]   m_axi_arsize_o,
  output wire [1:0]   m_axi_arburst_o,
  output wire         m_axi_arvalid_o,
  input  wire         m_axi_arready_i,
  input  wire [3:0]   m_axi_rid_i,
  input  wire [`LOOM_CFG_BUS_BITS-1:0] m_axi_rdata_i,
  input  wire [1:0]   m_axi_rresp_i,
  input  wire         m_axi_rlast_i,
  input  wire         m_axi_rvalid_i,
  output wire         m_axi_rready_o,
  output wire         interrupt_o
);
  localparam integer Bus = `LOOM_CFG_BUS_BITS;
  localparam integer Beats = 128 / Bus;
  localparam integer LastBeatI = Beats - 1;
  localparam [7:0] LastBeat = LastBeatI[7:0];
  localparam [63:0] BeatBytes = {32'd0, Bus / 8};
  localparam [2:0] Size = (Bus == 64) ? 3'd3 : (Bus == 128) ? 3'd4 : 3'd5;
  localparam [2:0] StIdle = 3'd0, StAr = 3'd1, StR = 3'd2, StAw = 3'd3, StW = 3'd4, StB = 3'd5;

  reg [2:0]   st_q, st_d;
  reg [63:0]  insn_addr_q, seg0_q, cycles_q, bytes_q;
  reg [31:0]  insn_count_q, err_q;
  reg [127:0] data_q;
  reg [7:0]   beat_q;
  reg         done_q, gie_q, ier_q, isr_q;
  reg         bvalid_q, rvalid_q;
  reg [31:0]  rdata_q;

  wire wr_fire = s_axil_awvalid_i && s_axil_wvalid_i && !bvalid_q;
  wire rd_fire = s_axil_arvalid_i && !rvalid_q;
  wire start = wr_fire && s_axil_awaddr_i == 12'h000 && s_axil_wdata_i[0] && st_q == StIdle;
  wire soft_reset = wr_fire && s_axil_awaddr_i == 12'h0B4 && s_axil_wdata_i[0];
  wire r_fire = m_axi_rvalid_i && st_q == StR;
  wire [Bus+127:0] rd_cat = {m_axi_rdata_i, data_q};  // next beat in from the top
  wire b_fire = m_axi_bvalid_i && st_q == StB;
  wire finish = b_fire || (r_fire && m_axi_rlast_i && m_axi_rresp_i != 2'd0);

  always @* begin
    st_d = st_q;
    case (st_q)
      StIdle: if (start) st_d = (insn_count_q == 32'd0) ? StB : StAr;
      StAr:   if (m_axi_arready_i) st_d = StR;
      StR:    if (r_fire && m_axi_rlast_i) st_d = (m_axi_rresp_i != 2'd0) ? StIdle : StAw;
      StAw:   if (m_axi_awready_i) st_d = StW;
      StW:    if (m_axi_wready_i && beat_q == LastBeat) st_d = StB;
      StB:    if (b_fire || insn_count_q == 32'd0) st_d = StIdle;
      default: st_d = StIdle;
    endcase
    if (soft_reset) st_d = StIdle;
  end

  // Register read mux.
  reg [31:0] rd_val;
  always @* begin
    case (s_axil_araddr_i)
      12'h000: rd_val = {28'd0, st_q == StIdle, st_q == StIdle, done_q, st_q != StIdle};
      12'h004: rd_val = {31'd0, gie_q};
      12'h008: rd_val = {31'd0, ier_q};
      12'h00C: rd_val = {31'd0, isr_q};
      12'h010: rd_val = insn_addr_q[31:0];
      12'h014: rd_val = insn_addr_q[63:32];
      12'h018: rd_val = insn_count_q;
      12'h020: rd_val = seg0_q[31:0];
      12'h024: rd_val = seg0_q[63:32];
      12'h0A0: rd_val = `LOOM_HW_ID;
      12'h0A4: rd_val = {16'h0000, `LOOM_ISA_VERSION};
      12'h0A8: rd_val = `LOOM_CFG_HASH;
      12'h0AC: rd_val = err_q;
      12'h100: rd_val = cycles_q[31:0];
      12'h104: rd_val = cycles_q[63:32];
      12'h178: rd_val = bytes_q[31:0];
      12'h17C: rd_val = bytes_q[63:32];
      default: rd_val = 32'd0;
    endcase
  end

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      st_q <= StIdle; insn_addr_q <= 64'd0; seg0_q <= 64'd0; cycles_q <= 64'd0; bytes_q <= 64'd0;
      insn_count_q <= 32'd0; err_q <= 32'd0; data_q <= 128'd0; beat_q <= 8'd0;
      done_q <= 1'b0; gie_q <= 1'b0; ier_q <= 1'b0; isr_q <= 1'b0;
      bvalid_q <= 1'b0; rvalid_q <= 1'b0; rdata_q <= 32'd0;
    end else begin
      st_q <= st_d;
      if (bvalid_q && s_axil_bready_i) bvalid_q <= 1'b0;
      if (wr_fire) begin
        bvalid_q <= 1'b1;
        case (s_axil_awaddr_i)
          12'h004: gie_q <= s_axil_wdata_i[0];
          12'h008: ier_q <= s_axil_wdata_i[0];
          12'h00C: if (s_axil_wdata_i[0]) isr_q <= 1'b0;
          12'h010: insn_addr_q[31:0] <= s_axil_wdata_i;
          12'h014: insn_addr_q[63:32] <= s_axil_wdata_i;
          12'h018: insn_count_q <= s_axil_wdata_i;
          12'h020: seg0_q[31:0] <= s_axil_wdata_i;
          12'h024: seg0_q[63:32] <= s_axil_wdata_i;
          default: ;
        endcase
      end
      if (rvalid_q && s_axil_rready_i) rvalid_q <= 1'b0;
      if (rd_fire) begin
        rvalid_q <= 1'b1;
        rdata_q <= rd_val;
        if (s_axil_araddr_i == 12'h000) done_q <= 1'b0;
      end
      if (start) begin
        cycles_q <= 64'd0; bytes_q <= 64'd0; err_q <= 32'd0; beat_q <= 8'd0;
      end else if (st_q != StIdle) begin
        cycles_q <= cycles_q + 64'd1;
      end
      if (r_fire) begin
        data_q <= rd_cat[Bus+127:Bus];
        bytes_q <= bytes_q + BeatBytes;
        if (m_axi_rresp_i != 2'd0) err_q <= {28'd0, `LOOM_ERR_BUS};
      end
      if (st_q == StW && m_axi_wready_i) begin
        beat_q <= beat_q + 8'd1;
        data_q <= data_q >> Bus;
      end
      if (b_fire && m_axi_bresp_i != 2'd0) err_q <= {28'd0, `LOOM_ERR_BUS};
      if (finish || (st_q == StB && insn_count_q == 32'd0)) begin
        done_q <= 1'b1; isr_q <= 1'b1;
      end
    end
  end

  assign s_axil_awready_o = wr_fire;
  assign s_axil_wready_o  = wr_fire;
  assign s_axil_bresp_o   = 2'd0;
  assign s_axil_bvalid_o  = bvalid_q;
  assign s_axil_arready_o = rd_fire;
  assign s_axil_rdata_o   = rdata_q;
  assign s_axil_rresp_o   = 2'd0;
  assign s_axil_rvalid_o  = rvalid_q;

  assign m_axi_arid_o    = 4'd1;
  assign m_axi_araddr_o  = insn_addr_q;
  assign m_axi_arlen_o   = LastBeat;
  assign m_axi_arsize_o  = Size;
  assign m_axi_arburst_o = 2'd1;
  assign m_axi_arvalid_o = st_q == StAr;
  assign m_axi_rready_o  = st_q == StR;
  assign m_axi_awid_o    = 4'd2;
  assign m_axi_awaddr_o  = seg0_q;
  assign m_axi_awlen_o   = LastBeat;
  assign m_axi_awsize_o  = Size;
  assign m_axi_awburst_o = 2'd1;
  assign m_axi_awvalid_o = st_q == StAw;
  assign m_axi_wdata_o   = data_q[Bus-1:0];
  assign m_axi_wstrb_o   = {(Bus/8){1'b1}};
  assign m_axi_wlast_o   = beat_q == LastBeat;
  assign m_axi_wvalid_o  = st_q == StW;
  assign m_axi_bready_o  = st_q == StB;
  assign interrupt_o     = gie_q && ier_q && isr_q;

  wire unused_ok = &{1'b0, s_axil_wstrb_i, m_axi_bid_i, m_axi_rid_i, rd_cat[Bus-1:0]};
endmodule
