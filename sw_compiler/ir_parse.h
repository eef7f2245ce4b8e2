/*
 * ir_parse.h - what the IR text parser's files share: the tokens and the
 * parser state, the lexer and token helpers (ir_parse_lex.c), used by the
 * grammar (ir_parse.c, which has the grammar in its opening comment).
 */
#ifndef LOOM_IR_PARSE_H
#define LOOM_IR_PARSE_H

#include "sw_compiler/compiler.h"

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

/* ir_parse_lex.c */
void ip_perr(struct parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int ip_hexval(int c);
void ip_next(struct parser *ps);
int ip_is_punct(struct parser *ps, char c);
int ip_is_ident(struct parser *ps, const char *s);
const char *ip_tok_desc(struct parser *ps);
int ip_expect(struct parser *ps, char c);
int ip_accept(struct parser *ps, char c);
int ip_is_float_text(const char *s);
int ip_num_token(struct parser *ps);
int ip_parse_int(struct parser *ps, int64_t *v);
int ip_parse_float(struct parser *ps, float *v);

#endif
