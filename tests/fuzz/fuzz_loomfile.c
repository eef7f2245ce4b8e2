/*
 * fuzz_loomfile.c - libFuzzer target for the .loom loader and everything a
 * loaded file reaches: loom_file_parse, loom_file_check_insns, the
 * disassembler and assembler, and loading and running the model on fsim.
 *
 * The harness writes the input's size and crc32 into its header before
 * parsing (when it is at least 64 bytes long), so mutations get past the
 * checksum and reach the section table, the records and the runtime; the
 * checksum and size checks themselves are covered by tests/unit.
 *
 * Properties checked on every input:
 *   - a refusal is LOOM_E_FORMAT and names the file ("fuzz.loom: offset ...");
 *   - an accepted file disassembles, the listing assembles, and the result
 *     (checked for every file up to 8 KiB and one larger file in 16)
 *     has the same configuration, buffers (kind, size, alignment, constant
 *     bytes), tensors, jobs (instruction bytes and segment tables) and steps
 *     (docs/asm.md: "a file from another writer re-assembles to the same
 *     records, instructions and data");
 *   - the model loads on the exact-size fsim backend (tests/hostile/
 *     fsim_exact.c) or is refused with a message, and running it with every
 *     input set ends in OK or an error status, never a crash: under ASan
 *     any DMA outside a segment is a heap overflow.  Models whose buffers
 *     exceed FUZZ_LOOM_MAX_BUFFERS bytes are not loaded (that would only
 *     measure memory), and jobs run with a small work budget.
 */
#include "fuzz.h"

#include <zlib.h>

#include "driver/core/asm.h"
#include "driver/core/loomfile.h"
#include "loom/isa.h"
#include "tests/hostile/fsim_exact.h"

#define FUZZ_LOOM_MAX_BUFFERS (1u << 20)
#define FUZZ_LOOM_MAX_ELEMS (1u << 18)
#define FUZZ_LOOM_ROUND_TRIP_BYTES 8192

static void wr32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t rd32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Fixes file_size and crc32 so the parser looks past them. */
static void fix_header(uint8_t *p, size_t size) {
  if (size < LOOM_FILE_HEADER_SIZE) return;
  for (int i = 0; i < 8; i++) p[LOOM_FILE_OFF_FILE_SIZE + i] = (uint8_t)((uint64_t)size >> (8 * i));
  wr32(p + LOOM_FILE_OFF_CRC32, (uint32_t)crc32_z(crc32_z(0, Z_NULL, 0), p + LOOM_FILE_CRC_START,
                                                  size - LOOM_FILE_CRC_START));
}

/* ---- disassemble, assemble, compare ---- */

static const char *str(const struct loom_file *f, uint32_t off) { return loom_file_string(f, off); }

static void same_buffers(const struct loom_file *a, const struct loom_file *b) {
  FUZZ_CHECK(a->buffer_count == b->buffer_count, "buffer count %u -> %u", a->buffer_count,
             b->buffer_count);
  for (uint32_t i = 0; i < a->buffer_count; i++) {
    const struct loom_file_buffer *x = &a->buffers[i], *y = &b->buffers[i];
    FUZZ_CHECK(!strcmp(str(a, x->name), str(b, y->name)), "buffer %u name", i);
    FUZZ_CHECK(x->kind == y->kind && x->size == y->size && x->align == y->align,
               "buffer %u kind/size/align", i);
    if (x->kind == LOOM_BUFKIND_CONST)
      FUZZ_CHECK(!memcmp(a->data + x->data_offset, b->data + y->data_offset, x->size),
                 "buffer %u constant bytes", i);
  }
}

static void same_tensors(const struct loom_file *a, const struct loom_file *b) {
  FUZZ_CHECK(a->tensor_count == b->tensor_count, "tensor count");
  for (uint32_t i = 0; i < a->tensor_count; i++) {
    struct loom_file_tensor x = a->tensors[i], y = b->tensors[i];
    FUZZ_CHECK(!strcmp(str(a, x.name), str(b, y.name)), "tensor %u name", i);
    x.name = y.name = 0;
    FUZZ_CHECK(!memcmp(&x, &y, sizeof x), "tensor %u record", i);
  }
}

static void same_jobs_steps(const struct loom_file *a, const struct loom_file *b) {
  FUZZ_CHECK(a->job_count == b->job_count, "job count");
  for (uint32_t i = 0; i < a->job_count; i++) {
    const struct loom_file_job *x = &a->jobs[i], *y = &b->jobs[i];
    FUZZ_CHECK(x->insn_count == y->insn_count, "job %u insn_count", i);
    FUZZ_CHECK(!memcmp(x->segments, y->segments, sizeof x->segments), "job %u segments", i);
    FUZZ_CHECK(!memcmp(a->insns + (size_t)x->insn_first * LOOM_INSN_BYTES,
                       b->insns + (size_t)y->insn_first * LOOM_INSN_BYTES,
                       (size_t)x->insn_count * LOOM_INSN_BYTES),
               "job %u instruction bytes", i);
  }
  /* Without .steps the assembler writes one step per job, in order. */
  FUZZ_CHECK(a->step_count == b->step_count, "step count %u -> %u", a->step_count, b->step_count);
  for (uint32_t i = 0; i < a->step_count; i++) {
    const struct loom_file_step *x = &a->steps[i], *y = &b->steps[i];
    FUZZ_CHECK(x->kind == y->kind && x->index == y->index, "step %u kind/index", i);
    FUZZ_CHECK(!memcmp(x->inputs, y->inputs, sizeof x->inputs) &&
                   !memcmp(x->outputs, y->outputs, sizeof x->outputs),
               "step %u tensors", i);
    FUZZ_CHECK(x->param_size == y->param_size &&
                   !memcmp(a->data + x->param_offset, b->data + y->param_offset, x->param_size),
               "step %u parameters", i);
  }
}

static void check_disasm_round_trip(const struct loom_file *f) {
  char msg[LOOM_MSG_MAX], *text = NULL;
  size_t len = 0, size = 0;
  FILE *out = open_memstream(&text, &len);
  FUZZ_CHECK(out != NULL, "open_memstream");
  FUZZ_CHECK(loom_disasm(f, out, msg) == LOOM_OK, "disasm: %s", msg);
  fclose(out);
  struct loom_file_builder *b = NULL;
  loom_status st = loom_asm_string(text, len, "listing.s", NULL, &b, msg);
  FUZZ_CHECK(st == LOOM_OK, "the listing of a valid file does not assemble: %s\n%s", msg, text);
  uint8_t *bytes = loom_file_builder_finish(b, &size);
  loom_file_builder_free(b);
  FUZZ_CHECK(bytes != NULL, "finish");
  struct loom_file g;
  FUZZ_CHECK(loom_file_parse(bytes, size, "listing.loom", &g, msg) == LOOM_OK, "%s", msg);
  FUZZ_CHECK(f->config_hash == g.config_hash, "config hash");
  same_buffers(f, &g);
  same_tensors(f, &g);
  same_jobs_steps(f, &g);
  loom_file_free(&g);
  free(bytes);
  free(text);
}

/* ---- load and run on fsim ---- */

static int small_enough(const struct loom_file *f) {
  uint64_t total = 0;
  for (uint32_t i = 0; i < f->buffer_count; i++) total += f->buffers[i].size;
  return total <= FUZZ_LOOM_MAX_BUFFERS;
}

static void set_inputs(loom_model *m) {
  for (int i = 0; i < loom_model_input_count(m); i++) {
    const struct loom_tensor_info *t = loom_model_input(m, i);
    uint64_t n = 1;
    for (int d = 0; d < t->rank; d++) n *= (uint64_t)t->dims[d];
    if (n > FUZZ_LOOM_MAX_ELEMS) continue;
    size_t bytes = (size_t)n * loom_dtype_size(t->dtype);
    uint8_t *v = malloc(bytes ? bytes : 1);
    for (size_t k = 0; k < bytes; k++) v[k] = (uint8_t)(k * 7 + 3);
    if (t->dtype == LOOM_DT_F32)
      for (size_t k = 0; k < n; k++) ((float *)v)[k] = (float)((int)(k % 17) - 8) * 0.25f;
    loom_model_set_input(m, t->name, t->dtype, t->rank, t->dims, v);
    free(v);
  }
}

static void read_outputs(loom_model *m, loom_device *dev) {
  for (int i = 0; i < loom_model_output_count(m); i++) {
    const struct loom_tensor_info *t = loom_model_output(m, i);
    uint64_t n = 1;
    for (int d = 0; d < t->rank; d++) n *= (uint64_t)t->dims[d];
    if (n > FUZZ_LOOM_MAX_ELEMS) continue;
    size_t bytes = (size_t)n * loom_dtype_size(t->dtype);
    void *v = malloc(bytes ? bytes : 1);
    loom_status st = loom_model_get_output(m, t->name, v, bytes);
    FUZZ_CHECK(st == LOOM_OK, "get_output of a well-sized buffer: %s", loom_device_error(dev));
    free(v);
  }
}

static void load_and_run(const uint8_t *bytes, size_t size, const struct loom_file *f) {
  const struct loom_hw_config *c = loom_hw_config_by_hash(f->config_hash);
  char opts[64], msg[LOOM_MSG_MAX] = "";
  loom_device *dev;
  loom_model *m;
  snprintf(opts, sizeof opts, "config=%s,budget=20000", c ? c->name : "tiny");
  FUZZ_CHECK(loom_device_open_ops(&fsim_exact_backend, opts, &dev, msg) == LOOM_OK, "%s", msg);
  loom_status st = loom_model_load_memory(dev, bytes, size, "fuzz.loom", &m, msg);
  if (st != LOOM_OK) {
    FUZZ_CHECK(c ? st != LOOM_E_CONFIG : st == LOOM_E_CONFIG, "status %s", loom_status_name(st));
    FUZZ_CHECK(fuzz_names_file(msg, "fuzz.loom"), "message '%s'", msg);
  } else {
    set_inputs(m);
    st = loom_model_run(m, 0);
    if (st != LOOM_OK) FUZZ_CHECK(loom_device_error(dev)[0], "a failed run without a message");
    else read_outputs(m, dev);
    loom_model_free(m);
  }
  loom_device_close(dev);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char msg[LOOM_MSG_MAX] = "";
  uint8_t *copy = malloc(size ? size : 1);
  memcpy(copy, data, size);
  fix_header(copy, size);
  struct loom_file f;
  loom_status st = loom_file_parse(copy, size, "fuzz.loom", &f, msg);
  if (st != LOOM_OK) {
    FUZZ_CHECK(st == LOOM_E_FORMAT, "status %s", loom_status_name(st));
    FUZZ_CHECK(fuzz_names_file(msg, "fuzz.loom"), "message '%s'", msg);
    free(copy);
    return 0;
  }
  if (loom_file_check_insns(&f, "fuzz.loom", msg) != LOOM_OK)
    FUZZ_CHECK(fuzz_names_file(msg, "fuzz.loom"), "message '%s'", msg);
  /* The listing of a compiled model is long, and re-assembling it took 70%
   * of the time: large files get the round trip one time in 16 (chosen by
   * their crc, so a given input always does or does not). */
  if (size <= FUZZ_LOOM_ROUND_TRIP_BYTES || rd32(copy + LOOM_FILE_OFF_CRC32) % 16 == 0)
    check_disasm_round_trip(&f);
  if (small_enough(&f)) load_and_run(copy, size, &f);
  loom_file_free(&f);
  free(copy);
  return 0;
}
