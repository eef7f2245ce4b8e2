/*
 * fsim.c - the functional simulator's lifetime: SRAM, queues, fsim_run().
 *
 * A struct fsim owns the on-chip state that outlives jobs (the SRAM
 * buffers, as the hardware keeps them between jobs) and the storage of the
 * command queues, sized from the configuration once.  fsim_run() resets the
 * per-job state (queues empty, no tokens, QCFG and GCFG registers zero),
 * hands the job to the scheduler and returns its error code.
 *
 * SRAM contents are undefined at power-up on the hardware; fsim starts them
 * at zero so its runs are reproducible.
 */
#include <stdlib.h>
#include <string.h>

#include "sim/fsim/fsim_internal.h"

static void *alloc_rows(uint32_t rows, size_t row_bytes) {
  return calloc(rows ? rows : 1, row_bytes ? row_bytes : 1);
}

static int alloc_sram(struct fsim *sim) {
  const struct loom_hw_config *c = sim->cfg;
  sim->inp_elems = (uint32_t)(c->batch * c->block_in);
  sim->wgt_elems = (uint32_t)(c->block_out * c->block_in);
  sim->acc_elems = (uint32_t)(c->batch * c->block_out);
  sim->uop_rows = loom_hw_buffer_rows(c, LOOM_BUF_UOP);
  sim->wgt_rows = loom_hw_buffer_rows(c, LOOM_BUF_WGT);
  sim->inp_rows = loom_hw_buffer_rows(c, LOOM_BUF_INP);
  sim->acc_rows = loom_hw_buffer_rows(c, LOOM_BUF_ACC);
  sim->uop = alloc_rows(sim->uop_rows, LOOM_UOP_BYTES);
  sim->wgt = alloc_rows(sim->wgt_rows, sim->wgt_elems);
  sim->inp = alloc_rows(sim->inp_rows, sim->inp_elems);
  sim->acc = alloc_rows(sim->acc_rows, sim->acc_elems * sizeof(int32_t));
  sim->out = alloc_rows(sim->acc_rows, sim->acc_elems);
  sim->uop_scratch = alloc_rows(sim->uop_rows, sizeof(struct loom_uop));
  sim->alu_operand = alloc_rows(1, sim->acc_elems * sizeof(int32_t));
  sim->out_scratch = alloc_rows(1, sim->acc_elems);
  sim->par = alloc_rows(LOOM_PAR_ROWS, 2 * sim->acc_elems * sizeof(int32_t));
  return sim->uop && sim->wgt && sim->inp && sim->acc && sim->out && sim->uop_scratch &&
         sim->alu_operand && sim->out_scratch && sim->par;
}

static int alloc_queues(struct fsim *sim) {
  uint32_t depth = (uint32_t)sim->cfg->cmd_queue_depth;
  for (int m = 0; m < LOOM_Q_COUNT; m++) {
    sim->st.mod[m].q.cap = depth;
    sim->st.mod[m].q.slots = calloc(depth, sizeof(struct fsim_slot));
    if (!sim->st.mod[m].q.slots) return 0;
  }
  return 1;
}

struct fsim *fsim_create(const struct loom_hw_config *cfg) {
  LOOM_ASSERT(cfg && cfg->cmd_queue_depth > 0 && cfg->token_queue_depth > 0);
  LOOM_ASSERT(cfg->batch > 0 && cfg->block_in > 0 && cfg->block_out > 0);
  LOOM_ASSERT(cfg->out_rows == cfg->acc_rows && "OUT mirrors ACC row for row");
  struct fsim *sim = calloc(1, sizeof *sim);
  if (!sim) return NULL;
  sim->cfg = cfg;
  if (!alloc_sram(sim) || !alloc_queues(sim)) {
    fsim_destroy(sim);
    return NULL;
  }
  return sim;
}

void fsim_destroy(struct fsim *sim) {
  if (!sim) return;
  for (int m = 0; m < LOOM_Q_COUNT; m++) free(sim->st.mod[m].q.slots);
  free(sim->uop);
  free(sim->wgt);
  free(sim->inp);
  free(sim->acc);
  free(sim->out);
  free(sim->uop_scratch);
  free(sim->alu_operand);
  free(sim->par);
  free(sim->out_scratch);
  fsim_timing_destroy(sim->timing);
  free(sim);
}

/* Empties every queue and register that a job starts without. */
static void reset_state(struct fsim *sim, const struct fsim_job *job, struct fsim_result *res) {
  struct fsim_run_state *st = &sim->st;
  st->job = job;
  st->res = res;
  memset(&st->fetch, 0, sizeof st->fetch);
  for (int m = 0; m < LOOM_Q_COUNT; m++) {
    st->mod[m].q.head = st->mod[m].q.count = 0;
    st->mod[m].phase = FSIM_PHASE_IDLE;
  }
  memset(st->tokens, 0, sizeof st->tokens);
  memset(&st->qcfg, 0, sizeof st->qcfg);
  memset(&st->gcfg, 0, sizeof st->gcfg);
  st->finished = 0;
  st->work = 0;
  st->next_progress = FSIM_PROGRESS_WORK;
}

uint32_t fsim_run(struct fsim *sim, const struct fsim_job *job, struct fsim_result *res) {
  LOOM_ASSERT(sim && job && res);
  LOOM_ASSERT(job->insns || job->insn_count == 0);
  memset(res, 0, sizeof *res);
  reset_state(sim, job, res);
  if (sim->timing) fsim_timing_begin(sim->timing, job);
  fsim_schedule(sim);
  if (sim->timing)
    fsim_timing_run(sim->timing, job, res->error == LOOM_ERR_NONE ? res->counters : NULL);
  sim->st.job = NULL;
  sim->st.res = NULL;
  return res->error;
}

int fsim_set_timing(struct fsim *sim, int on) {
  if (!on) {
    fsim_timing_destroy(sim->timing);
    sim->timing = NULL;
    return 0;
  }
  if (!sim->timing) sim->timing = fsim_timing_create(sim->cfg);
  return sim->timing ? 0 : -1;
}

void fsim_set_reverse_schedule(struct fsim *sim, int on) { sim->reverse_schedule = on != 0; }

int fsim_set_dram_bw(struct fsim *sim, uint32_t bytes_per_cycle) {
  if (!sim->timing || !bytes_per_cycle || (bytes_per_cycle & (bytes_per_cycle - 1))) return -1;
  fsim_timing_set_dram_bw(sim->timing, bytes_per_cycle);
  return 0;
}

void fsim_set_trace(struct fsim *sim, int on) {
  if (sim->timing) fsim_timing_set_trace(sim->timing, on);
}

const struct loom_trace_event *fsim_trace(const struct fsim *sim, size_t *count) {
  *count = 0;
  return sim->timing ? fsim_timing_trace(sim->timing, count) : NULL;
}

void *fsim_sram(struct fsim *sim, int buffer, size_t *bytes) {
  size_t n;
  void *p;
  switch (buffer) {
  case LOOM_BUF_UOP: p = sim->uop, n = (size_t)sim->uop_rows * LOOM_UOP_BYTES; break;
  case LOOM_BUF_WGT: p = sim->wgt, n = (size_t)sim->wgt_rows * sim->wgt_elems; break;
  case LOOM_BUF_INP: p = sim->inp, n = (size_t)sim->inp_rows * sim->inp_elems; break;
  case LOOM_BUF_ACC:
    p = sim->acc, n = (size_t)sim->acc_rows * sim->acc_elems * sizeof(int32_t);
    break;
  case LOOM_BUF_OUT: p = sim->out, n = (size_t)sim->acc_rows * sim->acc_elems; break;
  case LOOM_BUF_PAR: p = sim->par, n = (size_t)LOOM_PAR_ROWS * 2 * sim->acc_elems * sizeof(int32_t); break;
  case LOOM_BUF_LUT: p = sim->lut, n = sizeof sim->lut; break;
  default: return NULL;
  }
  if (bytes) *bytes = n;
  return p;
}

void fsim_decode_uops(struct fsim *sim, uint32_t begin, uint32_t end) {
  if (end > sim->uop_rows) end = sim->uop_rows;
  for (uint32_t u = begin; u < end; u++) {
    const uint8_t *p = sim->uop + (size_t)u * LOOM_UOP_BYTES;
    uint32_t w = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    struct loom_uop *d = &sim->uop_scratch[u];
    d->acc = (w >> LOOM_UOP_ACC_LSB) & ((1u << LOOM_UOP_ACC_WIDTH) - 1);
    d->inp = (w >> LOOM_UOP_INP_LSB) & ((1u << LOOM_UOP_INP_WIDTH) - 1);
    d->wgt = (w >> LOOM_UOP_WGT_LSB) & ((1u << LOOM_UOP_WGT_WIDTH) - 1);
  }
}
