/*
 * hostcode_format.h - what the core knows about native host code in a .loom
 * file (section HOSTCODE, docs/hostcode.md): the signature tying an entry to
 * its step, the consent to run it (the user's key and the file's
 * SIGNATURE), and the ELF checks an image passes before anything loads it.
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

/* ---- hostcode_trust.c: consent to run native code (docs/hostcode.md) ---- */

#define LOOM_KEY_BYTES 32

/* The user's signing key. */
struct loom_key {
  uint8_t bytes[LOOM_KEY_BYTES];
  uint8_t id[8];   /* names the key in SIGNATURE records and messages */
  char path[4096]; /* where it was found (or would be created) */
};

/* Who made a file's SIGNATURE, as far as one key can tell. */
enum loom_sig_state {
  LOOM_SIG_NONE,      /* no SIGNATURE section */
  LOOM_SIG_MINE,      /* made with the key, over exactly these bytes */
  LOOM_SIG_OTHER_KEY, /* made with another key (or there is no key here) */
  LOOM_SIG_CHANGED,   /* names the key but does not match: changed after signing */
  LOOM_SIG_COUNT
};
const char *loom_sig_state_name(enum loom_sig_state s);

/* $LOOM_KEY_FILE, else $XDG_CONFIG_HOME/loom/key, else ~/.config/loom/key. */
loom_status loom_key_path(char *out, size_t n, char msg[LOOM_MSG_MAX]);
/* Loads the user's key.  With `create`, a missing key is made (32 random
 * bytes as 64 hex digits, mode 0600, race-free).  LOOM_E_NOTFOUND when
 * there is none (and not `create`); LOOM_E_INVALID when the file is not
 * the user's own, may be read or written by others, or is malformed.
 * k->path is filled in either way (empty when no path could be made). */
loom_status loom_key_load(int create, struct loom_key *k, char msg[LOOM_MSG_MAX]);
/* 16 hex digits. */
void loom_key_id_text(const uint8_t id[8], char out[17]);

/* A copy of the .loom file `in` with a SIGNATURE made with `k` (replacing
 * any earlier one); the file becomes version 1.3. */
loom_status loom_file_sign(const uint8_t *in, size_t in_size, const char *name, const struct loom_key *k,
                           uint8_t **out, size_t *out_size, char msg[LOOM_MSG_MAX]);
/* Checks a parsed file's SIGNATURE against `k` (NULL: no key here). */
enum loom_sig_state loom_file_signed_by(const struct loom_file *f, const struct loom_key *k);

/* HMAC-SHA256 of the concatenated parts (libcrypto); 0, or -1 on failure. */
struct loom_span {
  const void *p;
  size_t n;
};
int loom_hmac_sha256(const uint8_t *key, size_t key_len, const struct loom_span *parts, int n, uint8_t out[32]);

/* ---- hostcode_elf.c ---- */

/* This process (compile-time facts of the runtime build). */
struct loom_hostcode_machine loom_hostcode_self(void);
/* Whether code for `m` runs in this process. */
int loom_hostcode_machine_is_self(const struct loom_hostcode_machine *m);
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
