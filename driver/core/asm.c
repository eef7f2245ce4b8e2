/*
 * asm.c - the assembler: directives, the program model, and file layout.
 *
 * A source is read line by line (asm_lex.c).  Directives build a program
 * model in source order: buffers, tensors, jobs (each with its instructions,
 * parsed by asm_insn.c), steps.  Data lines (.byte .word .uop .zero) go to
 * the const buffer or host step declared last; instructions go to the job
 * declared last; any other directive closes both.  References by name must
 * come after the declaration.
 *
 * Only when the whole source is read is the file laid out, in a canonical
 * order that does not depend on how the source interleaves its directives:
 * buffer names then tensor names into STRTAB, const data in buffer order
 * (64-byte aligned) then host-step parameters (8-byte aligned) into DATA,
 * the jobs' instructions back to back.  The disassembler prints records in
 * index order, so assembling its output reproduces the file byte for byte.
 * Without any .steps/.step directive the program runs every job once, in
 * order (one JOB step per .job).
 *
 * The finished bytes go through loom_file_parse() before the builder is
 * handed out: the assembler never produces a file the loader would refuse.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asm_internal.h"
#include "readfile.h"

#define ASM_MAX_SOURCE (UINT64_C(1) << 31)

/* ---- closing the data and job contexts ---- */

static int error_at(struct asm_ctx *a, int line, int col, const char *what, const char *name) {
  a->line = line;
  return asm_error(a, col, what, name);
}

static int close_contexts(struct asm_ctx *a) {
  if (a->cur_buffer >= 0) {
    struct asm_buffer *b = &a->buffers[a->cur_buffer];
    if (!b->sized) b->size = b->data.len;
    if (!b->size)
      return error_at(a, b->line, b->col, "const buffer '%s' has neither a size nor data", b->name);
  }
  if (a->cur_job >= 0 && a->jobs[a->cur_job].count == 0) {
    struct asm_job *j = &a->jobs[a->cur_job];
    return error_at(a, j->line, j->col, "job '%s' has no instructions", j->name);
  }
  a->cur_buffer = a->cur_step = a->cur_job = a->cur_kernel = -1;
  return 0;
}

/* ---- directives ---- */

/* A hash (0x...), a configuration name or a configuration file's path:
 * 0, or 1 for an unknown name, -1 for a bad file (message in why). */
static int config_hash(const struct asm_tok *t, uint32_t *hash, char why[LOOM_MSG_MAX]) {
  char name[256];
  int64_t v;
  struct loom_hw_config c;
  if (t->kind == ASM_TOK_WORD && t->len > 2 && t->text[0] == '0' && !asm_parse_int(t, &v) &&
      v >= 0 && v <= UINT32_MAX) {
    *hash = (uint32_t)v;
    return 0;
  }
  snprintf(name, sizeof name, "%.*s", (int)(t->len < 255 ? t->len : 255), t->text);
  int rc = t->len < 255 ? loom_hw_config_resolve(name, &c, why, LOOM_MSG_MAX) : 1;
  if (rc == 1) {
    char list[128];
    loom_hw_config_names(list, sizeof list);
    snprintf(why, LOOM_MSG_MAX, "unknown configuration '%.63s' (%s, a configuration file, or a hash 0x...)",
             name, list);
  }
  if (rc == 0) *hash = c.hash;
  return rc;
}

static int config_value(struct asm_ctx *a, const struct asm_tok *t, uint32_t *hash) {
  char why[LOOM_MSG_MAX];
  return config_hash(t, hash, why) ? asm_error(a, t->col, "%s", why) : 0;
}

/*   .config NAME | .config 0xHASH  */
static int dir_config(struct asm_ctx *a, const struct asm_tok *d) {
  struct asm_tok t;
  if (a->config_line)
    return asm_error(a, d->col, "a second .config (the first is on line %d)", a->config_line);
  if (asm_next(a, &t)) return -1;
  if (t.kind == ASM_TOK_END) return asm_error(a, t.col, ".config needs a configuration name");
  if (config_value(a, &t, &a->hash)) return -1;
  a->config_line = a->line;
  return asm_expect_end(a);
}

static int buffer_options(struct asm_ctx *a, struct asm_buffer *b) {
  for (;;) {
    struct asm_tok k, v;
    int end;
    int64_t x;
    if (asm_peek(a, &k)) return -1;
    if (k.kind == ASM_TOK_WORD && !asm_parse_int(&k, &x) && !b->sized) {
      if (asm_read_int(a, 1, (int64_t)LOOM_FILE_MAX_SIZE, "buffer size", &x, NULL)) return -1;
      b->size = (uint64_t)x;
      b->sized = 1;
      continue;
    }
    if (asm_read_key(a, &k, &end)) return -1;
    if (end) return 0;
    if (!asm_tok_is(&k, "align"))
      return asm_error(a, k.col, ".buffer has no option '%.*s' (align=BYTES)", (int)k.len, k.text);
    if (asm_next(a, &v) || asm_int(a, &v, 64, INT64_C(1) << 31, "align", &x)) return -1;
    if (x & (x - 1)) return asm_error(a, v.col, "align %lld is not a power of two", (long long)x);
    b->align = (uint32_t)x;
  }
}

/* Adds n bytes to the program's DATA, refusing to pass LOOM_ASM_MAX_DATA. */
int asm_count_data(struct asm_ctx *a, const struct asm_tok *d, uint64_t n) {
  if (n > LOOM_ASM_MAX_DATA - a->data_bytes)
    return asm_error(a, d->col, "%.*s: %llu more bytes of constant data would take the program "
                     "past the assembler's limit of %llu bytes (%llu so far)",
                     (int)d->len, d->text, (unsigned long long)n,
                     (unsigned long long)LOOM_ASM_MAX_DATA, (unsigned long long)a->data_bytes);
  a->data_bytes += n;
  return 0;
}

/*   .buffer NAME (const|work) [SIZE] [align=BYTES]  */
static int dir_buffer(struct asm_ctx *a, const struct asm_tok *d) {
  struct asm_tok t;
  char *name;
  int kind;
  if (asm_read_name(a, &t, "a buffer", &name)) return -1;
  if (FIND(a, buffers, &t) >= 0) {
    free(name);
    return asm_error(a, t.col, "buffer '%.*s' is already declared", (int)t.len, t.text);
  }
  struct asm_buffer *b = PUSH(a, buffers);
  if (!b) return free(name), asm_nomem(a);
  *b = (struct asm_buffer){.name = name, .align = 64, .line = a->line, .col = d->col};
  if (asm_read_keyword(a, asm_bufkind_names, LOOM_BUFKIND_COUNT, "the buffer kind (const or work)", &kind))
    return -1;
  b->kind = (uint32_t)kind;
  if (buffer_options(a, b)) return -1;
  if (b->kind == LOOM_BUFKIND_WORK && !b->sized)
    return asm_error(a, d->col, "work buffer '%s' needs a size", b->name);
  if (b->kind == LOOM_BUFKIND_CONST) {
    if (b->sized && asm_count_data(a, d, b->size)) return -1;
    a->cur_buffer = (long)(a->nbuffers - 1);
  }
  return 0;
}

/*   dims := '[' [int (',' int)*] ']'   */
static int tensor_dims(struct asm_ctx *a, struct loom_file_tensor *t, int *cols) {
  struct asm_tok p;
  if (asm_next(a, &p)) return -1;
  if (p.kind != ASM_TOK_PUNCT || p.text[0] != '[') return asm_error(a, p.col, "expected dims: [D0,D1,...]");
  if (asm_peek(a, &p)) return -1;
  if (p.kind == ASM_TOK_PUNCT && p.text[0] == ']') return asm_next(a, &p);
  for (;;) {
    int64_t v;
    if (t->rank == LOOM_MAX_RANK) return asm_error(a, p.col, "more than %d dims", LOOM_MAX_RANK);
    if (asm_read_int(a, INT64_MIN, INT64_MAX, "a dimension", &v, &cols[8 + 2 * t->rank])) return -1;
    t->dims[t->rank++] = v;
    if (asm_next(a, &p)) return -1;
    if (p.kind == ASM_TOK_PUNCT && p.text[0] == ']') return 0;
    if (p.kind != ASM_TOK_PUNCT || p.text[0] != ',') return asm_error(a, p.col, "expected ',' or ']' in dims");
  }
}

static int tensor_float(struct asm_ctx *a, const struct asm_tok *v, float *out) {
  char buf[64], *end;
  if (v->kind != ASM_TOK_WORD || v->len >= sizeof buf) return asm_error(a, v->col, "expected a number");
  memcpy(buf, v->text, v->len);
  buf[v->len] = 0;
  *out = strtof(buf, &end);
  if (*end || end == buf || !isfinite(*out)) return asm_error(a, v->col, "'%s' is not a finite number", buf);
  return 0;
}

static int tensor_option(struct asm_ctx *a, struct loom_file_tensor *t, const struct asm_tok *k, int *cols) {
  struct asm_tok v;
  int64_t x;
  int e;
  if (asm_next(a, &v)) return -1;
  if (asm_tok_is(k, "scale")) {
    cols[offsetof(struct loom_file_tensor, scale) / 4] = v.col;
    return tensor_float(a, &v, &t->scale);
  }
  if (asm_tok_is(k, "zp")) {
    cols[offsetof(struct loom_file_tensor, zero_point) / 4] = v.col;
    if (asm_int(a, &v, INT32_MIN, INT32_MAX, "zp", &x)) return -1;
    t->zero_point = (int32_t)x;
  } else if (asm_tok_is(k, "block")) {
    cols[offsetof(struct loom_file_tensor, layout_block) / 4] = v.col;
    if (asm_int(a, &v, 1, UINT32_MAX, "block", &x)) return -1;
    t->layout_block = (uint32_t)x;
  } else if (asm_tok_is(k, "user_dtype")) {
    cols[offsetof(struct loom_file_tensor, user_dtype) / 4] = v.col;
    if ((e = asm_lookup(loom_dtype_short_names, LOOM_FILE_DT_COUNT_1_3, v.text, v.len)) < 1 || v.kind != ASM_TOK_WORD)
      return asm_error(a, v.col, "expected a dtype (i8, u8, i32, f32, i64, bool, ...)");
    t->user_dtype = (uint32_t)e;
  } else if (asm_tok_is(k, "layout")) {
    cols[offsetof(struct loom_file_tensor, layout) / 4] = v.col;
    if ((e = asm_lookup(asm_layout_names, LOOM_LAYOUT_COUNT, v.text, v.len)) < 0 || v.kind != ASM_TOK_WORD)
      return asm_error(a, v.col, "expected a layout (plain, nchwc or nc)");
    t->layout = (uint32_t)e;
  } else {
    return asm_error(a, k->col, ".tensor has no option '%.*s' (scale= zp= user_dtype= layout= block=)",
                     (int)k->len, k->text);
  }
  return 0;
}

/* Role, buffer, offset and dtype: the positional part after the name. */
static int tensor_head(struct asm_ctx *a, struct loom_file_tensor *t, int *cols) {
  struct asm_tok b;
  int64_t off;
  int v;
  if (asm_read_keyword(a, asm_role_names, LOOM_ROLE_COUNT, "the role (input, output or internal)", &v)) return -1;
  t->role = (uint32_t)v;
  if (asm_next(a, &b)) return -1;
  long bi = (b.kind == ASM_TOK_WORD || b.kind == ASM_TOK_STRING) ? FIND(a, buffers, &b) : -1;
  if (bi < 0) return asm_error(a, b.col, "buffer '%.*s' is not declared", (int)b.len, b.text);
  t->buffer = (uint32_t)bi;
  if (asm_read_int(a, 0, INT64_MAX, "the tensor's offset", &off, &cols[20])) return -1;
  t->offset = (uint64_t)off;
  if (asm_peek(a, &b)) return -1;
  cols[2] = b.col;
  if (asm_read_keyword(a, loom_dtype_short_names + 1, LOOM_FILE_DT_COUNT_1_3 - 1,
                       "a dtype (i8, u8, i32, f32, i64, bool, i16, u16, u32, u64, f16, bf16 or f64)", &v))
    return -1;
  t->dtype = t->user_dtype = (uint32_t)v + 1;
  return 0;
}

/*   .tensor NAME ROLE BUFFER OFFSET DTYPE DIMS [scale=F] [zp=N]
 *           [user_dtype=T] [layout=L] [block=N]  */
static int dir_tensor(struct asm_ctx *a, const struct asm_tok *d) {
  struct asm_tok t;
  char *name;
  int cols[26] = {0}, end;
  if (asm_read_name(a, &t, "a tensor", &name)) return -1;
  if (FIND(a, tensors, &t) >= 0) {
    free(name);
    return asm_error(a, t.col, "tensor '%.*s' is already declared", (int)t.len, t.text);
  }
  struct asm_tensor *at = PUSH(a, tensors);
  if (!at) return free(name), asm_nomem(a);
  at->name = name;
  if (tensor_head(a, &at->t, cols) || tensor_dims(a, &at->t, cols)) return -1;
  while (!asm_read_key(a, &t, &end) && !end)
    if (tensor_option(a, &at->t, &t, cols)) return -1;
  if (!end) return -1;
  at->t.bytes = loom_file_tensor_bytes(&at->t);
  char why[128];
  uint32_t field;
  if (loom_file_tensor_problem(&at->t, a->buffers[at->t.buffer].size, &field, why))
    return asm_error(a, cols[field / 4] ? cols[field / 4] : d->col, "tensor '%s': %s", name, why);
  return 0;
}

/*   .job NAME [segN=BUFFER]...  */
static int dir_job(struct asm_ctx *a, const struct asm_tok *d) {
  struct asm_tok t, b;
  char *name;
  int end;
  if (asm_read_name(a, &t, "a job", &name)) return -1;
  if (FIND(a, jobs, &t) >= 0) {
    free(name);
    return asm_error(a, t.col, "job '%.*s' is already declared", (int)t.len, t.text);
  }
  struct asm_job *j = PUSH(a, jobs);
  if (!j) return free(name), asm_nomem(a);
  *j = (struct asm_job){.name = name, .first = (uint32_t)(a->insns.len / LOOM_INSN_BYTES),
                        .line = a->line, .col = d->col};
  memset(j->segments, 0xff, sizeof j->segments);
  while (!asm_read_key(a, &t, &end) && !end) {
    int s = t.len == 4 && !memcmp(t.text, "seg", 3) && t.text[3] >= '0' && t.text[3] <= '7' ? t.text[3] - '0' : -1;
    if (s < 0) return asm_error(a, t.col, ".job has no option '%.*s' (seg0= .. seg7=)", (int)t.len, t.text);
    if (j->segments[s] != LOOM_FILE_NO_BUFFER) return asm_error(a, t.col, "seg%d is given twice", s);
    if (asm_next(a, &b)) return -1;
    long bi = (b.kind == ASM_TOK_WORD || b.kind == ASM_TOK_STRING) ? FIND(a, buffers, &b) : -1;
    if (bi < 0) return asm_error(a, b.col, "buffer '%.*s' is not declared", (int)b.len, b.text);
    j->segments[s] = (uint32_t)bi;
  }
  if (!end) return -1;
  a->cur_job = (long)(a->njobs - 1);
  return 0;
}

/*   .steps   (the step list is explicit: the .step lines, possibly none) */
static int dir_steps(struct asm_ctx *a, const struct asm_tok *d) {
  a->explicit_steps = 1;
  return asm_expect_end(a);
}

/* in=T,T,..  out=T,T: tensor names, '-' for an unused slot. */
static int step_tensors(struct asm_ctx *a, uint32_t *slots, int max, const char *key) {
  for (int i = 0;; i++) {
    struct asm_tok t;
    if (asm_next(a, &t)) return -1;
    if (i == max) return asm_error(a, t.col, "%s= takes at most %d tensors", key, max);
    long ti = (t.kind == ASM_TOK_WORD || t.kind == ASM_TOK_STRING) ? FIND(a, tensors, &t) : -1;
    if (t.kind == ASM_TOK_WORD && t.len == 1 && t.text[0] == '-') ti = LOOM_FILE_NO_BUFFER;
    else if (ti < 0) return asm_error(a, t.col, "tensor '%.*s' is not declared", (int)t.len, t.text);
    slots[i] = (uint32_t)ti;
    if (asm_peek(a, &t)) return -1;
    if (t.kind != ASM_TOK_PUNCT || t.text[0] != ',') return 0;
    asm_next(a, &t);
  }
}

static int step_host(struct asm_ctx *a, struct asm_step *s) {
  int64_t kind;
  int end;
  struct asm_tok k;
  if (asm_read_int(a, 0, UINT32_MAX, "the host op kind", &kind, NULL)) return -1;
  s->s.index = (uint32_t)kind;
  int seen[2] = {0, 0};
  while (!asm_read_key(a, &k, &end) && !end) {
    int in = asm_tok_is(&k, "in");
    if (!in && !asm_tok_is(&k, "out"))
      return asm_error(a, k.col, ".step host has no option '%.*s' (in= out=)", (int)k.len, k.text);
    if (seen[in]++) return asm_error(a, k.col, "%s= is given twice", in ? "in" : "out");
    if (step_tensors(a, in ? s->s.inputs : s->s.outputs, in ? 4 : 2, in ? "in" : "out")) return -1;
  }
  if (!end) return -1;
  a->cur_step = (long)(a->nsteps - 1);
  return 0;
}

/*   .step job NAME  |  .step host KIND [in=T,..] [out=T,..]
 *   |  .step kernel OP [opset=N] [in=T,..] [out=T,..] [dynamic]  */
static int dir_step(struct asm_ctx *a, const struct asm_tok *d) {
  struct asm_tok t;
  a->explicit_steps = 1;
  struct asm_step *s = PUSH(a, steps);
  if (!s) return asm_nomem(a);
  memset(s->s.inputs, 0xff, sizeof s->s.inputs);
  memset(s->s.outputs, 0xff, sizeof s->s.outputs);
  if (asm_next(a, &t)) return -1;
  if (asm_tok_is(&t, "host")) {
    s->s.kind = LOOM_STEP_HOST;
    return step_host(a, s);
  }
  if (asm_tok_is(&t, "kernel")) return asm_step_kernel(a, s);
  if (!asm_tok_is(&t, "job")) return asm_error(a, t.col, "expected the step kind (job, host or kernel)");
  s->s.kind = LOOM_STEP_JOB;
  if (asm_next(a, &t)) return -1;
  long j = (t.kind == ASM_TOK_WORD || t.kind == ASM_TOK_STRING) ? FIND(a, jobs, &t) : -1;
  if (j < 0) return asm_error(a, t.col, "job '%.*s' is not declared", (int)t.len, t.text);
  s->s.index = (uint32_t)j;
  return asm_expect_end(a);
}

/* ---- data lines ---- */

/* Where data goes and how much it may hold. */
static struct asm_bytes *data_target(struct asm_ctx *a, const struct asm_tok *d, uint64_t *limit) {
  *limit = LOOM_FILE_MAX_SIZE;
  if (a->cur_step >= 0) return &a->steps[a->cur_step].params;
  if (a->cur_buffer < 0) {
    asm_error(a, d->col, "%.*s outside a const buffer or a host step", (int)d->len, d->text);
    return NULL;
  }
  struct asm_buffer *b = &a->buffers[a->cur_buffer];
  if (b->sized) *limit = b->size;
  return &b->data;
}

static int put_data(struct asm_ctx *a, const struct asm_tok *d, const void *src, uint64_t n) {
  uint64_t limit;
  struct asm_bytes *out = data_target(a, d, &limit);
  if (!out) return -1;
  if (n > limit - out->len)
    return asm_error(a, d->col, "data exceeds the %llu bytes it may hold", (unsigned long long)limit);
  /* a sized const buffer was counted whole by .buffer */
  int counted = a->cur_step < 0 && a->buffers[a->cur_buffer].sized;
  if (!counted && asm_count_data(a, d, n)) return -1;
  return asm_bytes_put(out, src, (size_t)n) ? asm_nomem(a) : 0;
}

/*   .byte V[, V]...  (-128..255)    .word V[, V]...  (-2^31..2^32-1)  */
static int dir_values(struct asm_ctx *a, const struct asm_tok *d, int size) {
  int64_t lo = size == 1 ? -128 : INT32_MIN, hi = size == 1 ? 255 : UINT32_MAX;
  struct asm_tok t;
  int n = 0;
  for (;;) {
    int64_t v;
    if (asm_next(a, &t)) return -1;
    if (t.kind == ASM_TOK_END) break;
    if (t.kind == ASM_TOK_PUNCT && t.text[0] == ',' && n) continue;
    if (asm_int(a, &t, lo, hi, size == 1 ? "byte" : "word", &v)) return -1;
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    if (put_data(a, d, b, (uint64_t)size)) return -1;
    n++;
  }
  return n ? 0 : asm_error(a, t.col, "%.*s needs at least one value", (int)d->len, d->text);
}

static int dir_byte(struct asm_ctx *a, const struct asm_tok *d) { return dir_values(a, d, 1); }
static int dir_word(struct asm_ctx *a, const struct asm_tok *d) { return dir_values(a, d, 4); }

/*   .uop acc=A inp=I wgt=W   |   .uop A I W  */
static int dir_uop(struct asm_ctx *a, const struct asm_tok *d) {
  static const char *const keys[3] = {"acc", "inp", "wgt"};
  static const int widths[3] = {LOOM_UOP_ACC_WIDTH, LOOM_UOP_INP_WIDTH, LOOM_UOP_WGT_WIDTH};
  int64_t v[3] = {0, 0, 0};
  int seen[3] = {0, 0, 0};
  for (int i = 0; i < 3; i++) {
    struct asm_tok t;
    int k = i;
    if (asm_next(a, &t)) return -1;
    if (t.kind == ASM_TOK_END && i) return asm_error(a, t.col, ".uop needs acc, inp and wgt");
    if (t.kind == ASM_TOK_WORD && asm_take_eq(a)) {
      if ((k = asm_lookup(keys, 3, t.text, t.len)) < 0)
        return asm_error(a, t.col, ".uop has no field '%.*s' (acc= inp= wgt=)", (int)t.len, t.text);
      if (asm_next(a, &t)) return -1;
    }
    if (seen[k]++) return asm_error(a, t.col, ".uop: %s is given twice", keys[k]);
    if (asm_int(a, &t, 0, (INT64_C(1) << widths[k]) - 1, keys[k], &v[k])) return -1;
  }
  struct loom_uop u = {(uint32_t)v[0], (uint32_t)v[1], (uint32_t)v[2]};
  uint8_t b[LOOM_UOP_BYTES];
  if (loom_uop_encode(&u, b)) return asm_error(a, d->col, "micro-op fields do not fit");
  return asm_expect_end(a) || put_data(a, d, b, sizeof b) ? -1 : 0;
}

/*   .zero N  */
static int dir_zero(struct asm_ctx *a, const struct asm_tok *d) {
  int64_t n;
  if (asm_read_int(a, 0, (int64_t)LOOM_FILE_MAX_SIZE, "the byte count", &n, NULL)) return -1;
  return asm_expect_end(a) || put_data(a, d, NULL, (uint64_t)n) ? -1 : 0;
}

struct directive {
  const char *name;
  int (*fn)(struct asm_ctx *a, const struct asm_tok *d);
  int is_data; /* continues the current buffer or step */
};

static const struct directive directives[] = {
    {".config", dir_config, 0}, {".buffer", dir_buffer, 0}, {".tensor", dir_tensor, 0},
    {".job", dir_job, 0},       {".steps", dir_steps, 0},   {".step", dir_step, 0},
    {".byte", dir_byte, 1},     {".word", dir_word, 1},     {".uop", dir_uop, 1},
    {".zero", dir_zero, 1},     {".attr", asm_dir_attr, 1},
};

static int instruction(struct asm_ctx *a, const struct asm_tok *t) {
  uint8_t bytes[LOOM_INSN_BYTES];
  if (a->cur_job < 0) return asm_error(a, t->col, "instruction outside a job (start one with .job NAME)");
  if (a->jobs[a->cur_job].count == UINT32_MAX) return asm_error(a, t->col, "too many instructions");
  if (asm_insn(a, t, bytes)) return -1;
  if (asm_bytes_put(&a->insns, bytes, sizeof bytes)) return asm_nomem(a);
  a->jobs[a->cur_job].count++;
  return 0;
}

static int line(struct asm_ctx *a) {
  struct asm_tok t;
  if (asm_next(a, &t)) return -1;
  if (t.kind == ASM_TOK_END) return 0;
  if (asm_is_insn(&t)) return instruction(a, &t);
  for (size_t i = 0; i < sizeof directives / sizeof directives[0]; i++) {
    if (!asm_tok_is(&t, directives[i].name)) continue;
    if (!directives[i].is_data && close_contexts(a)) return -1;
    return directives[i].fn(a, &t);
  }
  if (t.kind == ASM_TOK_WORD && t.text[0] == '.')
    return asm_error(a, t.col, "unknown directive '%.*s'", (int)t.len, t.text);
  return asm_error(a, t.col, "unknown instruction '%.*s'", (int)t.len, t.text);
}

/* ---- layout ---- */

static void add_records(struct asm_ctx *a, struct loom_file_builder *b) {
  for (size_t i = 0; i < a->nbuffers; i++) {
    struct asm_buffer *ab = &a->buffers[i];
    struct loom_file_buffer r = {.name = loom_fb_string(b, ab->name), .kind = ab->kind, .size = ab->size,
                                 .align = ab->align};
    if (ab->kind == LOOM_BUFKIND_CONST) {
      r.data_offset = loom_fb_data(b, ab->data.p, ab->data.len, 64);
      loom_fb_data(b, NULL, ab->size - ab->data.len, 1);
    }
    loom_fb_buffer(b, &r);
  }
  for (size_t i = 0; i < a->ntensors; i++) a->tensors[i].t.name = loom_fb_string(b, a->tensors[i].name);
  for (size_t i = 0; i < a->ntensors; i++) loom_fb_tensor(b, &a->tensors[i].t);
  for (size_t i = 0; i < a->nsteps; i++)
    if (a->steps[i].params.len) {
      a->steps[i].s.param_offset = loom_fb_data(b, a->steps[i].params.p, a->steps[i].params.len, 8);
      a->steps[i].s.param_size = a->steps[i].params.len;
    }
  asm_add_kernels(a, b);
  loom_fb_insns(b, a->insns.p, (uint32_t)(a->insns.len / LOOM_INSN_BYTES));
  for (size_t i = 0; i < a->njobs; i++) {
    struct loom_file_job j = {.insn_first = a->jobs[i].first, .insn_count = a->jobs[i].count};
    memcpy(j.segments, a->jobs[i].segments, sizeof j.segments);
    loom_fb_job(b, &j);
  }
  for (size_t i = 0; i < a->nsteps; i++) loom_fb_step(b, &a->steps[i].s);
}

static int implicit_steps(struct asm_ctx *a) {
  for (size_t i = 0; i < a->njobs; i++) {
    struct asm_step *s = PUSH(a, steps);
    if (!s) return asm_nomem(a);
    s->s = (struct loom_file_step){.kind = LOOM_STEP_JOB, .index = (uint32_t)i};
    memset(s->s.inputs, 0xff, sizeof s->s.inputs);
    memset(s->s.outputs, 0xff, sizeof s->s.outputs);
  }
  return 0;
}

static loom_status finish(struct asm_ctx *a, struct loom_file_builder **out) {
  if (close_contexts(a)) return LOOM_E_FORMAT;
  if (!a->config_line && !a->has_override) {
    snprintf(a->msg, LOOM_MSG_MAX, "%s: no .config directive (name the hardware, e.g. .config tiny)", a->file);
    return LOOM_E_FORMAT;
  }
  if (!a->explicit_steps && implicit_steps(a)) return LOOM_E_NOMEM;
  struct loom_file_builder *b = loom_file_builder_new(a->has_override ? a->override_hash : a->hash);
  if (!b) return asm_nomem(a), LOOM_E_NOMEM;
  add_records(a, b);
  size_t size;
  uint8_t *bytes = loom_file_builder_finish(b, &size);
  struct loom_file f;
  char why[LOOM_MSG_MAX];
  loom_status st = bytes ? loom_file_parse(bytes, size, a->file, &f, why) : LOOM_E_NOMEM;
  free(bytes);
  if (st) {
    snprintf(a->msg, LOOM_MSG_MAX, "%s: the assembled file is invalid: %.400s", a->file,
             bytes ? why : "out of memory or over the 4 GiB limit");
    loom_file_builder_free(b);
    return st;
  }
  loom_file_free(&f);
  *out = b;
  return LOOM_OK;
}

static void free_ctx(struct asm_ctx *a) {
  for (size_t i = 0; i < a->nbuffers; i++) free(a->buffers[i].name), free(a->buffers[i].data.p);
  for (size_t i = 0; i < a->ntensors; i++) free(a->tensors[i].name);
  for (size_t i = 0; i < a->njobs; i++) free(a->jobs[i].name);
  for (size_t i = 0; i < a->nsteps; i++) free(a->steps[i].params.p), asm_kernel_free(a->steps[i].k);
  free(a->buffers);
  free(a->tensors);
  free(a->jobs);
  free(a->steps);
  free(a->insns.p);
  free(a->scratch);
}

static int set_override(struct asm_ctx *a, const char *config) {
  struct asm_tok t = {ASM_TOK_WORD, config, strlen(config), 1};
  char why[LOOM_MSG_MAX];
  a->has_override = 1;
  if (!config_hash(&t, &a->override_hash, why)) return 0;
  snprintf(a->msg, LOOM_MSG_MAX, "config override: %.400s", why);
  return -1;
}

loom_status loom_asm_string(const char *text, size_t len, const char *name,
                            const char *config_override, struct loom_file_builder **out,
                            char msg[LOOM_MSG_MAX]) {
  char local[LOOM_MSG_MAX];
  struct asm_ctx a = {.file = name ? name : "<string>", .msg = msg ? msg : local,
                      .cur_buffer = -1, .cur_step = -1, .cur_job = -1, .cur_kernel = -1};
  loom_status st = LOOM_E_FORMAT;
  *out = NULL;
  if (config_override && set_override(&a, config_override)) goto done;
  for (size_t i = 0; i < len;) {
    size_t j = i;
    while (j < len && text[j] != '\n') j++;
    size_t n = j - i - (j > i && text[j - 1] == '\r');
    a.line++;
    if (asm_begin_line(&a, text + i, n) || line(&a)) goto done;
    i = j + 1;
  }
  st = finish(&a, out);
done:
  free_ctx(&a);
  return st;
}

loom_status loom_asm_file(const char *path, const char *config_override,
                          struct loom_file_builder **out, char msg[LOOM_MSG_MAX]) {
  uint8_t *text;
  size_t len;
  *out = NULL;
  loom_status st = loom_read_file(path, ASM_MAX_SOURCE, &text, &len, msg);
  if (st) return st;
  st = loom_asm_string((const char *)text, len, path, config_override, out, msg);
  free(text);
  return st;
}
