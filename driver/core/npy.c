/*
 * npy.c - NumPy .npy files in and out.
 *
 * A .npy file is a magic string, a version, a little-endian header length,
 * and a header that is a Python dict literal:
 *
 *   \x93NUMPY 01 00 | u16 len | {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }   \n | data
 *
 * (version 2.0 and 3.0 widen the length to u32; 3.0 makes the header UTF-8.)
 * The reader parses the dict with a small tokenizer rather than trusting its
 * layout: numpy and other writers differ in spacing, key order, quotes and
 * trailing commas, and fuzzers differ in everything.  It accepts exactly the
 * three keys numpy writes, a plain dtype string, and a tuple of
 * non-negative integers (Python 2's `3L` included), and refuses anything
 * else with a message saying what the file holds and what is supported.
 * All sizes are overflow-checked and the data length must match the shape
 * exactly.
 *
 * The writer produces what numpy.save() itself writes (same key order,
 * spacing, growth padding and 64-byte alignment), so files written here are
 * byte-identical to numpy's for the same array.
 */
#include "npy.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outfile.h"
#include "readfile.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_MAX_HEADER (UINT32_C(1) << 20)
#define NPY_ALIGN 64
#define NPY_GROWTH_DIGITS 21 /* numpy's GROWTH_AXIS_MAX_DIGITS */
#define NPY_MAX_DEPTH 16
#define NPY_SUPPORTED "little-endian bool, int8..int64, uint8..uint64, float16, float32, float64 only"

static loom_status npy_fail(char msg[LOOM_MSG_MAX], loom_status st, const char *name,
                            const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static loom_status npy_fail(char msg[LOOM_MSG_MAX], loom_status st, const char *name,
                            const char *fmt, ...) {
  if (!msg) return st;
  int n = snprintf(msg, LOOM_MSG_MAX, "%s: ", name);
  if (n < 0 || n >= LOOM_MSG_MAX) return st;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg + n, (size_t)(LOOM_MSG_MAX - n), fmt, ap);
  va_end(ap);
  return st;
}

/* numpy's name and descr of each dtype it has (bfloat16 it has not). */
static const struct {
  loom_dtype dt;
  const char *name, *descr;
} npy_types[] = {
    {LOOM_DT_I8, "int8", "|i1"},       {LOOM_DT_U8, "uint8", "|u1"},     {LOOM_DT_I32, "int32", "<i4"},
    {LOOM_DT_F32, "float32", "<f4"},   {LOOM_DT_I64, "int64", "<i8"},    {LOOM_DT_BOOL, "bool", "|b1"},
    {LOOM_DT_I16, "int16", "<i2"},     {LOOM_DT_U16, "uint16", "<u2"},   {LOOM_DT_U32, "uint32", "<u4"},
    {LOOM_DT_U64, "uint64", "<u8"},    {LOOM_DT_F16, "float16", "<f2"},  {LOOM_DT_F64, "float64", "<f8"},
};

static size_t npy_elem_size(loom_dtype t) {
  for (size_t i = 0; i < sizeof npy_types / sizeof npy_types[0]; i++)
    if (npy_types[i].dt == t) return loom_dtype_size(t);
  return 0;
}

static const char *npy_dtype_text(loom_dtype t) {
  for (size_t i = 0; i < sizeof npy_types / sizeof npy_types[0]; i++)
    if (npy_types[i].dt == t) return npy_types[i].name;
  return "?";
}

/* The descr numpy writes for a dtype. */
static const char *npy_descr(loom_dtype t) {
  for (size_t i = 0; i < sizeof npy_types / sizeof npy_types[0]; i++)
    if (npy_types[i].dt == t) return npy_types[i].descr;
  return NULL;
}

/* Python's repr of a shape tuple: "()", "(3,)", "(2, 3)". */
static void shape_repr(int rank, const int64_t *dims, char *out, size_t n) {
  size_t k = (size_t)snprintf(out, n, "(");
  for (int i = 0; i < rank && k < n; i++)
    k += (size_t)snprintf(out + k, n - k, "%s%" PRId64, i ? ", " : "", dims[i]);
  if (k < n) snprintf(out + k, n - k, rank == 1 ? ",)" : ")");
}

/* Number of bytes of `rank` dims of `es`-byte elements; 0 when it overflows
 * or exceeds the cap (zero-size arrays give *bytes = 0 and return 1). */
static int data_bytes(int rank, const int64_t *dims, size_t es, uint64_t *bytes) {
  uint64_t p = es;
  for (int i = 0; i < rank; i++)
    if (dims[i] < 0 || __builtin_mul_overflow(p, (uint64_t)dims[i], &p)) return 0;
  if (p > LOOM_NPY_MAX_BYTES || p > SIZE_MAX) return 0;
  *bytes = p;
  return 1;
}

/* ---- the header dict ---- */

struct hdr {
  const char *s;
  size_t n, pos;
  size_t base; /* file offset of s[0], for messages */
  const char *name;
  char *msg;
  /* results */
  const char *descr;
  size_t descr_len;
  int has_descr, has_fortran, has_shape, fortran, structured;
  int rank;
  int64_t dims[LOOM_NPY_MAX_RANK];
};

static loom_status hdr_fail(struct hdr *h, const char *what) {
  return npy_fail(h->msg, LOOM_E_FORMAT, h->name, "offset 0x%zx: header: %s", h->base + h->pos, what);
}

static void skip_ws(struct hdr *h) {
  while (h->pos < h->n && strchr(" \t\r\n", h->s[h->pos]) && h->s[h->pos]) h->pos++;
}

static int peek(struct hdr *h) {
  skip_ws(h);
  return h->pos < h->n ? (unsigned char)h->s[h->pos] : -1;
}

static loom_status expect(struct hdr *h, char c, const char *what) {
  if (peek(h) != c) return hdr_fail(h, what);
  h->pos++;
  return LOOM_OK;
}

/* 'text' or "text", no escapes.  *s, *len: the text between the quotes. */
static loom_status parse_string(struct hdr *h, const char **s, size_t *len) {
  int q = peek(h);
  if (q != '\'' && q != '"') return hdr_fail(h, "expected a quoted string");
  size_t start = ++h->pos;
  while (h->pos < h->n && h->s[h->pos] != q) {
    if (h->s[h->pos] == '\\') return hdr_fail(h, "escape sequences in strings are not supported");
    if (h->s[h->pos] == '\n') break;
    h->pos++;
  }
  if (h->pos >= h->n || h->s[h->pos] != q) return hdr_fail(h, "unterminated string");
  *s = h->s + start;
  *len = h->pos - start;
  h->pos++;
  return LOOM_OK;
}

static int is_word_char(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-' || c == '+';
}

/* A bare word (True, 12, 3L); *len 0 when there is none. */
static void parse_word(struct hdr *h, const char **s, size_t *len) {
  peek(h);
  size_t start = h->pos;
  while (h->pos < h->n && is_word_char((unsigned char)h->s[h->pos])) h->pos++;
  *s = h->s + start;
  *len = h->pos - start;
}

/* Skips any Python literal built of strings, words, tuples, lists and
 * dicts (used for a structured descr, which is then refused). */
static loom_status skip_value(struct hdr *h, int depth) {
  const char *s;
  size_t len;
  int c = peek(h);
  if (depth > NPY_MAX_DEPTH) return hdr_fail(h, "values nested too deeply");
  if (c == '\'' || c == '"') return parse_string(h, &s, &len);
  if (c != '(' && c != '[' && c != '{') {
    parse_word(h, &s, &len);
    return len ? LOOM_OK : hdr_fail(h, "expected a value");
  }
  int close = c == '(' ? ')' : c == '[' ? ']' : '}';
  h->pos++;
  while (peek(h) != close) {
    loom_status st = skip_value(h, depth + 1);
    if (!st && close == '}') st = expect(h, ':', "expected ':' in a dict");
    if (!st && close == '}') st = skip_value(h, depth + 1);
    if (st) return st;
    if (peek(h) == ',') h->pos++;
    else if (peek(h) != close) return hdr_fail(h, "expected ',' or a closing bracket");
  }
  h->pos++;
  return LOOM_OK;
}

static loom_status parse_descr(struct hdr *h) {
  int c = peek(h);
  h->has_descr = 1;
  if (c == '\'' || c == '"') return parse_string(h, &h->descr, &h->descr_len);
  h->structured = 1;
  return skip_value(h, 0);
}

static loom_status parse_fortran(struct hdr *h) {
  const char *w;
  size_t len;
  parse_word(h, &w, &len);
  h->has_fortran = 1;
  if (len == 4 && !memcmp(w, "True", 4)) h->fortran = 1;
  else if (len == 5 && !memcmp(w, "False", 5)) h->fortran = 0;
  else return hdr_fail(h, "fortran_order is not True or False");
  return LOOM_OK;
}

/* One dimension: digits, optionally followed by Python 2's 'L'. */
static loom_status parse_dim(struct hdr *h, int64_t *v) {
  const char *w;
  size_t len;
  size_t at = (peek(h), h->pos);
  parse_word(h, &w, &len);
  if (len && (w[len - 1] == 'L' || w[len - 1] == 'l')) len--;
  if (len && w[0] == '-') return h->pos = at, hdr_fail(h, "a dimension is negative");
  if (!len) return hdr_fail(h, "expected a dimension");
  int64_t x = 0;
  for (size_t i = 0; i < len; i++) {
    if (w[i] < '0' || w[i] > '9') return h->pos = at, hdr_fail(h, "a dimension is not an integer");
    if (x > (INT64_MAX - (w[i] - '0')) / 10) return h->pos = at, hdr_fail(h, "a dimension overflows");
    x = x * 10 + (w[i] - '0');
  }
  *v = x;
  return LOOM_OK;
}

/*   shape := '(' ')' | '(' dim ',' ')' | '(' dim (',' dim)+ [','] ')'  */
static loom_status parse_shape(struct hdr *h) {
  loom_status st;
  int commas = 0;
  h->has_shape = 1;
  h->rank = 0;
  if ((st = expect(h, '(', "shape is not a tuple"))) return st;
  while (peek(h) != ')') {
    if (h->rank == LOOM_NPY_MAX_RANK) return hdr_fail(h, "shape has more than 8 dimensions");
    if ((st = parse_dim(h, &h->dims[h->rank]))) return st;
    h->rank++;
    if (peek(h) == ',') h->pos++, commas++;
    else if (peek(h) != ')') return hdr_fail(h, "expected ',' or ')' in the shape");
  }
  if (h->rank == 1 && !commas) return hdr_fail(h, "shape (n) is not a tuple (write (n,))");
  h->pos++;
  return LOOM_OK;
}

/* One "key: value" entry. */
static loom_status parse_entry(struct hdr *h) {
  const char *k;
  size_t len, at = (peek(h), h->pos);
  loom_status st = parse_string(h, &k, &len);
  if (!st) st = expect(h, ':', "expected ':' after a key");
  if (st) return st;
  int *seen = NULL;
  loom_status (*fn)(struct hdr *) = NULL;
  if (len == 5 && !memcmp(k, "descr", 5)) seen = &h->has_descr, fn = parse_descr;
  else if (len == 13 && !memcmp(k, "fortran_order", 13)) seen = &h->has_fortran, fn = parse_fortran;
  else if (len == 5 && !memcmp(k, "shape", 5)) seen = &h->has_shape, fn = parse_shape;
  else return h->pos = at, hdr_fail(h, "unexpected key (a .npy header has only descr, fortran_order and shape)");
  if (*seen) return h->pos = at, hdr_fail(h, "a key appears twice");
  return fn(h);
}

/*   dict := '{' [entry (',' entry)* [',']] '}' whitespace*  */
static loom_status parse_dict(struct hdr *h) {
  loom_status st = expect(h, '{', "the header is not a dict");
  if (st) return st;
  while (peek(h) != '}') {
    if ((st = parse_entry(h))) return st;
    if (peek(h) == ',') h->pos++;
    else if (peek(h) != '}') return hdr_fail(h, "expected ',' or '}'");
  }
  h->pos++;
  if (peek(h) != -1) return hdr_fail(h, "unexpected text after the dict");
  if (!h->has_descr) return hdr_fail(h, "the header has no 'descr'");
  if (!h->has_fortran) return hdr_fail(h, "the header has no 'fortran_order'");
  if (!h->has_shape) return hdr_fail(h, "the header has no 'shape'");
  return LOOM_OK;
}

/* The dtype a descr string names, or INVALID.  One-byte types take any
 * byte-order mark, wider ones must be little-endian ('<'). */
static loom_dtype descr_dtype(const char *d, size_t n) {
  char order = 0;
  if (n == 3 && strchr("<>|=", d[0])) order = d[0], d++, n--;
  if (n != 2) return LOOM_DT_INVALID;
  for (size_t i = 0; i < sizeof npy_types / sizeof npy_types[0]; i++) {
    const char *t = npy_types[i].descr + 1;
    if (d[0] != t[0] || d[1] != t[1]) continue;
    return t[1] == '1' || order == '<' ? npy_types[i].dt : LOOM_DT_INVALID;
  }
  return LOOM_DT_INVALID;
}

/* Printable, truncated copy of header text for messages. */
static void show(const char *s, size_t n, char out[40]) {
  size_t i = 0;
  for (; i < n && i < 32; i++) out[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
  if (n > 32) memcpy(out + i, "...", 3), i += 3;
  out[i] = 0;
}

static loom_status check_dtype(struct hdr *h, loom_dtype *dt) {
  char d[40];
  if (h->structured)
    return npy_fail(h->msg, LOOM_E_FORMAT, h->name,
                    "structured dtypes are not supported (" NPY_SUPPORTED ")");
  *dt = descr_dtype(h->descr, h->descr_len);
  show(h->descr, h->descr_len, d);
  if (!*dt)
    return npy_fail(h->msg, LOOM_E_FORMAT, h->name, "dtype '%s' is not supported (" NPY_SUPPORTED ")", d);
  if (h->fortran)
    return npy_fail(h->msg, LOOM_E_FORMAT, h->name,
                    "fortran_order is True; only C-order arrays are supported"
                    " (save numpy.ascontiguousarray(x))");
  return LOOM_OK;
}

/* ---- the reader ---- */

/* Magic, version and header length: *hstart, *hlen. */
static loom_status parse_prefix(const uint8_t *p, size_t size, const char *name, size_t *hstart,
                                size_t *hlen, char msg[LOOM_MSG_MAX]) {
  size_t m = size < NPY_MAGIC_LEN ? size : NPY_MAGIC_LEN;
  if (memcmp(p, NPY_MAGIC, m))
    return npy_fail(msg, LOOM_E_FORMAT, name, "not a .npy file (bad magic)");
  if (size < NPY_MAGIC_LEN + 2)
    return npy_fail(msg, LOOM_E_FORMAT, name, "file is %zu bytes, truncated before the header", size);
  unsigned major = p[6], minor = p[7];
  if (major < 1 || major > 3 || minor != 0)
    return npy_fail(msg, LOOM_E_FORMAT, name, ".npy version %u.%u is not supported (1.0, 2.0 and 3.0 only)",
                    major, minor);
  *hstart = major == 1 ? 10 : 12;
  if (size < *hstart)
    return npy_fail(msg, LOOM_E_FORMAT, name, "file is %zu bytes, truncated before the header", size);
  *hlen = major == 1 ? (size_t)(p[8] | p[9] << 8)
                     : (size_t)((uint32_t)p[8] | (uint32_t)p[9] << 8 | (uint32_t)p[10] << 16 |
                                (uint32_t)p[11] << 24);
  if (*hlen > NPY_MAX_HEADER)
    return npy_fail(msg, LOOM_E_FORMAT, name, "header length %zu exceeds the %u-byte limit", *hlen,
                    (unsigned)NPY_MAX_HEADER);
  if (size - *hstart < *hlen)
    return npy_fail(msg, LOOM_E_FORMAT, name, "file is %zu bytes, truncated in the %zu-byte header",
                    size, *hlen);
  return LOOM_OK;
}

static loom_status copy_data(const uint8_t *p, size_t size, size_t off, struct hdr *h,
                             loom_dtype dt, struct loom_npy *out) {
  uint64_t need;
  char shape[256];
  shape_repr(h->rank, h->dims, shape, sizeof shape);
  if (!data_bytes(h->rank, h->dims, npy_elem_size(dt), &need))
    return npy_fail(h->msg, LOOM_E_FORMAT, h->name, "shape %s of %s exceeds the %" PRIu64 "-byte limit",
                    shape, npy_dtype_text(dt), LOOM_NPY_MAX_BYTES);
  if (need != size - off)
    return npy_fail(h->msg, LOOM_E_FORMAT, h->name, "data is %zu bytes, but shape %s of %s needs %" PRIu64,
                    size - off, shape, npy_dtype_text(dt), need);
  out->data = malloc(need ? (size_t)need : 1);
  if (!out->data) return npy_fail(h->msg, LOOM_E_NOMEM, h->name, "out of memory for the data");
  memcpy(out->data, p + off, (size_t)need);
  out->bytes = (size_t)need;
  out->dtype = dt;
  out->rank = h->rank;
  memcpy(out->dims, h->dims, sizeof out->dims);
  return LOOM_OK;
}

loom_status loom_npy_parse(const void *bytes, size_t size, const char *name, struct loom_npy *out,
                           char msg[LOOM_MSG_MAX]) {
  const uint8_t *p = bytes;
  size_t hstart = 0, hlen = 0;
  loom_dtype dt = LOOM_DT_INVALID;
  memset(out, 0, sizeof *out);
  if (!name) name = "<memory>";
  loom_status st = parse_prefix(p, size, name, &hstart, &hlen, msg);
  if (st) return st;
  struct hdr h = {.s = (const char *)p + hstart, .n = hlen, .base = hstart, .name = name, .msg = msg};
  if ((st = parse_dict(&h)) || (st = check_dtype(&h, &dt))) return st;
  return copy_data(p, size, hstart + hlen, &h, dt, out);
}

loom_status loom_npy_read(const char *path, struct loom_npy *out, char msg[LOOM_MSG_MAX]) {
  uint8_t *bytes;
  size_t size;
  memset(out, 0, sizeof *out);
  loom_status st = loom_read_file(path, LOOM_NPY_MAX_BYTES + NPY_MAX_HEADER + 12, &bytes, &size, msg);
  if (st) return st;
  st = loom_npy_parse(bytes, size, path, out, msg);
  free(bytes);
  return st;
}

void loom_npy_free(struct loom_npy *n) {
  if (!n) return;
  free(n->data);
  memset(n, 0, sizeof *n);
}

/* ---- the writer ---- */

/* numpy's header: sorted keys, repr values, growth spaces, then spaces and
 * a newline up to a multiple of 64 bytes of file. */
static size_t build_header(loom_dtype dt, int rank, const int64_t *dims, char *out, size_t n) {
  char shape[256];
  shape_repr(rank, dims, shape, sizeof shape);
  int k = snprintf(out, n, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", npy_descr(dt), shape);
  if (rank > 0) {
    int digits = snprintf(NULL, 0, "%" PRId64, dims[0]);
    for (int i = digits; i < NPY_GROWTH_DIGITS; i++) out[k++] = ' ';
  }
  return (size_t)k;
}

static loom_status check_write_args(const char *name, loom_dtype dtype, int rank, const int64_t *dims,
                                    uint64_t *bytes, char msg[LOOM_MSG_MAX]) {
  if (!npy_descr(dtype))
    return npy_fail(msg, LOOM_E_INVALID, name, "dtype %s cannot be written (numpy has no such type)",
                    loom_dtype_name(dtype));
  if (rank < 0 || rank > LOOM_NPY_MAX_RANK)
    return npy_fail(msg, LOOM_E_INVALID, name, "rank %d is not in 0..%d", rank, LOOM_NPY_MAX_RANK);
  for (int i = 0; i < rank; i++)
    if (dims[i] < 0) return npy_fail(msg, LOOM_E_INVALID, name, "dims[%d] = %" PRId64 " is negative", i, dims[i]);
  if (!data_bytes(rank, dims, npy_elem_size(dtype), bytes))
    return npy_fail(msg, LOOM_E_INVALID, name, "the array exceeds the %" PRIu64 "-byte limit", LOOM_NPY_MAX_BYTES);
  return LOOM_OK;
}

loom_status loom_npy_encode(loom_dtype dtype, int rank, const int64_t *dims, const void *data,
                            uint8_t **out, size_t *size, char msg[LOOM_MSG_MAX]) {
  uint64_t bytes;
  char hdr[512];
  *out = NULL;
  *size = 0;
  loom_status st = check_write_args("npy", dtype, rank, dims, &bytes, msg);
  if (st) return st;
  size_t dict = build_header(dtype, rank, dims, hdr, sizeof hdr - NPY_ALIGN - 1);
  size_t prefix = dict + 1 + 10 > 65535 + 10 ? 12 : 10; /* 2.0 only for huge headers */
  size_t pad = NPY_ALIGN - (prefix + dict + 1) % NPY_ALIGN;
  size_t hlen = dict + pad + 1, total = prefix + hlen + (size_t)bytes;
  uint8_t *p = malloc(total);
  if (!p) return npy_fail(msg, LOOM_E_NOMEM, "npy", "out of memory");
  memcpy(p, NPY_MAGIC, NPY_MAGIC_LEN);
  p[6] = prefix == 10 ? 1 : 2;
  p[7] = 0;
  for (size_t i = 0; i < prefix - 8; i++) p[8 + i] = (uint8_t)(hlen >> (8 * i));
  memcpy(p + prefix, hdr, dict);
  memset(p + prefix + dict, ' ', pad);
  p[prefix + hlen - 1] = '\n';
  if (bytes) memcpy(p + prefix + hlen, data, (size_t)bytes);
  *out = p;
  *size = total;
  return LOOM_OK;
}

loom_status loom_npy_write(const char *path, loom_dtype dtype, int rank, const int64_t *dims,
                           const void *data, char msg[LOOM_MSG_MAX]) {
  uint8_t *p;
  size_t size;
  uint64_t bytes;
  loom_status st = check_write_args(path, dtype, rank, dims, &bytes, msg);
  if (st || (st = loom_npy_encode(dtype, rank, dims, data, &p, &size, msg))) return st;
  st = loom_outfile_write(path, p, size, msg);
  free(p);
  return st;
}
