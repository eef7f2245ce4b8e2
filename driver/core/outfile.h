/*
 * outfile.h - every file Loom writes goes through here (outfile.c): .loom
 * files, .npy outputs, traces, profiles, disassembly, reports, benchmark
 * JSON.
 *
 * The promise to the user: a failed write never damages what was there.
 *
 *   - a regular file (or a new path) is written to a temporary file beside
 *     it, flushed to the disk, and renamed over the target only when every
 *     byte is written; on failure only the temporary file is removed;
 *   - a target that exists and is not a regular file (a device such as
 *     /dev/null or /dev/full, a pipe, a terminal, /dev/stdout) is written in
 *     place and never replaced or removed; so is a regular file that is the
 *     process's own stdout or stderr (`-o /dev/stdout > file`);
 *   - errors name the file and the errno text: "out.loom: write failed: No
 *     space left on device".
 *
 * loom_outfile_check() refuses an output that is one of the inputs (same
 * device and inode), before any work is done.
 */
#ifndef LOOM_OUTFILE_H
#define LOOM_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

#include "loom/loom.h"

struct loom_outfile;

/* Opens `path` for writing as described above.  *out is NULL on failure. */
loom_status loom_outfile_open(const char *path, struct loom_outfile **out, char msg[LOOM_MSG_MAX]);

/* The stream to write to (owned by the outfile). */
FILE *loom_outfile_stream(struct loom_outfile *o);

/* Flushes, syncs and closes the stream and renames the temporary file over
 * the target.  On failure the temporary file is removed and the target is
 * as it was.  Frees `o` either way. */
loom_status loom_outfile_commit(struct loom_outfile *o, char msg[LOOM_MSG_MAX]);

/* Gives up: closes the stream and removes the temporary file (never the
 * target).  Frees `o`; NULL is ignored. */
void loom_outfile_abort(struct loom_outfile *o);

/* open + fwrite + commit in one call. */
loom_status loom_outfile_write(const char *path, const void *bytes, size_t size,
                               char msg[LOOM_MSG_MAX]);

/* LOOM_E_INVALID ("x.loom: the output is the input x.loom (the same file);
 * choose another output") when `path` names an existing file that is also
 * one of the NULL-terminated `inputs` (the same device and inode, so hard
 * links and symbolic links count); LOOM_OK otherwise, also when `path` does
 * not exist.  Inputs that do not exist are skipped. */
loom_status loom_outfile_check(const char *path, const char *const *inputs, char msg[LOOM_MSG_MAX]);

#endif
