/*
 * progress.c - the progress display of long runs (progress.h).
 *
 * Everything hangs on the monotonic clock: the first LOOM_PROGRESS_DELAY
 * seconds are silent (a short run prints nothing, so scripts and tests that
 * run small models see the output they always saw), then a terminal gets a
 * bar redrawn at most every BAR_PERIOD seconds and anything else a line
 * every LOOM_PROGRESS_PERIOD seconds.  Both variables are read once at
 * start; tests set them to see the display on short runs.  The state lives
 * in the display object, nothing is global, and a NULL display (quiet)
 * makes every call a no-op, so callers need no `if`.
 */
#include "progress.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BAR_PERIOD 0.2   /* seconds between redraws of the bar */
#define BAR_WIDTH 24
#define ETA_MIN_FRACTION 0.02

struct loom_progress {
  FILE *out;
  char what[32];
  int tty, shown;
  double t0, stage_t0, last_draw, delay, period, last_fraction;
};

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double env_seconds(const char *name, double dflt) {
  const char *v = getenv(name);
  char *end;
  double d = v && *v ? strtod(v, &end) : dflt;
  return v && *v && (*end || d < 0) ? dflt : d;
}

struct loom_progress *loom_progress_start(FILE *out, const char *what, int quiet) {
  if (quiet) return NULL;
  struct loom_progress *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->out = out;
  snprintf(p->what, sizeof p->what, "%s", what);
  p->tty = isatty(fileno(out));
  p->t0 = p->stage_t0 = now();
  p->delay = env_seconds("LOOM_PROGRESS_DELAY", 2.0);
  p->period = env_seconds("LOOM_PROGRESS_PERIOD", 10.0);
  p->last_fraction = -1;
  return p;
}

/* "1:05" */
static void clock_text(double s, char *out, size_t n) {
  long t = (long)(s + 0.5);
  if (t >= 3600) snprintf(out, n, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
  else snprintf(out, n, "%ld:%02ld", t / 60, t % 60);
}

/* ", about 0:37 left" once the fraction says enough. */
static void eta_text(const struct loom_progress *p, double t, double f, char *out, size_t n) {
  char c[32];
  out[0] = 0;
  if (f < ETA_MIN_FRACTION || f >= 1 || t - p->stage_t0 < 1) return;
  clock_text((t - p->stage_t0) * (1 - f) / f, c, sizeof c);
  snprintf(out, n, ", about %s left", c);
}

static void draw_bar(struct loom_progress *p, double t, double f, const char *label) {
  char bar[BAR_WIDTH + 1], el[32], eta[48];
  int fill = f < 0 ? 0 : (int)(f * BAR_WIDTH + 0.5);
  for (int i = 0; i < BAR_WIDTH; i++) bar[i] = i < fill ? '#' : '.';
  bar[BAR_WIDTH] = 0;
  clock_text(t - p->t0, el, sizeof el);
  eta_text(p, t, f, eta, sizeof eta);
  if (f < 0) fprintf(p->out, "\r\033[K%s: %.48s  %s", p->what, label, el);
  else fprintf(p->out, "\r\033[K%s: [%s] %3.0f%%  %.48s  %s%s", p->what, bar, 100 * f, label, el, eta);
  fflush(p->out);
}

static void draw_line(struct loom_progress *p, double t, double f, const char *label) {
  char el[32], eta[48];
  clock_text(t - p->t0, el, sizeof el);
  eta_text(p, t, f, eta, sizeof eta);
  if (f < 0) fprintf(p->out, "%s: %s, %s elapsed\n", p->what, label, el);
  else fprintf(p->out, "%s: %.0f%%, %s, %s elapsed%s\n", p->what, 100 * f, label, el, eta);
  fflush(p->out);
}

void loom_progress_update(struct loom_progress *p, double fraction, const char *label) {
  if (!p) return;
  double t = now();
  if (fraction >= 0 && fraction < p->last_fraction) p->stage_t0 = t; /* a new stage */
  if (fraction >= 0) p->last_fraction = fraction;
  if (t - p->t0 < p->delay) return;
  if (p->shown && t - p->last_draw < (p->tty ? BAR_PERIOD : p->period)) return;
  if (p->tty) draw_bar(p, t, fraction, label);
  else draw_line(p, t, fraction, label);
  p->shown = 1;
  p->last_draw = t;
}

void loom_progress_finish(struct loom_progress *p) {
  if (!p) return;
  if (p->shown && p->tty) fprintf(p->out, "\r\033[K");
  else if (p->shown) {
    char el[32];
    clock_text(now() - p->t0, el, sizeof el);
    fprintf(p->out, "%s: done in %s\n", p->what, el);
  }
  fflush(p->out);
  free(p);
}
