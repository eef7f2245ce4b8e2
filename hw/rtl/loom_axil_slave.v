// loom_axil_slave - AXI4-Lite slave front end of the register block.
//
// Turns the five AXI4-Lite channels into single-cycle register accesses:
// a write strobe (reg_we_o with address, data and byte strobes) and a read
// strobe (reg_re_o with address) whose data reg_rdata_i is sampled in the
// same cycle.  Read side effects (CTRL.DONE clear on read, counter
// snapshots) therefore happen exactly once per AXI read.
//
// A write is taken when address and data are both valid and the previous
// response has been or is being accepted; AWREADY and WREADY rise together.
// A read is taken when the previous read data has been or is being
// accepted.  Every response is OKAY; unmapped offsets read as zero and
// ignore writes.  Responses are registered, so one access of each kind
// completes per cycle at full rate.
module loom_axil_slave (
  input  wire        clk_i,
  input  wire        rst_ni,
  // AXI4-Lite slave
  input  wire [11:0] s_axil_awaddr_i,
  input  wire        s_axil_awvalid_i,
  output wire        s_axil_awready_o,
  input  wire [31:0] s_axil_wdata_i,
  input  wire [3:0]  s_axil_wstrb_i,
  input  wire        s_axil_wvalid_i,
  output wire        s_axil_wready_o,
  output wire [1:0]  s_axil_bresp_o,
  output wire        s_axil_bvalid_o,
  input  wire        s_axil_bready_i,
  input  wire [11:0] s_axil_araddr_i,
  input  wire        s_axil_arvalid_i,
  output wire        s_axil_arready_o,
  output wire [31:0] s_axil_rdata_o,
  output wire [1:0]  s_axil_rresp_o,
  output wire        s_axil_rvalid_o,
  input  wire        s_axil_rready_i,
  // register access
  output wire        reg_we_o,
  output wire [11:0] reg_waddr_o,
  output wire [31:0] reg_wdata_o,
  output wire [3:0]  reg_wstrb_o,
  output wire        reg_re_o,
  output wire [11:0] reg_raddr_o,
  input  wire [31:0] reg_rdata_i
);
  localparam [1:0] RESP_OKAY = 2'b00;

  reg        bvalid_q, bvalid_d;
  reg        rvalid_q, rvalid_d;
  reg [31:0] rdata_q, rdata_d;

  wire wr_fire = s_axil_awvalid_i && s_axil_wvalid_i && (!bvalid_q || s_axil_bready_i);
  wire rd_fire = s_axil_arvalid_i && (!rvalid_q || s_axil_rready_i);

  assign s_axil_awready_o = wr_fire;
  assign s_axil_wready_o  = wr_fire;
  assign s_axil_bresp_o   = RESP_OKAY;
  assign s_axil_bvalid_o  = bvalid_q;
  assign s_axil_arready_o = rd_fire;
  assign s_axil_rdata_o   = rdata_q;
  assign s_axil_rresp_o   = RESP_OKAY;
  assign s_axil_rvalid_o  = rvalid_q;

  // Word-aligned offsets: the two low address bits select bytes, which the
  // strobes already describe.
  assign reg_we_o    = wr_fire;
  assign reg_waddr_o = {s_axil_awaddr_i[11:2], 2'b00};
  assign reg_wdata_o = s_axil_wdata_i;
  assign reg_wstrb_o = s_axil_wstrb_i;
  assign reg_re_o    = rd_fire;
  assign reg_raddr_o = {s_axil_araddr_i[11:2], 2'b00};
  wire [3:0] unused_addr_lsbs = {s_axil_awaddr_i[1:0], s_axil_araddr_i[1:0]};

  always @* begin
    bvalid_d = bvalid_q;
    rvalid_d = rvalid_q;
    rdata_d  = rdata_q;
    if (s_axil_bready_i) bvalid_d = 1'b0;
    if (wr_fire) bvalid_d = 1'b1;
    if (s_axil_rready_i) rvalid_d = 1'b0;
    if (rd_fire) begin
      rvalid_d = 1'b1;
      rdata_d  = reg_rdata_i;
    end
  end

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      bvalid_q <= 1'b0;
      rvalid_q <= 1'b0;
      rdata_q  <= 32'd0;
    end else begin
      bvalid_q <= bvalid_d;
      rvalid_q <= rvalid_d;
      rdata_q  <= rdata_d;
    end
  end
endmodule
