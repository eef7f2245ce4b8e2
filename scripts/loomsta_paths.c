/*
 * loomsta_paths.c - arrival times over the timing graph and the worst path
 * into every path end.
 *
 * One pass in topological order (Kahn): every start sets its node's arrival
 * to its clock-to-out, every arc pushes arrival + delay forward, and each
 * node keeps the latest arrival with the arc and the start it came from
 * (the critical path) and, separately, the most logic levels any path has
 * reached it with (the deepest path, which need not be the slowest).  A
 * combinational loop leaves nodes that never become ready; that is an error,
 * as in any static timing analysis.
 *
 * A path end's delay is its node's arrival plus the net into the register
 * and the register's setup; the clock margin is left to the caller.  Ends
 * whose critical start is in another clock domain are counted, not timed.
 * Nodes no start reaches (driven by constants or by top-level inputs, which
 * are unconstrained as in Vivado without input delays) end no path.
 */
#include <stdlib.h>
#include <string.h>

#include "scripts/loomsta.h"

static int cmp_delay(const void *a, const void *b) {
  double x = ((const sta_path *)a)->delay, y = ((const sta_path *)b)->delay;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* Kahn's order of the nodes; -1 (after naming a node of the loop) if the
 * arcs have a cycle. */
static int topo_order(const sta_graph *g, const int *first, const int *by_from, int *order) {
  int n = g->n_nodes, head = 0, tail = 0;
  int *indeg = calloc((size_t)n + 1, sizeof *indeg);
  for (int a = 0; a < g->n_arcs; a++) indeg[g->arcs[a].to]++;
  for (int v = 0; v < n; v++)
    if (!indeg[v]) order[tail++] = v;
  while (head < tail) {
    int u = order[head++];
    for (int i = first[u]; i < first[u + 1]; i++)
      if (!--indeg[g->arcs[by_from[i]].to]) order[tail++] = g->arcs[by_from[i]].to;
  }
  if (tail < n) {
    char name[512] = "?";
    for (int v = 0; v < n; v++)
      if (indeg[v]) {
        sta_node_name(g, v, name, sizeof name);
        break;
      }
    fprintf(stderr, "loomsta: combinational loop through %s\n", name);
  }
  free(indeg);
  return tail < n ? -1 : 0;
}

static void propagate(const sta_graph *g, sta_result *r, const int *order, const int *first, const int *by_from) {
  for (int s = 0; s < g->n_starts; s++) {
    const sta_start *st = &g->starts[s];
    if (st->cko > r->arrival[st->node]) {
      r->arrival[st->node] = st->cko;
      r->src[st->node] = s;
      r->pred[st->node] = -1;
    }
    if (r->depth[st->node] < 0) r->depth[st->node] = 0;
  }
  for (int k = 0; k < g->n_nodes; k++) {
    int u = order[k];
    if (r->arrival[u] < 0) continue;
    for (int i = first[u]; i < first[u + 1]; i++) {
      const sta_arc *a = &g->arcs[by_from[i]];
      float t = r->arrival[u] + a->delay;
      if (t > r->arrival[a->to]) {
        r->arrival[a->to] = t;
        r->pred[a->to] = by_from[i];
        r->src[a->to] = r->src[u];
      }
      int d = r->depth[u] + (a->level != STA_LV_NONE);
      if (d > r->depth[a->to]) r->depth[a->to] = d;
    }
  }
}

static void count_levels(const sta_graph *g, const sta_result *r, sta_path *p) {
  memset(p->levels, 0, sizeof p->levels);
  p->n_levels = 0;
  for (int a = r->pred[p->end->node]; a >= 0; a = r->pred[g->arcs[a].from])
    if (g->arcs[a].level != STA_LV_NONE) {
      p->levels[g->arcs[a].level]++;
      p->n_levels++;
    }
}

int sta_analyze(const sta_graph *g, sta_result *r) {
  int n = g->n_nodes;
  memset(r, 0, sizeof *r);
  r->g = g;
  int *first = calloc((size_t)n + 2, sizeof *first);
  int *by_from = malloc(((size_t)g->n_arcs + 1) * sizeof *by_from);
  int *order = malloc(((size_t)n + 1) * sizeof *order);
  for (int a = 0; a < g->n_arcs; a++) first[g->arcs[a].from + 1]++;
  for (int v = 0; v < n; v++) first[v + 1] += first[v];
  int *fill = malloc(((size_t)n + 1) * sizeof *fill);
  memcpy(fill, first, (size_t)n * sizeof *fill);
  for (int a = 0; a < g->n_arcs; a++) by_from[fill[g->arcs[a].from]++] = a;
  free(fill);
  int rc = topo_order(g, first, by_from, order);
  if (!rc) {
    r->arrival = malloc(((size_t)n + 1) * sizeof *r->arrival);
    r->pred = malloc(((size_t)n + 1) * sizeof *r->pred);
    r->src = malloc(((size_t)n + 1) * sizeof *r->src);
    r->depth = malloc(((size_t)n + 1) * sizeof *r->depth);
    for (int v = 0; v < n; v++) r->arrival[v] = -1, r->pred[v] = -1, r->src[v] = -1, r->depth[v] = -1;
    propagate(g, r, order, first, by_from);
    r->paths = calloc((size_t)g->n_ends + 1, sizeof *r->paths);
    r->deepest = -1;
    for (int e = 0; e < g->n_ends; e++) {
      const sta_end *end = &g->ends[e];
      if (r->arrival[end->node] < 0) continue;
      int s = r->src[end->node];
      if (g->cells[g->starts[s].cell].domain != g->cells[end->cell].domain) {
        r->cross_domain++;
        continue;
      }
      sta_path *p = &r->paths[r->n_paths++];
      p->end = end;
      p->start = s;
      p->delay = r->arrival[end->node] + end->net + end->setup;
      count_levels(g, r, p);
    }
    qsort(r->paths, (size_t)r->n_paths, sizeof *r->paths, cmp_delay);
    for (int i = 0; i < r->n_paths; i++)
      if (r->depth[r->paths[i].end->node] > r->deepest_levels || r->deepest < 0) {
        r->deepest_levels = r->depth[r->paths[i].end->node];
        r->deepest = i;
      }
  }
  free(first);
  free(by_from);
  free(order);
  return rc;
}

void sta_result_free(sta_result *r) {
  free(r->arrival);
  free(r->pred);
  free(r->src);
  free(r->depth);
  free(r->paths);
  memset(r, 0, sizeof *r);
}

int sta_path_nodes(const sta_result *r, const sta_path *p, int *out, int max) {
  const sta_graph *g = r->g;
  int n = 0;
  out[n++] = p->end->node;
  for (int a = r->pred[p->end->node]; a >= 0 && n < max; a = r->pred[g->arcs[a].from]) out[n++] = g->arcs[a].from;
  for (int i = 0; i < n / 2; i++) {
    int t = out[i];
    out[i] = out[n - 1 - i];
    out[n - 1 - i] = t;
  }
  return n;
}

void sta_start_name(const sta_graph *g, const sta_start *s, char *buf, size_t n) {
  sta_node_name(g, s->node, buf, n);
}

void sta_end_name(const sta_graph *g, const sta_end *e, char *buf, size_t n) {
  const sta_cell *c = &g->cells[e->cell];
  if (c->q_node >= 0 && !strcmp(e->pin, "D")) {
    sta_node_name(g, c->q_node, buf, n);
    return;
  }
  if (c->q_node >= 0) {
    char q[400];
    sta_node_name(g, c->q_node, q, sizeof q);
    snprintf(buf, n, "%s (%s)", q, e->pin);
    return;
  }
  snprintf(buf, n, "%s %s[%d]", c->name, e->pin, e->bit);
}
