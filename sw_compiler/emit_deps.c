/*
 * emit_deps.c - dependency tokens for a job described as ops and edges.
 *
 * emit.c's chunk pipeline wires the tokens of the one double-buffered
 * pattern most lowerings share.  A fused chain of layers (lower_chain.c)
 * has more stages per step: loads from DRAM, on-chip moves on the load
 * module, several GEMMs on compute, stores.  Such a job is built as a
 * sequence of ops in stream order, each an instruction group of one module
 * with the ops it must follow; emit_deps_finish() turns the edges between
 * neighbouring modules into token flags:
 *
 *   for the ops Q of the consuming module, in its order: let P be Q's
 *   latest predecessor (in the producing module's order); when P is later
 *   than the last one this queue waited for, P's last instruction pushes a
 *   token and Q's first instruction pops it.
 *
 * Tokens are FIFOs, so this is exact when every consumer's latest producer
 * comes no earlier than the previous consumer's (asserted): a later
 * consumer that depends on an earlier producer is ordered through the
 * consumer before it, which already waited for a later one.  An op without
 * instructions gets a NOP of its module to carry its tokens.  Edges between
 * load and store are not allowed (they have no token queue: go through
 * compute).  Deadlock freedom needs every producer before its consumers in
 * the stream (asserted) and bounded token counts; cost_simulate() checks
 * the result for every program (emit_report).
 */
#include <stdlib.h>
#include <string.h>

#include "sw_compiler/lower.h"

void emit_deps_init(struct emit_deps *d) { memset(d, 0, sizeof *d); }

void emit_deps_free(struct emit_deps *d) {
  for (uint32_t i = 0; i < d->n; i++) emit_vec_free(&d->ops[i].insns);
  free(d->ops);
  memset(d, 0, sizeof *d);
}

int emit_deps_op(struct emit_deps *d, int module) {
  if (d->n == d->cap) {
    d->cap = d->cap ? 2 * d->cap : 64;
    d->ops = realloc(d->ops, d->cap * sizeof *d->ops);
    LOOM_ASSERT(d->ops != NULL);
  }
  struct emit_op *op = &d->ops[d->n];
  memset(op, 0, sizeof *op);
  op->module = module;
  return (int)d->n++;
}

void emit_deps_after(struct emit_deps *d, int op, int pred) {
  if (pred < 0) return;
  struct emit_op *o = &d->ops[op];
  LOOM_ASSERT(pred < op && "a producer comes before its consumers in the stream");
  LOOM_ASSERT(o->npred < EMIT_MAX_PREDS);
  o->pred[o->npred++] = pred;
}

/* The token queue from module `from` to module `to`: push_next / pop_prev
 * when `to` follows `from` (load -> compute -> store), else push_prev /
 * pop_next. */
static int downstream(int from, int to) { return to == from + 1; }

static void wire(struct emit_deps *d, int from, int to) {
  int32_t last = -1; /* the latest producer some consumer waited for */
  int down = downstream(from, to);
  for (uint32_t q = 0; q < d->n; q++) {
    struct emit_op *c = &d->ops[q];
    if (c->module != to) continue;
    int32_t p = -1;
    for (int k = 0; k < c->npred; k++)
      if (d->ops[c->pred[k]].module == from && c->pred[k] > p) p = c->pred[k];
    if (p < 0 || p <= last) continue; /* already ordered through an earlier consumer */
    last = p;
    struct emit_vec *pv = &d->ops[p].insns, *cv = &c->insns;
    if (down) pv->v[pv->n - 1].push_next = 1, cv->v[0].pop_prev = 1;
    else pv->v[pv->n - 1].push_prev = 1, cv->v[0].pop_next = 1;
  }
}

void emit_deps_finish(struct emit_deps *d, struct lower_program *p) {
  for (uint32_t i = 0; i < d->n; i++) {
    struct emit_op *o = &d->ops[i];
    for (int k = 0; k < o->npred; k++)
      LOOM_ASSERT(abs(d->ops[o->pred[k]].module - o->module) <= 1 && "no edge between load and store");
    if (!o->insns.n) {
      struct loom_insn nop = emit_nop((uint32_t)o->module);
      emit_vec_push(&o->insns, &nop);
    }
  }
  wire(d, LOOM_Q_LOAD, LOOM_Q_COMPUTE);
  wire(d, LOOM_Q_COMPUTE, LOOM_Q_LOAD);
  wire(d, LOOM_Q_COMPUTE, LOOM_Q_STORE);
  wire(d, LOOM_Q_STORE, LOOM_Q_COMPUTE);
  for (uint32_t i = 0; i < d->n; i++)
    for (uint32_t k = 0; k < d->ops[i].insns.n; k++) emit_insn(p, &d->ops[i].insns.v[k]);
  struct loom_insn fin;
  memset(&fin, 0, sizeof fin);
  fin.opcode = LOOM_OP_FINISH;
  emit_insn(p, &fin);
}
