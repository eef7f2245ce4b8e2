// loom_nl_bram - behavioural models of the 7-series block RAMs RAMB18E1 and
// RAMB36E1 for the gate-level run (tests/netlist/run_netlist.sh).
//
// Why they are here: Yosys 0.23's xilinx/cells_sim.v declares RAMB18E1 and
// RAMB36E1 with their ports and timing only (no behaviour: every output
// floats at Z), and xilinx/cells_xtra.v holds bare black boxes in a syntax
// Icarus does not parse.  Everything else in the netlist (LUTs, carries,
// flip-flops, DSP48E1, SRL16E, RAM32M, MUXF7/8) runs on Yosys's own models;
// the runner deletes the two stubs from a copy of cells_sim.v and compiles
// these in their place.
//
// What they model (UG473, "7 Series FPGAs Memory Resources"): the array as
// 9-bit lanes (8 data bits and their parity bit; 2048 lanes in a RAMB18E1,
// 4096 in a RAMB36E1).  A port of width 9, 18, 36 (or 72, SDP on the
// RAMB36E1) reaches 1, 2, 4 (8) consecutive lanes at ADDR >> (3, 4, 5, 6);
// lane k takes DI[8k+7:8k] and DIP[k] and writes when its WE bit is set
// (WE[0] for width 9).  In SDP mode (RAM_MODE "SDP", read port A and write
// port B at width 36/72) the low half of the lanes is on the A pins and the
// high half on the B pins, and WEBWE has one bit per lane.  Reads are
// synchronous with no output register; READ_FIRST: a read returns the lanes
// as they were before the writes of the same edge, on either port.
//
// The content starts unknown (X), as in the RTL's 4-state simulation, so a
// read of a lane never written shows as X.  A write with an unknown enable
// or address makes the lanes it may reach X.  Anything else (output
// registers DO*_REG = 1, WRITE_FIRST or NO_CHANGE, widths 1/2/4, two
// clocks, cascades, ECC, initial contents) is not modelled: the model
// prints a FAIL line naming the instance and stops, never guesses.
`timescale 1ns / 1ps

module loom_nl_bram #(
  parameter integer Lanes = 2048,
  parameter integer Pins  = 16,  // data pins per DI/DO port
  parameter integer AddrW = 14,
  parameter         RAM_MODE = "TDP",
  parameter integer READ_WIDTH_A = 0,
  parameter integer READ_WIDTH_B = 0,
  parameter integer WRITE_WIDTH_A = 0,
  parameter integer WRITE_WIDTH_B = 0,
  parameter         WRITE_MODE_A = "READ_FIRST",
  parameter         WRITE_MODE_B = "READ_FIRST",
  parameter integer DOA_REG = 0,
  parameter integer DOB_REG = 0
) (
  input  wire                  clka, clkb, ena, enb, rsta, rstb,
  input  wire [AddrW-1:0]      addra, addrb,
  input  wire [Pins-1:0]       dia, dib,
  input  wire [Pins/8-1:0]     dipa, dipb,
  input  wire [Pins/8-1:0]     wea,
  input  wire [Pins/4-1:0]     web,
  output reg  [Pins-1:0]       doa, dob,
  output reg  [Pins/8-1:0]     dopa, dopb
);
  localparam integer PL = Pins / 8;  // lanes on one port's pins
  localparam integer SdpW = 9 * 2 * PL;

  reg [8:0] mem [0:Lanes-1];
  integer i;

  function integer lanes_of(input integer w);
    lanes_of = w == 9 ? 1 : w == 18 ? 2 : w == 36 ? 4 : w == 72 ? 8 : 0;
  endfunction
  function integer shift_of(input integer w);
    shift_of = w == 9 ? 3 : w == 18 ? 4 : w == 36 ? 5 : 6;
  endfunction

  localparam bit Sdp = RAM_MODE == "SDP";

  initial begin
    for (i = 0; i < Lanes; i = i + 1) mem[i] = 9'bx;
    doa = {Pins{1'bx}}; dob = {Pins{1'bx}};
    dopa = {PL{1'bx}}; dopb = {PL{1'bx}};
    if (!(Sdp && READ_WIDTH_A == SdpW && WRITE_WIDTH_B == SdpW && READ_WIDTH_B == 0 &&
          WRITE_WIDTH_A == 0) &&
        !(!Sdp && RAM_MODE == "TDP" &&
          (READ_WIDTH_A == 0 || lanes_of(READ_WIDTH_A) != 0 && READ_WIDTH_A <= 9 * PL) &&
          (READ_WIDTH_B == 0 || lanes_of(READ_WIDTH_B) != 0 && READ_WIDTH_B <= 9 * PL) &&
          (WRITE_WIDTH_A == 0 || lanes_of(WRITE_WIDTH_A) != 0 && WRITE_WIDTH_A <= 9 * PL) &&
          (WRITE_WIDTH_B == 0 || lanes_of(WRITE_WIDTH_B) != 0 && WRITE_WIDTH_B <= 9 * PL)) ||
        WRITE_MODE_A != "READ_FIRST" || WRITE_MODE_B != "READ_FIRST" || DOA_REG != 0 ||
        DOB_REG != 0) begin
      $display("FAIL: %m: block RAM mode %0s R%0d/%0d W%0d/%0d %0s/%0s DO_REG %0d/%0d not modelled",
               RAM_MODE, READ_WIDTH_A, READ_WIDTH_B, WRITE_WIDTH_A, WRITE_WIDTH_B, WRITE_MODE_A,
               WRITE_MODE_B, DOA_REG, DOB_REG);
      $finish;
    end
  end

  // Lane `k` of an access of width w at addr: the lane index, or -1.
  function integer lane_at(input [AddrW-1:0] addr, input integer w, input integer k);
    lane_at = (addr >> shift_of(w)) * lanes_of(w) + k;
  endfunction

  // One port's read (before any write of this edge) into its output pins.
  task automatic read_port(input [AddrW-1:0] addr, input integer w, input en, input rst,
                           output [Pins-1:0] d, output [PL-1:0] p, input [Pins-1:0] d0,
                           input [PL-1:0] p0);
    integer k;
    d = d0;
    p = p0;
    if (en === 1'b0 || w == 0) begin
    end else if (en !== 1'b1 || $isunknown(addr) || rst !== 1'b0) begin
      d = {Pins{1'bx}};
      p = {PL{1'bx}};
    end else begin
      for (k = 0; k < lanes_of(w) && k < PL; k = k + 1) begin
        d[8*k +: 8] = mem[lane_at(addr, w, k)][7:0];
        p[k] = mem[lane_at(addr, w, k)][8];
      end
    end
  endtask

  // One lane's write; X when the enable or the address is unknown.
  task automatic write_lane(input [AddrW-1:0] addr, input integer w, input integer k, input we,
                            input [8:0] v);
    integer j;
    if (we === 1'b0) begin
    end else if ($isunknown(addr)) begin
      for (j = 0; j < Lanes; j = j + 1) mem[j] = 9'bx;
    end else begin
      mem[lane_at(addr, w, k)] = we === 1'b1 ? v : 9'bx;
    end
  endtask

  reg [Pins-1:0] ra, rb;
  reg [PL-1:0]   rpa, rpb;
  reg [2*Pins-1:0] sd;
  reg [2*PL-1:0]   sp;

  always @(posedge clka) begin : edge_a
    integer k, n;
    if (clkb !== clka) begin
      $display("FAIL: %m: the two ports on different clocks are not modelled");
      $finish;
    end
    if (Sdp) begin
      // SDP: read port A over both pin sets, write port B over both.
      read_port(addra, READ_WIDTH_A, ena, rsta, ra, rpa, doa, dopa);
      if (ena === 1'b1 && !$isunknown(addra) && rsta === 1'b0) begin
        for (k = PL; k < 2 * PL; k = k + 1) begin
          rb[8*(k-PL) +: 8] = mem[lane_at(addra, READ_WIDTH_A, k)][7:0];
          rpb[k-PL] = mem[lane_at(addra, READ_WIDTH_A, k)][8];
        end
      end else if (ena !== 1'b0) begin
        rb = {Pins{1'bx}};
        rpb = {PL{1'bx}};
      end else begin
        rb = dob;
        rpb = dopb;
      end
      sd = {dib, dia};
      sp = {dipb, dipa};
      n = lanes_of(WRITE_WIDTH_B);
      if (enb !== 1'b0)
        for (k = 0; k < n; k = k + 1)
          write_lane(addrb, WRITE_WIDTH_B, k, enb & web[k], {sp[k], sd[8*k +: 8]});
    end else begin
      read_port(addra, READ_WIDTH_A, ena, rsta, ra, rpa, doa, dopa);
      read_port(addrb, READ_WIDTH_B, enb, rstb, rb, rpb, dob, dopb);
      n = lanes_of(WRITE_WIDTH_A);
      if (ena !== 1'b0)
        for (k = 0; k < n; k = k + 1)
          write_lane(addra, WRITE_WIDTH_A, k, ena & wea[n == 1 ? 0 : k], {dipa[k], dia[8*k +: 8]});
      n = lanes_of(WRITE_WIDTH_B);
      if (enb !== 1'b0)
        for (k = 0; k < n; k = k + 1)
          write_lane(addrb, WRITE_WIDTH_B, k, enb & web[n == 1 ? 0 : k], {dipb[k], dib[8*k +: 8]});
    end
    doa <= ra;
    dopa <= rpa;
    dob <= rb;
    dopb <= rpb;
  end
endmodule

module RAMB18E1 #(
  // The initial contents: Yosys writes all X for a memory without one.
  parameter [255:0] INIT_00 = 256'h0, INIT_01 = 256'h0, INIT_02 = 256'h0, INIT_03 = 256'h0,
  parameter [255:0] INIT_04 = 256'h0, INIT_05 = 256'h0, INIT_06 = 256'h0, INIT_07 = 256'h0,
  parameter [255:0] INIT_08 = 256'h0, INIT_09 = 256'h0, INIT_0A = 256'h0, INIT_0B = 256'h0,
  parameter [255:0] INIT_0C = 256'h0, INIT_0D = 256'h0, INIT_0E = 256'h0, INIT_0F = 256'h0,
  parameter [255:0] INIT_10 = 256'h0, INIT_11 = 256'h0, INIT_12 = 256'h0, INIT_13 = 256'h0,
  parameter [255:0] INIT_14 = 256'h0, INIT_15 = 256'h0, INIT_16 = 256'h0, INIT_17 = 256'h0,
  parameter [255:0] INIT_18 = 256'h0, INIT_19 = 256'h0, INIT_1A = 256'h0, INIT_1B = 256'h0,
  parameter [255:0] INIT_1C = 256'h0, INIT_1D = 256'h0, INIT_1E = 256'h0, INIT_1F = 256'h0,
  parameter [255:0] INIT_20 = 256'h0, INIT_21 = 256'h0, INIT_22 = 256'h0, INIT_23 = 256'h0,
  parameter [255:0] INIT_24 = 256'h0, INIT_25 = 256'h0, INIT_26 = 256'h0, INIT_27 = 256'h0,
  parameter [255:0] INIT_28 = 256'h0, INIT_29 = 256'h0, INIT_2A = 256'h0, INIT_2B = 256'h0,
  parameter [255:0] INIT_2C = 256'h0, INIT_2D = 256'h0, INIT_2E = 256'h0, INIT_2F = 256'h0,
  parameter [255:0] INIT_30 = 256'h0, INIT_31 = 256'h0, INIT_32 = 256'h0, INIT_33 = 256'h0,
  parameter [255:0] INIT_34 = 256'h0, INIT_35 = 256'h0, INIT_36 = 256'h0, INIT_37 = 256'h0,
  parameter [255:0] INIT_38 = 256'h0, INIT_39 = 256'h0, INIT_3A = 256'h0, INIT_3B = 256'h0,
  parameter [255:0] INIT_3C = 256'h0, INIT_3D = 256'h0, INIT_3E = 256'h0, INIT_3F = 256'h0,
  parameter [255:0] INITP_00 = 256'h0, INITP_01 = 256'h0, INITP_02 = 256'h0, INITP_03 = 256'h0,
  parameter [255:0] INITP_04 = 256'h0, INITP_05 = 256'h0, INITP_06 = 256'h0, INITP_07 = 256'h0,
  parameter integer DOA_REG = 0, parameter integer DOB_REG = 0,
  parameter RAM_MODE = "TDP",
  parameter integer READ_WIDTH_A = 0, parameter integer READ_WIDTH_B = 0,
  parameter integer WRITE_WIDTH_A = 0, parameter integer WRITE_WIDTH_B = 0,
  parameter WRITE_MODE_A = "WRITE_FIRST", parameter WRITE_MODE_B = "WRITE_FIRST",
  parameter INIT_A = 18'h0, parameter INIT_B = 18'h0, parameter SRVAL_A = 18'h0,
  parameter SRVAL_B = 18'h0, parameter INIT_FILE = "NONE",
  parameter RDADDR_COLLISION_HWCONFIG = "DELAYED_WRITE", parameter RSTREG_PRIORITY_A = "RSTREG",
  parameter RSTREG_PRIORITY_B = "RSTREG", parameter SIM_COLLISION_CHECK = "ALL",
  parameter SIM_DEVICE = "VIRTEX6",
  parameter IS_CLKARDCLK_INVERTED = 1'b0, parameter IS_CLKBWRCLK_INVERTED = 1'b0,
  parameter IS_ENARDEN_INVERTED = 1'b0, parameter IS_ENBWREN_INVERTED = 1'b0,
  parameter IS_RSTRAMARSTRAM_INVERTED = 1'b0, parameter IS_RSTRAMB_INVERTED = 1'b0,
  parameter IS_RSTREGARSTREG_INVERTED = 1'b0, parameter IS_RSTREGB_INVERTED = 1'b0
) (
  input CLKARDCLK, CLKBWRCLK, ENARDEN, ENBWREN, REGCEAREGCE, REGCEB,
  input RSTRAMARSTRAM, RSTRAMB, RSTREGARSTREG, RSTREGB,
  input [13:0] ADDRARDADDR, ADDRBWRADDR,
  input [15:0] DIADI, DIBDI,
  input [1:0] DIPADIP, DIPBDIP,
  input [1:0] WEA,
  input [3:0] WEBWE,
  output [15:0] DOADO, DOBDO,
  output [1:0] DOPADOP, DOPBDOP
);
  loom_nl_bram #(
    .Lanes(2048), .Pins(16), .AddrW(14), .RAM_MODE(RAM_MODE),
    .READ_WIDTH_A(READ_WIDTH_A), .READ_WIDTH_B(READ_WIDTH_B),
    .WRITE_WIDTH_A(WRITE_WIDTH_A), .WRITE_WIDTH_B(WRITE_WIDTH_B),
    .WRITE_MODE_A(WRITE_MODE_A), .WRITE_MODE_B(WRITE_MODE_B),
    .DOA_REG(DOA_REG), .DOB_REG(DOB_REG)
  ) core (
    .clka(CLKARDCLK), .clkb(CLKBWRCLK), .ena(ENARDEN), .enb(ENBWREN),
    .rsta(RSTRAMARSTRAM), .rstb(RSTRAMB), .addra(ADDRARDADDR), .addrb(ADDRBWRADDR),
    .dia(DIADI), .dib(DIBDI), .dipa(DIPADIP), .dipb(DIPBDIP), .wea(WEA), .web(WEBWE),
    .doa(DOADO), .dob(DOBDO), .dopa(DOPADOP), .dopb(DOPBDOP)
  );
  initial
    if (IS_CLKARDCLK_INVERTED || IS_CLKBWRCLK_INVERTED || IS_ENARDEN_INVERTED ||
        IS_ENBWREN_INVERTED || IS_RSTRAMARSTRAM_INVERTED || IS_RSTRAMB_INVERTED ||
        INIT_FILE != "NONE" || |{INIT_00, INIT_01, INIT_02, INIT_03, INIT_04, INIT_05, INIT_06, INIT_07, INIT_08, INIT_09, INIT_0A, INIT_0B, INIT_0C, INIT_0D, INIT_0E, INIT_0F, INIT_10, INIT_11, INIT_12, INIT_13, INIT_14, INIT_15, INIT_16, INIT_17, INIT_18, INIT_19, INIT_1A, INIT_1B, INIT_1C, INIT_1D, INIT_1E, INIT_1F, INIT_20, INIT_21, INIT_22, INIT_23, INIT_24, INIT_25, INIT_26, INIT_27, INIT_28, INIT_29, INIT_2A, INIT_2B, INIT_2C, INIT_2D, INIT_2E, INIT_2F, INIT_30, INIT_31, INIT_32, INIT_33, INIT_34, INIT_35, INIT_36, INIT_37, INIT_38, INIT_39, INIT_3A, INIT_3B, INIT_3C, INIT_3D, INIT_3E, INIT_3F, INITP_00, INITP_01, INITP_02, INITP_03, INITP_04, INITP_05, INITP_06, INITP_07}) begin
      $display("FAIL: %m: inverted pins or initial contents are not modelled");
      $finish;
    end
endmodule

module RAMB36E1 #(
  parameter [255:0] INIT_00 = 256'h0, INIT_01 = 256'h0, INIT_02 = 256'h0, INIT_03 = 256'h0,
  parameter [255:0] INIT_04 = 256'h0, INIT_05 = 256'h0, INIT_06 = 256'h0, INIT_07 = 256'h0,
  parameter [255:0] INIT_08 = 256'h0, INIT_09 = 256'h0, INIT_0A = 256'h0, INIT_0B = 256'h0,
  parameter [255:0] INIT_0C = 256'h0, INIT_0D = 256'h0, INIT_0E = 256'h0, INIT_0F = 256'h0,
  parameter [255:0] INIT_10 = 256'h0, INIT_11 = 256'h0, INIT_12 = 256'h0, INIT_13 = 256'h0,
  parameter [255:0] INIT_14 = 256'h0, INIT_15 = 256'h0, INIT_16 = 256'h0, INIT_17 = 256'h0,
  parameter [255:0] INIT_18 = 256'h0, INIT_19 = 256'h0, INIT_1A = 256'h0, INIT_1B = 256'h0,
  parameter [255:0] INIT_1C = 256'h0, INIT_1D = 256'h0, INIT_1E = 256'h0, INIT_1F = 256'h0,
  parameter [255:0] INIT_20 = 256'h0, INIT_21 = 256'h0, INIT_22 = 256'h0, INIT_23 = 256'h0,
  parameter [255:0] INIT_24 = 256'h0, INIT_25 = 256'h0, INIT_26 = 256'h0, INIT_27 = 256'h0,
  parameter [255:0] INIT_28 = 256'h0, INIT_29 = 256'h0, INIT_2A = 256'h0, INIT_2B = 256'h0,
  parameter [255:0] INIT_2C = 256'h0, INIT_2D = 256'h0, INIT_2E = 256'h0, INIT_2F = 256'h0,
  parameter [255:0] INIT_30 = 256'h0, INIT_31 = 256'h0, INIT_32 = 256'h0, INIT_33 = 256'h0,
  parameter [255:0] INIT_34 = 256'h0, INIT_35 = 256'h0, INIT_36 = 256'h0, INIT_37 = 256'h0,
  parameter [255:0] INIT_38 = 256'h0, INIT_39 = 256'h0, INIT_3A = 256'h0, INIT_3B = 256'h0,
  parameter [255:0] INIT_3C = 256'h0, INIT_3D = 256'h0, INIT_3E = 256'h0, INIT_3F = 256'h0,
  parameter [255:0] INIT_40 = 256'h0, INIT_41 = 256'h0, INIT_42 = 256'h0, INIT_43 = 256'h0,
  parameter [255:0] INIT_44 = 256'h0, INIT_45 = 256'h0, INIT_46 = 256'h0, INIT_47 = 256'h0,
  parameter [255:0] INIT_48 = 256'h0, INIT_49 = 256'h0, INIT_4A = 256'h0, INIT_4B = 256'h0,
  parameter [255:0] INIT_4C = 256'h0, INIT_4D = 256'h0, INIT_4E = 256'h0, INIT_4F = 256'h0,
  parameter [255:0] INIT_50 = 256'h0, INIT_51 = 256'h0, INIT_52 = 256'h0, INIT_53 = 256'h0,
  parameter [255:0] INIT_54 = 256'h0, INIT_55 = 256'h0, INIT_56 = 256'h0, INIT_57 = 256'h0,
  parameter [255:0] INIT_58 = 256'h0, INIT_59 = 256'h0, INIT_5A = 256'h0, INIT_5B = 256'h0,
  parameter [255:0] INIT_5C = 256'h0, INIT_5D = 256'h0, INIT_5E = 256'h0, INIT_5F = 256'h0,
  parameter [255:0] INIT_60 = 256'h0, INIT_61 = 256'h0, INIT_62 = 256'h0, INIT_63 = 256'h0,
  parameter [255:0] INIT_64 = 256'h0, INIT_65 = 256'h0, INIT_66 = 256'h0, INIT_67 = 256'h0,
  parameter [255:0] INIT_68 = 256'h0, INIT_69 = 256'h0, INIT_6A = 256'h0, INIT_6B = 256'h0,
  parameter [255:0] INIT_6C = 256'h0, INIT_6D = 256'h0, INIT_6E = 256'h0, INIT_6F = 256'h0,
  parameter [255:0] INIT_70 = 256'h0, INIT_71 = 256'h0, INIT_72 = 256'h0, INIT_73 = 256'h0,
  parameter [255:0] INIT_74 = 256'h0, INIT_75 = 256'h0, INIT_76 = 256'h0, INIT_77 = 256'h0,
  parameter [255:0] INIT_78 = 256'h0, INIT_79 = 256'h0, INIT_7A = 256'h0, INIT_7B = 256'h0,
  parameter [255:0] INIT_7C = 256'h0, INIT_7D = 256'h0, INIT_7E = 256'h0, INIT_7F = 256'h0,
  parameter [255:0] INITP_00 = 256'h0, INITP_01 = 256'h0, INITP_02 = 256'h0, INITP_03 = 256'h0,
  parameter [255:0] INITP_04 = 256'h0, INITP_05 = 256'h0, INITP_06 = 256'h0, INITP_07 = 256'h0,
  parameter [255:0] INITP_08 = 256'h0, INITP_09 = 256'h0, INITP_0A = 256'h0, INITP_0B = 256'h0,
  parameter [255:0] INITP_0C = 256'h0, INITP_0D = 256'h0, INITP_0E = 256'h0, INITP_0F = 256'h0,
  parameter integer DOA_REG = 0, parameter integer DOB_REG = 0,
  parameter EN_ECC_READ = "FALSE", parameter EN_ECC_WRITE = "FALSE",
  parameter RAM_EXTENSION_A = "NONE", parameter RAM_EXTENSION_B = "NONE",
  parameter RAM_MODE = "TDP",
  parameter integer READ_WIDTH_A = 0, parameter integer READ_WIDTH_B = 0,
  parameter integer WRITE_WIDTH_A = 0, parameter integer WRITE_WIDTH_B = 0,
  parameter WRITE_MODE_A = "WRITE_FIRST", parameter WRITE_MODE_B = "WRITE_FIRST",
  parameter INIT_A = 36'h0, parameter INIT_B = 36'h0, parameter SRVAL_A = 36'h0,
  parameter SRVAL_B = 36'h0, parameter INIT_FILE = "NONE",
  parameter RDADDR_COLLISION_HWCONFIG = "DELAYED_WRITE", parameter RSTREG_PRIORITY_A = "RSTREG",
  parameter RSTREG_PRIORITY_B = "RSTREG", parameter SIM_COLLISION_CHECK = "ALL",
  parameter SIM_DEVICE = "VIRTEX6",
  parameter IS_CLKARDCLK_INVERTED = 1'b0, parameter IS_CLKBWRCLK_INVERTED = 1'b0,
  parameter IS_ENARDEN_INVERTED = 1'b0, parameter IS_ENBWREN_INVERTED = 1'b0,
  parameter IS_RSTRAMARSTRAM_INVERTED = 1'b0, parameter IS_RSTRAMB_INVERTED = 1'b0,
  parameter IS_RSTREGARSTREG_INVERTED = 1'b0, parameter IS_RSTREGB_INVERTED = 1'b0
) (
  output CASCADEOUTA, CASCADEOUTB,
  output [31:0] DOADO, DOBDO,
  output [3:0] DOPADOP, DOPBDOP,
  output [7:0] ECCPARITY,
  output [8:0] RDADDRECC,
  output SBITERR, DBITERR,
  input ENARDEN, CLKARDCLK, RSTRAMARSTRAM, RSTREGARSTREG, CASCADEINA, REGCEAREGCE,
  input ENBWREN, CLKBWRCLK, RSTRAMB, RSTREGB, CASCADEINB, REGCEB,
  input INJECTDBITERR, INJECTSBITERR,
  input [15:0] ADDRARDADDR, ADDRBWRADDR,
  input [31:0] DIADI, DIBDI,
  input [3:0] DIPADIP, DIPBDIP,
  input [3:0] WEA,
  input [7:0] WEBWE
);
  assign CASCADEOUTA = 1'b0;
  assign CASCADEOUTB = 1'b0;
  assign ECCPARITY = 8'd0;
  assign RDADDRECC = 9'd0;
  assign SBITERR = 1'b0;
  assign DBITERR = 1'b0;
  // ADDR[15] selects the half of a cascade; without one only [14:0] count.
  loom_nl_bram #(
    .Lanes(4096), .Pins(32), .AddrW(15), .RAM_MODE(RAM_MODE),
    .READ_WIDTH_A(READ_WIDTH_A), .READ_WIDTH_B(READ_WIDTH_B),
    .WRITE_WIDTH_A(WRITE_WIDTH_A), .WRITE_WIDTH_B(WRITE_WIDTH_B),
    .WRITE_MODE_A(WRITE_MODE_A), .WRITE_MODE_B(WRITE_MODE_B),
    .DOA_REG(DOA_REG), .DOB_REG(DOB_REG)
  ) core (
    .clka(CLKARDCLK), .clkb(CLKBWRCLK), .ena(ENARDEN), .enb(ENBWREN),
    .rsta(RSTRAMARSTRAM), .rstb(RSTRAMB), .addra(ADDRARDADDR[14:0]),
    .addrb(ADDRBWRADDR[14:0]), .dia(DIADI), .dib(DIBDI), .dipa(DIPADIP), .dipb(DIPBDIP),
    .wea(WEA), .web(WEBWE), .doa(DOADO), .dob(DOBDO), .dopa(DOPADOP), .dopb(DOPBDOP)
  );
  initial
    if (EN_ECC_READ != "FALSE" || EN_ECC_WRITE != "FALSE" || RAM_EXTENSION_A != "NONE" ||
        RAM_EXTENSION_B != "NONE" || IS_CLKARDCLK_INVERTED || IS_CLKBWRCLK_INVERTED ||
        IS_ENARDEN_INVERTED || IS_ENBWREN_INVERTED || IS_RSTRAMARSTRAM_INVERTED ||
        IS_RSTRAMB_INVERTED || INIT_FILE != "NONE" || |{INIT_00, INIT_01, INIT_02, INIT_03, INIT_04, INIT_05, INIT_06, INIT_07, INIT_08, INIT_09, INIT_0A, INIT_0B, INIT_0C, INIT_0D, INIT_0E, INIT_0F, INIT_10, INIT_11, INIT_12, INIT_13, INIT_14, INIT_15, INIT_16, INIT_17, INIT_18, INIT_19, INIT_1A, INIT_1B, INIT_1C, INIT_1D, INIT_1E, INIT_1F, INIT_20, INIT_21, INIT_22, INIT_23, INIT_24, INIT_25, INIT_26, INIT_27, INIT_28, INIT_29, INIT_2A, INIT_2B, INIT_2C, INIT_2D, INIT_2E, INIT_2F, INIT_30, INIT_31, INIT_32, INIT_33, INIT_34, INIT_35, INIT_36, INIT_37, INIT_38, INIT_39, INIT_3A, INIT_3B, INIT_3C, INIT_3D, INIT_3E, INIT_3F, INIT_40, INIT_41, INIT_42, INIT_43, INIT_44, INIT_45, INIT_46, INIT_47, INIT_48, INIT_49, INIT_4A, INIT_4B, INIT_4C, INIT_4D, INIT_4E, INIT_4F, INIT_50, INIT_51, INIT_52, INIT_53, INIT_54, INIT_55, INIT_56, INIT_57, INIT_58, INIT_59, INIT_5A, INIT_5B, INIT_5C, INIT_5D, INIT_5E, INIT_5F, INIT_60, INIT_61, INIT_62, INIT_63, INIT_64, INIT_65, INIT_66, INIT_67, INIT_68, INIT_69, INIT_6A, INIT_6B, INIT_6C, INIT_6D, INIT_6E, INIT_6F, INIT_70, INIT_71, INIT_72, INIT_73, INIT_74, INIT_75, INIT_76, INIT_77, INIT_78, INIT_79, INIT_7A, INIT_7B, INIT_7C, INIT_7D, INIT_7E, INIT_7F, INITP_00, INITP_01, INITP_02, INITP_03, INITP_04, INITP_05, INITP_06, INITP_07, INITP_08, INITP_09, INITP_0A, INITP_0B, INITP_0C, INITP_0D, INITP_0E, INITP_0F}) begin
      $display("FAIL: %m: ECC, cascades, inverted pins or initial contents are not modelled");
      $finish;
    end
endmodule
