// loom_cells_tb - runs every cell testbench (tests/rtl/*_tb.sv) in one
// simulation: each checks its cell on its own, here they share a clock.
// Prints each testbench's result line, then PASS or FAIL.
module loom_cells_tb;
  reg clk = 1'b0;
  always #5 clk = ~clk;

  localparam integer N = 10;
  wire [N-1:0] done, fail;

  loom_fifo_tb       u_fifo (.clk_i(clk), .done_o(done[0]), .fail_o(fail[0]));
  loom_tokq_tb       u_tokq (.clk_i(clk), .done_o(done[1]), .fail_o(fail[1]));
  loom_skid_tb       u_skid (.clk_i(clk), .done_o(done[2]), .fail_o(fail[2]));
  loom_axil_slave_tb u_axil (.clk_i(clk), .done_o(done[3]), .fail_o(fail[3]));
  loom_mul2_tb       u_mul2 (.clk_i(clk), .done_o(done[4]), .fail_o(fail[4]));
  loom_alu_lane_tb   u_alu  (.clk_i(clk), .done_o(done[5]), .fail_o(fail[5]));
  loom_burst_gen_tb  u_bgen (.clk_i(clk), .done_o(done[6]), .fail_o(fail[6]));
  loom_mem_check_tb  u_chk  (.clk_i(clk), .done_o(done[7]), .fail_o(fail[7]));
  loom_rd_rows_tb    u_rows (.clk_i(clk), .done_o(done[8]), .fail_o(fail[8]));
  loom_dma_rd_tb     u_dma  (.clk_i(clk), .done_o(done[9]), .fail_o(fail[9]));

  initial begin
    wait (&done);
    if (|fail) $display("FAIL");
    else       $display("PASS");
    $finish;
  end

  initial begin
    #20000000;
    $display("loom_cells_tb: timeout");
    $display("FAIL");
    $finish;
  end
endmodule
