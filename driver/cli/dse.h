/*
 * dse.h - `loom dse`, design-space exploration: a sweep of hardware
 * configurations x networks x one part (docs/dse.md).
 *
 *   dse_spec.c      the sweep file (SPEC.toml / SPEC.txt) and its points
 *   dse_eval.c      one point: compile, fsim's timing model, the result file
 *   dse_synth.c     Yosys synth_xilinx resources, cached by configuration
 *   dse_run.c       points in parallel (--jobs), re-runs, progress; Slurm
 *                   arrays (--slurm, --task) and --collect
 *   dse_report.c    results.json, results.csv, the table, the Pareto front
 *                   and its gnuplot figures
 *   dse_validate.c  --validate K: the best points on tsim
 *   cmd_dse.c       options
 *
 * A point is a configuration; its name is derived from the keys that change
 * the hardware (dse_point_name), so its hash, and so the Yosys and tsim
 * caches, are shared by every sweep that visits it.  Each point's outcome
 * is one file, OUT/points/NAME.txt, written whole (temporary file and
 * rename) by whoever evaluated it (a local worker or a Slurm task); the
 * reports are made from those files only, which is what makes a Slurm run
 * and a local run produce the same outputs, and a re-run skip finished
 * points.
 */
#ifndef LOOM_DSE_H
#define LOOM_DSE_H

#include <stdint.h>
#include <stdio.h>

#include "loom/hwconfig.h"

#define DSE_PATH_MAX 1024
#define DSE_MAX_NETS 8
#define DSE_MAX_VALUES 32
#define DSE_MAX_POINTS 4096

/* The integer keys of a configuration, in hwconfig_rules.h's order. */
enum dse_key {
#define AS_KEY(key, lo, hi, what) DSE_KEY_##key,
  LOOM_HW_INT_KEYS(AS_KEY)
#undef AS_KEY
  DSE_KEY_COUNT
};
extern const char *const dse_key_names[DSE_KEY_COUNT];
int *dse_key_field(struct loom_hw_config *c, int key);

/* One swept key: its values, in the order the spec gives them. */
struct dse_axis {
  int key;
  int line; /* where the spec sets it */
  int n;
  int v[DSE_MAX_VALUES];
};

struct dse_net {
  char path[DSE_PATH_MAX];
  char name[64];             /* file name without directory and .onnx */
  char calib[DSE_PATH_MAX];  /* calibration inputs of a float network ("" none) */
};

struct dse_spec {
  char path[DSE_PATH_MAX];    /* the spec file */
  char out[DSE_PATH_MAX];     /* output directory */
  char base[DSE_PATH_MAX];    /* configuration the sweep starts from */
  struct loom_hw_config base_cfg;
  const struct loom_hw_part *part;
  struct dse_net nets[DSE_MAX_NETS];
  int n_nets;
  int dram_bw;                /* DRAM bytes per cycle; 0: bus_bits / 8 */
  int synth;                  /* 1: Yosys resources; 0: estimates only */
  struct dse_axis axes[DSE_KEY_COUNT];
  int n_axes;
  int tie[DSE_KEY_COUNT];     /* key that follows another (block_out = "block_in"), else -1 */
  uint32_t digest;            /* of everything a point's result depends on */
};

struct dse_point {
  struct loom_hw_config cfg; /* derived when valid */
  int valid;
  const char *bad_key;       /* the first broken rule when not */
  char why[192];
};

/* What became of a point. */
enum dse_status {
  DSE_DONE,    /* evaluated */
  DSE_INVALID, /* breaks a rule of the ISA or the RTL: not evaluated */
  DSE_UNSUPPORTED, /* the compiler cannot lower a network for it (the reason is the error) */
  DSE_FAILED,  /* a network did not run, or synthesis failed */
  DSE_STATUS_COUNT
};
extern const char *const dse_status_names[DSE_STATUS_COUNT];

struct dse_net_result {
  uint64_t cycles; /* accelerator cycles, fsim's timing model */
  uint64_t macs;   /* useful MACs of the accelerator's jobs */
  int jobs;
};

struct dse_resources {
  long lut, ff, dsp, uram;
  double bram36;
  int yosys;  /* 1: Yosys synth_xilinx; 0: estimated DSP and BRAM only */
  int uram_used; /* the UltraRAM buffers were moved there */
  double fmax_mhz; /* loomsta's estimate of the Yosys netlist on the part; 0: none */
};

#define DSE_ID_MAX (LOOM_HW_NAME_MAX + 16)

struct dse_result {
  char name[DSE_ID_MAX];      /* the point's id, dse_point_id */
  struct loom_hw_config cfg;
  enum dse_status status;
  char error[384];
  struct dse_net_result net[DSE_MAX_NETS];
  struct dse_resources res;
  int fits;         /* res within the part's capacity */
  double seconds;   /* time it took (not part of the reports) */
};

/* ---- dse_spec.c ---- */

/* Reads the spec; 0, or -1 after printing "loom: SPEC:LINE: ..." */
int dse_spec_read(const char *path, const char *out_override, struct dse_spec *s);

/* Every point of the sweep, in a fixed order (the axes as the spec lists
 * them, the last one fastest); *n of them.  Invalid ones stay in the list.
 * -1 after printing when the sweep is empty, too large, or a value breaks
 * a rule in every point that has it. */
int dse_points(const struct dse_spec *s, struct dse_point **points, int *n);

/* "dse_1a2b3c4d", from the keys that change the hardware; a named
 * configuration's name when the keys are exactly its own. */
void dse_point_name(const struct loom_hw_config *c, char name[LOOM_HW_NAME_MAX]);

/* ---- dse_eval.c ---- */

/* Evaluates one point into r (never fails: problems are r->status). */
void dse_eval_point(const struct dse_spec *s, const struct dse_point *p, struct dse_result *r);

/* OUT/points/NAME.txt: write (whole, atomically) and read.  read returns 0
 * when the file exists, matches the spec's digest and is complete. */
int dse_result_write(const struct dse_spec *s, const struct dse_result *r);
int dse_result_read(const struct dse_spec *s, const char *name, struct dse_result *r);

/* Modelled latency of network i at the configuration's clock, in ms. */
double dse_latency_ms(const struct dse_result *r, int i);
/* The sum over networks: what "best" means (dse_report.c ranks by it). */
double dse_total_ms(const struct dse_spec *s, const struct dse_result *r);

/* ---- dse_synth.c ---- */

/* Resources of configuration c on the spec's part: Yosys (cached) when
 * s->synth, else the estimates.  0, or -1 with a message. */
int dse_synth(const struct dse_spec *s, const struct loom_hw_config *c, struct dse_resources *res,
              char *msg, size_t n);
/* The estimated Fmax of configuration c on part p: loomsta's (docs/rtl.md,
 * "Timing") on the cached Yosys netlist.  1 with *mhz and the report's path
 * (timing-<part>.txt), 0 when it is not in the cache and `run` is 0, -1 on
 * failure; msg says why in the last two cases.  run: synthesize (minutes)
 * when missing. */
int dse_fmax(const struct loom_hw_config *c, const struct loom_hw_part *p, int run, double *mhz,
             char *report, size_t report_n, char *msg, size_t n);
/* Whether the clock is at or below the estimated Fmax (or there is none). */
int dse_meets_clock(const struct dse_resources *res, const struct loom_hw_config *c);
/* Whether res fits part p. */
int dse_fits(const struct dse_resources *res, const struct loom_hw_part *p);

/* ---- dse_run.c ---- */

struct dse_run_options {
  int jobs;            /* points evaluated at once */
  int quiet;
};

/* Evaluates every valid point without a result yet, `jobs` at a time,
 * with progress and ETA on stderr.  Returns the number that failed. */
int dse_run_local(const struct dse_spec *s, const struct dse_point *pts, int n,
                  const struct dse_run_options *o);

/* Slurm: writes OUT/slurm/job.sh (an sbatch array, `chunk` points per
 * task) and submits it.  0, or -1 after printing why. */
int dse_slurm_submit(const struct dse_spec *s, const char *spec_path, const struct dse_point *pts,
                     int n, int chunk, const char *partition, const char *account,
                     const char *time_limit);

/* One array task: evaluates points [task*chunk, task*chunk+chunk) of the
 * valid ones. */
int dse_run_task(const struct dse_spec *s, const struct dse_point *pts, int n, int task, int chunk);

/* Reads every point's result; -1 after printing how many are missing or
 * stale (nothing is reported then). */
int dse_collect(const struct dse_spec *s, const struct dse_point *pts, int n,
                struct dse_result **results);

/* ---- dse_report.c ---- */

/* Writes OUT/results.json, OUT/results.csv, OUT/table.txt and the figures
 * OUT/pareto_{lut,dsp}.{png,svg}, prints the table to `table`.  0, or -1
 * after printing why. */
int dse_report(const struct dse_spec *s, const struct dse_result *r, int n, FILE *table);

/* Indices of results that fit the part, best (lowest total latency) first;
 * returns how many. */
int dse_rank(const struct dse_spec *s, const struct dse_result *r, int n, int *order);

/* ---- dse_validate.c ---- */

/* Runs every network of the k best points on tsim; prints and writes
 * OUT/validation.{json,txt}: the timing model's error per point and
 * network.  0, or -1 after printing why. */
int dse_validate(const struct dse_spec *s, const struct dse_result *r, int n, int k);

/* ---- shared helpers (dse_eval.c) ---- */

/* Writes `text` to `path` through a temporary file and rename. */
int dse_write_file(const char *path, const char *text, size_t len);
/* "NAME-200MHz": a point's id, its result file's name. */
void dse_point_id(const struct loom_hw_config *c, char *out, size_t n);
/* OUT/configs/ID.cfg, the point as a configuration file (written once). */
int dse_config_file(const struct dse_spec *s, const struct loom_hw_config *c, char *path, size_t n);
/* Compiles network `net` for c, runs it once on zero inputs on `backend`
 * (options: config=, bw= and `extra`) and sums its jobs' cycles and MACs.
 * 0; -2 when it does not compile, -1 when it does not run (message). */
int dse_run_net(const struct dse_spec *s, const struct loom_hw_config *c, int net, const char *backend,
                const char *extra, struct dse_net_result *out, char *msg, size_t n);

#endif
