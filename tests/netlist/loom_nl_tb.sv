// loom_nl_tb - one accelerator job on loom_top in Icarus Verilog, as a
// board would run it: the RTL (4-state) or the Yosys synth_xilinx netlist
// with Yosys's Xilinx cell models (tests/netlist/run_netlist.sh).
//
//   vvp SIM +job=jN.job +mem=jN.mem +out=jN.got [+max_cycles=N] [+progress=N]
//
// The image and the job's arguments come from tests/netlist/nl_image.c.
// The testbench resets the accelerator, then drives the register sequence
// of driver/lib/hwseq.h (the one the runtime and the kernel module use;
// offsets and bits from the generated loom_isa.vh): probe ID, VERSION and
// CONFIG_HASH, wait for CTRL.IDLE, write the instruction address and count
// and the segment table, clear ISR, IER = DONE, GIE = 1, CTRL = START;
// wait for interrupt_o; collect CTRL, ERR_STATUS and ERR_INSN; acknowledge
// ISR.  It then dumps the image, one byte per line, for `cmp` against
// fsim's (nl_image's jN.exp), and compares ERR_STATUS and, after an error,
// ERR_INSN with fsim's.
//
// The X check: from the end of reset, on every falling edge (the rising
// edge's updates have settled), no output of loom_top may be X or Z: the
// VALIDs and READYs of every channel and interrupt_o always, the address,
// length, size, burst and ID of a request while its VALID is high, the
// write data bytes its WSTRB enables, the read data and responses of the
// register slave while RVALID/BVALID are high.  With +define+LOOM_NL_RTL
// the same holds for the control state inside the RTL (the list in
// check_rtl below: job and module FSMs, queue and token counts, bursts
// outstanding).  The first offender is named with its cycle, and the run
// fails.  Verilator is 2-state and cannot see any of this.
//
// Prints one result line ("PASS cycles=N" or "FAIL: why") and finishes.
`timescale 1ns / 1ps
`include "loom_isa.vh"
`include "loom_cfg.vh"

module loom_nl_tb;
  localparam integer BusBits = `LOOM_CFG_BUS_BITS;
  localparam integer BB = BusBits / 8;
  localparam integer ResetCycles = 16;

  reg clk = 1'b0;
  reg rst_n = 1'b0;
  always #5 clk = ~clk;

  // ---- the job (nl_image.c's jN.job)
  reg [63:0] job [0:22];
  reg [63:0] base, size;
  reg [1023:0] job_path, mem_path, out_path;
  longint max_cycles;
  longint cycle = 0;
  longint progress = 0;  // +progress=N: a line every N cycles
  reg x_armed = 1'b0;
  integer fails = 0;

  // ---- AXI-Lite master
  reg  [11:0] s_awaddr = 12'd0, s_araddr = 12'd0;
  reg         s_awvalid = 1'b0, s_wvalid = 1'b0, s_bready = 1'b0, s_arvalid = 1'b0, s_rready = 1'b0;
  reg  [31:0] s_wdata = 32'd0;
  wire        s_awready, s_wready, s_bvalid, s_arready, s_rvalid;
  wire [1:0]  s_bresp, s_rresp;
  wire [31:0] s_rdata;

  // ---- AXI master
  wire [3:0]  awid, arid, bid, rid;
  wire [63:0] awaddr, araddr;
  wire [7:0]  awlen, arlen;
  wire [2:0]  awsize, arsize;
  wire [1:0]  awburst, arburst, bresp, rresp;
  wire        awvalid, awready, wlast, wvalid, wready, bvalid, bready;
  wire        arvalid, arready, rlast, rvalid, rready, irq;
  wire [BusBits-1:0] wdata, rdata;
  wire [BB-1:0]      wstrb;
  integer mem_errors;

  loom_top dut (
    .clk_i (clk), .rst_ni (rst_n),
    .s_axil_awaddr_i (s_awaddr), .s_axil_awvalid_i (s_awvalid), .s_axil_awready_o (s_awready),
    .s_axil_wdata_i (s_wdata), .s_axil_wstrb_i (4'hF), .s_axil_wvalid_i (s_wvalid),
    .s_axil_wready_o (s_wready), .s_axil_bresp_o (s_bresp), .s_axil_bvalid_o (s_bvalid),
    .s_axil_bready_i (s_bready), .s_axil_araddr_i (s_araddr), .s_axil_arvalid_i (s_arvalid),
    .s_axil_arready_o (s_arready), .s_axil_rdata_o (s_rdata), .s_axil_rresp_o (s_rresp),
    .s_axil_rvalid_o (s_rvalid), .s_axil_rready_i (s_rready),
    .m_axi_awid_o (awid), .m_axi_awaddr_o (awaddr), .m_axi_awlen_o (awlen),
    .m_axi_awsize_o (awsize), .m_axi_awburst_o (awburst), .m_axi_awvalid_o (awvalid),
    .m_axi_awready_i (awready), .m_axi_wdata_o (wdata), .m_axi_wstrb_o (wstrb),
    .m_axi_wlast_o (wlast), .m_axi_wvalid_o (wvalid), .m_axi_wready_i (wready),
    .m_axi_bid_i (bid), .m_axi_bresp_i (bresp), .m_axi_bvalid_i (bvalid), .m_axi_bready_o (bready),
    .m_axi_arid_o (arid), .m_axi_araddr_o (araddr), .m_axi_arlen_o (arlen),
    .m_axi_arsize_o (arsize), .m_axi_arburst_o (arburst), .m_axi_arvalid_o (arvalid),
    .m_axi_arready_i (arready), .m_axi_rid_i (rid), .m_axi_rdata_i (rdata),
    .m_axi_rresp_i (rresp), .m_axi_rlast_i (rlast), .m_axi_rvalid_i (rvalid),
    .m_axi_rready_o (rready), .interrupt_o (irq)
  );

  loom_nl_mem #(.BusBits(BusBits)) u_mem (
    .clk_i (clk), .base_i (base), .size_i (size),
    .awid_i (awid), .awaddr_i (awaddr), .awlen_i (awlen), .awsize_i (awsize),
    .awburst_i (awburst), .awvalid_i (awvalid), .awready_o (awready),
    .wdata_i (wdata), .wstrb_i (wstrb), .wlast_i (wlast), .wvalid_i (wvalid), .wready_o (wready),
    .bid_o (bid), .bresp_o (bresp), .bvalid_o (bvalid), .bready_i (bready),
    .arid_i (arid), .araddr_i (araddr), .arlen_i (arlen), .arsize_i (arsize),
    .arburst_i (arburst), .arvalid_i (arvalid), .arready_o (arready),
    .rid_o (rid), .rdata_o (rdata), .rresp_o (rresp), .rlast_o (rlast), .rvalid_o (rvalid),
    .rready_i (rready), .errors_o (mem_errors)
  );

  task automatic fail(input string why);
    $display("FAIL: %0s (cycle %0d)", why, cycle);
    $finish;
  endtask

  // ---- the X check
  task automatic xcheck(input string name, input logic [BusBits-1:0] v);
    if ($isunknown(v)) fail($sformatf("X reached %0s = %0h", name, v));
  endtask

  task automatic check_ports;
    integer i;
    xcheck("s_axil_awready_o", s_awready);
    xcheck("s_axil_wready_o", s_wready);
    xcheck("s_axil_bvalid_o", s_bvalid);
    xcheck("s_axil_arready_o", s_arready);
    xcheck("s_axil_rvalid_o", s_rvalid);
    if (s_bvalid === 1'b1) xcheck("s_axil_bresp_o", s_bresp);
    if (s_rvalid === 1'b1) begin
      xcheck("s_axil_rdata_o", s_rdata);
      xcheck("s_axil_rresp_o", s_rresp);
    end
    xcheck("m_axi_awvalid_o", awvalid);
    xcheck("m_axi_wvalid_o", wvalid);
    xcheck("m_axi_bready_o", bready);
    xcheck("m_axi_arvalid_o", arvalid);
    xcheck("m_axi_rready_o", rready);
    xcheck("interrupt_o", irq);
    if (awvalid === 1'b1) begin
      xcheck("m_axi_awaddr_o", awaddr);
      xcheck("m_axi_awlen_o", awlen);
      xcheck("m_axi_awsize_o", awsize);
      xcheck("m_axi_awburst_o", awburst);
      xcheck("m_axi_awid_o", awid);
    end
    if (arvalid === 1'b1) begin
      xcheck("m_axi_araddr_o", araddr);
      xcheck("m_axi_arlen_o", arlen);
      xcheck("m_axi_arsize_o", arsize);
      xcheck("m_axi_arburst_o", arburst);
      xcheck("m_axi_arid_o", arid);
    end
    if (wvalid === 1'b1) begin
      xcheck("m_axi_wstrb_o", wstrb);
      xcheck("m_axi_wlast_o", wlast);
      for (i = 0; i < BB; i++)
        if (wstrb[i]) xcheck($sformatf("m_axi_wdata_o[%0d:%0d]", 8 * i + 7, 8 * i), wdata[8*i +: 8]);
    end
  endtask

`ifdef LOOM_NL_RTL
  // The control state of the RTL: what decides when anything happens.
  task automatic check_rtl;
    xcheck("loom_top.running", dut.running);
    xcheck("loom_top.job_idle", dut.job_idle);
    xcheck("loom_top.job_done", dut.job_done);
    xcheck("loom_top.abort", dut.abort);
    xcheck("loom_top.err_code", dut.err_code);
    xcheck("loom_top.start_req", dut.start_req);
    xcheck("loom_top.soft_reset", dut.soft_reset);
    xcheck("loom_top.err_valid", dut.err_valid);
    xcheck("loom_top.quiet", dut.quiet);
    xcheck("loom_top.finish", dut.finish);
    xcheck("loom_top.mod_idle", dut.mod_idle);
    xcheck("loom_top.mod_blocked", dut.mod_blocked);
    xcheck("u_job.state_q", dut.u_job.state_q);
    xcheck("u_fetch.state_q", dut.u_fetch.state_q);
    xcheck("u_fetch.count_q", dut.u_fetch.count_q);
    xcheck("u_fetch.u_buf.count_q", dut.u_fetch.u_buf.count_q);
    xcheck("u_load.u_seq.state_q", dut.u_load.u_seq.state_q);
    xcheck("u_compute.u_seq.state_q", dut.u_compute.u_seq.state_q);
    xcheck("u_store.u_seq.state_q", dut.u_store.u_seq.state_q);
    xcheck("u_compute.state_q", dut.u_compute.state_q);
    xcheck("u_l2c.count_q", dut.u_l2c.count_q);
    xcheck("u_c2l.count_q", dut.u_c2l.count_q);
    xcheck("u_c2s.count_q", dut.u_c2s.count_q);
    xcheck("u_s2c.count_q", dut.u_s2c.count_q);
    xcheck("u_rd_arb.outst_q", dut.u_rd_arb.outst_q);
    xcheck("u_store.b_outst_q", dut.u_store.b_outst_q);
    xcheck("u_store.u_lenq.count_q", dut.u_store.u_lenq.count_q);
    xcheck("u_store.u_rowq.count_q", dut.u_store.u_rowq.count_q);
    xcheck("u_store.u_xfer.state_q", dut.u_store.u_xfer.state_q);
    xcheck("u_load.u_dma.u_xfer.state_q", dut.u_load.u_dma.u_xfer.state_q);
  endtask
`endif

  always @(negedge clk) begin
    if (x_armed) begin
      check_ports();
`ifdef LOOM_NL_RTL
      check_rtl();
`endif
    end
    if (mem_errors != 0) fail("the AXI memory saw a protocol error (above)");
    if (cycle > max_cycles) fail($sformatf("no interrupt within %0d cycles", max_cycles));
  end
  always @(posedge clk) begin
    cycle <= cycle + 1;
    if (progress != 0 && cycle % progress == 0) $display("- cycle %0d", cycle);
  end

  // ---- register accesses (every TB input changes at a rising edge, non-blocking)
  task automatic reg_write(input [11:0] off, input [31:0] v);
    integer n;
    bit done;
    s_awaddr <= off;
    s_wdata <= v;
    s_awvalid <= 1'b1;
    s_wvalid <= 1'b1;
    s_bready <= 1'b1;
    done = 0;
    for (n = 0; n < 10000 && !done; n++) begin
      @(posedge clk);
      if (s_awvalid && s_awready) s_awvalid <= 1'b0;
      if (s_wvalid && s_wready) s_wvalid <= 1'b0;
      if (s_bready && s_bvalid) begin
        s_bready <= 1'b0;
        if (s_bresp !== 2'b00) fail($sformatf("register write 0x%03h: response %0d", off, s_bresp));
        done = 1;
      end
    end
    if (!done) fail($sformatf("register write 0x%03h: no response", off));
  endtask

  task automatic reg_read(input [11:0] off, output [31:0] v);
    integer n;
    bit done;
    s_araddr <= off;
    s_arvalid <= 1'b1;
    s_rready <= 1'b1;
    done = 0;
    for (n = 0; n < 10000 && !done; n++) begin
      @(posedge clk);
      if (s_arvalid && s_arready) s_arvalid <= 1'b0;
      if (s_rready && s_rvalid) begin
        s_rready <= 1'b0;
        if (s_rresp !== 2'b00) fail($sformatf("register read 0x%03h: response %0d", off, s_rresp));
        v = s_rdata;
        done = 1;
      end
    end
    if (!done) fail($sformatf("register read 0x%03h: no response", off));
  endtask

  task automatic reg_write64(input [11:0] lo, input [63:0] v);
    reg_write(lo, v[31:0]);
    reg_write(lo + 12'd4, v[63:32]);
  endtask

  // ---- the run
  initial begin : run
    reg [31:0] v, err, err_insn;
    integer s, i, f, n;
    if (!$value$plusargs("job=%s", job_path) || !$value$plusargs("mem=%s", mem_path) ||
        !$value$plusargs("out=%s", out_path)) begin
      $display("FAIL: usage: +job=FILE +mem=FILE +out=FILE [+max_cycles=N]");
      $finish;
    end
    $readmemh(job_path, job);
    // Without +max_cycles: four times fsim's estimate of the job, plus the
    // register traffic around it (a hang in a gate-level run must not take
    // hours to notice).
    if (!$value$plusargs("max_cycles=%d", max_cycles))
      max_cycles = $isunknown(job[21]) || job[21] == 0 ? 100000 : 4 * job[21] + 20000;
    if (!$value$plusargs("progress=%d", progress)) progress = 0;
    base = job[0];
    size = job[1];
    if ($isunknown(size) || size == 0 || size > 1 << 20) fail($sformatf("%0s: bad image size", job_path));
    $readmemh(mem_path, u_mem.mem, 0, size - 1);

    repeat (ResetCycles) @(posedge clk);
    rst_n <= 1'b1;
    @(posedge clk);
    x_armed = 1'b1;
    repeat (4) @(posedge clk);

    // probe (hwseq.h step 1)
    reg_read(`LOOM_REG_ID, v);
    if (v !== `LOOM_HW_ID) fail($sformatf("ID reads %h", v));
    reg_read(`LOOM_REG_VERSION, v);
    if (v[15:0] !== `LOOM_ISA_VERSION) fail($sformatf("VERSION reads %h", v));
    reg_read(`LOOM_REG_CONFIG_HASH, v);
    if (v !== `LOOM_CFG_HASH) fail($sformatf("CONFIG_HASH reads %h", v));
    // start (steps 2-5)
    v = 32'd0;
    for (n = 0; n < 1000 && !v[`LOOM_CTRL_IDLE]; n++) begin
      if (n > 0) repeat (16) @(posedge clk);
      reg_read(`LOOM_REG_CTRL, v);
    end
    if (!v[`LOOM_CTRL_IDLE]) fail("CTRL.IDLE stays 0");
    reg_write64(`LOOM_REG_INSN_ADDR_LO, base + job[2]);
    reg_write(`LOOM_REG_INSN_COUNT, job[3][31:0]);
    for (s = 0; s < `LOOM_NUM_SEGMENTS; s++) begin
      reg_write64(`LOOM_REG_SEG_BASE_LO + s * `LOOM_REG_SEG_STRIDE,
                  job[5 + 2 * s] != 0 ? base + job[4 + 2 * s] : 64'd0);
      reg_write64(`LOOM_REG_SEG_SIZE_LO + s * `LOOM_REG_SEG_STRIDE, job[5 + 2 * s]);
    end
    reg_write(`LOOM_REG_ISR, 32'd1 << `LOOM_IRQ_DONE);
    reg_write(`LOOM_REG_IER, 32'd1 << `LOOM_IRQ_DONE);
    reg_write(`LOOM_REG_GIE, 32'd1);
    reg_write(`LOOM_REG_CTRL, 32'd1 << `LOOM_CTRL_START);
    // done (step 6) by the interrupt line, then collect (step 7)
    while (irq !== 1'b1) @(posedge clk);
    reg_read(`LOOM_REG_CTRL, v);
    reg_read(`LOOM_REG_ERR_STATUS, err);
    reg_read(`LOOM_REG_ERR_INSN, err_insn);
    reg_write(`LOOM_REG_ISR, 32'd1 << `LOOM_IRQ_DONE);
    reg_read(`LOOM_REG_ISR, v);
    repeat (8) @(posedge clk);
    if (irq !== 1'b0) fail("interrupt_o stays high after the acknowledge");

    f = $fopen(out_path, "w");
    if (f == 0) fail($sformatf("%0s: cannot write", out_path));
    for (i = 0; i < size; i++) $fdisplay(f, "%02x", u_mem.mem[i]);
    $fclose(f);
    if (err !== job[20][31:0] || (err != 0 && err_insn !== job[22][31:0]))
      fail($sformatf("ERR_STATUS %0d at instruction %0d, fsim's error %0d at %0d", err, err_insn,
                     job[20], job[22]));
    $display("PASS cycles=%0d err=%0d", cycle, err);
    $finish;
  end
endmodule
