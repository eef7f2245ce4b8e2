/*
 * kernel_node_runner.c - ONNX's generated node tests straight through the
 * host kernels (driver/core/kernel.h), without the compiler.
 *
 *   kernel_node_runner DIR [--filter TEXT] [-v] [--passing FILE] [--write-passing FILE]
 *
 * DIR is what scripts/gen_onnx_node_tests.py writes: DIR/node/test_NAME/
 * model.onnx (one graph) with test_data_set_N/{input,output}_K.pb.  A test
 * whose graph is one node is run here: its attributes become loom_kattrs,
 * its inputs are read from the data set (an empty input name is an absent
 * operand), the outputs get the expected outputs' dtypes and dims (for the
 * kernels flagged LOOM_KERNEL_DYNAMIC, the capacity loom_kernel_capacity
 * gives, and the kernel sets the dims), the kernel runs, and every output is
 * compared: floats within rtol 1e-3 + atol 1e-4 (NaN equals NaN), integers
 * and bools exactly, the dims exactly.
 *
 * Tests are sorted into: multi-node (expanded function bodies: the
 * compiler's business, only counted), excluded by the op's kind (training,
 * random, sequence/optional, control flow; a training-mode Dropout with a
 * non-zero ratio is random too), skipped (string tensors: Loom has no string
 * dtype), and eligible.  Per op it prints passed / failed / skipped with the
 * reasons, then the totals and the pass rate over the eligible tests.
 * With --passing, every test the list names must pass (exit 1 otherwise:
 * a regression); --write-passing writes the list of the tests that passed.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/core/kernel.h"
#include "onnx/onnx.pb-c.h"

#define MAX_IO LOOM_KERNEL_MAX_IO
#define MAX_OPS 256
#define MAX_TESTS 4096

enum verdict { V_PASS, V_FAIL, V_SKIP, V_EXCLUDED, V_MULTI };

struct op_stats {
  char name[64];
  int passed, failed, skipped;
};

struct runner {
  const char *dir, *filter;
  int verbose;
  struct op_stats ops[MAX_OPS];
  int n_ops;
  int multi, excluded[4], skipped_string;
  char *passed_names[MAX_TESTS];
  int n_passed_names;
};

static const char *const excluded_kinds[4] = {"training", "random", "sequence/optional",
                                              "control flow"};
static const char *const random_ops[] = {"Bernoulli",   "Multinomial",       "RandomNormal",
                                         "RandomNormalLike", "RandomUniform", "RandomUniformLike",
                                         NULL};
static const char *const sequence_ops[] = {
    "SequenceAt",     "SequenceConstruct", "SequenceEmpty",    "SequenceErase",
    "SequenceInsert", "SequenceLength",    "SequenceMap",      "SplitToSequence",
    "ConcatFromSequence", "Optional",      "OptionalGetElement", "OptionalHasElement", NULL};
static const char *const control_ops[] = {"If", "Loop", "Scan", NULL};

static int in_list(const char *const *list, const char *s) {
  for (; *list; list++)
    if (!strcmp(*list, s)) return 1;
  return 0;
}

/* ---- files and tensors ---- */

static uint8_t *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  uint8_t *buf = NULL;
  if (fseek(f, 0, SEEK_END) == 0) {
    long n = ftell(f);
    if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1)) &&
        fread(buf, 1, (size_t)n, f) != (size_t)n)
      free(buf), buf = NULL;
    *len = (size_t)n;
  }
  fclose(f);
  return buf;
}

/* A TensorProto into t (data malloc'd); 0, or -1 with *why. */
static int tensor_of(const Onnx__TensorProto *p, struct loom_kt *t, const char **why) {
  memset(t, 0, sizeof *t);
  if (p->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__STRING) return *why = "string tensors", -1;
  t->dtype = loom_dtype_from_onnx(p->data_type);
  if (t->dtype == LOOM_DT_INVALID) return *why = "a tensor type Loom has no dtype for", -1;
  if (p->n_dims > LOOM_KT_MAX_RANK) return *why = "rank above LOOM_KT_MAX_RANK", -1;
  t->rank = (int)p->n_dims;
  for (int i = 0; i < t->rank; i++) t->dims[i] = p->dims[i];
  int64_t n = loom_kt_numel(t);
  size_t es = loom_dtype_size(t->dtype);
  if (n < 0 || n > (1 << 28)) return *why = "bad tensor size", -1;
  t->data = calloc((size_t)n + 1, es);
  if (!t->data) return *why = "out of memory", -1;
  if (p->has_raw_data) {
    if (p->raw_data.len != (size_t)n * es) return free(t->data), *why = "raw_data size", -1;
    if (p->raw_data.len) memcpy(t->data, p->raw_data.data, p->raw_data.len);
    return 0;
  }
  for (int64_t i = 0; i < n; i++) {
    size_t k = (size_t)i;
    switch (t->dtype) {
    case LOOM_DT_F32: ((float *)t->data)[i] = k < p->n_float_data ? p->float_data[k] : 0; break;
    case LOOM_DT_F64: ((double *)t->data)[i] = k < p->n_double_data ? p->double_data[k] : 0; break;
    case LOOM_DT_I64: ((int64_t *)t->data)[i] = k < p->n_int64_data ? p->int64_data[k] : 0; break;
    case LOOM_DT_U32:
    case LOOM_DT_U64: loom_kt_set_i64(t, i, k < p->n_uint64_data ? (int64_t)p->uint64_data[k] : 0); break;
    case LOOM_DT_F16:
    case LOOM_DT_BF16: ((uint16_t *)t->data)[i] = (uint16_t)(k < p->n_int32_data ? p->int32_data[k] : 0); break;
    default: loom_kt_set_i64(t, i, k < p->n_int32_data ? p->int32_data[k] : 0); break;
    }
  }
  return 0;
}

static int read_tensor(const char *path, struct loom_kt *t, const char **why) {
  size_t len;
  uint8_t *buf = slurp(path, &len);
  Onnx__TensorProto *p = buf ? onnx__tensor_proto__unpack(NULL, len, buf) : NULL;
  free(buf);
  if (!p) return *why = "unreadable TensorProto", -1;
  int r = tensor_of(p, t, why);
  onnx__tensor_proto__free_unpacked(p, NULL);
  return r;
}

/* ---- one test ---- */

struct test {
  const Onnx__ModelProto *m;
  const Onnx__NodeProto *node;
  int opset;
  struct loom_kattr attrs[64];
  struct loom_kt attr_tensors[64];
  int n_attrs;
  char dir[1024];
};

static void free_attrs(struct test *t) {
  for (int i = 0; i < t->n_attrs; i++) {
    if (t->attrs[i].kind == LOOM_KATTR_STRING) free((void *)t->attrs[i].s);
    if (t->attrs[i].kind == LOOM_KATTR_STRINGS) {
      for (int k = 0; k < t->attrs[i].n; k++) free((void *)t->attrs[i].strings[k]);
      free((void *)t->attrs[i].strings);
    }
    free(t->attr_tensors[i].data);
  }
}

static char *str_of(ProtobufCBinaryData b) {
  char *s = malloc(b.len + 1);
  if (s) memcpy(s, b.data, b.len), s[b.len] = 0;
  return s;
}

/* The node's attributes as loom_kattrs; 0, or -1 with *why. */
static int map_attrs(struct test *t, const char **why) {
  const Onnx__NodeProto *n = t->node;
  if (n->n_attribute > 64) return *why = "too many attributes", -1;
  for (size_t i = 0; i < n->n_attribute; i++) {
    const Onnx__AttributeProto *a = n->attribute[i];
    struct loom_kattr *k = &t->attrs[t->n_attrs];
    memset(k, 0, sizeof *k);
    memset(&t->attr_tensors[t->n_attrs], 0, sizeof t->attr_tensors[0]);
    k->name = a->name;
    switch (a->type) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: k->kind = LOOM_KATTR_FLOAT, k->f = a->f; break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: k->kind = LOOM_KATTR_INT, k->i = a->i; break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING:
      k->kind = LOOM_KATTR_STRING, k->s = str_of(a->s);
      break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS:
      k->kind = LOOM_KATTR_FLOATS, k->n = (int)a->n_floats, k->floats = a->floats;
      break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
      k->kind = LOOM_KATTR_INTS, k->n = (int)a->n_ints, k->ints = a->ints;
      break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS: {
      char **v = calloc(a->n_strings + 1, sizeof *v);
      for (size_t s = 0; v && s < a->n_strings; s++) v[s] = str_of(a->strings[s]);
      k->kind = LOOM_KATTR_STRINGS, k->n = (int)a->n_strings, k->strings = (const char *const *)v;
      break;
    }
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR:
      if (!a->t || tensor_of(a->t, &t->attr_tensors[t->n_attrs], why)) return -1;
      k->kind = LOOM_KATTR_TENSOR, k->t = &t->attr_tensors[t->n_attrs];
      break;
    default: return *why = "an attribute kind kernels do not take (graph, sparse tensor)", -1;
    }
    t->n_attrs++;
  }
  return 0;
}

/* Graph input index of `name`, or -1. */
static int graph_input(const Onnx__GraphProto *g, const char *name) {
  for (size_t i = 0; i < g->n_input; i++)
    if (!strcmp(g->input[i]->name, name)) return (int)i;
  return -1;
}

static int graph_output(const Onnx__GraphProto *g, const char *name) {
  for (size_t i = 0; i < g->n_output; i++)
    if (!strcmp(g->output[i]->name, name)) return (int)i;
  return -1;
}

/* numpy has no bfloat16: ONNX's generators store bfloat16 data as uint16
 * tensors under a graph input or output declared BFLOAT16.  Take the
 * declared type when it has the stored type's size. */
static void declared_type(const Onnx__ValueInfoProto *v, struct loom_kt *t) {
  if (!v->type || v->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) return;
  loom_dtype d = loom_dtype_from_onnx(v->type->tensor_type->elem_type);
  if (d != LOOM_DT_INVALID && loom_dtype_size(d) == loom_dtype_size(t->dtype)) t->dtype = d;
}

static int close_enough(double want, double got) {
  if (isnan(want) || isnan(got)) return isnan(want) && isnan(got);
  if (isinf(want) || isinf(got)) return want == got;
  return fabs(got - want) <= 1e-4 + 1e-3 * fabs(want);
}

/* Compares one output; NULL when equal, else a message in buf. */
static const char *compare(const struct loom_kt *want, const struct loom_kt *got, char *buf,
                           size_t len) {
  if (want->rank != got->rank || memcmp(want->dims, got->dims, (size_t)want->rank * 8))
    return snprintf(buf, len, "shape differs (rank %d vs %d)", got->rank, want->rank), buf;
  int64_t n = loom_kt_numel(want);
  int is_float = loom_dtype_is_float(want->dtype);
  for (int64_t i = 0; i < n; i++) {
    if (is_float) {
      double w = loom_kt_get_f64(want, i), g = loom_kt_get_f64(got, i);
      if (!close_enough(w, g))
        return snprintf(buf, len, "element %lld: got %.9g, want %.9g", (long long)i, g, w), buf;
    } else if (loom_kt_get_i64(want, i) != loom_kt_get_i64(got, i)) {
      return snprintf(buf, len, "element %lld: got %lld, want %lld", (long long)i,
                      (long long)loom_kt_get_i64(got, i), (long long)loom_kt_get_i64(want, i)),
             buf;
    }
  }
  return NULL;
}

/* A training-mode Dropout with a non-zero ratio draws random numbers. */
static int random_dropout(const struct loom_kcall *c) {
  if (strcmp(c->op, "Dropout") || c->n_in < 3 || !loom_kt_present(&c->in[2])) return 0;
  if (!loom_kt_get_i64(&c->in[2], 0)) return 0;
  double ratio = c->n_in > 1 && loom_kt_present(&c->in[1]) ? loom_kt_get_f64(&c->in[1], 0) : 0.5;
  return ratio != 0;
}

/* One data set; V_PASS, V_FAIL or V_SKIP/V_EXCLUDED with msg. */
static enum verdict run_set(struct test *t, const char *set, char *msg, size_t len) {
  const Onnx__GraphProto *g = t->m->graph;
  const Onnx__NodeProto *n = t->node;
  struct loom_kt in[MAX_IO], out[MAX_IO], want[MAX_IO];
  int n_in = (int)n->n_input, n_out = (int)n->n_output, loaded_in = 0, loaded_out = 0;
  enum verdict v = V_FAIL;
  const char *why = NULL;
  char path[1200];
  memset(in, 0, sizeof in), memset(out, 0, sizeof out), memset(want, 0, sizeof want);
  if (n_in > MAX_IO || n_out > MAX_IO) return snprintf(msg, len, "too many operands"), V_FAIL;
  for (; loaded_in < n_in; loaded_in++) {
    const char *name = n->input[loaded_in];
    if (!*name) continue;
    int gi = graph_input(g, name);
    if (gi < 0) return snprintf(msg, len, "input %s is not a graph input", name), V_FAIL;
    snprintf(path, sizeof path, "%s/%s/input_%d.pb", t->dir, set, gi);
    if (read_tensor(path, &in[loaded_in], &why)) goto unreadable;
    declared_type(g->input[gi], &in[loaded_in]);
  }
  const struct loom_kernel *k = loom_kernel_find(n->op_type);
  struct loom_kcall c = {n->op_type, t->opset, in, n_in, out, n_out, t->attrs, t->n_attrs, msg};
  if (random_dropout(&c)) {
    snprintf(msg, len, "training-mode Dropout with a non-zero ratio is random");
    v = V_EXCLUDED;
    goto done;
  }
  for (; loaded_out < n_out; loaded_out++) {
    int go = *n->output[loaded_out] ? graph_output(g, n->output[loaded_out]) : -1;
    if (go < 0) continue; /* nobody reads it: absent */
    snprintf(path, sizeof path, "%s/%s/output_%d.pb", t->dir, set, go);
    if (read_tensor(path, &want[loaded_out], &why)) goto unreadable;
    declared_type(g->output[go], &want[loaded_out]);
    out[loaded_out] = want[loaded_out];
    if (k && (k->flags & LOOM_KERNEL_DYNAMIC) && loom_kernel_capacity(&c, loaded_out, &out[loaded_out])) {
      char m2[LOOM_MSG_MAX];
      snprintf(m2, sizeof m2, "%s", msg);
      snprintf(msg, len, "no capacity: %s", m2);
      goto done;
    }
    size_t es = loom_dtype_size(want[loaded_out].dtype);
    /* Poisoned, so an element the kernel forgets to write shows. */
    out[loaded_out].data = malloc((size_t)loom_kt_numel(&out[loaded_out]) * es + 1);
    if (!out[loaded_out].data) return snprintf(msg, len, "out of memory"), V_FAIL;
    memset(out[loaded_out].data, 0xa5, (size_t)loom_kt_numel(&out[loaded_out]) * es + 1);
  }
  if (!k) {
    snprintf(msg, len, "no kernel for %s", n->op_type);
    goto done;
  }
  msg[0] = 0;
  loom_status st = loom_kernel_run(&c);
  if (st != LOOM_OK) {
    char m2[LOOM_MSG_MAX];
    snprintf(m2, sizeof m2, "%s", msg);
    snprintf(msg, len, "%s: %s", loom_status_name(st), m2);
    goto done;
  }
  v = V_PASS;
  for (int o = 0; o < n_out && v == V_PASS; o++) {
    if (!loom_kt_present(&want[o])) continue;
    char buf[256];
    const char *diff = compare(&want[o], &out[o], buf, sizeof buf);
    if (diff) snprintf(msg, len, "output %d: %s", o, diff), v = V_FAIL;
  }
  goto done;
unreadable:
  snprintf(msg, len, "%s", why);
  v = strcmp(why, "string tensors") ? V_FAIL : V_SKIP;
done:
  for (int i = 0; i < loaded_in; i++) free(in[i].data);
  for (int i = 0; i < loaded_out; i++) free(want[i].data), free(out[i].data);
  return v;
}

/* The kind of a model's test before running it. */
static enum verdict classify(const Onnx__ModelProto *m, int *kind, const char **why) {
  const Onnx__GraphProto *g = m->graph;
  if (g->n_node != 1) return V_MULTI;
  const Onnx__NodeProto *n = g->node[0];
  if (n->domain && *n->domain && strcmp(n->domain, "ai.onnx")) return *kind = 0, V_EXCLUDED;
  if (in_list(random_ops, n->op_type)) return *kind = 1, V_EXCLUDED;
  if (in_list(sequence_ops, n->op_type)) return *kind = 2, V_EXCLUDED;
  if (in_list(control_ops, n->op_type)) return *kind = 3, V_EXCLUDED;
  for (size_t i = 0; i < g->n_input + g->n_output; i++) {
    const Onnx__ValueInfoProto *v = i < g->n_input ? g->input[i] : g->output[i - g->n_input];
    if (!v->type || v->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
      return *kind = 2, V_EXCLUDED;
    if (v->type->tensor_type->elem_type == ONNX__TENSOR_PROTO__DATA_TYPE__STRING)
      return *why = "string tensors", V_SKIP;
  }
  return V_PASS;
}

static struct op_stats *stats_for(struct runner *r, const char *op) {
  for (int i = 0; i < r->n_ops; i++)
    if (!strcmp(r->ops[i].name, op)) return &r->ops[i];
  if (r->n_ops == MAX_OPS) return &r->ops[MAX_OPS - 1];
  struct op_stats *s = &r->ops[r->n_ops++];
  snprintf(s->name, sizeof s->name, "%s", op);
  return s;
}

static void run_test(struct runner *r, const char *name) {
  struct test t;
  memset(&t, 0, sizeof t);
  snprintf(t.dir, sizeof t.dir, "%s/node/%s", r->dir, name);
  char path[1200], msg[1024] = "";
  snprintf(path, sizeof path, "%s/model.onnx", t.dir);
  size_t len;
  uint8_t *buf = slurp(path, &len);
  Onnx__ModelProto *m = buf ? onnx__model_proto__unpack(NULL, len, buf) : NULL;
  free(buf);
  if (!m || !m->graph) return;
  t.m = m;
  int kind = 0;
  const char *why = NULL;
  enum verdict v = classify(m, &kind, &why);
  if (v == V_MULTI) r->multi++;
  if (v == V_EXCLUDED) r->excluded[kind]++;
  if (v == V_MULTI || v == V_EXCLUDED) goto out;
  t.node = m->graph->node[0];
  struct op_stats *s = stats_for(r, t.node->op_type);
  for (size_t i = 0; i < m->n_opset_import; i++)
    if (!*m->opset_import[i]->domain || !strcmp(m->opset_import[i]->domain, "ai.onnx"))
      t.opset = (int)m->opset_import[i]->version;
  if (v == V_PASS && map_attrs(&t, &why)) v = V_FAIL;
  if (v != V_PASS) {
    snprintf(msg, sizeof msg, "%s", why);
  } else {
    int sets = 0;
    for (int i = 0; v == V_PASS; i++) {
      char set[32];
      snprintf(set, sizeof set, "test_data_set_%d", i);
      snprintf(path, sizeof path, "%s/%s", t.dir, set);
      DIR *d = opendir(path);
      if (!d) break;
      closedir(d);
      v = run_set(&t, set, msg, sizeof msg);
      sets++;
    }
    if (!sets) v = V_FAIL, snprintf(msg, sizeof msg, "no data sets");
  }
  if (v == V_EXCLUDED) {
    r->excluded[1]++;
    if (r->verbose) printf("  excluded %s: %s\n", name, msg);
    goto out;
  }
  if (v == V_SKIP && !strcmp(msg, "string tensors")) r->skipped_string++;
  if (v == V_PASS) s->passed++, r->passed_names[r->n_passed_names++] = strdup(name);
  if (v == V_FAIL) s->failed++;
  if (v == V_SKIP) s->skipped++;
  if (v == V_FAIL || (r->verbose && v == V_SKIP))
    printf("  %s %s: %s\n", v == V_FAIL ? "FAIL" : "skip", name, msg);
  else if (r->verbose)
    printf("  pass %s\n", name);
out:
  free_attrs(&t);
  onnx__model_proto__free_unpacked(m, NULL);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The sorted test directory names (malloc'd); count in *n. */
static char **list_tests(const char *dir, const char *filter, int *n) {
  char path[1100];
  snprintf(path, sizeof path, "%s/node", dir);
  DIR *d = opendir(path);
  if (!d) return NULL;
  char **names = calloc(MAX_TESTS, sizeof *names);
  struct dirent *e;
  *n = 0;
  while (names && (e = readdir(d)) && *n < MAX_TESTS)
    if (!strncmp(e->d_name, "test_", 5) && (!filter || strstr(e->d_name, filter)))
      names[(*n)++] = strdup(e->d_name);
  closedir(d);
  if (names) qsort(names, (size_t)*n, sizeof *names, cmp_str);
  return names;
}

static int is_passed(const struct runner *r, const char *name) {
  for (int i = 0; i < r->n_passed_names; i++)
    if (!strcmp(r->passed_names[i], name)) return 1;
  return 0;
}

/* Tests the committed list names that did not pass now. */
static int regressions(const struct runner *r, const char *list) {
  FILE *f = fopen(list, "r");
  if (!f) {
    fprintf(stderr, "kernel_node_runner: %s: cannot open the passing list\n", list);
    return 1;
  }
  char line[256];
  int bad = 0;
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\r\n")] = 0;
    if (!*line || *line == '#' || (r->filter && !strstr(line, r->filter))) continue;
    if (!is_passed(r, line)) printf("REGRESSION %s (in %s) did not pass\n", line, list), bad++;
  }
  fclose(f);
  return bad;
}

static void summary(const struct runner *r, int tests) {
  int p = 0, f = 0, s = 0;
  for (int i = 0; i < r->n_ops; i++) {
    const struct op_stats *o = &r->ops[i];
    printf("%-28s passed %3d  failed %3d  skipped %3d\n", o->name, o->passed, o->failed, o->skipped);
    p += o->passed, f += o->failed, s += o->skipped;
  }
  int ex = r->excluded[0] + r->excluded[1] + r->excluded[2] + r->excluded[3];
  printf("\n%d node tests: %d multi-node (expanded function bodies, the compiler's), %d excluded "
         "(%s %d, %s %d, %s %d, %s %d)\n",
         tests, r->multi, ex, excluded_kinds[0], r->excluded[0], excluded_kinds[1], r->excluded[1],
         excluded_kinds[2], r->excluded[2], excluded_kinds[3], r->excluded[3]);
  int eligible = p + f + s;
  printf("eligible single-node tests: %d: passed %d (%.1f%%), failed %d, skipped %d "
         "(%d for string tensors)\n",
         eligible, p, eligible ? 100.0 * p / eligible : 0.0, f, s, r->skipped_string);
}

int main(int argc, char **argv) {
  struct runner r;
  memset(&r, 0, sizeof r);
  const char *passing = NULL, *write_passing = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--filter") && i + 1 < argc) r.filter = argv[++i];
    else if (!strcmp(argv[i], "--passing") && i + 1 < argc) passing = argv[++i];
    else if (!strcmp(argv[i], "--write-passing") && i + 1 < argc) write_passing = argv[++i];
    else if (!strcmp(argv[i], "-v")) r.verbose = 1;
    else if (argv[i][0] != '-' && !r.dir) r.dir = argv[i];
    else {
      fprintf(stderr, "usage: %s DIR [--filter TEXT] [-v] [--passing FILE] [--write-passing FILE]\n",
              argv[0]);
      return 2;
    }
  }
  if (!r.dir) return fprintf(stderr, "kernel_node_runner: no test directory given\n"), 2;
  int n = 0;
  char **names = list_tests(r.dir, r.filter, &n);
  if (!names || !n) {
    fprintf(stderr, "kernel_node_runner: %s/node: no node tests (run "
                    "scripts/gen_onnx_node_tests.py)\n", r.dir);
    return 2;
  }
  for (int i = 0; i < n; i++) run_test(&r, names[i]);
  summary(&r, n);
  int bad = passing ? regressions(&r, passing) : 0;
  if (write_passing) {
    FILE *f = fopen(write_passing, "w");
    if (!f) return fprintf(stderr, "kernel_node_runner: cannot write %s\n", write_passing), 2;
    for (int i = 0; i < r.n_passed_names; i++) fprintf(f, "%s\n", r.passed_names[i]);
    fclose(f);
  }
  for (int i = 0; i < n; i++) free(names[i]);
  for (int i = 0; i < r.n_passed_names; i++) free(r.passed_names[i]);
  free(names);
  if (bad) printf("%d regression(s) from %s\n", bad, passing);
  return bad ? 1 : 0;
}
