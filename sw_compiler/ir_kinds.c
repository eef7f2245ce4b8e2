/*
 * ir_kinds.c - the IR's kind tables: element types, layouts, attribute
 * kinds and ops, with their names.
 *
 * Every enum of ir.h has a row here per value, in enum order, checked by a
 * _Static_assert, so adding a kind without its name (or its size, or its
 * runtime dtype) breaks the build.  The op table says only how many
 * operands an op takes and whether constant folding may evaluate it; what
 * an op computes lives in the passes.  IR_OP_ONNX, the generic node, takes
 * its arity and attributes from the ONNX schema table instead.
 */
#include "sw_compiler/ir.h"

#include <string.h>

static const char *const dtype_names[] = {"?",   "f32", "i8",  "u8",  "i32",  "i64", "bool",
                                          "i16", "u16", "u32", "u64", "f16", "bf16", "f64"};
_Static_assert(sizeof dtype_names / sizeof dtype_names[0] == IR_DT_COUNT,
               "dtype_names must name every ir_dtype");
static const unsigned char dtype_sizes[] = {0, 4, 1, 1, 4, 8, 1, 2, 2, 4, 8, 2, 2, 8};
_Static_assert(sizeof dtype_sizes == IR_DT_COUNT, "dtype_sizes must cover every ir_dtype");

const char *ir_dtype_name(enum ir_dtype dt) {
  return (unsigned)dt < IR_DT_COUNT ? dtype_names[dt] : "invalid";
}

int ir_dtype_from_name(const char *name) {
  for (int i = 0; i < IR_DT_COUNT; i++)
    if (!strcmp(dtype_names[i], name)) return i;
  return -1;
}

size_t ir_dtype_size(enum ir_dtype dt) {
  return (unsigned)dt < IR_DT_COUNT ? dtype_sizes[dt] : 0;
}

int ir_dtype_is_float(enum ir_dtype dt) {
  return dt == IR_DT_F32 || dt == IR_DT_F16 || dt == IR_DT_BF16 || dt == IR_DT_F64;
}

/* The runtime's dtype of each IR dtype (loom.h numbers them differently:
 * its order is the .loom format's). */
static const loom_dtype dtype_loom[] = {
    LOOM_DT_INVALID, LOOM_DT_F32, LOOM_DT_I8,  LOOM_DT_U8,  LOOM_DT_I32, LOOM_DT_I64,  LOOM_DT_BOOL,
    LOOM_DT_I16,     LOOM_DT_U16, LOOM_DT_U32, LOOM_DT_U64, LOOM_DT_F16, LOOM_DT_BF16, LOOM_DT_F64};
_Static_assert(sizeof dtype_loom / sizeof dtype_loom[0] == IR_DT_COUNT, "dtype_loom must map every ir_dtype");

int ir_dtype_from_onnx(int64_t code) {
  /* TensorProto.DataType: 1 float, 2 uint8, 3 int8, 4 uint16, 5 int16, 6 int32, 7 int64,
   * 8 string, 9 bool, 10 float16, 11 double, 12 uint32, 13 uint64, 14/15 complex, 16 bfloat16 */
  static const signed char map[] = {-1, IR_DT_F32, IR_DT_U8, IR_DT_I8, IR_DT_U16, IR_DT_I16, IR_DT_I32, IR_DT_I64, -1,
                                    IR_DT_BOOL, IR_DT_F16, IR_DT_F64, IR_DT_U32, IR_DT_U64, -1, -1, IR_DT_BF16};
  return code >= 0 && code < (int64_t)sizeof map ? map[code] : -1;
}

loom_dtype ir_dtype_to_loom(enum ir_dtype dt) {
  return (unsigned)dt < IR_DT_COUNT ? dtype_loom[dt] : LOOM_DT_INVALID;
}

enum ir_dtype ir_dtype_from_loom(loom_dtype dt) {
  for (int i = 1; i < IR_DT_COUNT; i++)
    if (dtype_loom[i] == dt) return (enum ir_dtype)i;
  return IR_DT_UNDEF;
}

static const char *const layout_names[] = {"plain", "NCHW", "NHWC", "NCHWc"};
_Static_assert(sizeof layout_names / sizeof layout_names[0] == IR_LAYOUT_COUNT,
               "layout_names must name every ir_layout");

const char *ir_layout_name(enum ir_layout l) {
  return (unsigned)l < IR_LAYOUT_COUNT ? layout_names[l] : "invalid";
}

static const char *const attr_kind_names[] = {"int", "float", "ints", "floats", "string", "tensor", "strings"};
_Static_assert(sizeof attr_kind_names / sizeof attr_kind_names[0] == IR_ATTR_COUNT,
               "attr_kind_names must name every ir_attr_kind");

const char *ir_attr_kind_name(enum ir_attr_kind k) {
  return (unsigned)k < IR_ATTR_COUNT ? attr_kind_names[k] : "invalid";
}

#define F IR_OPF_FOLDABLE
#define V IR_OPF_VARIADIC
/* Positional on purpose: adding an enum value without a row breaks the
 * _Static_assert below. */
const struct ir_op_info ir_op_infos[] = {
    {"Conv", 2, 3, 1, 0},
    {"Gemm", 2, 3, 1, 0},
    {"MatMul", 2, 2, 1, 0},
    {"Relu", 1, 1, 1, F},
    {"Clip", 1, 3, 1, F},
    {"Add", 2, 2, 1, F},
    {"Mul", 2, 2, 1, F},
    {"MaxPool", 1, 1, 1, 0},
    {"AveragePool", 1, 1, 1, 0},
    {"GlobalAveragePool", 1, 1, 1, 0},
    {"Flatten", 1, 1, 1, F},
    {"Reshape", 2, 2, 1, F},
    {"Transpose", 1, 1, 1, F},
    {"Concat", 1, 1, 1, F | V},
    {"BatchNormalization", 5, 5, 1, 0},
    {"Softmax", 1, 2, 1, 0}, /* the int8 form of compile_qsoftmax.c may add a mask */
    {"Identity", 1, 1, 1, F},
    {"QuantizeLinear", 2, 3, 1, 0},
    {"DequantizeLinear", 2, 3, 1, 0},
    {"QLinearConv", 8, 9, 1, 0},
    {"QLinearMatMul", 8, 8, 1, 0},
    {"ConvInteger", 2, 4, 1, 0},
    {"MatMulInteger", 2, 4, 1, 0},
    {"Constant", 0, 0, 1, F},
    {"Shape", 1, 1, 1, F},
    {"Gather", 2, 2, 1, F},
    {"Unsqueeze", 1, 1, 1, F},
    {"Squeeze", 1, 1, 1, F},
    {"loom.QConv", 1, 1, 1, V},
    {"loom.QGemm", 1, 1, 1, V},
    {"loom.QAdd", 2, 2, 1, 0},
    {"loom.QPool", 1, 1, 1, 0},
    {"onnx", 0, 0, 0, F | V}, /* arity and attributes from the ONNX schema (onnx_schema.h) */
};
#undef F
#undef V
_Static_assert(sizeof ir_op_infos / sizeof ir_op_infos[0] == IR_OP_COUNT,
               "ir_op_infos must describe every ir_op_kind");

const char *ir_op_name(enum ir_op_kind op) {
  return (unsigned)op < IR_OP_COUNT ? ir_op_infos[op].name : "invalid";
}

int ir_op_from_name(const char *name) {
  for (int i = 0; i < IR_OP_ONNX; i++)
    if (!strcmp(ir_op_infos[i].name, name)) return i;
  return -1;
}

int ir_op_is_view(enum ir_op_kind op) {
  return op == IR_OP_FLATTEN || op == IR_OP_RESHAPE || op == IR_OP_SQUEEZE || op == IR_OP_UNSQUEEZE ||
         op == IR_OP_IDENTITY;
}


int ir_kind_opset(const struct ir_node *n) {
  switch (n->op) {
  case IR_OP_ONNX: return n->opset;
  case IR_OP_SQUEEZE: case IR_OP_UNSQUEEZE: return 11;  /* axes as an attribute */
  case IR_OP_SOFTMAX: return ir_attr_int(n, "legacy_2d", 0) ? 11 : 13;
  case IR_OP_MAXPOOL: return 12;
  case IR_OP_AVERAGEPOOL: return 11;
  case IR_OP_QLINEARCONV: case IR_OP_QLINEARMATMUL: case IR_OP_CONVINTEGER: case IR_OP_MATMULINTEGER: return 10;
  case IR_OP_RESHAPE: return 14;                         /* allowzero */
  case IR_OP_BATCHNORM: case IR_OP_SHAPE: return 15;     /* inference-only BN; Shape start / end */
  default: return 13;
  }
}
