/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * loom_uapi.h - the ioctl interface of the Loom kernel driver (loom.ko,
 * driver/linux), shared by the driver and user space (libloom's "linux"
 * backend, tests/qemu/loom_abi_test.c).  docs/linux-driver.md is the prose
 * version of this file.
 *
 * The rules every structure here keeps, so that one header serves 32-bit
 * and 64-bit user space on a 64-bit kernel without compat code:
 *
 *   - only explicit-width fields (__u32, __u64), every __u64 at an offset
 *     that is a multiple of 8 and every size a multiple of 8, so i386 and
 *     armv7 lay the structures out exactly as x86-64 and arm64 do;
 *   - user pointers travel as __u64 (u64_to_user_ptr in the kernel);
 *   - every field the caller fills that is not yet used ("reserved",
 *     "flags") must be zero: the driver refuses anything else with EINVAL,
 *     so those bits can be given a meaning later without breaking old
 *     programs;
 *   - the ioctl numbers encode the structure size, and QUERY reports
 *     LOOM_UAPI_VERSION, which changes only when a structure does.
 *
 * What user space never sees is a physical or bus address.  Buffers are
 * named by handles (valid only in the file that allocated them), mapped
 * with mmap() at the offset ALLOC returns, and a job names its segment
 * table by handles too: the driver writes the bus addresses into the
 * accelerator's segment registers itself.
 */
#ifndef LOOM_UAPI_H
#define LOOM_UAPI_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define LOOM_UAPI_VERSION 1

/* Limits that do not depend on the device (QUERY reports the rest). */
#define LOOM_UAPI_MAX_SEGMENTS 8        /* entries in a job's segment table */
#define LOOM_UAPI_MAX_COUNTERS 32       /* room in WAIT for the 64-bit counters */
#define LOOM_UAPI_SIZE_ALIGN 4096u      /* buffer sizes are multiples of this */
#define LOOM_UAPI_INSN_BYTES 16u        /* one instruction */
#define LOOM_UAPI_MAX_TIMEOUT_MS 600000u /* longest SUBMIT or WAIT timeout */

/* QUERY.flags */
#define LOOM_QUERY_F_TESTDEV (1u << 0)  /* the software test device, no hardware */
#define LOOM_QUERY_F_IRQ (1u << 1)      /* completion by interrupt (else polling) */
#define LOOM_QUERY_F_WEDGED (1u << 2)   /* a SOFT_RESET failed: SUBMIT fails with EIO
					   until a RESET succeeds */

/*
 * LOOM_IOCTL_QUERY: what the device is and what the driver accepts.  Output
 * only.  The stat_* fields count since the device was probed.
 */
struct loom_uapi_query {
	__u32 uapi_version;     /* LOOM_UAPI_VERSION of the driver */
	__u32 hw_id;            /* ID register, 0x4C4F4F4D "LOOM" */
	__u32 hw_version;       /* VERSION register: hardware << 16 | ISA version */
	__u32 config_hash;      /* CONFIG_HASH register */
	__u32 num_segments;     /* segment registers (LOOM_NUM_SEGMENTS) */
	__u32 num_counters;     /* counters WAIT fills (LOOM_CNT_COUNT) */
	__u32 flags;            /* LOOM_QUERY_F_* */
	__u32 size_align;       /* LOOM_UAPI_SIZE_ALIGN */
	__u64 max_buffer_size;  /* largest ALLOC, bytes */
	__u64 max_file_bytes;   /* all buffers of one open file, bytes */
	__u32 max_file_buffers; /* buffers of one open file */
	__u32 default_timeout_ms; /* used when SUBMIT or WAIT passes 0 */
	__u64 stat_jobs;        /* jobs that ran to done */
	__u64 stat_timeouts;    /* jobs aborted by a timeout */
	__u64 stat_resets;      /* SOFT_RESETs written */
	__u64 reserved[4];      /* zero */
};

/*
 * LOOM_IOCTL_ALLOC: a DMA-coherent buffer, zero-filled.  size must be a
 * non-zero multiple of LOOM_UAPI_SIZE_ALIGN and at most max_buffer_size.
 * Map it with mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
 * mmap_offset); the mapping keeps the memory alive after FREE.  Quotas:
 * EMFILE beyond max_file_buffers (or when the device's table of 65,535
 * handles is full), ENOMEM beyond max_file_bytes, EDQUOT beyond the
 * limits of the user who opened the file over all its files (module
 * parameters max_user_buffers and max_user_mb).
 */
struct loom_uapi_alloc {
	__u64 size;             /* in */
	__u32 flags;            /* in: 0 */
	__u32 handle;           /* out: non-zero */
	__u64 mmap_offset;      /* out */
	__u64 reserved[2];      /* in: 0 */
};

/* LOOM_IOCTL_FREE: drops a handle.  EBUSY while the caller's job uses it. */
struct loom_uapi_free {
	__u32 handle;
	__u32 flags;            /* 0 */
	__u64 reserved;         /* 0 */
};

/*
 * One entry of a job's segment table: instruction (segment s, offset o)
 * reaches byte o of the buffer `handle`, if o < size.
 */
struct loom_uapi_segment {
	__u32 handle;           /* 0: segment unmapped (then size must be 0) */
	__u32 reserved;         /* 0 */
	__u64 size;             /* bytes the job may reach; 0: the whole buffer */
};

/*
 * LOOM_IOCTL_SUBMIT: queues one job: insn_count instructions at the start
 * of buffer insn_handle, and num_segments entries read from segments_ptr
 * (segments beyond them are unmapped).  Every handle must belong to the
 * calling file.  One job per open file until WAIT has returned its result
 * (EBUSY otherwise); jobs of different files run one at a time, in order.
 * A job still running timeout_ms after it started (0: the module's
 * default) is aborted by a SOFT_RESET and ends with LOOM_JOB_TIMEOUT.
 * EIO while the device is wedged: a SOFT_RESET failed, so the accelerator
 * may still be working on the memory of the job it was stopping (that
 * memory stays allocated, whatever its file does, until a reset works).
 */
struct loom_uapi_submit {
	__u32 insn_handle;
	__u32 insn_count;       /* 1 .. buffer size / 16 */
	__u32 num_segments;     /* 0 .. LOOM_UAPI_MAX_SEGMENTS */
	__u32 timeout_ms;       /* 0 .. LOOM_UAPI_MAX_TIMEOUT_MS */
	__u64 segments_ptr;     /* struct loom_uapi_segment[num_segments] */
	__u32 flags;            /* 0 */
	__u32 reserved0;        /* 0 */
	__u64 reserved[2];      /* 0 */
};

/* WAIT.status */
enum loom_uapi_job_status {
	LOOM_JOB_DONE = 1,      /* the accelerator finished; error tells how */
	LOOM_JOB_TIMEOUT = 2,   /* aborted after a timeout, device reset (ETIMEDOUT) */
	LOOM_JOB_ABORTED = 3,   /* aborted by RESET or because the device went away */
};

/*
 * LOOM_IOCTL_WAIT: waits up to timeout_ms (0: the module's default) for the
 * caller's job and returns its result, which ends the job:
 *   - 0: status DONE; error is the ISA error code (0 = success), error_insn
 *     the instruction that raised it, counters the hardware counters;
 *   - ETIMEDOUT: the job was still queued or running; it has been removed
 *     or stopped by a SOFT_RESET, and the structure is still filled in
 *     (status TIMEOUT);
 *   - EINTR: a signal arrived first; the job is untouched, wait again;
 *   - ENOENT: the file has no job.
 */
struct loom_uapi_wait {
	__u32 timeout_ms;       /* in: 0 .. LOOM_UAPI_MAX_TIMEOUT_MS */
	__u32 flags;            /* in: 0 */
	__u32 status;           /* out: enum loom_uapi_job_status */
	__u32 error;            /* out: ERR_STATUS (enum loom_error) */
	__u32 error_insn;       /* out: ERR_INSN */
	__u32 num_counters;     /* out: valid entries of counters[] */
	__u64 counters[LOOM_UAPI_MAX_COUNTERS]; /* out: enum loom_counter order */
	__u64 reserved[2];      /* in: 0 */
};

/*
 * LOOM_IOCTL_RESET: aborts the caller's job (status ABORTED) and, unless
 * another file's job is running, writes SOFT_RESET.  EIO when the device
 * is wedged afterwards (the reset failed); a reset that works clears the
 * wedged state.
 */
struct loom_uapi_reset {
	__u32 flags;            /* 0 */
	__u32 reserved;         /* 0 */
};

/* 'L' 0x40..0x4F: loop uses 'L' 0x00..0x1F, vstusb 0x20..0x2F, ppdd 0xE0..0xFF. */
#define LOOM_IOCTL_MAGIC 'L'
#define LOOM_IOCTL_QUERY _IOR(LOOM_IOCTL_MAGIC, 0x40, struct loom_uapi_query)
#define LOOM_IOCTL_ALLOC _IOWR(LOOM_IOCTL_MAGIC, 0x41, struct loom_uapi_alloc)
#define LOOM_IOCTL_FREE _IOW(LOOM_IOCTL_MAGIC, 0x42, struct loom_uapi_free)
#define LOOM_IOCTL_SUBMIT _IOW(LOOM_IOCTL_MAGIC, 0x43, struct loom_uapi_submit)
#define LOOM_IOCTL_WAIT _IOWR(LOOM_IOCTL_MAGIC, 0x44, struct loom_uapi_wait)
#define LOOM_IOCTL_RESET _IOW(LOOM_IOCTL_MAGIC, 0x45, struct loom_uapi_reset)

/*
 * The software test device (module parameter testdev=N, QUERY flag
 * LOOM_QUERY_F_TESTDEV) executes no Loom instructions.  It reads the first
 * instruction of a job as four little-endian words:
 *
 *   word 0  LOOM_TESTDEV_MAGIC
 *   word 1  LOOM_TESTDEV_OP_*
 *   word 2  delay before the job completes, ms (at most 10000)
 *   word 3  COPY: bytes copied from segment 0 to segment 1 (at most
 *           LOOM_TESTDEV_MAX_COPY); FAIL: the error code to report;
 *           WEDGE: SOFT_RESETs to ignore (at most 16)
 *
 * WEDGE never completes: every `word 2` ms (the delay) it writes its
 * write count's low byte into the first LOOM_TESTDEV_WEDGE_BYTES of
 * segment 1, and it ignores the next `word 3` SOFT_RESETs (CTRL.IDLE
 * stays 0), like a DMA engine that does not stop.
 *
 * COPY honours the segment table like the hardware does: a copy larger
 * than either segment fails with SEGMENT.  Any other first instruction
 * fails with ILLEGAL at instruction 0.
 */
#define LOOM_TESTDEV_MAGIC 0x54534554u  /* "TEST" */
#define LOOM_TESTDEV_OP_COPY 1u         /* copy, then done */
#define LOOM_TESTDEV_OP_FAIL 2u         /* done with ERR_STATUS = word 3 */
#define LOOM_TESTDEV_OP_HANG 3u         /* never done; only SOFT_RESET ends it */
#define LOOM_TESTDEV_OP_WEDGE 4u        /* never done, keeps writing, ignores resets */
#define LOOM_TESTDEV_MAX_COPY (1u << 20)
#define LOOM_TESTDEV_WEDGE_BYTES 64u

#endif /* LOOM_UAPI_H */
