/*
 * disasm.c - printing a .loom file as Loom assembly.
 *
 * The output is a source the assembler turns back into the same file: every
 * record is printed in index order, every field that differs from what the
 * assembler would assume is written out, and instructions are printed from
 * the same syntax table the assembler parses with (asm_syntax.c).  Two
 * kinds of instruction have no mnemonic form and are printed as raw
 * `.insn 0x...` with a comment saying why: illegal encodings (which
 * loom_insn_decode refuses), and an ALU immediate present without use_imm
 * (bits the hardware ignores but the round trip must keep).
 *
 * Const data is printed in the unit its loads use: a buffer only ever
 * loaded into UOP shows as .uop lines, one only loaded into ACC as 32-bit
 * .word lines, everything else as .byte lines; runs of zero lines become
 * .zero and trailing zeros are left to the buffer's size.
 *
 * The round trip is exact for files the assembler wrote.  Files from other
 * writers re-assemble to the same records, instructions and data, but
 * STRTAB, DATA and INSNS may be laid out differently (unreferenced strings
 * and instructions outside every job are dropped).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asm_internal.h"
#include "kernel.h"

enum data_unit {
  UNIT_BYTE = 0, /* .byte, 16 per line */
  UNIT_WORD,     /* .word, 8 per line */
  UNIT_UOP,      /* .uop, one per line */
  UNIT_COUNT
};

/* A string, always quoted. */
static void put_string(FILE *out, const char *s) {
  fputc('"', out);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') fprintf(out, "\\%c", c);
    else if (c >= 0x20 && c < 0x7f) fputc(c, out);
    else fprintf(out, "\\x%02x", c);
  }
  fputc('"', out);
}

/* A name, quoted when it is not a plain word. */
static void put_name(FILE *out, const char *s) {
  if (asm_name_is_plain(s)) fputs(s, out);
  else put_string(out, s);
}

static void put_lower(FILE *out, const char *s) {
  for (; *s; s++) fputc(*s >= 'A' && *s <= 'Z' ? *s - 'A' + 'a' : *s, out);
}

/* ---- data ---- */

/* Bit per unit the loads of each buffer use (1 << enum data_unit). */
static void note_load(const struct loom_file *f, const struct loom_file_job *j,
                      const struct loom_insn *d, uint8_t *use) {
  if (d->opcode != LOOM_OP_LOAD || d->mem.src_out) return; /* src_out reads no DRAM */
  uint32_t b = j->segments[d->mem.segment];
  if (b == LOOM_FILE_NO_BUFFER) return;
  if (d->mem.buffer == LOOM_BUF_UOP) use[b] |= 1 << UNIT_UOP;
  else if ((d->mem.buffer == LOOM_BUF_ACC && !d->mem.src_int8) || d->mem.buffer == LOOM_BUF_PAR)
    use[b] |= 1 << UNIT_WORD;
  else use[b] |= 1 << UNIT_BYTE;
}

static enum data_unit unit_of(uint8_t use, uint64_t size) {
  if (size % 4) return UNIT_BYTE;
  if (use == 1 << UNIT_UOP) return UNIT_UOP;
  if (use == 1 << UNIT_WORD) return UNIT_WORD;
  return UNIT_BYTE;
}

/* Per buffer: which units its loads use.  NULL when out of memory (the
 * data is then printed as bytes). */
static uint8_t *classify(const struct loom_file *f) {
  uint8_t *use = calloc(f->buffer_count ? f->buffer_count : 1, 1);
  if (!use) return NULL;
  for (uint32_t j = 0; j < f->job_count; j++)
    for (uint32_t i = 0; i < f->jobs[j].insn_count; i++) {
      struct loom_insn d;
      const uint8_t *b = f->insns + (size_t)(f->jobs[j].insn_first + i) * LOOM_INSN_BYTES;
      if (loom_insn_decode(b, &d, NULL) == LOOM_ERR_NONE) note_load(f, &f->jobs[j], &d, use);
    }
  return use;
}

static int all_zero(const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i]) return 0;
  return 1;
}

static void put_values(FILE *out, const uint8_t *p, size_t n, enum data_unit u) {
  fputs(u == UNIT_WORD ? "  .word " : "  .byte ", out);
  for (size_t i = 0; i < n; i += u == UNIT_WORD ? 4 : 1) {
    if (i) fputs(", ", out);
    if (u == UNIT_WORD)
      fprintf(out, "%" PRId32, (int32_t)((uint32_t)p[i] | (uint32_t)p[i + 1] << 8 |
                                         (uint32_t)p[i + 2] << 16 | (uint32_t)p[i + 3] << 24));
    else
      fprintf(out, "%d", (int8_t)p[i]);
  }
  fputc('\n', out);
}

/* `sized`: the record states the size (a buffer), so trailing zeros can be
 * left out; host-step parameters have only the data lines, so every byte,
 * trailing zeros included, must be written. */
static void put_data(FILE *out, const uint8_t *p, uint64_t size, enum data_unit u, int sized) {
  size_t step = u == UNIT_UOP ? 4 : u == UNIT_WORD ? 32 : 16, zeros = 0;
  uint64_t end = size;
  while (sized && end && !p[end - 1]) end--;
  if (u != UNIT_BYTE) end = (end + 3) / 4 * 4; /* size is a multiple of 4 for these */
  for (uint64_t i = 0; i < end; i += step) {
    size_t n = (size_t)(end - i < step ? end - i : step);
    if (u != UNIT_UOP && n == step && all_zero(p + i, n)) {
      zeros += n;
      continue;
    }
    if (zeros) fprintf(out, "  .zero %zu\n", zeros);
    zeros = 0;
    if (u != UNIT_UOP) {
      put_values(out, p + i, n, u);
      continue;
    }
    struct loom_uop uop;
    loom_uop_decode(p + i, &uop);
    fprintf(out, "  .uop acc=%u inp=%u wgt=%u\n", uop.acc, uop.inp, uop.wgt);
  }
  if (zeros) fprintf(out, "  .zero %zu\n", zeros);
}

/* ---- records ---- */

static void put_buffer(FILE *out, const struct loom_file *f, uint32_t i, enum data_unit u) {
  const struct loom_file_buffer *b = &f->buffers[i];
  fputs(".buffer ", out);
  put_name(out, loom_file_string(f, b->name));
  fprintf(out, " %s %" PRIu64, asm_bufkind_names[b->kind], b->size);
  if (b->align != 64) fprintf(out, " align=%u", b->align);
  fputc('\n', out);
  if (b->kind == LOOM_BUFKIND_CONST) put_data(out, f->data + b->data_offset, b->size, u, 1);
}

static void put_tensor(FILE *out, const struct loom_file *f, uint32_t i) {
  const struct loom_file_tensor *t = &f->tensors[i];
  fputs(".tensor ", out);
  put_name(out, loom_file_string(f, t->name));
  fprintf(out, " %s ", asm_role_names[t->role]);
  put_name(out, loom_file_string(f, f->buffers[t->buffer].name));
  fprintf(out, " %" PRIu64 " %s [", t->offset, loom_dtype_short_names[t->dtype]);
  for (uint32_t k = 0; k < t->rank; k++) fprintf(out, "%s%" PRId64, k ? "," : "", t->dims[k]);
  fputc(']', out);
  if (t->scale != 0.0f) fprintf(out, " scale=%.9g", (double)t->scale);
  if (t->zero_point) fprintf(out, " zp=%" PRId32, t->zero_point);
  if (t->user_dtype != t->dtype) fprintf(out, " user_dtype=%s", loom_dtype_short_names[t->user_dtype]);
  if (t->layout != LOOM_LAYOUT_PLAIN) fprintf(out, " layout=%s", asm_layout_names[t->layout]);
  if (t->layout_block) fprintf(out, " block=%u", t->layout_block);
  fputc('\n', out);
}

/* ---- instructions ---- */

static void put_raw(FILE *out, const uint8_t *b, const char *why) {
  fputs("  .insn 0x", out);
  for (int i = LOOM_INSN_BYTES - 1; i >= 0; i--) fprintf(out, "%02x", b[i]);
  fprintf(out, "  ; %s\n", why);
}

static void put_field(FILE *out, const struct asm_field *fl, const struct loom_insn *d) {
  int show = fl->required;
  for (int k = 0; k < fl->n; k++) show |= asm_get(d, &fl->part[k]) != fl->part[k].def;
  if (!show) return;
  fprintf(out, " %s=", fl->key);
  for (int k = 0; k < fl->n; k++) {
    if (k) fputc(fl->sep, out);
    fprintf(out, "%" PRId64, asm_get(d, &fl->part[k]));
  }
}

static void put_insn(FILE *out, const uint8_t *b) {
  struct loom_insn d;
  const char *why = "?";
  if (loom_insn_decode(b, &d, &why) != LOOM_ERR_NONE) {
    char text[96];
    snprintf(text, sizeof text, "illegal: %s", why);
    put_raw(out, b, text);
    return;
  }
  if (d.opcode == LOOM_OP_ALU && !d.alu.use_imm && d.alu.imm) {
    put_raw(out, b, "alu with imm bits but no use_imm");
    return;
  }
  const struct asm_op *op = &loom_asm_ops[d.opcode];
  fprintf(out, "  %-5s", op->mnemonic); /* items start in one column */
  if (op->operand != ASM_OPND_NONE) {
    fputc(' ', out);
    put_lower(out, asm_operand_name(op->operand, *(const uint32_t *)((const char *)&d + op->operand_off)));
  }
  for (const struct asm_field *fl = op->fields; fl->key; fl++) put_field(out, fl, &d);
  for (const struct asm_flag *fl = op->flags; fl->word; fl++)
    if (*(const uint32_t *)((const char *)&d + fl->off)) fprintf(out, " %s", fl->word);
  fputc('\n', out);
}

static void put_job(FILE *out, const struct loom_file *f, uint32_t i) {
  const struct loom_file_job *j = &f->jobs[i];
  fprintf(out, ".job job%u", i);
  for (int s = 0; s < 8; s++) {
    if (j->segments[s] == LOOM_FILE_NO_BUFFER) continue;
    fprintf(out, " seg%d=", s);
    put_name(out, loom_file_string(f, f->buffers[j->segments[s]].name));
  }
  fputc('\n', out);
  for (uint32_t k = 0; k < j->insn_count; k++)
    put_insn(out, f->insns + (size_t)(j->insn_first + k) * LOOM_INSN_BYTES);
}

/* ---- steps ---- */

/* One JOB step per job, in order: what the assembler does by default. */
static int steps_implicit(const struct loom_file *f) {
  if (f->step_count != f->job_count) return 0;
  for (uint32_t i = 0; i < f->step_count; i++)
    if (f->steps[i].kind != LOOM_STEP_JOB || f->steps[i].index != i) return 0;
  return 1;
}

static void put_slots(FILE *out, const struct loom_file *f, const char *key, const uint32_t *v, int n) {
  while (n && v[n - 1] == LOOM_FILE_NO_BUFFER) n--;
  if (!n) return;
  fprintf(out, " %s=", key);
  for (int k = 0; k < n; k++) {
    if (k) fputc(',', out);
    if (v[k] == LOOM_FILE_NO_BUFFER) fputc('-', out);
    else put_name(out, loom_file_string(f, f->tensors[v[k]].name));
  }
}

/* A kernel step (format 1.3): the op and its tensors, then one .attr line
 * per attribute (asm_kernel.c reads them back). */
static void put_kernel(FILE *out, const struct loom_file *f, const struct loom_file_kernel *k) {
  static const char *const kinds[] = {"int", "float", "string", "ints", "floats", "strings", "tensor"};
  const uint32_t *io = loom_file_kernel_io(f, k);
  const struct loom_file_kattr *a = loom_file_kernel_attrs(f, k);
  fputs(".step kernel ", out);
  put_name(out, loom_file_string(f, k->op));
  fprintf(out, " opset=%u", k->opset);
  for (int part = 0; part < 2; part++) {
    uint32_t n = part ? k->n_out : k->n_in, first = part ? k->n_in : 0;
    for (uint32_t j = 0; j < n; j++) {
      fputs(j ? "," : part ? " out=" : " in=", out);
      if (io[first + j] == LOOM_FILE_NO_BUFFER) fputc('-', out);
      else put_name(out, loom_file_string(f, f->tensors[io[first + j]].name));
    }
  }
  fputs(k->flags & LOOM_FILE_KERNEL_DYNAMIC ? " dynamic\n" : "\n", out);
  for (uint32_t i = 0; i < k->n_attrs; i++) {
    fputs("  .attr ", out);
    put_name(out, loom_file_string(f, a[i].name));
    fprintf(out, " %s", kinds[a[i].kind]);
    /* the lists' values are in DATA; the other kinds' value is not an offset */
    const uint8_t *v = a[i].kind >= LOOM_KATTR_INTS && a[i].kind <= LOOM_KATTR_STRINGS ? f->data + a[i].value : NULL;
    for (uint64_t j = 0; j < a[i].count; j++) {
      float x;
      uint32_t bits = (uint32_t)a[i].value;
      fputs(j ? ", " : " ", out);
      switch (a[i].kind) {
      case 0: fprintf(out, "%" PRId64, (int64_t)a[i].value); break;
      case 1: memcpy(&x, &bits, sizeof x), fprintf(out, "%.9g", (double)x); break;
      case 2: put_string(out, loom_file_string(f, (uint32_t)a[i].value)); break;
      case 3: fprintf(out, "%" PRId64, ((const int64_t *)v)[j]); break;
      case 4: fprintf(out, "%.9g", (double)((const float *)v)[j]); break;
      case 5: put_string(out, loom_file_string(f, ((const uint32_t *)v)[j])); break;
      default: put_name(out, loom_file_string(f, f->tensors[a[i].value].name)); break;
      }
    }
    fputc('\n', out);
  }
}

static void put_steps(FILE *out, const struct loom_file *f) {
  if (steps_implicit(f)) return;
  fputs(".steps\n", out);
  for (uint32_t i = 0; i < f->step_count; i++) {
    const struct loom_file_step *s = &f->steps[i];
    if (s->kind == LOOM_STEP_JOB) {
      fprintf(out, ".step job job%u\n", s->index);
      continue;
    }
    if (s->kind == LOOM_STEP_KERNEL) {
      put_kernel(out, f, &f->kernels[s->index]);
      continue;
    }
    fprintf(out, ".step host %u", s->index);
    put_slots(out, f, "in", s->inputs, 4);
    put_slots(out, f, "out", s->outputs, 2);
    fputc('\n', out);
    put_data(out, f->data + s->param_offset, s->param_size, UNIT_BYTE, 0);
  }
}

static void put_config(FILE *out, const struct loom_file *f) {
  const struct loom_hw_config *c = loom_hw_config_by_hash(f->config_hash);
  fprintf(out, "; .loom version %u.%u, ISA version %u\n", f->version_major, f->version_minor,
          f->isa_version);
  if (c) fprintf(out, ".config %s\n", c->name);
  else fprintf(out, ".config 0x%08x\n", f->config_hash);
}

loom_status loom_disasm(const struct loom_file *f, FILE *out, char msg[LOOM_MSG_MAX]) {
  uint8_t *use = classify(f);
  put_config(out, f);
  for (uint32_t i = 0; i < f->buffer_count; i++)
    put_buffer(out, f, i, use ? unit_of(use[i], f->buffers[i].size) : UNIT_BYTE);
  free(use);
  for (uint32_t i = 0; i < f->tensor_count; i++) put_tensor(out, f, i);
  for (uint32_t i = 0; i < f->job_count; i++) put_job(out, f, i);
  put_steps(out, f);
  if (fflush(out) || ferror(out)) {
    if (msg) snprintf(msg, LOOM_MSG_MAX, "disasm: error writing the listing");
    return LOOM_E_IO;
  }
  return LOOM_OK;
}
