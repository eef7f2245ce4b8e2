// loom_nl_mem - the DRAM of the gate-level and 4-state runs
// (tests/netlist/loom_nl_tb.sv): an AXI4 slave over a byte array that
// holds one job's image at bus address base_i (tests/netlist/nl_image.c).
//
// Bursts are INCR of 2^size-byte beats (the accelerator's only kind); the
// first beat may start unaligned, as AXI4 allows, and later beats are
// aligned.  Up to Outst requests wait per direction; reads answer in order
// after Lat cycles, W beats go to the oldest unfinished AW, a B follows the
// last beat.  The READYs drop on a fixed pseudo-random pattern (an LFSR),
// so the accelerator sees back-pressure on every channel; the pattern is
// the same in every run, so a failure reproduces.
//
// Protocol checks, each a FAIL line naming the request: an access outside
// the image, WLAST on the wrong beat, a burst other than INCR, a W beat
// with no AW (this slave waits for AW first, which AXI4 lets a slave do).
// `errors_o` counts them.  Every output changes only on the rising edge
// (non-blocking), the same edge at which the accelerator samples them.
module loom_nl_mem #(
  parameter integer BusBits = 64,
  parameter integer Bytes   = 1 << 20,  // the array
  parameter integer Outst   = 8,
  parameter integer Lat     = 6
) (
  input  wire               clk_i,
  input  wire [63:0]        base_i,
  input  wire [63:0]        size_i,
  input  wire [3:0]         awid_i,
  input  wire [63:0]        awaddr_i,
  input  wire [7:0]         awlen_i,
  input  wire [2:0]         awsize_i,
  input  wire [1:0]         awburst_i,
  input  wire               awvalid_i,
  output reg                awready_o,
  input  wire [BusBits-1:0] wdata_i,
  input  wire [BusBits/8-1:0] wstrb_i,
  input  wire               wlast_i,
  input  wire               wvalid_i,
  output reg                wready_o,
  output reg  [3:0]         bid_o,
  output wire [1:0]         bresp_o,
  output reg                bvalid_o,
  input  wire               bready_i,
  input  wire [3:0]         arid_i,
  input  wire [63:0]        araddr_i,
  input  wire [7:0]         arlen_i,
  input  wire [2:0]         arsize_i,
  input  wire [1:0]         arburst_i,
  input  wire               arvalid_i,
  output reg                arready_o,
  output reg  [3:0]         rid_o,
  output reg  [BusBits-1:0] rdata_o,
  output wire [1:0]         rresp_o,
  output reg                rlast_o,
  output reg                rvalid_o,
  input  wire               rready_i,
  output integer            errors_o
);
  localparam integer BB = BusBits / 8;

  reg [7:0] mem [0:Bytes-1];

  assign bresp_o = 2'b00;
  assign rresp_o = 2'b00;

  // ---- back-pressure pattern
  reg [15:0] lfsr = 16'hACE1;
  always @(posedge clk_i) lfsr <= {lfsr[14:0], lfsr[15] ^ lfsr[13] ^ lfsr[12] ^ lfsr[10]};

  initial errors_o = 0;

  // The image offset of byte `i` of a burst's beat, or -1 outside the image.
  function automatic longint beat_addr(input [63:0] start, input [2:0] size, input integer beat);
    longint a;
    a = (beat == 0) ? start : ((start >> size) << size) + (beat << size);
    beat_addr = a;
  endfunction

  function automatic bit inside_image(input [63:0] a, input integer n);
    inside_image = a >= base_i && a + n <= base_i + size_i && a + n - base_i <= Bytes;
  endfunction

  // ---- reads
  reg [63:0] ar_addr [0:Outst-1];
  reg [7:0]  ar_len  [0:Outst-1];
  reg [2:0]  ar_size [0:Outst-1];
  reg [3:0]  ar_id   [0:Outst-1];
  integer ar_head = 0, ar_tail = 0, ar_cnt = 0;
  integer r_beat = 0, r_wait = Lat;

  initial begin
    arready_o = 1'b0;
    rvalid_o = 1'b0;
    rlast_o = 1'b0;
    rid_o = 4'd0;
    rdata_o = {BusBits{1'b0}};
  end

  always @(posedge clk_i) begin : rd
    integer i, cnt;
    longint a;
    cnt = ar_cnt;
    if (arvalid_i && arready_o) begin
      if (arburst_i != 2'b01) begin
        $display("FAIL: AXI read burst type %0d at 0x%0h (INCR expected)", arburst_i, araddr_i);
        errors_o = errors_o + 1;
      end
      if (!inside_image(araddr_i, 1) ||
          !inside_image(((araddr_i >> arsize_i) << arsize_i) + (arlen_i << arsize_i), 1 << arsize_i)) begin
        $display("FAIL: AXI read 0x%0h len %0d outside the image [0x%0h, +0x%0h)", araddr_i,
                 arlen_i + 1, base_i, size_i);
        errors_o = errors_o + 1;
      end
      ar_addr[ar_tail] = araddr_i;
      ar_len[ar_tail] = arlen_i;
      ar_size[ar_tail] = arsize_i;
      ar_id[ar_tail] = arid_i;
      ar_tail = (ar_tail + 1) % Outst;
      cnt = cnt + 1;
    end
    if (rvalid_o && rready_i) begin
      if (rlast_o) begin
        ar_head = (ar_head + 1) % Outst;
        cnt = cnt - 1;
        r_beat = 0;
        r_wait = Lat;
      end else r_beat = r_beat + 1;
    end
    ar_cnt = cnt;
    arready_o <= ar_cnt < Outst && lfsr[2:0] != 3'd0;
    if (ar_cnt > 0 && r_wait > 0) r_wait = r_wait - 1;
    // A beat once shown stays until taken (AXI4); then the next may follow.
    if (!rvalid_o || rready_i) begin
      if (ar_cnt > 0 && r_wait == 0 && lfsr[5:3] != 3'd0) begin
        a = beat_addr(ar_addr[ar_head], ar_size[ar_head], r_beat);
        a = (a >> $clog2(BB)) << $clog2(BB);
        for (i = 0; i < BB; i++)
          rdata_o[8*i +: 8] <= inside_image(a + i, 1) ? mem[a + i - base_i] : 8'h00;
        rid_o <= ar_id[ar_head];
        rlast_o <= r_beat == ar_len[ar_head];
        rvalid_o <= 1'b1;
      end else rvalid_o <= 1'b0;
    end
  end

  // ---- writes
  reg [63:0] aw_addr [0:Outst-1];
  reg [7:0]  aw_len  [0:Outst-1];
  reg [2:0]  aw_size [0:Outst-1];
  reg [3:0]  aw_id   [0:Outst-1];
  reg [3:0]  b_id    [0:Outst-1];
  integer aw_head = 0, aw_tail = 0, aw_cnt = 0, w_beat = 0;
  integer b_head = 0, b_tail = 0, b_cnt = 0;

  initial begin
    awready_o = 1'b0;
    wready_o = 1'b0;
    bvalid_o = 1'b0;
    bid_o = 4'd0;
  end

  always @(posedge clk_i) begin : wr
    integer i;
    longint a;
    if (awvalid_i && awready_o) begin
      if (awburst_i != 2'b01) begin
        $display("FAIL: AXI write burst type %0d at 0x%0h (INCR expected)", awburst_i, awaddr_i);
        errors_o = errors_o + 1;
      end
      aw_addr[aw_tail] = awaddr_i;
      aw_len[aw_tail] = awlen_i;
      aw_size[aw_tail] = awsize_i;
      aw_id[aw_tail] = awid_i;
      aw_tail = (aw_tail + 1) % Outst;
      aw_cnt = aw_cnt + 1;
    end
    if (wvalid_i && wready_o) begin
      if (aw_cnt == 0) begin
        $display("FAIL: AXI W beat with no AW");
        errors_o = errors_o + 1;
      end else begin
        a = beat_addr(aw_addr[aw_head], aw_size[aw_head], w_beat);
        a = (a >> $clog2(BB)) << $clog2(BB);
        for (i = 0; i < BB; i++) begin
          if (wstrb_i[i]) begin
            if (inside_image(a + i, 1)) mem[a + i - base_i] = wdata_i[8*i +: 8];
            else begin
              $display("FAIL: AXI write of byte 0x%0h outside the image [0x%0h, +0x%0h)", a + i,
                       base_i, size_i);
              errors_o = errors_o + 1;
            end
          end
        end
        if (wlast_i != (w_beat == aw_len[aw_head])) begin
          $display("FAIL: AXI WLAST %0d on beat %0d of a %0d-beat burst at 0x%0h", wlast_i, w_beat,
                   aw_len[aw_head] + 1, aw_addr[aw_head]);
          errors_o = errors_o + 1;
        end
        if (w_beat == aw_len[aw_head]) begin
          b_id[b_tail] = aw_id[aw_head];
          b_tail = (b_tail + 1) % Outst;
          b_cnt = b_cnt + 1;
          aw_head = (aw_head + 1) % Outst;
          aw_cnt = aw_cnt - 1;
          w_beat = 0;
        end else w_beat = w_beat + 1;
      end
    end
    if (bvalid_o && bready_i) begin
      b_head = (b_head + 1) % Outst;
      b_cnt = b_cnt - 1;
    end
    awready_o <= aw_cnt < Outst && lfsr[8:6] != 3'd0;
    wready_o <= aw_cnt > 0 && lfsr[11:9] != 3'd0;
    if (!bvalid_o || bready_i) begin
      bvalid_o <= b_cnt > 0 && lfsr[14:12] != 3'd0;
      bid_o <= b_id[b_head];
    end
  end
endmodule
