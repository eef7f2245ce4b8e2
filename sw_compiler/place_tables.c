/*
 * place_tables.c - an activation table's job of its own, or the host's
 * lookup: whichever costs less.
 *
 * A table that fusion could not merge into the epilogue of the op before
 * it (pass_fuse_act.c) runs as a job of its own, the identity depthwise
 * 1x1 convolution, which walks the tensor 16 channels (one weight tile
 * load, one store) at a time: for a [1, S*D, 1, 1] tensor that is about six
 * cycles per element, 60 ns at 100 MHz.  The host does the same lookup,
 * lut[(uint8)x], as two steps on the portable kernels: Cast of the int8
 * codes to int32, and Gather of the 256-entry table, whose negative indices
 * count from the end, so code c reads lut[256 + c] = lut[(uint8)c]: the
 * same bytes as the job, with no float step.
 *
 * The rule: the job (its cost model estimate, compile_job_cycles, at the
 * configuration's clock) stays on the accelerator only when it is faster
 * than COMPILE_HOST_LOOKUP_NS per element on the host.  The compiler has
 * no per-op host cost model; the constant is what the portable kernels'
 * Cast and Gather took on the development machine (the zoo ViT's four
 * GELU tables of 16,640 elements on the host: Cast 8-10 ns and Gather
 * 12-14 ns per element, docs/compiler.md), rounded up, so that a doubt
 * leaves the job on the accelerator.  The accelerator and the host run one
 * after the other in a Loom program, so the times add and comparing them
 * is the whole decision.  At 100 MHz a job of its own over a rank 1-3
 * tensor (about 6 cycles per element) always loses; one over a 4-D map
 * (16 channels of a pixel per GEMM row) wins once the map has a few
 * hundred pixels.
 *
 * The summary prints the lookup under the region's name with both
 * figures (compile_placement_print reads r->host_tables).
 */
#include "sw_compiler/compile.h"
#include "sw_compiler/pass_fuse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ONNX_INT32 6

/* Node i (an act_only QConv) becomes Cast + Gather of its table, at i. */
static void to_lookup(struct ir_graph *g, int i, struct compile_host_table *h) {
  const struct ir_node *n = &g->nodes[i];
  const struct ir_attr *lut = ir_attr_find(n, "lut");
  int x = n->in[0], y = n->out[0];
  int8_t t[256];
  for (int k = 0; k < 256; k++) t[k] = (int8_t)lut->ints[k];
  int rank = g->tensors[x].rank;
  int64_t dims[IR_MAX_RANK];
  memcpy(dims, g->tensors[x].dims, (size_t)rank * sizeof dims[0]);
  char *base = ir_xstrdup(g->tensors[y].name);
  int table = fu_new_tensor(g, base, ".lut", IR_DT_I8, 1, (int64_t[1]){256}); /* (moves the tensors) */
  ir_tensor_set_data(g, table, t, sizeof t);
  int idx = fu_new_tensor(g, base, ".idx", IR_DT_I32, rank, dims);
  g->nodes[i].dead = 1;
  int cast = ir_node_insert(g, i, IR_OP_ONNX, NULL, 1, &x, 1, &idx);
  g->nodes[cast].type = ir_xstrdup("Cast");
  g->nodes[cast].opset = 13;
  ir_attr_set_int(g, cast, "to", ONNX_INT32);
  int gather = ir_node_insert(g, i + 1, IR_OP_GATHER, NULL, 2, (int[2]){table, idx}, 1, &y);
  ir_attr_set_int(g, gather, "axis", 0);
  h->cast = cast, h->gather = gather;
  free(base);
}

int compile_place_tables(struct ir_graph *g, const struct loom_hw_config *cfg, unsigned flags,
                         struct compile_result *r, struct ir_error *err) {
  int moved = 0;
  for (int i = 0; !(flags & COMPILE_TABLE_JOBS) && i < g->n_nodes; i++) {
    const struct ir_node *n = &g->nodes[i];
    if (n->dead || n->op != IR_OP_QCONV || !ir_attr_int(n, "act_only", 0)) continue;
    uint64_t cycles = compile_job_cycles(g, cfg, flags, 1, &i);
    double job_us = (double)cycles / cfg->clock_mhz, elems = (double)ir_tensor_numel(&g->tensors[n->in[0]]);
    double host_us = elems * COMPILE_HOST_LOOKUP_NS / 1e3;
    if (cycles == UINT64_MAX || job_us <= host_us) continue;
    r->host_tables = ir_xrealloc(r->host_tables, (size_t)(r->n_host_tables + 1) * sizeof *r->host_tables);
    struct compile_host_table *h = &r->host_tables[r->n_host_tables++];
    const struct ir_attr *act = ir_attr_find(n, "act");
    snprintf(h->act, sizeof h->act, "%s", act && act->kind == IR_ATTR_STRING ? act->s : "table");
    snprintf(h->why, sizeof h->why,
             "table lookup on the host: a job of its own, %llu cycles = %.1f us at %d MHz > %.1f us (%.0f ns/element)",
             (unsigned long long)cycles, job_us, cfg->clock_mhz, host_us, COMPILE_HOST_LOOKUP_NS);
    to_lookup(g, i, h); /* (the earlier notes' nodes are before i: they stay) */
    i += 2, moved = 1;
  }
  if (!moved) return 0;
  free(r->targets);
  r->targets = ir_xcalloc((size_t)g->n_nodes + 1, sizeof *r->targets);
  return ir_pass_partition(g, cfg->block_in, r->targets, err);
}
