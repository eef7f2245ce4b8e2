; store_fault.s - a program the accelerator must stop: its STORE writes one
; DRAM row past the end of the 8-byte output buffer, so the DMA engine's
; segment check raises SEGMENT at instruction 3 and nothing is written.
; `loom run` reports "job failed: SEGMENT at insn 3: ..." and exits with 2
; (tests/cli/test_cli.sh).  Otherwise it adds 1 to eight int32 values.
.config tiny

.buffer x     work  32                    ; one ACC row: 8 int32
.buffer y     work  8                     ; one OUT row: 8 int8
.buffer uops  const
  .uop acc=0 inp=0 wgt=0

.tensor X input  x 0 i32 [8]
.tensor Y output y 0 i8 [8]

.job fault seg0=uops seg1=x seg2=y
  load   uop sram=0 seg=0 off=0 y=1 x=1 stride=1
  load   acc sram=0 seg=1 off=0 y=1 x=1 stride=1
  alu    add use_imm imm=1 uop=0:1 iter=1,1 push_next
  store  sram=0 seg=2 off=1 y=1 x=1 stride=1 pop_prev   ; row 1: bytes 8..15 of an 8-byte segment
  finish
