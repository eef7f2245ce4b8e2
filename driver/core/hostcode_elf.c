/*
 * hostcode_elf.c - what an ELF image of native host code runs on, and the
 * checks it passes before the runtime loads it.
 *
 * Two questions are asked of the image in a .loom file's HOSTCODE:
 *
 *   1. Is it for this machine?  ELF class (32/64-bit), byte order, e_machine
 *      and, on ARM, the float ABI in e_flags.  The compiler's target triple
 *      decides all four (x86_64-*-linux-gnu: ELF64 x86-64; aarch64: ELF64
 *      AArch64; armv7-*-gnueabihf: ELF32 ARM, hard-float), so comparing them
 *      with the process's own build is comparing triples without parsing
 *      strings.  A different answer is not an error: the runtime uses the
 *      portable host ops.
 *
 *   2. Is it something the loader can take without side effects?  The
 *      compiler links a shared object with no dependencies, no initializers
 *      and a non-executable stack; an image that is not like that was not
 *      made by Loom, and dlopen'ing it could pull in libraries, run code at
 *      load time, or (no PT_GNU_STACK, or PF_X on it) make every thread
 *      stack of the process executable.  So those are refused.
 *
 * Native code is code: a .loom file with HOSTCODE is as trusted as an
 * executable (docs/hostcode.md).  These checks stop accidents and foreign
 * files, they do not sandbox.  Everything is read with bounds checks from
 * the bytes in the file, through memcpy (the image may be unaligned).
 */
#include <elf.h>
#include <stdio.h>
#include <string.h>

#include "hostcode_format.h"

struct loom_hostcode_machine loom_hostcode_self(void) {
  struct loom_hostcode_machine m = {.elf_class = sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32};
#if defined(__x86_64__)
  m.machine = EM_X86_64;
#elif defined(__aarch64__)
  m.machine = EM_AARCH64;
#elif defined(__arm__)
  m.machine = EM_ARM;
#if defined(__ARM_PCS_VFP)
  m.hard_float = 1;
#endif
#elif defined(__i386__)
  m.machine = EM_386;
#elif defined(__riscv)
  m.machine = EM_RISCV;
#else
  m.machine = EM_NONE; /* no image ever matches: portable host ops only */
#endif
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  m.big_endian = 1;
#endif
  return m;
}

void loom_hostcode_machine_text(const struct loom_hostcode_machine *m, char *buf, size_t len) {
  const char *bits = m->elf_class == ELFCLASS64 ? "ELF64" : "ELF32", *end = m->big_endian ? ", big-endian" : "";
  switch (m->machine) {
  case EM_X86_64: snprintf(buf, len, "x86-64%s%s", m->elf_class == ELFCLASS32 ? " (x32)" : "", end); break;
  case EM_AARCH64: snprintf(buf, len, "AArch64%s", end); break;
  case EM_ARM: snprintf(buf, len, "ARM (%s-float)%s", m->hard_float ? "hard" : "soft", end); break;
  case EM_386: snprintf(buf, len, "i386"); break;
  default: snprintf(buf, len, "machine %u (%s%s)", m->machine, bits, end); break;
  }
}

static uint16_t u16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static uint32_t u32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t u64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

int loom_hostcode_elf_machine(const uint8_t *img, uint64_t size, struct loom_hostcode_machine *m,
                              char why[128]) {
  memset(m, 0, sizeof *m);
  if (size < EI_NIDENT || memcmp(img, ELFMAG, SELFMAG))
    return snprintf(why, 128, "not an ELF file"), -1;
  m->elf_class = img[EI_CLASS];
  m->big_endian = img[EI_DATA] == ELFDATA2MSB;
  if ((m->elf_class != ELFCLASS32 && m->elf_class != ELFCLASS64) ||
      (img[EI_DATA] != ELFDATA2LSB && img[EI_DATA] != ELFDATA2MSB))
    return snprintf(why, 128, "ELF class %u / data encoding %u is not defined", img[EI_CLASS], img[EI_DATA]), -1;
  if (size < (m->elf_class == ELFCLASS64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr)))
    return snprintf(why, 128, "the ELF header is truncated"), -1;
  uint16_t mach = u16(img + offsetof(Elf64_Ehdr, e_machine)); /* same place in both classes */
  m->machine = m->big_endian ? (uint16_t)(mach >> 8 | mach << 8) : mach;
  uint32_t flags = m->elf_class == ELFCLASS64 ? u32(img + offsetof(Elf64_Ehdr, e_flags))
                                              : u32(img + offsetof(Elf32_Ehdr, e_flags));
  m->hard_float = !m->big_endian && m->machine == EM_ARM && (flags & EF_ARM_ABI_FLOAT_HARD) != 0;
  return 0;
}

/* ---- the image of this machine, before dlopen ---- */

/* The fields of the ELF and program headers the checks need, either class. */
struct elf_view {
  const uint8_t *p;
  uint64_t size;
  int is64;
  uint64_t phoff;
  uint16_t type, phentsize, phnum;
};

struct phdr {
  uint32_t type, flags;
  uint64_t offset, filesz;
};

static void read_phdr(const struct elf_view *e, uint16_t i, struct phdr *ph) {
  const uint8_t *q = e->p + e->phoff + (uint64_t)i * e->phentsize;
  if (e->is64) {
    *ph = (struct phdr){u32(q + offsetof(Elf64_Phdr, p_type)), u32(q + offsetof(Elf64_Phdr, p_flags)),
                        u64(q + offsetof(Elf64_Phdr, p_offset)), u64(q + offsetof(Elf64_Phdr, p_filesz))};
  } else {
    *ph = (struct phdr){u32(q + offsetof(Elf32_Phdr, p_type)), u32(q + offsetof(Elf32_Phdr, p_flags)),
                        u32(q + offsetof(Elf32_Phdr, p_offset)), u32(q + offsetof(Elf32_Phdr, p_filesz))};
  }
}

static int view(const uint8_t *img, uint64_t size, struct elf_view *e, char why[128]) {
  e->p = img, e->size = size, e->is64 = img[EI_CLASS] == ELFCLASS64;
  e->type = u16(img + offsetof(Elf64_Ehdr, e_type));
  e->phoff = e->is64 ? u64(img + offsetof(Elf64_Ehdr, e_phoff)) : u32(img + offsetof(Elf32_Ehdr, e_phoff));
  e->phentsize = e->is64 ? u16(img + offsetof(Elf64_Ehdr, e_phentsize)) : u16(img + offsetof(Elf32_Ehdr, e_phentsize));
  e->phnum = e->is64 ? u16(img + offsetof(Elf64_Ehdr, e_phnum)) : u16(img + offsetof(Elf32_Ehdr, e_phnum));
  if (e->type != ET_DYN) return snprintf(why, 128, "ELF type %u is not a shared object (ET_DYN)", e->type), -1;
  if (e->phentsize != (e->is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)) || e->phnum == 0 ||
      e->phoff > size || (uint64_t)e->phnum * e->phentsize > size - e->phoff)
    return snprintf(why, 128, "the program headers lie outside the image"), -1;
  return 0;
}

/* Dynamic tags that would load libraries, run code or write to text. */
static const char *dyn_problem(int64_t tag, uint64_t val) {
  switch (tag) {
  case DT_NEEDED: return "depends on another shared library (DT_NEEDED)";
  case DT_INIT: case DT_FINI: return "has an initializer or finalizer (DT_INIT / DT_FINI)";
  case DT_INIT_ARRAYSZ: case DT_FINI_ARRAYSZ: case DT_PREINIT_ARRAYSZ:
    return val ? "has constructors or destructors (DT_*_ARRAY)" : NULL;
  case DT_TEXTREL: return "has text relocations (DT_TEXTREL)";
  case DT_FLAGS: return val & DF_TEXTREL ? "has text relocations (DF_TEXTREL)" : NULL;
  default: return NULL;
  }
}

static int check_dynamic(const struct elf_view *e, const struct phdr *ph, char why[128]) {
  uint64_t es = e->is64 ? sizeof(Elf64_Dyn) : sizeof(Elf32_Dyn);
  if (ph->offset > e->size || ph->filesz > e->size - ph->offset)
    return snprintf(why, 128, "the dynamic section lies outside the image"), -1;
  for (uint64_t at = ph->offset; at + es <= ph->offset + ph->filesz; at += es) {
    int64_t tag = e->is64 ? (int64_t)u64(e->p + at) : (int32_t)u32(e->p + at);
    uint64_t val = e->is64 ? u64(e->p + at + 8) : u32(e->p + at + 4);
    if (tag == DT_NULL) return 0;
    const char *p = dyn_problem(tag, val);
    if (p) return snprintf(why, 128, "the shared object %s", p), -1;
  }
  return snprintf(why, 128, "the dynamic section has no DT_NULL end"), -1;
}

int loom_hostcode_elf_check(const uint8_t *img, uint64_t size, char why[128]) {
  struct elf_view e;
  int stack = 0, dynamic = 0;
  if (view(img, size, &e, why)) return -1;
  for (uint16_t i = 0; i < e.phnum; i++) {
    struct phdr ph;
    read_phdr(&e, i, &ph);
    if (ph.type == PT_INTERP) return snprintf(why, 128, "the image names a program interpreter"), -1;
    if (ph.type == PT_GNU_STACK && (ph.flags & PF_X))
      return snprintf(why, 128, "the image asks for an executable stack"), -1;
    stack |= ph.type == PT_GNU_STACK;
    if (ph.type == PT_DYNAMIC) {
      if (check_dynamic(&e, &ph, why)) return -1;
      dynamic = 1;
    }
  }
  if (!stack) return snprintf(why, 128, "the image has no PT_GNU_STACK (the loader would make stacks executable)"), -1;
  if (!dynamic) return snprintf(why, 128, "the image has no dynamic section"), -1;
  return 0;
}
