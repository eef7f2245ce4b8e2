; gemm64_default.s - the program of gemm64.s for the `default` config
; (1x16x16 core): the same 64x64x64 int8 GEMM, tiling, threads, tokens and
; requantization; only the block size and so the row counts differ.  Read
; gemm64.s for the explanation; the numbers here:
;
;   A  [64, 64]           INP row (1 x 16) = A[m][16kb..], DRAM row m*4 + kb
;   B  [4, 4, 16, 16]     B[nb][kb][o][k] = W[16kb + k][16nb + o], DRAM row nb*4 + kb
;   C  [64, 64]           OUT row (1 x 16) = C[m][16nb..], DRAM row m*4 + nb
;
; 8 tiles of 16 rows x 32 columns (2 n-blocks); thread t = i % 2 owns
;
;   INP  t*1024 + m*4 + kb       64 rows per tile
;   WGT  t*512  + nb*4 + kb      8 rows per tile
;   ACC  t*1024 + m*2 + nb       32 rows per tile
;
; Micro-ops: 0..3 and 4..7 the GEMM bodies of thread 0 and 1, 8 and 9 the
; ACC bases.  GEMM loops iter=16,2: acc += 2m + nb, inp += 4m, wgt += 4nb.
.config default

.buffer a     work  4096
.buffer b     work  4096
.buffer c     work  4096
.buffer uops  const
  .uop acc=0 inp=0 wgt=0
  .uop acc=0 inp=1 wgt=1
  .uop acc=0 inp=2 wgt=2
  .uop acc=0 inp=3 wgt=3
  .uop acc=1024 inp=1024 wgt=512
  .uop acc=1024 inp=1025 wgt=513
  .uop acc=1024 inp=1026 wgt=514
  .uop acc=1024 inp=1027 wgt=515
  .uop acc=0 inp=0 wgt=0
  .uop acc=1024 inp=0 wgt=0

.tensor A input  a 0 i8 [64,64]
.tensor B input  b 0 i8 [4,4,16,16]
.tensor C output c 0 i8 [64,64]

.job gemm64 seg0=a seg1=b seg2=c seg3=uops
  load   uop sram=0 seg=3 off=0 y=1 x=10 stride=10
  qcfg   mul=1518500250 shift=41 zp=3 round_even
  ; tile 0: C rows 0..15, columns 0..31, thread 0
  load   inp sram=0 seg=0 off=0 y=1 x=64 stride=64
  load   wgt sram=0 seg=1 off=0 y=1 x=8 stride=8 push_next
  gemm   reset uop=8:9 iter=16,2 acc=2,1 pop_prev
  gemm   uop=0:4 iter=16,2 acc=2,1 inp=4,0 wgt=0,4 push_prev
  alu    requant use_imm uop=8:9 iter=32,1 dst=1,0 push_next
  store  sram=0 seg=2 off=0 y=16 x=2 stride=4 pop_prev push_prev
  ; tile 1: C rows 0..15, columns 32..63, thread 1
  load   inp sram=1024 seg=0 off=0 y=1 x=64 stride=64
  load   wgt sram=512 seg=1 off=8 y=1 x=8 stride=8 push_next
  gemm   reset uop=9:10 iter=16,2 acc=2,1 pop_prev
  gemm   uop=4:8 iter=16,2 acc=2,1 inp=4,0 wgt=0,4 push_prev
  alu    requant use_imm uop=9:10 iter=32,1 dst=1,0 push_next
  store  sram=1024 seg=2 off=2 y=16 x=2 stride=4 pop_prev push_prev
  ; tile 2: C rows 16..31, columns 0..31, thread 0
  load   inp sram=0 seg=0 off=64 y=1 x=64 stride=64 pop_next
  load   wgt sram=0 seg=1 off=0 y=1 x=8 stride=8 push_next
  gemm   reset uop=8:9 iter=16,2 acc=2,1 pop_prev pop_next
  gemm   uop=0:4 iter=16,2 acc=2,1 inp=4,0 wgt=0,4 push_prev
  alu    requant use_imm uop=8:9 iter=32,1 dst=1,0 push_next
  store  sram=0 seg=2 off=64 y=16 x=2 stride=4 pop_prev push_prev
  ; tile 3: C rows 16..31, columns 32..63, thread 1
  load   inp sram=1024 seg=0 off=64 y=1 x=64 stride=64 pop_next
  load   wgt sram=512 seg=1 off=8 y=1 x=8 stride=8 push_next
  gemm   reset uop=9:10 iter=16,2 acc=2,1 pop_prev pop_next
  gemm   uop=4:8 iter=16,2 acc=2,1 inp=4,0 wgt=0,4 push_prev
  alu    requant use_imm uop=9:10 iter=32,1 dst=1,0 push_next
  store  sram=1024 seg=2 off=66 y=16 x=2 stride=4 pop_prev push_prev
  ; tile 4: C rows 32..47, columns 0..31, thread 0
  load   inp sram=0 seg=0 off=128 y=1 x=64 stride=64 pop_next
  load   wgt sram=0 seg=1 off=0 y=1 x=8 stride=8 push_next
  gemm   reset uop=8:9 iter=16,2 acc=2,1 pop_prev pop_next
  gemm   uop=0:4 iter=16,2 acc=2,1 inp=4,0 wgt=0,4 push_prev
  alu    requant use_imm uop=8:9 iter=32,1 dst=1,0 push_next
  store  sram=0 seg=2 off=128 y=16 x=2 stride=4 pop_prev push_prev
  ; tile 5: C rows 32..47, columns 32..63, thread 1
  load   inp sram=1024 seg=0 off=128 y=1 x=64 stride=64 pop_next
  load   wgt sram=512 seg=1 off=8 y=1 x=8 stride=8 push_next
  gemm   reset uop=9:10 iter=16,2 acc=2,1 pop_prev pop_next
  gemm   uop=4:8 iter=16,2 acc=2,1 inp=4,0 wgt=0,4 push_prev
  alu    requant use_imm uop=9:10 iter=32,1 dst=1,0 push_next
  store  sram=1024 seg=2 off=130 y=16 x=2 stride=4 pop_prev push_prev
  ; tile 6: C rows 48..63, columns 0..31, thread 0
  load   inp sram=0 seg=0 off=192 y=1 x=64 stride=64 pop_next
  load   wgt sram=0 seg=1 off=0 y=1 x=8 stride=8 push_next
  gemm   reset uop=8:9 iter=16,2 acc=2,1 pop_prev pop_next
  gemm   uop=0:4 iter=16,2 acc=2,1 inp=4,0 wgt=0,4
  alu    requant use_imm uop=8:9 iter=32,1 dst=1,0 push_next
  store  sram=0 seg=2 off=192 y=16 x=2 stride=4 pop_prev
  ; tile 7: C rows 48..63, columns 32..63, thread 1
  load   inp sram=1024 seg=0 off=192 y=1 x=64 stride=64 pop_next
  load   wgt sram=512 seg=1 off=8 y=1 x=8 stride=8 push_next
  gemm   reset uop=9:10 iter=16,2 acc=2,1 pop_prev pop_next
  gemm   uop=4:8 iter=16,2 acc=2,1 inp=4,0 wgt=0,4
  alu    requant use_imm uop=9:10 iter=32,1 dst=1,0 push_next
  store  sram=1024 seg=2 off=194 y=16 x=2 stride=4 pop_prev
  finish
