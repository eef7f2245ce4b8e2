/*
 * hostgen_build.c - the small vocabulary the host-code builders speak:
 * functions, counted loops, branches, index arithmetic, the stored layouts
 * of .loom tensors, and the float operations whose C meaning must be kept.
 *
 * Every shape, stride, scale and zero point is a compile-time constant
 * here, so the builders emit loops with constant trip counts and constant
 * strides and LLVM does the rest (unrolling, vectorization, strength
 * reduction).  Loops are emitted in do-while form with the induction
 * variable as a phi, which is what the loop passes canonicalize to anyway.
 *
 * Two rules keep the generated code free of library calls, which is what
 * lets the linked image have no dependencies at all (hostgen_link.c):
 *   - index arithmetic uses the target's pointer width (`ix`), so a 32-bit
 *     ARM never needs __aeabi_ldivmod or friends;
 *   - float min/max, rounding and exp are written with compares, selects
 *     and integer tricks rather than llvm.maxnum / llvm.rint / llvm.exp,
 *     which may lower to fmaxf / rintf / expf calls on some targets.
 * The float semantics follow the C code they replace exactly (C fmaxf,
 * round half to even, the operation order of the reference), except exp,
 * which is a Cephes-style polynomial within about 1 ulp of libm's expf.
 */
#include "sw_compiler/llvm/hostgen_int.h"

#include <string.h>

void hg_init(struct hg *h, const struct hg_target *t, const char *module_name) {
  memset(h, 0, sizeof *h);
  h->ctx = LLVMContextCreate();
  h->mod = LLVMModuleCreateWithNameInContext(module_name, h->ctx);
  h->b = LLVMCreateBuilderInContext(h->ctx);
  LLVMSetTarget(h->mod, t->triple);
  LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(t->tm);
  LLVMSetModuleDataLayout(h->mod, dl);
  h->ix_bits = (int)LLVMPointerSize(dl) * 8;
  LLVMDisposeTargetData(dl);
  h->i1 = LLVMInt1TypeInContext(h->ctx);
  h->i8 = LLVMInt8TypeInContext(h->ctx);
  h->i32 = LLVMInt32TypeInContext(h->ctx);
  h->i64 = LLVMInt64TypeInContext(h->ctx);
  h->ix = LLVMIntTypeInContext(h->ctx, (unsigned)h->ix_bits);
  h->f32 = LLVMFloatTypeInContext(h->ctx);
  h->f64 = LLVMDoubleTypeInContext(h->ctx);
  h->ptr = LLVMPointerTypeInContext(h->ctx, 0);
  LLVMTypeRef params[2] = {h->ptr, h->ptr};
  h->entry_ty = LLVMFunctionType(h->i32, params, 2, 0);
}

void hg_dispose(struct hg *h) {
  if (h->b) LLVMDisposeBuilder(h->b);
  if (h->mod) LLVMDisposeModule(h->mod);
  if (h->ctx) LLVMContextDispose(h->ctx);
  memset(h, 0, sizeof *h);
}

/* ---- functions ---- */

static void add_fn_attr(struct hg *h, LLVMValueRef fn, unsigned index, const char *name) {
  unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
  LLVMAddAttributeAtIndex(fn, index, LLVMCreateEnumAttribute(h->ctx, kind, 0));
}

/* "no-builtins" keeps LLVM from turning copy and fill loops into memcpy /
 * memset calls: the image links nothing, so a call would be undefined. */
static void start_body(struct hg *h, LLVMValueRef fn) {
  h->fn = fn;
  add_fn_attr(h, fn, LLVMAttributeFunctionIndex, "nounwind");
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateStringAttribute(h->ctx, "no-builtins", 11, "", 0));
  LLVMPositionBuilderAtEnd(h->b, LLVMAppendBasicBlockInContext(h->ctx, fn, "entry"));
}

void hg_entry_begin(struct hg *h, const char *name) {
  LLVMValueRef fn = LLVMAddFunction(h->mod, name, h->entry_ty);
  LLVMSetLinkage(fn, LLVMExternalLinkage);
  LLVMSetVisibility(fn, LLVMDefaultVisibility);
  start_body(h, fn);
}

LLVMValueRef hg_entry_ptr(struct hg *h, int out, int k) {
  LLVMValueRef arr = LLVMGetParam(h->fn, out ? 1 : 0);
  return LLVMBuildLoad2(h->b, h->ptr, hg_gep(h, h->ptr, arr, hg_cx(h, k)), out ? "out" : "in");
}

void hg_entry_end(struct hg *h) { LLVMBuildRet(h->b, hg_c32(h, 0)); }

LLVMValueRef hg_kernel_begin(struct hg *h, const char *name, int n_ptrs, int noalias) {
  LLVMTypeRef params[16];
  for (int i = 0; i < n_ptrs; i++) params[i] = h->ptr;
  LLVMValueRef fn = LLVMAddFunction(h->mod, name, LLVMFunctionType(LLVMVoidTypeInContext(h->ctx), params, (unsigned)n_ptrs, 0));
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  for (int i = 0; noalias && i < n_ptrs; i++) add_fn_attr(h, fn, (unsigned)i + 1, "noalias");
  start_body(h, fn);
  return fn;
}

void hg_kernel_end(struct hg *h, LLVMValueRef saved_fn, LLVMBasicBlockRef saved_bb) {
  LLVMBuildRetVoid(h->b);
  h->fn = saved_fn;
  if (saved_bb) LLVMPositionBuilderAtEnd(h->b, saved_bb);
}

/* ---- constants and index arithmetic ---- */

LLVMValueRef hg_cx(struct hg *h, int64_t v) { return LLVMConstInt(h->ix, (unsigned long long)v, 1); }
LLVMValueRef hg_c32(struct hg *h, int32_t v) { return LLVMConstInt(h->i32, (unsigned long long)(int64_t)v, 1); }
LLVMValueRef hg_cf(struct hg *h, float v) { return LLVMConstReal(h->f32, (double)v); }

LLVMValueRef hg_add(struct hg *h, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildNSWAdd(h->b, a, b, ""); }
LLVMValueRef hg_mul(struct hg *h, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildNSWMul(h->b, a, b, ""); }

LLVMValueRef hg_muladd(struct hg *h, LLVMValueRef a, int64_t m, LLVMValueRef b) {
  return hg_add(h, m == 1 ? a : hg_mul(h, a, hg_cx(h, m)), b);
}

LLVMValueRef hg_gep(struct hg *h, LLVMTypeRef elem, LLVMValueRef base, LLVMValueRef index) {
  return LLVMBuildInBoundsGEP2(h->b, elem, base, &index, 1, "");
}

LLVMValueRef hg_load(struct hg *h, LLVMTypeRef elem, LLVMValueRef base, LLVMValueRef index) {
  return LLVMBuildLoad2(h->b, elem, hg_gep(h, elem, base, index), "");
}

void hg_store(struct hg *h, LLVMValueRef v, LLVMValueRef base, LLVMValueRef index) {
  LLVMBuildStore(h->b, v, hg_gep(h, LLVMTypeOf(v), base, index));
}

/* ---- control flow ---- */

LLVMValueRef hg_for_begin(struct hg *h, struct hg_loop *l, int64_t n) {
  LOOM_ASSERT(n >= 1);
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(h->b);
  l->body = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "loop");
  l->exit = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "loop.end");
  l->n = hg_cx(h, n);
  LLVMBuildBr(h->b, l->body);
  LLVMPositionBuilderAtEnd(h->b, l->body);
  l->iv = LLVMBuildPhi(h->b, h->ix, "i");
  LLVMValueRef zero = hg_cx(h, 0);
  LLVMAddIncoming(l->iv, &zero, &pre, 1);
  return l->iv;
}

void hg_for_end(struct hg *h, struct hg_loop *l) {
  LLVMValueRef next = LLVMBuildNUWAdd(h->b, l->iv, hg_cx(h, 1), "i.next");
  LLVMBasicBlockRef latch = LLVMGetInsertBlock(h->b);
  LLVMAddIncoming(l->iv, &next, &latch, 1);
  LLVMBuildCondBr(h->b, LLVMBuildICmp(h->b, LLVMIntULT, next, l->n, ""), l->body, l->exit);
  LLVMMoveBasicBlockAfter(l->exit, latch);
  LLVMPositionBuilderAtEnd(h->b, l->exit);
}

void hg_if_begin(struct hg *h, struct hg_if *c, LLVMValueRef cond) {
  c->then = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "then");
  c->other = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "else");
  c->join = LLVMAppendBasicBlockInContext(h->ctx, h->fn, "endif");
  LLVMBuildCondBr(h->b, cond, c->then, c->other);
  LLVMPositionBuilderAtEnd(h->b, c->then);
}

void hg_else(struct hg *h, struct hg_if *c) {
  LLVMBuildBr(h->b, c->join);
  LLVMMoveBasicBlockAfter(c->other, LLVMGetInsertBlock(h->b));
  LLVMPositionBuilderAtEnd(h->b, c->other);
}

void hg_endif(struct hg *h, struct hg_if *c) {
  LLVMBuildBr(h->b, c->join);
  LLVMMoveBasicBlockAfter(c->join, LLVMGetInsertBlock(h->b));
  LLVMPositionBuilderAtEnd(h->b, c->join);
}

/* ---- float operations ---- */

static LLVMValueRef fcmp(struct hg *h, LLVMRealPredicate p, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildFCmp(h->b, p, a, b, "");
}

static LLVMValueRef sel(struct hg *h, LLVMValueRef c, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildSelect(h->b, c, a, b, "");
}

/* fmaxf(a, b): the larger, or the operand that is not NaN. */
LLVMValueRef hg_fmax(struct hg *h, LLVMValueRef a, LLVMValueRef b) {
  LLVMValueRef a_nan = fcmp(h, LLVMRealUNO, a, a);
  return sel(h, a_nan, b, sel(h, fcmp(h, LLVMRealOGT, b, a), b, a));
}

LLVMValueRef hg_clampf(struct hg *h, LLVMValueRef v, float lo, float hi) {
  v = sel(h, fcmp(h, LLVMRealOLT, v, hg_cf(h, lo)), hg_cf(h, lo), v);
  return sel(h, fcmp(h, LLVMRealOGT, v, hg_cf(h, hi)), hg_cf(h, hi), v);
}

/* Round half to even of |v| < 2^22: adding and subtracting 1.5 * 2^23
 * leaves no fraction bits, so the FPU's default rounding (to nearest,
 * ties to even) does the work.  LLVM keeps both operations: without
 * fast-math flags (v + c) - c is not v. */
static LLVMValueRef round_even_small(struct hg *h, LLVMValueRef v) {
  LLVMValueRef magic = hg_cf(h, 12582912.0f);
  return LLVMBuildFSub(h->b, LLVMBuildFAdd(h->b, v, magic, ""), magic, "");
}

/* exp(x): n = round(x / ln 2), r = x - n ln 2 (two-part constant), a
 * degree-6 polynomial on |r| <= ln2 / 2 (Cephes expf), times 2^n built in
 * the exponent bits.  x below -87.33 gives 0 (libm gives a subnormal
 * there, less than 1.2e-38 away); above 88.72 +inf; NaN stays NaN. */
LLVMValueRef hg_expf(struct hg *h, LLVMValueRef x) {
  LLVMBuilderRef b = h->b;
  LLVMValueRef xc = hg_clampf(h, x, -87.33654f, 88.72283f);
  LLVMValueRef n = round_even_small(h, LLVMBuildFMul(b, xc, hg_cf(h, 1.44269504088896341f), ""));
  LLVMValueRef r = LLVMBuildFSub(b, xc, LLVMBuildFMul(b, n, hg_cf(h, 0.693359375f), ""), "");
  r = LLVMBuildFSub(b, r, LLVMBuildFMul(b, n, hg_cf(h, -2.12194440e-4f), ""), "");
  static const float c[] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                            4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};
  LLVMValueRef p = hg_cf(h, c[0]);
  for (int i = 1; i < 6; i++) p = LLVMBuildFAdd(b, LLVMBuildFMul(b, p, r, ""), hg_cf(h, c[i]), "");
  LLVMValueRef r2 = LLVMBuildFMul(b, r, r, "");
  LLVMValueRef y = LLVMBuildFAdd(b, LLVMBuildFAdd(b, LLVMBuildFMul(b, p, r2, ""), r, ""), hg_cf(h, 1.0f), "");
  /* 2^n for n in [-126, 128]: split as 2^(n/2) * 2^(n - n/2) so 128 works */
  LLVMValueRef ni = LLVMBuildFPToSI(b, n, h->i32, "");
  LLVMValueRef n1 = LLVMBuildAShr(b, ni, hg_c32(h, 1), ""), n2 = LLVMBuildSub(b, ni, n1, "");
  LLVMValueRef s1 = LLVMBuildBitCast(b, LLVMBuildShl(b, LLVMBuildAdd(b, n1, hg_c32(h, 127), ""), hg_c32(h, 23), ""), h->f32, "");
  LLVMValueRef s2 = LLVMBuildBitCast(b, LLVMBuildShl(b, LLVMBuildAdd(b, n2, hg_c32(h, 127), ""), hg_c32(h, 23), ""), h->f32, "");
  y = LLVMBuildFMul(b, LLVMBuildFMul(b, y, s1, ""), s2, "");
  y = sel(h, fcmp(h, LLVMRealOLT, x, hg_cf(h, -87.33654f)), hg_cf(h, 0.0f), y);
  y = sel(h, fcmp(h, LLVMRealOGT, x, hg_cf(h, 88.72283f)), hg_cf(h, __builtin_inff()), y);
  return sel(h, fcmp(h, LLVMRealUNO, x, x), x, y);
}

LLVMValueRef hg_const_bytes(struct hg *h, const void *bytes, size_t n, const char *name) {
  LLVMValueRef init = LLVMConstStringInContext(h->ctx, bytes, (unsigned)n, 1);
  LLVMValueRef g = LLVMAddGlobal(h->mod, LLVMTypeOf(init), name);
  LLVMSetInitializer(g, init);
  LLVMSetGlobalConstant(g, 1);
  LLVMSetLinkage(g, LLVMPrivateLinkage);
  LLVMSetUnnamedAddress(g, LLVMGlobalUnnamedAddr);
  LLVMSetAlignment(g, 64);
  return g;
}

/* ---- stored layouts of .loom tensors ---- */

void hg_layout_of(struct hg *h, const struct loom_file_tensor *t, struct hg_layout *l) {
  memset(l, 0, sizeof *l);
  l->rank = (int)t->rank;
  memcpy(l->dims, t->dims, sizeof l->dims);
  l->blocked = t->layout != LOOM_LAYOUT_PLAIN;
  l->block = t->layout_block;
  l->inner = 1;
  for (int i = 2; i < l->rank; i++) l->inner *= l->dims[i];
  l->nblocks = l->blocked ? (l->dims[1] + l->block - 1) / l->block : 0;
  l->dtype = t->dtype;
  l->elem = t->dtype == LOOM_DT_F32 ? h->f32 : t->dtype == LOOM_DT_I32 ? h->i32 : h->i8;
  l->scale = t->scale;
  l->zero_point = t->zero_point;
}

/*   plain    ((i0 * d1 + i1) * d2 + i2) ...
 *   blocked  ((n * NB + c / B) * S + s) * B + c % B,  s = the spatial index */
LLVMValueRef hg_layout_index(struct hg *h, const struct hg_layout *l, LLVMValueRef *idx) {
  if (l->rank == 0) return hg_cx(h, 0);
  if (!l->blocked) {
    LLVMValueRef at = idx[0];
    for (int i = 1; i < l->rank; i++) at = hg_muladd(h, at, l->dims[i], idx[i]);
    return at;
  }
  LLVMValueRef s = hg_cx(h, 0);
  for (int i = 2; i < l->rank; i++) s = hg_muladd(h, s, l->dims[i], idx[i]);
  LLVMValueRef bsz = hg_cx(h, l->block);
  LLVMValueRef cb = LLVMBuildUDiv(h->b, idx[1], bsz, ""), ci = LLVMBuildURem(h->b, idx[1], bsz, "");
  LLVMValueRef at = hg_muladd(h, hg_muladd(h, idx[0], l->nblocks, cb), l->inner, s);
  return hg_muladd(h, at, l->block, ci);
}

/* (float)((int64_t)q - zp) * scale, exactly as tensor.c: int8 values fit
 * an i32 difference; an i32 tensor goes through an exact double, built
 * from two 32-bit halves so no target needs a 64-bit conversion call. */
static LLVMValueRef dequant(struct hg *h, const struct hg_layout *l, LLVMValueRef q) {
  LLVMBuilderRef b = h->b;
  LLVMValueRef v;
  if (l->dtype != LOOM_DT_I32) {
    q = l->dtype == LOOM_DT_U8 ? LLVMBuildZExt(b, q, h->i32, "") : LLVMBuildSExt(b, q, h->i32, "");
    v = LLVMBuildSIToFP(b, LLVMBuildSub(b, q, hg_c32(h, l->zero_point), ""), h->f32, "");
  } else {
    LLVMValueRef d = LLVMBuildSub(b, LLVMBuildSExt(b, q, h->i64, ""),
                                  LLVMConstInt(h->i64, (unsigned long long)(int64_t)l->zero_point, 1), "");
    LLVMValueRef hi = LLVMBuildTrunc(b, LLVMBuildAShr(b, d, LLVMConstInt(h->i64, 32, 0), ""), h->i32, "");
    LLVMValueRef lo = LLVMBuildTrunc(b, d, h->i32, "");
    LLVMValueRef dd = LLVMBuildFAdd(b, LLVMBuildFMul(b, LLVMBuildSIToFP(b, hi, h->f64, ""), LLVMConstReal(h->f64, 4294967296.0), ""),
                                    LLVMBuildUIToFP(b, lo, h->f64, ""), "");
    v = LLVMBuildFPTrunc(b, dd, h->f32, "");
  }
  return LLVMBuildFMul(b, v, hg_cf(h, l->scale), "");
}

LLVMValueRef hg_read_f32(struct hg *h, const struct hg_layout *l, LLVMValueRef base, LLVMValueRef at) {
  LLVMValueRef v = hg_load(h, l->elem, base, at);
  return l->dtype == LOOM_DT_F32 ? v : dequant(h, l, v);
}

/* loom_quantize1: clamp(rint(x / scale) + zp) to the dtype's range, NaN ->
 * the zero point.  Clamping x / scale to [lo - zp, hi - zp] first is the
 * same (the bounds are integers, rounding is monotonic) and leaves a value
 * small enough for round_even_small. */
static LLVMValueRef quantize(struct hg *h, const struct hg_layout *l, LLVMValueRef x) {
  LLVMBuilderRef b = h->b;
  int32_t lo = l->dtype == LOOM_DT_U8 ? 0 : -128, hi = l->dtype == LOOM_DT_U8 ? 255 : 127;
  int32_t zp = l->zero_point, zq = zp < lo ? lo : zp > hi ? hi : zp;
  LLVMValueRef v = LLVMBuildFDiv(b, x, hg_cf(h, l->scale), "");
  LLVMValueRef c = hg_clampf(h, v, (float)(lo - zp), (float)(hi - zp));
  LLVMValueRef q = LLVMBuildAdd(b, LLVMBuildFPToSI(b, round_even_small(h, c), h->i32, ""), hg_c32(h, zp), "");
  q = LLVMBuildSelect(b, fcmp(h, LLVMRealUNO, v, v), hg_c32(h, zq), q, "");
  return LLVMBuildTrunc(b, q, h->i8, "");
}

void hg_write_f32(struct hg *h, const struct hg_layout *l, LLVMValueRef v, LLVMValueRef base,
                  LLVMValueRef at) {
  hg_store(h, l->dtype == LOOM_DT_F32 ? v : quantize(h, l, v), base, at);
}

LLVMValueRef hg_pad_value(struct hg *h, const struct hg_layout *l) {
  int32_t fill = l->scale != 0 ? l->zero_point : 0;
  if (l->elem == h->f32) return hg_cf(h, 0.0f);
  return LLVMConstInt(l->elem, (unsigned long long)(int64_t)fill, 1);
}
