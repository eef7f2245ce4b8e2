/*
 * onnx_import_node.c - one ONNX node to one IR node.
 *
 * Every node is checked against the schema of its op at the model's opset
 * (onnx_schema.h, generated from onnx): the op must be a standard ai.onnx
 * op Loom imports, with an operand and result count the schema allows and
 * only attributes the schema lists, of the listed kinds, required ones
 * present.  What is refused says why and names the node: control flow,
 * sequences and random generators get the reason of onnx_refusals, other
 * domains and unknown ops "op 'X' is not supported".
 *
 * Then the node gets its IR kind.  An op the compiler reasons about (Conv,
 * Gemm, pooling, Add, Reshape, Q/DQ, ... : ir_op_from_name) becomes that
 * kind when the node has the form the kind describes (one result, the
 * operands and attributes of ir_verify's table, after onnx_import_norm.c has
 * rewritten older versions); any other node, and a typed op in a form its
 * kind does not cover (MaxPool with an Indices result, a BatchNormalization
 * with training outputs, ...), becomes a generic IR_OP_ONNX node that keeps
 * the op type, the opset and ONNX's attributes as they are, and runs on the
 * host kernels.  Constant nodes become constants.
 *
 * Models below opset ONNX_MIN_OPSET import when each op's version in force
 * at the model's opset is the one in force at ONNX_MIN_OPSET (the op means
 * the same); otherwise the node is refused, naming the op.
 */
#include "sw_compiler/onnx_import_int.h"

#include <stdlib.h>
#include <string.h>

#define MAX_ATTR_LIST 4096
#define MAX_NODE_IO 4096

static const char *S(const char *s) { return s ? s : ""; }

/* ---- attributes ---- */

static const char *attr_type_name(int type) {
  switch (type) {
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: return "float";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: return "int";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: return "string";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: return "tensor";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: return "floats";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS: return "ints";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS: return "strings";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH: return "graph";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS: return "graphs";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR: return "sparse tensor";
  default: return "other";
  }
}

static int ir_kind_of(int type) {
  switch (type) {
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: return IR_ATTR_FLOAT;
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: return IR_ATTR_INT;
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: return IR_ATTR_STRING;
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: return IR_ATTR_TENSOR;
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: return IR_ATTR_FLOATS;
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS: return IR_ATTR_INTS;
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS: return IR_ATTR_STRINGS;
  default: return -1;
  }
}

/* A protobuf byte string as a C string; embedded NULs are refused.  An
 * empty string may come with data == NULL (protobuf-c), which memchr must
 * not see. */
static char *c_string(struct imp *im, const char *attr, ProtobufCBinaryData b) {
  if (b.len && memchr(b.data, 0, b.len)) {
    imp_fail(im, "attribute '%s' contains a NUL byte", attr);
    return NULL;
  }
  char *s = ir_xmalloc(b.len + 1);
  if (b.len) memcpy(s, b.data, b.len);
  s[b.len] = 0;
  return s;
}

static int set_strings(struct imp *im, int node, const Onnx__AttributeProto *a) {
  char **v = ir_xcalloc(a->n_strings + 1, sizeof *v);
  int rc = 0;
  for (size_t i = 0; i < a->n_strings && !rc; i++) rc = (v[i] = c_string(im, a->name, a->strings[i])) ? 0 : -1;
  if (!rc) ir_attr_set_strings(im->g, node, a->name, (int)a->n_strings, (const char *const *)v);
  for (size_t i = 0; i < a->n_strings; i++) free(v[i]);
  free(v);
  return rc;
}

/* Stores attribute a on IR node `node` as an attribute of IR kind `kind`. */
static int set_attr(struct imp *im, int node, const Onnx__AttributeProto *a, int kind) {
  const char *name = a->name;
  size_t count = kind == IR_ATTR_INTS ? a->n_ints : kind == IR_ATTR_FLOATS ? a->n_floats : a->n_strings;
  if (count > MAX_ATTR_LIST) return imp_fail(im, "attribute '%s' is too long", name);
  switch (kind) {
  case IR_ATTR_INT: ir_attr_set_int(im->g, node, name, a->i); return 0;
  case IR_ATTR_FLOAT: ir_attr_set_float(im->g, node, name, a->f); return 0;
  case IR_ATTR_INTS: ir_attr_set_ints(im->g, node, name, (int)a->n_ints, a->ints); return 0;
  case IR_ATTR_FLOATS: ir_attr_set_floats(im->g, node, name, (int)a->n_floats, a->floats); return 0;
  case IR_ATTR_STRINGS: return set_strings(im, node, a);
  case IR_ATTR_STRING: {
    char *s = c_string(im, name, a->s);
    if (!s) return -1;
    ir_attr_set_string(im->g, node, name, s);
    free(s);
    return 0;
  }
  case IR_ATTR_TENSOR: {
    char tname[300];
    const char *base = im->np->n_output ? S(im->np->output[0]) : "node";
    snprintf(tname, sizeof tname, "%s.%s", base, name);
    for (int k = 2; ir_tensor_find(im->g, tname) >= 0; k++) snprintf(tname, sizeof tname, "%s.%s~%d", base, name, k);
    if (!a->t) return imp_fail(im, "attribute '%s' has no tensor", name);
    int t = imp_add_tensor(im, a->t, tname);
    if (t < 0) return -1;
    ir_attr_set_tensor(im->g, node, name, t);
    return 0;
  }
  }
  LOOM_ASSERT(0);
  return -1;
}

/* Every attribute of the node, checked against the schema s. */
static int import_attrs(struct imp *im, int node, const struct onnx_schema *s) {
  const Onnx__NodeProto *np = im->np;
  for (size_t i = 0; i < np->n_attribute; i++) {
    const Onnx__AttributeProto *a = np->attribute[i];
    const char *name = S(a->name);
    int kind = ir_kind_of(a->type), want = onnx_schema_attr(s, name, NULL);
    if (!name[0]) return imp_fail(im, "attribute %zu has no name", i);
    if (a->ref_attr_name && a->ref_attr_name[0]) return imp_fail(im, "attribute '%s' refers to a function attribute", name);
    if (want == -1) return imp_fail(im, "attribute '%s' is not supported (%s-%d has no such attribute)", name, S(np->op_type), s->since);
    if (want == -2 || kind < 0)
      return imp_fail(im, "attribute '%s' is a %s, which is not supported", name, attr_type_name(a->type));
    if (kind != want)
      return imp_fail(im, "attribute '%s' is %s, expected %s", name, attr_type_name(a->type), ir_attr_kind_name((enum ir_attr_kind)want));
    if (ir_attr_find(&im->g->nodes[node], name)) return imp_fail(im, "attribute '%s' is given twice", name);
    if (set_attr(im, node, a, kind)) return -1;
  }
  char buf[128];
  const char *missing = onnx_schema_missing(s, &im->g->nodes[node], buf, sizeof buf);
  return missing ? imp_fail(im, "required attribute '%s' is missing", missing) : 0;
}

/* ---- Constant ---- */

/* Constant: the value becomes a constant tensor named as the output. */
static int import_constant(struct imp *im) {
  const Onnx__NodeProto *np = im->np;
  if (np->n_output != 1 || np->n_input != 0 || np->n_attribute != 1) return imp_fail(im, "needs one attribute and one output");
  const Onnx__AttributeProto *a = np->attribute[0];
  const char *name = S(a->name), *out = S(np->output[0]);
  if (!strcmp(name, "value") && a->t) return imp_add_tensor(im, a->t, out) < 0 ? -1 : 0;
  if (!strcmp(name, "value_string") || !strcmp(name, "value_strings"))
    return imp_fail(im, "attribute '%s': string tensors are not supported", name);
  Onnx__TensorProto t = ONNX__TENSOR_PROTO__INIT;
  int64_t n = 0;
  t.has_data_type = 1;
  if (!strcmp(name, "value_float") || !strcmp(name, "value_floats")) {
    t.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    t.float_data = name[11] ? a->floats : (float *)&a->f;
    t.n_float_data = name[11] ? a->n_floats : 1;
    n = (int64_t)t.n_float_data;
  } else if (!strcmp(name, "value_int") || !strcmp(name, "value_ints")) {
    t.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
    t.int64_data = name[9] ? a->ints : (int64_t *)&a->i;
    t.n_int64_data = name[9] ? a->n_ints : 1;
    n = (int64_t)t.n_int64_data;
  } else {
    return imp_fail(im, "attribute '%s' is not supported", name);
  }
  int scalar = !strcmp(name, "value_float") || !strcmp(name, "value_int");
  t.n_dims = scalar ? 0 : 1;
  t.dims = &n;
  return imp_add_tensor(im, &t, out) < 0 ? -1 : 0;
}

/* ---- operands and results ---- */

/* The node's operands (absent optional ones -1, trailing ones dropped);
 * their count, or -1. */
static int node_inputs(struct imp *im, int **in) {
  const Onnx__NodeProto *np = im->np;
  int n = (int)(np->n_input > MAX_NODE_IO ? MAX_NODE_IO + 1 : np->n_input);
  while (n > 0 && !S(np->input[n - 1])[0]) n--; /* trailing absent optionals */
  if (n > MAX_NODE_IO) return imp_fail(im, "has too many inputs");
  *in = ir_xmalloc((size_t)(n + 1) * sizeof **in);
  for (int k = 0; k < n; k++) {
    const char *name = S(np->input[k]);
    (*in)[k] = name[0] ? ir_tensor_find(im->g, name) : -1;
    if (name[0] && (*in)[k] < 0) return imp_fail(im, "input '%s' is not defined before use", name);
  }
  return n;
}

/* The node's results: a tensor per named output; an unnamed output before
 * a named one gets a fresh tensor nothing reads.  Their count, or -1. */
static int node_outputs(struct imp *im, int **out) {
  const Onnx__NodeProto *np = im->np;
  int n = (int)(np->n_output > MAX_NODE_IO ? MAX_NODE_IO + 1 : np->n_output);
  while (n > 0 && !S(np->output[n - 1])[0]) n--;
  if (n > MAX_NODE_IO) return imp_fail(im, "has too many outputs");
  if (n == 0) return imp_fail(im, "has no outputs");
  *out = ir_xmalloc((size_t)(n + 1) * sizeof **out);
  for (int k = 0; k < n; k++) {
    const char *name = S(np->output[k]);
    if (name[0] && ir_tensor_find(im->g, name) >= 0) return imp_fail(im, "output '%s' is defined twice", name);
    (*out)[k] = ir_tensor_add(im->g, name[0] ? name : NULL, IR_DT_UNDEF, -1, NULL);
  }
  return n;
}

/* ---- the node's kind ---- */

/* The schema row of the node, with the checks that opsets below
 * ONNX_MIN_OPSET need. */
static const struct onnx_schema *schema_of(struct imp *im, const char *op) {
  const struct onnx_schema *s = onnx_schema_find(op, (int)im->opset);
  const char *why = onnx_refusal_find(op);
  if (why) return imp_fail(im, "op '%s' is not supported: %s", op, why), NULL;
  if (!s) {
    if (onnx_schema_find(op, ONNX_MAX_OPSET))
      return imp_fail(im, "op '%s' does not exist at opset %lld", op, (long long)im->opset), NULL;
    return imp_fail(im, "op '%s' is not supported", op), NULL;
  }
  if (im->opset < ONNX_MIN_OPSET && s != onnx_schema_find(op, ONNX_MIN_OPSET))
    return imp_fail(im, "op '%s' at opset %lld (version %d) is older than Loom supports (opsets %d to %d)", op,
                    (long long)im->opset, s->since, ONNX_MIN_OPSET, ONNX_MAX_OPSET), NULL;
  return s;
}

static int check_counts(struct imp *im, const struct onnx_schema *s, int n_in, int n_out) {
  if (n_in < s->min_in || n_in > s->max_in) {
    if (s->min_in == s->max_in) return imp_fail(im, "has %d inputs, takes %d", n_in, s->min_in);
    return imp_fail(im, "has %d inputs, takes %d to %d", n_in, s->min_in, s->max_in);
  }
  if (n_out < s->min_out || n_out > s->max_out)
    return imp_fail(im, "has %d outputs, takes %d to %d", n_out, s->min_out, s->max_out);
  return 0;
}

/* The typed kind for op, or -1 (the fused ops are Loom's own). */
static int typed_kind(const char *op) {
  int k = ir_op_from_name(op);
  return k >= IR_OP_QCONV ? -1 : k;
}

/* Whether typed node n has the form its kind describes: operand and
 * result counts and every attribute in ir_verify's table. */
static int fits_kind(const struct ir_node *n) {
  const struct ir_op_info *info = &ir_op_infos[n->op];
  if (n->n_out != info->n_out || n->n_in < info->min_in) return 0;
  if (!(info->flags & IR_OPF_VARIADIC) && n->n_in > info->max_in) return 0;
  for (int k = 0; k < info->min_in && k < n->n_in; k++)
    if (n->in[k] < 0) return 0;
  for (int i = 0; i < n->n_attrs; i++) {
    const struct ir_attr_spec *sp = ir_attr_spec_find(n->op, n->attrs[i].name);
    if (!sp || sp->kind != n->attrs[i].kind) return 0;
  }
  return !ir_attr_missing(n);
}

int imp_node(struct imp *im) {
  const Onnx__NodeProto *np = im->np;
  const char *op = S(np->op_type), *domain = S(np->domain);
  if (strcmp(domain, "") && strcmp(domain, "ai.onnx"))
    return imp_fail(im, "op '%s.%s' is not supported (only the standard ai.onnx domain is)", domain, op);
  if (!strcmp(op, "Constant")) return import_constant(im);
  const struct onnx_schema *s = schema_of(im, op);
  if (!s) return -1;
  int *in = NULL, *out = NULL, rc = -1;
  int n_in = node_inputs(im, &in), n_out = n_in < 0 ? -1 : node_outputs(im, &out);
  if (n_out < 0 || check_counts(im, s, n_in, n_out)) goto done;
  int kind = typed_kind(op);
  const char *name = S(np->name)[0] ? np->name : NULL;
  int node = kind >= 0 ? ir_node_add(im->g, (enum ir_op_kind)kind, name, n_in, in, n_out, out)
                       : ir_node_add_onnx(im->g, op, (int)im->opset, name, n_in, in, n_out, out);
  if (import_attrs(im, node, s) || imp_normalize(im, node)) goto done;
  /* A form the typed kind does not cover: the node as the model has it
   * (Clip's bounds are operands by now, as from opset 11 on). */
  if (im->g->nodes[node].op != IR_OP_ONNX && !fits_kind(&im->g->nodes[node]))
    ir_node_demote(im->g, node, im->g->nodes[node].op == IR_OP_CLIP && im->opset < 11 ? 11 : (int)im->opset);
  rc = 0;
done:
  free(in);
  free(out);
  return rc;
}
