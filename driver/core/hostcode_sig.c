/*
 * hostcode_sig.c - the signature that ties a native entry point of a .loom
 * file (section HOSTCODE) to the host step it was specialized for.
 *
 * The compiler stores it beside each entry; the runtime recomputes it at
 * load and refuses an entry whose step changed.  It lives in the core
 * because both sides must compute it the same way.
 */
#include <string.h>

#include "hostcode_format.h"

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const uint8_t *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * UINT64_C(1099511628211);
  return h;
}

static uint64_t fnv32(uint64_t h, uint32_t v) {
  uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
  return fnv(h, b, 4);
}

static uint64_t tensor_sig(uint64_t h, const struct loom_file_tensor *t) {
  uint32_t scale;
  memcpy(&scale, &t->scale, 4);
  h = fnv32(fnv32(fnv32(fnv32(h, t->dtype), t->layout), t->layout_block), t->rank);
  for (uint32_t i = 0; i < t->rank && i < LOOM_MAX_RANK; i++) {
    uint64_t d = (uint64_t)t->dims[i];
    h = fnv32(fnv32(h, (uint32_t)d), (uint32_t)(d >> 32));
  }
  return fnv32(fnv32(h, scale), (uint32_t)t->zero_point);
}

uint64_t loom_hostcode_signature(const struct loom_file *f, uint32_t step) {
  const struct loom_file_step *s = &f->steps[step];
  uint64_t h = fnv32(fnv32(UINT64_C(14695981039346656037), s->kind), s->index);
  for (int k = 0; k < 6; k++) {
    uint32_t t = k < 4 ? s->inputs[k] : s->outputs[k - 4];
    h = t < f->tensor_count ? tensor_sig(h, &f->tensors[t]) : fnv32(h, LOOM_FILE_NO_BUFFER);
  }
  h = fnv32(fnv32(h, (uint32_t)s->param_size), (uint32_t)(s->param_size >> 32));
  if (s->param_size && s->param_offset <= f->data_size && s->param_size <= f->data_size - s->param_offset)
    h = fnv(h, f->data + s->param_offset, (size_t)s->param_size);
  return h;
}
