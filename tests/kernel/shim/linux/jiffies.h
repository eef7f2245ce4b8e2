/*
 * tests/kernel/shim (see linux/types.h): jiffies at HZ=1000, read from the
 * test's simulated clock.
 */
#ifndef KSHIM_LINUX_JIFFIES_H
#define KSHIM_LINUX_JIFFIES_H

unsigned long kshim_jiffies(void);

#define jiffies kshim_jiffies()
#define HZ 1000
#define msecs_to_jiffies(ms) ((unsigned long)(ms))
#define time_after(a, b) ((long)((b) - (a)) < 0)

#endif
