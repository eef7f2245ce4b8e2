/*
 * filebytes.h - reading and patching the bytes of a .loom image in tests:
 * little-endian fields, the header checksum after a patch, and where a
 * section lies.  Tests that break one field on purpose use these so the
 * parser sees exactly that one fault, not a checksum mismatch.
 */
#ifndef LOOM_FILEBYTES_H
#define LOOM_FILEBYTES_H

#include <stddef.h>
#include <stdint.h>

uint32_t rd32(const uint8_t *p);
uint64_t rd64(const uint8_t *p);
void wr32(uint8_t *p, uint32_t v);
void wr64(uint8_t *p, uint64_t v);

/* Recomputes the header's crc32 over bytes [32, n). */
void fix_crc(uint8_t *p, size_t n);

/* File offset of the section table entry of `type`, and of the section
 * itself; a test failure when the file has none. */
size_t section_entry(const uint8_t *p, uint32_t type);
size_t section_offset(const uint8_t *p, uint32_t type);

#endif
