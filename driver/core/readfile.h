/*
 * readfile.h - reading a whole file into memory, with a size cap.
 *
 * The .loom reader, the .npy reader and the assembler all take a file in
 * one piece before they look at it; the cap keeps a hostile or mistaken
 * path (a disk image, /dev/zero) from exhausting memory.
 */
#ifndef LOOM_READFILE_H
#define LOOM_READFILE_H

#include <stddef.h>
#include <stdint.h>

#include "loom/loom.h"

/* Reads `path` into a malloc'd buffer (*out, one extra NUL byte after the
 * contents so text parsers may rely on it).  LOOM_E_NOTFOUND when the file
 * does not exist, LOOM_E_IO on other I/O errors, LOOM_E_FORMAT when it is
 * larger than `max` bytes; `msg` then says "path: what went wrong". */
loom_status loom_read_file(const char *path, uint64_t max, uint8_t **out, size_t *size,
                           char msg[LOOM_MSG_MAX]);

#endif
