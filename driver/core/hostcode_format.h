/*
 * hostcode_format.h - what the core knows about native host code in a .loom
 * file (section HOSTCODE, docs/hostcode.md): the signature tying an entry to
 * its step, and the ELF checks an image passes before anything loads it.
 * The compiler (sw_compiler/llvm) writes such images; the runtime
 * (driver/lib/hostcode.c) loads them.
 */
#ifndef LOOM_HOSTCODE_FORMAT_H
#define LOOM_HOSTCODE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "loomfile.h"

/* What an ELF image runs on (or what this process is). */
struct loom_hostcode_machine {
  uint16_t machine;   /* ELF e_machine: 62 x86-64, 183 AArch64, 40 ARM */
  uint8_t elf_class;  /* 1 ELFCLASS32, 2 ELFCLASS64 */
  uint8_t big_endian;
  uint8_t hard_float; /* ARM: EF_ARM_ABI_FLOAT_HARD (the gnueabihf calling convention) */
};

/* What native code for step `step` is specialized to: FNV-1a over the op,
 * the dtype, layout, shape and quantization of each tensor slot, and the
 * parameter bytes (not names, buffers or offsets).  The compiler stores it
 * in the entry; the runtime recomputes it. */
uint64_t loom_hostcode_signature(const struct loom_file *f, uint32_t step);

/* ---- hostcode_elf.c ---- */

/* This process (compile-time facts of the runtime build). */
struct loom_hostcode_machine loom_hostcode_self(void);
/* "x86-64", "AArch64", "ARM (hard-float)", "machine 243 (ELF64)". */
void loom_hostcode_machine_text(const struct loom_hostcode_machine *m, char *buf, size_t len);
/* Reads the ELF header of `img`: 0, or -1 with a reason in `why`. */
int loom_hostcode_elf_machine(const uint8_t *img, uint64_t size, struct loom_hostcode_machine *m,
                              char why[128]);
/* Checks an image for this machine before it is loaded, so that dlopen
 * and dlsym run none of its code: a shared object (ET_DYN) whose
 * segments, dynamic section, symbols and relocations lie inside the image
 * (read at their virtual addresses, as the loader reads them); no
 * interpreter, no TLS, no segment both writable and executable, a
 * non-executable stack (PT_GNU_STACK without PF_X); only the dynamic tags
 * Loom's linkers emit (no DT_NEEDED, DT_FILTER, DT_AUXILIARY, DT_AUDIT,
 * DT_INIT*, DT_FINI*, DT_PREINIT_ARRAY, text relocations, search paths,
 * version needs); every symbol a hash table or a relocation reaches
 * defined and not an IFUNC; only RELATIVE, GLOB_DAT, JUMP_SLOT and
 * word-sized absolute relocations (no IRELATIVE), each writing inside a
 * writable segment.  0, or -1 with the reason in `why`. */
int loom_hostcode_elf_check(const uint8_t *img, uint64_t size, char why[128]);

#endif
