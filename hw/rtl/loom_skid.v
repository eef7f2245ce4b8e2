// loom_skid - valid/ready register slice with full throughput.
//
// Cuts every combinational path between its two sides (valid, data and
// ready are all registered) while still moving one item per cycle: when the
// output stalls, the item already accepted on the input lands in the skid
// register.  Used on the AXI address channels, where AXI forbids a master to
// withdraw VALID or change the payload before READY: both hold here because
// out_valid_o/out_data_o only change on a handshake or while invalid.
module loom_skid #(
  parameter integer Width = 8
) (
  input  wire             clk_i,
  input  wire             rst_ni,
  input  wire             in_valid_i,
  output wire             in_ready_o,
  input  wire [Width-1:0] in_data_i,
  output wire             out_valid_o,
  input  wire             out_ready_i,
  output wire [Width-1:0] out_data_o
);
  generate
    if (Width < 1) begin : g_bad_params
      loom_skid_illegal_parameters u_illegal ();
    end
  endgenerate

  reg             main_valid_q, main_valid_d;
  reg             skid_valid_q, skid_valid_d;
  reg [Width-1:0] main_data_q, main_data_d;
  reg [Width-1:0] skid_data_q, skid_data_d;

  wire in_fire  = in_valid_i && !skid_valid_q;
  wire out_fire = main_valid_q && out_ready_i;

  assign in_ready_o  = !skid_valid_q;
  assign out_valid_o = main_valid_q;
  assign out_data_o  = main_data_q;

  always @* begin
    main_valid_d = main_valid_q;
    skid_valid_d = skid_valid_q;
    main_data_d  = main_data_q;
    skid_data_d  = skid_data_q;
    if (!main_valid_q || out_fire) begin
      // The main register frees up: refill it, oldest item first.
      if (skid_valid_q) begin
        main_valid_d = 1'b1;
        main_data_d  = skid_data_q;
        skid_valid_d = 1'b0;
      end else begin
        main_valid_d = in_fire;
        if (in_fire) main_data_d = in_data_i;
      end
    end else if (in_fire) begin
      // Output stalled: park the accepted item.
      skid_valid_d = 1'b1;
      skid_data_d  = in_data_i;
    end
  end

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      main_valid_q <= 1'b0;
      skid_valid_q <= 1'b0;
    end else begin
      main_valid_q <= main_valid_d;
      skid_valid_q <= skid_valid_d;
    end
  end

  always @(posedge clk_i) begin
    main_data_q <= main_data_d;
    skid_data_q <= skid_data_d;
  end
endmodule
