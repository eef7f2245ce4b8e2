/*
 * test_asm.c - the assembler and disassembler.
 *
 * The central property: for a program that uses every instruction, every
 * field at a non-default value, every directive and awkward names,
 * assemble -> disassemble -> assemble gives identical bytes, and the
 * listing is a fixed point.  Then the assembler's messages: each mistake
 * is reported at file:line:column with the field's ISA name and range.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "driver/core/asm.h"
#include "loom/isa.h"

#define NB LOOM_FILE_NO_BUFFER

static const char full_program[] =
    "; every instruction and every field at a non-default value\n"
    ".config default\n"
    ".buffer \"in put\" work 8192 align=128\n"
    ".buffer w const 80            # bytes, zero runs, trailing zeros\n"
    "  .byte 1, -2, 3, 127, -128, 255\n"
    "  .zero 40\n"
    "  .byte 9 10\n"
    ".buffer uops const\n"
    "  .uop acc=1 inp=2 wgt=3\n"
    "  .uop 2047 2047 1023\n"
    "  .uop wgt=5 acc=4 inp=0\n"
    ".buffer bias const\n"
    "  .word -5, 100000, 0x7fffffff\n"
    ".buffer out work 4096\n"
    ".tensor \"/in:0\" input \"in put\" 64 i8 [1,3,4,4] scale=0.0078125 zp=-3 user_dtype=f32 layout=nchwc block=16\n"
    ".tensor y output out 0 u8 [2, 16] scale=0.1 zp=128 user_dtype=f32 layout=nc block=8\n"
    ".tensor b internal bias 0 i32 [3]\n"
    ".tensor s internal out 1024 f32 []\n"
    ".tensor \"we\\\"ird\\\\ \\x7f\" internal out 2048 i8 [4]\n"
    ".job first seg0=\"in put\" seg1=w seg3=uops seg7=bias\n"
    "  load acc sram=1 seg=6 off=2 y=3 x=4 stride=5 pad=1,2,3,4 padval=-7 src_int8 pop_prev pop_next push_prev push_next\n"
    "  load acc sram=0 seg=7 off=0 y=1 x=1 stride=1\n"
    "  load inp sram=65535 seg=1 off=268435455 y=65535 x=65535 stride=65535 pad=7,7,7,7 padval=127 pop_next push_next\n"
    "  load wgt sram=3 seg=1 off=1 y=1 x=1 stride=1 padval=-1 wgt_transpose\n"
    "  load uop sram=0 seg=3 off=0 y=1 x=3 stride=3\n"
    "  gemm reset uop=8191:16383 iter=4095,4095 acc=2047,2047 inp=2047,2047 wgt=1023,1023 "
    "pop_prev pop_next push_prev push_next\n"
    "  gemm uop=1:2 iter=3,4 acc=5,6 inp=7,8 wgt=9,10\n"
    "  alu requant use_imm imm=-32768 uop=1:2 iter=3,4 dst=5,6 src=7,8 pop_prev pop_next push_prev push_next\n"
    "  alu shr uop=0:1 iter=1,1 dst=0,1 src=1,0\n"
    "  alu mov use_imm imm=32767 uop=0:1 iter=1,1\n"
    "  qcfg mul=-2147483648 shift=63 zp=-128 lo=-100 hi=100 round_even pop_prev pop_next push_prev push_next\n"
    "  gemm first last dw uop=0:9 iter=2,3\n"
    "  alu epi use_imm uop=0:1 iter=1,4 dst=0,1\n"
    "  qcfg mul=7 shift=1 bias=-2147483648 par=255 par_src act\n"
    "  gcfg period=63 win=15,14 step=4095,1 push_prev\n"
    "  load par sram=31 seg=1 off=2 y=1 x=1 stride=1\n"
    "  load lut sram=0 seg=1 off=0 y=1 x=1 stride=1\n"
    "  load inp sram=5 seg=0 off=6 y=2 x=3 stride=4 pad=1,1,1,1 padval=-3 src_out push_next\n"
    "  nop load pop_next push_next\n"
    "  nop compute pop_prev pop_next push_prev push_next\n"
    "  nop store pop_prev push_prev\n"
    "  store sram=9 seg=2 off=3 y=4 x=5 stride=6 pop_prev push_prev\n"
    "  finish pop_prev pop_next push_prev push_next\n"
    "  .insn 0x80000000000000000000000000000007   ; gcfg with a reserved bit\n"
    "  .insn 0x000000000000000000000000000a0003   ; alu imm bits without use_imm\n"
    ".job second seg2=out\n"
    "  FINISH\n"
    ".steps\n"
    ".step job second\n"
    ".step host 3 in=b,-,\"/in:0\" out=-,y\n"
    "  .byte 1,2,3\n"
    ".step job first\n"
    ".step host 4294967295\n";

static uint8_t *assemble(const char *src, const char *name, const char *cfg, size_t *n) {
  struct loom_file_builder *b;
  char msg[LOOM_MSG_MAX];
  if (loom_asm_string(src, strlen(src), name, cfg, &b, msg) != LOOM_OK) fail_msg("%s", msg);
  uint8_t *p = loom_file_builder_finish(b, n);
  assert_non_null(p);
  loom_file_builder_free(b);
  return p;
}

static char *disasm(const uint8_t *p, size_t n) {
  struct loom_file f;
  char msg[LOOM_MSG_MAX], *text;
  size_t len;
  if (loom_file_parse(p, n, "x.loom", &f, msg)) fail_msg("%s", msg);
  FILE *out = open_memstream(&text, &len);
  assert_int_equal(loom_disasm(&f, out, msg), LOOM_OK);
  fclose(out);
  loom_file_free(&f);
  return text;
}

/* assemble(src) == assemble(disasm(assemble(src))), and the listing is a
 * fixed point of disasm . assemble. */
static void check_roundtrip(const char *src, const char *name) {
  size_t n1, n2;
  uint8_t *p1 = assemble(src, name, NULL, &n1);
  char *t1 = disasm(p1, n1);
  uint8_t *p2 = assemble(t1, "listing.s", NULL, &n2);
  if (n1 != n2 || memcmp(p1, p2, n1)) fail_msg("round trip of %s differs; listing:\n%s", name, t1);
  char *t2 = disasm(p2, n2);
  assert_string_equal(t1, t2);
  free(t1);
  free(t2);
  free(p1);
  free(p2);
}

static void test_roundtrip_full(void **state) { check_roundtrip(full_program, "full.s"); }

static void test_roundtrip_example_file(void **state) {
  struct loom_file_builder *b;
  char msg[LOOM_MSG_MAX];
  assert_int_equal(loom_asm_file("tests/asm/gemm_tiny.s", NULL, &b, msg), LOOM_OK);
  size_t n;
  uint8_t *p = loom_file_builder_finish(b, &n);
  loom_file_builder_free(b);
  char *text = disasm(p, n);
  check_roundtrip(text, "gemm_tiny listing");
  free(text);
  free(p);
  assert_int_equal(loom_asm_file("tests/asm/no_such.s", NULL, &b, msg), LOOM_E_NOTFOUND);
  assert_null(b);
}

static void decode_at(const struct loom_file *f, uint32_t i, struct loom_insn *d) {
  assert_int_equal(loom_insn_decode(f->insns + 16 * i, d, NULL), LOOM_ERR_NONE);
}

/* The fields land where the syntax says. */
static void test_fields(void **state) {
  size_t n;
  uint8_t *p = assemble(full_program, "full.s", NULL, &n);
  struct loom_file f;
  char msg[LOOM_MSG_MAX];
  assert_int_equal(loom_file_parse(p, n, "full.loom", &f, msg), LOOM_OK);
  assert_int_equal(f.config_hash, LOOM_CONFIG_DEFAULT_HASH);
  struct loom_insn d;
  decode_at(&f, 0, &d);
  assert_int_equal(d.opcode, LOOM_OP_LOAD);
  assert_int_equal(d.mem.buffer, LOOM_BUF_ACC);
  assert_int_equal(d.mem.segment, 6);
  assert_int_equal(d.mem.x_stride, 5);
  assert_int_equal(d.mem.y_pad_top, 1);
  assert_int_equal(d.mem.y_pad_bottom, 2);
  assert_int_equal(d.mem.x_pad_left, 3);
  assert_int_equal(d.mem.x_pad_right, 4);
  assert_int_equal(d.mem.pad_value, -7);
  assert_true(d.mem.src_int8 && d.pop_prev && d.pop_next && d.push_prev && d.push_next);
  decode_at(&f, 3, &d);
  assert_true(d.mem.buffer == LOOM_BUF_WGT && d.mem.wgt_transpose && d.mem.pad_value == -1);
  decode_at(&f, 2, &d);
  assert_false(d.mem.wgt_transpose);
  decode_at(&f, 5, &d);
  assert_int_equal(d.opcode, LOOM_OP_GEMM);
  assert_int_equal(d.gemm.uop_begin, 8191);
  assert_int_equal(d.gemm.uop_end, 16383);
  assert_int_equal(d.gemm.wgt_factor_in, 1023);
  decode_at(&f, 7, &d);
  assert_int_equal(d.alu.alu_op, LOOM_ALU_REQUANT);
  assert_int_equal(d.alu.imm, -32768);
  assert_int_equal(d.alu.src_factor_out, 7);
  assert_int_equal(d.alu.src_factor_in, 8);
  decode_at(&f, 10, &d);
  assert_int_equal(d.qcfg.multiplier, INT32_MIN);
  assert_int_equal(d.qcfg.clamp_hi, 100);
  assert_int_equal(d.qcfg.round_even, 1);
  decode_at(&f, 11, &d);
  assert_true(d.gemm.first && d.gemm.last && d.gemm.dw && !d.gemm.reset);
  decode_at(&f, 12, &d);
  assert_int_equal(d.alu.alu_op, LOOM_ALU_EPI);
  decode_at(&f, 13, &d);
  assert_int_equal(d.qcfg.bias, INT32_MIN);
  assert_int_equal(d.qcfg.par_base, 255);
  assert_true(d.qcfg.par_src && d.qcfg.act);
  decode_at(&f, 14, &d);
  assert_int_equal(d.opcode, LOOM_OP_GCFG);
  assert_int_equal(d.gcfg.period, 63);
  assert_int_equal(d.gcfg.dw_kh, 15);
  assert_int_equal(d.gcfg.dw_kw, 14);
  assert_int_equal(d.gcfg.dw_row, 4095);
  assert_int_equal(d.gcfg.dw_col, 1);
  decode_at(&f, 15, &d);
  assert_int_equal(d.mem.buffer, LOOM_BUF_PAR);
  decode_at(&f, 16, &d);
  assert_int_equal(d.mem.buffer, LOOM_BUF_LUT);
  decode_at(&f, 17, &d);
  assert_true(d.mem.src_out && d.mem.buffer == LOOM_BUF_INP && d.push_next);
  decode_at(&f, 19, &d);
  assert_int_equal(d.nop.queue, LOOM_Q_COMPUTE);
  assert_int_equal(f.insns[23 * 16], 7); /* the raw .insn */
  assert_int_equal(f.insns[23 * 16 + 15], 0x80);
  assert_int_equal(f.job_count, 2);
  assert_int_equal(f.jobs[0].insn_count, 25);
  assert_int_equal(f.jobs[1].insn_first, 25);
  assert_int_equal(f.jobs[0].segments[7], 3);
  assert_int_equal(f.step_count, 4);
  assert_int_equal(f.steps[0].index, 1);
  const struct loom_file_step *h = &f.steps[1];
  assert_int_equal(h->kind, LOOM_STEP_HOST);
  assert_int_equal(h->inputs[0], 2);
  assert_int_equal(h->inputs[1], NB);
  assert_int_equal(h->inputs[2], 0);
  assert_int_equal(h->outputs[1], 1);
  assert_int_equal(h->param_size, 3);
  assert_int_equal(f.data[h->param_offset + 2], 3);
  assert_int_equal(f.steps[3].index, UINT32_MAX);
  assert_string_equal(loom_file_string(&f, f.tensors[4].name), "we\"ird\\ \x7f");
  assert_int_equal(f.buffers[1].size, 80);
  assert_int_equal(f.data[f.buffers[1].data_offset + 47], 10);
  assert_int_equal(f.buffers[2].size, 12);
  assert_int_equal(f.buffers[0].align, 128);
  assert_true(f.tensors[1].scale == 0.1f);
  loom_file_free(&f);
  free(p);
}

/* Without .steps, one JOB step per job in order; the listing keeps that. */
static void test_implicit_steps(void **state) {
  const char *src = ".config tiny\n.job a\n nop compute\n finish\n.job b\n finish\n";
  size_t n;
  uint8_t *p = assemble(src, "s.s", NULL, &n);
  char *text = disasm(p, n);
  assert_null(strstr(text, ".step"));
  struct loom_file f;
  char msg[LOOM_MSG_MAX];
  assert_int_equal(loom_file_parse(p, n, "s.loom", &f, msg), LOOM_OK);
  assert_int_equal(f.step_count, 2);
  assert_int_equal(f.steps[1].index, 1);
  assert_int_equal(f.steps[1].inputs[0], NB);
  loom_file_free(&f);
  free(text);
  free(p);
  check_roundtrip(".config tiny\n.job a\n finish\n.steps\n", "nosteps.s");
  check_roundtrip(".config 0x12345678\n.job a\n finish\n.job b\n finish\n.step job b\n", "hash.s");
}

static void test_config_override(void **state) {
  size_t n;
  uint8_t *p = assemble(".config tiny\n.job a\n finish\n", "o.s", "large", &n);
  assert_int_equal(p[28] | p[29] << 8 | p[30] << 16 | (uint32_t)p[31] << 24, LOOM_CONFIG_LARGE_HASH);
  free(p);
  p = assemble(".job a\n finish\n", "o.s", "0xbe827f10", &n);
  assert_int_equal(p[28] | p[29] << 8 | p[30] << 16 | (uint32_t)p[31] << 24, LOOM_CONFIG_TINY_HASH);
  free(p);
  struct loom_file_builder *b;
  char msg[LOOM_MSG_MAX];
  assert_int_equal(loom_asm_string("", 0, "o.s", "huge", &b, msg), LOOM_E_FORMAT);
  assert_string_equal(msg, "config override: unknown configuration 'huge' (tiny, default, large, a configuration file, or a hash 0x...)");
}

struct bad {
  const char *src;
  const char *msg;
};

#define HEAD ".config tiny\n.buffer a work 64\n.job j seg0=a\n"

static const struct bad bad_sources[] = {
    {HEAD "  gemm uop=0:1 iter=20000,1\n", "e.s:4:21: iter_out 20000 does not fit 12 bits (0..4095)"},
    {HEAD "  gemm uop=0:1 iter=1,99999999999\n", "e.s:4:23: iter_in 99999999999 does not fit 12 bits (0..4095)"},
    {HEAD "  load inp sram=0 seg=8 off=0 y=1 x=1 stride=1\n", "e.s:4:23: segment 8 does not fit 3 bits (0..7)"},
    {HEAD "  load inp sram=0 seg=0 off=0 y=1 x=1 stride=1 pad=1,0,0,0 padval=200\n",
     "e.s:4:67: pad_value 200 does not fit 8 bits (-128..127)"},
    {HEAD "  load inp sram=0 seg=0 off=0 y=1 x=1 stride=1 pad=1,2\n",
     "e.s:4:55: pad takes 4 values: pad=TOP,BOTTOM,LEFT,RIGHT"},
    {HEAD "  gemm uop=0,1 iter=1,1\n", "e.s:4:13: uop takes 2 values: uop=BEGIN:END"},
    {HEAD "  gemm uop=0:x iter=1,1\n", "e.s:4:14: uop needs an integer here (uop=BEGIN:END)"},
    {HEAD "  gemn\n", "e.s:4:3: unknown instruction 'gemn'"},
    {HEAD "  finish foo=1\n", "e.s:4:10: finish has no field 'foo'"},
    {HEAD "  finish reset\n", "e.s:4:10: finish has no flag 'reset'"},
    {HEAD "  gemm uop=0:1 iter\n", "e.s:4:16: iter needs a value: iter=OUT,IN"},
    {HEAD "  load inp sram=0 seg=0 off=0 y=1 x=1\n", "e.s:4:3: load needs stride=ROWS"},
    {HEAD "  load sram=0\n", "e.s:4:8: load needs uop, wgt, inp, acc, par or lut first"},
    {HEAD "  alu\n", "e.s:4:3: alu needs add, max, min, shr, mul, mov, requant or epi first"},
    {HEAD "  finish push_next push_next\n", "e.s:4:20: flag push_next is given twice"},
    {HEAD "  gemm uop=0:1 iter=1,1 uop=0:1\n", "e.s:4:25: uop= is given twice"},
    {HEAD "  load uop sram=0 seg=0 off=0 y=1 x=1 stride=1 pad=1,0,0,0\n",
     "e.s:4:3: illegal instruction: padding on a UOP, WGT, PAR or LUT load"},
    {HEAD "  load wgt sram=0 seg=0 off=0 y=1 x=1 stride=1 src_out\n",
     "e.s:4:3: illegal instruction: src_out on a non-INP load"},
    {HEAD "  load inp sram=0 seg=1 off=0 y=1 x=1 stride=1 src_out\n",
     "e.s:4:3: illegal instruction: src_out with a segment other than 0"},
    {HEAD "  load inp sram=0 seg=0 off=0 y=1 x=1 stride=1 wgt_transpose\n",
     "e.s:4:3: illegal instruction: wgt_transpose on a non-WGT load"},
    {HEAD "  store sram=0 seg=0 off=0 y=1 x=1 stride=1 wgt_transpose\n",
     "e.s:4:45: store has no flag 'wgt_transpose'"},
    {HEAD "  gemm reset last uop=0:1 iter=1,1\n", "e.s:4:3: illegal instruction: reset with first, last or dw"},
    {HEAD "  gcfg win=16,1\n", "e.s:4:12: dw_kh 16 does not fit 4 bits (0..15)"},
    {HEAD "  load inp sram=0 seg=0 off=0 y=1 x=1 stride=1 pop_prev\n",
     "e.s:4:3: illegal instruction: load-queue instruction uses a prev token"},
    {HEAD "  load out sram=0 seg=0 off=0 y=1 x=1 stride=1\n",
     "e.s:4:3: illegal instruction: LOAD into an undefined or OUT buffer"},
    {HEAD "  alu add imm=3 uop=0:1 iter=1,1\n", "e.s:4:11: imm= has no effect without the use_imm flag"},
    {HEAD "  .insn 0x12g4\n", "e.s:4:13: 'g' is not a hex digit"},
    {HEAD "  .insn 0x111111111111111111111111111111111\n", "e.s:4:9: .insn needs a hex number of up to 32 digits (0x...)"},
    {HEAD "  finish extra=\n", "e.s:4:10: finish has no field 'extra'"},
    {".config tiny\n  finish\n", "e.s:2:3: instruction outside a job (start one with .job NAME)"},
    {".config tiny\n.job j seg0=b\n", "e.s:2:13: buffer 'b' is not declared"},
    {".config tiny\n.job j seg8=b\n", "e.s:2:8: .job has no option 'seg8' (seg0= .. seg7=)"},
    {HEAD "  finish\n.buffer a work 64\n", "e.s:5:9: buffer 'a' is already declared"},
    {".config tiny\n.buffer a work\n", "e.s:2:1: work buffer 'a' needs a size"},
    {".config tiny\n.buffer a work 64 align=100\n", "e.s:2:25: align 100 is not a power of two"},
    {".config tiny\n.buffer a scratch 64\n", "e.s:2:11: expected the buffer kind (const or work)"},
    {".config tiny\n.buffer a work 64\n.tensor t input a 0 i8 [4,-3]\n",
     "e.s:3:27: tensor 't': dims[1] = -3 is negative"},
    {".config tiny\n.buffer a work 64\n.tensor t input a 60 i8 [8]\n",
     "e.s:3:19: tensor 't': offset 60 + bytes 8 exceeds its buffer (64 bytes)"},
    {".config tiny\n.buffer a work 64\n.tensor t input a 0 i8 [8] zp=3\n",
     "e.s:3:31: tensor 't': zero_point 3 without a scale"},
    {".config tiny\n.buffer a work 64\n.tensor t input a 0 i8 [8] layout=nchwc block=4\n",
     "e.s:3:1: tensor 't': rank 1: the nchwc layout needs rank 4"},
    {".config tiny\n.buffer a work 64\n.tensor t input a 0 i128 [8]\n",
     "e.s:3:21: expected a dtype (i8, u8, i32, f32, i64, bool, i16, u16, u32, u64, f16, bf16 or f64)"},
    {".config tiny\n.buffer a work 64\n.tensor t input a 0 i8 [8] scale=abc\n", "e.s:3:34: 'abc' is not a finite number"},
    {".config tiny\n.buffer \"abc work 64\n", "e.s:2:9: unterminated string"},
    {".config tiny\n.buffer \"a\\qb\" work 64\n", "e.s:2:11: unknown escape (use \\\" \\\\ \\n \\t or \\xHH)"},
    {".config tiny\n.bufer a work 64\n", "e.s:2:1: unknown directive '.bufer'"},
    {".buffer a work 64\n", "e.s: no .config directive (name the hardware, e.g. .config tiny)"},
    {".config huge\n", "e.s:1:9: unknown configuration 'huge' (tiny, default, large, a configuration file, or a hash 0x...)"},
    {".config tiny\n.config tiny\n", "e.s:2:1: a second .config (the first is on line 1)"},
    {".config tiny\n.job j\n.buffer b work 64\n", "e.s:2:1: job 'j' has no instructions"},
    {".config tiny\n.job j\n", "e.s:2:1: job 'j' has no instructions"},
    {".config tiny\n.buffer b work 64\n  .byte 1\n", "e.s:3:3: .byte outside a const buffer or a host step"},
    {".config tiny\n.buffer c const 2\n  .byte 1,2,3\n", "e.s:3:3: data exceeds the 2 bytes it may hold"},
    {".config tiny\n.buffer c const\n.buffer d work 8\n", "e.s:2:1: const buffer 'c' has neither a size nor data"},
    {".config tiny\n.buffer c const\n  .byte 256\n", "e.s:3:9: byte 256 is not in -128..255"},
    {".config tiny\n.buffer c const\n  .word 0x100000000\n", "e.s:3:9: word 4294967296 is not in -2147483648..4294967295"},
    {".config tiny\n.buffer c const\n  .uop acc=2048 inp=0 wgt=0\n", "e.s:3:12: acc 2048 is not in 0..2047"},
    {".config tiny\n.buffer c const\n  .uop 1 2\n", "e.s:3:11: .uop needs acc, inp and wgt"},
    {".config tiny\n.job j\n finish\n.step job k\n", "e.s:4:11: job 'k' is not declared"},
    {".config tiny\n.job j\n finish\n.step host 1 in=a\n", "e.s:4:17: tensor 'a' is not declared"},
    {".config tiny\n.job j\n finish\n.step host 1 out=-,-,-\n", "e.s:4:22: out= takes at most 2 tensors"},
    {".config tiny\n.job j\n finish\n.step dance\n", "e.s:4:7: expected the step kind (job, host or kernel)"},
    {".config tiny\n.job j\n finish\n.steps now\n", "e.s:4:8: unexpected 'now' at the end of the line"},
    {".config tiny\n.buffer a\x00 work 64\n", "e.s:2:10: NUL byte in the source"},
};

static void test_errors(void **state) {
  int failed = 0;
  for (size_t i = 0; i < sizeof bad_sources / sizeof bad_sources[0]; i++) {
    const struct bad *t = &bad_sources[i];
    struct loom_file_builder *b = (struct loom_file_builder *)1;
    char msg[LOOM_MSG_MAX] = "";
    size_t len = strlen(t->src);
    if (strstr(t->msg, "NUL byte")) len += strlen(t->src + len + 1) + 1;
    loom_status st = loom_asm_string(t->src, len, "e.s", NULL, &b, msg);
    if (st == LOOM_OK) fail_msg("accepted:\n%s", t->src);
    assert_null(b);
    if (strcmp(msg, t->msg)) {
      print_error("source:\n%swant: %s\ngot:  %s\n", t->src, t->msg, msg);
      failed++;
    }
  }
  assert_int_equal(failed, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_roundtrip_full),
      cmocka_unit_test(test_roundtrip_example_file),
      cmocka_unit_test(test_fields),
      cmocka_unit_test(test_implicit_steps),
      cmocka_unit_test(test_config_override),
      cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
