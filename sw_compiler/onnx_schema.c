/*
 * onnx_schema.c - lookups over the generated ONNX schema table
 * (onnx_schema.h).  The table is small (a few hundred rows), so a linear
 * scan per node is cheap next to decoding the protobuf.
 */
#include "sw_compiler/onnx_schema.h"

#include <stdio.h>
#include <string.h>

const struct onnx_schema *onnx_schema_find(const char *op, int opset) {
  const struct onnx_schema *best = NULL;
  for (int i = 0; i < onnx_schema_count; i++)
    if (!strcmp(onnx_schemas[i].op, op) && onnx_schemas[i].since <= opset &&
        (!best || onnx_schemas[i].since > best->since))
      best = &onnx_schemas[i];
  return best;
}

const char *onnx_refusal_find(const char *op) {
  for (int i = 0; i < onnx_refusal_count; i++)
    if (!strcmp(onnx_refusals[i].op, op)) return onnx_refusals[i].reason;
  return NULL;
}

static int kind_of(char k) {
  switch (k) {
  case 'i': return IR_ATTR_INT;
  case 'f': return IR_ATTR_FLOAT;
  case 's': return IR_ATTR_STRING;
  case 't': return IR_ATTR_TENSOR;
  case 'I': return IR_ATTR_INTS;
  case 'F': return IR_ATTR_FLOATS;
  case 'S': return IR_ATTR_STRINGS;
  default: return -2;
  }
}

/* Calls fn for each attribute of s: name (not NUL-terminated, len), kind
 * letter, required; stops when fn returns nonzero and returns that. */
static int each_attr(const struct onnx_schema *s, int (*fn)(const char *, size_t, char, int, void *),
                     void *arg) {
  for (const char *p = s->attrs; *p;) {
    int req = *p == '!';
    p += req;
    const char *colon = strchr(p, ':');
    if (!colon) return 0;
    int r = fn(p, (size_t)(colon - p), colon[1], req, arg);
    if (r) return r;
    p = colon + 2;
    if (*p == ',') p++;
  }
  return 0;
}

struct find_arg {
  const char *name;
  int kind, required;
};

static int match(const char *name, size_t len, char k, int req, void *arg) {
  struct find_arg *f = arg;
  if (strlen(f->name) != len || memcmp(f->name, name, len)) return 0;
  f->kind = kind_of(k);
  f->required = req;
  return 1;
}

int onnx_schema_attr(const struct onnx_schema *s, const char *name, int *required) {
  struct find_arg f = {name, -1, 0};
  each_attr(s, match, &f);
  if (required) *required = f.required;
  return f.kind;
}

struct missing_arg {
  const struct ir_node *n;
  char *buf;
  size_t len;
};

static int lacks(const char *name, size_t len, char k, int req, void *arg) {
  struct missing_arg *m = arg;
  (void)k;
  if (!req) return 0;
  snprintf(m->buf, m->len, "%.*s", (int)len, name);
  return ir_attr_find(m->n, m->buf) == NULL;
}

const char *onnx_schema_missing(const struct onnx_schema *s, const struct ir_node *n, char *buf, size_t len) {
  struct missing_arg m = {n, buf, len};
  return each_attr(s, lacks, &m) ? buf : NULL;
}
