/*
 * filebytes.c - byte access to .loom images for tests (filebytes.h).
 */
#include "filebytes.h"

#include <setjmp.h>
#include <stdarg.h>
#include <zlib.h>

#include <cmocka.h>

uint32_t rd32(const uint8_t *p) { return (uint32_t)p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
uint64_t rd64(const uint8_t *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }
void wr32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> 8 * i);
}
void wr64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> 8 * i);
}

void fix_crc(uint8_t *p, size_t n) { wr32(p + 24, (uint32_t)crc32(crc32(0, Z_NULL, 0), p + 32, (uInt)(n - 32))); }

size_t section_entry(const uint8_t *p, uint32_t type) {
  size_t tbl = (size_t)rd64(p + 40);
  for (uint32_t i = 0; i < rd32(p + 36); i++)
    if (rd32(p + tbl + 32 * i) == type) return tbl + 32 * i;
  fail_msg("no section %u", type);
  return 0;
}

size_t section_offset(const uint8_t *p, uint32_t type) { return (size_t)rd64(p + section_entry(p, type) + 8); }
