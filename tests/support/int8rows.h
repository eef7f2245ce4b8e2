/*
 * int8rows.h - tests of the int8 row host ops (QSOFTMAX, QLAYERNORM):
 * the op run on the same rows stored three ways, each result checked
 * against the rows the caller computed directly.
 */
#ifndef LOOM_INT8ROWS_H
#define LOOM_INT8ROWS_H

#include <stdint.h>

#include "driver/core/hostops.h"

/* An int8 tensor descriptor of rank 2 (d0, d1), quantized (scale, zp),
 * plain; the caller may change dims, layout and bytes after. */
void int8_desc(struct loom_file_tensor *t, int rank, int64_t d0, int64_t d1, float scale, int zp);

/* Host op `kind` with its parameters over n rows of c codes `x` of
 * (sx, zx), into codes of (sy, zy) that must equal `want`: a blocked
 * [n, c] input (nc/16) into a plain [3, n / 3, c] output, a plain input
 * into a blocked output (in place; its padding lanes must hold zy), and a
 * [1, n, 1, c] NCHWc input (rows strided: through the conversion) into a
 * plain output.  n is a multiple of 3.  Returns the first case's
 * arguments in *a for refusal tests (its tensors stay valid until the
 * next call). */
void int8_rows_layouts(uint32_t kind, const uint8_t *params, uint64_t param_size, int64_t n, int64_t c, float sx,
                       int zx, float sy, int zy, const int8_t *x, const int8_t *want, struct loom_hostop_args *a);
/* The same with a second input, `mask` (QSOFTMAX's), in every case. */
void int8_rows_layouts_masked(uint32_t kind, const uint8_t *params, uint64_t param_size, int64_t n, int64_t c, float sx,
                              int zx, float sy, int zy, const int8_t *x, const int8_t *want,
                              const struct loom_hostop_tensor *mask, struct loom_hostop_args *a);

#endif
