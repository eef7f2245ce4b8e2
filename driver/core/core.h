/*
 * core.h - the map of driver/core, the contract every side of Loom shares:
 * the compiler and the simulators stand on it, the runtime stands on them,
 * and nothing here reaches up.  The format-specific parts have headers of
 * their own:
 *
 *   isa.c                the instruction and micro-op codec  (loom/isa.h)
 *   hwconfig.c           the hardware configurations         (loom/hwconfig.h)
 *   loomfile*.c          the .loom reader and writer         (loomfile.h)
 *   npy.c                NumPy .npy files                    (npy.h)
 *   readfile.c           a whole file with a size cap        (readfile.h)
 *   outfile.c            every file Loom writes, atomically  (outfile.h)
 *   progress.c           the progress display of long runs   (progress.h)
 *   hostops*.c           the semantics of host steps         (hostops.h)
 *   hostcode_sig.c,
 *   hostcode_elf.c       native code: signature, ELF checks  (hostcode_format.h)
 *   asm*.c, disasm.c     the ISA's text form                 (asm.h)
 *   status.c, tensor.c   declared here
 */
#ifndef LOOM_CORE_H
#define LOOM_CORE_H

#include <stdint.h>

#include "loom/loom.h"
#include "loomfile.h"

/* ---- status.c: names and errors ---- */

/* "i8", "u8", "i32", "f32", "i64", "bool", ...: the assembler's spelling of
 * each loom_dtype ("-" for LOOM_DT_INVALID). */
extern const char *const loom_dtype_short_names[LOOM_DT_COUNT];

/* Formats a message into `msg` (when non-NULL) and returns `st`: the one
 * way user-space Loom reports a problem with user input. */
loom_status loom_fail(char msg[LOOM_MSG_MAX], loom_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Broken invariants (bugs in Loom, never user input): the one assert macro
 * of user-space Loom.  It reports file and line and aborts, in every build
 * (NDEBUG does not remove it). */
#define LOOM_ASSERT(cond) ((cond) ? (void)0 : loom_assert_fail(__FILE__, __LINE__, #cond))
_Noreturn void loom_assert_fail(const char *file, int line, const char *what);

/* Hot loops built for x86-64-v3 (AVX2) and -v4 (AVX-512) besides the
 * baseline, the widest the CPU has picked at load time (GCC/Clang function
 * multiversioning through an ifunc): fsim's GEMM rows, the host kernels'
 * GEMM.  Not under ASan, whose instrumentation would run before the
 * resolver. */
#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones) && !defined(__SANITIZE_ADDRESS__)
#define LOOM_TARGET_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
#endif
#ifndef LOOM_TARGET_CLONES
#define LOOM_TARGET_CLONES
#endif

/* ---- tensor.c: tensors between the user's form and the stored form ---- */

/* Elements of the logical shape; 0 when a dimension is invalid or the
 * product overflows. */
uint64_t loom_tensor_elems(const struct loom_file_tensor *t);

/* Elements the stored layout occupies (channel padding included); 0 on an
 * invalid layout, rank or overflow. */
uint64_t loom_tensor_stored_elems(const struct loom_file_tensor *t);

/* Converts user data of type `ud` in logical C order into the tensor's
 * stored dtype and layout at `stored` (quantizing f32 when the tensor is a
 * quantized integer tensor).  Channel padding gets the zero point. */
loom_status loom_tensor_write(const struct loom_file_tensor *t, void *stored, loom_dtype ud,
                              const void *user, char msg[LOOM_MSG_MAX]);

/* The inverse: stored form into `user` (type `ud`, logical C order),
 * dequantizing to f32 when asked. */
loom_status loom_tensor_read(const struct loom_file_tensor *t, const void *stored, loom_dtype ud,
                             void *user, char msg[LOOM_MSG_MAX]);

/* Quantizes one value: clamp(round_half_even(x / scale) + zp) to the range
 * of `dt` (I8 or U8).  NaN maps to the zero point. */
int32_t loom_quantize1(float x, float scale, int32_t zp, loom_dtype dt);

#endif
