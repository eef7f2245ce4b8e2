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
#include "sw_compiler/compiler.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum tok_kind {
  TK_EOF,      /* end of text */
  TK_IDENT,    /* keyword, op, dtype, attribute name */
  TK_NAME,     /* %name: text holds the name */
  TK_NUM,      /* number, with sign */
  TK_STR,      /* "string": text holds the unescaped bytes */
  TK_PUNCT,    /* one character in text[0] */
  TK_ELLIPSIS, /* ... */
  TK_COUNT
};

struct token {
  enum tok_kind kind;
  char *text; /* owned */
  int line;
};

struct parser {
  const char *p;
  int line;
  struct token tok;
  struct ir_graph *g;
  struct ir_error *err;
  const char *source;
  int failed;
};

/* A parsed type before the tensor exists. */
struct ptype {
  int present;
  enum ir_dtype dtype;
  int rank;
  int64_t dims[IR_MAX_RANK];
  enum ir_layout layout;
  int block;
  int qn, qaxis;
  float *qscale;
  int32_t *qzp;
};

static void perr(struct parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void perr(struct parser *ps, const char *fmt, ...) {
  if (ps->failed) return;
  ps->failed = 1;
  char what[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  ir_errorf(ps->err, "%s: line %d: %s", ps->source, ps->tok.line, what);
}

/* ---- lexer ---- */

static int ident_char(int c) { return isalnum(c) || c == '_' || c == '.'; }
static int name_char(int c) { return isalnum(c) || c == '_' || c == '.' || c == '/' || c == '-'; }

static void skip_space(struct parser *ps) {
  for (;;) {
    while (isspace((unsigned char)*ps->p)) {
      if (*ps->p == '\n') ps->line++;
      ps->p++;
    }
    if (*ps->p != '#') return;
    while (*ps->p && *ps->p != '\n') ps->p++;
  }
}

static char *dup_range(const char *b, const char *e) {
  char *s = ir_xmalloc((size_t)(e - b) + 1);
  memcpy(s, b, (size_t)(e - b));
  s[e - b] = 0;
  return s;
}

static int hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = tolower(c);
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Reads a "..." string at ps->p (on the quote) with \" \\ \n \xNN escapes. */
static char *lex_string(struct parser *ps) {
  const char *q = ps->p + 1;
  size_t cap = 16, n = 0;
  char *s = ir_xmalloc(cap);
  for (; *q && *q != '"' && *q != '\n'; q++) {
    int c = (unsigned char)*q;
    if (c == '\\') {
      q++;
      if (*q == 'n') c = '\n';
      else if (*q == 'x' && hexval(q[1]) >= 0 && hexval(q[2]) >= 0) c = hexval(q[1]) * 16 + hexval(q[2]), q += 2;
      else if (*q == '"' || *q == '\\') c = *q;
      else { free(s); perr(ps, "bad escape in string"); return NULL; }
      if (c == 0) { free(s); perr(ps, "NUL in string"); return NULL; }
    }
    if (n + 2 > cap) s = ir_xrealloc(s, cap *= 2);
    s[n++] = (char)c;
  }
  if (*q != '"') { free(s); perr(ps, "unterminated string"); return NULL; }
  s[n] = 0;
  ps->p = q + 1;
  return s;
}

static const char *scan_number(const char *q) {
  if (*q == '-' || *q == '+') q++;
  if (!strncmp(q, "inf", 3)) return q + 3;
  while (isdigit((unsigned char)*q) || *q == '.') q++;
  if (*q == 'e' || *q == 'E') {
    q++;
    if (*q == '-' || *q == '+') q++;
    while (isdigit((unsigned char)*q)) q++;
  }
  return q;
}

static void next(struct parser *ps) {
  free(ps->tok.text);
  ps->tok.text = NULL;
  skip_space(ps);
  ps->tok.line = ps->line;
  const char *q = ps->p;
  if (!*q) { ps->tok.kind = TK_EOF; return; }
  if (!strncmp(q, "...", 3)) { ps->tok.kind = TK_ELLIPSIS; ps->p += 3; return; }
  if (*q == '"') {
    ps->tok.kind = TK_STR;
    ps->tok.text = lex_string(ps);
    if (!ps->tok.text) ps->tok.kind = TK_EOF;
    return;
  }
  if (*q == '%') {
    ps->tok.kind = TK_NAME;
    if (q[1] == '"') {
      ps->p++;
      ps->tok.text = lex_string(ps);
      if (!ps->tok.text) ps->tok.kind = TK_EOF;
      return;
    }
    const char *e = q + 1;
    while (name_char((unsigned char)*e)) e++;
    if (e == q + 1) { perr(ps, "expected a name after '%%'"); ps->tok.kind = TK_EOF; return; }
    ps->tok.text = dup_range(q + 1, e);
    ps->p = e;
    return;
  }
  if (isdigit((unsigned char)*q) || ((*q == '-' || *q == '+') &&
      (isdigit((unsigned char)q[1]) || q[1] == '.' || !strncmp(q + 1, "inf", 3)))) {
    const char *e = scan_number(q);
    ps->tok.kind = TK_NUM;
    ps->tok.text = dup_range(q, e);
    ps->p = e;
    return;
  }
  if (isalpha((unsigned char)*q) || *q == '_') {
    const char *e = q;
    while (ident_char((unsigned char)*e)) e++;
    ps->tok.kind = TK_IDENT;
    ps->tok.text = dup_range(q, e);
    ps->p = e;
    return;
  }
  ps->tok.kind = TK_PUNCT;
  ps->tok.text = dup_range(q, q + 1);
  ps->p++;
}

/* ---- token helpers ---- */

static int is_punct(struct parser *ps, char c) {
  return ps->tok.kind == TK_PUNCT && ps->tok.text[0] == c;
}

static int is_ident(struct parser *ps, const char *s) {
  return ps->tok.kind == TK_IDENT && !strcmp(ps->tok.text, s);
}

static const char *tok_desc(struct parser *ps) {
  switch (ps->tok.kind) {
  case TK_EOF: return "end of input";
  case TK_ELLIPSIS: return "'...'";
  default: return ps->tok.text;
  }
}

static int expect(struct parser *ps, char c) {
  if (ps->failed) return -1;
  if (!is_punct(ps, c)) { perr(ps, "expected '%c', found '%s'", c, tok_desc(ps)); return -1; }
  next(ps);
  return 0;
}

static int accept(struct parser *ps, char c) {
  if (!is_punct(ps, c)) return 0;
  next(ps);
  return 1;
}

static int is_float_text(const char *s) {
  return strpbrk(s, ".eE") != NULL || strstr(s, "inf") || strstr(s, "nan");
}

static int num_token(struct parser *ps) {
  return ps->tok.kind == TK_NUM || is_ident(ps, "inf") || is_ident(ps, "nan");
}

static int parse_int(struct parser *ps, int64_t *v) {
  if (ps->tok.kind != TK_NUM || is_float_text(ps->tok.text)) {
    perr(ps, "expected an integer, found '%s'", tok_desc(ps));
    return -1;
  }
  errno = 0;
  char *end;
  long long x = strtoll(ps->tok.text, &end, 10);
  if (errno || *end) { perr(ps, "integer '%s' out of range", ps->tok.text); return -1; }
  *v = x;
  next(ps);
  return 0;
}

static int parse_float(struct parser *ps, float *v) {
  if (!num_token(ps)) { perr(ps, "expected a number, found '%s'", tok_desc(ps)); return -1; }
  char *end;
  *v = strtof(ps->tok.text, &end);
  if (*end) { perr(ps, "bad number '%s'", ps->tok.text); return -1; }
  next(ps);
  return 0;
}

/* ---- types ---- */

static int parse_dims(struct parser *ps, struct ptype *ty) {
  if (expect(ps, '[')) return -1;
  ty->rank = 0;
  if (accept(ps, '*')) { ty->rank = -1; return expect(ps, ']'); }
  while (!is_punct(ps, ']') && !ps->failed) {
    if (ty->rank && expect(ps, ',')) return -1;
    if (ty->rank == IR_MAX_RANK) { perr(ps, "rank above %d", IR_MAX_RANK); return -1; }
    int64_t d = -1;
    if (accept(ps, '?')) d = -1;
    else if (parse_int(ps, &d)) return -1;
    else if (d < 0 || d > IR_MAX_DIM) { perr(ps, "dim %lld out of range", (long long)d); return -1; }
    ty->dims[ty->rank++] = d;
  }
  return expect(ps, ']');
}

static int parse_layout(struct parser *ps, struct ptype *ty) {
  next(ps); /* layout */
  if (expect(ps, '=')) return -1;
  const char *s = ps->tok.kind == TK_IDENT ? ps->tok.text : "";
  if (!strncmp(s, "NCHWc", 5) && isdigit((unsigned char)s[5])) {
    ty->layout = IR_LAYOUT_NCHWC;
    char *end;
    long k = strtol(s + 5, &end, 10);
    if (*end || k <= 0 || k > 4096) { perr(ps, "bad layout block in '%s'", s); return -1; }
    ty->block = (int)k;
  } else {
    int l = -1;
    for (int i = 1; i < IR_LAYOUT_COUNT; i++)
      if (i != IR_LAYOUT_NCHWC && !strcmp(s, ir_layout_name(i))) l = i;
    if (l < 0) { perr(ps, "unknown layout '%s'", tok_desc(ps)); return -1; }
    ty->layout = l;
  }
  next(ps);
  return 0;
}

/* One float, or a list of floats (is_list set). */
static int parse_float_list(struct parser *ps, float **out, int *n) {
  int list = accept(ps, '[');
  *n = 0;
  do {
    *out = ir_xrealloc(*out, (size_t)(*n + 1) * sizeof **out);
    if (parse_float(ps, &(*out)[(*n)++])) return -1;
  } while (list && accept(ps, ','));
  return list ? expect(ps, ']') : 0;
}

static int parse_zp_list(struct parser *ps, int32_t **out, int *n) {
  int list = accept(ps, '[');
  *n = 0;
  do {
    int64_t v;
    if (parse_int(ps, &v)) return -1;
    if (v < INT32_MIN || v > INT32_MAX) { perr(ps, "zero point out of range"); return -1; }
    *out = ir_xrealloc(*out, (size_t)(*n + 1) * sizeof **out);
    (*out)[(*n)++] = (int32_t)v;
  } while (list && accept(ps, ','));
  return list ? expect(ps, ']') : 0;
}

static int expect_key(struct parser *ps, const char *key) {
  if (!is_ident(ps, key)) { perr(ps, "expected '%s=', found '%s'", key, tok_desc(ps)); return -1; }
  next(ps);
  return expect(ps, '=');
}

static int parse_quant(struct parser *ps, struct ptype *ty) {
  next(ps); /* quant */
  if (expect(ps, '(')) return -1;
  int64_t axis = -1;
  if (is_ident(ps, "axis")) {
    if (expect_key(ps, "axis") || parse_int(ps, &axis) || expect(ps, ',')) return -1;
    if (axis < 0 || axis >= IR_MAX_RANK) { perr(ps, "quant axis out of range"); return -1; }
  }
  int nz = 0;
  if (expect_key(ps, "scale") || parse_float_list(ps, &ty->qscale, &ty->qn)) return -1;
  if (expect(ps, ',') || expect_key(ps, "zp") || parse_zp_list(ps, &ty->qzp, &nz)) return -1;
  if (nz != ty->qn || (axis < 0 && ty->qn != 1)) {
    perr(ps, "quant: %d scales and %d zero points%s", ty->qn, nz, axis < 0 ? " without an axis" : "");
    return -1;
  }
  ty->qaxis = (int)axis;
  return expect(ps, ')');
}

static int parse_type(struct parser *ps, struct ptype *ty) {
  const char *dt = ps->tok.kind == TK_IDENT ? ps->tok.text : is_punct(ps, '?') ? "?" : "";
  int d = ir_dtype_from_name(dt);
  if (d < 0) { perr(ps, "unknown dtype '%s'", tok_desc(ps)); return -1; }
  ty->present = 1;
  ty->dtype = d;
  next(ps);
  if (parse_dims(ps, ty)) return -1;
  if (is_ident(ps, "layout") && parse_layout(ps, ty)) return -1;
  if (is_ident(ps, "quant") && parse_quant(ps, ty)) return -1;
  if (ty->qn && ty->qaxis >= 0 && ty->rank >= 0 && ty->qaxis >= ty->rank) {
    perr(ps, "quant axis %d out of range for rank %d", ty->qaxis, ty->rank);
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
  if (ir_tensor_find(ps->g, name) >= 0) { perr(ps, "redefinition of %%%s", name); return -1; }
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
  if (dt == IR_DT_F32) return parse_float(ps, &((float *)buf)[i]);
  if (ir_dtype_is_float(dt)) {
    char *end;
    if (!num_token(ps)) { perr(ps, "expected a number, found '%s'", tok_desc(ps)); return -1; }
    double d = strtod(ps->tok.text, &end);
    if (*end) { perr(ps, "bad number '%s'", ps->tok.text); return -1; }
    ir_store_f64(dt, buf, i, d);
    next(ps);
    return 0;
  }
  int64_t v;
  if (parse_int(ps, &v)) return -1;
  /* u32 and u64 constants above INT64_MAX are written in hex data */
  static const int64_t lo[] = {0, 0, INT8_MIN, 0, INT32_MIN, INT64_MIN, 0, INT16_MIN, 0, 0, 0, 0, 0, 0};
  static const int64_t hi[] = {0, 0, INT8_MAX, UINT8_MAX, INT32_MAX, INT64_MAX, 1, INT16_MAX, UINT16_MAX,
                               UINT32_MAX, INT64_MAX, 0, 0, 0};
  _Static_assert(sizeof lo / sizeof lo[0] == IR_DT_COUNT, "range table");
  _Static_assert(sizeof hi / sizeof hi[0] == IR_DT_COUNT, "range table");
  if (v < lo[dt] || v > hi[dt]) { perr(ps, "%lld does not fit %s", (long long)v, ir_dtype_name(dt)); return -1; }
  ir_store_i64(dt, buf, i, v);
  return 0;
}

static int parse_list_data(struct parser *ps, enum ir_dtype dt, int64_t n, void *buf) {
  next(ps); /* [ */
  int64_t i = 0;
  while (!is_punct(ps, ']') && !ps->failed) {
    if (i && expect(ps, ',')) return -1;
    if (i == n) { perr(ps, "more than %lld values", (long long)n); return -1; }
    if (store_number(ps, dt, buf, i++)) return -1;
  }
  if (i != n) { perr(ps, "%lld values for %lld elements", (long long)i, (long long)n); return -1; }
  return expect(ps, ']');
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
  next(ps); /* hex */
  if (ps->tok.kind != TK_STR) { perr(ps, "expected a hex string"); return -1; }
  const char *s = ps->tok.text;
  if (strlen(s) != 2 * nbytes) {
    perr(ps, "hex data has %zu digits, expected %zu", strlen(s), 2 * nbytes);
    return -1;
  }
  for (size_t i = 0; i < nbytes; i++) {
    int h = hexval((unsigned char)s[2 * i]), l = hexval((unsigned char)s[2 * i + 1]);
    if (h < 0 || l < 0) { perr(ps, "bad hex digit"); return -1; }
    ((unsigned char *)buf)[i] = (unsigned char)(h * 16 + l);
  }
  next(ps);
  return 0;
}

static int parse_data(struct parser *ps, const struct ir_tensor *t, void *buf, size_t nbytes) {
  int64_t n = ir_tensor_numel(t);
  if (is_punct(ps, '[')) return parse_list_data(ps, t->dtype, n, buf);
  if (is_ident(ps, "hex")) return parse_hex_data(ps, nbytes, buf);
  if (ps->tok.kind == TK_ELLIPSIS || is_ident(ps, "zeros")) { next(ps); return 0; }
  if (is_ident(ps, "seq")) { ir_fill_seq(t->dtype, n, buf); next(ps); return 0; }
  if (is_ident(ps, "rand")) {
    int64_t seed;
    next(ps);
    if (expect(ps, '(') || parse_int(ps, &seed) || expect(ps, ')')) return -1;
    fill_rand(t->dtype, n, (uint64_t)seed, buf);
    return 0;
  }
  perr(ps, "expected constant data, found '%s'", tok_desc(ps));
  return -1;
}

/* ---- statements ---- */

static char *take_name(struct parser *ps) {
  if (ps->tok.kind != TK_NAME) { perr(ps, "expected a %%name, found '%s'", tok_desc(ps)); return NULL; }
  char *s = ps->tok.text;
  ps->tok.text = NULL;
  next(ps);
  return s;
}

static int lookup(struct parser *ps, const char *name) {
  int t = ir_tensor_find(ps->g, name);
  if (t < 0) perr(ps, "use of undefined %%%s", name);
  return t;
}

static int parse_input(struct parser *ps) {
  next(ps);
  struct ptype ty = {0};
  char *name = take_name(ps);
  int rc = -1;
  if (name && (!accept(ps, ':') || !parse_type(ps, &ty))) rc = make_tensor(ps, name, &ty, 'i') < 0 ? -1 : 0;
  free(name);
  ptype_free(&ty);
  return ps->failed ? -1 : rc;
}

static int parse_const(struct parser *ps) {
  next(ps);
  struct ptype ty = {0};
  char *name = take_name(ps);
  int rc = -1;
  if (name && !expect(ps, ':') && !parse_type(ps, &ty) && !expect(ps, '=')) {
    int64_t bytes = ir_numel_checked(ty.rank, ty.dims) < 0 || ty.dtype == IR_DT_UNDEF ? -1 : 0;
    int t = bytes < 0 ? -1 : make_tensor(ps, name, &ty, 'c');
    if (t >= 0 && (bytes = ir_tensor_bytes(&ps->g->tensors[t])) < 0) t = -1;
    if (t < 0) perr(ps, "constant %%%s needs a known dtype and shape of at most 4 GiB", name);
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
  next(ps);
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
    if (pn->n_out == MAX_RESULTS) { perr(ps, "too many results"); return -1; }
    int k = pn->n_out;
    pn->names[k] = take_name(ps);
    if (!pn->names[k]) return -1;
    pn->n_out++;
    if (accept(ps, ':') && parse_type(ps, &pn->types[k])) return -1;
  } while (accept(ps, ','));
  return expect(ps, '=');
}

static int parse_args(struct parser *ps, struct pnode *pn) {
  if (expect(ps, '(')) return -1;
  while (!is_punct(ps, ')') && !ps->failed) {
    if (pn->n_in && expect(ps, ',')) return -1;
    if (pn->n_in == pn->cap_in) {
      pn->cap_in = pn->cap_in ? 2 * pn->cap_in : 8;
      pn->in = ir_xrealloc(pn->in, (size_t)pn->cap_in * sizeof(int));
    }
    if (is_ident(ps, "_")) {
      pn->in[pn->n_in++] = -1;
      next(ps);
      continue;
    }
    char *name = take_name(ps);
    int t = name ? lookup(ps, name) : -1;
    free(name);
    if (t < 0) return -1;
    pn->in[pn->n_in++] = t;
  }
  return expect(ps, ')');
}

static int parse_attr_list(struct parser *ps, int node, const char *aname) {
  next(ps); /* [ */
  int n = 0, floats = 0;
  float *fv = NULL;
  int64_t *iv = NULL;
  while (!is_punct(ps, ']') && !ps->failed) {
    if (n && expect(ps, ',')) break;
    if (!num_token(ps)) { perr(ps, "expected a number, found '%s'", tok_desc(ps)); break; }
    floats |= is_float_text(ps->tok.text);
    fv = ir_xrealloc(fv, (size_t)(n + 1) * sizeof *fv);
    iv = ir_xrealloc(iv, (size_t)(n + 1) * sizeof *iv);
    fv[n] = strtof(ps->tok.text, NULL);
    iv[n] = is_float_text(ps->tok.text) ? 0 : strtoll(ps->tok.text, NULL, 10);
    n++;
    next(ps);
  }
  int rc = expect(ps, ']');
  if (!rc && floats) ir_attr_set_floats(ps->g, node, aname, n, fv);
  else if (!rc) ir_attr_set_ints(ps->g, node, aname, n, iv);
  free(fv);
  free(iv);
  return rc;
}

/* strings["a", "b"] */
static int parse_attr_strings(struct parser *ps, int node, const char *aname) {
  next(ps); /* strings */
  if (expect(ps, '[')) return -1;
  int n = 0;
  char **v = NULL;
  while (!is_punct(ps, ']') && !ps->failed) {
    if (n && expect(ps, ',')) break;
    if (ps->tok.kind != TK_STR) { perr(ps, "expected a string, found '%s'", tok_desc(ps)); break; }
    v = ir_xrealloc(v, (size_t)(n + 1) * sizeof *v);
    v[n++] = ps->tok.text;
    ps->tok.text = NULL;
    next(ps);
  }
  int rc = expect(ps, ']');
  if (!rc) ir_attr_set_strings(ps->g, node, aname, n, (const char *const *)v);
  for (int i = 0; i < n; i++) free(v[i]);
  free(v);
  return rc;
}

static int parse_attr_value(struct parser *ps, int node, const char *aname) {
  if (is_punct(ps, '[')) return parse_attr_list(ps, node, aname);
  if (is_ident(ps, "strings")) return parse_attr_strings(ps, node, aname);
  if (ps->tok.kind == TK_STR) {
    ir_attr_set_string(ps->g, node, aname, ps->tok.text);
    next(ps);
    return 0;
  }
  if (ps->tok.kind == TK_NAME) {
    int t = lookup(ps, ps->tok.text);
    if (t < 0) return -1;
    ir_attr_set_tensor(ps->g, node, aname, t);
    next(ps);
    return 0;
  }
  if (num_token(ps) && is_float_text(ps->tok.text)) {
    float f;
    if (parse_float(ps, &f)) return -1;
    ir_attr_set_float(ps->g, node, aname, f);
    return 0;
  }
  int64_t v;
  if (parse_int(ps, &v)) return -1;
  ir_attr_set_int(ps->g, node, aname, v);
  return 0;
}

static int parse_attrs(struct parser *ps, int node) {
  while (!is_punct(ps, '}') && !ps->failed) {
    struct ir_node *n = &ps->g->nodes[node];
    if (n->n_attrs && expect(ps, ',')) return -1;
    if (ps->tok.kind != TK_IDENT) { perr(ps, "expected an attribute name, found '%s'", tok_desc(ps)); return -1; }
    if (ir_attr_find(n, ps->tok.text)) { perr(ps, "duplicate attribute '%s'", ps->tok.text); return -1; }
    char *aname = ps->tok.text;
    ps->tok.text = NULL;
    next(ps);
    int rc = expect(ps, '=') ? -1 : parse_attr_value(ps, node, aname);
    free(aname);
    if (rc) return -1;
  }
  return expect(ps, '}');
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
  if (ps->tok.kind != TK_IDENT) { perr(ps, "expected an op, found '%s'", tok_desc(ps)); return -1; }
  char *name = ps->tok.text;
  ps->tok.text = NULL;
  next(ps);
  if (accept(ps, '@')) {
    *type = name;
    if (parse_int(ps, opset)) return -1;
    if (*opset < 1 || *opset > ONNX_MAX_OPSET) { perr(ps, "opset %lld is out of range", (long long)*opset); return -1; }
    return IR_OP_ONNX;
  }
  int op = ir_op_from_name(name);
  if (op < 0) perr(ps, "unknown op '%s' (a generic ONNX op is written TYPE@OPSET)", name);
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
  if (accept(ps, '{') && parse_attrs(ps, node)) goto done;
  if (ps->tok.kind == TK_STR) {
    ps->g->nodes[node].name = ps->tok.text;
    ps->tok.text = NULL;
    next(ps);
  }
  rc = ps->failed ? -1 : 0;
done:
  free(type);
  pnode_free(&pn);
  return rc;
}

static int parse_stmt(struct parser *ps) {
  if (is_ident(ps, "input")) return parse_input(ps);
  if (is_ident(ps, "const")) return parse_const(ps);
  if (is_ident(ps, "output")) return parse_output(ps);
  if (ps->tok.kind == TK_NAME) return parse_node(ps);
  perr(ps, "expected a statement, found '%s'", tok_desc(ps));
  return -1;
}

static int parse_header(struct parser *ps) {
  if (!is_ident(ps, "loom.ir")) { perr(ps, "missing 'loom.ir 1' header"); return -1; }
  next(ps);
  if (ps->tok.kind != TK_NUM || strcmp(ps->tok.text, "1")) {
    perr(ps, "unsupported IR text version %s", tok_desc(ps));
    return -1;
  }
  next(ps);
  return 0;
}

struct ir_graph *ir_parse(const char *text, const char *source, struct ir_error *err) {
  struct parser ps = {.p = text, .line = 1, .err = err, .source = source ? source : "<text>"};
  ps.g = ir_graph_new(ps.source);
  next(&ps);
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
