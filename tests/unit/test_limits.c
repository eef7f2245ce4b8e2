/*
 * test_limits.c - caps on what a model, a binary or an array may ask for,
 * and the integer overflows that naive size arithmetic would hit.
 *
 * Every input here is tiny and claims something huge: a 100-byte ONNX
 * model with a 16 GiB initializer, a .loom tensor whose dims multiply past
 * 2^64, a section whose offset + size wraps, a .npy shape of 2^62 x 4.
 * Each must be refused with a message naming the file and the field, never
 * crash, never trip an assert, and never allocate what the input merely
 * claims.  The last property is checked in a child process whose address
 * space is capped at LIMIT_AS_BYTES (not under AddressSanitizer, which
 * needs terabytes of address space for its shadow): there an allocation of
 * the claimed size fails, and the importer's allocator would abort.
 *
 * Caps exercised: IR_MAX_RANK, IR_MAX_DIM, IR_MAX_TENSOR_BYTES and the
 * attribute-list cap of the importer; LOOM_FILE_MAX_SIZE, LOOM_MAX_RANK,
 * LOOM_FILE_MAX_SECTIONS, the 4 GiB buffer cap and the KERNELS record caps
 * (LOOM_FILE_KERNEL_MAX_IO, _MAX_ATTRS, LOOM_FILE_KATTR_MAX_COUNT) of the
 * .loom format;
 * LOOM_NPY_MAX_RANK, LOOM_NPY_MAX_BYTES and the header cap of the .npy
 * reader; the field widths of the assembler; the size cap of file reads.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "driver/core/asm.h"
#include "driver/core/loomfile.h"
#include "driver/core/npy.h"
#include "driver/core/readfile.h"
#include "driver/lib/runtime.h"
#include "loom/isa.h"
#include "onnx/onnx.pb-c.h"
#include "sw_compiler/compiler.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

#define LIMIT_AS_BYTES (768ull << 20)

/* Runs fn(arg) in a child with the address space capped; the child's exit
 * status is fn's result (0 = as expected).  Under ASan the cap is left out
 * (the refusal is still checked). */
static void in_capped_child(int (*fn)(void *), void *arg) {
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    if (!UNDER_ASAN) {
      struct rlimit r = {LIMIT_AS_BYTES, LIMIT_AS_BYTES};
      setrlimit(RLIMIT_AS, &r);
    }
    _exit(fn(arg));
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  if (WIFSIGNALED(status)) fail_msg("child killed by signal %d (an abort on user input?)", WTERMSIG(status));
  assert_int_equal(WEXITSTATUS(status), 0);
}

/* ---- ONNX: one initializer (or graph input), packed with protobuf-c ---- */

struct onnx_case {
  int data_type;
  size_t n_dims;
  int64_t dims[8];
  size_t raw_len;     /* raw_data bytes present (0 with typed = 1: float_data) */
  int typed;          /* float_data of n_typed values instead of raw_data */
  size_t n_typed;
  int as_input;       /* a graph input's value_info instead of an initializer */
  size_t n_ints;      /* > 0: a Transpose node with a `perm` list this long */
  const char *expect; /* substring of the message */
};

static uint8_t *pack_model(const struct onnx_case *c, size_t *len) {
  static const char *const names[] = {"t"};
  Onnx__OperatorSetIdProto opset = ONNX__OPERATOR_SET_ID_PROTO__INIT;
  Onnx__OperatorSetIdProto *opsets[1] = {&opset};
  Onnx__ModelProto model = ONNX__MODEL_PROTO__INIT;
  Onnx__GraphProto graph = ONNX__GRAPH_PROTO__INIT;
  Onnx__TensorProto init = ONNX__TENSOR_PROTO__INIT;
  Onnx__TensorProto *inits[1] = {&init};
  Onnx__ValueInfoProto vi = ONNX__VALUE_INFO_PROTO__INIT;
  Onnx__ValueInfoProto *vis[1] = {&vi};
  Onnx__TypeProto type = ONNX__TYPE_PROTO__INIT;
  Onnx__TypeProto__Tensor tt = ONNX__TYPE_PROTO__TENSOR__INIT;
  Onnx__TensorShapeProto shape = ONNX__TENSOR_SHAPE_PROTO__INIT;
  Onnx__TensorShapeProto__Dimension dim[8], *dimp[8];
  Onnx__NodeProto node = ONNX__NODE_PROTO__INIT;
  Onnx__NodeProto *nodes[1] = {&node};
  Onnx__AttributeProto attr = ONNX__ATTRIBUTE_PROTO__INIT;
  Onnx__AttributeProto *attrs[1] = {&attr};
  char *in_names[1] = {"t"}, *out_names[1] = {"u"};
  uint8_t *raw = calloc(1, c->raw_len + 1);
  float *typed = calloc(c->n_typed + 1, sizeof *typed);
  int64_t *ints = calloc(c->n_ints + 1, sizeof *ints);
  (void)names;
  opset.domain = "";
  opset.has_version = 1;
  opset.version = 13;
  model.has_ir_version = 1;
  model.ir_version = 8;
  model.n_opset_import = 1;
  model.opset_import = opsets;
  model.graph = &graph;
  graph.name = "limits";
  if (c->as_input) {
    vi.name = "t";
    vi.type = &type;
    type.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    type.tensor_type = &tt;
    tt.has_elem_type = 1;
    tt.elem_type = c->data_type;
    tt.shape = &shape;
    shape.n_dim = c->n_dims;
    shape.dim = dimp;
    for (size_t i = 0; i < c->n_dims; i++) {
      dim[i] = (Onnx__TensorShapeProto__Dimension)ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
      dim[i].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
      dim[i].dim_value = c->dims[i];
      dimp[i] = &dim[i];
    }
    graph.n_input = 1;
    graph.input = vis;
  } else {
    init.name = "t";
    init.has_data_type = 1;
    init.data_type = c->data_type;
    init.n_dims = c->n_dims;
    init.dims = (int64_t *)c->dims;
    if (c->typed) {
      init.n_float_data = c->n_typed;
      init.float_data = typed;
    } else {
      init.has_raw_data = 1;
      init.raw_data.len = c->raw_len;
      init.raw_data.data = raw;
    }
    graph.n_initializer = 1;
    graph.initializer = inits;
  }
  if (c->n_ints) {
    node.op_type = "Transpose";
    node.n_input = 1;
    node.input = in_names;
    node.n_output = 1;
    node.output = out_names;
    node.n_attribute = 1;
    node.attribute = attrs;
    attr.name = "perm";
    attr.has_type = 1;
    attr.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    attr.n_ints = c->n_ints;
    attr.ints = ints;
    graph.n_node = 1;
    graph.node = nodes;
  }
  *len = onnx__model_proto__get_packed_size(&model);
  uint8_t *buf = malloc(*len);
  onnx__model_proto__pack(&model, buf);
  free(raw);
  free(typed);
  free(ints);
  return buf;
}

/* Child body: the model must be refused with c->expect in the message. */
static int import_refused(void *arg) {
  const struct onnx_case *c = arg;
  size_t len;
  uint8_t *buf = pack_model(c, &len);
  struct ir_error err = {{0}};
  struct ir_graph *g = onnx_import_buffer(buf, len, "limits.onnx", &err);
  free(buf);
  if (g) {
    fprintf(stderr, "imported a model that should be refused (%s)\n", c->expect);
    ir_graph_free(g);
    return 1;
  }
  if (strncmp(err.msg, "limits.onnx: ", 13) || !strstr(err.msg, c->expect)) {
    fprintf(stderr, "message '%s' lacks '%s'\n", err.msg, c->expect);
    return 1;
  }
  return 0;
}

static void check_onnx(const struct onnx_case *c) { in_capped_child(import_refused, (void *)c); }

static void test_onnx_initializer_bytes_past_cap(void **state) {
  /* 2^30 x 4 f32 = 16 GiB: the element count is under the cap, the bytes
   * are not (this tripped ir_const_add's assert; regress input
   * tests/regress/onnx/initializer-bytes-over-cap.onnx). */
  struct onnx_case c = {.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, .n_dims = 2,
                        .dims = {INT64_C(1) << 30, 4}, .raw_len = 16, .expect = "is larger than the limit"};
  check_onnx(&c);
  c.dims[0] = 1050639358, c.dims[1] = 3; /* the fuzzer's shape */
  check_onnx(&c);
}

static void test_onnx_claimed_size_not_allocated(void **state) {
  /* Exactly the 4 GiB cap, but the file holds 8 bytes: refused before the
   * importer allocates 4 GiB. */
  struct onnx_case c = {.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT8, .n_dims = 2,
                        .dims = {INT64_C(1) << 31, 2}, .raw_len = 8, .expect = "raw_data has 8 bytes"};
  check_onnx(&c);
  struct onnx_case t = {.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, .n_dims = 1,
                        .dims = {INT64_C(1) << 30}, .typed = 1, .n_typed = 3, .expect = "holds 3 values"};
  check_onnx(&t);
}

static void test_onnx_dims_overflow(void **state) {
  /* Each dim is within IR_MAX_DIM; the product overflows int64. */
  struct onnx_case c = {.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT8, .n_dims = 3,
                        .dims = {INT64_C(1) << 31, INT64_C(1) << 31, INT64_C(1) << 31}, .raw_len = 1,
                        .expect = "too many elements"};
  check_onnx(&c);
  struct onnx_case big = {.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT8, .n_dims = 1,
                          .dims = {(INT64_C(1) << 31) + 1}, .raw_len = 1, .expect = "outside [0, 2147483648]"};
  check_onnx(&big);
  struct onnx_case neg = {.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT8, .n_dims = 1,
                          .dims = {-1}, .raw_len = 1, .expect = "outside [0,"};
  check_onnx(&neg);
}

static void test_onnx_rank_cap(void **state) {
  struct onnx_case c = {.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT8, .n_dims = 7,
                        .dims = {1, 1, 1, 1, 1, 1, 1}, .raw_len = 1, .expect = "rank 7, above the limit of 6"};
  check_onnx(&c);
  c.as_input = 1;
  check_onnx(&c);
  struct onnx_case d = {.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, .n_dims = 2,
                        .dims = {1, INT64_C(1) << 40}, .as_input = 1, .expect = "outside [0, 2147483648]"};
  check_onnx(&d);
}

static void test_onnx_attribute_list_cap(void **state) {
  struct onnx_case c = {.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, .n_dims = 1, .dims = {2},
                        .as_input = 1, .n_ints = 5000, .expect = "attribute 'perm' is too long"};
  check_onnx(&c);
}

/* ---- .loom: a valid file from the builder, then one field patched ---- */

struct loom_img {
  uint8_t *p;
  size_t size;
  size_t tensor, buffer, job, step, table; /* file offsets of the records */
};

static void img_fix_crc(struct loom_img *m) {
  uint32_t crc = (uint32_t)crc32_z(crc32_z(0, Z_NULL, 0), m->p + LOOM_FILE_CRC_START,
                                   m->size - LOOM_FILE_CRC_START);
  for (int i = 0; i < 4; i++) m->p[LOOM_FILE_OFF_CRC32 + i] = (uint8_t)(crc >> (8 * i));
}

/* buffers: w (const, 64 bytes of DATA), a (work 64); tensor x i8 [64] in a;
 * job 0 = one FINISH with seg0 = a; step: host COPY with 8 bytes of params. */
static void img_build(struct loom_img *m) {
  struct loom_file_builder *b = loom_file_builder_new(LOOM_CONFIG_TINY_HASH);
  uint8_t data[64] = {1}, params[8] = {0}, fin[LOOM_INSN_BYTES];
  struct loom_insn in = {.opcode = LOOM_OP_FINISH};
  assert_int_equal(loom_insn_encode(&in, fin, NULL), 0);
  struct loom_file_buffer w = {.name = loom_fb_string(b, "w"), .kind = LOOM_BUFKIND_CONST, .size = 64, .align = 64};
  w.data_offset = loom_fb_data(b, data, 64, 64);
  struct loom_file_buffer a = {.name = loom_fb_string(b, "a"), .kind = LOOM_BUFKIND_WORK, .size = 64, .align = 64};
  loom_fb_buffer(b, &w);
  loom_fb_buffer(b, &a);
  struct loom_file_tensor t = {.name = loom_fb_string(b, "x"), .role = LOOM_ROLE_INPUT, .dtype = LOOM_DT_I8,
                               .user_dtype = LOOM_DT_I8, .rank = 1, .buffer = 1, .dims = {64}};
  loom_fb_tensor(b, &t);
  struct loom_file_job j = {.insn_first = loom_fb_insns(b, fin, 1), .insn_count = 1};
  for (int s = 0; s < 8; s++) j.segments[s] = LOOM_FILE_NO_BUFFER;
  j.segments[0] = 1;
  loom_fb_job(b, &j);
  struct loom_file_step s = {.kind = LOOM_STEP_HOST, .index = 0, .inputs = {0, ~0u, ~0u, ~0u},
                             .outputs = {0, ~0u}};
  s.param_offset = loom_fb_data(b, params, sizeof params, 8);
  s.param_size = sizeof params;
  loom_fb_step(b, &s);
  m->p = loom_file_builder_finish(b, &m->size);
  loom_file_builder_free(b);
  assert_non_null(m->p);
  struct loom_file f;
  char msg[LOOM_MSG_MAX];
  assert_int_equal(loom_file_parse(m->p, m->size, "limits.loom", &f, msg), LOOM_OK);
  const uint8_t *base = f.storage;
  m->tensor = (size_t)((const uint8_t *)f.tensors - base);
  m->buffer = (size_t)((const uint8_t *)f.buffers - base);
  m->job = (size_t)((const uint8_t *)f.jobs - base);
  m->step = (size_t)((const uint8_t *)f.steps - base);
  m->table = LOOM_FILE_HEADER_SIZE;
  loom_file_free(&f);
}

static void put64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static void put32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* The patched file must be refused, naming the file and `expect`. */
static void expect_refused(struct loom_img *m, const char *expect) {
  struct loom_file f;
  char msg[LOOM_MSG_MAX] = "";
  img_fix_crc(m);
  assert_int_equal(loom_file_parse(m->p, m->size, "limits.loom", &f, msg), LOOM_E_FORMAT);
  if (strncmp(msg, "limits.loom: offset 0x", 22) || !strstr(msg, expect))
    fail_msg("message '%s' lacks '%s'", msg, expect);
}

static void test_loom_tensor_dims_overflow(void **state) {
  struct loom_img m;
  img_build(&m);
  uint8_t *t = m.p + m.tensor;
  put32(t + offsetof(struct loom_file_tensor, rank), 6);
  for (int i = 0; i < 6; i++) put64(t + offsetof(struct loom_file_tensor, dims) + 8 * i, UINT64_C(1) << 11);
  expect_refused(&m, "overflows 64 bits"); /* 2^66 elements */
  put32(t + offsetof(struct loom_file_tensor, rank), 1);
  put32(t + offsetof(struct loom_file_tensor, dtype), LOOM_DT_I32);
  put32(t + offsetof(struct loom_file_tensor, user_dtype), LOOM_DT_I32);
  put64(t + offsetof(struct loom_file_tensor, dims), UINT64_C(1) << 62);
  for (int i = 1; i < 6; i++) put64(t + offsetof(struct loom_file_tensor, dims) + 8 * i, 0);
  expect_refused(&m, "overflows 64 bits"); /* 2^62 fits, x 4 bytes does not */
  free(m.p);
}

static void test_loom_tensor_blocked_layout_extremes(void **state) {
  struct loom_file_tensor t = {.dtype = LOOM_DT_I32, .layout = LOOM_LAYOUT_NCHWC, .layout_block = UINT32_MAX,
                               .rank = 4, .dims = {1, INT64_MAX, 1, 1}};
  assert_int_equal(loom_file_tensor_bytes(&t), 0); /* ceil(C/c) * c * 4 > 2^64 */
  t.dtype = LOOM_DT_I8;
  uint64_t want = ((uint64_t)INT64_MAX + UINT32_MAX - 1) / UINT32_MAX * UINT32_MAX;
  assert_true(loom_file_tensor_bytes(&t) == want); /* exact, no wrap in the rounding */
  t.layout = LOOM_LAYOUT_NC, t.rank = 2, t.dims[1] = INT64_MAX, t.dims[2] = t.dims[3] = 0;
  t.dims[0] = 3;
  assert_int_equal(loom_file_tensor_bytes(&t), 0);
  struct loom_img m;
  img_build(&m);
  uint8_t *r = m.p + m.tensor;
  put32(r + offsetof(struct loom_file_tensor, rank), 7);
  expect_refused(&m, "rank 7 exceeds 6");
  free(m.p);
}

static void test_loom_offset_plus_size_wraps(void **state) {
  struct loom_img m;
  img_build(&m);
  put64(m.p + m.tensor + offsetof(struct loom_file_tensor, offset), UINT64_MAX - 3);
  expect_refused(&m, "exceeds its buffer");
  free(m.p);
  img_build(&m);
  put64(m.p + m.buffer + offsetof(struct loom_file_buffer, data_offset), UINT64_MAX - 7);
  expect_refused(&m, "outside DATA");
  free(m.p);
  img_build(&m);
  put64(m.p + m.step + offsetof(struct loom_file_step, param_offset), UINT64_MAX);
  expect_refused(&m, "outside DATA");
  free(m.p);
  img_build(&m);
  put32(m.p + m.job + offsetof(struct loom_file_job, insn_first), UINT32_MAX);
  put32(m.p + m.job + offsetof(struct loom_file_job, insn_count), 2);
  expect_refused(&m, "outside INSNS");
  free(m.p);
}

static void test_loom_section_table_wraps(void **state) {
  struct loom_img m;
  img_build(&m);
  put64(m.p + m.table + 8, UINT64_MAX - 7); /* section 0's offset: aligned, wraps with its size */
  expect_refused(&m, "exceeds the file");
  free(m.p);
  img_build(&m);
  put64(m.p + LOOM_FILE_OFF_SECTION_TABLE, UINT64_MAX - 7);
  expect_refused(&m, "extends past the end of the file");
  free(m.p);
  img_build(&m);
  put32(m.p + LOOM_FILE_OFF_SECTION_COUNT, LOOM_FILE_MAX_SECTIONS + 1);
  expect_refused(&m, "exceeds 64");
  free(m.p);
}

static void test_loom_buffer_size_cap(void **state) {
  struct loom_img m;
  img_build(&m);
  put64(m.p + m.buffer + sizeof(struct loom_file_buffer) + offsetof(struct loom_file_buffer, size),
        LOOM_FILE_MAX_SIZE + 1);
  expect_refused(&m, "is not in 1..4294967296");
  free(m.p);
}

/* Each buffer within the 4 GiB cap, together past LOOM_FILE_MAX_BUFFER_BYTES:
 * refused at the buffer that crosses it, naming the sizes. */
static void test_loom_buffer_total_cap(void **state) {
  struct loom_img m;
  img_build(&m);
  put64(m.p + m.buffer + sizeof(struct loom_file_buffer) + offsetof(struct loom_file_buffer, size),
        LOOM_FILE_MAX_SIZE);
  expect_refused(&m, "buffer 1 'a' (4294967296 bytes) takes the model's buffers to 4294967360 "
                     "bytes, past the limit of 4294967296 bytes");
  free(m.p);
}

/* The runtime's element counts (tensor.c) do not trust the parser: a
 * product that wraps 64 bits to a small count is refused, plain or blocked. */
static void test_runtime_elems_overflow(void **state) {
  struct loom_file_tensor t = {.rank = 2, .dims = {(INT64_C(1) << 33) + 1, INT64_C(1) << 31}};
  assert_int_equal(loom_tensor_elems(&t), 0); /* 2^64 + 2^31 wraps to 2^31 */
  t.dims[0] = INT64_C(1) << 20, t.dims[1] = INT64_C(1) << 20;
  assert_int_equal(loom_tensor_elems(&t), UINT64_C(1) << 40);
  t.dims[1] = (INT64_C(1) << 20) + 1;
  assert_int_equal(loom_tensor_elems(&t), 0);
  struct loom_file_tensor b = {.rank = 2, .layout = LOOM_LAYOUT_NC, .layout_block = 0xFFFFFFFFu,
                               .dims = {INT64_C(1) << 39, 1}};
  assert_int_equal(loom_tensor_stored_elems(&b), 0);
}

static void test_loom_file_size_cap(void **state) {
  uint8_t head[LOOM_FILE_HEADER_SIZE] = {0};
  struct loom_file f;
  char msg[LOOM_MSG_MAX];
  /* Refused on the size alone, before a byte is read. */
  assert_int_equal(loom_file_parse(head, (size_t)LOOM_FILE_MAX_SIZE + 1, "big.loom", &f, msg), LOOM_E_FORMAT);
  assert_non_null(strstr(msg, "big.loom: file exceeds the 4 GiB limit"));
  assert_int_equal(loom_file_parse(head, 63, "small.loom", &f, msg), LOOM_E_FORMAT);
  assert_non_null(strstr(msg, "small.loom: file is shorter"));
}

static void test_read_file_cap(void **state) {
  char path[] = "/tmp/loom_limits_XXXXXX", msg[LOOM_MSG_MAX];
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  char junk[200] = {0};
  assert_int_equal(write(fd, junk, sizeof junk), (ssize_t)sizeof junk);
  close(fd);
  uint8_t *bytes;
  size_t size;
  assert_int_equal(loom_read_file(path, 100, &bytes, &size, msg), LOOM_E_FORMAT);
  assert_non_null(strstr(msg, "larger than the 100-byte limit"));
  assert_null(bytes);
  assert_int_equal(loom_read_file(path, 200, &bytes, &size, msg), LOOM_OK);
  assert_int_equal(size, 200);
  free(bytes);
  unlink(path);
}

/* ---- .npy ---- */

static void npy_refused(const char *header, int major, const char *expect) {
  uint8_t buf[512];
  size_t hl = strlen(header), pre = major == 1 ? 10 : 12;
  memcpy(buf, "\x93NUMPY", 6);
  buf[6] = (uint8_t)major, buf[7] = 0;
  for (size_t i = 0; i < pre - 8; i++) buf[8 + i] = (uint8_t)(hl >> (8 * i));
  memcpy(buf + pre, header, hl);
  memset(buf + pre + hl, 0, 16); /* some data */
  struct loom_npy n;
  char msg[LOOM_MSG_MAX] = "";
  assert_int_equal(loom_npy_parse(buf, pre + hl + 16, "limits.npy", &n, msg), LOOM_E_FORMAT);
  if (strncmp(msg, "limits.npy: ", 12) || !strstr(msg, expect)) fail_msg("message '%s' lacks '%s'", msg, expect);
}

static void test_npy_caps(void **state) {
  npy_refused("{'descr': '<i4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }\n", 1,
              "exceeds the 4294967296-byte limit");
  npy_refused("{'descr': '<i4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }\n", 1,
              "exceeds the 4294967296-byte limit");
  npy_refused("{'descr': '|u1', 'fortran_order': False, 'shape': (99999999999999999999,), }\n", 1,
              "a dimension overflows");
  npy_refused("{'descr': '|u1', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }\n", 2,
              "more than 8 dimensions");
  npy_refused("{'descr': '|u1', 'fortran_order': False, 'shape': (4294967296,), }\n", 1,
              "data is 16 bytes, but shape (4294967296,) of uint8 needs 4294967296");
  uint8_t hdr[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 0xff, 0xff, 0xff, 0xff};
  struct loom_npy n;
  char msg[LOOM_MSG_MAX];
  assert_int_equal(loom_npy_parse(hdr, sizeof hdr, "limits.npy", &n, msg), LOOM_E_FORMAT);
  assert_non_null(strstr(msg, "header length 4294967295 exceeds"));
}

/* ---- assembler ---- */

static void asm_refused(const char *src, const char *expect) {
  struct loom_file_builder *b = NULL;
  char msg[LOOM_MSG_MAX] = "";
  assert_int_not_equal(loom_asm_string(src, strlen(src), "limits.s", NULL, &b, msg), LOOM_OK);
  assert_null(b);
  if (strncmp(msg, "limits.s:", 9) || !strstr(msg, expect)) fail_msg("message '%s' lacks '%s'", msg, expect);
}

static void test_asm_caps(void **state) {
  asm_refused(".config tiny\n.buffer b work 4294967297\n", "4294967297");
  asm_refused(".config tiny\n.buffer b work 64\n.job j seg0=b\n  gemm uop=0:1 iter=20000,1\n  finish\n",
              "iter_out 20000 does not fit 12 bits");
  asm_refused(".config tiny\n.buffer b work 64\n.tensor t input b 0 i32 [9223372036854775807,2]\n", "t");
  asm_refused(".config tiny\n.buffer b work 64\n.tensor t input b 0 i8 [1,1,1,1,1,1,1]\n", "t");
  /* constant data past LOOM_ASM_MAX_DATA (256 MiB), refused before it is allocated */
  asm_refused(".config tiny\n.buffer b const 0xffffffff\n",
              "limits.s:2:1: .buffer: 4294967295 more bytes of constant data would take the "
              "program past the assembler's limit of 268435456 bytes (0 so far)");
  asm_refused(".config tiny\n.buffer b const\n.byte 1\n.zero 268435456\n",
              "limits.s:4:1: .zero: 268435456 more bytes");
  asm_refused(".config tiny\n.buffer a const 200000000\n.buffer b const 200000000\n",
              "limits.s:3:1: .buffer: 200000000 more bytes of constant data would take the program "
              "past the assembler's limit of 268435456 bytes (200000000 so far)");
}

/* Format 1.3's KERNELS records claim operand lists, attribute lists and
 * attribute values by count and DATA offset: counts past the caps, counts
 * whose byte size overflows 64 bits and offsets that wrap are refused
 * before anything is read through them. */
static void test_loom_kernel_caps(void **state) {
  static const char src[] = ".config tiny\n.buffer a work 64\n.tensor x input a 0 f32 [4]\n"
                            ".tensor y output a 16 f32 [4]\n.steps\n.step kernel Abs opset=13 in=x out=y\n"
                            "  .attr v ints 1, 2, 3\n";
  struct loom_file_builder *b;
  char msg[LOOM_MSG_MAX];
  struct loom_img m = {0};
  assert_int_equal(loom_asm_string(src, sizeof src - 1, "limits.s", NULL, &b, msg), LOOM_OK);
  m.p = loom_file_builder_finish(b, &m.size);
  loom_file_builder_free(b);
  struct loom_file f;
  assert_int_equal(loom_file_parse(m.p, m.size, "limits.loom", &f, msg), LOOM_OK);
  const uint8_t *base = f.storage;
  size_t k = (size_t)((const uint8_t *)f.kernels - base);
  size_t a = (size_t)(f.data - base) + (size_t)f.kernels[0].attr_offset;
  loom_file_free(&f);
  uint8_t save[48 + 32];
  memcpy(save, m.p + k, 48);
  memcpy(save + 48, m.p + a, 32);
#define RESTORE() (memcpy(m.p + k, save, 48), memcpy(m.p + a, save + 48, 32))
  put32(m.p + k + offsetof(struct loom_file_kernel, n_in), UINT32_MAX);
  expect_refused(&m, "KERNELS 0: 4294967295 operands and 1 results (1 to 4096 results, at most 4096 operands)");
  RESTORE();
  put32(m.p + k + offsetof(struct loom_file_kernel, n_attrs), UINT32_MAX);
  expect_refused(&m, "KERNELS 0: 4294967295 attributes");
  RESTORE();
  put64(m.p + k + offsetof(struct loom_file_kernel, io_offset), UINT64_MAX - 3); /* + 8 bytes wraps */
  expect_refused(&m, "KERNELS 0: the tensor list at DATA offset 18446744073709551612");
  RESTORE();
  put64(m.p + k + offsetof(struct loom_file_kernel, attr_offset), UINT64_MAX - 7);
  expect_refused(&m, "KERNELS 0: 1 attributes at DATA offset 18446744073709551608");
  RESTORE();
  put64(m.p + a + offsetof(struct loom_file_kattr, count), UINT64_C(1) << 61); /* x 8 bytes = 2^64 */
  expect_refused(&m, "KERNELS 0: attribute 0 has 2305843009213693952 values (at most 1048576)");
  RESTORE();
  put64(m.p + a + offsetof(struct loom_file_kattr, value), UINT64_MAX - 7); /* offset + 24 bytes wraps */
  expect_refused(&m, "KERNELS 0: attribute 0: values at DATA offset 18446744073709551608 are outside DATA");
#undef RESTORE
  free(m.p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_onnx_initializer_bytes_past_cap),
      cmocka_unit_test(test_onnx_claimed_size_not_allocated),
      cmocka_unit_test(test_onnx_dims_overflow),
      cmocka_unit_test(test_onnx_rank_cap),
      cmocka_unit_test(test_onnx_attribute_list_cap),
      cmocka_unit_test(test_loom_tensor_dims_overflow),
      cmocka_unit_test(test_loom_tensor_blocked_layout_extremes),
      cmocka_unit_test(test_loom_offset_plus_size_wraps),
      cmocka_unit_test(test_loom_section_table_wraps),
      cmocka_unit_test(test_loom_buffer_size_cap),
      cmocka_unit_test(test_loom_buffer_total_cap),
      cmocka_unit_test(test_runtime_elems_overflow),
      cmocka_unit_test(test_loom_file_size_cap),
      cmocka_unit_test(test_read_file_cap),
      cmocka_unit_test(test_npy_caps),
      cmocka_unit_test(test_asm_caps),
      cmocka_unit_test(test_loom_kernel_caps),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
