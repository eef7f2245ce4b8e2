/*
 * hostcode.h - native host code carried in a .loom file (section HOSTCODE,
 * format 1.1; docs/hostcode.md).
 *
 * The compiler (sw_compiler/llvm) builds the HOST steps of a model through
 * LLVM into one ELF shared object, specialized to the shapes and
 * quantization parameters of each step, and stores it in the file with a
 * table step -> entry point.  At load time the runtime checks whether the
 * image is for this machine (ELF class, byte order, machine, float ABI):
 *
 *   - it is: the image is checked (hostcode_elf.c), written to an anonymous
 *     memory file (memfd_create) and dlopen'ed through /proc/self/fd/N; the
 *     steps it covers run native code.  Any failure here is an error of the
 *     model load, never a quiet switch to the portable ops;
 *   - it is not: the portable C host ops (hostops.c) run every step, and a
 *     step that exists only as native code (LOOM_HOSTOP_NATIVE) makes the
 *     load fail with LOOM_E_UNSUPPORTED.
 *
 * A handle belongs to one model; nothing here is global.
 */
#ifndef LOOM_HOSTCODE_H
#define LOOM_HOSTCODE_H

#include <stdint.h>

#include "hostops.h"
#include "loomfile.h"

/* Entry-point ABI 1 (LOOM_HOSTCODE_ABI): in[k] / out[k] point at the
 * stored bytes of the step's k-th input / output tensor (the step's slots
 * that are not LOOM_FILE_NO_BUFFER, in order).  Returns 0. */
typedef int32_t (*loom_hostcode_fn)(void *const *in, void *const *out);

struct loom_hostcode;

/* What an ELF image runs on (or what this process is). */
struct loom_hostcode_machine {
  uint16_t machine;   /* ELF e_machine: 62 x86-64, 183 AArch64, 40 ARM */
  uint8_t elf_class;  /* 1 ELFCLASS32, 2 ELFCLASS64 */
  uint8_t big_endian;
  uint8_t hard_float; /* ARM: EF_ARM_ABI_FLOAT_HARD (the gnueabihf calling convention) */
};

/* Opens the native code of `f` (`name` prefixes messages).  *out is NULL
 * when the file has none.  An image for another machine gives a handle with
 * no entries (loom_hostcode_loaded() is 0) unless a NATIVE-only step needs
 * it (LOOM_E_UNSUPPORTED).  A step whose signature differs from its entry's
 * is LOOM_E_FORMAT; an image for this machine that fails the checks or does
 * not load is LOOM_E_FORMAT or LOOM_E_IO. */
loom_status loom_hostcode_open(const struct loom_file *f, const char *name,
                               struct loom_hostcode **out, char msg[LOOM_MSG_MAX]);
void loom_hostcode_close(struct loom_hostcode *hc);

/* The entry point of step `step`, or NULL when it runs portable code (no
 * entry, no handle, or an image for another machine). */
loom_hostcode_fn loom_hostcode_entry(const struct loom_hostcode *hc, uint32_t step);
/* 1 when the image is loaded and its entries are used. */
int loom_hostcode_loaded(const struct loom_hostcode *hc);
/* "native code for x86_64-unknown-linux-gnu: 3 of 5 host steps" or "native
 * code for aarch64-unknown-linux-gnu is not for this machine (x86-64): the
 * portable host ops run". */
const char *loom_hostcode_describe(const struct loom_hostcode *hc);

/* Runs an entry point on a step's tensors. */
loom_status loom_hostcode_call(loom_hostcode_fn fn, const struct loom_hostop_args *a,
                               char msg[LOOM_MSG_MAX]);

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
/* Checks an image for this machine before it is loaded: a shared object
 * (ET_DYN) with its program headers and dynamic section inside the image,
 * no interpreter, no DT_NEEDED (it may not pull in libraries), nothing that
 * runs at load or unload (DT_INIT*, DT_PREINIT_ARRAY, DT_FINI*), no text
 * relocations, and a non-executable stack (PT_GNU_STACK without PF_X). */
int loom_hostcode_elf_check(const uint8_t *img, uint64_t size, char why[128]);

#endif
