/*
 * asm_kernel.c - kernel steps in the assembler and the disassembler
 * (format 1.3, docs/asm.md):
 *
 *   .step kernel Resize opset=11 in=x,-,scales out=y [dynamic]
 *   .attr mode string "linear"
 *   .attr axes ints 0, 1
 *   .attr alpha float 0.2
 *
 * A kernel step names an ONNX op, the opset whose semantics apply, its
 * operands (`-` for an absent optional one) and results, and is followed by
 * its attributes, one `.attr NAME KIND VALUE...` line each, KIND one of int,
 * float, string, ints, floats, strings, tensor.  Layout puts, per kernel
 * step in step order, the tensor list, then each attribute's values, then
 * the attribute records into DATA (after const buffers and host-step
 * parameters) and appends its KERNELS record, so the disassembler's listing
 * re-assembles to the same bytes.  Floats print with 9 significant digits,
 * which read back to the same float.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "asm_internal.h"
#include "kernel.h"

static const char *const kind_names[LOOM_KATTR_KIND_COUNT] = {"int", "float", "string", "ints", "floats", "strings",
                                                              "tensor"};

void asm_kernel_free(struct asm_kernel *k) {
  if (!k) return;
  for (size_t i = 0; i < k->nattrs; i++) {
    struct asm_kattr *x = &k->attrs[i];
    if (x->kind == LOOM_KATTR_STRINGS)
      for (size_t j = 0; j < x->count; j++) free(((char **)x->list.p)[j]);
    free(x->name), free(x->s), free(x->list.p);
  }
  free(k->attrs);
  free(k->io);
  free(k->op);
  free(k);
}

/* ---- .step kernel ---- */

/* A tensor list `T,-,T`: appended to k->io, *n counts it. */
static int tensor_list(struct asm_ctx *a, struct asm_kernel *k, uint32_t *n, int absent_ok) {
  for (;;) {
    struct asm_tok t;
    if (asm_next(a, &t)) return -1;
    if (k->n_in + k->n_out >= LOOM_FILE_KERNEL_MAX_IO)
      return asm_error(a, t.col, "a kernel step takes at most %d tensors", LOOM_FILE_KERNEL_MAX_IO);
    long ti = (t.kind == ASM_TOK_WORD || t.kind == ASM_TOK_STRING) ? FIND(a, tensors, &t) : -1;
    if (t.kind == ASM_TOK_WORD && t.len == 1 && t.text[0] == '-' && absent_ok) ti = LOOM_FILE_NO_BUFFER;
    else if (ti < 0) return asm_error(a, t.col, "tensor '%.*s' is not declared", (int)t.len, t.text);
    uint32_t *io = realloc(k->io, (k->n_in + k->n_out + 1) * sizeof *io);
    if (!io) return asm_nomem(a);
    k->io = io;
    io[k->n_in + k->n_out] = (uint32_t)ti;
    (*n)++;
    if (asm_peek(a, &t)) return -1;
    if (t.kind != ASM_TOK_PUNCT || t.text[0] != ',') return 0;
    asm_next(a, &t);
  }
}

static int kernel_options(struct asm_ctx *a, struct asm_kernel *k) {
  int seen[3] = {0, 0, 0};
  for (;;) {
    struct asm_tok t;
    if (asm_next(a, &t)) return -1;
    if (t.kind == ASM_TOK_END) return 0;
    if (asm_tok_is(&t, "dynamic")) {
      k->flags |= LOOM_FILE_KERNEL_DYNAMIC;
      continue;
    }
    int which = asm_tok_is(&t, "opset") ? 0 : asm_tok_is(&t, "in") ? 1 : asm_tok_is(&t, "out") ? 2 : -1;
    if (which < 0 || !asm_take_eq(a))
      return asm_error(a, t.col, ".step kernel has no option '%.*s' (opset= in= out= dynamic)", (int)t.len, t.text);
    if (seen[which]++) return asm_error(a, t.col, "%.*s= is given twice", (int)t.len, t.text);
    if (which == 1 && k->n_out) return asm_error(a, t.col, "in= must come before out=");
    int64_t v;
    if (which == 0 && asm_read_int(a, 1, UINT32_MAX, "the opset", &v, NULL)) return -1;
    if (which == 0) k->opset = (uint32_t)v;
    if (which == 1 && tensor_list(a, k, &k->n_in, 1)) return -1;
    if (which == 2 && tensor_list(a, k, &k->n_out, 0)) return -1;
  }
}

int asm_step_kernel(struct asm_ctx *a, struct asm_step *s) {
  struct asm_tok t;
  struct asm_kernel *k = calloc(1, sizeof *k);
  if (!k) return asm_nomem(a);
  s->k = k;
  s->s.kind = LOOM_STEP_KERNEL;
  k->opset = 17;
  if (asm_read_name(a, &t, "the ONNX op", &k->op) || kernel_options(a, k)) return -1;
  if (!k->n_out) return asm_error(a, t.col, "kernel step %s has no results (out=)", k->op);
  a->cur_kernel = (long)(a->nsteps - 1);
  return 0;
}

/* ---- .attr ---- */

static int attr_value(struct asm_ctx *a, struct asm_kattr *x, const struct asm_tok *v) {
  int64_t i;
  switch (x->kind) {
  case LOOM_KATTR_INT:
  case LOOM_KATTR_INTS:
    if (asm_int(a, v, INT64_MIN, INT64_MAX, "the value", &i)) return -1;
    if (x->kind == LOOM_KATTR_INT) x->value = (uint64_t)i;
    else if (asm_bytes_put(&x->list, &i, sizeof i)) return asm_nomem(a);
    return 0;
  case LOOM_KATTR_FLOAT:
  case LOOM_KATTR_FLOATS: {
    char buf[64], *end;
    if (v->kind != ASM_TOK_WORD || v->len >= sizeof buf) return asm_error(a, v->col, "expected a number");
    memcpy(buf, v->text, v->len);
    buf[v->len] = 0;
    float f = strtof(buf, &end);
    if (*end) return asm_error(a, v->col, "'%s' is not a number", buf);
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    if (x->kind == LOOM_KATTR_FLOAT) x->value = bits;
    else if (asm_bytes_put(&x->list, &f, sizeof f)) return asm_nomem(a);
    return 0;
  }
  case LOOM_KATTR_STRING:
  case LOOM_KATTR_STRINGS: {
    if (v->kind != ASM_TOK_STRING) return asm_error(a, v->col, "expected a \"string\"");
    char *str = malloc(v->len + 1);
    if (!str) return asm_nomem(a);
    memcpy(str, v->text, v->len);
    str[v->len] = 0;
    if (x->kind == LOOM_KATTR_STRING) return x->s = str, 0;
    if (asm_bytes_put(&x->list, &str, sizeof str)) return free(str), asm_nomem(a);
    return 0;
  }
  case LOOM_KATTR_TENSOR: {
    long ti = (v->kind == ASM_TOK_WORD || v->kind == ASM_TOK_STRING) ? FIND(a, tensors, v) : -1;
    if (ti < 0) return asm_error(a, v->col, "tensor '%.*s' is not declared", (int)v->len, v->text);
    x->value = (uint64_t)ti;
    return 0;
  }
  default: LOOM_ASSERT(0); return -1;
  }
}

/* Values of attribute x: one for a scalar kind, a comma list (possibly
 * empty) for a list kind. */
static int attr_values(struct asm_ctx *a, struct asm_kattr *x, const struct asm_tok *d) {
  int list = x->kind == LOOM_KATTR_INTS || x->kind == LOOM_KATTR_FLOATS || x->kind == LOOM_KATTR_STRINGS;
  struct asm_tok v;
  for (;;) {
    if (asm_next(a, &v)) return -1;
    if (v.kind == ASM_TOK_END && list && !x->count) return 0;
    if (v.kind == ASM_TOK_END) return asm_error(a, v.col, "the attribute needs a value");
    if (x->count >= LOOM_FILE_KATTR_MAX_COUNT) return asm_error(a, v.col, "too many values");
    if (attr_value(a, x, &v)) return -1;
    x->count++;
    if (!list) return asm_expect_end(a);
    if (asm_next(a, &v)) return -1;
    if (v.kind == ASM_TOK_END) break;
    if (v.kind != ASM_TOK_PUNCT || v.text[0] != ',') return asm_error(a, v.col, "expected ',' between values");
  }
  uint64_t es = x->kind == LOOM_KATTR_INTS ? 8 : 4;
  return asm_count_data(a, d, es * x->count);
}

/*   .attr NAME KIND VALUE[, VALUE]...  */
int asm_dir_attr(struct asm_ctx *a, const struct asm_tok *d) {
  if (a->cur_kernel < 0) return asm_error(a, d->col, ".attr outside a kernel step (start one with .step kernel OP)");
  struct asm_kernel *k = a->steps[a->cur_kernel].k;
  if (k->nattrs >= LOOM_FILE_KERNEL_MAX_ATTRS) return asm_error(a, d->col, "too many attributes");
  struct asm_kattr *x = asm_push((void **)&k->attrs, &k->nattrs, &k->cap_attrs, sizeof *k->attrs);
  if (!x) return asm_nomem(a);
  struct asm_tok t;
  int kind;
  if (asm_read_name(a, &t, "an attribute", &x->name)) return -1;
  if (asm_read_keyword(a, kind_names, LOOM_KATTR_KIND_COUNT,
                       "an attribute kind (int, float, string, ints, floats, strings, tensor)", &kind))
    return -1;
  x->kind = (uint32_t)kind;
  return attr_values(a, x, d) || asm_count_data(a, d, 32);
}

/* ---- layout ---- */

static uint64_t data(struct loom_file_builder *b, const void *p, uint64_t n) {
  return loom_fb_data(b, p, n ? n : 1, 8);
}

static void add_kernel(struct loom_file_builder *b, struct asm_step *s) {
  struct asm_kernel *k = s->k;
  struct loom_file_kattr *rec = calloc(k->nattrs + 1, sizeof *rec);
  struct loom_file_kernel r = {.op = loom_fb_string(b, k->op), .opset = k->opset, .n_in = k->n_in,
                               .n_out = k->n_out, .n_attrs = (uint32_t)k->nattrs, .flags = k->flags};
  r.io_offset = data(b, k->io, 4 * (uint64_t)(k->n_in + k->n_out));
  for (size_t i = 0; rec && i < k->nattrs; i++) {
    struct asm_kattr *x = &k->attrs[i];
    rec[i] = (struct loom_file_kattr){.name = loom_fb_string(b, x->name), .kind = x->kind, .count = 1, .value = x->value};
    if (x->kind == LOOM_KATTR_STRING) rec[i].value = x->s[0] ? loom_fb_string(b, x->s) : 0;
    if (x->kind == LOOM_KATTR_INTS || x->kind == LOOM_KATTR_FLOATS) rec[i].value = data(b, x->list.p, x->list.len);
    if (x->kind == LOOM_KATTR_STRINGS) {
      uint32_t *off = calloc(x->count + 1, sizeof *off);
      for (size_t j = 0; off && j < x->count; j++) {
        const char *str = ((char **)x->list.p)[j];
        off[j] = str[0] ? loom_fb_string(b, str) : 0;
      }
      rec[i].value = data(b, off, 4 * (uint64_t)x->count);
      free(off);
    }
    if (x->kind >= LOOM_KATTR_INTS && x->kind <= LOOM_KATTR_STRINGS) rec[i].count = x->count;
  }
  r.attr_offset = data(b, rec, sizeof *rec * (uint64_t)k->nattrs);
  s->s.index = loom_fb_kernel(b, &r);
  free(rec);
}

void asm_add_kernels(struct asm_ctx *a, struct loom_file_builder *b) {
  for (size_t i = 0; i < a->nsteps; i++)
    if (a->steps[i].k) add_kernel(b, &a->steps[i]);
}
