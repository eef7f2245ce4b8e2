/*
 * test_hostcode_elf.c - the checks an image of native host code passes
 * before dlopen (driver/core/hostcode_elf.c): nothing in it may run before
 * a step is called.
 *
 * Each case takes a real image the compiler made (the IM2COL step of the
 * digits CNN for x86-64, tests/fuzz/corpus/hostcode/x86_64-im2col.so: a
 * shared object with one exported function, a dynamic section of ten
 * entries and no relocations) and changes the bytes the dynamic loader
 * would act on: an IFUNC symbol, an undefined (imported) symbol, each
 * refused dynamic tag (DT_NEEDED, DT_INIT_ARRAY, DT_FILTER, DT_AUXILIARY,
 * DT_AUDIT, ...), a dynamic section whose virtual address differs from its
 * file offset, a second PT_DYNAMIC, PT_TLS, a writable and executable
 * segment, an executable stack, relocation tables with IRELATIVE, COPY or
 * out-of-image targets, a broken GNU hash table; every truncation of the
 * image must be refused without reading past it (make test-san).
 * tests/cli/test_native_consent.sh links such images for real through the
 * compiler's LOOM_LD hook and checks that their code never runs.
 */
#include <elf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "driver/core/hostcode_format.h"
#include "driver/core/readfile.h"

#define SEED "tests/fuzz/corpus/hostcode/x86_64-im2col.so"

struct img {
  uint8_t *p;
  size_t size;
  Elf64_Ehdr eh;
};

static int setup(void **state) {
  struct img *m = calloc(1, sizeof *m);
  char msg[LOOM_MSG_MAX];
  assert_int_equal(loom_read_file(SEED, 1 << 20, &m->p, &m->size, msg), LOOM_OK);
  memcpy(&m->eh, m->p, sizeof m->eh);
  *state = m;
  return 0;
}

static int teardown(void **state) {
  struct img *m = *state;
  free(m->p);
  free(m);
  return 0;
}

static Elf64_Phdr *phdr(struct img *m, int i) { return (Elf64_Phdr *)(m->p + m->eh.e_phoff) + i; }

static Elf64_Phdr *find_phdr(struct img *m, uint32_t type) {
  for (int i = 0; i < m->eh.e_phnum; i++)
    if (phdr(m, i)->p_type == type) return phdr(m, i);
  fail_msg("no program header of type %u", type);
  return NULL;
}

/* The image's file offset of virtual address v (the seed maps 1:1 within a segment). */
static uint8_t *at(struct img *m, uint64_t v) {
  for (int i = 0; i < m->eh.e_phnum; i++) {
    Elf64_Phdr *p = phdr(m, i);
    if (p->p_type == PT_LOAD && v >= p->p_vaddr && v < p->p_vaddr + p->p_filesz) return m->p + p->p_offset + (v - p->p_vaddr);
  }
  fail_msg("address 0x%llx is not mapped", (unsigned long long)v);
  return NULL;
}

static Elf64_Dyn *dyn(struct img *m) { return (Elf64_Dyn *)(m->p + find_phdr(m, PT_DYNAMIC)->p_offset); }

static Elf64_Dyn *find_dyn(struct img *m, int64_t tag) {
  for (Elf64_Dyn *d = dyn(m); d->d_tag != DT_NULL; d++)
    if (d->d_tag == tag) return d;
  fail_msg("no dynamic tag %lld", (long long)tag);
  return NULL;
}

/* Symbol 1, the entry point loom_step_0. */
static Elf64_Sym *entry_sym(struct img *m) { return (Elf64_Sym *)at(m, find_dyn(m, DT_SYMTAB)->d_un.d_ptr) + 1; }

/* The image is refused with a reason containing `want`. */
static void refused(struct img *m, const char *want) {
  char why[128] = "";
  assert_int_equal(loom_hostcode_elf_check(m->p, m->size, why), -1);
  if (!strstr(why, want)) fail_msg("refused for '%s', expected '%s'", why, want);
}

static void accepted(struct img *m) {
  char why[128] = "";
  if (loom_hostcode_elf_check(m->p, m->size, why)) fail_msg("refused: %s", why);
}

static void test_seed_accepted(void **state) { accepted(*state); }

static void test_ifunc_symbol(void **state) {
  struct img *m = *state;
  Elf64_Sym *s = entry_sym(m);
  s->st_info = ELF64_ST_INFO(STB_GLOBAL, STT_GNU_IFUNC);
  refused(m, "symbol 'loom_step_0' is an IFUNC");
}

static void test_imported_symbol(void **state) {
  struct img *m = *state;
  entry_sym(m)->st_shndx = SHN_UNDEF;
  refused(m, "imports symbol 'loom_step_0'");
}

/* SONAME (harmless) turned into each tag the loader would act on. */
static void test_refused_tags(void **state) {
  struct img *m = *state;
  static const struct {
    int64_t tag;
    const char *why;
  } cases[] = {
      {DT_NEEDED, "DT_NEEDED"},         {DT_INIT, "DT_INIT"},
      {DT_INIT_ARRAY, "DT_INIT_ARRAY"}, {DT_FINI_ARRAY, "DT_FINI_ARRAY"},
      {DT_PREINIT_ARRAY, "DT_PREINIT_ARRAY"}, {DT_FILTER, "DT_FILTER"},
      {DT_AUXILIARY, "DT_AUXILIARY"},   {DT_AUDIT, "DT_AUDIT"},
      {DT_DEPAUDIT, "DT_DEPAUDIT"},     {DT_TEXTREL, "DT_TEXTREL"},
      {DT_RPATH, "DT_RPATH"},           {DT_RUNPATH, "DT_RUNPATH"},
      {DT_VERNEED, "DT_VERNEED"},       {DT_RELR, "DT_RELR"},
      {0x6000000f, "never emit"},
  };
  Elf64_Dyn *d = find_dyn(m, DT_SONAME), saved = *d;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    d->d_tag = cases[i].tag;
    refused(m, cases[i].why);
  }
  *d = saved;
  find_dyn(m, DT_FLAGS)->d_un.d_val |= DF_TEXTREL;
  refused(m, "DF_TEXTREL");
}

/* The loader reads the dynamic section at PT_DYNAMIC's virtual address.
 * A benign copy stays at p_offset while p_vaddr points at a hostile one
 * (written over the code): the hostile one counts. */
static void test_dynamic_read_at_vaddr(void **state) {
  struct img *m = *state;
  Elf64_Phdr *pd = find_phdr(m, PT_DYNAMIC), *text = NULL;
  for (int i = 0; i < m->eh.e_phnum; i++)
    if (phdr(m, i)->p_type == PT_LOAD && (phdr(m, i)->p_flags & PF_X)) text = phdr(m, i);
  assert_non_null(text);
  assert_true(text->p_filesz >= pd->p_filesz);
  memcpy(m->p + text->p_offset, m->p + pd->p_offset, pd->p_filesz);
  ((Elf64_Dyn *)(m->p + text->p_offset))->d_tag = DT_NEEDED; /* the copy's SONAME */
  pd->p_vaddr = text->p_vaddr;
  refused(m, "DT_NEEDED");
}

static void test_program_headers(void **state) {
  struct img *m = *state;
  Elf64_Phdr *relro = find_phdr(m, PT_GNU_RELRO), saved = *relro;
  relro->p_type = PT_DYNAMIC;
  refused(m, "two dynamic sections");
  relro->p_type = PT_TLS;
  refused(m, "thread-local storage");
  relro->p_type = PT_INTERP;
  refused(m, "interpreter");
  *relro = saved;
  Elf64_Phdr *stack = find_phdr(m, PT_GNU_STACK);
  stack->p_flags |= PF_X;
  refused(m, "executable stack");
  stack->p_type = PT_NOTE;
  refused(m, "no PT_GNU_STACK");
  stack->p_type = PT_GNU_STACK, stack->p_flags &= ~(uint32_t)PF_X;
  for (int i = 0; i < m->eh.e_phnum; i++)
    if (phdr(m, i)->p_type == PT_LOAD && (phdr(m, i)->p_flags & PF_X)) phdr(m, i)->p_flags |= PF_W;
  refused(m, "both writable and executable");
}

/* A RELA table of one record, written over the code, named by the
 * dynamic section in place of SONAME, FLAGS and FLAGS_1. */
static Elf64_Rela *add_rela(struct img *m) {
  Elf64_Phdr *text = NULL;
  for (int i = 0; i < m->eh.e_phnum; i++)
    if (phdr(m, i)->p_type == PT_LOAD && (phdr(m, i)->p_flags & PF_X)) text = phdr(m, i);
  *find_dyn(m, DT_SONAME) = (Elf64_Dyn){DT_RELA, {text->p_vaddr}};
  *find_dyn(m, DT_FLAGS) = (Elf64_Dyn){DT_RELASZ, {sizeof(Elf64_Rela)}};
  *find_dyn(m, DT_FLAGS_1) = (Elf64_Dyn){DT_RELAENT, {sizeof(Elf64_Rela)}};
  return (Elf64_Rela *)(m->p + text->p_offset);
}

static void test_relocations(void **state) {
  struct img *m = *state;
  Elf64_Rela *r = add_rela(m);
  uint64_t data = find_phdr(m, PT_DYNAMIC)->p_vaddr; /* in the writable segment */
  *r = (Elf64_Rela){data, ELF64_R_INFO(0, R_X86_64_RELATIVE), 0};
  accepted(m);
  *r = (Elf64_Rela){data, ELF64_R_INFO(1, R_X86_64_GLOB_DAT), 0};
  accepted(m);
  *r = (Elf64_Rela){data, ELF64_R_INFO(0, R_X86_64_IRELATIVE), 0x1250};
  refused(m, "IRELATIVE");
  *r = (Elf64_Rela){data, ELF64_R_INFO(1, R_X86_64_COPY), 0};
  refused(m, "type 5");
  *r = (Elf64_Rela){data, ELF64_R_INFO(0, R_X86_64_DTPMOD64), 0};
  refused(m, "type 16");
  *r = (Elf64_Rela){0x10, ELF64_R_INFO(0, R_X86_64_RELATIVE), 0}; /* the read-only headers */
  refused(m, "outside the image's writable segments");
  *r = (Elf64_Rela){UINT64_MAX - 3, ELF64_R_INFO(0, R_X86_64_RELATIVE), 0};
  refused(m, "outside the image's writable segments");
  *r = (Elf64_Rela){data, ELF64_R_INFO(1u << 30, R_X86_64_GLOB_DAT), 0};
  refused(m, "symbol table lies outside");
  find_dyn(m, DT_RELAENT)->d_un.d_val = 16;
  refused(m, "records of the wrong size");
}

static void test_hash_tables(void **state) {
  struct img *m = *state;
  uint32_t *gnu = (uint32_t *)at(m, find_dyn(m, DT_GNU_HASH)->d_un.d_ptr);
  uint32_t *bucket0 = gnu + 4 + 2 * gnu[2]; /* after the 64-bit bloom words */
  assert_int_equal(gnu[0], 1);
  *bucket0 = 0; /* below symoffset (1) is only legal as 0: empty */
  accepted(m);
  gnu[1] = 2, *bucket0 = 1;
  refused(m, "below its symbol offset");
  gnu[1] = 1, gnu[0] = 1u << 30; /* a billion buckets */
  refused(m, "GNU hash table lies outside");
  gnu[0] = 1;
  uint32_t *hash = (uint32_t *)at(m, find_dyn(m, DT_HASH)->d_un.d_ptr);
  hash[1] = 1u << 28; /* nchain */
  refused(m, "DT_HASH");
}

/* Every prefix of the image is refused, and none is read past (ASan). */
static void test_truncations(void **state) {
  struct img *m = *state;
  char why[128];
  for (size_t n = 0; n < m->size; n++) {
    uint8_t *copy = malloc(n ? n : 1);
    memcpy(copy, m->p, n);
    int rc = loom_hostcode_elf_check(copy, n, why);
    free(copy);
    /* The code may end the file: a cut inside it still maps every structure. */
    if (rc == 0 && n < find_phdr(m, PT_DYNAMIC)->p_offset + find_phdr(m, PT_DYNAMIC)->p_filesz)
      fail_msg("a %zu-byte prefix was accepted", n);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_seed_accepted, setup, teardown),
      cmocka_unit_test_setup_teardown(test_ifunc_symbol, setup, teardown),
      cmocka_unit_test_setup_teardown(test_imported_symbol, setup, teardown),
      cmocka_unit_test_setup_teardown(test_refused_tags, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dynamic_read_at_vaddr, setup, teardown),
      cmocka_unit_test_setup_teardown(test_program_headers, setup, teardown),
      cmocka_unit_test_setup_teardown(test_relocations, setup, teardown),
      cmocka_unit_test_setup_teardown(test_hash_tables, setup, teardown),
      cmocka_unit_test_setup_teardown(test_truncations, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
