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
 *   2. Can the loader take it without running any of its code?  Native
 *      code runs only with the user's consent (a signature made with the
 *      user's key, or --trust-native; hostcode_trust.c), and only when a
 *      step calls it.  Nothing may run earlier: not while the model loads,
 *      not for a run that is then refused.  The dynamic loader runs code of
 *      an object at dlopen for initializers (DT_INIT, DT_INIT_ARRAY,
 *      DT_PREINIT_ARRAY; DT_FINI* at dlclose), for IFUNC symbols (the
 *      resolver runs when a relocation or dlsym binds one: STT_GNU_IFUNC,
 *      R_*_IRELATIVE), and for the objects it loads alongside (DT_NEEDED,
 *      DT_FILTER, DT_AUXILIARY, DT_AUDIT).  An undefined symbol would bind
 *      to a function of this process (system(), say), and a relocation may
 *      write anywhere relative to the load address, over another library's
 *      function pointers.  The compiler links a shared object with none of
 *      this (hostgen_link.c), so each is refused: only the relocation types
 *      a linker emits for position-independent data (RELATIVE, GLOB_DAT,
 *      JUMP_SLOT, the word-sized absolute one), each writing inside a
 *      writable segment of the image; only defined symbols that are not
 *      IFUNCs; only the dynamic tags Loom's linkers emit; a non-executable
 *      stack (no PT_GNU_STACK, or PF_X on it, makes every thread stack of
 *      the process executable); no segment both writable and executable, no
 *      interpreter, no TLS.
 *
 * The loader reads the dynamic section, the symbols and the relocations at
 * their virtual addresses, not at the offsets a section or program header
 * claims, so this file does the same: every structure is looked up through
 * the PT_LOAD segments and must lie in their file-backed part.  Symbols are
 * counted from both hash tables (what dlsym can reach) and from the
 * relocations (what binding can reach).  Everything is read with bounds
 * checks from the bytes in the file, through memcpy (the image may be
 * unaligned); the image is for this machine (1. above), so in its byte
 * order.  These checks bound what happens before a step is called; what
 * the code does once called is the consent's business (docs/hostcode.md).
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

int loom_hostcode_machine_is_self(const struct loom_hostcode_machine *m) {
  struct loom_hostcode_machine s = loom_hostcode_self();
  return m->machine == s.machine && m->elf_class == s.elf_class && m->big_endian == s.big_endian &&
         m->hard_float == s.hard_float;
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

#define MAX_LOADS 16
#define MAX_CHAIN (1u << 24) /* GNU hash chain steps; bounded by the image anyway */

struct seg {
  uint64_t vaddr, memsz, offset, filesz;
  uint32_t flags;
};

/* What the checks need of the image, either class. */
struct elf_view {
  const uint8_t *p;
  uint64_t size;
  int is64;
  uint16_t machine;
  struct seg load[MAX_LOADS];
  int nload;
  uint64_t dyn_vaddr, dyn_memsz;
  int ndyn;
};

/* The dynamic entries the checks follow (virtual addresses and sizes). */
struct dyn {
  uint64_t symtab, syment, strtab, strsz, hash, gnu_hash;
  uint64_t rela, relasz, relaent, rel, relsz, relent, jmprel, pltrelsz, pltrel;
  uint64_t nsym; /* symbols any hash table or relocation can reach */
};

static uint64_t word(const struct elf_view *e, const uint8_t *q) { return e->is64 ? u64(q) : u32(q); }

/* The image bytes at [vaddr, vaddr + len) if they lie in the file-backed
 * part of one PT_LOAD, else NULL. */
static const uint8_t *vptr(const struct elf_view *e, uint64_t vaddr, uint64_t len) {
  for (int i = 0; i < e->nload; i++) {
    const struct seg *s = &e->load[i];
    if (vaddr >= s->vaddr && vaddr - s->vaddr <= s->filesz && len <= s->filesz - (vaddr - s->vaddr))
      return e->p + s->offset + (vaddr - s->vaddr);
  }
  return NULL;
}

/* Does [vaddr, vaddr + len) lie in a writable PT_LOAD? */
static int writable(const struct elf_view *e, uint64_t vaddr, uint64_t len) {
  for (int i = 0; i < e->nload; i++) {
    const struct seg *s = &e->load[i];
    if ((s->flags & PF_W) && vaddr >= s->vaddr && vaddr - s->vaddr <= s->memsz && len <= s->memsz - (vaddr - s->vaddr))
      return 1;
  }
  return 0;
}

static int fail(char why[128], const char *what) { return snprintf(why, 128, "%s", what), -1; }

/* ---- program headers ---- */

static void read_phdr(const struct elf_view *e, const uint8_t *q, uint32_t *type, struct seg *s) {
  if (e->is64) {
    *type = u32(q + offsetof(Elf64_Phdr, p_type));
    *s = (struct seg){u64(q + offsetof(Elf64_Phdr, p_vaddr)), u64(q + offsetof(Elf64_Phdr, p_memsz)),
                      u64(q + offsetof(Elf64_Phdr, p_offset)), u64(q + offsetof(Elf64_Phdr, p_filesz)),
                      u32(q + offsetof(Elf64_Phdr, p_flags))};
  } else {
    *type = u32(q + offsetof(Elf32_Phdr, p_type));
    *s = (struct seg){u32(q + offsetof(Elf32_Phdr, p_vaddr)), u32(q + offsetof(Elf32_Phdr, p_memsz)),
                      u32(q + offsetof(Elf32_Phdr, p_offset)), u32(q + offsetof(Elf32_Phdr, p_filesz)),
                      u32(q + offsetof(Elf32_Phdr, p_flags))};
  }
}

static int add_load(struct elf_view *e, const struct seg *s, char why[128]) {
  if (e->nload == MAX_LOADS) return fail(why, "the image has more than 16 loadable segments");
  if (s->offset > e->size || s->filesz > e->size - s->offset || s->filesz > s->memsz ||
      s->memsz > UINT64_MAX - s->vaddr)
    return fail(why, "a loadable segment lies outside the image");
  if ((s->flags & PF_W) && (s->flags & PF_X)) return fail(why, "a segment is both writable and executable");
  if (e->nload && s->vaddr < e->load[e->nload - 1].vaddr + e->load[e->nload - 1].memsz)
    return fail(why, "the loadable segments overlap or are out of order");
  e->load[e->nload++] = *s;
  return 0;
}

/* One program header; *stack is set by PT_GNU_STACK. */
static int check_phdr(struct elf_view *e, uint32_t type, const struct seg *s, int *stack, char why[128]) {
  switch (type) {
  case PT_LOAD: return add_load(e, s, why);
  case PT_DYNAMIC:
    if (e->ndyn++) return fail(why, "the image has two dynamic sections");
    e->dyn_vaddr = s->vaddr, e->dyn_memsz = s->memsz;
    return 0;
  case PT_INTERP: return fail(why, "the image names a program interpreter");
  case PT_TLS: return fail(why, "the image has thread-local storage (PT_TLS)");
  case PT_GNU_STACK:
    *stack = 1;
    return s->flags & PF_X ? fail(why, "the image asks for an executable stack") : 0;
  default: return 0;
  }
}

static int view(const uint8_t *img, uint64_t size, struct elf_view *e, char why[128]) {
  struct loom_hostcode_machine m;
  if (loom_hostcode_elf_machine(img, size, &m, why)) return -1;
  memset(e, 0, sizeof *e);
  e->p = img, e->size = size, e->is64 = m.elf_class == ELFCLASS64, e->machine = m.machine;
  uint16_t type = u16(img + offsetof(Elf64_Ehdr, e_type));
  uint64_t phoff = e->is64 ? u64(img + offsetof(Elf64_Ehdr, e_phoff)) : u32(img + offsetof(Elf32_Ehdr, e_phoff));
  uint16_t phentsize = e->is64 ? u16(img + offsetof(Elf64_Ehdr, e_phentsize)) : u16(img + offsetof(Elf32_Ehdr, e_phentsize));
  uint16_t phnum = e->is64 ? u16(img + offsetof(Elf64_Ehdr, e_phnum)) : u16(img + offsetof(Elf32_Ehdr, e_phnum));
  if (type != ET_DYN) return snprintf(why, 128, "ELF type %u is not a shared object (ET_DYN)", type), -1;
  if (phentsize != (e->is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)) || phnum == 0 || phoff > size ||
      (uint64_t)phnum * phentsize > size - phoff)
    return fail(why, "the program headers lie outside the image");
  int stack = 0;
  for (uint16_t i = 0; i < phnum; i++) {
    uint32_t pt;
    struct seg s;
    read_phdr(e, img + phoff + (uint64_t)i * phentsize, &pt, &s);
    if (check_phdr(e, pt, &s, &stack, why)) return -1;
  }
  if (!stack) return fail(why, "the image has no PT_GNU_STACK (the loader would make stacks executable)");
  if (!e->ndyn) return fail(why, "the image has no dynamic section");
  return 0;
}

/* ---- dynamic tags ---- */

/* Why a tag is refused, or NULL for the tags Loom's linkers emit. */
static const char *tag_problem(int64_t tag, uint64_t val) {
  switch (tag) {
  case DT_NEEDED: return "depends on another shared library (DT_NEEDED)";
  case DT_INIT: case DT_FINI: return "has an initializer or finalizer (DT_INIT / DT_FINI)";
  case DT_INIT_ARRAY: case DT_FINI_ARRAY: case DT_PREINIT_ARRAY:
  case DT_INIT_ARRAYSZ: case DT_FINI_ARRAYSZ: case DT_PREINIT_ARRAYSZ:
    return "has constructors or destructors (DT_INIT_ARRAY, DT_FINI_ARRAY, DT_PREINIT_ARRAY)";
  case DT_FILTER: case DT_AUXILIARY: return "names a filtee to load (DT_FILTER / DT_AUXILIARY)";
  case DT_AUDIT: case DT_DEPAUDIT: return "names an auditing library (DT_AUDIT / DT_DEPAUDIT)";
  case DT_TEXTREL: return "has text relocations (DT_TEXTREL)";
  case DT_FLAGS: return val & DF_TEXTREL ? "has text relocations (DF_TEXTREL)" : NULL;
  case DT_RPATH: case DT_RUNPATH: return "has a library search path (DT_RPATH / DT_RUNPATH)";
  case DT_VERNEED: case DT_VERNEEDNUM: return "needs symbol versions of other libraries (DT_VERNEED)";
  case DT_RELR: case DT_RELRSZ: case DT_RELRENT: return "has packed relocations (DT_RELR)";
  case DT_HASH: case DT_GNU_HASH: case DT_STRTAB: case DT_SYMTAB: case DT_STRSZ: case DT_SYMENT:
  case DT_RELA: case DT_RELASZ: case DT_RELAENT: case DT_REL: case DT_RELSZ: case DT_RELENT:
  case DT_JMPREL: case DT_PLTRELSZ: case DT_PLTREL: case DT_PLTGOT: case DT_SONAME: case DT_FLAGS_1:
  case DT_BIND_NOW: case DT_RELACOUNT: case DT_RELCOUNT: case DT_VERSYM: case DT_VERDEF:
  case DT_VERDEFNUM: case DT_SYMBOLIC: case DT_DEBUG: case DT_GNU_PRELINKED: case DT_CHECKSUM:
    return NULL;
  default: return "has a dynamic tag Loom's linkers never emit";
  }
}

static void record(struct dyn *d, int64_t tag, uint64_t val) {
  switch (tag) {
  case DT_SYMTAB: d->symtab = val; break;
  case DT_SYMENT: d->syment = val; break;
  case DT_STRTAB: d->strtab = val; break;
  case DT_STRSZ: d->strsz = val; break;
  case DT_HASH: d->hash = val; break;
  case DT_GNU_HASH: d->gnu_hash = val; break;
  case DT_RELA: d->rela = val; break;
  case DT_RELASZ: d->relasz = val; break;
  case DT_RELAENT: d->relaent = val; break;
  case DT_REL: d->rel = val; break;
  case DT_RELSZ: d->relsz = val; break;
  case DT_RELENT: d->relent = val; break;
  case DT_JMPREL: d->jmprel = val; break;
  case DT_PLTRELSZ: d->pltrelsz = val; break;
  case DT_PLTREL: d->pltrel = val; break;
  default: break;
  }
}

/* Reads the dynamic section where the loader does, up to DT_NULL. */
static int read_dynamic(const struct elf_view *e, struct dyn *d, char why[128]) {
  uint64_t es = e->is64 ? sizeof(Elf64_Dyn) : sizeof(Elf32_Dyn);
  memset(d, 0, sizeof *d);
  for (uint64_t at = 0;; at += es) {
    const uint8_t *q = at < e->dyn_memsz ? vptr(e, e->dyn_vaddr + at, es) : NULL;
    if (!q) return fail(why, "the dynamic section lies outside the image or has no DT_NULL end");
    int64_t tag = e->is64 ? (int64_t)u64(q) : (int32_t)u32(q);
    uint64_t val = word(e, q + es / 2);
    if (tag == DT_NULL) return 0;
    const char *p = tag_problem(tag, val);
    if (p) return snprintf(why, 128, "the shared object %s (tag 0x%llx)", p, (unsigned long long)tag), -1;
    record(d, tag, val);
  }
}

/* ---- symbols ---- */

/* Symbols DT_HASH reaches: its nchain. */
static int hash_count(const struct elf_view *e, const struct dyn *d, uint64_t *n, char why[128]) {
  const uint8_t *h = vptr(e, d->hash, 8);
  if (!h || !vptr(e, d->hash, 8 + 4 * ((uint64_t)u32(h) + u32(h + 4))))
    return fail(why, "the symbol hash table (DT_HASH) lies outside the image");
  if (u32(h + 4) > *n) *n = u32(h + 4);
  return 0;
}

/* Symbols DT_GNU_HASH reaches: past the end of its longest chain. */
static int gnu_hash_count(const struct elf_view *e, const struct dyn *d, uint64_t *n, char why[128]) {
  const uint8_t *h = vptr(e, d->gnu_hash, 16);
  if (!h) return fail(why, "the GNU hash table lies outside the image");
  uint32_t nbuckets = u32(h), symoffset = u32(h + 4), bloom = u32(h + 8);
  uint64_t buckets = d->gnu_hash + 16 + (uint64_t)bloom * (e->is64 ? 8 : 4), chains = buckets + 4ull * nbuckets;
  const uint8_t *b = vptr(e, buckets, 4ull * nbuckets);
  if (!b) return fail(why, "the GNU hash table lies outside the image");
  if (symoffset > *n) *n = symoffset;
  for (uint32_t i = 0; i < nbuckets; i++) {
    uint64_t sym = u32(b + 4ull * i);
    if (!sym) continue;
    if (sym < symoffset) return fail(why, "the GNU hash table has a bucket below its symbol offset");
    for (uint32_t steps = 0;; sym++, steps++) {
      const uint8_t *c = vptr(e, chains + 4 * (sym - symoffset), 4);
      if (!c || steps > MAX_CHAIN) return fail(why, "a GNU hash chain runs outside the image");
      if (u32(c) & 1) break;
    }
    if (sym + 1 > *n) *n = sym + 1;
  }
  return 0;
}

/* "name" of a dynamic symbol, or "?" when its name is not in DT_STRTAB. */
static const char *sym_name(const struct elf_view *e, const struct dyn *d, uint32_t off) {
  const uint8_t *s = off < d->strsz ? vptr(e, d->strtab + off, d->strsz - off) : NULL;
  return s && memchr(s, 0, d->strsz - off) ? (const char *)s : "?";
}

/* Every symbol that dlsym or a relocation can reach: defined, not an IFUNC. */
static int check_symbols(const struct elf_view *e, const struct dyn *d, char why[128]) {
  uint64_t es = e->is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
  if (!d->nsym) return 0;
  if (d->syment != es || d->nsym > e->size / es || !vptr(e, d->symtab, d->nsym * es))
    return fail(why, "the dynamic symbol table lies outside the image");
  if (!vptr(e, d->strtab, d->strsz)) return fail(why, "the dynamic string table lies outside the image");
  for (uint64_t i = 1; i < d->nsym; i++) {
    const uint8_t *q = vptr(e, d->symtab + i * es, es);
    uint32_t name = u32(q);
    uint8_t info = e->is64 ? q[offsetof(Elf64_Sym, st_info)] : q[offsetof(Elf32_Sym, st_info)];
    uint16_t shndx = e->is64 ? u16(q + offsetof(Elf64_Sym, st_shndx)) : u16(q + offsetof(Elf32_Sym, st_shndx));
    if (ELF64_ST_TYPE(info) == STT_GNU_IFUNC)
      return snprintf(why, 128, "symbol '%.40s' is an IFUNC (its resolver would run at load)",
                      sym_name(e, d, name)), -1;
    if (shndx == SHN_UNDEF && ELF64_ST_BIND(info) != STB_LOCAL)
      return snprintf(why, 128, "the image imports symbol '%.40s' (Loom's code links nothing)",
                      sym_name(e, d, name)), -1;
  }
  return 0;
}

/* ---- relocations ---- */

/* The relocation types a linker emits for position-independent data, per
 * machine; everything else (IRELATIVE above all, TLS, COPY) is refused. */
static int reloc_ok(uint16_t machine, uint32_t type) {
  switch (machine) {
  case EM_X86_64:
    return type == R_X86_64_NONE || type == R_X86_64_64 || type == R_X86_64_GLOB_DAT ||
           type == R_X86_64_JUMP_SLOT || type == R_X86_64_RELATIVE;
  case EM_AARCH64:
    return type == R_AARCH64_NONE || type == R_AARCH64_ABS64 || type == R_AARCH64_GLOB_DAT ||
           type == R_AARCH64_JUMP_SLOT || type == R_AARCH64_RELATIVE;
  case EM_ARM:
    return type == R_ARM_NONE || type == R_ARM_ABS32 || type == R_ARM_GLOB_DAT || type == R_ARM_JUMP_SLOT ||
           type == R_ARM_RELATIVE;
  case EM_386:
    return type == R_386_NONE || type == R_386_32 || type == R_386_GLOB_DAT || type == R_386_JMP_SLOT ||
           type == R_386_RELATIVE;
  default: return type == 0;
  }
}

static int is_irelative(uint16_t machine, uint32_t type) {
  return (machine == EM_X86_64 && type == R_X86_64_IRELATIVE) ||
         (machine == EM_AARCH64 && type == R_AARCH64_IRELATIVE) ||
         (machine == EM_ARM && type == R_ARM_IRELATIVE) || (machine == EM_386 && type == R_386_IRELATIVE);
}

/* A table of REL or RELA records: entries of the class's size, inside the
 * image; returns the records' pointer or NULL after filling `why`. */
static const uint8_t *reloc_table(const struct elf_view *e, uint64_t addr, uint64_t size, uint64_t ent,
                                  int rela, char why[128]) {
  uint64_t want = e->is64 ? (rela ? sizeof(Elf64_Rela) : sizeof(Elf64_Rel))
                          : (rela ? sizeof(Elf32_Rela) : sizeof(Elf32_Rel));
  const uint8_t *t = vptr(e, addr, size);
  if (ent != want || size % want) return fail(why, "a relocation table has records of the wrong size"), NULL;
  if (!t) return fail(why, "a relocation table lies outside the image"), NULL;
  return t;
}

/* Raises d->nsym to cover every symbol the table names (pass 0), or checks
 * each record's type and target (pass 1). */
static int scan_relocs(const struct elf_view *e, struct dyn *d, uint64_t addr, uint64_t size, uint64_t ent,
                       int rela, int pass, char why[128]) {
  if (!size) return 0;
  const uint8_t *t = reloc_table(e, addr, size, ent, rela, why);
  if (!t) return -1;
  for (uint64_t at = 0; at < size; at += ent) {
    uint64_t off = word(e, t + at), info = word(e, t + at + (e->is64 ? 8 : 4));
    uint64_t sym = e->is64 ? ELF64_R_SYM(info) : ELF32_R_SYM(info);
    uint32_t type = e->is64 ? (uint32_t)ELF64_R_TYPE(info) : (uint32_t)ELF32_R_TYPE(info);
    if (pass == 0) {
      if (sym + 1 > d->nsym) d->nsym = sym + 1;
      continue;
    }
    if (is_irelative(e->machine, type))
      return fail(why, "the image has an IRELATIVE relocation (an IFUNC resolver would run at load)");
    if (!reloc_ok(e->machine, type))
      return snprintf(why, 128, "the image has a relocation of type %u, which Loom's linkers never emit", type), -1;
    if (type && !writable(e, off, e->is64 ? 8 : 4))
      return snprintf(why, 128, "a relocation writes at 0x%llx, outside the image's writable segments",
                      (unsigned long long)off), -1;
  }
  return 0;
}

static int check_relocs(const struct elf_view *e, struct dyn *d, int pass, char why[128]) {
  if (d->pltrelsz && d->pltrel != DT_RELA && d->pltrel != DT_REL)
    return fail(why, "DT_PLTREL is neither DT_RELA nor DT_REL");
  uint64_t pltent = d->pltrel == DT_RELA ? (e->is64 ? sizeof(Elf64_Rela) : sizeof(Elf32_Rela))
                                         : (e->is64 ? sizeof(Elf64_Rel) : sizeof(Elf32_Rel));
  if (scan_relocs(e, d, d->rela, d->relasz, d->relaent, 1, pass, why) ||
      scan_relocs(e, d, d->rel, d->relsz, d->relent, 0, pass, why) ||
      scan_relocs(e, d, d->jmprel, d->pltrelsz, pltent, d->pltrel == DT_RELA, pass, why))
    return -1;
  return 0;
}

int loom_hostcode_elf_check(const uint8_t *img, uint64_t size, char why[128]) {
  struct elf_view e;
  struct dyn d;
  if (view(img, size, &e, why) || read_dynamic(&e, &d, why)) return -1;
  if (d.hash && hash_count(&e, &d, &d.nsym, why)) return -1;
  if (d.gnu_hash && gnu_hash_count(&e, &d, &d.nsym, why)) return -1;
  if (check_relocs(&e, &d, 0, why) || check_symbols(&e, &d, why) || check_relocs(&e, &d, 1, why)) return -1;
  return 0;
}
