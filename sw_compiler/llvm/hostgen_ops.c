/*
 * hostgen_ops.c - native code for the runtime's host ops (hostops.h), one
 * entry point per HOST step, specialized to that step's tensors.
 *
 * The portable C ops (driver/core/hostops.c) are the reference: each reads
 * its input into a plain float (or raw) array through tensor.c, computes,
 * and writes back through the same conversion.  Here the same arithmetic
 * is fused into one pass over the stored bytes, with every dimension,
 * stride, block size, scale and zero point a constant:
 *
 *   COPY                 raw element moves between any two layouts
 *   QUANTIZE, DEQUANTIZE f32 <-> int8/uint8 (and from int32), any layouts,
 *                        NCHWc / NC packing and unpacking included
 *   SOFTMAX              along one axis: max, sum of exp(x - max), divide;
 *                        input and output may be quantized or blocked
 *   IM2COL               the gather of a folded stem convolution: every
 *                        tap a constant offset, bounds as one unsigned
 *                        compare per axis, padding by select
 *
 * Loops follow the output's stored order (for a blocked output: n, block,
 * spatial, lane), so stores are sequential; padding lanes of a blocked
 * output get the zero point (or 0) as loom_tensor_write writes them.
 * COPY, QUANTIZE, DEQUANTIZE and IM2COL give bit-identical results to the C ops;
 * SOFTMAX differs only through exp (hostgen_build.c), by about 1e-7.
 *
 * hg_op_check refuses (an error) what the portable op would refuse, so a
 * broken model is reported at compile time; it leaves to the portable ops
 * (with a reason) an op it has no builder for, and a step whose input and
 * output share bytes (the C ops go through a temporary, this code does not).
 */
#include "sw_compiler/llvm/hostgen_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "driver/core/hostops.h"
#include "driver/core/hostops_nn.h"

/* The step's tensors in slot order, as host_args() in model.c sees them. */
struct step_tensors {
  const struct loom_file_tensor *in[4], *out[2];
  int n_in, n_out;
};

static void step_tensors(const struct loom_file *f, const struct loom_file_step *s, struct step_tensors *st) {
  memset(st, 0, sizeof *st);
  for (int k = 0; k < 4; k++)
    if (s->inputs[k] != LOOM_FILE_NO_BUFFER) st->in[st->n_in++] = &f->tensors[s->inputs[k]];
  for (int k = 0; k < 2; k++)
    if (s->outputs[k] != LOOM_FILE_NO_BUFFER) st->out[st->n_out++] = &f->tensors[s->outputs[k]];
}

static int32_t softmax_axis(const struct loom_file *f, const struct loom_file_step *s) {
  if (s->param_size < 4) return -1;
  const uint8_t *p = f->data + s->param_offset;
  return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

/* ---- checks ---- */

static int bad(const char *source, uint32_t step, uint32_t op, struct ir_error *err, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int bad(const char *source, uint32_t step, uint32_t op, struct ir_error *err, const char *fmt, ...) {
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  ir_errorf(err, "%s: step %u (host op %s): %s", source, step, loom_hostop_name(op), what);
  return -1;
}

static int quantized_int(const struct loom_file_tensor *t) { return t->scale != 0 && t->dtype != LOOM_DT_F32; }
static int readable_f32(const struct loom_file_tensor *t) { return t->dtype == LOOM_DT_F32 || quantized_int(t); }
static int writable_f32(const struct loom_file_tensor *t) {
  return t->dtype == LOOM_DT_F32 || (t->scale != 0 && (t->dtype == LOOM_DT_I8 || t->dtype == LOOM_DT_U8));
}

static int overlap(const struct loom_file_tensor *a, const struct loom_file_tensor *b) {
  return a->buffer == b->buffer && a->offset < b->offset + b->bytes && b->offset < a->offset + a->bytes;
}

/* IM2COL's parameters and checks, exactly those of hostops_nn.c. */
static loom_status im2col_params(const struct loom_file *f, const struct loom_file_step *s,
                                 const struct step_tensors *t, struct loom_im2col *g, char msg[LOOM_MSG_MAX]) {
  struct loom_hostop_args a = {.n_in = t->n_in, .n_out = t->n_out, .param_size = s->param_size};
  for (int k = 0; k < t->n_in; k++) a.in[k].desc = t->in[k];
  for (int k = 0; k < t->n_out; k++) a.out[k].desc = t->out[k];
  if (s->param_size) a.params = f->data + s->param_offset;
  return loom_hostop_im2col_check(&a, g, msg);
}

/* What hostops.c checks at run time, per op (IM2COL: im2col_params). */
static const char *op_problem(const struct loom_file *f, const struct loom_file_step *s,
                              const struct step_tensors *t) {
  const struct loom_file_tensor *x = t->in[0], *y = t->out[0];
  if (t->n_in != 1 || t->n_out != 1) return "takes 1 input and 1 output";
  if (x->rank != y->rank || memcmp(x->dims, y->dims, x->rank * sizeof x->dims[0])) return "input and output shapes differ";
  switch ((enum loom_hostop_kind)s->index) {
  case LOOM_HOSTOP_COPY: return x->dtype != y->dtype ? "copies between tensors of one dtype only" : NULL;
  case LOOM_HOSTOP_QUANTIZE:
    if (y->scale == 0 || (y->dtype != LOOM_DT_I8 && y->dtype != LOOM_DT_U8))
      return "output must be a quantized int8 or uint8 tensor";
    return readable_f32(x) ? NULL : "the input cannot be read as float32 (not quantized)";
  case LOOM_HOSTOP_DEQUANTIZE:
    return x->scale == 0 || y->dtype != LOOM_DT_F32 ? "needs a quantized input and a float32 output" : NULL;
  case LOOM_HOSTOP_SOFTMAX: {
    int32_t axis = softmax_axis(f, s);
    if (axis < -(int32_t)x->rank || axis >= (int32_t)x->rank) return "the axis is out of range";
    if (!readable_f32(x)) return "the input cannot be read as float32 (not quantized)";
    return writable_f32(y) ? NULL : "the output cannot be written from float32";
  }
  default: return NULL;
  }
}

int hg_op_check(const struct loom_file *f, uint32_t step, const char *source, const char **skip,
                struct ir_error *err) {
  const struct loom_file_step *s = &f->steps[step];
  struct step_tensors t;
  *skip = NULL;
  switch ((enum loom_hostop_kind)s->index) {
  case LOOM_HOSTOP_COPY: case LOOM_HOSTOP_QUANTIZE: case LOOM_HOSTOP_DEQUANTIZE: case LOOM_HOSTOP_SOFTMAX:
  case LOOM_HOSTOP_IM2COL: break;
  case LOOM_HOSTOP_NATIVE:
    return bad(source, step, s->index, err, "the file's native code is replaced: rebuild the model from its source");
  case LOOM_HOSTOP_COUNT: default: *skip = "no LLVM builder for this op"; return 0;
  }
  step_tensors(f, s, &t);
  char msg[LOOM_MSG_MAX];
  struct loom_im2col g;
  const char *why = s->index != LOOM_HOSTOP_IM2COL ? op_problem(f, s, &t)
                    : im2col_params(f, s, &t, &g, msg) != LOOM_OK ? msg : NULL;
  if (why) return bad(source, step, s->index, err, "%s", why);
  if (overlap(t.in[0], t.out[0])) *skip = "input and output share bytes";
  return 0;
}

/* ---- building ---- */

/* Logical index of the current element, filled as loops open. */
struct cursor {
  LLVMValueRef idx[LOOM_MAX_RANK];
  struct hg_loop loops[LOOM_MAX_RANK + 1];
  int n_loops;
};

static LLVMValueRef open_loop(struct hg *h, struct cursor *c, int64_t n) {
  return hg_for_begin(h, &c->loops[c->n_loops++], n);
}

static void close_loops(struct hg *h, struct cursor *c) {
  while (c->n_loops) hg_for_end(h, &c->loops[--c->n_loops]);
}

/* One element: COPY moves raw bits, the others convert through f32. */
static void move_element(struct hg *h, uint32_t op, const struct hg_layout *lx, LLVMValueRef x,
                         const struct hg_layout *ly, LLVMValueRef y, LLVMValueRef *idx, LLVMValueRef yat) {
  LLVMValueRef xat = hg_layout_index(h, lx, idx);
  if (op == LOOM_HOSTOP_COPY) {
    LLVMTypeRef raw = lx->elem == h->i8 ? h->i8 : h->i32;
    hg_store(h, hg_load(h, raw, x, xat), y, yat);
  } else {
    hg_write_f32(h, ly, hg_read_f32(h, lx, x, xat), y, yat);
  }
}

static LLVMValueRef raw_pad(struct hg *h, const struct hg_layout *l) {
  LLVMValueRef v = hg_pad_value(h, l);
  return l->elem == h->f32 ? LLVMConstInt(h->i32, 0, 0) : v;
}

/* Output blocked: n, block, spatial..., lane; lanes past C get the pad. */
static void elementwise_blocked(struct hg *h, uint32_t op, const struct hg_layout *lx, LLVMValueRef x,
                                const struct hg_layout *ly, LLVMValueRef y) {
  struct cursor c = {0};
  c.idx[0] = open_loop(h, &c, ly->dims[0]);
  LLVMValueRef cb = open_loop(h, &c, ly->nblocks), s = hg_cx(h, 0);
  for (int i = 2; i < ly->rank; i++) s = hg_muladd(h, s, ly->dims[i], c.idx[i] = open_loop(h, &c, ly->dims[i]));
  LLVMValueRef ci = open_loop(h, &c, ly->block);
  c.idx[1] = hg_muladd(h, cb, ly->block, ci);
  LLVMValueRef yat = hg_muladd(h, hg_muladd(h, hg_muladd(h, c.idx[0], ly->nblocks, cb), ly->inner, s), ly->block, ci);
  if (ly->dims[1] % ly->block == 0) {
    move_element(h, op, lx, x, ly, y, c.idx, yat);
  } else {
    struct hg_if branch;
    hg_if_begin(h, &branch, LLVMBuildICmp(h->b, LLVMIntULT, c.idx[1], hg_cx(h, ly->dims[1]), ""));
    move_element(h, op, lx, x, ly, y, c.idx, yat);
    hg_else(h, &branch);
    hg_store(h, op == LOOM_HOSTOP_COPY ? raw_pad(h, ly) : hg_pad_value(h, ly), y, yat);
    hg_endif(h, &branch);
  }
  close_loops(h, &c);
}

/* Output plain: the logical order (one flat loop when both are plain). */
static void elementwise_plain(struct hg *h, uint32_t op, const struct hg_layout *lx, LLVMValueRef x,
                              const struct hg_layout *ly, LLVMValueRef y) {
  struct cursor c = {0};
  if (!lx->blocked || ly->rank == 0) {
    int64_t n = 1;
    for (int i = 0; i < ly->rank; i++) n *= ly->dims[i];
    struct hg_layout flat = *lx;
    flat.rank = 1, flat.dims[0] = n, flat.blocked = 0;
    c.idx[0] = open_loop(h, &c, n);
    move_element(h, op, &flat, x, ly, y, c.idx, c.idx[0]);
  } else {
    for (int i = 0; i < ly->rank; i++) c.idx[i] = open_loop(h, &c, ly->dims[i]);
    move_element(h, op, lx, x, ly, y, c.idx, hg_layout_index(h, ly, c.idx));
  }
  close_loops(h, &c);
}

/* Lanes past C of the last block of a blocked output: the pad value. */
static void fill_padding(struct hg *h, const struct hg_layout *l, LLVMValueRef y) {
  if (!l->blocked || l->dims[1] % l->block == 0) return;
  int64_t used = l->dims[1] % l->block;
  struct cursor c = {0};
  LLVMValueRef n = open_loop(h, &c, l->dims[0]), s = open_loop(h, &c, l->inner);
  LLVMValueRef lane = hg_add(h, open_loop(h, &c, l->block - used), hg_cx(h, used));
  LLVMValueRef at = hg_muladd(h, hg_muladd(h, hg_muladd(h, n, l->nblocks, hg_cx(h, l->nblocks - 1)), l->inner, s), l->block, lane);
  hg_store(h, hg_pad_value(h, l), y, at);
  close_loops(h, &c);
}

/* A stack slot in the entry block (SROA turns it into registers). */
static LLVMValueRef entry_slot(struct hg *h, LLVMTypeRef t, LLVMValueRef init) {
  LLVMBuilderRef b = LLVMCreateBuilderInContext(h->ctx);
  LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(h->fn);
  LLVMValueRef first = LLVMGetFirstInstruction(entry);
  if (first) LLVMPositionBuilderBefore(b, first);
  else LLVMPositionBuilderAtEnd(b, entry);
  LLVMValueRef slot = LLVMBuildAlloca(b, t, "");
  LLVMDisposeBuilder(b);
  LLVMBuildStore(h->b, init, slot);
  return slot;
}

/* x[..., a, ...] - max, read as f32, for the axis index a. */
static LLVMValueRef shifted(struct hg *h, const struct hg_layout *lx, LLVMValueRef x, LLVMValueRef *idx,
                            int axis, LLVMValueRef a, LLVMValueRef max) {
  idx[axis] = a;
  return LLVMBuildFSub(h->b, hg_read_f32(h, lx, x, hg_layout_index(h, lx, idx)), max, "");
}

/* One softmax row, as softmax_row() in hostops.c: max from x[0] with
 * fmaxf, sum of exp(x - max) in order, each exp divided by the sum.  An
 * f32 output keeps the exps between the passes; a quantized one has them
 * recomputed (the same values). */
static void softmax_row(struct hg *h, const struct hg_layout *lx, LLVMValueRef x, const struct hg_layout *ly,
                        LLVMValueRef y, LLVMValueRef *idx, int axis) {
  int64_t len = lx->dims[axis];
  struct hg_loop l;
  idx[axis] = hg_cx(h, 0);
  LLVMValueRef maxp = entry_slot(h, h->f32, hg_read_f32(h, lx, x, hg_layout_index(h, lx, idx)));
  if (len > 1) {
    LLVMValueRef a = hg_add(h, hg_for_begin(h, &l, len - 1), hg_cx(h, 1));
    idx[axis] = a;
    LLVMValueRef v = hg_read_f32(h, lx, x, hg_layout_index(h, lx, idx));
    LLVMBuildStore(h->b, hg_fmax(h, LLVMBuildLoad2(h->b, h->f32, maxp, ""), v), maxp);
    hg_for_end(h, &l);
  }
  LLVMValueRef max = LLVMBuildLoad2(h->b, h->f32, maxp, "max");
  LLVMValueRef sump = entry_slot(h, h->f32, hg_cf(h, 0.0f));
  LLVMValueRef a = hg_for_begin(h, &l, len), e;
  if (ly->dtype == LOOM_DT_F32) {
    /* the exps first (a loop LLVM vectorizes), then their sum in order */
    LLVMValueRef v = hg_expf(h, shifted(h, lx, x, idx, axis, a, max)); /* sets idx[axis] */
    hg_store(h, v, y, hg_layout_index(h, ly, idx));
    hg_for_end(h, &l);
    idx[axis] = hg_for_begin(h, &l, len);
    e = hg_load(h, h->f32, y, hg_layout_index(h, ly, idx));
  } else {
    e = hg_expf(h, shifted(h, lx, x, idx, axis, a, max));
  }
  LLVMBuildStore(h->b, LLVMBuildFAdd(h->b, LLVMBuildLoad2(h->b, h->f32, sump, ""), e, ""), sump);
  hg_for_end(h, &l);
  LLVMValueRef sum = LLVMBuildLoad2(h->b, h->f32, sump, "sum");
  a = hg_for_begin(h, &l, len);
  idx[axis] = a;
  LLVMValueRef yat = hg_layout_index(h, ly, idx);
  e = ly->dtype == LOOM_DT_F32 ? hg_load(h, h->f32, y, yat) : hg_expf(h, shifted(h, lx, x, idx, axis, a, max));
  hg_write_f32(h, ly, LLVMBuildFDiv(h->b, e, sum, ""), y, yat);
  hg_for_end(h, &l);
}

static void softmax(struct hg *h, const struct loom_file *f, const struct loom_file_step *s,
                    const struct hg_layout *lx, LLVMValueRef x, const struct hg_layout *ly, LLVMValueRef y) {
  int32_t axis = softmax_axis(f, s);
  if (axis < 0) axis += lx->rank;
  struct cursor c = {0};
  for (int i = 0; i < lx->rank; i++)
    if (i != axis) c.idx[i] = open_loop(h, &c, lx->dims[i]);
  softmax_row(h, lx, x, ly, y, c.idx, axis);
  close_loops(h, &c);
  fill_padding(h, ly, y);
}

/* Output (n, (ky * k_w + kx) * C + c, oy, ox) = input (n, c, iy, ix) with
 * iy = oy * stride_h - pad_t + ky * dil_h (ix likewise), or the pad value
 * outside the image.  The out-of-image test is one unsigned compare per
 * axis; the load reads a clamped index, so no branch is needed.  `ky`,
 * `kx` and `ch` are loop variables or constants. */
static LLVMValueRef im2col_tap(struct hg *h, const struct loom_im2col *g, const struct hg_layout *lx, LLVMValueRef x,
                               LLVMValueRef n, LLVMValueRef ky, LLVMValueRef kx, LLVMValueRef ch, LLVMValueRef oy,
                               LLVMValueRef ox) {
  const int32_t *v = g->v;
  LLVMValueRef iy = hg_add(h, hg_mul(h, oy, hg_cx(h, v[LOOM_IM2COL_STRIDE_H])),
                           hg_add(h, hg_mul(h, ky, hg_cx(h, v[LOOM_IM2COL_DIL_H])), hg_cx(h, -v[LOOM_IM2COL_PAD_T])));
  LLVMValueRef ix = hg_add(h, hg_mul(h, ox, hg_cx(h, v[LOOM_IM2COL_STRIDE_W])),
                           hg_add(h, hg_mul(h, kx, hg_cx(h, v[LOOM_IM2COL_DIL_W])), hg_cx(h, -v[LOOM_IM2COL_PAD_L])));
  LLVMValueRef inside = LLVMBuildAnd(h->b, LLVMBuildICmp(h->b, LLVMIntULT, iy, hg_cx(h, g->h), ""),
                                     LLVMBuildICmp(h->b, LLVMIntULT, ix, hg_cx(h, g->w), ""), "inside");
  LLVMValueRef zero = hg_cx(h, 0);
  LLVMValueRef xi[4] = {n, ch, LLVMBuildSelect(h->b, inside, iy, zero, ""), LLVMBuildSelect(h->b, inside, ix, zero, "")};
  LLVMValueRef got = hg_load(h, h->i8, x, hg_layout_index(h, lx, xi));
  LLVMValueRef pad = LLVMConstInt(h->i8, (uint64_t)(int64_t)v[LOOM_IM2COL_PAD_VALUE], 1);
  return LLVMBuildSelect(h->b, inside, got, pad, "");
}

/* Widest blocked output whose channels are unrolled per pixel. */
#define IM2COL_UNROLL_MAX 1024

static void im2col(struct hg *h, const struct loom_im2col *g, const struct hg_layout *lx, LLVMValueRef x,
                   const struct hg_layout *ly, LLVMValueRef y) {
  const int32_t *v = g->v;
  struct cursor c = {0};
  LLVMValueRef n = open_loop(h, &c, g->n);
  if (ly->blocked && ly->nblocks * ly->block <= IM2COL_UNROLL_MAX) {
    /* pixel by pixel, every channel a constant tap: one sequential write
     * stream per block of the output, padding lanes included */
    LLVMValueRef oy = open_loop(h, &c, v[LOOM_IM2COL_OUT_H]), ox = open_loop(h, &c, v[LOOM_IM2COL_OUT_W]);
    LLVMValueRef pixel = hg_muladd(h, oy, v[LOOM_IM2COL_OUT_W], ox);
    for (int64_t cc = 0; cc < ly->nblocks * ly->block; cc++) {
      int64_t cb = cc / ly->block, lane = cc % ly->block, tap = cc / g->c;
      LLVMValueRef plane = hg_add(h, hg_mul(h, n, hg_cx(h, ly->nblocks)), hg_cx(h, cb));
      LLVMValueRef yat = hg_add(h, hg_mul(h, hg_muladd(h, plane, ly->inner, pixel), hg_cx(h, ly->block)), hg_cx(h, lane));
      LLVMValueRef val = cc < ly->dims[1] ? im2col_tap(h, g, lx, x, n, hg_cx(h, tap / v[LOOM_IM2COL_K_W]),
                                                      hg_cx(h, tap % v[LOOM_IM2COL_K_W]), hg_cx(h, cc % g->c), oy, ox)
                                          : hg_pad_value(h, ly); /* lanes past C */
      hg_store(h, val, y, yat);
    }
    close_loops(h, &c);
    return;
  }
  /* tap by tap: a plain output's stored order */
  LLVMValueRef ky = open_loop(h, &c, v[LOOM_IM2COL_K_H]), kx = open_loop(h, &c, v[LOOM_IM2COL_K_W]);
  LLVMValueRef ch = open_loop(h, &c, g->c);
  LLVMValueRef oy = open_loop(h, &c, v[LOOM_IM2COL_OUT_H]), ox = open_loop(h, &c, v[LOOM_IM2COL_OUT_W]);
  LLVMValueRef yi[4] = {n, hg_muladd(h, hg_muladd(h, ky, v[LOOM_IM2COL_K_W], kx), g->c, ch), oy, ox};
  hg_store(h, im2col_tap(h, g, lx, x, n, ky, kx, ch, oy, ox), y, hg_layout_index(h, ly, yi));
  close_loops(h, &c);
  fill_padding(h, ly, y);
}

void hg_op_build(struct hg *h, const struct loom_file *f, uint32_t step, const char *symbol) {
  const struct loom_file_step *s = &f->steps[step];
  struct step_tensors t;
  struct hg_layout lx, ly;
  step_tensors(f, s, &t);
  hg_layout_of(h, t.in[0], &lx);
  hg_layout_of(h, t.out[0], &ly);
  hg_entry_begin(h, symbol);
  LLVMValueRef x = hg_entry_ptr(h, 0, 0), y = hg_entry_ptr(h, 1, 0);
  if (s->index == LOOM_HOSTOP_IM2COL) {
    struct loom_im2col g;
    char msg[LOOM_MSG_MAX];
    loom_status ok = im2col_params(f, s, &t, &g, msg);
    LOOM_ASSERT(ok == LOOM_OK); /* hg_op_check passed */
    im2col(h, &g, &lx, x, &ly, y);
  } else if (s->index == LOOM_HOSTOP_SOFTMAX) softmax(h, f, s, &lx, x, &ly, y);
  else if (ly.blocked) elementwise_blocked(h, s->index, &lx, x, &ly, y);
  else elementwise_plain(h, s->index, &lx, x, &ly, y);
  hg_entry_end(h);
}
