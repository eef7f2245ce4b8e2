/*
 * loomsta_model.c - the delay models: one table of nanoseconds per family
 * and speed grade, and the mapping from a part name to its model.
 *
 * Sources (docs/rtl.md, "Timing", says which value comes from which):
 *   - the vendor data sheets: block RAM clock-to-out and setup for the 7
 *     series -1 (DS181/DS187/DS189 "Block RAM and FIFO Switching
 *     Characteristics": 2.46 ns without, 0.89 ns with the output register,
 *     0.57 ns address and 0.74 ns data setup); the DSP48E2 maximum
 *     frequencies of DS925 (-2: 775 MHz with every register, 544 without
 *     MREG, 565 without ADREG, 410 without pipeline registers), from which
 *     the DSP stage delays below are solved;
 *   - the Vivado timing model as printed in routed timing reports of -1
 *     Zynq-7000 and -2 UltraScale+ designs (LUT, carry, flip-flop delays and
 *     setups, and the routed nets from which net_base and net_fanout are
 *     fitted).
 * The UltraScale+ data sheet (DS925) no longer lists CLB delays; its -1 and
 * 0.72 V (-2LV) grades are the -2 model slowed by 1.20, the ratio of their
 * DSP48 maximum frequencies (775 / 645 and 775 / 644 MHz).
 *
 * Every value is a worst-case (slow corner) delay: the estimate is meant to
 * say whether a clock is plausible before Vivado runs, not to replace it.
 */
#include <math.h>
#include <string.h>

#include "scripts/loomsta.h"

static const sta_model xc7_1 = {
    .name = "xc7-1",
    .family = "xc7",
    .what = "7-series, speed grade -1 (Zynq-7000 Z-7010/7020, Artix-7)",
    .clock_margin = 0.25,
    .ff_cko = 0.46,
    .ff_setup_d = 0.05, .ff_setup_ce = 0.17, .ff_setup_sr = 0.52,
    .lut = 0.124,
    .muxf = 0.22,
    .carry_in = 0.50, .carry_through = 0.114, .carry_out = 0.31,
    .net_base = 0.45, .net_fanout = 0.15,
    .lutram_cko = 1.20, .lutram_setup = 0.60,
    .srl_cko = 1.50, .srl_setup = 0.10,
    .bram_cko = 2.46, .bram_cko_reg = 0.89, .bram_setup = 0.57, .bram_setup_di = 0.74,
    .uram_cko = 0, .uram_cko_reg = 0, .uram_setup = 0,   /* no UltraRAM in the 7 series */
    .dsp_setup = 0.30, .dsp_cko = 0.30, .dsp_cko_p = 0.43,
    .dsp_preadd = 0.90, .dsp_mult = 1.55, .dsp_alu = 1.05,
};

static const sta_model xcup_2 = {
    .name = "xcup-2",
    .family = "xcup",
    .what = "UltraScale+, speed grade -2 at 0.85 V (Zynq UltraScale+ ZU7EV, Alveo U250)",
    .clock_margin = 0.12,
    .ff_cko = 0.10,
    .ff_setup_d = 0.04, .ff_setup_ce = 0.09, .ff_setup_sr = 0.20,
    .lut = 0.10,
    .muxf = 0.08,
    .carry_in = 0.25, .carry_through = 0.05, .carry_out = 0.10,
    .net_base = 0.20, .net_fanout = 0.05,
    .lutram_cko = 0.75, .lutram_setup = 0.30,
    .srl_cko = 0.85, .srl_setup = 0.08,
    .bram_cko = 0.98, .bram_cko_reg = 0.30, .bram_setup = 0.35, .bram_setup_di = 0.45,
    .uram_cko = 1.40, .uram_cko_reg = 0.55, .uram_setup = 0.40,
    .dsp_setup = 0.10, .dsp_cko = 0.25, .dsp_cko_p = 0.30,
    .dsp_preadd = 0.60, .dsp_mult = 0.82, .dsp_alu = 0.67,
};

/* A grade that is another one slowed by a constant factor. */
typedef struct {
  const char *name, *what;
  const sta_model *base;
  double factor;
} sta_scaled;

static const sta_scaled scaled[] = {
    {"xcup-1", "UltraScale+, speed grade -1 (Zynq UltraScale+ ZU3EG): xcup-2 x 1.20", &xcup_2, 1.20},
    {"xcup-2lv", "UltraScale+, speed grade -2 at 0.72 V (Kria K26): xcup-2 x 1.20", &xcup_2, 1.20},
};

static sta_model scaled_models[sizeof scaled / sizeof scaled[0]];

static const sta_model *scale(int i) {
  sta_model *m = &scaled_models[i];
  double f = scaled[i].factor;
  *m = *scaled[i].base;
  m->name = scaled[i].name;
  m->what = scaled[i].what;
#define S(x) m->x *= f;
  S(clock_margin) S(ff_cko) S(ff_setup_d) S(ff_setup_ce) S(ff_setup_sr) S(lut) S(muxf)
  S(carry_in) S(carry_through) S(carry_out) S(net_base) S(net_fanout)
  S(lutram_cko) S(lutram_setup) S(srl_cko) S(srl_setup)
  S(bram_cko) S(bram_cko_reg) S(bram_setup) S(bram_setup_di) S(uram_cko) S(uram_cko_reg) S(uram_setup)
  S(dsp_setup) S(dsp_cko) S(dsp_cko_p) S(dsp_preadd) S(dsp_mult) S(dsp_alu)
#undef S
  /* Every double of the struct is scaled above. */
  _Static_assert(sizeof(sta_model) == 3 * sizeof(const char *) + 29 * sizeof(double),
                 "a new delay field must be scaled too");
  return m;
}

const sta_model *sta_model_find(const char *name) {
  if (!strcmp(name, xc7_1.name)) return &xc7_1;
  if (!strcmp(name, xcup_2.name)) return &xcup_2;
  for (int i = 0; i < (int)(sizeof scaled / sizeof scaled[0]); i++)
    if (!strcmp(name, scaled[i].name)) return scale(i);
  return NULL;
}

/* Part names: xc7z020clg400-1, xczu7ev-ffvc1156-2-e, xck26-sfvc784-2LV-c,
 * xcu250-figd2104-2L-e.  The speed grade is the first field after the
 * device and package that starts with a digit. */
const sta_model *sta_model_for_part(const char *part) {
  const char *p = strchr(part, '-');
  char grade[8] = "";
  while (p) {
    if (p[1] >= '0' && p[1] <= '9') {
      size_t n = strcspn(p + 1, "-");
      if (n >= sizeof grade) return NULL;
      memcpy(grade, p + 1, n);
      grade[n] = 0;
      break;
    }
    p = strchr(p + 1, '-');
  }
  if (!grade[0]) return NULL;
  if (!strncmp(part, "xc7", 3)) return !strcmp(grade, "1") ? &xc7_1 : NULL;
  /* UltraScale+: Zynq (xczu), Kria (xck2x), Alveo (xcu<digits>), and the
   * Virtex/Kintex/Artix devices whose name ends in p (xcvu9p, xcku5p). */
  size_t dev = strcspn(part, "-");
  int plus = !strncmp(part, "xczu", 4) || !strncmp(part, "xck2", 4) ||
             (!strncmp(part, "xcu", 3) && part[3] >= '0' && part[3] <= '9') ||
             ((!strncmp(part, "xcvu", 4) || !strncmp(part, "xcku", 4) || !strncmp(part, "xcau", 4)) &&
              dev > 0 && part[dev - 1] == 'p');
  if (!plus) return NULL;
  if (!strcmp(grade, "1") || !strcmp(grade, "1L")) return sta_model_find("xcup-1");
  if (!strcmp(grade, "2LV")) return sta_model_find("xcup-2lv");
  if (grade[0] == '2' || grade[0] == '3') return &xcup_2;   /* -3 as -2: pessimistic */
  return NULL;
}

void sta_model_list(FILE *f) {
  fprintf(f, "  %-9s %s\n", xc7_1.name, xc7_1.what);
  fprintf(f, "  %-9s %s\n", xcup_2.name, xcup_2.what);
  for (int i = 0; i < (int)(sizeof scaled / sizeof scaled[0]); i++)
    fprintf(f, "  %-9s %s\n", scaled[i].name, scaled[i].what);
}

void sta_model_print(FILE *f, const sta_model *m) {
  fprintf(f, "model %s: %s\n", m->name, m->what);
  fprintf(f, "  clock margin %.3f; FF clock-to-Q %.3f, setup D %.3f CE %.3f SR %.3f\n", m->clock_margin,
          m->ff_cko, m->ff_setup_d, m->ff_setup_ce, m->ff_setup_sr);
  fprintf(f, "  LUT %.3f; MUXF %.3f; carry in %.3f, through %.3f, out %.3f\n", m->lut, m->muxf,
          m->carry_in, m->carry_through, m->carry_out);
  fprintf(f, "  net %.3f + %.3f x log2(fanout)\n", m->net_base, m->net_fanout);
  fprintf(f, "  LUT RAM clock-to-out %.3f, setup %.3f; SRL clock-to-out %.3f, setup %.3f\n", m->lutram_cko,
          m->lutram_setup, m->srl_cko, m->srl_setup);
  fprintf(f, "  block RAM clock-to-out %.3f (%.3f registered), setup %.3f (data %.3f)\n", m->bram_cko,
          m->bram_cko_reg, m->bram_setup, m->bram_setup_di);
  fprintf(f, "  UltraRAM clock-to-out %.3f (%.3f registered), setup %.3f\n", m->uram_cko, m->uram_cko_reg,
          m->uram_setup);
  fprintf(f, "  DSP setup %.3f, inner clock-to-out %.3f, P clock-to-out %.3f, pre-adder %.3f, multiplier %.3f, ALU %.3f\n",
          m->dsp_setup, m->dsp_cko, m->dsp_cko_p, m->dsp_preadd, m->dsp_mult, m->dsp_alu);
  fprintf(f, "  (all in ns)\n");
}

/* A routed net: a fixed hop plus a little per doubling of the fanout, the
 * shape of the routed nets in Vivado reports (fanout 1: one short hop; a
 * net to a hundred loads crosses a few more switch boxes). */
double sta_net(const sta_model *m, int fanout) {
  if (fanout < 1) fanout = 1;
  return m->net_base + m->net_fanout * log2((double)fanout);
}
