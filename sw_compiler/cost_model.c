/*
 * cost_model.c - the roofline cost model of a Loom job.
 *
 * Three levels, from cheap to exact:
 *
 * 1. Instruction costs.  The GEMM core and the ALU start one micro-op per
 *    cycle (docs/isa.md), so a GEMM or ALU instruction costs its micro-op
 *    executions plus a fixed pipeline fill.  A DMA instruction costs a fixed
 *    latency (address to first beat), its bytes at the bus width, a small
 *    cost per burst (a 2-D transfer issues at least one burst per row;
 *    bursts stop at 4 KiB and at 256 beats) and one cycle per SRAM row of
 *    padding it writes.  The constants are below, in one place.
 *
 * 2. The chunk pipeline (struct cost_pipe), what the tilers use to rank
 *    thousands of candidate tilings: load of chunk k waits for compute of
 *    chunk k-2 (its buffer half), compute waits for its load and, at a
 *    tile's start, for the store of tile k-2's ACC half; store waits for
 *    compute.  The modules run concurrently, so a double-buffered job takes
 *    about max(load, compute, store) per chunk plus the first load and the
 *    last store.  Load and store share the DRAM bus: the estimate is never
 *    below all bytes at the bus width.
 *
 * 3. cost_simulate(): the same rules applied to the emitted instructions,
 *    with the real token flags, in-order fetch and bounded command and token
 *    queues.  It gives the report's estimate and the busy cycles per module,
 *    and it proves the program deadlock-free (fsim checks that again).
 *
 * cost_count() computes the exact counters of docs/isa.md ("Counters") for
 * a program: tests compare them with fsim's, so every utilization claim
 * rests on counted micro-ops, not on this model.
 */
#include <stdlib.h>
#include <string.h>

#include "sw_compiler/lower.h"

/* The constants follow the RTL as docs/fsim-timing.md measured it (tsim,
 * default DRAM model): an instruction's engine start to done. */
#define COST_GEMM_FILL 12    /* loom_gemm.v pipeline after the last issue, StDone */
#define COST_ALU_FILL 13     /* loom_uop_fe.v + loom_alu.v (Lat 8), StDone */
#define COST_SMALL 1         /* QCFG, NOP, FINISH, empty transfers */
#define COST_DMA_FIXED 9     /* bounds check 3, beat to SRAM row 2, tail 3, idle 1 */
#define COST_DMA_LATENCY 33  /* a burst's address to its first beat (DRAM 32, AR register 1) */
#define COST_DMA_SLOTS 8     /* bursts in flight: the DRAM's limit each way */
#define COST_BURST_BEATS 256 /* AXI4 burst length limit */
#define COST_BURST_BOUNDARY 4096

static uint64_t bus_bytes(const struct loom_hw_config *cfg) { return (uint64_t)cfg->bus_bits / 8; }

/* A transfer issues one burst per cycle, each burst holding one of the
 * DRAM's slots from its address to its last beat: short bursts are bound
 * by slots x latency (16-byte rows move at about a quarter of the bus),
 * long ones by the beats.  Padding goes through the SRAM write port with
 * the data rows, one row per cycle. */
uint64_t cost_dma(const struct loom_hw_config *cfg, uint64_t row_bytes, uint64_t rows,
                  uint64_t pad_rows) {
  uint64_t bw = bus_bytes(cfg);
  uint64_t max_burst = COST_BURST_BEATS * bw;
  if (max_burst > COST_BURST_BOUNDARY) max_burst = COST_BURST_BOUNDARY;
  if (rows == 0 || row_bytes == 0) return COST_SMALL + pad_rows;
  uint64_t per_row = (row_bytes + max_burst - 1) / max_burst;
  uint64_t bursts = rows * per_row;
  uint64_t beats = (row_bytes * rows + bw - 1) / bw;
  uint64_t slots = (uint64_t)cfg->max_outstanding_reads;
  if (slots == 0 || slots > COST_DMA_SLOTS) slots = COST_DMA_SLOTS;
  uint64_t per_burst = (beats + bursts - 1) / bursts;
  uint64_t slot_bound = bursts * (COST_DMA_LATENCY + per_burst) / slots;
  uint64_t move = beats > slot_bound ? beats : slot_bound;
  uint64_t sram = (row_bytes * rows) / (uint64_t)loom_hw_row_bytes(cfg, LOOM_BUF_INP, 0) + pad_rows;
  if (pad_rows && sram > move) move = sram;
  return COST_DMA_FIXED + COST_DMA_LATENCY + move;
}

uint64_t cost_gemm(uint64_t uops) { return uops + COST_GEMM_FILL; }

/* A depthwise micro-op reads its window rows (two per cycle from the two
 * INP banks when they alternate, loom_dw_read_cycles) and multiplies the
 * even and the odd lanes in two cycles, overlapped with the next
 * micro-op's reads (docs/rtl.md). */
uint64_t cost_dw_uop(uint64_t read_cycles) { return read_cycles > 2 ? read_cycles : 2; }

uint64_t cost_dw(uint64_t rows, uint64_t tw, uint64_t blocks, uint32_t kh, uint32_t kw, uint32_t step,
                 uint32_t row, uint32_t col) {
  if (rows == 0 || tw == 0 || blocks == 0) return COST_SMALL;
  uint64_t first = cost_dw_uop(loom_dw_read_cycles(0, kh, kw, kh * kw, row, col));
  uint64_t slide = step >= 1 && step <= 2 && step < kw ? cost_dw_uop(loom_dw_read_cycles(0, kh, step, kh * kw, row, col))
                                                       : first;
  return rows * blocks * (first + (tw - 1) * slide) + COST_GEMM_FILL;
}

/* LOAD INP from OUT: one row per cycle through the SRAM ports. */
uint64_t cost_onchip(uint64_t sram_rows) { return COST_DMA_FIXED + sram_rows; }
/* The ACC buffer has one read port: a vector operand is a second read. */
uint64_t cost_alu(uint64_t uops, int vector) { return uops * (vector ? 2 : 1) + COST_ALU_FILL; }

/* ---- level 2: the chunk pipeline ---- */

static uint64_t max2(uint64_t a, uint64_t b) { return a > b ? a : b; }

void cost_pipe_init(struct cost_pipe *p, uint64_t prologue_compute) {
  memset(p, 0, sizeof *p);
  p->comp_prev = prologue_compute;
}

/* The chunk pipeline's bus: the busy intervals of the last transfers,
 * sorted (older ones are past every transfer still to come).  A transfer
 * fills the free beats from its first possible beat on, as in the timed
 * walk below, so loads and stores share the bus; a store (`shared`) also
 * moves one beat in two cycles beside a load's beats, which then move
 * after them (bus_take_shared). */
static uint64_t pipe_bus(struct cost_pipe *p, const struct loom_hw_config *cfg, uint64_t start, uint64_t end,
                         uint64_t bytes, int shared) {
  if (!bytes) return end;
  uint64_t need = (bytes + bus_bytes(cfg) - 1) / bus_bytes(cfg), cur = start + COST_DMA_LATENCY + 3;
  uint64_t stolen_at = 0, stolen = 0;
  uint32_t i = 0;
  while (i < p->nbus && p->bus_hi[i] <= cur) i++;
  while (need) {
    if (i < p->nbus && p->bus_lo[i] <= cur) {
      uint64_t span = p->bus_hi[i] - cur, take = shared ? (span / 2 < need ? span / 2 : need) : 0;
      if (take) stolen_at = p->bus_hi[i], stolen += take;
      need -= take;
      cur = need ? p->bus_hi[i++] : cur + 2 * take;
      continue;
    }
    uint64_t gap_end = i < p->nbus ? p->bus_lo[i] : UINT64_MAX, take = gap_end - cur < need ? gap_end - cur : need;
    if (p->nbus == COST_PIPE_BUS) { /* forget the oldest interval */
      memmove(p->bus_lo, p->bus_lo + 1, (COST_PIPE_BUS - 1) * sizeof *p->bus_lo);
      memmove(p->bus_hi, p->bus_hi + 1, (COST_PIPE_BUS - 1) * sizeof *p->bus_hi);
      p->nbus--, i = i ? i - 1 : 0;
    }
    memmove(p->bus_lo + i + 1, p->bus_lo + i, (p->nbus - i) * sizeof *p->bus_lo);
    memmove(p->bus_hi + i + 1, p->bus_hi + i, (p->nbus - i) * sizeof *p->bus_hi);
    p->bus_lo[i] = cur, p->bus_hi[i] = cur + take, p->nbus++, i++;
    cur += take, need -= take;
  }
  if (stolen) pipe_bus(p, cfg, stolen_at - COST_DMA_LATENCY - 3, 0, stolen * bus_bytes(cfg), 0);
  return max2(end, cur + COST_DMA_FIXED - 3);
}

void cost_pipe_chunk(struct cost_pipe *p, const struct loom_hw_config *cfg, uint64_t load, uint64_t load_bytes,
                     uint64_t compute, int first, int last, uint64_t store, uint64_t store_bytes) {
  uint32_t kp = p->k & 1, op = p->o & 1;
  p->bus_bytes += load_bytes;
  /* comp_end[kp] still holds chunk k-2's end, store_end[op] tile o-2's. */
  uint64_t load_start = max2(p->load_prev, p->comp_end[kp]);
  uint64_t load_end = pipe_bus(p, cfg, load_start, load_start + load, load_bytes, 0);
  uint64_t start = max2(p->comp_prev, load_end);
  if (first) start = max2(start, p->store_end[op]);
  uint64_t comp_end = start + compute;
  p->load_prev = load_end;
  p->comp_prev = comp_end;
  p->comp_end[kp] = comp_end;
  p->k++;
  if (last) {
    uint64_t store_start = max2(p->store_prev, comp_end);
    p->bus_bytes += store_bytes;
    p->store_prev = pipe_bus(p, cfg, store_start, store_start + store, store_bytes, 1);
    p->store_end[op] = p->store_prev;
    p->o++;
  }
}

uint64_t cost_pipe_total(const struct loom_hw_config *cfg, const struct cost_pipe *p) {
  uint64_t end = max2(p->comp_prev, max2(p->store_prev, p->load_prev)) + COST_SMALL;
  return max2(end, p->bus_bytes / bus_bytes(cfg));
}

/* ---- exact counters ---- */

static uint64_t mem_bytes(const struct loom_hw_config *cfg, const struct loom_insn_mem *m) {
  return (uint64_t)m->x_size * m->y_size * loom_hw_row_bytes(cfg, (int)m->buffer, (int)m->src_int8);
}

static uint64_t loop_uops(uint32_t ub, uint32_t ue, uint32_t io, uint32_t ii) {
  return ue > ub ? (uint64_t)(ue - ub) * io * ii : 0;
}

static void count_load(const struct loom_hw_config *cfg, const struct loom_insn_mem *m, uint64_t *c) {
  static const int counter[LOOM_BUF_COUNT] = {
      [LOOM_BUF_UOP] = LOOM_CNT_BYTES_RD_UOP, [LOOM_BUF_WGT] = LOOM_CNT_BYTES_RD_WGT,
      [LOOM_BUF_INP] = LOOM_CNT_BYTES_RD_INP, [LOOM_BUF_ACC] = LOOM_CNT_BYTES_RD_ACC,
      [LOOM_BUF_OUT] = -1, [LOOM_BUF_PAR] = LOOM_CNT_BYTES_RD_ACC, [LOOM_BUF_LUT] = LOOM_CNT_BYTES_RD_ACC};
  LOOM_ASSERT(m->buffer < LOOM_BUF_COUNT && m->buffer != LOOM_BUF_OUT);
  if (!m->src_out) c[counter[m->buffer]] += mem_bytes(cfg, m); /* on-chip: no DRAM byte */
}

void cost_count(const struct loom_hw_config *cfg, const struct loom_insn *insns, uint32_t n,
                uint64_t c[LOOM_CNT_COUNT]) {
  static const int insn_counter[LOOM_Q_COUNT] = {LOOM_CNT_INSN_LOAD, LOOM_CNT_INSN_COMPUTE,
                                                 LOOM_CNT_INSN_STORE};
  memset(c, 0, sizeof(uint64_t) * LOOM_CNT_COUNT);
  for (uint32_t i = 0; i < n; i++) {
    const struct loom_insn *in = &insns[i];
    c[LOOM_CNT_BYTES_RD_INSN] += LOOM_INSN_BYTES;
    c[insn_counter[loom_insn_queue(in)]]++;
    switch (in->opcode) {
    case LOOM_OP_LOAD: count_load(cfg, &in->mem, c); break;
    case LOOM_OP_STORE: c[LOOM_CNT_BYTES_WR_OUT] += mem_bytes(cfg, &in->mem); break;
    case LOOM_OP_GEMM:
      if (!in->gemm.reset)
        c[LOOM_CNT_GEMM_OPS] += loop_uops(in->gemm.uop_begin, in->gemm.uop_end, in->gemm.iter_out,
                                          in->gemm.iter_in);
      break;
    case LOOM_OP_ALU:
      c[LOOM_CNT_ALU_OPS] +=
          loop_uops(in->alu.uop_begin, in->alu.uop_end, in->alu.iter_out, in->alu.iter_in);
      break;
    default: break;
    }
    if (in->opcode == LOOM_OP_FINISH) break;
  }
}

/* ---- level 3: the instruction-level walk ---- */

/* Cycles of a depthwise GEMM: each micro-op's window reads, the window
 * sliding when x moves left by 1 or 2 columns (docs/isa.md, "GEMM";
 * loom_dw_gemm_cycles, which fsim's timing model shares). */
static uint64_t dw_cycles(const struct loom_insn_gemm *g, const struct loom_insn_gcfg *gc,
                          const struct loom_uop *uops, uint32_t n_uops, uint64_t bi) {
  if (!uops || g->uop_end > n_uops) return cost_gemm(2 * loop_uops(g->uop_begin, g->uop_end, g->iter_out, g->iter_in));
  uint64_t cyc = loom_dw_gemm_cycles(g, gc, uops, (uint32_t)bi);
  return cyc ? cyc + COST_GEMM_FILL : COST_SMALL;
}

static uint64_t insn_cycles(const struct loom_hw_config *cfg, const struct loom_insn *in,
                            const struct loom_insn_gcfg *gc, const struct loom_uop *uops, uint32_t n_uops) {
  const struct loom_insn_mem *m = &in->mem;
  switch (in->opcode) {
  case LOOM_OP_LOAD: {
    uint64_t w = (uint64_t)m->x_pad_left + m->x_size + m->x_pad_right;
    uint64_t h = (uint64_t)m->y_pad_top + m->y_size + m->y_pad_bottom;
    if (m->x_size == 0 || m->y_size == 0) return COST_SMALL;
    if (m->src_out) return cost_onchip(w * h);
    uint64_t row = (uint64_t)m->x_size * loom_hw_row_bytes(cfg, (int)m->buffer, (int)m->src_int8);
    return cost_dma(cfg, row, m->y_size, w * h - (uint64_t)m->x_size * m->y_size);
  }
  case LOOM_OP_STORE:
    if (m->x_size == 0 || m->y_size == 0) return COST_SMALL;
    return cost_dma(cfg, (uint64_t)m->x_size * loom_hw_row_bytes(cfg, LOOM_BUF_OUT, 0), m->y_size, 0);
  case LOOM_OP_GEMM:
    if (in->gemm.dw) return dw_cycles(&in->gemm, gc, uops, n_uops, (uint64_t)cfg->block_in);
    return cost_gemm(loop_uops(in->gemm.uop_begin, in->gemm.uop_end, in->gemm.iter_out,
                               in->gemm.iter_in));
  case LOOM_OP_ALU:
    return cost_alu(loop_uops(in->alu.uop_begin, in->alu.uop_end, in->alu.iter_out, in->alu.iter_in),
                    !in->alu.use_imm && in->alu.alu_op != LOOM_ALU_EPI); /* EPI reads one row */
  default: return COST_SMALL;
  }
}

/* The DRAM bus of the walk: the busy intervals of the data beats moved so
 * far, sorted and disjoint.  A transfer takes the free cycles from its
 * first possible beat on; the walk starts instructions in time order, so
 * this approximates loads and stores sharing the bus the way the DRAM
 * model alternates them. */
struct bus {
  uint64_t *lo, *hi;
  uint32_t n, cap;
};

static void bus_add(struct bus *b, uint32_t at, uint64_t lo, uint64_t hi) {
  if (b->n == b->cap) {
    b->cap = b->cap ? 2 * b->cap : 256;
    b->lo = realloc(b->lo, b->cap * sizeof *b->lo);
    b->hi = realloc(b->hi, b->cap * sizeof *b->hi);
    LOOM_ASSERT(b->lo && b->hi);
  }
  memmove(b->lo + at + 1, b->lo + at, (b->n - at) * sizeof *b->lo);
  memmove(b->hi + at + 1, b->hi + at, (b->n - at) * sizeof *b->hi);
  b->lo[at] = lo, b->hi[at] = hi, b->n++;
}

/* `need` beat cycles from cycle t on; returns the cycle after the last. */
static uint64_t bus_take(struct bus *b, uint64_t t, uint64_t need) {
  uint32_t i = 0;
  while (i < b->n && b->hi[i] <= t) i++;
  uint64_t cur = t;
  while (need) {
    if (i < b->n && b->lo[i] <= cur) { /* busy: skip to its end */
      cur = b->hi[i++];
      continue;
    }
    uint64_t gap_end = i < b->n ? b->lo[i] : UINT64_MAX, take = gap_end - cur < need ? gap_end - cur : need;
    bus_add(b, i, cur, cur + take);
    i++;
    cur += take, need -= take;
  }
  return cur;
}

/* A store's beats beside the loads already on the bus: the DRAM model
 * alternates reads and writes beat by beat (docs/fsim-timing.md), so where
 * a load's beats hold the bus the store moves one beat in two cycles, and
 * the load loses as many beats, which move after its interval.  Returns
 * the cycle after the store's last beat. */
static uint64_t bus_take_shared(struct bus *b, uint64_t t, uint64_t need) {
  uint64_t stolen_at[64], stolen[64];
  uint32_t ns = 0, i = 0;
  while (i < b->n && b->hi[i] <= t) i++;
  uint64_t cur = t;
  while (need) {
    if (i < b->n && b->lo[i] <= cur) { /* a load's beats: one in two */
      uint64_t span = b->hi[i] - cur, take = span / 2 < need ? span / 2 : need;
      if (take && ns < 64) stolen_at[ns] = b->hi[i], stolen[ns++] = take;
      need -= take;
      cur = need ? b->hi[i++] : cur + 2 * take;
      continue;
    }
    uint64_t gap_end = i < b->n ? b->lo[i] : UINT64_MAX, take = gap_end - cur < need ? gap_end - cur : need;
    bus_add(b, i, cur, cur + take);
    i++;
    cur += take, need -= take;
  }
  for (uint32_t k = 0; k < ns; k++) bus_take(b, stolen_at[k], stolen[k]);
  return cur;
}

enum { TOK_L2C, TOK_C2L, TOK_C2S, TOK_S2C, TOK_COUNT };

/* Token queue popped by pop_prev (p = 0) / pop_next (1), or pushed by
 * push_prev / push_next, for a module; -1 when the module has none. */
static int tok_queue(int module, int next, int push) {
  static const int pops[LOOM_Q_COUNT][2] = {{-1, TOK_C2L}, {TOK_L2C, TOK_S2C}, {TOK_C2S, -1}};
  static const int pushes[LOOM_Q_COUNT][2] = {{-1, TOK_L2C}, {TOK_C2L, TOK_C2S}, {TOK_S2C, -1}};
  return push ? pushes[module][next] : pops[module][next];
}

struct sim {
  const struct loom_hw_config *cfg;
  const struct loom_insn *insns;
  uint32_t n;
  const struct loom_uop *uops;
  uint32_t n_uops;
  struct loom_insn_gcfg gcfg;        /* GCFG as the compute module has executed them */
  int *queue;
  uint32_t *pos;                     /* position of insn i in its queue */
  uint32_t *order[LOOM_Q_COUNT];     /* insn indices per queue */
  uint32_t count[LOOM_Q_COUNT], next[LOOM_Q_COUNT];
  uint64_t *dispatch, *start, *end;
  uint8_t *started;
  uint64_t free_at[LOOM_Q_COUNT], busy[LOOM_Q_COUNT];
  uint64_t *push_t[TOK_COUNT], *pop_t[TOK_COUNT];
  uint32_t pushes[TOK_COUNT], pops[TOK_COUNT];
  uint32_t fetched;
  uint64_t fetch_t;
  uint32_t finish;                   /* index of FINISH, n if none */
  struct bus bus;
};

static int sim_alloc(struct sim *s) {
  s->queue = calloc(s->n + 1, sizeof *s->queue);
  s->pos = calloc(s->n + 1, sizeof *s->pos);
  s->dispatch = calloc(s->n + 1, sizeof *s->dispatch);
  s->start = calloc(s->n + 1, sizeof *s->start);
  s->end = calloc(s->n + 1, sizeof *s->end);
  s->started = calloc(s->n + 1, 1);
  int ok = s->queue && s->pos && s->dispatch && s->start && s->end && s->started;
  for (int q = 0; q < LOOM_Q_COUNT; q++) ok = ok && (s->order[q] = calloc(s->n + 1, sizeof(uint32_t)));
  for (int t = 0; t < TOK_COUNT; t++) {
    ok = ok && (s->push_t[t] = calloc(s->n + 1, sizeof(uint64_t)));
    ok = ok && (s->pop_t[t] = calloc(s->n + 1, sizeof(uint64_t)));
  }
  return ok;
}

static void sim_free(struct sim *s) {
  free(s->queue), free(s->pos), free(s->dispatch), free(s->start), free(s->end), free(s->started);
  for (int q = 0; q < LOOM_Q_COUNT; q++) free(s->order[q]);
  for (int t = 0; t < TOK_COUNT; t++) free(s->push_t[t]), free(s->pop_t[t]);
  free(s->bus.lo), free(s->bus.hi);
}

/* The end of a DRAM transfer that starts at t: its fixed cost, but no
 * earlier than its beats allow on the shared bus. */
static uint64_t dma_end(struct sim *s, const struct loom_insn *in, uint64_t t, uint64_t e) {
  const struct loom_insn_mem *m = &in->mem;
  if ((in->opcode != LOOM_OP_LOAD && in->opcode != LOOM_OP_STORE) || m->src_out || !m->x_size || !m->y_size)
    return e;
  uint32_t buf = in->opcode == LOOM_OP_STORE ? LOOM_BUF_OUT : m->buffer;
  uint64_t bytes = (uint64_t)m->x_size * m->y_size * loom_hw_row_bytes(s->cfg, (int)buf, (int)m->src_int8);
  uint64_t beats = (bytes + bus_bytes(s->cfg) - 1) / bus_bytes(s->cfg);
  uint64_t data_end = in->opcode == LOOM_OP_STORE ? bus_take_shared(&s->bus, t + COST_DMA_LATENCY + 3, beats)
                                                 : bus_take(&s->bus, t + COST_DMA_LATENCY + 3, beats);
  return max2(e, data_end + COST_DMA_FIXED - 3);
}

/* Fetch dispatches in order; an instruction enters its queue once the one
 * cmd_queue_depth places ahead of it has started executing. */
static int sim_fetch(struct sim *s) {
  int progress = 0;
  while (s->fetched < s->n && s->fetched <= s->finish) {
    uint32_t i = s->fetched;
    int q = s->queue[i];
    uint64_t t = s->fetch_t + 1;
    uint32_t depth = (uint32_t)s->cfg->cmd_queue_depth;
    if (s->pos[i] >= depth) {
      uint32_t ahead = s->order[q][s->pos[i] - depth];
      if (!s->started[ahead]) break;
      t = max2(t, s->start[ahead]);
    }
    s->dispatch[i] = s->fetch_t = t;
    s->fetched++;
    progress = 1;
  }
  return progress;
}

static int flag(const struct loom_insn *in, int next, int push) {
  return push ? (next ? in->push_next : in->push_prev) : (next ? in->pop_next : in->pop_prev);
}

/* FINISH runs once load and store have executed everything before it. */
static int finish_ready(const struct sim *s, uint64_t *t) {
  for (int q = 0; q < LOOM_Q_COUNT; q++) {
    if (q == LOOM_Q_COMPUTE) continue;
    for (uint32_t k = s->next[q]; k < s->count[q]; k++)
      if (s->order[q][k] < s->finish) return 0;
    *t = max2(*t, s->free_at[q]);
  }
  return 1;
}

/* Module q's next instruction, if it is dispatched and its tokens (and
 * room for the tokens it pushes) are there: 1 with its start time in *at,
 * and executed when `commit`. */
static int sim_step(struct sim *s, int q, int commit, uint64_t *at) {
  if (s->next[q] >= s->count[q]) return 0;
  uint32_t i = s->order[q][s->next[q]];
  if (i >= s->fetched) return 0;
  const struct loom_insn *in = &s->insns[i];
  uint64_t t = max2(s->free_at[q], s->dispatch[i]);
  for (int nx = 0; nx < 2; nx++) {
    if (!flag(in, nx, 0)) continue;
    int tq = tok_queue(q, nx, 0);
    if (s->pops[tq] >= s->pushes[tq]) return 0;
    t = max2(t, s->push_t[tq][s->pops[tq]]);
  }
  if (in->opcode == LOOM_OP_FINISH && !finish_ready(s, &t)) return 0;
  uint32_t tdepth = (uint32_t)s->cfg->token_queue_depth;
  for (int nx = 0; nx < 2; nx++) { /* a full token queue: wait for a pop */
    int tq = flag(in, nx, 1) ? tok_queue(q, nx, 1) : -1;
    if (tq >= 0 && s->pushes[tq] >= tdepth && s->pops[tq] <= s->pushes[tq] - tdepth) return 0;
  }
  *at = t;
  if (!commit) return 1;
  if (in->opcode == LOOM_OP_GCFG) s->gcfg = in->gcfg;
  uint64_t e = dma_end(s, in, t, t + insn_cycles(s->cfg, in, &s->gcfg, s->uops, s->n_uops)), free_at = e;
  for (int nx = 0; nx < 2; nx++) {
    if (!flag(in, nx, 1)) continue;
    int tq = tok_queue(q, nx, 1);
    uint32_t k = s->pushes[tq];
    if (k >= tdepth) free_at = max2(free_at, s->pop_t[tq][k - tdepth]);
  }
  for (int nx = 0; nx < 2; nx++) {
    if (!flag(in, nx, 0)) continue;
    int tq = tok_queue(q, nx, 0);
    s->pop_t[tq][s->pops[tq]++] = t;
  }
  for (int nx = 0; nx < 2; nx++) {
    if (!flag(in, nx, 1)) continue;
    int tq = tok_queue(q, nx, 1);
    s->push_t[tq][s->pushes[tq]++] = free_at;
  }
  s->start[i] = t;
  s->end[i] = e;
  s->started[i] = 1;
  s->busy[q] += e - t;
  s->free_at[q] = free_at;
  s->next[q]++;
  return 1;
}

static void sim_setup(struct sim *s) {
  s->finish = s->n;
  for (uint32_t i = 0; i < s->n; i++) {
    int q = loom_insn_queue(&s->insns[i]);
    s->queue[i] = q;
    s->pos[i] = s->count[q];
    s->order[q][s->count[q]++] = i;
    if (s->insns[i].opcode == LOOM_OP_FINISH && s->finish == s->n) s->finish = i;
  }
}

void cost_simulate(const struct loom_hw_config *cfg, const struct loom_insn *insns, uint32_t n,
                   const struct loom_uop *uops, uint32_t n_uops, struct cost_sim *out) {
  struct sim s;
  memset(&s, 0, sizeof s);
  memset(out, 0, sizeof *out);
  s.cfg = cfg, s.insns = insns, s.n = n, s.uops = uops, s.n_uops = n_uops;
  LOOM_ASSERT(sim_alloc(&s));
  sim_setup(&s);
  /* Step the module whose next instruction starts first, so that the
   * transfers take the bus in time order. */
  for (;;) {
    sim_fetch(&s);
    int best = -1;
    uint64_t bt = UINT64_MAX, t;
    for (int q = 0; q < LOOM_Q_COUNT; q++)
      if (sim_step(&s, q, 0, &t) && t < bt) best = q, bt = t;
    if (best < 0) break;
    sim_step(&s, best, 1, &t);
  }
  uint32_t limit = s.finish < n ? s.finish + 1 : n;
  for (uint32_t i = 0; i < limit; i++) {
    if (!s.started[i]) {
      out->deadlock = 1;
      out->stuck_insn = i;
      break;
    }
    out->cycles = max2(out->cycles, s.end[i]);
  }
  for (int t = 0; t < TOK_COUNT && !out->deadlock; t++)
    if (s.pushes[t] != s.pops[t]) out->deadlock = 1, out->stuck_insn = limit; /* unbalanced */
  uint64_t c[LOOM_CNT_COUNT];
  cost_count(cfg, insns, n, c);
  for (int k = LOOM_CNT_BYTES_RD_INSN; k <= LOOM_CNT_BYTES_WR_OUT; k++) out->bus_bytes += c[k];
  out->cycles = max2(out->cycles, out->bus_bytes / bus_bytes(cfg));
  memcpy(out->busy, s.busy, sizeof out->busy);
  sim_free(&s);
}

/* ---- the roofline ---- */

void cost_roofline(const struct loom_hw_config *cfg, struct lower_report *r) {
  uint64_t peak = loom_hw_peak_macs(cfg), bw = bus_bytes(cfg);
  uint64_t compute = (r->macs + peak - 1) / peak;
  uint64_t memory = (r->min_bytes + bw - 1) / bw;
  r->roofline_cycles = max2(compute, memory);
  r->memory_bound = memory > compute;
  r->intensity = r->min_bytes ? (double)r->macs / (double)r->min_bytes : 0.0;
  double mem_rate = (double)bw * r->intensity;
  r->roofline_macs_per_cycle = mem_rate < (double)peak ? mem_rate : (double)peak;
  r->utilization = r->est_cycles ? (double)r->macs / ((double)r->est_cycles * (double)peak) : 0.0;
  r->of_roofline = r->est_cycles ? (double)r->roofline_cycles / (double)r->est_cycles : 0.0;
}
