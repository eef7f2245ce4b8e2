/*
 * loomfile_int.h - the .loom parser's internals, shared by loomfile.c (the
 * header, sections and most records) and loomfile_kernels.c (KERNELS).
 */
#ifndef LOOM_LOOMFILE_INT_H
#define LOOM_LOOMFILE_INT_H

#include "loomfile.h"

struct section {
  int present;
  uint64_t off, size;
};

struct reader {
  const uint8_t *p; /* the owned copy */
  uint64_t size;
  const char *name;
  char *msg;
  uint32_t minor;
  uint64_t table_end;
  struct section sec[LOOM_SEC_COUNT];
  struct loom_file *f;
};

/* A refusal: "name: offset 0x..: what", LOOM_E_FORMAT. */
loom_status lf_bad(struct reader *r, uint64_t off, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* File offset of field `field` of record `i` of section `type`. */
uint64_t lf_rec_off(const struct reader *r, uint32_t type, uint32_t i, uint32_t field);
/* Whether `off` starts a non-empty string of STRTAB. */
int lf_name_ok(const struct loom_file *f, uint32_t off);
/* loomfile_kernels.c: every KERNELS record and its DATA. */
loom_status lf_check_kernels(struct reader *r);

#endif
