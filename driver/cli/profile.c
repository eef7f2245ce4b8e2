/*
 * profile.c - what `loom run --profile`, `--profile-json` and `--trace`
 * print after a run (docs/profiling.md).
 *
 * Everything here is derived from three sources the model keeps for its
 * last run: the per-job hardware counters (cycles, busy and stall cycles,
 * bytes moved: exact on tsim and a board, the timing model's on fsim with
 * timing=1), the compiler's JOBMETA (layer name, op, useful MACs, its
 * estimates) and, for the trace, each job's timeline.  Nothing is measured
 * here, so the table, its JSON and the trace always agree with the counters.
 *
 * The vocabulary is DESIGN.md's: peak = batch x block_in x block_out MACs
 * per cycle; utilization = useful MACs / (cycles x peak); the roofline bound
 * of a job, in cycles, is max(MACs / peak, DMA bytes / DRAM bytes per cycle)
 * with the bytes the job actually moved (BYTES_* counters) and the bus width
 * of the configuration as the DRAM bytes per cycle; achieved / bound is
 * bound / cycles (1 = on the roofline).
 *
 * The trace is Chrome's trace-event JSON object format: one process per job
 * (named after its layer), one thread per module, one complete event per
 * instruction and per token or DRAM wait; jobs are laid end to end in the
 * order the program ran them, at the configuration's clock.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "driver/cli/profile.h"
#include "loom/isa.h"

/* The counters of one module: busy, token stall, DRAM stall. */
static const int mod_cnt[3][3] = {
    {LOOM_CNT_LOAD_BUSY, LOOM_CNT_LOAD_TOKEN_STALL, LOOM_CNT_LOAD_MEM_STALL},
    {LOOM_CNT_COMPUTE_BUSY, LOOM_CNT_COMPUTE_TOKEN_STALL, LOOM_CNT_COMPUTE_MEM_STALL},
    {LOOM_CNT_STORE_BUSY, LOOM_CNT_STORE_TOKEN_STALL, LOOM_CNT_STORE_MEM_STALL},
};
static const char *const mod_names[LOOM_MOD_COUNT] = {"fetch", "load", "compute", "store"};
_Static_assert(sizeof mod_names / sizeof mod_names[0] == LOOM_MOD_COUNT, "a name per module");

/* One row of the table: a job (with its figures) or a host step. */
struct prow {
  int step, job;                /* job < 0: host step */
  const char *name, *op;
  double seconds;
  uint64_t cycles, macs, bytes, bound, stall[3][2];
  uint64_t est_cycles, est_bytes;
};

static uint64_t div_up(uint64_t a, uint64_t b) { return b ? (a + b - 1) / b : 0; }

static uint64_t dma_bytes(const uint64_t *c) {
  return c[LOOM_CNT_BYTES_RD_INSN] + c[LOOM_CNT_BYTES_RD_UOP] + c[LOOM_CNT_BYTES_RD_WGT] +
         c[LOOM_CNT_BYTES_RD_INP] + c[LOOM_CNT_BYTES_RD_ACC] + c[LOOM_CNT_BYTES_WR_OUT];
}

static uint32_t dram_bytes_per_cycle(const struct loom_hw_config *cfg) {
  return (uint32_t)cfg->bus_bits / 8u;
}

static void job_row(const struct profile_ctx *p, int step, int job, struct prow *r) {
  const struct loom_job_result *res = loom_model_job_result(p->m, job);
  const struct loom_job_info *ji = loom_model_job_info(p->m, job);
  const uint64_t *c = res->counters;
  uint32_t peak = loom_hw_peak_macs(p->cfg);
  memset(r, 0, sizeof *r);
  r->step = step, r->job = job, r->name = ji->name, r->op = ji->op;
  r->cycles = c[LOOM_CNT_CYCLES];
  /* useful MACs from the compiler; without JOBMETA, what the GEMM core did */
  r->macs = ji->has_meta ? ji->macs : c[LOOM_CNT_GEMM_OPS] * peak;
  r->bytes = dma_bytes(c);
  uint64_t compute = div_up(r->macs, peak), memory = div_up(r->bytes, dram_bytes_per_cycle(p->cfg));
  r->bound = compute > memory ? compute : memory;
  for (int mo = 0; mo < 3; mo++)
    for (int k = 0; k < 2; k++) r->stall[mo][k] = c[mod_cnt[mo][1 + k]];
  r->est_cycles = ji->est_cycles, r->est_bytes = ji->dma_bytes;
}

static void add_row(struct prow *sum, const struct prow *r) {
  sum->cycles += r->cycles, sum->macs += r->macs, sum->bytes += r->bytes, sum->bound += r->bound;
  sum->est_cycles += r->est_cycles, sum->est_bytes += r->est_bytes, sum->seconds += r->seconds;
  for (int mo = 0; mo < 3; mo++)
    for (int k = 0; k < 2; k++) sum->stall[mo][k] += r->stall[mo][k];
}

/* Row of step `i`; 0 for a job step that repeats an earlier step's job
 * (a job's counters already sum all its runs). */
static int step_row(const struct profile_ctx *p, int i, struct prow *r) {
  const struct loom_step_info *s = loom_model_step(p->m, i);
  if (!s->is_job) {
    memset(r, 0, sizeof *r);
    r->step = i, r->job = -1, r->name = s->name, r->op = "host", r->seconds = s->seconds;
    return 1;
  }
  for (int k = 0; k < i; k++) {
    const struct loom_step_info *e = loom_model_step(p->m, k);
    if (e->is_job && e->index == s->index) return 0;
  }
  job_row(p, i, (int)s->index, r);
  r->seconds = s->seconds;
  return 1;
}

static int has_cycles(const struct profile_ctx *p) {
  for (int j = 0; j < loom_model_job_count(p->m); j++)
    if (loom_model_job_result(p->m, j)->counters[LOOM_CNT_CYCLES]) return 1;
  return 0;
}

static int has_meta(const struct profile_ctx *p) {
  for (int j = 0; j < loom_model_job_count(p->m); j++)
    if (!loom_model_job_info(p->m, j)->has_meta) return 0;
  return 1;
}

/* ---- the table ---- */

static double ratio(uint64_t a, uint64_t b) { return b ? (double)a / (double)b : 0.0; }

static void print_head(FILE *out) {
  fprintf(out, "%-4s %-24s %-18s %11s %13s %6s %11s %11s %6s %9s %9s %9s %9s %9s %9s\n", "step",
          "layer", "op", "cycles", "MACs", "util", "DMA bytes", "bound", "ach/bd", "ld tok",
          "ld dram", "cp tok", "cp dram", "st tok", "st dram");
}

static void print_row(const struct profile_ctx *p, const struct prow *r, int cycles, FILE *out) {
  char step[16];
  uint32_t peak = loom_hw_peak_macs(p->cfg);
  snprintf(step, sizeof step, r->step < 0 ? "" : "%d", r->step);
  if (r->job < 0 && r->step >= 0) {
    fprintf(out, "%-4s %-24.24s %-18.18s %11s (host, %.3f ms wall)\n", step, r->name, r->op, "-",
            1e3 * r->seconds);
    return;
  }
  fprintf(out, "%-4s %-24.24s %-18.18s ", step, r->name, r->op);
  if (!cycles) {
    fprintf(out, "%11s %13" PRIu64 " %6s %11" PRIu64 " %11" PRIu64 "\n", "-", r->macs, "-",
            r->bytes, r->bound);
    return;
  }
  fprintf(out, "%11" PRIu64 " %13" PRIu64 " %5.1f%% %11" PRIu64 " %11" PRIu64 " %5.1f%%", r->cycles,
          r->macs, 100.0 * ratio(r->macs, r->cycles * peak), r->bytes, r->bound,
          100.0 * ratio(r->bound, r->cycles));
  for (int mo = 0; mo < 3; mo++)
    for (int k = 0; k < 2; k++) fprintf(out, " %9" PRIu64, r->stall[mo][k]);
  fputc('\n', out);
}

void profile_print(const struct profile_ctx *p, FILE *out) {
  struct prow r, sum;
  int cycles = has_cycles(p);
  memset(&sum, 0, sizeof sum);
  sum.step = -1, sum.job = -1, sum.name = "total", sum.op = ""; /* step < 0: the total row */
  fprintf(out, "profile: %s on %s, config %s: peak %u MACs/cycle, DRAM %u bytes/cycle, %d MHz\n",
          p->model, p->backend, p->cfg->name, loom_hw_peak_macs(p->cfg),
          dram_bytes_per_cycle(p->cfg), p->cfg->clock_mhz);
  if (!cycles)
    fprintf(out, "profile: the %s backend counted no cycles (fsim counts cycles only with "
                 "--timing; tsim and boards always do): cycles, utilization, achieved/bound "
                 "and stalls are not available; MACs, DMA bytes and the roofline bound are\n",
            p->backend);
  if (!has_meta(p))
    fprintf(out, "profile: %s has no job metadata (format 1.2 JOBMETA; recompile it): layers "
                 "are named by job and MACs are GEMM micro-ops x peak\n",
            p->model);
  print_head(out);
  for (int i = 0; i < loom_model_step_count(p->m); i++) {
    if (!step_row(p, i, &r)) continue;
    print_row(p, &r, cycles, out);
    add_row(&sum, &r);
  }
  print_row(p, &sum, cycles, out);
  if (cycles)
    fprintf(out, "cycles %" PRIu64 " = %.3f ms at %d MHz; host steps %.3f ms wall\n", sum.cycles,
            (double)sum.cycles / (1e3 * p->cfg->clock_mhz), p->cfg->clock_mhz,
            1e3 * profile_host_seconds(p));
}

double profile_host_seconds(const struct profile_ctx *p) {
  double s = 0;
  for (int i = 0; i < loom_model_step_count(p->m); i++)
    if (!loom_model_step(p->m, i)->is_job) s += loom_model_step(p->m, i)->seconds;
  return s;
}

/* ---- JSON helpers ---- */

static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    if (*c == '"' || *c == '\\') fprintf(f, "\\%c", *c);
    else if (*c < 0x20) fprintf(f, "\\u%04x", *c);
    else fputc(*c, f);
  }
  fputc('"', f);
}

static void json_row(const struct profile_ctx *p, const struct prow *r, int cycles, FILE *f) {
  static const char *const stall_keys[3][2] = {
      {"load_token", "load_dram"}, {"compute_token", "compute_dram"}, {"store_token", "store_dram"}};
  uint32_t peak = loom_hw_peak_macs(p->cfg);
  fprintf(f, "{\"step\": %d, \"job\": %d, \"name\": ", r->step, r->job);
  json_str(f, r->name);
  fprintf(f, ", \"op\": ");
  json_str(f, r->op);
  fprintf(f, ", \"seconds\": %.9f", r->seconds);
  if (r->job < 0 && r->step >= 0) {
    fputc('}', f);
    return;
  }
  fprintf(f, ", \"macs\": %" PRIu64 ", \"dma_bytes\": %" PRIu64 ", \"bound_cycles\": %" PRIu64
             ", \"est_cycles\": %" PRIu64 ", \"est_dma_bytes\": %" PRIu64,
          r->macs, r->bytes, r->bound, r->est_cycles, r->est_bytes);
  if (cycles) {
    fprintf(f, ", \"cycles\": %" PRIu64 ", \"utilization\": %.6f, \"of_bound\": %.6f, \"stalls\": {",
            r->cycles, ratio(r->macs, r->cycles * peak), ratio(r->bound, r->cycles));
    for (int mo = 0; mo < 3; mo++)
      for (int k = 0; k < 2; k++)
        fprintf(f, "%s\"%s\": %" PRIu64, mo || k ? ", " : "", stall_keys[mo][k], r->stall[mo][k]);
    fputc('}', f);
  }
  if (r->job >= 0 && r->step >= 0) {
    const uint64_t *c = loom_model_job_result(p->m, r->job)->counters;
    fprintf(f, ", \"counters\": {");
    for (int k = 0; k < LOOM_CNT_COUNT; k++)
      fprintf(f, "%s\"%s\": %" PRIu64, k ? ", " : "", loom_counter_name((uint32_t)k), c[k]);
    fputc('}', f);
  }
  fputc('}', f);
}

int profile_write_json(const struct profile_ctx *p, const char *path) {
  struct loom_outfile *o;
  FILE *f = cli_output_open(path, &o);
  if (!f) return CLI_USER;
  struct prow r, sum;
  int cycles = has_cycles(p), first = 1;
  memset(&sum, 0, sizeof sum);
  sum.step = -1, sum.job = -1, sum.name = "total", sum.op = "";
  fprintf(f, "{\"model\": ");
  json_str(f, p->model);
  fprintf(f, ", \"backend\": ");
  json_str(f, p->backend);
  fprintf(f, ", \"config\": ");
  json_str(f, p->cfg->name);
  fprintf(f, ",\n \"clock_mhz\": %d, \"peak_macs_per_cycle\": %u, \"dram_bytes_per_cycle\": %u,"
             " \"has_cycles\": %s, \"has_job_metadata\": %s,\n \"steps\": [",
          p->cfg->clock_mhz, loom_hw_peak_macs(p->cfg), dram_bytes_per_cycle(p->cfg),
          cycles ? "true" : "false", has_meta(p) ? "true" : "false");
  for (int i = 0; i < loom_model_step_count(p->m); i++) {
    if (!step_row(p, i, &r)) continue;
    fprintf(f, "%s\n  ", first ? "" : ",");
    json_row(p, &r, cycles, f);
    add_row(&sum, &r);
    first = 0;
  }
  fprintf(f, "],\n \"total\": ");
  json_row(p, &sum, cycles, f);
  fprintf(f, ",\n \"host_seconds\": %.9f}\n", profile_host_seconds(p));
  return cli_output_commit(o);
}

/* ---- the Chrome trace ---- */

/* Microseconds of `cycles` at the clock, to the nanosecond; rounding down
 * is monotone, so slices that do not overlap in cycles never do here. */
static void json_us(FILE *f, uint64_t cycles, int mhz) {
  uint64_t ns = cycles * 1000u / (uint64_t)mhz;
  fprintf(f, "%" PRIu64 ".%03" PRIu64, ns / 1000u, ns % 1000u);
}

static void meta_event(FILE *f, int first, const char *what, int pid, int tid, const char *key,
                       const char *name, long sort) {
  fprintf(f, "%s\n{", first ? "" : ",");
  fprintf(f, "\"name\": \"%s\", \"ph\": \"M\", \"pid\": %d, \"tid\": %d, \"args\": {\"%s\": ",
          what, pid, tid, key);
  if (name) json_str(f, name);
  else fprintf(f, "%ld", sort);
  fprintf(f, "}}");
}

/* args of an instruction slice: index, and the fields that size its work */
static void insn_args(FILE *f, const struct loom_job_info *ji, const struct loom_trace_event *e) {
  struct loom_insn d;
  const char *why;
  fprintf(f, "\"insn\": %u", e->insn);
  if (e->insn >= ji->insn_count ||
      loom_insn_decode(ji->insns + (size_t)e->insn * LOOM_INSN_BYTES, &d, &why) != LOOM_ERR_NONE)
    return;
  switch (d.opcode) {
  case LOOM_OP_LOAD:
  case LOOM_OP_STORE:
    fprintf(f, ", \"buffer\": \"%s\", \"sram_base\": %u, \"y_size\": %u, \"x_size\": %u"
               ", \"x_stride\": %u",
            loom_buffer_name(d.mem.buffer), d.mem.sram_base, d.mem.y_size, d.mem.x_size,
            d.mem.x_stride);
    break;
  case LOOM_OP_GEMM:
    fprintf(f, ", \"reset\": %u, \"uops\": %u, \"iter_out\": %u, \"iter_in\": %u", d.gemm.reset,
            d.gemm.uop_end - d.gemm.uop_begin, d.gemm.iter_out, d.gemm.iter_in);
    break;
  case LOOM_OP_ALU:
    fprintf(f, ", \"alu_op\": \"%s\", \"uops\": %u, \"iter_out\": %u, \"iter_in\": %u",
            loom_alu_op_name(d.alu.alu_op), d.alu.uop_end - d.alu.uop_begin, d.alu.iter_out,
            d.alu.iter_in);
    break;
  default: break;
  }
}

static const char *slice_name(const struct loom_trace_event *e) {
  if (e->kind == LOOM_TRACE_TOKEN_WAIT) return "token wait";
  if (e->kind == LOOM_TRACE_MEM_WAIT) return "DRAM wait";
  return loom_opcode_name(e->opcode);
}

static void slice_event(FILE *f, const struct profile_ctx *p, int pid, uint64_t base,
                        const struct loom_job_info *ji, const struct loom_trace_event *e) {
  static const char *const cats[LOOM_TRACE_KIND_COUNT] = {"insn", "token_wait", "dram_wait"};
  int mhz = p->cfg->clock_mhz;
  fprintf(f, ",\n{\"name\": \"%s\", \"cat\": \"%s\", \"ph\": \"X\", \"pid\": %d, \"tid\": %u, \"ts\": ",
          slice_name(e), e->kind < LOOM_TRACE_KIND_COUNT ? cats[e->kind] : "?", pid, e->module);
  json_us(f, base + e->begin, mhz);
  fprintf(f, ", \"dur\": ");
  uint64_t b = (base + e->begin) * 1000u / (uint64_t)mhz, en = (base + e->end) * 1000u / (uint64_t)mhz;
  fprintf(f, "%" PRIu64 ".%03" PRIu64 ", \"args\": {", (en - b) / 1000u, (en - b) % 1000u);
  insn_args(f, ji, e);
  if (e->kind != LOOM_TRACE_INSN) fprintf(f, ", \"opcode\": \"%s\"", loom_opcode_name(e->opcode));
  fprintf(f, ", \"begin\": %" PRIu64 ", \"cycles\": %" PRIu64 "}}", e->begin, e->end - e->begin);
}

static void job_events(FILE *f, const struct profile_ctx *p, int pid, int job, uint64_t base,
                       int first) {
  const struct loom_job_info *ji = loom_model_job_info(p->m, job);
  char pname[160];
  size_t n;
  const struct loom_trace_event *ev = loom_model_job_trace(p->m, job, &n);
  snprintf(pname, sizeof pname, "%s (job %d%s%s)", ji->name, job, ji->op[0] ? ", " : "", ji->op);
  meta_event(f, first, "process_name", pid, 0, "name", pname, 0);
  meta_event(f, 0, "process_sort_index", pid, 0, "sort_index", NULL, pid);
  for (int mo = 0; mo < LOOM_MOD_COUNT; mo++) {
    meta_event(f, 0, "thread_name", pid, mo, "name", mod_names[mo], 0);
    meta_event(f, 0, "thread_sort_index", pid, mo, "sort_index", NULL, mo);
  }
  for (size_t i = 0; i < n; i++) slice_event(f, p, pid, base, ji, &ev[i]);
}

int profile_write_trace(const struct profile_ctx *p, const char *path) {
  struct loom_outfile *o;
  FILE *f = cli_output_open(path, &o);
  if (!f) return CLI_USER;
  uint64_t base = 0;
  fprintf(f, "{\"displayTimeUnit\": \"ns\",\n\"otherData\": {\"model\": ");
  json_str(f, p->model);
  fprintf(f, ", \"backend\": ");
  json_str(f, p->backend);
  fprintf(f, ", \"config\": ");
  json_str(f, p->cfg->name);
  fprintf(f, ", \"clock_mhz\": %d, \"time\": \"microseconds at the configuration's clock; jobs end"
             " to end in program order, host steps left out\"},\n\"traceEvents\": [",
          p->cfg->clock_mhz);
  for (int i = 0, first = 1; i < loom_model_step_count(p->m); i++) {
    const struct loom_step_info *s = loom_model_step(p->m, i);
    if (!s->is_job) continue;
    job_events(f, p, i + 1, (int)s->index, base, first);
    first = 0;
    base += loom_model_job_result(p->m, (int)s->index)->counters[LOOM_CNT_CYCLES];
  }
  fprintf(f, "\n]}\n");
  return cli_output_commit(o);
}
