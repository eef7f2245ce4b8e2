; gemm_tiny.s - one 8x8 int8 tile through the GEMM core of the tiny config:
; C = sat8(A x W^T), with every kind of instruction the example needs.
.config tiny

.buffer a     work  64                    ; input tile, 1 x 8 int8 per row
.buffer w     const 64                    ; weights: 8 x 8 int8
  .byte 1, 0, 0, 0, 0, 0, 0, 0
  .byte 0, 1, 0, 0, 0, 0, 0, 0
.buffer c     work  64
.buffer uops  const                       ; size = the data that follows
  .uop acc=0 inp=0 wgt=0
  .uop 1 1 1                              ; positional: acc inp wgt

.tensor A input  a 0 i8 [8,8]
.tensor C output c 0 i8 [8,8]

.job main seg0=a seg1=w seg2=c seg3=uops
  load   uop sram=0 seg=3 off=0 y=1 x=2 stride=2
  load   wgt sram=0 seg=1 off=0 y=1 x=1 stride=1 push_next
  load   inp sram=0 seg=0 off=0 y=1 x=8 stride=8 push_next
  gemm   reset uop=0:1 iter=8,1 acc=1,0 pop_prev
  gemm   uop=0:1 iter=8,1 acc=1,0 inp=1,0 pop_prev
  qcfg   mul=1073741824 shift=30 round_even
  alu    requant use_imm uop=0:1 iter=8,1 dst=1,0
  alu    max use_imm imm=-3 uop=0:1 iter=8,1 dst=1,0
  nop    compute push_next
  store  sram=0 seg=2 off=0 y=1 x=8 stride=8 pop_prev
  finish
