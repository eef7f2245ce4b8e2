/*
 * ir_parse_lex.c - the IR text's lexer (ir_parse.h): identifiers, %names
 * (plain or "quoted"), numbers with sign, quoted strings with escapes,
 * punctuation and "...", with line numbers for messages; and the small
 * token helpers the grammar is written with (expect, accept, integers and
 * floats with range and syntax checks).  ir_parse.c is the grammar.
 */
#include "sw_compiler/ir_parse.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void ip_perr(struct parser *ps, const char *fmt, ...) {
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

int ip_hexval(int c) {
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
      else if (*q == 'x' && ip_hexval(q[1]) >= 0 && ip_hexval(q[2]) >= 0) c = ip_hexval(q[1]) * 16 + ip_hexval(q[2]), q += 2;
      else if (*q == '"' || *q == '\\') c = *q;
      else { free(s); ip_perr(ps, "bad escape in string"); return NULL; }
      if (c == 0) { free(s); ip_perr(ps, "NUL in string"); return NULL; }
    }
    if (n + 2 > cap) s = ir_xrealloc(s, cap *= 2);
    s[n++] = (char)c;
  }
  if (*q != '"') { free(s); ip_perr(ps, "unterminated string"); return NULL; }
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

void ip_next(struct parser *ps) {
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
    if (e == q + 1) { ip_perr(ps, "expected a name after '%%'"); ps->tok.kind = TK_EOF; return; }
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

int ip_is_punct(struct parser *ps, char c) {
  return ps->tok.kind == TK_PUNCT && ps->tok.text[0] == c;
}

int ip_is_ident(struct parser *ps, const char *s) {
  return ps->tok.kind == TK_IDENT && !strcmp(ps->tok.text, s);
}

const char *ip_tok_desc(struct parser *ps) {
  switch (ps->tok.kind) {
  case TK_EOF: return "end of input";
  case TK_ELLIPSIS: return "'...'";
  default: return ps->tok.text;
  }
}

int ip_expect(struct parser *ps, char c) {
  if (ps->failed) return -1;
  if (!ip_is_punct(ps, c)) { ip_perr(ps, "expected '%c', found '%s'", c, ip_tok_desc(ps)); return -1; }
  ip_next(ps);
  return 0;
}

int ip_accept(struct parser *ps, char c) {
  if (!ip_is_punct(ps, c)) return 0;
  ip_next(ps);
  return 1;
}

int ip_is_float_text(const char *s) {
  return strpbrk(s, ".eE") != NULL || strstr(s, "inf") || strstr(s, "nan");
}

int ip_num_token(struct parser *ps) {
  return ps->tok.kind == TK_NUM || ip_is_ident(ps, "inf") || ip_is_ident(ps, "nan");
}

int ip_parse_int(struct parser *ps, int64_t *v) {
  if (ps->tok.kind != TK_NUM || ip_is_float_text(ps->tok.text)) {
    ip_perr(ps, "expected an integer, found '%s'", ip_tok_desc(ps));
    return -1;
  }
  errno = 0;
  char *end;
  long long x = strtoll(ps->tok.text, &end, 10);
  if (errno || *end) { ip_perr(ps, "integer '%s' out of range", ps->tok.text); return -1; }
  *v = x;
  ip_next(ps);
  return 0;
}

int ip_parse_float(struct parser *ps, float *v) {
  if (!ip_num_token(ps)) { ip_perr(ps, "expected a number, found '%s'", ip_tok_desc(ps)); return -1; }
  char *end;
  *v = strtof(ps->tok.text, &end);
  if (*end) { ip_perr(ps, "bad number '%s'", ps->tok.text); return -1; }
  ip_next(ps);
  return 0;
}

