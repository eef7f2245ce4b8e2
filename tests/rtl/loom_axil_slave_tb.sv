// loom_axil_slave_tb - loom_axil_slave with a register array behind it,
// driven by a random AXI4-Lite master: address and data channels raised
// independently with random delays (held until accepted), random BREADY
// and RREADY.  Checks that every write reaches the registers exactly once
// with its address, data and byte strobes, every read strobes the register
// block exactly once and returns its data, the responses come one per
// request and OKAY, and RVALID/BVALID hold until accepted.
module loom_axil_slave_tb (
  input  wire clk_i,
  output wire done_o,
  output wire fail_o
);
  reg         rst_n = 1'b0;
  reg  [11:0] awaddr = 12'd0, araddr = 12'd0;
  reg         awvalid = 1'b0, wvalid = 1'b0, bready = 1'b0, arvalid = 1'b0, rready = 1'b0;
  reg  [31:0] wdata = 32'd0;
  reg  [3:0]  wstrb = 4'd0;
  wire        awready, wready, bvalid, arready, rvalid;
  wire [1:0]  bresp, rresp;
  wire [31:0] rdata;
  wire        reg_we, reg_re;
  wire [11:0] reg_waddr, reg_raddr;
  wire [31:0] reg_wdata;
  wire [3:0]  reg_wstrb;
  reg  [31:0] regs [0:1023];
  reg         done_r = 1'b0, fail_r = 1'b0;
  assign done_o = done_r;
  assign fail_o = fail_r;

  loom_axil_slave u_dut (
    .clk_i            (clk_i),
    .rst_ni           (rst_n),
    .s_axil_awaddr_i  (awaddr),
    .s_axil_awvalid_i (awvalid),
    .s_axil_awready_o (awready),
    .s_axil_wdata_i   (wdata),
    .s_axil_wstrb_i   (wstrb),
    .s_axil_wvalid_i  (wvalid),
    .s_axil_wready_o  (wready),
    .s_axil_bresp_o   (bresp),
    .s_axil_bvalid_o  (bvalid),
    .s_axil_bready_i  (bready),
    .s_axil_araddr_i  (araddr),
    .s_axil_arvalid_i (arvalid),
    .s_axil_arready_o (arready),
    .s_axil_rdata_o   (rdata),
    .s_axil_rresp_o   (rresp),
    .s_axil_rvalid_o  (rvalid),
    .s_axil_rready_i  (rready),
    .reg_we_o         (reg_we),
    .reg_waddr_o      (reg_waddr),
    .reg_wdata_o      (reg_wdata),
    .reg_wstrb_o      (reg_wstrb),
    .reg_re_o         (reg_re),
    .reg_raddr_o      (reg_raddr),
    .reg_rdata_i      (regs[reg_raddr[11:2]])
  );

  // The register block: byte-strobed writes.
  integer b;
  always @(posedge clk_i) begin
    if (reg_we)
      for (b = 0; b < 4; b = b + 1)
        if (reg_wstrb[b]) regs[reg_waddr[11:2]][8*b +: 8] <= reg_wdata[8*b +: 8];
  end

  reg  [31:0] model [0:1023];
  reg  [31:0] exp_r [0:255];  // read data expected, in order
  integer i, cyc, errors = 0, writes = 0, reads = 0, bresps = 0, rresps = 0;
  integer wq_aw = 0, wq_w = 0, rq_head = 0, rq_tail = 0;
  reg         aw_sent = 1'b1, w_sent = 1'b1, aw_fire = 1'b0, w_fire = 1'b0, ar_fire = 1'b0;
  reg         prev_bvalid = 1'b0, prev_bready = 1'b0, prev_rvalid = 1'b0, prev_rready = 1'b0;
  reg  [31:0] prev_rdata = 32'd0;

  initial begin
    for (i = 0; i < 1024; i = i + 1) begin
      regs[i]  = $urandom;
      model[i] = regs[i];
    end
    repeat (3) @(negedge clk_i);
    rst_n = 1'b1;
    for (cyc = 0; cyc < 4000; cyc = cyc + 1) begin
      @(negedge clk_i);
      if ((prev_bvalid && !prev_bready && !bvalid) ||
          (prev_rvalid && !prev_rready && (!rvalid || rdata !== prev_rdata)) ||
          (bvalid && bresp !== 2'b00) || (rvalid && rresp !== 2'b00)) begin
        if (errors < 5) $display("loom_axil_slave_tb: response protocol at cycle %0d", cyc);
        errors = errors + 1;
      end
      // drop what was accepted at the edge just passed
      if (aw_fire) begin
        awvalid = 1'b0;
        aw_sent = 1'b1;
      end
      if (w_fire) begin
        wvalid = 1'b0;
        w_sent = 1'b1;
      end
      if (ar_fire) arvalid = 1'b0;
      // a new write: address and data raised independently
      if (aw_sent && w_sent && ($urandom % 100) < 40) begin
        awaddr = ((($urandom % 1024) << 2) | ($urandom % 4));
        wdata  = $urandom;
        wstrb  = $urandom % 16;
        aw_sent = 1'b0;
        w_sent  = 1'b0;
      end
      if (!awvalid && !aw_sent && ($urandom % 100) < 50) awvalid = 1'b1;
      if (!wvalid && !w_sent && ($urandom % 100) < 50) wvalid = 1'b1;
      if (!arvalid && ($urandom % 100) < 40) begin
        araddr  = ((($urandom % 1024) << 2) | ($urandom % 4));
        arvalid = 1'b1;
      end
      bready = ($urandom % 100) < 60;
      rready = ($urandom % 100) < 60;
      #1;
      // reads sample the registers before this cycle's write lands
      if (arvalid && arready) begin
        exp_r[rq_tail % 256] = model[araddr[11:2]];
        rq_tail = rq_tail + 1;
        reads = reads + 1;
      end
      // the register block's view
      if (reg_we) begin
        if (reg_waddr !== {awaddr[11:2], 2'b00} || reg_wdata !== wdata || reg_wstrb !== wstrb ||
            !(awvalid && awready && wvalid && wready)) begin
          if (errors < 5) $display("loom_axil_slave_tb: bad register write at cycle %0d", cyc);
          errors = errors + 1;
        end
        for (b = 0; b < 4; b = b + 1)
          if (wstrb[b]) model[awaddr[11:2]][8*b +: 8] = wdata[8*b +: 8];
        writes = writes + 1;
      end
      aw_fire = awvalid && awready;
      w_fire  = wvalid && wready;
      ar_fire = arvalid && arready;
      if (reg_re !== (arvalid && arready)) begin
        if (errors < 5) $display("loom_axil_slave_tb: read strobe without handshake");
        errors = errors + 1;
      end
      if (rvalid && rready) begin
        if (rq_head == rq_tail || rdata !== exp_r[rq_head % 256]) begin
          if (errors < 5) $display("loom_axil_slave_tb: read %0d returned %h", rq_head, rdata);
          errors = errors + 1;
        end
        rq_head = rq_head + 1;
        rresps = rresps + 1;
      end
      if (bvalid && bready) bresps = bresps + 1;
      prev_bvalid = bvalid;
      prev_bready = bready;
      prev_rvalid = rvalid;
      prev_rready = rready;
      prev_rdata  = rdata;
    end
    for (i = 0; i < 1024; i = i + 1)
      if (regs[i] !== model[i]) errors = errors + 1;
    fail_r = (errors != 0) || (writes < 200) || (reads < 200) ||
             (bresps + 1 < writes) || (rresps + 1 < reads);
    $display("loom_axil_slave_tb: %0d writes, %0d reads, %0d errors: %s", writes, reads, errors,
             fail_r ? "FAIL" : "PASS");
    done_r = 1'b1;
  end
endmodule
