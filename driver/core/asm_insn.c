/*
 * asm_insn.c - parsing one instruction line.
 *
 *   insn    := mnemonic [operand] item*
 *   item    := key '=' value (sep value)*     keyed field, sep ',' or ':'
 *            | flag                            1-bit field set to 1
 *   raw     := '.insn' 0xHEX                  128-bit encoding, bit n = bit n
 *
 * The table row of the mnemonic (asm_syntax.c) drives everything: which
 * keys exist, how many values each takes, which are required, and their
 * defaults.  Values are range-checked by loom_insn_encode() itself, so the
 * assembler accepts exactly what the codec can encode; a value it refuses
 * is reported at its own column with the field's ISA name and range.
 * Finally the encoding goes through loom_insn_decode(): a named
 * instruction must be legal (STORE with padding, LOAD of OUT, a prev token
 * on the load queue are refused here, not by the hardware).  Only `.insn`
 * writes arbitrary bits, for testing how the hardware rejects them.
 */
#include <string.h>

#include "asm_internal.h"
#include "core.h"

#define MAX_FIELDS 8

struct insn_parse {
  struct loom_insn in;
  const struct asm_op *op;
  int given[MAX_FIELDS];         /* column of the key, 0 when absent */
  int col[MAX_FIELDS][4];        /* column of each value */
  int flag_col[8];
};

static int find_op(const struct asm_tok *t) {
  for (int i = 0; i < LOOM_OP_COUNT; i++)
    if (asm_tok_is(t, loom_asm_ops[i].mnemonic)) return i;
  return -1;
}

int asm_is_insn(const struct asm_tok *t) { return asm_tok_is(t, ".insn") || find_op(t) >= 0; }

static int range_error(struct asm_ctx *a, int col, const struct asm_part *p, int64_t v) {
  int64_t lo = p->is_signed ? -(INT64_C(1) << (p->width - 1)) : 0;
  int64_t hi = p->is_signed ? (INT64_C(1) << (p->width - 1)) - 1 : (INT64_C(1) << p->width) - 1;
  return asm_error(a, col, "%s %lld does not fit %u bits (%lld..%lld)", p->isa, (long long)v,
                   p->width, (long long)lo, (long long)hi);
}

static const char *operand_choices(enum asm_operand k) {
  switch (k) {
  case ASM_OPND_BUFFER: return "uop, wgt, inp, acc, par or lut";
  case ASM_OPND_ALU: return "add, max, min, shr, mul, mov, requant or epi";
  case ASM_OPND_QUEUE: return "load, compute or store";
  default: return "";
  }
}

static int parse_operand(struct asm_ctx *a, struct insn_parse *p, const struct asm_tok *mn) {
  struct asm_tok t;
  if (asm_next(a, &t)) return -1;
  int v = t.kind == ASM_TOK_WORD ? asm_operand_value(p->op->operand, t.text, t.len) : -1;
  if (v < 0) {
    if (t.kind == ASM_TOK_END) t.col = mn->col;
    return asm_error(a, t.col, "%s needs %s first", p->op->mnemonic, operand_choices(p->op->operand));
  }
  *(uint32_t *)((char *)&p->in + p->op->operand_off) = (uint32_t)v;
  return 0;
}

/* One value of a field into its struct member.  Values outside the
 * member's type are reported like the codec's refusals. */
static int parse_value(struct asm_ctx *a, struct insn_parse *p, int f, int k) {
  const struct asm_part *part = &p->op->fields[f].part[k];
  struct asm_tok t;
  int64_t v;
  if (asm_next(a, &t)) return -1;
  if (asm_parse_int(&t, &v))
    return asm_error(a, t.col, "%s needs an integer here (%s)", p->op->fields[f].key,
                     p->op->fields[f].form);
  int64_t lo = part->is_signed ? INT32_MIN : 0, hi = part->is_signed ? INT32_MAX : UINT32_MAX;
  if (v < lo || v > hi) return range_error(a, t.col, part, v);
  asm_set(&p->in, part, v);
  p->col[f][k] = t.col;
  return 0;
}

static int parse_field(struct asm_ctx *a, struct insn_parse *p, const struct asm_tok *key) {
  const struct asm_field *fl = p->op->fields;
  int f = 0;
  while (fl[f].key && !asm_tok_is(key, fl[f].key)) f++;
  if (!fl[f].key)
    return asm_error(a, key->col, "%s has no field '%.*s'", p->op->mnemonic, (int)key->len, key->text);
  if (p->given[f]) return asm_error(a, key->col, "%s= is given twice", fl[f].key);
  p->given[f] = key->col;
  for (int k = 0; k < fl[f].n; k++) {
    struct asm_tok sep;
    if (k && asm_next(a, &sep)) return -1;
    if (k && (sep.kind != ASM_TOK_PUNCT || sep.text[0] != fl[f].sep))
      return asm_error(a, sep.col, "%s takes %d values: %s", fl[f].key, fl[f].n, fl[f].form);
    if (parse_value(a, p, f, k)) return -1;
  }
  return 0;
}

static int parse_flag(struct asm_ctx *a, struct insn_parse *p, const struct asm_tok *w) {
  const struct asm_flag *fl = p->op->flags;
  int i = 0;
  while (fl[i].word && !asm_tok_is(w, fl[i].word)) i++;
  if (!fl[i].word) {
    for (const struct asm_field *f = p->op->fields; f->key; f++)
      if (asm_tok_is(w, f->key)) return asm_error(a, w->col, "%s needs a value: %s", f->key, f->form);
    return asm_error(a, w->col, "%s has no flag '%.*s'", p->op->mnemonic, (int)w->len, w->text);
  }
  if (p->flag_col[i]) return asm_error(a, w->col, "flag %s is given twice", fl[i].word);
  p->flag_col[i] = w->col;
  *(uint32_t *)((char *)&p->in + fl[i].off) = 1;
  return 0;
}

static int parse_items(struct asm_ctx *a, struct insn_parse *p) {
  for (;;) {
    struct asm_tok t;
    if (asm_next(a, &t)) return -1;
    if (t.kind == ASM_TOK_END) return 0;
    if (t.kind != ASM_TOK_WORD)
      return asm_error(a, t.col, "expected a field (key=value) or a flag, found '%.*s'", (int)t.len, t.text);
    if (asm_take_eq(a) ? parse_field(a, p, &t) : parse_flag(a, p, &t)) return -1;
  }
}

static int check_given(struct asm_ctx *a, struct insn_parse *p, const struct asm_tok *mn) {
  for (int f = 0; p->op->fields[f].key; f++)
    if (p->op->fields[f].required && !p->given[f])
      return asm_error(a, mn->col, "%s needs %s", p->op->mnemonic, p->op->fields[f].form);
  if (p->in.opcode == LOOM_OP_ALU && p->in.alu.imm && !p->in.alu.use_imm)
    for (int f = 0; p->op->fields[f].key; f++)
      if (!strcmp(p->op->fields[f].key, "imm"))
        return asm_error(a, p->given[f], "imm= has no effect without the use_imm flag");
  return 0;
}

/* Encodes and checks legality; a refused field is reported at its value. */
static int encode(struct asm_ctx *a, struct insn_parse *p, const struct asm_tok *mn, uint8_t *out) {
  const char *bad = NULL, *why = "?";
  if (loom_insn_encode(&p->in, out, &bad)) {
    for (int f = 0; p->op->fields[f].key; f++)
      for (int k = 0; k < p->op->fields[f].n; k++)
        if (bad && !strcmp(bad, p->op->fields[f].part[k].isa))
          return range_error(a, p->col[f][k], &p->op->fields[f].part[k],
                             asm_get(&p->in, &p->op->fields[f].part[k]));
    return asm_error(a, mn->col, "field %s does not fit its width", bad ? bad : "?");
  }
  struct loom_insn d;
  if (loom_insn_decode(out, &d, &why) != LOOM_ERR_NONE)
    return asm_error(a, mn->col, "illegal instruction: %s", why);
  return 0;
}

/*   .insn 0xHEX   (up to 32 hex digits; bit n of the number is bit n of
 *                  the instruction, i.e. byte i holds bits 8i..8i+7)  */
static int raw_insn(struct asm_ctx *a, uint8_t *out) {
  struct asm_tok t;
  if (asm_next(a, &t)) return -1;
  const char *s = t.text;
  size_t n = t.len;
  if (t.kind != ASM_TOK_WORD || n < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || n - 2 > 32)
    return asm_error(a, t.col, ".insn needs a hex number of up to 32 digits (0x...)");
  memset(out, 0, LOOM_INSN_BYTES);
  for (size_t k = 0; k < n - 2; k++) {
    char c = s[n - 1 - k];
    int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10
          : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
    if (d < 0) return asm_error(a, t.col + (int)(n - 1 - k), "'%c' is not a hex digit", c);
    out[k / 2] |= (uint8_t)(d << (4 * (k % 2)));
  }
  return asm_expect_end(a);
}

static void set_defaults(struct insn_parse *p) {
  int n = 0;
  for (const struct asm_field *f = p->op->fields; f->key; f++, n++)
    for (int k = 0; k < f->n; k++) asm_set(&p->in, &f->part[k], f->part[k].def);
  LOOM_ASSERT(n <= MAX_FIELDS);
  for (n = 0; p->op->flags[n].word; n++) continue;
  LOOM_ASSERT(n <= (int)(sizeof p->flag_col / sizeof p->flag_col[0]));
}

int asm_insn(struct asm_ctx *a, const struct asm_tok *mn, uint8_t out[LOOM_INSN_BYTES]) {
  if (asm_tok_is(mn, ".insn")) return raw_insn(a, out);
  int opc = find_op(mn);
  if (opc < 0) return asm_error(a, mn->col, "unknown instruction '%.*s'", (int)mn->len, mn->text);
  struct insn_parse p = {.op = &loom_asm_ops[opc]};
  p.in.opcode = (uint32_t)opc;
  set_defaults(&p);
  if (opc == LOOM_OP_STORE) p.in.mem.buffer = LOOM_BUF_OUT; /* the only legal source */
  if (p.op->operand != ASM_OPND_NONE && parse_operand(a, &p, mn)) return -1;
  if (parse_items(a, &p) || check_given(a, &p, mn)) return -1;
  return encode(a, &p, mn, out);
}
