/*
 * cmd_dse.c - `loom dse SPEC`: design-space exploration of hardware
 * configurations x networks on one FPGA part (dse.h, docs/dse.md).
 *
 *   loom dse SPEC [--jobs N] [--validate K]      evaluate here, then report
 *   loom dse SPEC --slurm [--partition P] ...    submit as a Slurm job array
 *   loom dse SPEC --collect [--validate K]       report what the array wrote
 *   loom dse SPEC --task I --chunk N             one array task (job.sh runs it)
 *   loom dse SPEC --list                         the points, evaluating nothing
 *
 * This file only parses options and puts the steps of dse_*.c in order.
 * Exit status: 0 when every valid point was evaluated (and validated when
 * asked), 1 for a bad spec or option, or when points failed: their rows
 * say so and they are never counted as done.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "driver/lib/srctree.h"
#include "dse.h"

struct dse_args {
  const char *spec, *out, *partition, *account, *time_limit;
  unsigned long jobs, validate, chunk, task;
  int slurm, collect, list, quiet, has_task;
};

static int number(const char *opt, const char *v, unsigned long lo, unsigned long *out) {
  if (!cli_parse_u32(v, out) || *out < lo)
    return cli_usage_error(&cli_cmd_dse, "%s '%s' is not a whole number >= %lu", opt, v, lo), -1;
  return 1;
}

/* One option at argv[*i]: 1 handled, 0 not an option, -1 error. */
static int parse_option(struct dse_args *a, int argc, char **argv, int *i) {
  const struct cli_cmd *c = &cli_cmd_dse;
  const char *v;
  int r;
  if ((r = cli_option_value(c, argc, argv, i, "--out", "-o", &a->out))) return r;
  if ((r = cli_option_value(c, argc, argv, i, "--partition", NULL, &a->partition))) return r;
  if ((r = cli_option_value(c, argc, argv, i, "--account", NULL, &a->account))) return r;
  if ((r = cli_option_value(c, argc, argv, i, "--time", NULL, &a->time_limit))) return r;
  if ((r = cli_option_value(c, argc, argv, i, "--jobs", "-j", &v))) return r < 0 ? r : number("--jobs", v, 1, &a->jobs);
  if ((r = cli_option_value(c, argc, argv, i, "--validate", NULL, &v)))
    return r < 0 ? r : number("--validate", v, 1, &a->validate);
  if ((r = cli_option_value(c, argc, argv, i, "--chunk", NULL, &v))) return r < 0 ? r : number("--chunk", v, 1, &a->chunk);
  if ((r = cli_option_value(c, argc, argv, i, "--task", NULL, &v))) {
    a->has_task = 1;
    return r < 0 ? r : number("--task", v, 0, &a->task);
  }
  if (!strcmp(argv[*i], "--slurm")) return a->slurm = 1;
  if (!strcmp(argv[*i], "--collect")) return a->collect = 1;
  if (!strcmp(argv[*i], "--list")) return a->list = 1;
  if (!strcmp(argv[*i], "--quiet") || !strcmp(argv[*i], "-q")) return a->quiet = 1;
  return 0;
}

/* Returns -1 to go on, else the exit status. */
static int parse_args(struct dse_args *a, int argc, char **argv) {
  a->jobs = 1, a->chunk = 1;
  for (int i = 1; i < argc; i++) {
    if (cli_is_help(argv[i])) {
      cli_print_help(&cli_cmd_dse, stdout);
      return CLI_OK;
    }
    int r = parse_option(a, argc, argv, &i);
    if (r < 0) return CLI_USER;
    if (r > 0) continue;
    if (argv[i][0] == '-' && argv[i][1]) return cli_usage_error(&cli_cmd_dse, "unknown option '%s'", argv[i]);
    if (a->spec) return cli_usage_error(&cli_cmd_dse, "unexpected argument '%s'", argv[i]);
    a->spec = argv[i];
  }
  if (!a->spec) return cli_usage_error(&cli_cmd_dse, "no sweep file given (SPEC.toml or SPEC.txt)");
  if (a->slurm + a->collect + a->list + a->has_task > 1)
    return cli_usage_error(&cli_cmd_dse, "--slurm, --collect, --list and --task exclude each other");
  if ((a->partition || a->account || a->time_limit) && !a->slurm)
    return cli_usage_error(&cli_cmd_dse, "--partition, --account and --time go with --slurm");
  if (a->validate && (a->slurm || a->has_task || a->list))
    return cli_usage_error(&cli_cmd_dse, "--validate goes with a local run or --collect");
  return -1;
}

static void list_points(const struct dse_point *pts, int n) {
  for (int i = 0; i < n; i++) {
    const struct loom_hw_config *c = &pts[i].cfg;
    printf("%-16s %dx%dx%d inp %d wgt %d acc %d uop %d KiB, bus %d, %d MHz, queues %d/%d, reads %d: %s\n",
           c->name, c->batch, c->block_in, c->block_out, c->inp_kib, c->wgt_kib, c->acc_kib, c->uop_kib,
           c->bus_bits, c->clock_mhz, c->cmd_queue_depth, c->token_queue_depth, c->max_outstanding_reads,
           pts[i].valid ? "valid" : pts[i].why);
  }
}

/* Whether `tool` is an executable file on PATH. */
static int on_path(const char *tool) {
  const char *path = getenv("PATH");
  char dir[DSE_PATH_MAX + 64];
  for (const char *p = path ? path : ""; *p;) {
    size_t n = strcspn(p, ":");
    snprintf(dir, sizeof dir, "%.*s/%s", (int)(n < DSE_PATH_MAX ? n : DSE_PATH_MAX), p, tool);
    if (n && access(dir, X_OK) == 0) return 1;
    p += n + (p[n] == ':');
  }
  return 0;
}

/* Collects, reports and validates; the exit status. */
static int finish(const struct dse_args *a, const struct dse_spec *s, const struct dse_point *pts, int n) {
  struct dse_result *r;
  if (dse_collect(s, pts, n, &r)) return CLI_USER;
  int failed = 0;
  for (int i = 0; i < n; i++) failed += r[i].status == DSE_FAILED;
  int rc = dse_report(s, r, n, a->quiet ? NULL : stdout) ? CLI_USER : CLI_OK;
  if (!a->quiet) printf("wrote %s/results.json, results.csv, table.txt, pareto_lut.png/svg, pareto_dsp.png/svg\n", s->out);
  if (rc == CLI_OK && a->validate && dse_validate(s, r, n, (int)a->validate)) rc = CLI_USER;
  if (failed) rc = cli_error("%s: %d points failed (see their rows)", s->path, failed);
  free(r);
  return rc;
}

static int run(const struct dse_args *a) {
  struct dse_spec *s = calloc(1, sizeof *s);
  struct dse_point *pts = NULL;
  int n = 0, rc = CLI_USER;
  if (!s) return cli_error("out of memory");
  if (dse_spec_read(a->spec, a->out, s) || dse_points(s, &pts, &n)) goto done;
  if (loom_mkdirs(s->out)) {
    cli_error("%s: cannot create the output directory", s->out);
    goto done;
  }
  if (s->synth && !a->list && !a->collect && !a->slurm && !on_path("yosys")) {
    cli_error("%s: synthesis needs yosys on PATH (scripts/install-deps.sh), or synth = \"estimate\" in the sweep",
              s->path);
    goto done;
  }
  if (a->list) list_points(pts, n), rc = CLI_OK;
  else if (a->has_task) rc = dse_run_task(s, pts, n, (int)a->task, (int)a->chunk) ? CLI_USER : CLI_OK;
  else if (a->slurm)
    rc = dse_slurm_submit(s, a->spec, pts, n, (int)a->chunk, a->partition, a->account, a->time_limit) ? CLI_USER : CLI_OK;
  else if (a->collect) rc = finish(a, s, pts, n);
  else {
    struct dse_run_options o = {(int)a->jobs, a->quiet};
    dse_run_local(s, pts, n, &o);
    rc = finish(a, s, pts, n);
  }
done:
  free(pts);
  free(s);
  return rc;
}

static int run_dse(int argc, char **argv) {
  struct dse_args a = {0};
  int r = parse_args(&a, argc, argv);
  return r >= 0 ? r : run(&a);
}

const struct cli_cmd cli_cmd_dse = {
    .name = "dse",
    .summary = "design-space exploration: configurations x networks on a part",
    .help = "usage: loom dse SPEC [--jobs N] [--validate K] [--out DIR]\n"
            "       loom dse SPEC --slurm [--partition P] [--account A] [--time T] [--chunk N]\n"
            "       loom dse SPEC --collect [--validate K]\n"
            "       loom dse SPEC --list\n"
            "\n"
            "Sweeps hardware configurations over the ranges SPEC gives (a TOML or\n"
            "key = value file; docs/dse.md) for its networks and part.  Per point:\n"
            "compiles every network, counts accelerator cycles with fsim's timing\n"
            "model, synthesizes with Yosys synth_xilinx (LUT/FF/DSP/BRAM, cached by\n"
            "configuration hash), checks the fit against the part and models the\n"
            "latency at the point's clock.  Writes OUT/results.json, results.csv,\n"
            "table.txt, the Pareto front of latency against LUTs and against DSPs\n"
            "(pareto_lut.png/svg, pareto_dsp.png/svg) and one configuration file per\n"
            "point (configs/); prints the table, best first.  A re-run skips points\n"
            "already done.\n"
            "\n"
            "options:\n"
            "  -o, --out DIR       output directory (default: SPEC without its extension,\n"
            "                      plus .dse; or the spec's out = ...)\n"
            "  -j, --jobs N        evaluate N points at once (default 1)\n"
            "      --validate K    run the K best cores on tsim (the RTL) and report the\n"
            "                      timing model's error; builds each core's Verilator\n"
            "                      model on first use (minutes)\n"
            "      --list          list the points and which rule an invalid one breaks\n"
            "      --slurm         write OUT/slurm/job.sh, a Slurm job array, and submit it\n"
            "                      with sbatch; OUT must be visible from every node\n"
            "      --partition P, --account A, --time T\n"
            "                      sbatch's --partition, --account and --time\n"
            "      --chunk N       points per array task (default 1)\n"
            "      --collect       report the results the array wrote (fails, writing\n"
            "                      nothing, while points are missing)\n"
            "      --task I        evaluate array task I's points (what job.sh runs)\n"
            "  -q, --quiet         no progress and no table\n"
            "  -h, --help          show this help\n"
            "\n"
            "example:\n"
            "  loom dse docs/examples/kv260.toml --jobs 2 --validate 2\n",
    .run = run_dse,
};
