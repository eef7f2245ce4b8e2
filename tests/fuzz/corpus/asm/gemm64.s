; gemm64.s - a double-buffered 64x64x64 int8 GEMM for the `tiny` config
; (1x8x8 core), C = requant(A x W), written by hand as the reference for
; what the compiler's lowering emits.  tests/cli/test_gemm64.sh runs it on
; fsim against tests/cli/gemm_ref.c (plain C matmul + the same requant).
;
; Tensors (all plain int8, laid out in the order the loads want them):
;
;   A  [64, 64]         row-major A[m][k].  One INP row (1 x 8) is A[m][8kb..8kb+7],
;                       DRAM row m*8 + kb: the natural layout.
;   B  [8, 8, 8, 8]     B[nb][kb][o][k] = W[8kb + k][8nb + o]: one WGT row (8 x 8,
;                       [o][k]) per (nb, kb) block, DRAM row nb*8 + kb, so the
;                       weights of 4 output blocks are 32 consecutive rows.
;   C  [64, 64]         row-major C[m][n].  One OUT row (1 x 8) is C[m][8nb..8nb+7],
;                       DRAM row m*8 + nb.
;
; Tiling: 8 tiles of 16 rows x 32 columns, tile i = (mt, nt) = (i / 2, i % 2),
; rows 16mt.., columns 32nt...  Tile i runs on virtual thread t = i % 2, which
; owns one half of each SRAM:
;
;   INP  t*128 + m*8 + kb        16 rows x 8 k-blocks = 128 rows
;   WGT  t*64  + nb*8 + kb       4 n-blocks x 8 k-blocks = 32 rows
;   ACC  t*128 + m*4 + nb        16 rows x 4 n-blocks = 64 rows (OUT mirrors ACC)
;
; Micro-ops (buffer uops, loaded once): 0..7 and 8..15 are the GEMM bodies of
; thread 0 and 1 (one per k-block: acc = base, inp = base + kb, wgt = base + kb);
; 16 and 17 are the base rows of each thread's ACC half (reset and requant).
; GEMM loops iter=16,4 over (m, nb): acc += 4m + nb, inp += 8m, wgt += 8nb.
;
; Tokens, per tile i (load -> compute -> store, and back):
;
;   load wgt    push_next   L2C: tile i is in INP/WGT half t
;   gemm reset  pop_prev    ... wait for it
;               pop_next    S2C (i >= 2): store of tile i-2 freed ACC half t
;   gemm        push_prev   C2L (i < 6): INP/WGT half t free for tile i+2
;   load inp    pop_next    ... (i >= 2) wait for it before overwriting
;   alu         push_next   C2S: tile i requantized in OUT half t
;   store       pop_prev    ... wait for it
;               push_prev   S2C (i < 6): ACC half t free for tile i+2
;
; Every pushed token is popped (6 C2L, 8 L2C, 8 C2S, 6 S2C), and every pop
; waits on an instruction earlier in the stream, so the program cannot
; deadlock whatever the queue depths; the loads of tile i+1 overlap the GEMM
; of tile i and the store of tile i-1.
;
; Requantization (QCFG, ALU REQUANT with the immediate multiplier):
; C = clamp(round_half_even(acc * 1518500250 / 2^41) + 3, -128, 127), about
; acc * 0.00069 + 3.
.config tiny

.buffer a     work  4096
.buffer b     work  4096
.buffer c     work  4096
.buffer uops  const
  .uop acc=0 inp=0 wgt=0
  .uop acc=0 inp=1 wgt=1
  .uop acc=0 inp=2 wgt=2
  .uop acc=0 inp=3 wgt=3
  .uop acc=0 inp=4 wgt=4
  .uop acc=0 inp=5 wgt=5
  .uop acc=0 inp=6 wgt=6
  .uop acc=0 inp=7 wgt=7
  .uop acc=128 inp=128 wgt=64
  .uop acc=128 inp=129 wgt=65
  .uop acc=128 inp=130 wgt=66
  .uop acc=128 inp=131 wgt=67
  .uop acc=128 inp=132 wgt=68
  .uop acc=128 inp=133 wgt=69
  .uop acc=128 inp=134 wgt=70
  .uop acc=128 inp=135 wgt=71
  .uop acc=0 inp=0 wgt=0
  .uop acc=128 inp=0 wgt=0

.tensor A input  a 0 i8 [64,64]
.tensor B input  b 0 i8 [8,8,8,8]
.tensor C output c 0 i8 [64,64]

.job gemm64 seg0=a seg1=b seg2=c seg3=uops
  load   uop sram=0 seg=3 off=0 y=1 x=18 stride=18
  qcfg   mul=1518500250 shift=41 zp=3 round_even
  ; tile 0: C rows 0..15, columns 0..31, thread 0
  load   inp sram=0 seg=0 off=0 y=1 x=128 stride=128
  load   wgt sram=0 seg=1 off=0 y=1 x=32 stride=32 push_next
  gemm   reset uop=16:17 iter=16,4 acc=4,1 pop_prev
  gemm   uop=0:8 iter=16,4 acc=4,1 inp=8,0 wgt=0,8 push_prev
  alu    requant use_imm uop=16:17 iter=64,1 dst=1,0 push_next
  store  sram=0 seg=2 off=0 y=16 x=4 stride=8 pop_prev push_prev
  ; tile 1: C rows 0..15, columns 32..63, thread 1
  load   inp sram=128 seg=0 off=0 y=1 x=128 stride=128
  load   wgt sram=64 seg=1 off=32 y=1 x=32 stride=32 push_next
  gemm   reset uop=17:18 iter=16,4 acc=4,1 pop_prev
  gemm   uop=8:16 iter=16,4 acc=4,1 inp=8,0 wgt=0,8 push_prev
  alu    requant use_imm uop=17:18 iter=64,1 dst=1,0 push_next
  store  sram=128 seg=2 off=4 y=16 x=4 stride=8 pop_prev push_prev
  ; tile 2: C rows 16..31, columns 0..31, thread 0
  load   inp sram=0 seg=0 off=128 y=1 x=128 stride=128 pop_next
  load   wgt sram=0 seg=1 off=0 y=1 x=32 stride=32 push_next
  gemm   reset uop=16:17 iter=16,4 acc=4,1 pop_prev pop_next
  gemm   uop=0:8 iter=16,4 acc=4,1 inp=8,0 wgt=0,8 push_prev
  alu    requant use_imm uop=16:17 iter=64,1 dst=1,0 push_next
  store  sram=0 seg=2 off=128 y=16 x=4 stride=8 pop_prev push_prev
  ; tile 3: C rows 16..31, columns 32..63, thread 1
  load   inp sram=128 seg=0 off=128 y=1 x=128 stride=128 pop_next
  load   wgt sram=64 seg=1 off=32 y=1 x=32 stride=32 push_next
  gemm   reset uop=17:18 iter=16,4 acc=4,1 pop_prev pop_next
  gemm   uop=8:16 iter=16,4 acc=4,1 inp=8,0 wgt=0,8 push_prev
  alu    requant use_imm uop=17:18 iter=64,1 dst=1,0 push_next
  store  sram=128 seg=2 off=132 y=16 x=4 stride=8 pop_prev push_prev
  ; tile 4: C rows 32..47, columns 0..31, thread 0
  load   inp sram=0 seg=0 off=256 y=1 x=128 stride=128 pop_next
  load   wgt sram=0 seg=1 off=0 y=1 x=32 stride=32 push_next
  gemm   reset uop=16:17 iter=16,4 acc=4,1 pop_prev pop_next
  gemm   uop=0:8 iter=16,4 acc=4,1 inp=8,0 wgt=0,8 push_prev
  alu    requant use_imm uop=16:17 iter=64,1 dst=1,0 push_next
  store  sram=0 seg=2 off=256 y=16 x=4 stride=8 pop_prev push_prev
  ; tile 5: C rows 32..47, columns 32..63, thread 1
  load   inp sram=128 seg=0 off=256 y=1 x=128 stride=128 pop_next
  load   wgt sram=64 seg=1 off=32 y=1 x=32 stride=32 push_next
  gemm   reset uop=17:18 iter=16,4 acc=4,1 pop_prev pop_next
  gemm   uop=8:16 iter=16,4 acc=4,1 inp=8,0 wgt=0,8 push_prev
  alu    requant use_imm uop=17:18 iter=64,1 dst=1,0 push_next
  store  sram=128 seg=2 off=260 y=16 x=4 stride=8 pop_prev push_prev
  ; tile 6: C rows 48..63, columns 0..31, thread 0
  load   inp sram=0 seg=0 off=384 y=1 x=128 stride=128 pop_next
  load   wgt sram=0 seg=1 off=0 y=1 x=32 stride=32 push_next
  gemm   reset uop=16:17 iter=16,4 acc=4,1 pop_prev pop_next
  gemm   uop=0:8 iter=16,4 acc=4,1 inp=8,0 wgt=0,8
  alu    requant use_imm uop=16:17 iter=64,1 dst=1,0 push_next
  store  sram=0 seg=2 off=384 y=16 x=4 stride=8 pop_prev
  ; tile 7: C rows 48..63, columns 32..63, thread 1
  load   inp sram=128 seg=0 off=384 y=1 x=128 stride=128 pop_next
  load   wgt sram=64 seg=1 off=32 y=1 x=32 stride=32 push_next
  gemm   reset uop=17:18 iter=16,4 acc=4,1 pop_prev pop_next
  gemm   uop=8:16 iter=16,4 acc=4,1 inp=8,0 wgt=0,8
  alu    requant use_imm uop=17:18 iter=64,1 dst=1,0 push_next
  store  sram=128 seg=2 off=388 y=16 x=4 stride=8 pop_prev
  finish
