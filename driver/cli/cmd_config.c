/*
 * cmd_config.c - `loom config`: hardware configurations as files.
 *
 *   loom config list                    the named configurations
 *   loom config show NAME|FILE          the keys as `key = value` lines
 *   loom config check NAME|FILE [--part PART]
 *                                       every rule it breaks, one line each
 *   loom config fmax NAME|FILE [--part PART]
 *                                       its estimated Fmax (Yosys + loomsta)
 *   loom config vh NAME|FILE            its Verilog header (loom_cfg.vh)
 *   loom config tcl NAME|FILE           its Tcl parameters (board flows)
 *
 * `show` prints exactly the keys a configuration file has, in file order,
 * after comment lines with what is derived from them, so its output is a
 * valid file: `loom config show default > my.cfg` is how a new
 * configuration starts.  `check` goes on past the first problem, unlike
 * every other reader of a configuration file, so that one run names all of
 * them (the rules: hwconfig_rules.c; the part's budget: its DSPs and block
 * RAM as loom_hw_dsp_estimate and loom_hw_memory_fit count them; Yosys
 * gives the real figures, see `loom dse`).  `show` gives the clock an
 * estimate says the RTL reaches on the part when the synthesis cache has one
 * (dse_synth.c); `fmax` makes it: Yosys synth_xilinx, then loomsta's logic
 * levels under the part's delay model (docs/rtl.md, "Timing"), minutes the
 * first time and cached after.
 */
#include <string.h>

#include "cli.h"
#include "dse.h"
#include "loom/hwconfig.h"
#include "loom/loom.h"

static int load(const char *arg, struct loom_hw_config *c) {
  char msg[LOOM_MSG_MAX];
  return loom_hw_config_resolve(arg, c, msg, sizeof msg) ? cli_error("%s", msg) : CLI_OK;
}

/* The estimated Fmax on part p: from the cache, or (run) made; a comment
 * line for show, or fmax's report.  0, or 1 after printing why not. */
static int fmax_estimate(const struct loom_hw_config *c, const struct loom_hw_part *p, int run) {
  char report[DSE_PATH_MAX + 256], msg[LOOM_MSG_MAX];
  double mhz = 0;
  int rc = dse_fmax(c, p, run, &mhz, report, sizeof report, msg, sizeof msg);
  const char *verdict = mhz >= c->clock_mhz ? "met" : "NOT met";
  if (!run) {
    if (rc > 0)
      printf("# clock %d MHz; estimated Fmax %.1f MHz on %s (%s: %s)\n", c->clock_mhz, mhz, p->name,
             verdict, report);
    else
      printf("# clock %d MHz; estimated Fmax on %s: not known yet (loom config fmax %s: Yosys, minutes)\n",
             c->clock_mhz, p->name, c->name);
    return 0;
  }
  if (rc <= 0) return fprintf(stderr, "loom: %s: no Fmax estimate on %s: %s\n", c->name, p->name, msg), 1;
  printf("%s: clock %d MHz; estimated Fmax %.1f MHz on %s: %s\nreport (the worst paths): %s\n", c->name,
         c->clock_mhz, mhz, p->name, verdict, report);
  return 0;
}

static void show(const struct loom_hw_config *c) {
  printf("# %s%s%s\n", c->name, c->comment ? ": " : "", c->comment ? c->comment : "");
  printf("# hash 0x%08X; %u MACs per cycle; rows INP %d, WGT %d, ACC %d, UOP %d, OUT %d\n", c->hash,
         loom_hw_peak_macs(c), c->inp_rows, c->wgt_rows, c->acc_rows, c->uop_rows, c->out_rows);
  const struct loom_hw_part *p = loom_hw_part_by_name(c->part);
  if (p) fmax_estimate(c, p, 0);
  loom_hw_write_keys(stdout, c);
}

static void list(void) {
  for (int i = 0; i < LOOM_CONFIG_COUNT; i++) {
    const struct loom_hw_config *c = &loom_hw_configs[i];
    printf("%-8s 0x%08X %dx%dx%d %-22s %s\n", c->name, c->hash, c->batch, c->block_in,
           c->block_out, c->part, c->comment);
  }
}

static void print_violations(const char *what, const struct loom_hw_violation *v, int n) {
  for (int i = 0; i < n && i < LOOM_HW_MAX_VIOLATIONS; i++)
    fprintf(stderr, "loom: %s: key '%s': %s\n", what, v[i].key, v[i].what);
  if (n > LOOM_HW_MAX_VIOLATIONS)
    fprintf(stderr, "loom: %s: and %d more\n", what, n - LOOM_HW_MAX_VIOLATIONS);
}

/* The part's budget, once the rules hold (rows are needed to count memory). */
static int check_part(const char *what, struct loom_hw_config *c, const char *part_name) {
  struct loom_hw_violation v[LOOM_HW_MAX_VIOLATIONS];
  const struct loom_hw_part *p = loom_hw_part_by_name(part_name);
  if (!p) {
    char known[512] = "";
    size_t n = 0;
    for (int i = 0; i < LOOM_PART_COUNT && n < sizeof known; i++)
      n += (size_t)snprintf(known + n, sizeof known - n, "%s%s", i ? ", " : "", loom_hw_parts[i].name);
    fprintf(stderr, "loom: %s: key 'part': unknown part '%s' (known: %s)\n", what, part_name, known);
    return 1;
  }
  loom_hw_derive(c);
  int n = loom_hw_check_part(c, p, LOOM_URAM_BUFFERS, v, LOOM_HW_MAX_VIOLATIONS);
  print_violations(what, v, n);
  if (n) return n;
  int uram;
  struct loom_hw_memory m = loom_hw_memory_fit(c, p, LOOM_URAM_BUFFERS, &uram);
  printf("%s: ok: config '%s' (0x%08X) fits %s: about %ld of %ld DSPs, %ld.%ld of %ld BRAM36%s",
         what, c->name, c->hash, p->name, loom_hw_dsp_estimate(c), p->dsp, m.bram18 / 2,
         5 * (m.bram18 % 2), p->bram36, uram ? "" : "\n");
  if (uram) printf(", %ld of %ld URAM288 (%s in UltraRAM)\n", m.uram, p->uram, LOOM_URAM_BUFFERS);
  return 0;
}

static int check(const char *arg, const char *part) {
  struct loom_hw_config c;
  struct loom_hw_violation v[LOOM_HW_MAX_VIOLATIONS];
  char msg[LOOM_MSG_MAX];
  const struct loom_hw_config *named = loom_hw_config_by_name(arg);
  if (named) c = *named;
  else if (loom_hw_config_read(arg, &c, msg, sizeof msg))
    return cli_error("%s", msg);
  int n = loom_hw_check(&c, v, LOOM_HW_MAX_VIOLATIONS);
  print_violations(arg, v, n);
  if (!n) n = check_part(arg, &c, part ? part : c.part);
  return n ? CLI_USER : CLI_OK;
}

static int config_action(const char *action, const char *arg, const char *part) {
  struct loom_hw_config c;
  if (!strcmp(action, "check")) return check(arg, part);
  if (part && strcmp(action, "fmax")) return cli_usage_error(&cli_cmd_config, "--part goes with check and fmax only");
  if (load(arg, &c) != CLI_OK) return CLI_USER;
  if (!strcmp(action, "fmax")) {
    const struct loom_hw_part *p = loom_hw_part_by_name(part ? part : c.part);
    if (!p) return cli_error("%s: unknown part '%s' (loom config check lists the known ones)", arg, part ? part : c.part);
    if (loom_hw_check_part(&c, p, LOOM_URAM_BUFFERS, NULL, 0))
      return cli_error("%s: does not fit %s (loom config check %s --part %s)", arg, p->name, arg, p->name);
    return fmax_estimate(&c, p, 1) ? CLI_USER : CLI_OK;
  }
  if (!strcmp(action, "show")) show(&c);
  else if (!strcmp(action, "vh")) loom_hw_write_vh(stdout, &c);
  else loom_hw_write_tcl(stdout, &c);
  return fflush(stdout) == 0 ? CLI_OK : cli_error("cannot write to stdout");
}

static int run_config(int argc, char **argv) {
  const char *action = NULL, *arg = NULL, *part = NULL;
  for (int i = 1; i < argc; i++) {
    int r;
    if (cli_is_help(argv[i])) {
      cli_print_help(&cli_cmd_config, stdout);
      return CLI_OK;
    }
    if ((r = cli_option_value(&cli_cmd_config, argc, argv, &i, "--part", NULL, &part))) {
      if (r < 0) return CLI_USER;
      continue;
    }
    if (argv[i][0] == '-' && argv[i][1])
      return cli_usage_error(&cli_cmd_config, "unknown option '%s'", argv[i]);
    if (!action) action = argv[i];
    else if (!arg) arg = argv[i];
    else return cli_usage_error(&cli_cmd_config, "unexpected argument '%s'", argv[i]);
  }
  if (!action) return cli_usage_error(&cli_cmd_config, "no action given (list, show, check, fmax, vh, tcl)");
  if (!strcmp(action, "list")) {
    if (arg) return cli_usage_error(&cli_cmd_config, "list takes no argument");
    list();
    return CLI_OK;
  }
  if (strcmp(action, "show") && strcmp(action, "check") && strcmp(action, "fmax") && strcmp(action, "vh") &&
      strcmp(action, "tcl"))
    return cli_usage_error(&cli_cmd_config, "unknown action '%s' (list, show, check, fmax, vh, tcl)", action);
  if (!arg) return cli_usage_error(&cli_cmd_config, "%s needs a configuration name or file", action);
  return config_action(action, arg, part);
}

const struct cli_cmd cli_cmd_config = {
    .name = "config",
    .summary = "show, check and convert hardware configurations (names or files)",
    .help = "usage: loom config list\n"
            "       loom config show NAME|FILE\n"
            "       loom config check NAME|FILE [--part PART]\n"
            "       loom config fmax NAME|FILE [--part PART]\n"
            "       loom config vh|tcl NAME|FILE\n"
            "\n"
            "A hardware configuration is a name (docs/configs.md) or a file of\n"
            "`key = value` lines (`#` starts a comment) with exactly these keys:\n"
            "  name batch block_in block_out inp_kib wgt_kib acc_kib uop_kib bus_bits\n"
            "  clock_mhz cmd_queue_depth token_queue_depth max_outstanding_reads part\n"
            "Every command that takes a configuration name takes such a file too.\n"
            "\n"
            "  list    the named configurations: name, hash, shape, part, purpose\n"
            "  show    the keys, preceded by comments with the hash and buffer rows;\n"
            "          the output is a valid configuration file\n"
            "  check   every rule the configuration breaks, one line each (power-of-two\n"
            "          rows of whole bus words, the ISA's index fields, bus width, queue\n"
            "          depths), then the DSP and block RAM budget of its part (or\n"
            "          --part PART); exit status 1 when anything is wrong\n"
            "  fmax    the clock the RTL is estimated to reach on its part (or --part):\n"
            "          Yosys synth_xilinx, then logic levels under the part's delay\n"
            "          model (docs/rtl.md \"Timing\"); minutes the first time, then\n"
            "          cached, and `show` prints it\n"
            "  vh      the Verilog header loom_top includes as loom_cfg.vh\n"
            "  tcl     the Tcl dict loom_cfg of the board flows\n"
            "\n"
            "example:\n"
            "  loom config show default > my.cfg   # then edit name, block_in, part...\n"
            "  loom config check my.cfg\n"
            "  loom compile net.onnx --config my.cfg --calib calib/ -o net.loom\n",
    .run = run_config,
};
