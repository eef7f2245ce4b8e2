/*
 * progress.h - the progress display of long runs (progress.c): `loom
 * compile`, `loom run`, `loom eval`, and the benchmark programs.
 *
 * Libraries report progress through callbacks (compile_options.progress,
 * loom_model_set_progress) and never print; a program turns those calls
 * into this display on stderr:
 *
 *   - nothing at all for a run that ends within LOOM_PROGRESS_DELAY seconds
 *     (default 2), and nothing when `quiet` (the commands' -q);
 *   - on a terminal, one line redrawn in place: a bar, the percentage, what
 *     runs now (the layer), the time so far and an estimate of the time
 *     left, cleared when the run ends;
 *   - otherwise (a log, a pipe) a plain line every LOOM_PROGRESS_PERIOD
 *     seconds (default 10), and a last one saying how long it took.
 *
 * The estimate assumes the work still to do goes at the rate of the work
 * done so far in the current stage: a fraction that goes down starts a new
 * stage (calibration, then tiling, ...), with its own clock.
 */
#ifndef LOOM_PROGRESS_H
#define LOOM_PROGRESS_H

#include <stdio.h>

struct loom_progress;

/* A display named `what` ("loom run") on `out`; NULL (every call then does
 * nothing) when quiet or out of memory. */
struct loom_progress *loom_progress_start(FILE *out, const char *what, int quiet);

/* The run has done `fraction` (0..1; negative when unknown) of its current
 * stage and is busy with `label` ("step 7/21 layer2.0/conv1").  Cheap: call
 * it as often as there is news; it draws at most a few times a second. */
void loom_progress_update(struct loom_progress *p, double fraction, const char *label);

/* Ends the display (clears the bar, or prints the last line) and frees p. */
void loom_progress_finish(struct loom_progress *p);

#endif
