/*
 * fsim_internal.h - the map of fsim: the state its units share.
 *
 * fsim is a Kahn process network with bounded FIFOs, exactly as docs/isa.md
 * describes the machine: fetch and three modules (load, compute, store)
 * connected by three command queues and four one-bit token queues.  Every
 * process blocks on reads of empty queues and writes of full ones and never
 * polls, so any fair schedule computes the same result and deadlocks in the
 * same place; fsim_sched.c picks the cheapest one (run each process as far as
 * it can, round-robin).
 *
 * Units:
 *   fsim.c         creation, SRAM, fsim_run()
 *   fsim_sched.c   fetch, the queues, the module state machines, FINISH,
 *                  NOFINISH and DEADLOCK
 *   fsim_report.c  instruction labels and error messages
 *   fsim_mem.c     LOAD and STORE with their bounds checks
 *   fsim_gemm.c    GEMM (the hot loop; depthwise micro-ops, first/last)
 *   fsim_alu.c     ALU, QCFG, GCFG and the epilogue E() of GEMM `last` and ALU EPI
 *   fsim_timing.c  the optional timing model: cycle counters and timelines
 *                  estimated after the functional run
 *
 * Executors return 0 or the error code they raised with fsim_fail(); the
 * first error stops the job.
 */
#ifndef LOOM_FSIM_INTERNAL_H
#define LOOM_FSIM_INTERNAL_H

#include <stdint.h>

#include "driver/core/core.h"
#include "loom/hwconfig.h"
#include "loom/isa.h"
#include "sim/fsim/fsim.h"

/* The four dependency-token queues, named for the direction tokens flow. */
enum fsim_tokq {
  FSIM_TOK_L2C, /* load -> compute: load push_next, compute pop_prev */
  FSIM_TOK_C2L, /* compute -> load: compute push_prev, load pop_next */
  FSIM_TOK_C2S, /* compute -> store: compute push_next, store pop_prev */
  FSIM_TOK_S2C, /* store -> compute: store push_prev, compute pop_next */
  FSIM_TOK_COUNT
};

/* Where a module is in the life of its current instruction (docs/isa.md,
 * "For every instruction a module ..."): pops prev then next, executes,
 * pushes prev then next. */
enum fsim_phase {
  FSIM_PHASE_IDLE,      /* no instruction: takes the next from its command queue */
  FSIM_PHASE_POP_PREV,  /* waits for a token from the previous module */
  FSIM_PHASE_POP_NEXT,  /* waits for a token from the next module */
  FSIM_PHASE_EXEC,      /* executes (only FINISH can wait here: for the drain) */
  FSIM_PHASE_PUSH_PREV, /* waits for room to send a token to the previous module */
  FSIM_PHASE_PUSH_NEXT, /* waits for room to send a token to the next module */
  FSIM_PHASE_COUNT
};

/* A decoded instruction and its stream index. */
struct fsim_slot {
  struct loom_insn insn;
  uint32_t index;
};

/* A bounded command queue: a ring of `cap` slots. */
struct fsim_cmdq {
  struct fsim_slot *slots;
  uint32_t head, count, cap;
};

struct fsim_module {
  struct fsim_cmdq q;    /* waiting instructions, not counting `cur` */
  struct fsim_slot cur;  /* valid unless phase == IDLE */
  enum fsim_phase phase;
};

struct fsim_fetch {
  uint32_t next;          /* stream index of the next instruction to read */
  int holding;            /* `held` is decoded and waits for room in its queue */
  int done;               /* read the whole stream, or dispatched FINISH */
  struct fsim_slot held;
};

/* Everything that lives for one job. */
struct fsim_run_state {
  const struct fsim_job *job;
  struct fsim_result *res;
  struct fsim_fetch fetch;
  struct fsim_module mod[LOOM_Q_COUNT];
  uint32_t tokens[FSIM_TOK_COUNT];
  struct loom_insn_qcfg qcfg; /* the requantization and epilogue registers */
  struct loom_insn_gcfg gcfg; /* the GEMM registers: period, depthwise window */
  int finished;               /* FINISH completed the job */
  uint64_t work;              /* work done so far, see fsim_job.work_budget */
  uint64_t next_progress;     /* work at which fsim_job.progress is called next */
};

struct fsim {
  const struct loom_hw_config *cfg;
  /* SRAM, row-major; element counts per row are below. */
  uint8_t *uop;  /* uop_rows x 4 bytes, little-endian micro-ops */
  int8_t *wgt;   /* wgt_rows x [block_out][block_in] */
  int8_t *inp;   /* inp_rows x [batch][block_in] */
  int32_t *acc;  /* acc_rows x [batch][block_out] */
  int8_t *out;   /* acc_rows x [batch][block_out], mirrors acc through sat8 */
  int32_t *par;  /* LOOM_PAR_ROWS x {bias[batch][block_out], multiplier[batch][block_out]} */
  uint8_t lut[LOOM_LUT_ENTRIES]; /* the activation table: entry i for the int8 pattern i */
  uint32_t inp_elems, wgt_elems, acc_elems; /* elements per row */
  uint32_t uop_rows, wgt_rows, inp_rows, acc_rows;
  struct loom_uop *uop_scratch; /* uop_rows decoded micro-ops (GEMM, ALU) */
  int32_t *alu_operand;         /* acc_elems: the ALU's b operand of one micro-op, the epilogue's result */
  int8_t *out_scratch;          /* acc_elems: the OUT row a `last` GEMM's kernel writes and nobody reads */
  struct fsim_run_state st;
  struct fsim_timing *timing; /* NULL: timing off */
  int reverse_schedule;       /* fsim_set_reverse_schedule() */
};

/* ---- fsim_sched.c ---- */

/* Runs the job in sim->st to FINISH or to the first error. */
void fsim_schedule(struct fsim *sim);

/* Charges `work` units (DRAM rows, micro-ops) of instruction `s` to the job's
 * work budget; 0, with TIMEOUT recorded, once the budget is exceeded. */
int fsim_charge(struct fsim *sim, const struct fsim_slot *s, uint64_t work);

/* ---- fsim_report.c ---- */

/* "LOAD INP", "ALU REQUANT", "NOP STORE", "GEMM", ... */
void fsim_insn_label(const struct loom_insn *in, char *buf, size_t n);

/* Records the job's first error at instruction `s` with the message
 * "insn N (LABEL): <fmt>"; returns `code`. */
uint32_t fsim_fail(struct fsim *sim, uint32_t code, const struct fsim_slot *s, const char *fmt,
                   ...) __attribute__((format(printf, 4, 5)));

/* As fsim_fail, for errors that belong to no single instruction. */
void fsim_fail_at(struct fsim *sim, uint32_t code, uint32_t index, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ---- fsim_mem.c ---- */

uint32_t fsim_load(struct fsim *sim, const struct fsim_slot *s);
uint32_t fsim_store(struct fsim *sim, const struct fsim_slot *s);

/* ---- fsim_gemm.c ---- */

uint32_t fsim_gemm(struct fsim *sim, const struct fsim_slot *s);

/* ---- fsim_alu.c ---- */

uint32_t fsim_alu(struct fsim *sim, const struct fsim_slot *s);
void fsim_qcfg(struct fsim *sim, const struct fsim_slot *s);
void fsim_gcfg(struct fsim *sim, const struct fsim_slot *s);
/* The epilogue E() of docs/isa.md on one ACC row (int32 lanes), with the
 * bias and multiplier of PAR row p (or QCFG's when par_src): y[lane] =
 * act ? LUT[REQUANT(v + bias)] : REQUANT(v + bias).  p must be valid when
 * !par_src (fsim_par_row_ok). */
void fsim_epilogue(const struct fsim *sim, const int32_t *v, uint32_t p, int32_t *y);
/* The PAR row of inner iteration j, or UINT32_MAX (after recording SRAM
 * at micro-op u of iteration i, j) when it is past the buffer. */
uint32_t fsim_par_row(struct fsim *sim, const struct fsim_slot *s, uint32_t u, uint32_t i, uint32_t j);

/* ---- fsim_timing.c ---- */

struct fsim_timing;
struct loom_trace_event;
struct fsim_timing *fsim_timing_create(const struct loom_hw_config *cfg);
void fsim_timing_destroy(struct fsim_timing *tm);
void fsim_timing_set_trace(struct fsim_timing *tm, int on);
void fsim_timing_set_dram_bw(struct fsim_timing *tm, uint32_t bytes_per_cycle);
/* Before the functional run of `job`. */
void fsim_timing_begin(struct fsim_timing *tm, const struct fsim_job *job);
/* fsim_alu() with the micro-ops of instruction `index` decoded (uops is
 * indexed by micro-op number): records its interlock stalls. */
void fsim_timing_alu(struct fsim_timing *tm, uint32_t index, const struct loom_insn_alu *in,
                     const struct loom_uop *uops);
/* fsim_gemm() of a depthwise GEMM, likewise: records its window reads
 * (with the GCFG in force). */
void fsim_timing_dw(struct fsim_timing *tm, uint32_t index, const struct loom_insn_gemm *g,
                    const struct loom_insn_gcfg *gc, const struct loom_uop *uops, uint32_t block_in);
/* Estimates the timed counters of a job that ran to FINISH; 0, or -1 when
 * the job failed (counters NULL: the timeline is cleared), the stream has no
 * FINISH or memory ran out (counters untouched). */
int fsim_timing_run(struct fsim_timing *tm, const struct fsim_job *job,
                    uint64_t counters[LOOM_CNT_COUNT]);
const struct loom_trace_event *fsim_timing_trace(const struct fsim_timing *tm, size_t *count);

/* ---- shared helpers ---- */

static inline int8_t fsim_sat8(int32_t v) {
  return (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
}

/* OUT[row] = sat8(ACC[row]): the mirror every ACC write keeps. */
static inline void fsim_mirror_row(struct fsim *sim, uint32_t row) {
  const int32_t *a = sim->acc + (size_t)row * sim->acc_elems;
  int8_t *o = sim->out + (size_t)row * sim->acc_elems;
  for (uint32_t i = 0; i < sim->acc_elems; i++) o[i] = fsim_sat8(a[i]);
}

/* Decodes micro-ops [begin, min(end, uop_rows)) into sim->uop_scratch, so the
 * two-level loops of GEMM and ALU decode each one once. */
void fsim_decode_uops(struct fsim *sim, uint32_t begin, uint32_t end);

#endif
