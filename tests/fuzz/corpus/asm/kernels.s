; format 1.3: kernel steps with every attribute kind, a dynamic result,
; absent operands, the host dtypes and an empty tensor
.config tiny
.buffer a work 256
.buffer c const 8
  .byte 0, 0, 128, 63, 0, 0, 0, 64
.tensor X input a 0 f32 [1,2,2]
.tensor S internal c 0 f32 [2]
.tensor Y output a 16 f32 [1,2,2]
.tensor N output a 32 i64 [3,4]
.tensor E internal a 128 bf16 [0,4]
.tensor B internal a 136 bool [4]
.tensor H internal a 144 f16 [2,2]
.tensor D internal a 160 f64 [2]
.tensor I internal a 176 i16 [3]
.tensor U internal a 184 u64 [1]
.steps
.step kernel Resize opset=11 in=X,-,S out=Y
  .attr mode string "linear"
  .attr axes ints 0, -1
  .attr alpha float 0.2
  .attr names strings "a", "", "b c"
  .attr none floats
  .attr value tensor S
  .attr k int -7
.step kernel NonZero opset=13 in=X out=N dynamic
.step kernel Cast opset=13 in=X out=H
  .attr to int 10
