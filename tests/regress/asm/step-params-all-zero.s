; every directive and option the assembler knows, small
.config tiny
.buffer "in put" work 64 align=128
.buffer w const 32
  .word 1, -2, 0x7fffffff, -2147483648
  .byte 255, -128, 0 1 2
  .zero 3
.buffer q work 587
.buffer u const
  .uop 0 0 0
  .uop acc=2047 inp=2047 wgt=1023
.tensor x input "in put" 0 f32 [2,8] 
.tensor xq internal q 0 i8 [1,8,1,1] scale=0.5 zp=-3 user_dtype=f32 layout=nchwc block=8
.tensor v internal q 64 u8 [3,5] layout=nc block=4 scale=0.25 zp=7 user_dtype=f32
.tensor s output q 128 i32 []
.tensor "y\x41\"q" output q 132 f32 [2,8]
.job j0 seg0=w seg3=u seg7="in put"
  load uop sram=0 seg=3 off=0 y=1 x=2 stride=2
  load acc sram=0 seg=0 off=0 y=1 x=1 stride=1 pad=1,1,1,1 padval=-5
  load acc sram=8 seg=0 off=0 y=1 x=8 stride=8 src_int8
  load inp sram=0 seg=7 off=0 y=1 x=1 stride=1 pad=0,0,2,0 padval=7 push_next
  load wgt sram=0 seg=0 off=0 y=1 x=1 stride=0
  gemm uop=0:1 iter=2,3 acc=1,2 inp=3,4 wgt=5,6 pop_prev
  alu add uop=0:1 iter=1,1 dst=1,0 src=0,1
  alu shr use_imm imm=3 uop=0:1 iter=1,1
  alu mov use_imm imm=-32768 uop=0:1 iter=1,1
  alu mul uop=0:1 iter=1,1
  alu min use_imm imm=32767 uop=0:1 iter=1,1
  qcfg mul=-2147483648 shift=63 zp=-128 lo=-128 hi=127
  alu requant uop=0:1 iter=1,1
  nop load
  nop store
  nop compute push_next push_prev
  store sram=0 seg=0 off=0 y=0 x=0 stride=0 pop_prev push_prev
  nop load pop_next
  .insn 0x5
  finish
.job j1 seg1=q
  .insn 0xffffffffffffffffffffffffffffffff
  finish
.steps
.step host 1 in=x out=xq
.step job j0
.step host 3 in=x,-,-,- out="y\x41\"q"
  .word -0
.step job j1
.step host 2 in=xq out=x
.step host 0 in=v out=v
