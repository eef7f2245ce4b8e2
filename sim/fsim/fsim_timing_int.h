/*
 * fsim_timing_int.h - the timing model's state, shared by its two files:
 * fsim_timing.c (the modules, fetch and the event loop) and
 * fsim_timing_bus.c (the trace, the data bus and the DMA walk).  The model
 * itself is described at the top of fsim_timing.c.
 */
#ifndef LOOM_FSIM_TIMING_INT_H
#define LOOM_FSIM_TIMING_INT_H

#include "loom/loom.h"
#include "sim/fsim/fsim_internal.h"

#define TM_INF UINT64_MAX
#define TM_BQ_CAP 256           /* bursts (fetch: parts) in flight per direction, above the limits */
#define TM_FETCH_BUF 16        /* loom_fetch.v: instruction buffer entries */
#define TM_FETCH_BURST 16      /* loom_fetch.v: instructions per burst at most */
#define TM_STORE_LENQ 8        /* loom_store.v LenQ: AW may run LenQ - 2 bursts ahead of W */
#define TM_MAX_BEATS 256       /* AXI4 INCR burst */

/* Cycle costs of the RTL's fixed steps.  Each names the RTL that causes it
 * and the micro-benchmark of tests/timing/timing_agree.c (--micro) that
 * pins its value on tsim; docs/fsim-timing.md has the table. */
struct tm_consts {
  uint32_t take;      /* loom_insn_seq: StIdle pops the command queue, next phase a cycle later (tokens, nops) */
  uint32_t token;     /* loom_insn_seq: one pop or push phase (tokens) */
  uint32_t check;     /* loom_mem_check: three cycles before the first request (load wgt 8, store 8) */
  uint32_t rd_ar;     /* burst_gen and the arbiter's skid to the DRAM's AR (load inp strided) */
  uint32_t rd_r;      /* a beat at the DRAM to the requester (load wgt minus rd_ar) */
  uint32_t rd_tail;   /* last beat to done: the row's SRAM write, StDone (load wgt, load uop) */
  uint32_t acc_tail;  /* LOAD ACC: the OUT = sat8 write after the row (load acc) */
  uint32_t pad_tail;  /* padding-bound LOAD: last cell written to done (load inp padded) */
  uint32_t dma_gap;   /* loom_load/loom_store: StDone to the next take (load inp short, store short) */
  uint32_t gemm_fill; /* loom_gemm: F0..E6 and StDone after the last issue (gemm short) */
  uint32_t alu_fill;  /* loom_uop_fe + loom_alu Lat 8 + StDone after the last issue (alu short) */
  uint32_t wr_tail;   /* B at the DRAM to the store's done (store 8) */
  uint32_t aw_to_w;   /* AW accepted to its first W beat: length queue, W slice (store strided) */
  uint32_t out_lead;  /* store: first OUT read to its beat, through the 4-row queue (store 8) */
  uint32_t fetch_lat; /* job start to fetch's first request (every micro-benchmark's offset) */
  uint32_t dispatch;  /* fetch: second beat of an instruction to its dispatch (nops) */
  uint32_t move_tail; /* loom_move: the last INP row's write after its turn (random jobs) */
  uint32_t alu_lat;   /* loom_alu: Lat, read issue to write (alu chain) */
};

static const struct tm_consts consts = {
    .take = 1,      .token = 1,     .check = 3,      .rd_ar = 1,     .rd_r = 2,
    .rd_tail = 3,   .acc_tail = 1,  .pad_tail = 2,   .dma_gap = 1,   .gemm_fill = 11,
    .alu_fill = 13, .wr_tail = 3,   .aw_to_w = 2,    .out_lead = 3,  .fetch_lat = 2,
    .dispatch = 1,  .move_tail = 1, .alu_lat = 8,
};

/* DRAM model parameters: tsim's defaults (sim/tsim/dram_model.h, docs/tsim.md). */
#define TM_DRAM_LATENCY 32
#define TM_DRAM_BYTES_PER_CYCLE 8
#define TM_DRAM_OUTSTANDING 8

enum tm_phase { TM_IDLE, TM_POP_PREV, TM_POP_NEXT, TM_EXEC, TM_PUSH_PREV, TM_PUSH_NEXT };

/* A command queue: stream indices and the cycle each was pushed. */
struct tm_cmdq {
  uint32_t *idx;
  uint64_t *at;
  uint32_t head, count, cap;
  uint64_t room_at; /* a push can happen from this cycle on (after a take from a full queue) */
};

struct tm_tokq {
  uint64_t *at; /* push cycles of the tokens in the queue, a ring of `cap` */
  uint32_t head, count, cap;
  uint64_t room_at;
};

/* A burst on the data bus. */
struct tm_burst {
  uint64_t at;     /* cycle it can start moving data */
  uint64_t rem;    /* half-cycles of the bus it still needs */
  int owner;       /* LOOM_Q_* module, or TM_FETCH */
  uint32_t aux;    /* fetch: the instruction this part of the burst carries */
  uint64_t grant;  /* index among the grants of its direction */
  int more;        /* fetch: more parts of the same burst follow */
};

struct tm_bq {
  struct tm_burst b[TM_BQ_CAP];
  uint32_t head, count;
};

/* The entities of the event loop: the three modules (LOOM_Q_*), then: */
#define TM_FETCH LOOM_Q_COUNT         /* fetch's burst requests */
#define TM_DISPATCH (LOOM_Q_COUNT + 1) /* fetch's dispatch into the command queues */
#define TM_BUS (LOOM_Q_COUNT + 2)      /* the data bus */
#define TM_ENTITIES (LOOM_Q_COUNT + 3)

/* A DMA transfer in progress: the walk of loom_burst_gen over its rows. */
struct tm_dma {
  int active, is_store;
  uint32_t hold_bytes;  /* a beat is held one cycle per this many bytes (UOP: 4, LUT: 1), 0: not held */
  uint64_t addr, row_addr, stride, row_bytes; /* bytes */
  uint64_t row_lo, row_hi;                    /* the current row's bytes */
  uint32_t rows_left, rem_beats;              /* rows still to start; beats left in this row */
  uint64_t next_issue;                        /* burst_gen: one burst per cycle */
  uint64_t first;                             /* cycle the first burst could go */
  uint64_t last_done;                         /* last beat (reads) or B (stores) so far */
  uint64_t cells;                             /* SRAM rows written (data + padding) */
  uint64_t beats, bursts, pending;            /* pending: issued, not finished */
  uint64_t moving;                            /* cycles of those beats on the bus (UOP: held) */
};

struct tm_mod {
  struct tm_cmdq q;
  enum tm_phase phase;
  struct loom_insn insn;
  uint32_t index;
  uint64_t t;          /* the module's next step cannot happen before this cycle */
  uint64_t taken;      /* when it took the current instruction */
  uint64_t exec_begin; /* engine start */
  uint64_t idle_at;    /* back in StIdle */
  struct tm_dma dma;
  uint64_t busy, tok_stall, mem_stall;
  uint32_t take_gap;   /* cycles between going idle and the next take (see exec_done) */
};

struct fsim_timing {
  const struct loom_hw_config *cfg;
  struct tm_mod mod[LOOM_Q_COUNT];
  struct tm_tokq tok[FSIM_TOK_COUNT];
  /* the bus */
  uint64_t bus_t;          /* the bus has been simulated up to this cycle */
  struct tm_bq rq, wq;     /* read bursts (answered in order), write bursts (W in AW order) */
  uint32_t beat_cycles;    /* bus cycles per beat: bus bytes / bytes per cycle, at least 1 */
  uint32_t dram_bw;        /* the DRAM's bytes per cycle (TM_DRAM_BYTES_PER_CYCLE unless set) */
  uint32_t bus_bytes;
  uint64_t *rd_slot;       /* cycle each of the last `rd_max` read grants frees its slot, a ring */
  uint64_t rd_grants;
  uint32_t rd_max;
  uint64_t wr_slot[TM_DRAM_OUTSTANDING]; /* the same for write bursts (at their B) */
  uint64_t wr_grants;
  uint64_t aw_count, w_done; /* store: AWs issued, W bursts finished */
  uint64_t ar_free, aw_free;
  uint32_t rr_last;        /* read port granted last: 0 fetch, 1 load, 2 compute */
  uint64_t now;            /* the event loop's time */
  /* fetch */
  const uint8_t *insns;
  uint32_t insn_count, finish_index; /* dispatch stops after FINISH */
  uint32_t fetch_req, fetch_disp;
  uint64_t fetch_t, disp_t;
  uint64_t *arrive;                  /* cycle instruction i is in the fetch buffer */
  uint32_t arrive_cap;
  uint64_t *alu_stall;               /* interlock cycles of ALU instruction i (fsim_timing_alu), window
                                      * reads of depthwise GEMM i (fsim_timing_dw) */
  uint32_t alu_cap;
  /* result */
  int finished;
  uint64_t end;
  int tracing;
  struct loom_trace_event *ev;
  size_t nev, cap_ev;
};

/* ---- fsim_timing_bus.c ---- */

void tm_bus_act(struct fsim_timing *tm, uint64_t t);
uint64_t tm_bus_next(struct fsim_timing *tm);
uint64_t tm_dma_end(const struct tm_mod *mod);
uint64_t tm_dma_ready(const struct fsim_timing *tm, const struct tm_mod *mod);
void tm_dma_start(struct fsim_timing *tm, struct tm_mod *mod, uint64_t t);
void tm_dma_step(struct fsim_timing *tm, int m, uint64_t t);
int tm_dma_walk_done(const struct tm_dma *d);
void tm_rd_fetch_burst(struct fsim_timing *tm, uint64_t t, uint32_t first, uint32_t n, uint32_t per);
uint64_t tm_rd_ready(const struct fsim_timing *tm, uint64_t t);
void tm_trace(struct fsim_timing *tm, int module, int kind, uint32_t insn, uint32_t opcode,
                  uint64_t begin, uint64_t end);

#endif
