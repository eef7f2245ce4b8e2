/*
 * asm.h - the Loom assembler and disassembler (docs/asm.md).
 *
 * The assembler turns a text program (`.config`, `.buffer`, `.tensor`,
 * `.job` and the instructions of each job) into a .loom builder; the
 * disassembler prints a parsed .loom file in the same syntax.  For every
 * file the assembler produces, disassembling and assembling again gives the
 * identical bytes.  Errors in a source name file:line:column.
 */
#ifndef LOOM_ASM_H
#define LOOM_ASM_H

#include <stddef.h>
#include <stdio.h>

#include "loom/loom.h"
#include "loomfile.h"

/* Cap on the constant bytes one program may ask for: the sizes of its
 * const buffers (a sized buffer's zero tail is stored in the file too) plus
 * host-step parameters.  It keeps a 60-byte `.buffer b const 0xffffffff`
 * from writing a 4 GiB file; compiled models do not go through the
 * assembler. */
#define LOOM_ASM_MAX_DATA (UINT64_C(256) << 20)

/* Assembles the program in `path`.  `config_override` (a configuration
 * name such as "tiny", or a hash "0xbe827f10"; NULL for none) replaces the
 * source's .config.  On success *out is a builder ready for
 * loom_file_builder_write(); its contents have already passed
 * loom_file_parse().  On failure *out is NULL and `msg` holds the first
 * error ("gemm.s:14:23: iter_out 20000 does not fit 14 bits (0..16383)"). */
loom_status loom_asm_file(const char *path, const char *config_override,
                          struct loom_file_builder **out, char msg[LOOM_MSG_MAX]);

/* The same for a program in memory (`len` bytes; `name` prefixes messages). */
loom_status loom_asm_string(const char *text, size_t len, const char *name,
                            const char *config_override, struct loom_file_builder **out,
                            char msg[LOOM_MSG_MAX]);

/* Prints `f` as assembler source to `out`.  Fails only when writing fails
 * (LOOM_E_IO). */
loom_status loom_disasm(const struct loom_file *f, FILE *out, char msg[LOOM_MSG_MAX]);

#endif
