/*
 * test_hwregs.c - the register programming sequence (driver/lib/hwseq.h
 * through its user-space face, driver/lib/hwregs.c) against a fake
 * register file.
 *
 * The fake keeps 32-bit registers in an array, logs every write, and models
 * just enough of docs/registers.md: CTRL reads IDLE while no job runs, a
 * write of START begins a job that ends on the Nth poll of ISR (or never,
 * to provoke a timeout); at the end CTRL.DONE is set (clear on read) and
 * ISR.DONE latched if IER.DONE is set; SOFT_RESET returns to idle unless
 * the fake is told to stay stuck.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "driver/lib/hwregs.h"

#define NREGS (0x200 / 4)

struct fake {
  uint32_t regs[NREGS];
  int running;          /* a job is in progress */
  int done;             /* CTRL.DONE, clear on read */
  int done_after;       /* polls of ISR until the job ends; 0 = never */
  int polls;            /* ISR reads while running */
  int ctrl_reads;
  int stuck;            /* ignores SOFT_RESET and never idles */
  int idle_calls;
  uint32_t idle_cycles;
  struct { uint32_t off, val; } log[128];
  int nlog;
};

static uint32_t fake_read(void *ctx, uint32_t off) {
  struct fake *f = ctx;
  if (off == LOOM_REG_ISR && f->running && ++f->polls == f->done_after) {
    f->running = 0;
    f->done = 1;
    f->regs[LOOM_REG_ISR / 4] |= f->regs[LOOM_REG_IER / 4] & LOOM_IRQ_DONE;
  }
  if (off != LOOM_REG_CTRL) return f->regs[off / 4];
  f->ctrl_reads++;
  if (f->stuck) return 0;
  uint32_t v = f->running ? 0 : LOOM_CTRL_IDLE;
  if (f->done) v |= LOOM_CTRL_DONE | LOOM_CTRL_READY;
  f->done = 0;
  return v;
}

static void fake_write(void *ctx, uint32_t off, uint32_t val) {
  struct fake *f = ctx;
  if (f->nlog < 128) {
    f->log[f->nlog].off = off;
    f->log[f->nlog++].val = val;
  }
  if (off == LOOM_REG_ISR) f->regs[off / 4] &= ~val; /* write 1 to clear */
  else f->regs[off / 4] = val;
  if (off == LOOM_REG_CTRL && (val & LOOM_CTRL_START)) {
    f->running = 1;
    f->polls = 0;
  }
  if (off == LOOM_REG_SOFT_RESET && val == 1 && !f->stuck) f->running = 0;
}

static void fake_idle(void *ctx, uint32_t cycles) {
  struct fake *f = ctx;
  f->idle_calls++;
  f->idle_cycles += cycles;
}

static void fake_init(struct fake *f, uint32_t hash) {
  memset(f, 0, sizeof *f);
  f->regs[LOOM_REG_ID / 4] = LOOM_HW_ID;
  f->regs[LOOM_REG_VERSION / 4] = 0x00010000u | LOOM_ISA_VERSION;
  f->regs[LOOM_REG_CONFIG_HASH / 4] = hash;
}

static struct loom_reg_io io_of(struct fake *f) {
  return (struct loom_reg_io){.ctx = f, .read = fake_read, .write = fake_write, .idle = fake_idle};
}

static void probe_accepts_matching_hash(void **state) {
  struct fake f;
  fake_init(&f, LOOM_CONFIG_TINY_HASH);
  struct loom_reg_io io = io_of(&f);
  char msg[LOOM_MSG_MAX] = "";
  uint32_t hash = 0;
  assert_int_equal(loom_hw_probe(&io, LOOM_CONFIG_TINY_HASH, &hash, msg), LOOM_OK);
  assert_int_equal(hash, LOOM_CONFIG_TINY_HASH);
  assert_int_equal(loom_hw_probe(&io, 0, &hash, msg), LOOM_OK);
  assert_int_equal(f.nlog, 0);
}

static void probe_refuses_wrong_id(void **state) {
  struct fake f;
  fake_init(&f, LOOM_CONFIG_TINY_HASH);
  f.regs[LOOM_REG_ID / 4] = 0xDEADBEEF;
  struct loom_reg_io io = io_of(&f);
  char msg[LOOM_MSG_MAX] = "";
  assert_int_equal(loom_hw_probe(&io, 0, NULL, msg), LOOM_E_CONFIG);
  assert_non_null(strstr(msg, "0xDEADBEEF"));
}

static void probe_refuses_wrong_isa_version(void **state) {
  struct fake f;
  fake_init(&f, LOOM_CONFIG_TINY_HASH);
  f.regs[LOOM_REG_VERSION / 4] = 0x00010000u | (LOOM_ISA_VERSION + 1);
  struct loom_reg_io io = io_of(&f);
  char msg[LOOM_MSG_MAX] = "";
  assert_int_equal(loom_hw_probe(&io, 0, NULL, msg), LOOM_E_CONFIG);
  assert_non_null(strstr(msg, "ISA version"));
}

static void probe_refuses_wrong_hash(void **state) {
  struct fake f;
  fake_init(&f, LOOM_CONFIG_DEFAULT_HASH);
  struct loom_reg_io io = io_of(&f);
  char msg[LOOM_MSG_MAX] = "";
  uint32_t hash = 0;
  assert_int_equal(loom_hw_probe(&io, LOOM_CONFIG_TINY_HASH, &hash, msg), LOOM_E_CONFIG);
  assert_int_equal(hash, LOOM_CONFIG_DEFAULT_HASH);
  assert_non_null(strstr(msg, "'default'"));
  assert_non_null(strstr(msg, "'tiny'"));
  f.regs[LOOM_REG_CONFIG_HASH / 4] = 0x12345678;
  assert_int_equal(loom_hw_probe(&io, LOOM_CONFIG_TINY_HASH, &hash, msg), LOOM_E_CONFIG);
  assert_non_null(strstr(msg, "unknown config (0x12345678)"));
}

/* Index of the first logged write to `off` at or after `from`, or -1. */
static int find_write(const struct fake *f, uint32_t off, int from) {
  for (int i = from; i < f->nlog; i++)
    if (f->log[i].off == off) return i;
  return -1;
}

static void start_programs_in_order(void **state) {
  struct fake f;
  fake_init(&f, LOOM_CONFIG_TINY_HASH);
  struct loom_reg_io io = io_of(&f);
  struct loom_hw_segment seg[8] = {{0}};
  seg[0] = (struct loom_hw_segment){0x1000, 256};
  seg[3] = (struct loom_hw_segment){UINT64_C(0x123456780040), UINT64_C(0x100000000)};
  char msg[LOOM_MSG_MAX] = "";
  assert_int_equal(loom_hw_start(&io, UINT64_C(0x200000010), 51, seg, 0, msg), LOOM_OK);
  /* Arguments first, then ISR/IER/GIE, START last. */
  assert_int_equal(f.log[f.nlog - 1].off, LOOM_REG_CTRL);
  assert_int_equal(f.log[f.nlog - 1].val, LOOM_CTRL_START);
  int isr = find_write(&f, LOOM_REG_ISR, 0);
  assert_true(isr > find_write(&f, LOOM_REG_SEG_SIZE_HI + 7 * LOOM_REG_SEG_STRIDE, 0));
  assert_true(isr > find_write(&f, LOOM_REG_INSN_COUNT, 0));
  assert_int_equal(f.log[isr].val, LOOM_IRQ_DONE);
  /* IER is set without an interrupt too (the DONE latch for polling),
   * after the ISR clear and before START; only GIE follows the line. */
  int ier = find_write(&f, LOOM_REG_IER, 0);
  assert_true(ier > isr && ier < f.nlog - 1);
  assert_int_equal(f.regs[LOOM_REG_IER / 4], LOOM_IRQ_DONE);
  assert_int_equal(f.regs[LOOM_REG_GIE / 4], 0);
  assert_int_equal(f.regs[LOOM_REG_INSN_ADDR_LO / 4], 0x10);
  assert_int_equal(f.regs[LOOM_REG_INSN_ADDR_HI / 4], 2);
  assert_int_equal(f.regs[LOOM_REG_INSN_COUNT / 4], 51);
  /* Low word before high word. */
  assert_true(find_write(&f, LOOM_REG_INSN_ADDR_LO, 0) < find_write(&f, LOOM_REG_INSN_ADDR_HI, 0));
  uint32_t s3 = 3 * LOOM_REG_SEG_STRIDE;
  assert_int_equal(f.regs[(LOOM_REG_SEG_BASE_LO + s3) / 4], 0x56780040);
  assert_int_equal(f.regs[(LOOM_REG_SEG_BASE_HI + s3) / 4], 0x1234);
  assert_int_equal(f.regs[(LOOM_REG_SEG_SIZE_LO + s3) / 4], 0);
  assert_int_equal(f.regs[(LOOM_REG_SEG_SIZE_HI + s3) / 4], 1);
  assert_int_equal(f.regs[LOOM_REG_SEG_SIZE_LO / 4], 256);
  for (uint32_t s = 1; s < 8; s++) {
    if (s == 3) continue;
    assert_int_not_equal(find_write(&f, LOOM_REG_SEG_SIZE_LO + s * LOOM_REG_SEG_STRIDE, 0), -1);
    assert_int_equal(f.regs[(LOOM_REG_SEG_SIZE_LO + s * LOOM_REG_SEG_STRIDE) / 4], 0);
  }
  assert_true(f.running);
}

static void start_enables_interrupt(void **state) {
  struct fake f;
  fake_init(&f, LOOM_CONFIG_TINY_HASH);
  struct loom_reg_io io = io_of(&f);
  struct loom_hw_segment seg[8] = {{0}};
  char msg[LOOM_MSG_MAX] = "";
  assert_int_equal(loom_hw_start(&io, 0x40, 1, seg, 1, msg), LOOM_OK);
  assert_int_equal(f.regs[LOOM_REG_IER / 4], 1);
  assert_int_equal(f.regs[LOOM_REG_GIE / 4], 1);
}

static void start_refuses_misaligned_addresses(void **state) {
  struct fake f;
  fake_init(&f, LOOM_CONFIG_TINY_HASH);
  struct loom_reg_io io = io_of(&f);
  struct loom_hw_segment seg[8] = {{0}};
  char msg[LOOM_MSG_MAX] = "";
  assert_int_equal(loom_hw_start(&io, 0x48, 1, seg, 0, msg), LOOM_E_INVALID);
  assert_non_null(strstr(msg, "16-byte"));
  seg[2] = (struct loom_hw_segment){0x1020, 64};
  assert_int_equal(loom_hw_start(&io, 0x40, 1, seg, 0, msg), LOOM_E_INVALID);
  assert_non_null(strstr(msg, "segment 2"));
  assert_int_equal(f.nlog, 0);
}

static void start_times_out_when_never_idle(void **state) {
  struct fake f;
  fake_init(&f, LOOM_CONFIG_TINY_HASH);
  f.stuck = 1;
  struct loom_reg_io io = io_of(&f);
  struct loom_hw_segment seg[8] = {{0}};
  char msg[LOOM_MSG_MAX] = "";
  assert_int_equal(loom_hw_start(&io, 0x40, 1, seg, 0, msg), LOOM_E_TIMEOUT);
  assert_int_equal(find_write(&f, LOOM_REG_CTRL, 0), -1);
}

static void poll_sees_done_after_n_polls(void **state) {
  struct fake f;
  fake_init(&f, LOOM_CONFIG_TINY_HASH);
  f.done_after = 5;
  struct loom_reg_io io = io_of(&f);
  struct loom_hw_segment seg[8] = {{0}};
  char msg[LOOM_MSG_MAX] = "";
  assert_int_equal(loom_hw_start(&io, 0x40, 1, seg, 0, msg), LOOM_OK);
  int idle_before = f.idle_calls;
  assert_int_equal(loom_hw_poll_done(&io, 100, 7), 1);
  assert_int_equal(f.polls, 5);
  assert_int_equal(f.idle_calls - idle_before, 4);
  assert_false(f.running);
  /* Polling reads ISR, which reading does not clear: a second poller
   * sees the same completion, and CTRL.DONE is still there for collect. */
  assert_int_equal(loom_hw_poll_done(&io, 1, 7), 1);
  assert_true(f.done);
  struct loom_job_result res;
  loom_hw_collect(&io, &res);
  assert_false(f.done);                           /* collect read CTRL */
  assert_int_equal(f.regs[LOOM_REG_ISR / 4], 0); /* and acknowledged ISR */
  assert_int_equal(loom_hw_poll_done(&io, 1, 7), 0);
}

static void poll_gives_up_then_reset(void **state) {
  struct fake f;
  fake_init(&f, LOOM_CONFIG_TINY_HASH);
  f.done_after = 0; /* never */
  struct loom_reg_io io = io_of(&f);
  struct loom_hw_segment seg[8] = {{0}};
  char msg[LOOM_MSG_MAX] = "";
  assert_int_equal(loom_hw_start(&io, 0x40, 1, seg, 0, msg), LOOM_OK);
  assert_int_equal(loom_hw_poll_done(&io, 50, 1), 0);
  assert_int_equal(f.polls, 50);
  int mark = f.nlog;
  assert_int_equal(loom_hw_reset(&io, msg), LOOM_OK);
  int on = find_write(&f, LOOM_REG_SOFT_RESET, mark);
  assert_int_not_equal(on, -1);
  assert_int_equal(f.log[on].val, 1);
  int off = find_write(&f, LOOM_REG_SOFT_RESET, on + 1);
  assert_int_not_equal(off, -1);
  assert_int_equal(f.log[off].val, 0);
  assert_false(f.running);
  /* The device takes the next job. */
  f.done_after = 2;
  assert_int_equal(loom_hw_start(&io, 0x40, 1, seg, 0, msg), LOOM_OK);
  assert_int_equal(loom_hw_poll_done(&io, 10, 1), 1);
}

static void poll_without_idle_callback(void **state) {
  struct fake f;
  fake_init(&f, LOOM_CONFIG_TINY_HASH);
  f.done_after = 3;
  struct loom_reg_io io = io_of(&f);
  io.idle = NULL;
  struct loom_hw_segment seg[8] = {{0}};
  char msg[LOOM_MSG_MAX] = "";
  assert_int_equal(loom_hw_start(&io, 0x40, 1, seg, 0, msg), LOOM_OK);
  assert_int_equal(loom_hw_poll_done(&io, 10, 1), 1);
  assert_int_equal(f.idle_calls, 0);
}

static void reset_reports_stuck_device(void **state) {
  struct fake f;
  fake_init(&f, LOOM_CONFIG_TINY_HASH);
  f.stuck = 1;
  struct loom_reg_io io = io_of(&f);
  char msg[LOOM_MSG_MAX] = "";
  assert_int_equal(loom_hw_reset(&io, msg), LOOM_E_TIMEOUT);
  assert_non_null(strstr(msg, "SOFT_RESET"));
}

static void collect_reads_status_and_counters(void **state) {
  struct fake f;
  fake_init(&f, LOOM_CONFIG_TINY_HASH);
  f.regs[LOOM_REG_ERR_STATUS / 4] = LOOM_ERR_SEGMENT;
  f.regs[LOOM_REG_ERR_INSN / 4] = 12;
  for (uint32_t c = 0; c < LOOM_CNT_COUNT; c++) {
    uint32_t off = LOOM_REG_COUNTER_BASE + c * LOOM_REG_COUNTER_STRIDE;
    f.regs[off / 4] = 1000 + c;
    f.regs[off / 4 + 1] = c;
  }
  f.done = 1;
  f.regs[LOOM_REG_ISR / 4] = LOOM_IRQ_DONE;
  struct loom_reg_io io = io_of(&f);
  struct loom_job_result res;
  memset(&res, 0xAB, sizeof res);
  loom_hw_collect(&io, &res);
  assert_int_equal(f.ctrl_reads, 1);  /* the ap_ctrl_hs acknowledge, once */
  assert_false(f.done);
  assert_int_equal(f.regs[LOOM_REG_ISR / 4], 0);
  assert_int_equal(res.error, LOOM_ERR_SEGMENT);
  assert_int_equal(res.error_insn, 12);
  for (uint32_t c = 0; c < LOOM_CNT_COUNT; c++)
    assert_int_equal(res.counters[c], ((uint64_t)c << 32) | (1000 + c));
  assert_string_equal(res.message, "");
  assert_int_equal(f.log[f.nlog - 1].off, LOOM_REG_ISR);
  assert_int_equal(f.log[f.nlog - 1].val, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(probe_accepts_matching_hash),
      cmocka_unit_test(probe_refuses_wrong_id),
      cmocka_unit_test(probe_refuses_wrong_isa_version),
      cmocka_unit_test(probe_refuses_wrong_hash),
      cmocka_unit_test(start_programs_in_order),
      cmocka_unit_test(start_enables_interrupt),
      cmocka_unit_test(start_refuses_misaligned_addresses),
      cmocka_unit_test(start_times_out_when_never_idle),
      cmocka_unit_test(poll_sees_done_after_n_polls),
      cmocka_unit_test(poll_gives_up_then_reset),
      cmocka_unit_test(poll_without_idle_callback),
      cmocka_unit_test(reset_reports_stuck_device),
      cmocka_unit_test(collect_reads_status_and_counters),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
