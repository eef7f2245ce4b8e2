/*
 * nl_image.c - the inputs and the expected bytes of a gate-level or 4-state
 * run of one accelerator job (tests/netlist/run_netlist.sh).
 *
 *   nl_image FILE.loom OUTDIR [SEED]
 *
 * For every job of a .loom file (the output of `loom asm` or `loom
 * compile`), lays out one flat DRAM image exactly as a board would hold the
 * job: the job's instruction stream at offset 0, then every buffer one of
 * its segments names, each at a 4 KiB boundary (the tsim backend's
 * alignment; a segment base needs 64 bytes).  CONST buffers hold their
 * bytes from the file, WORK buffers pseudo-random bytes (seeded, so inputs
 * are not all zero and a failure reproduces).  It then runs the job on fsim
 * over a copy of that image and writes, per job N:
 *
 *   OUTDIR/jN.mem   the image before the job, one byte per line in hex
 *                   (what the testbench's $readmemh loads);
 *   OUTDIR/jN.job   the job's arguments, one 64-bit hex word per line:
 *                   bus address of the image, image bytes, instruction
 *                   offset, instruction count, then per segment its
 *                   offset in the image and its size (0 0 when unmapped),
 *                   then fsim's error code, its timing model's estimate
 *                   of the job's cycles (0 after an error), which bounds
 *                   the testbench's wait, and the failing instruction;
 *   OUTDIR/jN.exp   the whole image after fsim ran the job, in the format
 *                   the testbench dumps its memory (tests/netlist/
 *                   loom_nl_tb.sv), so `cmp` compares every byte: the
 *                   outputs, and that nothing else was written.
 *
 * Prints "jobs N" and exits 0, or names the file and the problem and exits
 * 1.  fsim runs each job fresh (SRAM zero), as the testbench's RTL starts
 * from reset; jobs that read SRAM they did not write would differ, which a
 * well-formed program never does.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/core/loomfile.h"
#include "loom/hwconfig.h"
#include "sim/fsim/fsim.h"

#define NL_ALIGN 4096u
#define NL_DRAM_BASE UINT64_C(0x100000000) /* above 4 GiB, as tsim: the high address bits */
#define NL_MAX_IMAGE (UINT64_C(1) << 24)     /* the testbench's memory */

static uint64_t next_random(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static int write_bytes(const char *dir, unsigned job, const char *ext, const uint8_t *p, uint64_t n) {
  char path[1024];
  snprintf(path, sizeof path, "%s/j%u.%s", dir, job, ext);
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "nl_image: %s: cannot write\n", path);
    return -1;
  }
  for (uint64_t i = 0; i < n; i++) fprintf(f, "%02x\n", p[i]);
  if (fclose(f) != 0) {
    fprintf(stderr, "nl_image: %s: write failed\n", path);
    return -1;
  }
  return 0;
}

/* One job: lay out, write the image and arguments, run fsim, write the
 * expected image. */
static int one_job(const struct loom_file *lf, const struct loom_hw_config *cfg, unsigned j,
                   const char *dir, uint64_t seed) {
  const struct loom_file_job *job = &lf->jobs[j];
  uint64_t seg_off[LOOM_NUM_SEGMENTS] = {0}, seg_size[LOOM_NUM_SEGMENTS] = {0};
  uint64_t *buf_off = calloc(lf->buffer_count, sizeof *buf_off);
  if (!buf_off) return -1;
  uint64_t size = ((uint64_t)job->insn_count * 16 + NL_ALIGN - 1) / NL_ALIGN * NL_ALIGN;
  for (unsigned s = 0; s < LOOM_NUM_SEGMENTS; s++) {
    uint32_t b = job->segments[s];
    if (b == LOOM_FILE_NO_BUFFER) continue;
    if (!buf_off[b]) {
      buf_off[b] = size;
      size += (lf->buffers[b].size + NL_ALIGN - 1) / NL_ALIGN * NL_ALIGN;
    }
    seg_off[s] = buf_off[b];
    seg_size[s] = lf->buffers[b].size;
  }
  if (size > NL_MAX_IMAGE) {
    fprintf(stderr, "nl_image: job %u needs %llu bytes of DRAM, the testbench has %llu\n", j,
            (unsigned long long)size, (unsigned long long)NL_MAX_IMAGE);
    free(buf_off);
    return -1;
  }
  uint8_t *img = calloc(size, 1), *run = malloc(size);
  if (!img || !run) {
    free(img), free(run), free(buf_off);
    return -1;
  }
  memcpy(img, lf->insns + (uint64_t)job->insn_first * 16, (uint64_t)job->insn_count * 16);
  uint64_t rnd = seed * 0x9E3779B97F4A7C15ull + j + 1;
  for (uint32_t b = 0; b < lf->buffer_count; b++) {
    if (!buf_off[b]) continue;
    const struct loom_file_buffer *fb = &lf->buffers[b];
    if (fb->kind == LOOM_BUFKIND_CONST) memcpy(img + buf_off[b], lf->data + fb->data_offset, fb->size);
    else
      for (uint64_t i = 0; i < fb->size; i++) img[buf_off[b] + i] = (uint8_t)(next_random(&rnd) >> 24);
  }
  memcpy(run, img, size);

  struct fsim *sim = fsim_create(cfg);
  struct fsim_job fj = {.insns = run, .insn_count = job->insn_count, .work_budget = 0};
  for (unsigned s = 0; s < LOOM_NUM_SEGMENTS; s++)
    if (seg_size[s]) fj.seg[s] = (struct fsim_segment){run + seg_off[s], seg_size[s]};
  struct fsim_result res;
  int rc = -1;
  if (sim && fsim_set_timing(sim, 1) == 0) {
    fsim_run(sim, &fj, &res);
    char path[1024];
    snprintf(path, sizeof path, "%s/j%u.job", dir, j);
    FILE *f = fopen(path, "w");
    if (f) {
      fprintf(f, "%016llx\n%016llx\n%016llx\n%016llx\n", (unsigned long long)NL_DRAM_BASE,
              (unsigned long long)size, 0ull, (unsigned long long)job->insn_count);
      for (unsigned s = 0; s < LOOM_NUM_SEGMENTS; s++)
        fprintf(f, "%016llx\n%016llx\n", (unsigned long long)seg_off[s],
                (unsigned long long)seg_size[s]);
      fprintf(f, "%016llx\n%016llx\n%016llx\n", (unsigned long long)res.error,
              (unsigned long long)res.counters[LOOM_CNT_CYCLES], (unsigned long long)res.err_insn);
      rc = fclose(f) == 0 ? 0 : -1;
    }
    if (rc) fprintf(stderr, "nl_image: %s: cannot write\n", path);
    if (!rc) rc = write_bytes(dir, j, "mem", img, size);
    if (!rc) rc = write_bytes(dir, j, "exp", run, size);
  }
  if (sim) fsim_destroy(sim);
  free(img), free(run), free(buf_off);
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 3 || argc > 4) {
    fprintf(stderr, "usage: nl_image FILE.loom OUTDIR [SEED]\n");
    return 2;
  }
  uint64_t seed = argc == 4 ? strtoull(argv[3], NULL, 0) : 1;
  struct loom_file lf;
  char msg[LOOM_MSG_MAX];
  if (loom_file_read(argv[1], &lf, msg) != LOOM_OK) {
    fprintf(stderr, "nl_image: %s\n", msg);
    return 1;
  }
  const struct loom_hw_config *cfg = loom_hw_config_by_hash(lf.config_hash);
  if (!cfg || lf.job_count == 0) {
    fprintf(stderr, "nl_image: %s: %s\n", argv[1],
            cfg ? "no accelerator job" : "built for an unknown configuration");
    loom_file_free(&lf);
    return 1;
  }
  int rc = 0;
  for (unsigned j = 0; j < lf.job_count && !rc; j++) rc = one_job(&lf, cfg, j, argv[2], seed);
  if (!rc) printf("jobs %u\n", lf.job_count);
  loom_file_free(&lf);
  return rc ? 1 : 0;
}
