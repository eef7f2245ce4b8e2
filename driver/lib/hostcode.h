/*
 * hostcode.h - native host code carried in a .loom file (section HOSTCODE,
 * format 1.1; docs/hostcode.md).
 *
 * The compiler (sw_compiler/llvm) builds the HOST steps of a model through
 * LLVM into one ELF shared object, specialized to the shapes and
 * quantization parameters of each step, and stores it in the file with a
 * table step -> entry point.  At load time the runtime checks whether the
 * image is for this machine (ELF class, byte order, machine, float ABI),
 * and whether the user consented to run it (the file is signed with the
 * user's key, hostcode_trust.c, or the caller trusts it):
 *
 *   - it is, with consent: the image is checked (hostcode_elf.c), written to an anonymous
 *     memory file (memfd_create) and dlopen'ed through /proc/self/fd/N; the
 *     steps it covers run native code.  Any failure here is an error of the
 *     model load, never a quiet switch to the portable ops;
 *   - it is not, or without consent: nothing of the image is loaded, the
 *     portable C host ops (hostops.c) run every step, and a step that exists
 *     only as native code (LOOM_HOSTOP_NATIVE) makes the load fail with
 *     LOOM_E_UNSUPPORTED.
 *
 * A handle belongs to one model; nothing here is global.
 */
#ifndef LOOM_HOSTCODE_H
#define LOOM_HOSTCODE_H

#include <stdint.h>

#include "driver/core/hostcode_format.h"
#include "driver/core/hostops.h"
#include "driver/core/loomfile.h"

/* Entry-point ABI 1 (LOOM_HOSTCODE_ABI): in[k] / out[k] point at the
 * stored bytes of the step's k-th input / output tensor (the step's slots
 * that are not LOOM_FILE_NO_BUFFER, in order).  Returns 0. */
typedef int32_t (*loom_hostcode_fn)(void *const *in, void *const *out);

struct loom_hostcode;

/* Opens the native code of `f` (`name` prefixes messages); `trust` runs it
 * without a signature made with the user's key.  *out is NULL when the file
 * has none.  An image for another machine, or one not consented to, gives a
 * handle with no entries (loom_hostcode_loaded() is 0) unless a NATIVE-only
 * step needs it (LOOM_E_UNSUPPORTED).  A step whose signature differs from its entry's
 * is LOOM_E_FORMAT; an image for this machine that fails the checks or does
 * not load is LOOM_E_FORMAT or LOOM_E_IO. */
loom_status loom_hostcode_open(const struct loom_file *f, const char *name, int trust,
                               struct loom_hostcode **out, char msg[LOOM_MSG_MAX]);
void loom_hostcode_close(struct loom_hostcode *hc);

/* The entry point of step `step`, or NULL when it runs portable code (no
 * entry, no handle, or an image for another machine). */
loom_hostcode_fn loom_hostcode_entry(const struct loom_hostcode *hc, uint32_t step);
/* 1 when the image is loaded and its entries are used. */
int loom_hostcode_loaded(const struct loom_hostcode *hc);
/* What happens to the file's native code (LOOM_NATIVE_NONE for NULL). */
loom_native_state loom_hostcode_state(const struct loom_hostcode *hc);
/* "native code for x86_64-unknown-linux-gnu: 3 of the host steps", "its
 * native code for aarch64-unknown-linux-gnu (AArch64) does not run on this
 * machine (x86-64): the portable host ops run", "its native code for
 * x86_64-unknown-linux-gnu is not signed: the portable host ops run
 * (--trust-native runs it)". */
const char *loom_hostcode_describe(const struct loom_hostcode *hc);

/* Runs an entry point on a step's tensors. */
loom_status loom_hostcode_call(loom_hostcode_fn fn, const struct loom_hostop_args *a,
                               char msg[LOOM_MSG_MAX]);

#endif
