/*
 * asm_internal.h - what the assembler's and disassembler's files share:
 * the syntax tables (asm_syntax.c), the line lexer and the assembler
 * context (asm.c), and the instruction parser (asm_insn.c).
 *
 * The syntax of every instruction is data, not code: one table row per
 * keyed field says its key, how many values it takes, which struct
 * loom_insn members they land in, their ISA names and widths and their
 * defaults.  The assembler reads the table to parse, the disassembler reads
 * the same table to print, so the two cannot drift apart and the round
 * trip is exact by construction.
 */
#ifndef LOOM_ASM_INTERNAL_H
#define LOOM_ASM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "asm.h"
#include "core.h"
#include "loom/isa.h"

/* ---- asm_syntax.c: the tables ---- */

/* One value of a keyed field: a member of struct loom_insn. */
struct asm_part {
  const char *isa;      /* ISA field name (what loom_insn_encode reports) */
  uint16_t off;         /* offsetof(struct loom_insn, member) */
  uint8_t is_signed;    /* int32_t member, two's complement field */
  uint8_t width;        /* bits in the encoding */
  int32_t def;          /* value when the key is absent */
};

struct asm_field {
  const char *key;      /* "sram", "iter", ... */
  const char *form;     /* for messages: "iter=OUT,IN" */
  uint8_t n;            /* values: 1, 2 or 4 */
  char sep;             /* between values: ',' or ':' */
  uint8_t required;     /* no default: must be written */
  struct asm_part part[4];
};

/* A 1-bit field written as a word (pop_prev, reset, ...). */
struct asm_flag {
  const char *word;
  uint16_t off;
};

enum asm_operand {
  ASM_OPND_NONE = 0,
  ASM_OPND_BUFFER,      /* load: uop | wgt | inp | acc | par | lut */
  ASM_OPND_ALU,         /* alu: add | max | ... */
  ASM_OPND_QUEUE,       /* nop: load | compute | store */
  ASM_OPND_COUNT
};

struct asm_op {
  const char *mnemonic;
  enum asm_operand operand;
  uint16_t operand_off;           /* member the operand sets */
  const struct asm_field *fields; /* terminated by key == NULL */
  const struct asm_flag *flags;   /* terminated by word == NULL */
};

/* Indexed by opcode. */
extern const struct asm_op loom_asm_ops[LOOM_OP_COUNT];

/* Names of the positional operand's values, e.g. "uop" for buffer 0;
 * NULL when out of range. */
const char *asm_operand_name(enum asm_operand kind, uint32_t v);
/* Value of an operand name of length len (case-insensitive); -1 if none. */
int asm_operand_value(enum asm_operand kind, const char *s, size_t len);

/* Keyword tables of the directives, indexed by their enums. */
extern const char *const asm_bufkind_names[LOOM_BUFKIND_COUNT]; /* const, work */
extern const char *const asm_role_names[LOOM_ROLE_COUNT];       /* internal, input, output */
extern const char *const asm_layout_names[LOOM_LAYOUT_COUNT];   /* plain, nchwc, nc */

/* Index of s[0..len) in `names` (case-insensitive), or -1. */
int asm_lookup(const char *const *names, int count, const char *s, size_t len);

/* Member access by table offset. */
static inline int64_t asm_get(const struct loom_insn *in, const struct asm_part *p) {
  const char *b = (const char *)in + p->off;
  return p->is_signed ? (int64_t) * (const int32_t *)b : (int64_t) * (const uint32_t *)b;
}
static inline void asm_set(struct loom_insn *in, const struct asm_part *p, int64_t v) {
  char *b = (char *)in + p->off;
  if (p->is_signed) *(int32_t *)b = (int32_t)v;
  else *(uint32_t *)b = (uint32_t)v;
}

/* True when s can be written unquoted as a name. */
int asm_name_is_plain(const char *s);

/* ---- asm_lex.c: the line lexer and messages ---- */

enum asm_tok_kind {
  ASM_TOK_END = 0,      /* end of line (or comment) */
  ASM_TOK_WORD,         /* run of characters other than space and = , : [ ] ; # " */
  ASM_TOK_STRING,       /* "quoted", escapes decoded */
  ASM_TOK_PUNCT,        /* one of = , : [ ] */
  ASM_TOK_COUNT
};

struct asm_tok {
  enum asm_tok_kind kind;
  const char *text;     /* not NUL-terminated; `len` bytes */
  size_t len;
  int col;              /* 1-based */
};

/* Growable byte array. */
struct asm_bytes {
  uint8_t *p;
  size_t len, cap;
};

/* A program being assembled: records in source order, names kept as
 * strings until the file is laid out (see asm.c).  Named records start
 * with their name, which find_name() relies on. */
struct asm_buffer {
  char *name;
  uint32_t kind;        /* enum loom_buffer_kind */
  uint64_t size;
  int sized;            /* size written in the source */
  uint32_t align;
  struct asm_bytes data; /* const: the data lines */
  int line, col;
};

struct asm_tensor {
  char *name;
  struct loom_file_tensor t; /* t.name set at layout */
};

struct asm_job {
  char *name;
  uint32_t segments[8];
  uint32_t first, count;
  int line, col;
};

/* An attribute of a kernel step (asm_kernel.c). */
struct asm_kattr {
  char *name;
  uint32_t kind;        /* enum loom_kattr_kind */
  uint64_t value;       /* INT, FLOAT (bits), TENSOR (index) */
  char *s;              /* STRING */
  struct asm_bytes list; /* INTS (int64), FLOATS (float), STRINGS (char * each) */
  size_t count;
};

/* A kernel step's record (format 1.3) before layout. */
struct asm_kernel {
  char *op;
  uint32_t opset, flags;
  uint32_t *io;         /* n_in operands then n_out results */
  uint32_t n_in, n_out;
  struct asm_kattr *attrs;
  size_t nattrs, cap_attrs;
};

struct asm_step {
  struct loom_file_step s;
  struct asm_bytes params;
  struct asm_kernel *k; /* a kernel step's record, else NULL */
};

struct asm_ctx {
  /* messages */
  const char *file;
  char *msg;
  int line;
  /* the current line and its lexer */
  const char *src;
  size_t len, pos;
  char *scratch;        /* decoded strings of the line */
  size_t scratch_cap, scratch_used;
  int has_peek;
  struct asm_tok peeked;
  /* the program */
  uint32_t hash;
  int config_line;      /* line of .config, 0 if none */
  int has_override;
  uint32_t override_hash;
  struct asm_buffer *buffers;
  size_t nbuffers, cap_buffers;
  struct asm_tensor *tensors;
  size_t ntensors, cap_tensors;
  struct asm_job *jobs;
  size_t njobs, cap_jobs;
  struct asm_step *steps;
  size_t nsteps, cap_steps;
  struct asm_bytes insns;
  uint64_t data_bytes;  /* DATA the program asks for so far (LOOM_ASM_MAX_DATA) */
  int explicit_steps;
  /* where data lines and instructions go; -1 when nowhere */
  long cur_buffer, cur_step, cur_job;
  long cur_kernel;      /* the kernel step .attr lines belong to, -1 when none */
};

/* Formats "file:line:col: what" into the message; returns -1. */
int asm_error(struct asm_ctx *a, int col, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Next token of the line (-1 after a lexical error, message set). */
int asm_next(struct asm_ctx *a, struct asm_tok *t);
int asm_peek(struct asm_ctx *a, struct asm_tok *t);
/* Parses t as an integer (decimal or 0x hex, optional sign) in [lo, hi];
 * `what` names it in the message. */
int asm_int(struct asm_ctx *a, const struct asm_tok *t, int64_t lo, int64_t hi, const char *what,
            int64_t *v);
/* Parses t as an integer without a range check; 0 on success. */
int asm_parse_int(const struct asm_tok *t, int64_t *v);
/* t is the word (case-insensitive). */
int asm_tok_is(const struct asm_tok *t, const char *word);
/* Starts lexing a new line; -1 when out of memory or the line holds a
 * NUL byte. */
int asm_begin_line(struct asm_ctx *a, const char *line, size_t len);
/* Consumes a following '=' if there is one; 1 when it did. */
int asm_take_eq(struct asm_ctx *a);
/* Error unless the line has no more tokens. */
int asm_expect_end(struct asm_ctx *a);

/* ---- asm_insn.c: one instruction line ---- */

/* Parses the rest of a line whose first token `mn` is a mnemonic (or
 * ".insn") into 16 encoded bytes; -1 with the message set. */
int asm_insn(struct asm_ctx *a, const struct asm_tok *mn, uint8_t out[LOOM_INSN_BYTES]);

/* Whether `mn` names an instruction (a mnemonic or .insn). */
int asm_is_insn(const struct asm_tok *mn);

/* ---- asm_kernel.c: kernel steps (format 1.3) ---- */

/* The rest of `.step kernel OP [opset=N] [in=T,..] [out=T,..] [dynamic]`. */
int asm_step_kernel(struct asm_ctx *a, struct asm_step *s);
/* `.attr NAME KIND VALUE...` for the last kernel step. */
int asm_dir_attr(struct asm_ctx *a, const struct asm_tok *d);
/* Lays out the kernel records of every kernel step (DATA, KERNELS). */
void asm_add_kernels(struct asm_ctx *a, struct loom_file_builder *b);
void asm_kernel_free(struct asm_kernel *k);
/* Counts n more bytes of DATA against LOOM_ASM_MAX_DATA (asm.c). */
int asm_count_data(struct asm_ctx *a, const struct asm_tok *d, uint64_t n);

/* ---- asm_lex.c: readers and growing arrays for the directives ---- */

/* Appends n bytes (zeros when src is NULL); -1 when out of memory. */
int asm_bytes_put(struct asm_bytes *b, const void *src, size_t n);
/* Appends a zeroed element to an array; NULL when out of memory. */
void *asm_push(void **arr, size_t *n, size_t *cap, size_t elem);
#define PUSH(a, what) asm_push((void **)&(a)->what, &(a)->n##what, &(a)->cap_##what, sizeof *(a)->what)
int asm_nomem(struct asm_ctx *a);
/* Index of the record named s[0..len) in an array whose records start with
 * their `char *name`; -1 when there is none. */
long asm_find_name(const void *arr, size_t n, size_t elem, const char *s, size_t len);
#define FIND(a, what, t) asm_find_name((a)->what, (a)->n##what, sizeof *(a)->what, (t)->text, (t)->len)
/* A name: a word or a string, non-empty; *out is a malloc'd copy. */
int asm_read_name(struct asm_ctx *a, struct asm_tok *t, const char *what, char **out);
/* A keyword from `names`; `what` lists the choices for the message. */
int asm_read_keyword(struct asm_ctx *a, const char *const *names, int count, const char *what, int *v);
int asm_read_int(struct asm_ctx *a, int64_t lo, int64_t hi, const char *what, int64_t *v, int *col);
/* An option key: a word followed by '='; *end is set at the end of the line. */
int asm_read_key(struct asm_ctx *a, struct asm_tok *t, int *end);

#endif
