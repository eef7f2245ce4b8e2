// loom_vitis_top - loom_top under the port names Vivado and Vitis expect.
//
// Every board flow packages this module, not loom_top, as the Loom IP:
//
//   ap_clk, ap_rst_n       the kernel clock and its active-low reset
//   s_axi_control_*        AXI4-Lite control slave (docs/registers.md)
//   m_axi_gmem_*           AXI4 master to DRAM, 64-bit address
//   interrupt              active high, level: done, until ISR is cleared
//
// With these names Vivado's IP packager infers the two AXI interfaces, the
// clock, the reset and the interrupt without hand-written port maps, and
// Vitis accepts the IP as an RTL kernel (kernel.xml names the same ports;
// `loomgen kernel-xml`).  loom_top's own names follow the project's
// lowRISC-style suffixes, which the packager does not recognise.
//
// The master keeps its 64-bit address on every board.  On Zynq-7000 the
// HP ports take 32-bit AXI3: the SmartConnect in front of them converts the
// bursts (AXI4 256 beats -> AXI3 16 beats) and decodes the address against
// the DRAM segment before dropping the upper 32 bits, so a bus address
// above 4 GiB gets DECERR (reported as a bus error by loom_top) instead of
// aliasing low memory.  Truncating here would lose that.
//
// loom_top does not drive the AXI4 cache, protection, lock and QoS fields;
// they are constant here.  AxCACHE = 0011 (normal, non-cacheable,
// bufferable) is the value the Zynq HP ports and XRT shells expect for
// non-coherent DMA.
`include "loom_cfg.vh"

module loom_vitis_top (
  input  wire                            ap_clk,
  input  wire                            ap_rst_n,
  // AXI4-Lite control slave
  input  wire [11:0]                     s_axi_control_awaddr,
  input  wire                            s_axi_control_awvalid,
  output wire                            s_axi_control_awready,
  input  wire [31:0]                     s_axi_control_wdata,
  input  wire [3:0]                      s_axi_control_wstrb,
  input  wire                            s_axi_control_wvalid,
  output wire                            s_axi_control_wready,
  output wire [1:0]                      s_axi_control_bresp,
  output wire                            s_axi_control_bvalid,
  input  wire                            s_axi_control_bready,
  input  wire [11:0]                     s_axi_control_araddr,
  input  wire                            s_axi_control_arvalid,
  output wire                            s_axi_control_arready,
  output wire [31:0]                     s_axi_control_rdata,
  output wire [1:0]                      s_axi_control_rresp,
  output wire                            s_axi_control_rvalid,
  input  wire                            s_axi_control_rready,
  // AXI4 master
  output wire [3:0]                      m_axi_gmem_awid,
  output wire [63:0]                     m_axi_gmem_awaddr,
  output wire [7:0]                      m_axi_gmem_awlen,
  output wire [2:0]                      m_axi_gmem_awsize,
  output wire [1:0]                      m_axi_gmem_awburst,
  output wire                            m_axi_gmem_awlock,
  output wire [3:0]                      m_axi_gmem_awcache,
  output wire [2:0]                      m_axi_gmem_awprot,
  output wire [3:0]                      m_axi_gmem_awqos,
  output wire                            m_axi_gmem_awvalid,
  input  wire                            m_axi_gmem_awready,
  output wire [`LOOM_CFG_BUS_BITS-1:0]   m_axi_gmem_wdata,
  output wire [`LOOM_CFG_BUS_BITS/8-1:0] m_axi_gmem_wstrb,
  output wire                            m_axi_gmem_wlast,
  output wire                            m_axi_gmem_wvalid,
  input  wire                            m_axi_gmem_wready,
  input  wire [3:0]                      m_axi_gmem_bid,
  input  wire [1:0]                      m_axi_gmem_bresp,
  input  wire                            m_axi_gmem_bvalid,
  output wire                            m_axi_gmem_bready,
  output wire [3:0]                      m_axi_gmem_arid,
  output wire [63:0]                     m_axi_gmem_araddr,
  output wire [7:0]                      m_axi_gmem_arlen,
  output wire [2:0]                      m_axi_gmem_arsize,
  output wire [1:0]                      m_axi_gmem_arburst,
  output wire                            m_axi_gmem_arlock,
  output wire [3:0]                      m_axi_gmem_arcache,
  output wire [2:0]                      m_axi_gmem_arprot,
  output wire [3:0]                      m_axi_gmem_arqos,
  output wire                            m_axi_gmem_arvalid,
  input  wire                            m_axi_gmem_arready,
  input  wire [3:0]                      m_axi_gmem_rid,
  input  wire [`LOOM_CFG_BUS_BITS-1:0]   m_axi_gmem_rdata,
  input  wire [1:0]                      m_axi_gmem_rresp,
  input  wire                            m_axi_gmem_rlast,
  input  wire                            m_axi_gmem_rvalid,
  output wire                            m_axi_gmem_rready,
  output wire                            interrupt
);
  localparam [3:0] AXI_CACHE = 4'b0011;
  localparam [2:0] AXI_PROT  = 3'b000;
  localparam [3:0] AXI_QOS   = 4'b0000;

  assign m_axi_gmem_awlock  = 1'b0;
  assign m_axi_gmem_awcache = AXI_CACHE;
  assign m_axi_gmem_awprot  = AXI_PROT;
  assign m_axi_gmem_awqos   = AXI_QOS;
  assign m_axi_gmem_arlock  = 1'b0;
  assign m_axi_gmem_arcache = AXI_CACHE;
  assign m_axi_gmem_arprot  = AXI_PROT;
  assign m_axi_gmem_arqos   = AXI_QOS;

  loom_top u_top (
    .clk_i            (ap_clk),
    .rst_ni           (ap_rst_n),
    .s_axil_awaddr_i  (s_axi_control_awaddr),
    .s_axil_awvalid_i (s_axi_control_awvalid),
    .s_axil_awready_o (s_axi_control_awready),
    .s_axil_wdata_i   (s_axi_control_wdata),
    .s_axil_wstrb_i   (s_axi_control_wstrb),
    .s_axil_wvalid_i  (s_axi_control_wvalid),
    .s_axil_wready_o  (s_axi_control_wready),
    .s_axil_bresp_o   (s_axi_control_bresp),
    .s_axil_bvalid_o  (s_axi_control_bvalid),
    .s_axil_bready_i  (s_axi_control_bready),
    .s_axil_araddr_i  (s_axi_control_araddr),
    .s_axil_arvalid_i (s_axi_control_arvalid),
    .s_axil_arready_o (s_axi_control_arready),
    .s_axil_rdata_o   (s_axi_control_rdata),
    .s_axil_rresp_o   (s_axi_control_rresp),
    .s_axil_rvalid_o  (s_axi_control_rvalid),
    .s_axil_rready_i  (s_axi_control_rready),
    .m_axi_awid_o     (m_axi_gmem_awid),
    .m_axi_awaddr_o   (m_axi_gmem_awaddr),
    .m_axi_awlen_o    (m_axi_gmem_awlen),
    .m_axi_awsize_o   (m_axi_gmem_awsize),
    .m_axi_awburst_o  (m_axi_gmem_awburst),
    .m_axi_awvalid_o  (m_axi_gmem_awvalid),
    .m_axi_awready_i  (m_axi_gmem_awready),
    .m_axi_wdata_o    (m_axi_gmem_wdata),
    .m_axi_wstrb_o    (m_axi_gmem_wstrb),
    .m_axi_wlast_o    (m_axi_gmem_wlast),
    .m_axi_wvalid_o   (m_axi_gmem_wvalid),
    .m_axi_wready_i   (m_axi_gmem_wready),
    .m_axi_bid_i      (m_axi_gmem_bid),
    .m_axi_bresp_i    (m_axi_gmem_bresp),
    .m_axi_bvalid_i   (m_axi_gmem_bvalid),
    .m_axi_bready_o   (m_axi_gmem_bready),
    .m_axi_arid_o     (m_axi_gmem_arid),
    .m_axi_araddr_o   (m_axi_gmem_araddr),
    .m_axi_arlen_o    (m_axi_gmem_arlen),
    .m_axi_arsize_o   (m_axi_gmem_arsize),
    .m_axi_arburst_o  (m_axi_gmem_arburst),
    .m_axi_arvalid_o  (m_axi_gmem_arvalid),
    .m_axi_arready_i  (m_axi_gmem_arready),
    .m_axi_rid_i      (m_axi_gmem_rid),
    .m_axi_rdata_i    (m_axi_gmem_rdata),
    .m_axi_rresp_i    (m_axi_gmem_rresp),
    .m_axi_rlast_i    (m_axi_gmem_rlast),
    .m_axi_rvalid_i   (m_axi_gmem_rvalid),
    .m_axi_rready_o   (m_axi_gmem_rready),
    .interrupt_o      (interrupt)
  );
endmodule
