// loom_axi_rd_arb - shares the AXI read channels among the read DMAs.
//
// Requester i (0 fetch, 1 load, 2 compute) reads with ARID i.  Address
// requests are granted round-robin into a loom_skid register slice, which
// drives the AR channel.  At most MaxOut bursts are in flight (granted and
// not yet answered with RLAST): the configuration's max_outstanding_reads.
// Read data is routed by RID; RREADY is the addressed requester's.  The
// interconnect may return different IDs in any order and interleave whole
// bursts, but keeps each ID in order, which is all the requesters rely on.
module loom_axi_rd_arb #(
  parameter integer N       = 3,
  parameter integer MaxOut  = 8,
  localparam integer OutW   = $clog2(MaxOut + 1),
  localparam integer SelW   = $clog2(N)
) (
  input  wire           clk_i,
  input  wire           rst_ni,
  input  wire [N-1:0]   req_valid_i,
  output wire [N-1:0]   req_ready_o,
  input  wire [N*64-1:0] req_addr_i,
  input  wire [N*8-1:0] req_len_i,
  output wire           ar_valid_o,
  input  wire           ar_ready_i,
  output wire [3:0]     ar_id_o,
  output wire [63:0]    ar_addr_o,
  output wire [7:0]     ar_len_o,
  input  wire           r_valid_i,
  input  wire [3:0]     r_id_i,
  input  wire           r_last_i,
  output wire           r_ready_o,
  output wire [N-1:0]   r_valid_o,
  input  wire [N-1:0]   r_ready_i
);
  generate
    if (N < 2 || N > 16 || MaxOut < 1) begin : g_bad_params
      loom_axi_rd_arb_illegal_parameters u_illegal ();
    end
  endgenerate

  reg [SelW-1:0] last_q, last_d;
  reg [OutW-1:0] outst_q, outst_d;

  // Round-robin: the first valid requester after the last one granted,
  // else the first valid one.
  reg [SelW-1:0] pick;
  reg            any, any_hi;
  integer i;
  always @* begin
    pick   = last_q;
    any    = 1'b0;
    any_hi = 1'b0;
    for (i = N - 1; i >= 0; i = i - 1) begin
      if (req_valid_i[i]) begin
        any = 1'b1;
        if (i > {{(32 - SelW){1'b0}}, last_q}) begin
          any_hi = 1'b1;
          pick   = i[SelW-1:0];
        end
      end
    end
    if (!any_hi) begin
      for (i = N - 1; i >= 0; i = i - 1)
        if (req_valid_i[i]) pick = i[SelW-1:0];
    end
  end

  wire skid_ready;
  wire room  = (outst_q < MaxOut[OutW-1:0]);
  wire grant = any && skid_ready && room;

  genvar g;
  generate
    for (g = 0; g < N; g = g + 1) begin : g_req
      assign req_ready_o[g] = grant && (pick == g);
      assign r_valid_o[g]   = r_valid_i && (r_id_i == g);
    end
  endgenerate

  wire [75:0] skid_out;
  loom_skid #(.Width(76)) u_skid (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .in_valid_i  (grant),
    .in_ready_o  (skid_ready),
    .in_data_i   ({{(4 - SelW){1'b0}}, pick, req_addr_i[64*pick +: 64], req_len_i[8*pick +: 8]}),
    .out_valid_o (ar_valid_o),
    .out_ready_i (ar_ready_i),
    .out_data_o  (skid_out)
  );
  assign ar_id_o   = skid_out[75:72];
  assign ar_addr_o = skid_out[71:8];
  assign ar_len_o  = skid_out[7:0];

  wire id_known = ({{(32 - 4){1'b0}}, r_id_i} < N);
  assign r_ready_o = id_known ? r_ready_i[r_id_i[SelW-1:0]] : 1'b1;
  wire [3-SelW:0] unused_rid = r_id_i[3:SelW];

  wire r_done = r_valid_i && r_ready_o && r_last_i;

  always @* begin
    last_d  = grant ? pick : last_q;
    outst_d = outst_q + (grant ? {{(OutW-1){1'b0}}, 1'b1} : {OutW{1'b0}})
                      - (r_done ? {{(OutW-1){1'b0}}, 1'b1} : {OutW{1'b0}});
  end

  always @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      last_q  <= {SelW{1'b0}};
      outst_q <= {OutW{1'b0}};
    end else begin
      last_q  <= last_d;
      outst_q <= outst_d;
    end
  end
endmodule
