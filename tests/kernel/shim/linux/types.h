/*
 * tests/kernel/shim: the few kernel headers driver/linux/loom_hw.c and
 * loom_hw.h include, for compiling them in user space (tests/kernel).
 * Each provides only what those files use.  linux/types.h: the kernel's
 * fixed-width types.
 */
#ifndef KSHIM_LINUX_TYPES_H
#define KSHIM_LINUX_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;

#define __iomem

#endif
