/*
 * tests/kernel/shim (see linux/types.h): sleeping.  usleep_range() calls
 * the test's kshim_usleep(), which lets simulated time pass (and jiffies
 * with it).
 */
#ifndef KSHIM_LINUX_DELAY_H
#define KSHIM_LINUX_DELAY_H

void kshim_usleep(unsigned long us);

static inline void usleep_range(unsigned long min, unsigned long max) {
  (void)min;
  kshim_usleep(max);
}

#endif
