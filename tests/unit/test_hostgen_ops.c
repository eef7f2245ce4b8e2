/*
 * test_hostgen_ops.c - host code generated through LLVM for single host
 * ops, against the C reference.
 *
 * Host ops: random steps (shapes, layouts NCHWc / NC / plain, dtypes,
 * scales, zero points, axes) are compiled by hostgen into one shared
 * object, loaded through the runtime's hostcode.c, and each native entry
 * runs on random stored bytes next to the portable op (hostops.c):
 * COPY / QUANTIZE / DEQUANTIZE must agree bit for bit, SOFTMAX within
 * 2e-7 absolute + 4 ulp-ish relative (exp is a polynomial), or one
 * quantization step for a quantized output.
 *
 * Cross targets: the same steps for aarch64 and armv7 give images with the
 * right ELF machine, class and float ABI, which this x86-64 runtime does
 * not load (the portable ops run instead).  Running them is
 * tests/llvm/run-cross.sh (qemu-user).
 *
 * Loading: a damaged image for this machine, a missing symbol or a
 * signature mismatch are load errors, never a quiet fallback.
 *
 * Whole graphs and models: test_hostgen.c.
 */
#include <elf.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "filebytes.h"
#include "hostgenrun.h"
#include "driver/lib/hostcode.h"
#include "driver/core/hostops.h"
#include "driver/core/hostops_nn.h"
#include "driver/core/loomfile.h"

#define NB LOOM_FILE_NO_BUFFER

/* ---- random host-op steps ---- */

struct opcase {
  uint32_t op;
  struct loom_file_tensor x, y;
  int32_t axis;
  int32_t im2col[LOOM_IM2COL_PARAM_COUNT];
};

static void random_shape(struct loom_file_tensor *t, int rank) {
  t->rank = (uint32_t)rank;
  for (int i = 0; i < rank; i++) t->dims[i] = hgrun_rint_in(1, i == 1 ? 20 : 6);
}

static void random_layout(struct loom_file_tensor *t) {
  static const uint32_t blocks[] = {1, 3, 4, 8, 16};
  if ((t->rank == 4 || t->rank == 2) && hgrun_rnd() % 2) {
    t->layout = t->rank == 4 ? LOOM_LAYOUT_NCHWC : LOOM_LAYOUT_NC;
    t->layout_block = blocks[hgrun_rnd() % 5];
  }
}

static void quantized(struct loom_file_tensor *t, uint32_t dtype) {
  t->dtype = t->user_dtype = dtype;
  t->scale = hgrun_rnd() % 3 ? hgrun_rfloat(0.003f, 0.5f) : 0.125f; /* a power of two makes exact ties */
  t->zero_point = dtype == LOOM_DT_U8 ? hgrun_rint_in(0, 255) : dtype == LOOM_DT_I8 ? hgrun_rint_in(-128, 127) : hgrun_rint_in(-1000, 1000);
}

static void plain_dtype(struct loom_file_tensor *t, uint32_t dtype) { t->dtype = t->user_dtype = dtype; }

static void random_dtypes(struct opcase *c) {
  static const uint32_t q8[] = {LOOM_DT_I8, LOOM_DT_U8};
  switch (c->op) {
  case LOOM_HOSTOP_COPY: {
    uint32_t dt = (uint32_t)hgrun_rint_in(LOOM_DT_I8, LOOM_DT_F32);
    if (dt != LOOM_DT_F32 && hgrun_rnd() % 2) quantized(&c->x, dt), c->y.zero_point = c->x.zero_point;
    plain_dtype(&c->x, dt), plain_dtype(&c->y, dt);
    c->y.scale = c->x.scale;
    break;
  }
  case LOOM_HOSTOP_QUANTIZE:
    if (hgrun_rnd() % 4) plain_dtype(&c->x, LOOM_DT_F32);
    else quantized(&c->x, LOOM_DT_I8);
    quantized(&c->y, q8[hgrun_rnd() % 2]);
    break;
  case LOOM_HOSTOP_DEQUANTIZE:
    quantized(&c->x, (uint32_t[]){LOOM_DT_I8, LOOM_DT_U8, LOOM_DT_I32}[hgrun_rnd() % 3]);
    plain_dtype(&c->y, LOOM_DT_F32);
    break;
  default: /* SOFTMAX */
    if (hgrun_rnd() % 3) plain_dtype(&c->x, LOOM_DT_F32);
    else quantized(&c->x, q8[hgrun_rnd() % 2]);
    if (hgrun_rnd() % 3) plain_dtype(&c->y, LOOM_DT_F32);
    else quantized(&c->y, q8[hgrun_rnd() % 2]), c->y.scale = 1.0f / 256, c->y.zero_point = c->y.dtype == LOOM_DT_I8 ? -128 : 0;
    break;
  }
}

/* A folded-stem gather: random window, stride, padding and dilation, any
 * input layout, a blocked or plain quantized output. */
static struct opcase im2col_case(void) {
  struct opcase c = {.op = LOOM_HOSTOP_IM2COL};
  int32_t *v = c.im2col;
  int64_t oh, ow;
  do {
    random_shape(&c.x, 4);
    c.x.dims[2] = hgrun_rint_in(1, 12), c.x.dims[3] = hgrun_rint_in(1, 12);
    v[LOOM_IM2COL_K_H] = hgrun_rint_in(1, 7), v[LOOM_IM2COL_K_W] = hgrun_rint_in(1, 7);
    v[LOOM_IM2COL_STRIDE_H] = hgrun_rint_in(1, 3), v[LOOM_IM2COL_STRIDE_W] = hgrun_rint_in(1, 3);
    v[LOOM_IM2COL_PAD_T] = hgrun_rint_in(0, 3), v[LOOM_IM2COL_PAD_L] = hgrun_rint_in(0, 3);
    v[LOOM_IM2COL_DIL_H] = hgrun_rint_in(1, 2), v[LOOM_IM2COL_DIL_W] = hgrun_rint_in(1, 2);
    oh = (c.x.dims[2] + 2 * v[LOOM_IM2COL_PAD_T] - v[LOOM_IM2COL_DIL_H] * (v[LOOM_IM2COL_K_H] - 1) - 1) /
         v[LOOM_IM2COL_STRIDE_H] + 1;
    ow = (c.x.dims[3] + 2 * v[LOOM_IM2COL_PAD_L] - v[LOOM_IM2COL_DIL_W] * (v[LOOM_IM2COL_K_W] - 1) - 1) /
         v[LOOM_IM2COL_STRIDE_W] + 1;
  } while (oh < 1 || ow < 1);
  v[LOOM_IM2COL_OUT_H] = (int32_t)oh, v[LOOM_IM2COL_OUT_W] = (int32_t)ow;
  v[LOOM_IM2COL_PAD_VALUE] = hgrun_rint_in(-128, 127);
  c.y.rank = 4;
  c.y.dims[0] = c.x.dims[0], c.y.dims[1] = c.x.dims[1] * v[LOOM_IM2COL_K_H] * v[LOOM_IM2COL_K_W];
  c.y.dims[2] = oh, c.y.dims[3] = ow;
  random_layout(&c.x);
  random_layout(&c.y);
  quantized(&c.x, LOOM_DT_I8);
  quantized(&c.y, LOOM_DT_I8);
  return c;
}

static struct opcase random_case(uint32_t op) {
  if (op == LOOM_HOSTOP_IM2COL) return im2col_case();
  struct opcase c = {.op = op};
  random_shape(&c.x, hgrun_rint_in(op == LOOM_HOSTOP_SOFTMAX ? 1 : 0, 4));
  c.y.rank = c.x.rank;
  memcpy(c.y.dims, c.x.dims, sizeof c.y.dims);
  random_layout(&c.x);
  random_layout(&c.y);
  random_dtypes(&c);
  c.axis = c.x.rank ? hgrun_rint_in(-(int)c.x.rank, (int)c.x.rank - 1) : 0;
  return c;
}

/* One step per case; buffers and tensors 2i, 2i+1. */
static uint8_t *cases_file(const struct opcase *c, int n, size_t *size) {
  struct loom_file_builder *b = loom_file_builder_new(LOOM_CONFIG_DEFAULT_HASH);
  for (int i = 0; i < n; i++) {
    struct loom_file_tensor x = c[i].x, y = c[i].y;
    char name[32];
    snprintf(name, sizeof name, "x%d", i);
    x.name = loom_fb_string(b, name), x.buffer = (uint32_t)(2 * i), x.bytes = loom_file_tensor_bytes(&x);
    struct loom_file_buffer bx = {.name = x.name, .kind = LOOM_BUFKIND_WORK, .size = x.bytes, .align = 64};
    snprintf(name, sizeof name, "y%d", i);
    y.name = loom_fb_string(b, name), y.buffer = (uint32_t)(2 * i + 1), y.bytes = loom_file_tensor_bytes(&y);
    struct loom_file_buffer by = {.name = y.name, .kind = LOOM_BUFKIND_WORK, .size = y.bytes, .align = 64};
    loom_fb_buffer(b, &bx), loom_fb_buffer(b, &by);
    loom_fb_tensor(b, &x), loom_fb_tensor(b, &y);
    struct loom_file_step s = {.kind = LOOM_STEP_HOST, .index = c[i].op, .inputs = {(uint32_t)(2 * i), NB, NB, NB},
                               .outputs = {(uint32_t)(2 * i + 1), NB}};
    if (c[i].op == LOOM_HOSTOP_SOFTMAX) {
      s.param_offset = loom_fb_data(b, &c[i].axis, 4, 4);
      s.param_size = 4;
    }
    if (c[i].op == LOOM_HOSTOP_IM2COL) { /* little-endian int32, as on every target tested */
      s.param_offset = loom_fb_data(b, c[i].im2col, sizeof c[i].im2col, 4);
      s.param_size = sizeof c[i].im2col;
    }
    loom_fb_step(b, &s);
  }
  uint8_t *p = loom_file_builder_finish(b, size);
  assert_non_null(p);
  loom_file_builder_free(b);
  return p;
}

/* ---- running a step both ways ---- */

static void fill_input(const struct loom_file_tensor *t, uint8_t *p) {
  if (t->dtype != LOOM_DT_F32) {
    for (uint64_t i = 0; i < t->bytes; i++) p[i] = (uint8_t)hgrun_rnd();
    return;
  }
  static const float special[] = {0.0f, -0.0f, 0.5f, -0.5f, 1.5f, 2.5f, -2.5f, 1e30f, -1e30f};
  for (uint64_t i = 0; i < t->bytes / 4; i++) {
    float v = hgrun_rfloat(-6, 6);
    uint64_t r = hgrun_rnd() % 64;
    if (r < 9) v = special[r] * (t->scale ? t->scale : 1);
    else if (r < 20) v = (float)hgrun_rint_in(-300, 300) * 0.0625f; /* ties for scale 0.125 */
    else if (r == 20) v = NAN;
    memcpy(p + 4 * i, &v, 4);
  }
}

static float f32_at(const uint8_t *p, uint64_t i) {
  float v;
  memcpy(&v, p + 4 * i, 4);
  return v;
}

static void compare(const struct opcase *c, const struct loom_file_tensor *y, int index, const uint8_t *got,
                    const uint8_t *want) {
  assert_true(y->bytes > 0);
  if (c->op != LOOM_HOSTOP_SOFTMAX) {
    for (uint64_t i = 0; i < y->bytes; i++)
      if (got[i] != want[i]) fail_msg("case %d (op %s): byte %llu differs: %u, want %u", index,
                                      loom_hostop_name(c->op), (unsigned long long)i, got[i], want[i]);
    return;
  }
  if (y->dtype == LOOM_DT_F32) {
    for (uint64_t i = 0; i < y->bytes / 4; i++) {
      float a = f32_at(got, i), b = f32_at(want, i);
      if ((isnan(a) && isnan(b)) || fabsf(a - b) <= 2e-7f + 4e-7f * fabsf(b)) continue;
      fail_msg("case %d (softmax): element %llu is %.9g, want %.9g", index, (unsigned long long)i, a, b);
    }
    return;
  }
  for (uint64_t i = 0; i < y->bytes; i++) {
    int a = y->dtype == LOOM_DT_I8 ? (int8_t)got[i] : got[i], b = y->dtype == LOOM_DT_I8 ? (int8_t)want[i] : want[i];
    if (abs(a - b) > 1) fail_msg("case %d (softmax, quantized): byte %llu is %d, want %d", index, (unsigned long long)i, a, b);
  }
}

static void run_case(const struct loom_file *f, const struct loom_hostcode *hc, const struct opcase *c, int i) {
  const struct loom_file_tensor *x = &f->tensors[2 * i], *y = &f->tensors[2 * i + 1];
  uint8_t *xb = malloc(x->bytes + 1), *got = malloc(y->bytes + 1), *want = malloc(y->bytes + 1);
  fill_input(x, xb);
  memset(got, 0xA5, y->bytes);
  memset(want, 0x5A, y->bytes);
  struct loom_hostop_args a = {.in = {{x, xb}}, .out = {{y, got}}, .n_in = 1, .n_out = 1};
  a.params = f->data + f->steps[i].param_offset, a.param_size = f->steps[i].param_size;
  char msg[LOOM_MSG_MAX];
  loom_hostcode_fn fn = loom_hostcode_entry(hc, (uint32_t)i);
  assert_non_null(fn);
  assert_int_equal(loom_hostcode_call(fn, &a, msg), LOOM_OK);
  a.out[0].data = want;
  if (loom_hostop_run(c->op, &a, msg) != LOOM_OK) fail_msg("case %d: reference: %s", i, msg);
  compare(c, y, i, got, want);
  free(xb), free(got), free(want);
}

#define N_CASES 160

static void test_ops_random(void **state) {
  static struct opcase c[N_CASES];
  hgrun_seed(20240601);
  for (int i = 0; i < N_CASES; i++) c[i] = random_case((uint32_t)(i % 5)); /* COPY .. IM2COL */
  size_t n, m;
  uint8_t *p = cases_file(c, N_CASES, &n);
  struct hostgen_summary sum;
  uint8_t *q = hgrun_generate(p, n, NULL, &m, &sum);
  assert_int_equal(sum.native_steps, N_CASES);
  struct loom_file f;
  char msg[LOOM_MSG_MAX];
  if (loom_file_parse(q, m, "gen.loom", &f, msg)) fail_msg("%s", msg);
  assert_int_equal(f.version_minor, 1);
  struct loom_hostcode *hc;
  if (loom_hostcode_open(&f, "gen.loom", 1, &hc, msg)) fail_msg("%s", msg);
  assert_true(loom_hostcode_loaded(hc));
  for (int round = 0; round < 3; round++)
    for (int i = 0; i < N_CASES; i++) run_case(&f, hc, &c[i], i);
  loom_hostcode_close(hc);
  loom_file_free(&f);
  free(p), free(q);
}
/* ---- cross targets: images for other machines ---- */

static uint8_t *small_cases_file(struct opcase *c, int n, size_t *size) {
  hgrun_seed(99);
  for (int i = 0; i < n; i++) c[i] = random_case((uint32_t)(i % 4));
  return cases_file(c, n, size);
}

static void check_elf(const uint8_t *img, uint64_t size, int elf_class, uint16_t machine, int hard_float) {
  struct loom_hostcode_machine m;
  char why[128];
  assert_int_equal(loom_hostcode_elf_machine(img, size, &m, why), 0);
  assert_int_equal(m.elf_class, elf_class);
  assert_int_equal(m.machine, machine);
  assert_int_equal(m.big_endian, 0);
  assert_int_equal(m.hard_float, hard_float);
  assert_int_equal(img[EI_DATA], ELFDATA2LSB);
  /* the image passes the loader's checks, whatever machine it is for */
  if (loom_hostcode_elf_check(img, size, why)) fail_msg("%s", why);
}

/* aarch64 and armv7 images are ELF for those machines; this runtime
 * does not load them and runs the portable ops (same results). */
static void test_cross_images(void **state) {
  static const struct {
    const char *triple, *canonical;
    int elf_class, hard_float;
    uint16_t machine;
  } t[] = {{"aarch64-linux-gnu", "aarch64-unknown-linux-gnu", ELFCLASS64, 0, EM_AARCH64},
           {"armv7-linux-gnueabihf", "armv7-unknown-linux-gnueabihf", ELFCLASS32, 1, EM_ARM}};
  struct opcase c[24];
  size_t n, m;
  uint8_t *p = small_cases_file(c, 24, &n);
  for (int i = 0; i < 2; i++) {
    struct hostgen_summary sum;
    uint8_t *q = hgrun_generate(p, n, t[i].triple, &m, &sum);
    assert_string_equal(sum.triple, t[i].canonical);
    struct loom_file f;
    char msg[LOOM_MSG_MAX];
    if (loom_file_parse(q, m, "x.loom", &f, msg)) fail_msg("%s", msg);
    assert_string_equal(loom_file_string(&f, f.hostcode->triple), t[i].canonical);
    check_elf(f.hostcode_image, f.hostcode->image_size, t[i].elf_class, t[i].machine, t[i].hard_float);
    struct loom_hostcode *hc;
    if (loom_hostcode_open(&f, "x.loom", 1, &hc, msg)) fail_msg("%s", msg);
    assert_false(loom_hostcode_loaded(hc));
    assert_null(loom_hostcode_entry(hc, 0));
    assert_non_null(strstr(loom_hostcode_describe(hc), "does not run on this machine"));
    loom_hostcode_close(hc);
    struct hgrun_loaded l;
    hgrun_load(q, m, &l); /* the portable ops take over */
    hgrun_unload(&l);
    loom_file_free(&f);
    free(q);
  }
  free(p);
}

/* A NATIVE-only graph for another machine has nothing to fall back to. */
static void test_cross_graph_refused(void **state) {
  struct ir_graph *g = hgrun_parse_graph("loom.ir 1\ninput %x : f32[1,4]\n%y = Relu(%x)\noutput %y\n");
  size_t n;
  uint8_t *p = hgrun_graph_loom(g, "aarch64-linux-gnu", &n);
  loom_device *dev;
  loom_model *m;
  char msg[LOOM_MSG_MAX];
  assert_int_equal(loom_device_open("fsim", NULL, &dev, msg), LOOM_OK);
  assert_int_equal(loom_model_load_memory(dev, p, n, "cpu.loom", &m, msg), LOOM_E_UNSUPPORTED);
  assert_non_null(strstr(msg, "cpu.loom: step 0 exists only as native code"));
  assert_non_null(strstr(msg, "aarch64-unknown-linux-gnu"));
  loom_device_close(dev);
  free(p);
  ir_graph_free(g);
}
/* ---- load failures of code for this machine: errors, not fallbacks ---- */

static void expect_load_error(const uint8_t *p, size_t n, loom_status want, const char *needle) {
  loom_device *dev;
  loom_model *m = NULL;
  char msg[LOOM_MSG_MAX] = "";
  assert_int_equal(loom_device_open("fsim", "trust_native=1", &dev, msg), LOOM_OK);
  loom_status st = loom_model_load_memory(dev, p, n, "bad.loom", &m, msg);
  if (st == LOOM_OK) loom_model_free(m);
  if (st != want || !strstr(msg, needle))
    fail_msg("load gave %s '%s', expected %s with '%s'", loom_status_name(st), msg, loom_status_name(want), needle);
  loom_device_close(dev);
}

/* Offset in the file of the dynamic entry with tag `tag` (64-bit image). */
static size_t dyn_entry(const struct loom_file *f, int64_t tag) {
  const uint8_t *img = f->hostcode_image;
  Elf64_Ehdr eh;
  memcpy(&eh, img, sizeof eh);
  for (int i = 0; i < eh.e_phnum; i++) {
    Elf64_Phdr ph;
    memcpy(&ph, img + eh.e_phoff + (size_t)i * sizeof ph, sizeof ph);
    if (ph.p_type != PT_DYNAMIC) continue;
    for (size_t at = ph.p_offset; at < ph.p_offset + ph.p_filesz; at += sizeof(Elf64_Dyn)) {
      Elf64_Dyn d;
      memcpy(&d, img + at, sizeof d);
      if (d.d_tag == tag) return (size_t)(img + at - (const uint8_t *)f->storage);
    }
  }
  fail_msg("no dynamic tag %lld", (long long)tag);
  return 0;
}

static void test_load_failures(void **state) {
  struct opcase c[8];
  size_t n, m;
  uint8_t *p = small_cases_file(c, 8, &n), *q = hgrun_generate(p, n, NULL, &m, NULL), *bad = malloc(m);
  struct loom_file f;
  char msg[LOOM_MSG_MAX];
  if (loom_file_parse(q, m, "x.loom", &f, msg)) fail_msg("%s", msg);
  const uint8_t *base = f.storage;
  /* a tensor the code was not specialized for */
  memcpy(bad, q, m);
  size_t zp = (size_t)((const uint8_t *)&f.tensors[1].zero_point - base);
  bad[zp] ^= 1;
  fix_crc(bad, m);
  expect_load_error(bad, m, LOOM_E_FORMAT, "was built for other tensors or parameters");
  /* an entry point the image lacks */
  memcpy(bad, q, m);
  size_t sym = (size_t)((const uint8_t *)loom_file_string(&f, f.hostcode_entries[0].symbol) - base);
  bad[sym + 5] = 'X';
  fix_crc(bad, m);
  expect_load_error(bad, m, LOOM_E_FORMAT, "the image has no symbol 'loom_Xtep_0'");
  /* an image that would run code at load time, or pull in a library */
  memcpy(bad, q, m);
  int64_t init = DT_INIT;
  memcpy(bad + dyn_entry(&f, DT_HASH), &init, 8);
  fix_crc(bad, m);
  expect_load_error(bad, m, LOOM_E_FORMAT, "has an initializer");
  memcpy(bad, q, m);
  int64_t needed = DT_NEEDED;
  memcpy(bad + dyn_entry(&f, DT_SONAME), &needed, 8);
  fix_crc(bad, m);
  expect_load_error(bad, m, LOOM_E_FORMAT, "depends on another shared library");
  /* not a shared object */
  memcpy(bad, q, m);
  bad[(size_t)(f.hostcode_image - base) + offsetof(Elf64_Ehdr, e_type)] = ET_EXEC;
  fix_crc(bad, m);
  expect_load_error(bad, m, LOOM_E_FORMAT, "is not a shared object");
  loom_file_free(&f);
  free(p), free(q), free(bad);
}
int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ops_random),
      cmocka_unit_test(test_cross_images),
      cmocka_unit_test(test_cross_graph_refused),
      cmocka_unit_test(test_load_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
