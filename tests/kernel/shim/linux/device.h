/*
 * tests/kernel/shim (see linux/types.h): struct device and the dev_* log
 * functions, which print "NAME: message" to stderr and count errors in
 * kshim_errors (the test checks that a failure was logged).
 */
#ifndef KSHIM_LINUX_DEVICE_H
#define KSHIM_LINUX_DEVICE_H

#include <stdio.h>

struct device {
  const char *name;
};

extern unsigned int kshim_errors;

#define kshim_log(dev, level, fmt, ...) \
  fprintf(stderr, "%s %s: " fmt "\n", level, (dev)->name, ##__VA_ARGS__)
#define dev_err(dev, fmt, ...) (kshim_errors++, kshim_log(dev, "err", fmt, ##__VA_ARGS__))
#define dev_warn(dev, fmt, ...) kshim_log(dev, "warn", fmt, ##__VA_ARGS__)
#define dev_info(dev, fmt, ...) kshim_log(dev, "info", fmt, ##__VA_ARGS__)

#endif
