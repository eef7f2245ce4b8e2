/*
 * ir_print.c - the text form of the IR.
 *
 *   loom.ir 1
 *   input  %x : f32[1,1,8,8]
 *   const  %w : f32[16,1,3,3] = hex "0000803f..."
 *   const  %s : i64[2] = [1, -1]
 *   %y : f32[1,16,8,8] = Conv(%x, %w, _) {group=1, pads=[1,1,1,1]} "conv1"
 *   output %y
 *
 * The printed form is canonical: ir_parse reads it back into the same graph
 * and printing that graph gives the same bytes, so tests can compare text.
 * To make that hold, every choice here is a function of the graph alone:
 * inputs first, then constants in tensor order, then live nodes in order,
 * then outputs; floats use the shortest decimal that reads back to the same
 * float and always carry a '.' or an exponent (so `alpha=1.0` stays a float
 * attribute); constant data is `zeros` or `seq` when it is that pattern, a
 * decimal list when short, else little-endian hex (or `...` with
 * IR_PRINT_ELIDE, which the parser reads as zeros).
 */
#include "sw_compiler/compiler.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LIST_MAX 16

void ir_format_float(float v, char *buf, size_t len) {
  if (isnan(v)) { snprintf(buf, len, "nan"); return; }
  if (isinf(v)) { snprintf(buf, len, v < 0 ? "-inf" : "inf"); return; }
  for (int p = 1; p <= 9; p++) {
    snprintf(buf, len, "%.*g", p, (double)v);
    if (strtof(buf, NULL) == v) break;
  }
  if (!strpbrk(buf, ".e")) strncat(buf, ".0", len - strlen(buf) - 1);
}

static int bare_name_char(int c) {
  return isalnum(c) || c == '_' || c == '.' || c == '/' || c == '-';
}

static void print_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
    else if (c < 0x20 || c >= 0x7f) fprintf(f, "\\x%02x", c);
    else fputc(c, f);
  }
  fputc('"', f);
}

void ir_print_name(FILE *f, const char *name) {
  fputc('%', f);
  int bare = *name != 0;
  for (const char *p = name; *p; p++) bare &= bare_name_char((unsigned char)*p);
  if (bare) fputs(name, f);
  else print_string(f, name);
}

static void print_ref(FILE *f, const struct ir_graph *g, int t) {
  if (t < 0) fputc('_', f);
  else ir_print_name(f, g->tensors[t].name);
}

static void print_float(FILE *f, float v) {
  char buf[48];
  ir_format_float(v, buf, sizeof buf);
  fputs(buf, f);
}

static void print_quant(FILE *f, const struct ir_quant *q) {
  if (q->axis < 0) {
    fputs(" quant(scale=", f);
    print_float(f, q->scale[0]);
    fprintf(f, ", zp=%d)", (int)q->zero_point[0]);
    return;
  }
  fprintf(f, " quant(axis=%d, scale=[", q->axis);
  for (int i = 0; i < q->n; i++) {
    if (i) fputs(", ", f);
    print_float(f, q->scale[i]);
  }
  fputs("], zp=[", f);
  for (int i = 0; i < q->n; i++) fprintf(f, "%s%d", i ? ", " : "", (int)q->zero_point[i]);
  fputs("])", f);
}

void ir_print_type(FILE *f, const struct ir_tensor *t) {
  fputs(ir_dtype_name(t->dtype), f);
  if (t->rank < 0) {
    fputs("[*]", f);
  } else {
    fputc('[', f);
    for (int i = 0; i < t->rank; i++) {
      if (i) fputc(',', f);
      if (t->dims[i] < 0) fputc('?', f);
      else fprintf(f, "%lld", (long long)t->dims[i]);
    }
    fputc(']', f);
  }
  if (t->layout == IR_LAYOUT_NCHWC) fprintf(f, " layout=NCHWc%d", t->layout_block);
  else if (t->layout != IR_LAYOUT_PLAIN) fprintf(f, " layout=%s", ir_layout_name(t->layout));
  if (t->quant.n > 0) print_quant(f, &t->quant);
}

/* " : type", or nothing when neither dtype nor shape is known. */
static void print_decl_type(FILE *f, const struct ir_tensor *t) {
  if (t->dtype == IR_DT_UNDEF && t->rank < 0 && t->layout == IR_LAYOUT_PLAIN && !t->quant.n)
    return;
  fputs(" : ", f);
  ir_print_type(f, t);
}

static void print_element(FILE *f, enum ir_dtype dt, const void *data, int64_t i) {
  if (dt == IR_DT_F64) {
    char buf[40];
    double v = ((const double *)data)[i];
    snprintf(buf, sizeof buf, "%.17g", v);
    fputs(buf, f);
    if (isfinite(v) && !strpbrk(buf, ".e")) fputs(".0", f);
  } else if (ir_dtype_is_float(dt)) {
    print_float(f, (float)ir_load_f64(dt, data, i));
  } else if (dt == IR_DT_U64) {
    fprintf(f, "%llu", (unsigned long long)((const uint64_t *)data)[i]);
  } else {
    fprintf(f, "%lld", (long long)ir_load_i64(dt, data, i));
  }
}

static int all_zero(const unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i]) return 0;
  return 1;
}

static int is_seq(const struct ir_tensor *t, int64_t n) {
  if (n < 2) return 0;
  void *buf = ir_xmalloc(t->nbytes);
  ir_fill_seq(t->dtype, n, buf);
  int same = !memcmp(buf, t->data, t->nbytes);
  free(buf);
  return same;
}

static void print_data(FILE *f, const struct ir_tensor *t, unsigned flags) {
  int64_t n = ir_tensor_numel(t);
  if (all_zero(t->data, t->nbytes)) {
    fputs("zeros", f);
  } else if (is_seq(t, n)) {
    fputs("seq", f);
  } else if (n <= LIST_MAX && !(flags & IR_PRINT_HEX)) {
    fputc('[', f);
    for (int64_t i = 0; i < n; i++) {
      if (i) fputs(", ", f);
      print_element(f, t->dtype, t->data, i);
    }
    fputc(']', f);
  } else if (flags & IR_PRINT_ELIDE) {
    fputs("...", f);
  } else {
    fputs("hex \"", f);
    for (size_t i = 0; i < t->nbytes; i++) fprintf(f, "%02x", ((const unsigned char *)t->data)[i]);
    fputc('"', f);
  }
}

static void print_attr(FILE *f, const struct ir_graph *g, const struct ir_attr *a) {
  fprintf(f, "%s=", a->name);
  switch (a->kind) {
  case IR_ATTR_INT: fprintf(f, "%lld", (long long)a->i); break;
  case IR_ATTR_FLOAT: print_float(f, a->f); break;
  case IR_ATTR_INTS:
    fputc('[', f);
    for (int i = 0; i < a->n; i++) fprintf(f, "%s%lld", i ? "," : "", (long long)a->ints[i]);
    fputc(']', f);
    break;
  case IR_ATTR_FLOATS:
    fputc('[', f);
    for (int i = 0; i < a->n; i++) {
      if (i) fputc(',', f);
      print_float(f, a->floats[i]);
    }
    fputc(']', f);
    break;
  case IR_ATTR_STRING: print_string(f, a->s); break;
  case IR_ATTR_TENSOR: print_ref(f, g, a->tensor); break;
  case IR_ATTR_STRINGS:
    fputs("strings[", f);
    for (int i = 0; i < a->n; i++) {
      if (i) fputc(',', f);
      print_string(f, a->strs[i]);
    }
    fputc(']', f);
    break;
  default: LOOM_ASSERT(0);
  }
}

void ir_print_node(FILE *f, const struct ir_graph *g, const struct ir_node *n) {
  for (int k = 0; k < n->n_out; k++) {
    if (k) fputs(", ", f);
    print_ref(f, g, n->out[k]);
    if (n->out[k] >= 0) print_decl_type(f, &g->tensors[n->out[k]]);
  }
  if (n->op == IR_OP_ONNX) fprintf(f, " = %s@%d(", n->type, n->opset);
  else fprintf(f, " = %s(", ir_op_name(n->op));
  for (int k = 0; k < n->n_in; k++) {
    if (k) fputs(", ", f);
    print_ref(f, g, n->in[k]);
  }
  fputc(')', f);
  if (n->n_attrs) {
    fputs(" {", f);
    for (int k = 0; k < n->n_attrs; k++) {
      if (k) fputs(", ", f);
      print_attr(f, g, &n->attrs[k]);
    }
    fputc('}', f);
  }
  if (n->name) {
    fputc(' ', f);
    print_string(f, n->name);
  }
  fputc('\n', f);
}

void ir_print(const struct ir_graph *g, FILE *f, unsigned flags) {
  fputs("loom.ir 1\n", f);
  for (int i = 0; i < g->n_inputs; i++) {
    fputs("input  ", f);
    print_ref(f, g, g->inputs[i]);
    print_decl_type(f, &g->tensors[g->inputs[i]]);
    fputc('\n', f);
  }
  for (int t = 0; t < g->n_tensors; t++) {
    const struct ir_tensor *x = &g->tensors[t];
    if (!x->data || x->is_input) continue;
    fputs("const  ", f);
    print_ref(f, g, t);
    fputs(" : ", f);
    ir_print_type(f, x);
    fputs(" = ", f);
    print_data(f, x, flags);
    fputc('\n', f);
  }
  for (int i = 0; i < g->n_nodes; i++)
    if (!g->nodes[i].dead) ir_print_node(f, g, &g->nodes[i]);
  for (int i = 0; i < g->n_outputs; i++) {
    fputs("output ", f);
    print_ref(f, g, g->outputs[i]);
    fputc('\n', f);
  }
}

char *ir_print_str(const struct ir_graph *g, unsigned flags) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  LOOM_ASSERT(f);
  ir_print(g, f, flags);
  fclose(f);
  return buf;
}
