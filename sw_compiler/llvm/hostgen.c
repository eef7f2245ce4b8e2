/*
 * hostgen.c - the host code generator's driver: a compiled .loom in, the
 * same file with native code for its HOST steps out.
 *
 * It works on the .loom rather than on the compiler's internal state on
 * purpose: the file holds exactly what the runtime will hand the code (the
 * tensor descriptors with their dtypes, layouts, shapes and quantization,
 * the parameters in DATA), so specializing to the file is specializing to
 * what will run, and the signature stored with each entry is computed by
 * the same function the runtime uses to check it (hostcode.c).  Any
 * compiler that writes a .loom gets native host code by calling this last.
 *
 *   parse -> one LLVM module, one entry point per HOST step (hostgen_ops.c)
 *         -> optimize, emit an object (hostgen_emit.c)
 *         -> link a shared object (hostgen_link.c)
 *         -> copy the file's records, add HOSTCODE, write 1.1, re-parse
 */
#include "sw_compiler/llvm/hostgen_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/core/hostcode_format.h"
#include "driver/core/hostops.h"

/* The module -> object -> shared object. */
int hg_image(struct hg *h, struct hg_target *t, const struct hostgen_options *o, uint8_t **so,
             size_t *so_size, struct ir_error *err) {
  uint8_t *obj;
  size_t obj_size;
  int level = o && o->opt_level ? o->opt_level : 3;
  if (hg_emit_object(t, h->mod, level, &obj, &obj_size, err)) return -1;
  int rc = hg_link_shared(t, o ? o->linker : NULL, obj, obj_size, so, so_size, err);
  free(obj);
  return rc;
}

/* The finished file, parsed once more: a file the reader refuses is a bug. */
int hg_finish_file(struct loom_file_builder *b, const char *source, uint8_t **out, size_t *out_size,
                   struct ir_error *err) {
  *out = loom_file_builder_finish(b, out_size);
  if (!*out) return ir_errorf(err, "%s: out of memory writing the .loom file", source), -1;
  struct loom_file f;
  char msg[LOOM_MSG_MAX];
  if (loom_file_parse(*out, *out_size, source, &f, msg) != LOOM_OK) loom_assert_fail(__FILE__, __LINE__, msg);
  loom_file_free(&f);
  return 0;
}

/* Adds HOSTCODE to builder b: names go to STRTAB, entries get their symbol
 * offsets (`symbols` are entry i's names). */
void hg_attach(struct loom_file_builder *b, const struct hg_target *t, struct loom_file_hostcode_entry *e,
               char (*symbols)[32], uint32_t n, const uint8_t *image, size_t size) {
  for (uint32_t i = 0; i < n; i++) e[i].symbol = loom_fb_string(b, symbols[i]);
  loom_fb_hostcode(b, loom_fb_string(b, t->triple), loom_fb_string(b, t->cpu), e, n, image, size);
}

struct job {
  const struct loom_file *f;
  const char *source;
  struct loom_file_hostcode_entry *e;
  char (*symbols)[32];
  uint32_t n;
  struct hostgen_summary *sum;
};

static int build_steps(struct hg *h, struct job *j, struct ir_error *err) {
  for (uint32_t i = 0; i < j->f->step_count; i++) {
    const char *skip;
    if (j->f->steps[i].kind == LOOM_STEP_KERNEL) { /* ONNX ops: the portable host kernels run them */
      if (!j->sum->portable_steps++)
        snprintf(j->sum->first_portable, sizeof j->sum->first_portable, "step %u (%s): a host kernel", i,
                 loom_file_string(j->f, j->f->kernels[j->f->steps[i].index].op));
      continue;
    }
    if (j->f->steps[i].kind != LOOM_STEP_HOST) continue;
    if (hg_op_check(j->f, i, j->source, &skip, err)) return -1;
    if (skip) {
      if (!j->sum->portable_steps++)
        snprintf(j->sum->first_portable, sizeof j->sum->first_portable, "step %u (%s): %s", i,
                 loom_hostop_name(j->f->steps[i].index), skip);
      continue;
    }
    snprintf(j->symbols[j->n], sizeof j->symbols[0], "loom_step_%u", i);
    hg_op_build(h, j->f, i, j->symbols[j->n]);
    j->e[j->n++] = (struct loom_file_hostcode_entry){.step = i, .signature = loom_hostcode_signature(j->f, i)};
  }
  j->sum->native_steps = j->n;
  return 0;
}

static int rebuild(struct job *j, const struct hg_target *t, const uint8_t *image, size_t size,
                   uint8_t **out, size_t *out_size, struct ir_error *err) {
  struct loom_file_builder *b = loom_file_builder_from(j->f);
  if (!b) return ir_errorf(err, "%s: out of memory", j->source), -1;
  hg_attach(b, t, j->e, j->symbols, j->n, image, size);
  int rc = hg_finish_file(b, j->source, out, out_size, err);
  loom_file_builder_free(b);
  return rc;
}

static int generate(struct job *j, const struct hostgen_options *o, uint8_t **out, size_t *out_size,
                    struct ir_error *err) {
  struct hg_target t;
  struct hg h;
  uint8_t *image = NULL;
  size_t size = 0;
  if (hg_target_open(o, &t, err)) return -1;
  snprintf(j->sum->triple, sizeof j->sum->triple, "%s", t.triple);
  hg_init(&h, &t, j->source);
  int rc = build_steps(&h, j, err);
  if (!rc && j->n) rc = hg_image(&h, &t, o, &image, &size, err);
  if (!rc && j->n) rc = rebuild(j, &t, image, size, out, out_size, err);
  j->sum->image_bytes = size;
  free(image);
  hg_dispose(&h);
  hg_target_close(&t);
  return rc;
}

int hostgen_loom(const uint8_t *in, size_t in_size, const char *source,
                 const struct hostgen_options *o, uint8_t **out, size_t *out_size,
                 struct hostgen_summary *sum, struct ir_error *err) {
  struct loom_file f;
  struct hostgen_summary local;
  char msg[LOOM_MSG_MAX];
  *out = NULL;
  if (!source) source = "<memory>";
  if (loom_file_parse(in, in_size, source, &f, msg) != LOOM_OK) return ir_errorf(err, "%s", msg), -1;
  struct job j = {.f = &f, .source = source, .sum = sum ? sum : &local};
  memset(j.sum, 0, sizeof *j.sum);
  j.e = ir_xcalloc((size_t)f.step_count + 1, sizeof *j.e);
  j.symbols = ir_xcalloc((size_t)f.step_count + 1, sizeof *j.symbols);
  int rc = generate(&j, o, out, out_size, err);
  if (!rc && !*out) { /* nothing native: the file as it was */
    *out = ir_xmalloc(in_size);
    memcpy(*out, in, in_size);
    *out_size = in_size;
  }
  free(j.e);
  free(j.symbols);
  loom_file_free(&f);
  return rc;
}
