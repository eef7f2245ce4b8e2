/*
 * asm_lex.c - the assembler's line lexer, number parsing, messages, and the
 * token readers and growing arrays its directives use.
 *
 * Loom assembly is line-oriented: one directive or instruction per line,
 * comments from ';' or '#' to the end of the line.  A line splits into
 *
 *   words    runs of anything but blanks and  = , : [ ] ; # "
 *   strings  "double quoted", with \" \\ \n \t \xHH escapes
 *   punctuation  = , : [ ]
 *
 * so `pad=1,0,2,0`, `pad = 1, 0, 2, 0` and `[64, 64]` lex alike, and a name
 * with any other character (ONNX names have '/', '.', ':') is a word or,
 * failing that, a string.  Decoded strings go into a per-line scratch
 * buffer no longer than the line, so a token is always a (pointer, length)
 * pair and nothing is allocated per token.  Every message carries
 * file:line:column, the column counted in bytes from 1.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "asm_internal.h"

int asm_error(struct asm_ctx *a, int col, const char *fmt, ...) {
  if (!a->msg) return -1;
  int n = snprintf(a->msg, LOOM_MSG_MAX, "%s:%d:%d: ", a->file, a->line, col);
  if (n < 0 || n >= LOOM_MSG_MAX) return -1;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(a->msg + n, (size_t)(LOOM_MSG_MAX - n), fmt, ap);
  va_end(ap);
  return -1;
}

int asm_begin_line(struct asm_ctx *a, const char *line, size_t len) {
  a->src = line;
  a->len = len;
  a->pos = 0;
  a->has_peek = 0;
  a->scratch_used = 0;
  if (memchr(line, 0, len))
    return asm_error(a, (int)((const char *)memchr(line, 0, len) - line) + 1, "NUL byte in the source");
  if (len + 1 > a->scratch_cap) {
    char *p = realloc(a->scratch, len + 1);
    if (!p) return asm_error(a, 1, "out of memory");
    a->scratch = p;
    a->scratch_cap = len + 1;
  }
  return 0;
}

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f'; }
static int is_special(char c) { return c && strchr("=,:[];#\"", c); }

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* One escape after a backslash at src[pos]; the decoded byte in *c. */
static int lex_escape(struct asm_ctx *a, char *c) {
  int col = (int)a->pos + 1;
  char e = ++a->pos < a->len ? a->src[a->pos] : 0;
  a->pos++;
  switch (e) {
  case '"': *c = '"'; return 0;
  case '\\': *c = '\\'; return 0;
  case 'n': *c = '\n'; return 0;
  case 't': *c = '\t'; return 0;
  case 'x': {
    int h = a->pos + 1 < a->len ? hex_digit(a->src[a->pos]) : -1;
    int l = h >= 0 ? hex_digit(a->src[a->pos + 1]) : -1;
    if (h < 0 || l < 0) return asm_error(a, col, "\\x needs two hex digits");
    if (!(h | l)) return asm_error(a, col, "\\x00: names cannot hold a NUL byte");
    a->pos += 2;
    *c = (char)(h << 4 | l);
    return 0;
  }
  default: return asm_error(a, col, "unknown escape (use \\\" \\\\ \\n \\t or \\xHH)");
  }
}

static int lex_string(struct asm_ctx *a, struct asm_tok *t) {
  char *out = a->scratch + a->scratch_used;
  size_t n = 0;
  a->pos++;
  for (;;) {
    if (a->pos >= a->len) return asm_error(a, t->col, "unterminated string");
    char c = a->src[a->pos];
    if (c == '"') break;
    if (c == '\\') {
      if (lex_escape(a, &c)) return -1;
    } else {
      a->pos++;
    }
    out[n++] = c;
  }
  a->pos++;
  a->scratch_used += n;
  t->kind = ASM_TOK_STRING;
  t->text = out;
  t->len = n;
  return 0;
}

static int lex(struct asm_ctx *a, struct asm_tok *t) {
  while (a->pos < a->len && is_blank(a->src[a->pos])) a->pos++;
  t->col = (int)a->pos + 1;
  t->text = a->src + a->pos;
  t->len = 0;
  char c = a->pos < a->len ? a->src[a->pos] : ';';
  if (c == ';' || c == '#') {
    a->pos = a->len;
    t->kind = ASM_TOK_END;
    return 0;
  }
  if (c == '"') return lex_string(a, t);
  if (is_special(c)) {
    a->pos++;
    t->kind = ASM_TOK_PUNCT;
    t->len = 1;
    return 0;
  }
  while (a->pos < a->len && !is_blank(a->src[a->pos]) && !is_special(a->src[a->pos])) a->pos++;
  t->kind = ASM_TOK_WORD;
  t->len = (size_t)(a->src + a->pos - t->text);
  return 0;
}

int asm_next(struct asm_ctx *a, struct asm_tok *t) {
  if (a->has_peek) {
    *t = a->peeked;
    a->has_peek = 0;
    return 0;
  }
  return lex(a, t);
}

int asm_peek(struct asm_ctx *a, struct asm_tok *t) {
  if (!a->has_peek) {
    if (lex(a, &a->peeked)) return -1;
    a->has_peek = 1;
  }
  *t = a->peeked;
  return 0;
}

int asm_take_eq(struct asm_ctx *a) {
  struct asm_tok t;
  if (asm_peek(a, &t) || t.kind != ASM_TOK_PUNCT || t.text[0] != '=') return 0;
  a->has_peek = 0;
  return 1;
}

int asm_expect_end(struct asm_ctx *a) {
  struct asm_tok t;
  if (asm_next(a, &t)) return -1;
  if (t.kind != ASM_TOK_END)
    return asm_error(a, t.col, "unexpected '%.*s' at the end of the line", (int)t.len, t.text);
  return 0;
}

int asm_tok_is(const struct asm_tok *t, const char *word) {
  return t->kind == ASM_TOK_WORD && strlen(word) == t->len && !strncasecmp(word, t->text, t->len);
}

/*   int := ['-' | '+'] (digits | '0x' hexdigits)  */
int asm_parse_int(const struct asm_tok *t, int64_t *v) {
  const char *s = t->text, *e = t->text + t->len;
  int neg = 0, base = 10;
  uint64_t x = 0;
  if (t->kind != ASM_TOK_WORD) return -1;
  if (s < e && (*s == '-' || *s == '+')) neg = *s++ == '-';
  if (e - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) base = 16, s += 2;
  if (s == e) return -1;
  for (; s < e; s++) {
    int d = hex_digit(*s);
    if (d < 0 || d >= base) return -1;
    if (x > (UINT64_MAX - (uint64_t)d) / (uint64_t)base) return -1;
    x = x * (uint64_t)base + (uint64_t)d;
  }
  if (x > (uint64_t)INT64_MAX + neg) return -1;
  *v = neg ? (int64_t)(0 - x) : (int64_t)x;
  return 0;
}

int asm_int(struct asm_ctx *a, const struct asm_tok *t, int64_t lo, int64_t hi, const char *what,
            int64_t *v) {
  if (t->kind == ASM_TOK_END) return asm_error(a, t->col, "expected %s", what);
  if (asm_parse_int(t, v))
    return asm_error(a, t->col, "%s '%.*s' is not an integer in %lld..%lld", what, (int)t->len,
                     t->text, (long long)lo, (long long)hi);
  if (*v < lo || *v > hi)
    return asm_error(a, t->col, "%s %lld is not in %lld..%lld", what, (long long)*v, (long long)lo,
                     (long long)hi);
  return 0;
}

/* ---- readers and growing arrays, for the directives of asm.c ---- */

int asm_bytes_put(struct asm_bytes *b, const void *src, size_t n) {
  if (n == 0) return 0;
  if (n > SIZE_MAX - b->len) return -1;
  if (b->len + n > b->cap) {
    size_t c = b->cap ? b->cap : 256;
    while (c < b->len + n) {
      if (c > SIZE_MAX / 2) return -1;
      c *= 2;
    }
    uint8_t *p = realloc(b->p, c);
    if (!p) return -1;
    b->p = p;
    b->cap = c;
  }
  if (src) memcpy(b->p + b->len, src, n);
  else memset(b->p + b->len, 0, n);
  b->len += n;
  return 0;
}

/* Appends a zeroed element to an array; NULL when out of memory. */
void *asm_push(void **arr, size_t *n, size_t *cap, size_t elem) {
  if (*n == *cap) {
    size_t c = *cap ? *cap * 2 : 16;
    void *p = realloc(*arr, c * elem);
    if (!p) return NULL;
    *arr = p;
    *cap = c;
  }
  void *e = (char *)*arr + (*n)++ * elem;
  memset(e, 0, elem);
  return e;
}


int asm_nomem(struct asm_ctx *a) { return asm_error(a, 1, "out of memory"); }

/* Index of the record named s[0..len) in an array whose records start with
 * their `char *name`; -1 when there is none. */
long asm_find_name(const void *arr, size_t n, size_t elem, const char *s, size_t len) {
  for (size_t i = 0; i < n; i++) {
    const char *name = *(char *const *)((const char *)arr + i * elem);
    if (strlen(name) == len && !memcmp(name, s, len)) return (long)i;
  }
  return -1;
}


/* A name: a word or a string, non-empty; *out is a malloc'd copy. */
int asm_read_name(struct asm_ctx *a, struct asm_tok *t, const char *what, char **out) {
  if (asm_next(a, t)) return -1;
  if ((t->kind != ASM_TOK_WORD && t->kind != ASM_TOK_STRING) || t->len == 0)
    return asm_error(a, t->col, "expected %s name", what);
  *out = malloc(t->len + 1);
  if (!*out) return asm_nomem(a);
  memcpy(*out, t->text, t->len);
  (*out)[t->len] = 0;
  return 0;
}

/* A keyword from `names`; `what` lists the choices for the message. */
int asm_read_keyword(struct asm_ctx *a, const char *const *names, int count, const char *what,
                        int *v) {
  struct asm_tok t;
  if (asm_next(a, &t)) return -1;
  *v = t.kind == ASM_TOK_WORD ? asm_lookup(names, count, t.text, t.len) : -1;
  if (*v < 0) return asm_error(a, t.col, "expected %s", what);
  return 0;
}

int asm_read_int(struct asm_ctx *a, int64_t lo, int64_t hi, const char *what, int64_t *v, int *col) {
  struct asm_tok t;
  if (asm_next(a, &t)) return -1;
  if (col) *col = t.col;
  return asm_int(a, &t, lo, hi, what, v);
}

/* An option key: a word followed by '='. */
int asm_read_key(struct asm_ctx *a, struct asm_tok *t, int *end) {
  *end = 0;
  if (asm_next(a, t)) return -1;
  *end = t->kind == ASM_TOK_END;
  if (*end) return 0;
  if (t->kind != ASM_TOK_WORD || !asm_take_eq(a))
    return asm_error(a, t->col, "expected key=value, found '%.*s'", (int)t->len, t->text);
  return 0;
}
