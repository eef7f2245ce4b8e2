/*
 * compile_krows.c - a projection job storing K's or V's WGT rows
 * (attention's Q x K^T and P x V with no host step for K or V;
 * pass_attention_krows.c finds them).
 *
 * Before any step is emitted, cl_wgt_row_stores marks the moves between a
 * projection and K's (V's) WGT rows (ir_wgt_rows_store) as nothing at run
 * time and marks the projection's result.  When the projection's job maps
 * its OUT segment, cl_wgt_rows_segment rewrites its STOREs
 * (lower_program_wgt_rows), once per rows tensor in graph order: BERT's K
 * or V projection stores all its columns as the rows, so its segment is
 * the rows' tensor, which the runtime zero-fills once (the padding
 * tokens' rows are never written); an in_proj stores Q's columns in place,
 * K's as rows after its result's bytes and V's after K's rows, each on a
 * WGT row, in the same buffer, the rows' descriptors views there.  Each
 * head's scores job then reads its channels of K's rows in place, its
 * P x V job those of V's, transposed as they load (view_node, map_segment).
 * A view of the in_proj result that only K's and V's Slices read (torch's
 * [S, 1, 3D]) is then nothing at run time too: without it, it would be a
 * host repack nobody reads.
 */
#include "sw_compiler/compile.h"

#include "sw_compiler/compile_int.h"

/* Whether tensor t is read, and only by absorbed nodes (no step), and is
 * no graph output. */
static int read_by_absorbed(const struct lctx *c, int t) {
  int readers = 0;
  for (int k = 0; k < c->g->n_outputs; k++)
    if (c->g->outputs[k] == t) return 0;
  for (int i = 0; i < c->g->n_nodes; i++) {
    const struct ir_node *n = &c->g->nodes[i];
    for (int k = 0; k < n->n_in && !n->dead; k++)
      if (n->in[k] == t) {
        if (!c->absorbed[i]) return 0;
        readers++;
      }
  }
  return readers > 0;
}

/* K's and V's WGT rows stored by their projection's job
 * (ir_wgt_rows_store): the moves between are nothing, the job's result is
 * the rows' tensor or holds them (the runtime zero-fills it once, and no
 * job writes its padding tokens); c->wgt_rows marks the result. */
void cl_wgt_row_stores(struct lctx *c) {
  for (int i = 0; i < c->g->n_nodes; i++) {
    int chain[8], k, q = c->targets[i] == PART_ALIAS ? ir_wgt_rows_store(c->g, i, c->cfg->block_in, chain, &k, NULL) : -1;
    if (q < 0 || c->targets[q] != PART_ACCEL) continue;
    if (c->wgt_rows[c->g->nodes[q].out[0]] < 0) c->wgt_rows[c->g->nodes[q].out[0]] = i;
    while (k--) c->absorbed[chain[k]] = 1;
  }
  for (int i = 0; i < c->g->n_nodes; i++) { /* views of an in_proj result only K's and V's Slices read: nothing */
    int chain[8], k, q = c->absorbed[i] ? ir_wgt_rows_store(c->g, i, c->cfg->block_in, chain, &k, NULL) : -1;
    for (int v = q >= 0 ? ir_producer(c->g, c->g->nodes[chain[k - 1]].in[0]) : -1;
         v >= 0 && v != q && ir_op_is_view(c->g->nodes[v].op) && read_by_absorbed(c, c->g->nodes[v].out[0]);
         v = ir_producer(c->g, c->g->nodes[v].in[0]))
      c->absorbed[v] = 1;
  }
}

/* The job producing *t stores (some of) its columns as WGT rows
 * (cl_wgt_row_stores): all of them, then *t becomes the rows' tensor; K's
 * and V's of an in_proj result, then each one's rows go after the bytes
 * before them in its buffer (the result's, then K's rows), on a WGT row,
 * the rows' descriptor a view there. */
int cl_wgt_rows_segment(struct lctx *c, int node, struct lower_program *p, int *t) {
  const struct ir_tensor *y = &c->g->tensors[*t];
  int64_t C = y->dims[y->rank - 1], col0;
  uint64_t wrow = loom_hw_row_bytes(c->cfg, LOOM_BUF_WGT, 0), end = 0;
  int whole = -1;
  for (int tr = 0; tr < c->g->n_nodes; tr++) { /* in graph order: K's rows, then V's */
    int q = c->absorbed[tr] ? ir_wgt_rows_store(c->g, tr, c->cfg->block_in, NULL, NULL, &col0) : -1;
    if (q < 0 || c->g->nodes[q].out[0] != *t) continue;
    int kw = c->g->nodes[tr].out[0];
    const struct ir_tensor *w = &c->g->tensors[kw];
    uint64_t base = 0;
    if (w->dims[1] != C) {
      int d = cl_desc_of(c, *t);
      if (d < 0) return -1;
      const struct loom_file_tensor *rec = &c->ts[d].rec;
      base = ((end ? end : rec->bytes) + wrow - 1) / wrow * wrow;
      if (c->desc[kw] >= 0) return ir_fail(c->err, c->g, node, "%%%s is laid out before its job", w->name);
      if ((c->desc[kw] = cl_view_desc(c, d, kw, 0, (int)rec->buffer, rec->offset + base, ".rows")) < 0) return -1;
    } else {
      whole = kw;
    }
    if (lower_program_wgt_rows(p, LOWER_SEG_OUT, (uint64_t)(ir_tensor_numel(y) / C), (uint64_t)col0, (uint64_t)w->dims[1], base))
      return ir_fail(c->err, c->g, node, "the job cannot store %%%s as weight rows", w->name);
    end = p->seg_bytes[LOWER_SEG_OUT];
  }
  if (whole >= 0) *t = whole;
  return 0;
}
