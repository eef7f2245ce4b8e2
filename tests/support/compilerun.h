/*
 * compilerun.h - what compiler tests share: IR text compiled to a .loom,
 * the .loom run on fsim and compared bit for bit with the fused graph on
 * the reference interpreter, and the per-layer table's rows counted.
 */
#ifndef LOOM_COMPILERUN_H
#define LOOM_COMPILERUN_H

#include <stdint.h>

#include "loom/loom.h"
#include "sw_compiler/compile.h"

/* IR text parsed (a cmocka failure when it does not parse). */
struct ir_graph *parse_ok(const char *text);
/* `text` compiled for `config` (NULL: the default) with calibration file
 * `calib`; compile_graph's result. */
int compile_text(const char *text, const char *calib, const char *config, struct compile_result *r,
                 struct ir_error *err);
/* Runs input x (dtype dt) on fsim; the first output (its user type) into y. */
void run_fsim(const struct compile_result *r, loom_dtype dt, const void *x, void *y, size_t bytes);
/* fsim against the fused graph on the reference interpreter (the first
 * output; the interpreter fills one pointer per graph output). */
void assert_bit_exact(const struct compile_result *r, loom_dtype dt, const void *x);
/* Rows of the per-layer table whose op contains `op`. */
int count_rows(const struct compile_result *r, const char *op);
/* The placement summary (compile_placement_print) as a malloc'd string. */
char *placement_summary(const struct compile_result *r);
/* `text` compiled for `config` with COMPILE_* `flags`, calibrated on 8
 * random inputs of `dims` (the calibration files are gone when this
 * returns). */
void compile_calibrated(const char *text, int rank, const int64_t *dims, unsigned seed, const char *config,
                        unsigned flags, struct compile_result *r);
/* Four inputs of n floats, amp * sin(i * (s + k)), each bit-exact. */
void bit_exact_on_waves(const struct compile_result *r, int n, int k, float amp);

#endif
