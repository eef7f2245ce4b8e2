/*
 * ir_parse.c - reads the text form of the IR (see ir_print.c for the form).
 *
 * Grammar (newlines are plain whitespace; `#` starts a comment):
 *
 *   file      = "loom.ir" "1" stmt*
 *   stmt      = "input" ref [":" type]
 *             | "const" ref ":" type "=" data
 *             | "output" ref
 *             | decl ("," decl)* "=" op "(" [arg ("," arg)*] ")" ["{" attrs "}"] [STRING]
 *   op        = OP | TYPE "@" INT              (a generic ONNX op at an opset)
 *   decl      = ref [":" type]
 *   arg       = ref | "_"                      (absent optional operand)
 *   type      = DTYPE "[" ("*" | [dim ("," dim)*]) "]" ["layout=" LAYOUT] [quant]
 *   dim       = INT | "?"
 *   quant     = "quant" "(" ["axis=" INT ","] "scale=" num-or-list "," "zp=" int-or-list ")"
 *   data      = "[" num ("," num)* "]" | "zeros" | "seq" | "rand" "(" INT ")"
 *             | "hex" STRING | "..."
 *   attrs     = NAME "=" (INT | FLOAT | "[" nums "]" | STRING | "strings" "[" STRING,* "]"
 *                        | ref) ("," ...)*
 *   ref       = "%" NAME | "%" STRING
 *
 * The parser builds through the same builder API as every other producer of
 * IR, so what it accepts is exactly what the builder can express; the only
 * checks made here are syntactic plus "defined before use" (names must
 * resolve) and sizes; ir_verify does the semantic checks.  Errors read
 * "source: line N: what is wrong".  `zeros`, `seq` and `rand(seed)` exist
 * so tests can declare constants without spelling out their data.
 */
#include "sw_compiler/ir_parse.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- types ---- */

static int parse_dims(struct parser *ps, struct ptype *ty) {
  if (ip_expect(ps, '[')) return -1;
  ty->rank = 0;
  if (ip_accept(ps, '*')) { ty->rank = -1; return ip_expect(ps, ']'); }
  while (!ip_is_punct(ps, ']') && !ps->failed) {
    if (ty->rank && ip_expect(ps, ',')) return -1;
    if (ty->rank == IR_MAX_RANK) { ip_perr(ps, "rank above %d", IR_MAX_RANK); return -1; }
    int64_t d = -1;
    if (ip_accept(ps, '?')) d = -1;
    else if (ip_parse_int(ps, &d)) return -1;
    else if (d < 0 || d > IR_MAX_DIM) { ip_perr(ps, "dim %lld out of range", (long long)d); return -1; }
    ty->dims[ty->rank++] = d;
  }
  return ip_expect(ps, ']');
}

static int parse_layout(struct parser *ps, struct ptype *ty) {
  ip_next(ps); /* layout */
  if (ip_expect(ps, '=')) return -1;
  const char *s = ps->tok.kind == TK_IDENT ? ps->tok.text : "";
  if (!strncmp(s, "NCHWc", 5) && isdigit((unsigned char)s[5])) {
    ty->layout = IR_LAYOUT_NCHWC;
    char *end;
    long k = strtol(s + 5, &end, 10);
    if (*end || k <= 0 || k > 4096) { ip_perr(ps, "bad layout block in '%s'", s); return -1; }
    ty->block = (int)k;
  } else {
    int l = -1;
    for (int i = 1; i < IR_LAYOUT_COUNT; i++)
      if (i != IR_LAYOUT_NCHWC && !strcmp(s, ir_layout_name(i))) l = i;
    if (l < 0) { ip_perr(ps, "unknown layout '%s'", ip_tok_desc(ps)); return -1; }
    ty->layout = l;
  }
  ip_next(ps);
  return 0;
}

/* One float, or a list of floats (is_list set). */
static int parse_float_list(struct parser *ps, float **out, int *n) {
  int list = ip_accept(ps, '[');
  *n = 0;
  do {
    *out = ir_xrealloc(*out, (size_t)(*n + 1) * sizeof **out);
    if (ip_parse_float(ps, &(*out)[(*n)++])) return -1;
  } while (list && ip_accept(ps, ','));
  return list ? ip_expect(ps, ']') : 0;
}

static int parse_zp_list(struct parser *ps, int32_t **out, int *n) {
  int list = ip_accept(ps, '[');
  *n = 0;
  do {
    int64_t v;
    if (ip_parse_int(ps, &v)) return -1;
    if (v < INT32_MIN || v > INT32_MAX) { ip_perr(ps, "zero point out of range"); return -1; }
    *out = ir_xrealloc(*out, (size_t)(*n + 1) * sizeof **out);
    (*out)[(*n)++] = (int32_t)v;
  } while (list && ip_accept(ps, ','));
  return list ? ip_expect(ps, ']') : 0;
}

static int expect_key(struct parser *ps, const char *key) {
  if (!ip_is_ident(ps, key)) { ip_perr(ps, "expected '%s=', found '%s'", key, ip_tok_desc(ps)); return -1; }
  ip_next(ps);
  return ip_expect(ps, '=');
}

static int parse_quant(struct parser *ps, struct ptype *ty) {
  ip_next(ps); /* quant */
  if (ip_expect(ps, '(')) return -1;
  int64_t axis = -1;
  if (ip_is_ident(ps, "axis")) {
    if (expect_key(ps, "axis") || ip_parse_int(ps, &axis) || ip_expect(ps, ',')) return -1;
    if (axis < 0 || axis >= IR_MAX_RANK) { ip_perr(ps, "quant axis out of range"); return -1; }
  }
  int nz = 0;
  if (expect_key(ps, "scale") || parse_float_list(ps, &ty->qscale, &ty->qn)) return -1;
  if (ip_expect(ps, ',') || expect_key(ps, "zp") || parse_zp_list(ps, &ty->qzp, &nz)) return -1;
  if (nz != ty->qn || (axis < 0 && ty->qn != 1)) {
    ip_perr(ps, "quant: %d scales and %d zero points%s", ty->qn, nz, axis < 0 ? " without an axis" : "");
    return -1;
  }
  ty->qaxis = (int)axis;
  return ip_expect(ps, ')');
}

static int parse_type(struct parser *ps, struct ptype *ty) {
  const char *dt = ps->tok.kind == TK_IDENT ? ps->tok.text : ip_is_punct(ps, '?') ? "?" : "";
  int d = ir_dtype_from_name(dt);
  if (d < 0) { ip_perr(ps, "unknown dtype '%s'", ip_tok_desc(ps)); return -1; }
  ty->present = 1;
  ty->dtype = d;
  ip_next(ps);
  if (parse_dims(ps, ty)) return -1;
  if (ip_is_ident(ps, "layout") && parse_layout(ps, ty)) return -1;
  if (ip_is_ident(ps, "quant") && parse_quant(ps, ty)) return -1;
  if (ty->qn && ty->qaxis >= 0 && ty->rank >= 0 && ty->qaxis >= ty->rank) {
    ip_perr(ps, "quant axis %d out of range for rank %d", ty->qaxis, ty->rank);
    return -1;
  }
  return 0;
}

static void ptype_free(struct ptype *ty) {
  free(ty->qscale);
  free(ty->qzp);
}

/* Creates the tensor `name` with type ty (kind: 'i'nput, 'c'onst, 'v'alue). */
static int make_tensor(struct parser *ps, const char *name, const struct ptype *ty, int kind) {
  if (ir_tensor_find(ps->g, name) >= 0) { ip_perr(ps, "redefinition of %%%s", name); return -1; }
  enum ir_dtype dt = ty->present ? ty->dtype : IR_DT_UNDEF;
  int rank = ty->present ? ty->rank : -1;
  int t;
  if (kind == 'i') t = ir_input_add(ps->g, name, dt, rank, ty->dims);
  else t = ir_tensor_add(ps->g, name, dt, rank, ty->dims);
  struct ir_tensor *x = &ps->g->tensors[t];
  x->layout = ty->layout;
  x->layout_block = ty->block;
  if (ty->qn) ir_quant_set(ps->g, t, ty->qaxis, ty->qn, ty->qscale, ty->qzp);
  return t;
}

/* ---- constant data ---- */

static int store_number(struct parser *ps, enum ir_dtype dt, void *buf, int64_t i) {
  if (dt == IR_DT_F32) return ip_parse_float(ps, &((float *)buf)[i]);
  if (ir_dtype_is_float(dt)) {
    char *end;
    if (!ip_num_token(ps)) { ip_perr(ps, "expected a number, found '%s'", ip_tok_desc(ps)); return -1; }
    double d = strtod(ps->tok.text, &end);
    if (*end) { ip_perr(ps, "bad number '%s'", ps->tok.text); return -1; }
    ir_store_f64(dt, buf, i, d);
    ip_next(ps);
    return 0;
  }
  int64_t v;
  if (ip_parse_int(ps, &v)) return -1;
  /* u32 and u64 constants above INT64_MAX are written in hex data */
  static const int64_t lo[] = {0, 0, INT8_MIN, 0, INT32_MIN, INT64_MIN, 0, INT16_MIN, 0, 0, 0, 0, 0, 0};
  static const int64_t hi[] = {0, 0, INT8_MAX, UINT8_MAX, INT32_MAX, INT64_MAX, 1, INT16_MAX, UINT16_MAX,
                               UINT32_MAX, INT64_MAX, 0, 0, 0};
  _Static_assert(sizeof lo / sizeof lo[0] == IR_DT_COUNT, "range table");
  _Static_assert(sizeof hi / sizeof hi[0] == IR_DT_COUNT, "range table");
  if (v < lo[dt] || v > hi[dt]) { ip_perr(ps, "%lld does not fit %s", (long long)v, ir_dtype_name(dt)); return -1; }
  ir_store_i64(dt, buf, i, v);
  return 0;
}

static int parse_list_data(struct parser *ps, enum ir_dtype dt, int64_t n, void *buf) {
  ip_next(ps); /* [ */
  int64_t i = 0;
  while (!ip_is_punct(ps, ']') && !ps->failed) {
    if (i && ip_expect(ps, ',')) return -1;
    if (i == n) { ip_perr(ps, "more than %lld values", (long long)n); return -1; }
    if (store_number(ps, dt, buf, i++)) return -1;
  }
  if (i != n) { ip_perr(ps, "%lld values for %lld elements", (long long)i, (long long)n); return -1; }
  return ip_expect(ps, ']');
}

static void fill_rand(enum ir_dtype dt, int64_t n, uint64_t seed, void *buf) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int64_t i = 0; i < n; i++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    uint32_t r = (uint32_t)(x >> 32);
    switch (dt) {
    case IR_DT_F32: ((float *)buf)[i] = (float)(r >> 8) / 8388608.0f - 1.0f; break;
    case IR_DT_I8: ((int8_t *)buf)[i] = (int8_t)((int)(r >> 24) - 128); break;
    case IR_DT_U8: ((uint8_t *)buf)[i] = (uint8_t)(r >> 24); break;
    case IR_DT_I32: ((int32_t *)buf)[i] = (int32_t)(r >> 20) - 2048; break;
    default: ((int64_t *)buf)[i] = (int64_t)(r >> 20) - 2048; break;
    }
  }
}

static int parse_hex_data(struct parser *ps, size_t nbytes, void *buf) {
  ip_next(ps); /* hex */
  if (ps->tok.kind != TK_STR) { ip_perr(ps, "expected a hex string"); return -1; }
  const char *s = ps->tok.text;
  if (strlen(s) != 2 * nbytes) {
    ip_perr(ps, "hex data has %zu digits, expected %zu", strlen(s), 2 * nbytes);
    return -1;
  }
  for (size_t i = 0; i < nbytes; i++) {
    int h = ip_hexval((unsigned char)s[2 * i]), l = ip_hexval((unsigned char)s[2 * i + 1]);
    if (h < 0 || l < 0) { ip_perr(ps, "bad hex digit"); return -1; }
    ((unsigned char *)buf)[i] = (unsigned char)(h * 16 + l);
  }
  ip_next(ps);
  return 0;
}

static int parse_data(struct parser *ps, const struct ir_tensor *t, void *buf, size_t nbytes) {
  int64_t n = ir_tensor_numel(t);
  if (ip_is_punct(ps, '[')) return parse_list_data(ps, t->dtype, n, buf);
  if (ip_is_ident(ps, "hex")) return parse_hex_data(ps, nbytes, buf);
  if (ps->tok.kind == TK_ELLIPSIS || ip_is_ident(ps, "zeros")) { ip_next(ps); return 0; }
  if (ip_is_ident(ps, "seq")) { ir_fill_seq(t->dtype, n, buf); ip_next(ps); return 0; }
  if (ip_is_ident(ps, "rand")) {
    int64_t seed;
    ip_next(ps);
    if (ip_expect(ps, '(') || ip_parse_int(ps, &seed) || ip_expect(ps, ')')) return -1;
    fill_rand(t->dtype, n, (uint64_t)seed, buf);
    return 0;
  }
  ip_perr(ps, "expected constant data, found '%s'", ip_tok_desc(ps));
  return -1;
}

/* ---- statements ---- */

static char *take_name(struct parser *ps) {
  if (ps->tok.kind != TK_NAME) { ip_perr(ps, "expected a %%name, found '%s'", ip_tok_desc(ps)); return NULL; }
  char *s = ps->tok.text;
  ps->tok.text = NULL;
  ip_next(ps);
  return s;
}

static int lookup(struct parser *ps, const char *name) {
  int t = ir_tensor_find(ps->g, name);
  if (t < 0) ip_perr(ps, "use of undefined %%%s", name);
  return t;
}

static int parse_input(struct parser *ps) {
  ip_next(ps);
  struct ptype ty = {0};
  char *name = take_name(ps);
  int rc = -1;
  if (name && (!ip_accept(ps, ':') || !parse_type(ps, &ty))) rc = make_tensor(ps, name, &ty, 'i') < 0 ? -1 : 0;
  free(name);
  ptype_free(&ty);
  return ps->failed ? -1 : rc;
}

static int parse_const(struct parser *ps) {
  ip_next(ps);
  struct ptype ty = {0};
  char *name = take_name(ps);
  int rc = -1;
  if (name && !ip_expect(ps, ':') && !parse_type(ps, &ty) && !ip_expect(ps, '=')) {
    int64_t bytes = ir_numel_checked(ty.rank, ty.dims) < 0 || ty.dtype == IR_DT_UNDEF ? -1 : 0;
    int t = bytes < 0 ? -1 : make_tensor(ps, name, &ty, 'c');
    if (t >= 0 && (bytes = ir_tensor_bytes(&ps->g->tensors[t])) < 0) t = -1;
    if (t < 0) ip_perr(ps, "constant %%%s needs a known dtype and shape of at most 4 GiB", name);
    if (t >= 0) {
      void *buf = ir_xcalloc(1, (size_t)bytes);
      rc = parse_data(ps, &ps->g->tensors[t], buf, (size_t)bytes);
      ps->g->tensors[t].data = buf;
      ps->g->tensors[t].nbytes = (size_t)bytes;
    }
  }
  free(name);
  ptype_free(&ty);
  return ps->failed ? -1 : rc;
}

static int parse_output(struct parser *ps) {
  ip_next(ps);
  char *name = take_name(ps);
  int t = name ? lookup(ps, name) : -1;
  if (t >= 0) ir_output_add(ps->g, t);
  free(name);
  return t < 0 ? -1 : 0;
}

#define MAX_RESULTS 64

struct pnode {
  int n_out;
  char *names[MAX_RESULTS];
  struct ptype types[MAX_RESULTS];
  int n_in, cap_in;
  int *in;
};

static void pnode_free(struct pnode *pn) {
  for (int i = 0; i < pn->n_out; i++) {
    free(pn->names[i]);
    ptype_free(&pn->types[i]);
  }
  free(pn->in);
}

static int parse_decls(struct parser *ps, struct pnode *pn) {
  do {
    if (pn->n_out == MAX_RESULTS) { ip_perr(ps, "too many results"); return -1; }
    int k = pn->n_out;
    pn->names[k] = take_name(ps);
    if (!pn->names[k]) return -1;
    pn->n_out++;
    if (ip_accept(ps, ':') && parse_type(ps, &pn->types[k])) return -1;
  } while (ip_accept(ps, ','));
  return ip_expect(ps, '=');
}

static int parse_args(struct parser *ps, struct pnode *pn) {
  if (ip_expect(ps, '(')) return -1;
  while (!ip_is_punct(ps, ')') && !ps->failed) {
    if (pn->n_in && ip_expect(ps, ',')) return -1;
    if (pn->n_in == pn->cap_in) {
      pn->cap_in = pn->cap_in ? 2 * pn->cap_in : 8;
      pn->in = ir_xrealloc(pn->in, (size_t)pn->cap_in * sizeof(int));
    }
    if (ip_is_ident(ps, "_")) {
      pn->in[pn->n_in++] = -1;
      ip_next(ps);
      continue;
    }
    char *name = take_name(ps);
    int t = name ? lookup(ps, name) : -1;
    free(name);
    if (t < 0) return -1;
    pn->in[pn->n_in++] = t;
  }
  return ip_expect(ps, ')');
}

static int parse_attr_list(struct parser *ps, int node, const char *aname) {
  ip_next(ps); /* [ */
  int n = 0, floats = 0;
  float *fv = NULL;
  int64_t *iv = NULL;
  while (!ip_is_punct(ps, ']') && !ps->failed) {
    if (n && ip_expect(ps, ',')) break;
    if (!ip_num_token(ps)) { ip_perr(ps, "expected a number, found '%s'", ip_tok_desc(ps)); break; }
    floats |= ip_is_float_text(ps->tok.text);
    fv = ir_xrealloc(fv, (size_t)(n + 1) * sizeof *fv);
    iv = ir_xrealloc(iv, (size_t)(n + 1) * sizeof *iv);
    fv[n] = strtof(ps->tok.text, NULL);
    iv[n] = ip_is_float_text(ps->tok.text) ? 0 : strtoll(ps->tok.text, NULL, 10);
    n++;
    ip_next(ps);
  }
  int rc = ip_expect(ps, ']');
  if (!rc && floats) ir_attr_set_floats(ps->g, node, aname, n, fv);
  else if (!rc) ir_attr_set_ints(ps->g, node, aname, n, iv);
  free(fv);
  free(iv);
  return rc;
}

/* strings["a", "b"] */
static int parse_attr_strings(struct parser *ps, int node, const char *aname) {
  ip_next(ps); /* strings */
  if (ip_expect(ps, '[')) return -1;
  int n = 0;
  char **v = NULL;
  while (!ip_is_punct(ps, ']') && !ps->failed) {
    if (n && ip_expect(ps, ',')) break;
    if (ps->tok.kind != TK_STR) { ip_perr(ps, "expected a string, found '%s'", ip_tok_desc(ps)); break; }
    v = ir_xrealloc(v, (size_t)(n + 1) * sizeof *v);
    v[n++] = ps->tok.text;
    ps->tok.text = NULL;
    ip_next(ps);
  }
  int rc = ip_expect(ps, ']');
  if (!rc) ir_attr_set_strings(ps->g, node, aname, n, (const char *const *)v);
  for (int i = 0; i < n; i++) free(v[i]);
  free(v);
  return rc;
}

static int parse_attr_value(struct parser *ps, int node, const char *aname) {
  if (ip_is_punct(ps, '[')) return parse_attr_list(ps, node, aname);
  if (ip_is_ident(ps, "strings")) return parse_attr_strings(ps, node, aname);
  if (ps->tok.kind == TK_STR) {
    ir_attr_set_string(ps->g, node, aname, ps->tok.text);
    ip_next(ps);
    return 0;
  }
  if (ps->tok.kind == TK_NAME) {
    int t = lookup(ps, ps->tok.text);
    if (t < 0) return -1;
    ir_attr_set_tensor(ps->g, node, aname, t);
    ip_next(ps);
    return 0;
  }
  if (ip_num_token(ps) && ip_is_float_text(ps->tok.text)) {
    float f;
    if (ip_parse_float(ps, &f)) return -1;
    ir_attr_set_float(ps->g, node, aname, f);
    return 0;
  }
  int64_t v;
  if (ip_parse_int(ps, &v)) return -1;
  ir_attr_set_int(ps->g, node, aname, v);
  return 0;
}

static int parse_attrs(struct parser *ps, int node) {
  while (!ip_is_punct(ps, '}') && !ps->failed) {
    struct ir_node *n = &ps->g->nodes[node];
    if (n->n_attrs && ip_expect(ps, ',')) return -1;
    if (ps->tok.kind != TK_IDENT) { ip_perr(ps, "expected an attribute name, found '%s'", ip_tok_desc(ps)); return -1; }
    if (ir_attr_find(n, ps->tok.text)) { ip_perr(ps, "duplicate attribute '%s'", ps->tok.text); return -1; }
    char *aname = ps->tok.text;
    ps->tok.text = NULL;
    ip_next(ps);
    int rc = ip_expect(ps, '=') ? -1 : parse_attr_value(ps, node, aname);
    free(aname);
    if (rc) return -1;
  }
  return ip_expect(ps, '}');
}

static int make_results(struct parser *ps, struct pnode *pn, int *out) {
  for (int k = 0; k < pn->n_out; k++) {
    out[k] = make_tensor(ps, pn->names[k], &pn->types[k], 'v');
    if (out[k] < 0) return -1;
  }
  return 0;
}

/* The op of a node: a kind's name, or TYPE@OPSET for a generic node
 * (*type gets the ONNX type, owned). */
static int parse_op(struct parser *ps, char **type, int64_t *opset) {
  if (ps->tok.kind != TK_IDENT) { ip_perr(ps, "expected an op, found '%s'", ip_tok_desc(ps)); return -1; }
  char *name = ps->tok.text;
  ps->tok.text = NULL;
  ip_next(ps);
  if (ip_accept(ps, '@')) {
    *type = name;
    if (ip_parse_int(ps, opset)) return -1;
    if (*opset < 1 || *opset > ONNX_MAX_OPSET) { ip_perr(ps, "opset %lld is out of range", (long long)*opset); return -1; }
    return IR_OP_ONNX;
  }
  int op = ir_op_from_name(name);
  if (op < 0) ip_perr(ps, "unknown op '%s' (a generic ONNX op is written TYPE@OPSET)", name);
  free(name);
  return op;
}

static int parse_node(struct parser *ps) {
  struct pnode pn = {0};
  int rc = -1, out[MAX_RESULTS];
  char *type = NULL;
  int64_t opset = 0;
  if (parse_decls(ps, &pn)) goto done;
  int op = parse_op(ps, &type, &opset);
  if (op < 0) goto done;
  if (parse_args(ps, &pn) || make_results(ps, &pn, out)) goto done;
  int node = op == IR_OP_ONNX ? ir_node_add_onnx(ps->g, type, (int)opset, NULL, pn.n_in, pn.in, pn.n_out, out)
                              : ir_node_add(ps->g, op, NULL, pn.n_in, pn.in, pn.n_out, out);
  if (ip_accept(ps, '{') && parse_attrs(ps, node)) goto done;
  if (ps->tok.kind == TK_STR) {
    ps->g->nodes[node].name = ps->tok.text;
    ps->tok.text = NULL;
    ip_next(ps);
  }
  rc = ps->failed ? -1 : 0;
done:
  free(type);
  pnode_free(&pn);
  return rc;
}

static int parse_stmt(struct parser *ps) {
  if (ip_is_ident(ps, "input")) return parse_input(ps);
  if (ip_is_ident(ps, "const")) return parse_const(ps);
  if (ip_is_ident(ps, "output")) return parse_output(ps);
  if (ps->tok.kind == TK_NAME) return parse_node(ps);
  ip_perr(ps, "expected a statement, found '%s'", ip_tok_desc(ps));
  return -1;
}

static int parse_header(struct parser *ps) {
  if (!ip_is_ident(ps, "loom.ir")) { ip_perr(ps, "missing 'loom.ir 1' header"); return -1; }
  ip_next(ps);
  if (ps->tok.kind != TK_NUM || strcmp(ps->tok.text, "1")) {
    ip_perr(ps, "unsupported IR text version %s", ip_tok_desc(ps));
    return -1;
  }
  ip_next(ps);
  return 0;
}

struct ir_graph *ir_parse(const char *text, const char *source, struct ir_error *err) {
  struct parser ps = {.p = text, .line = 1, .err = err, .source = source ? source : "<text>"};
  ps.g = ir_graph_new(ps.source);
  ip_next(&ps);
  if (!ps.failed && !parse_header(&ps))
    while (ps.tok.kind != TK_EOF && !ps.failed && !parse_stmt(&ps)) {
    }
  free(ps.tok.text);
  if (ps.failed) {
    ir_graph_free(ps.g);
    return NULL;
  }
  return ps.g;
}
