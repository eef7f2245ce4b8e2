/*
 * loomgen_docs.c - the markdown tables `loomgen docs KIND` prints for docs/
 * (checked by `make check-docs`).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "scripts/loomgen.h"

/* ---- docs ---- */

void docs_fields(void) {
  int i;
  printf("| format | field | bits | width | signed | meaning |\n|---|---|---|---|---|---|\n");
  for (i = 0; i < COUNT(isa_fields); i++) {
    const struct field *x = &isa_fields[i];
    printf("| %s | `%s` | %d..%d | %d | %s | %s |\n", x->format, x->name, x->lsb,
           x->lsb + x->width - 1, x->width, x->is_signed ? "yes" : "no", x->comment);
  }
}

static void docs_named(const char *title, const struct named *v, int n) {
  int i;
  printf("\n%s\n\n| name | value | meaning |\n|---|---|---|\n", title);
  for (i = 0; i < n; i++) printf("| `%s` | %d | %s |\n", v[i].name, v[i].value, v[i].comment);
}

void docs_enums(void) {
  int i;
  printf("| opcode | value | queue | meaning |\n|---|---|---|---|\n");
  for (i = 0; i < COUNT(opcodes); i++)
    printf("| `%s` | %d | %s | %s |\n", opcodes[i].name, opcodes[i].value, opcodes[i].extra, opcodes[i].comment);
  docs_named("Buffers:", buffers, COUNT(buffers));
  docs_named("Queues:", queues, COUNT(queues));
  docs_named("ALU operations:", alu_ops, COUNT(alu_ops));
  docs_named("Error codes:", errors, COUNT(errors));
}

void docs_regs(void) {
  int i;
  printf("| offset | register | access | meaning |\n|---|---|---|---|\n");
  for (i = 0; i < COUNT(regs); i++)
    printf("| 0x%02X | `%s` | %s | %s |\n", regs[i].value, regs[i].name, regs[i].extra, regs[i].comment);
  printf("\nCounters are 64 bits at 0x%X + 0x%X * index (low word first):\n\n", LOOM_REG_COUNTER_BASE, LOOM_REG_COUNTER_STRIDE);
  printf("| index | counter | kind | meaning |\n|---|---|---|---|\n");
  for (i = 0; i < COUNT(counters); i++)
    printf("| %d | `%s` | %s | %s |\n", counters[i].value, counters[i].name, counters[i].extra, counters[i].comment);
}

void docs_configs(void) {
  int i;
  printf("| name | BATCH x BLOCK_IN x BLOCK_OUT | INP / WGT / ACC / UOP KiB | rows | OUT KiB | bus | clock | queues cmd/token | hash | part |\n");
  printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (i = 0; i < COUNT(configs); i++) {
    const struct config *c = &configs[i];
    struct derived d = derive(c);
    printf("| `%s` | %dx%dx%d | %d / %d / %d / %d | %d / %d / %d / %d | %d | %d-bit | %d MHz | %d / %d | `0x%08X` | %s |\n",
           c->name, c->batch, c->block_in, c->block_out, c->inp_kib, c->wgt_kib, c->acc_kib,
           c->uop_kib, d.inp_rows, d.wgt_rows, d.acc_rows, d.uop_rows,
           d.acc_rows * d.out_row_bytes / 1024, c->bus_bits, c->clock_mhz, c->cmdq, c->tokq,
           d.hash, c->part);
  }
}

void docs_boards(void) {
  int i;
  check_boards();
  printf("| board | part | family | config | PL clock | flow |\n|---|---|---|---|---|---|\n");
  for (i = 0; i < COUNT(boards); i++) {
    const struct board *b = &boards[i];
    printf("| `%s` | %s | %s | `%s` | %d MHz | %s%s%s |\n", b->name, b->part,
           find_part(b->part)->family, b->config, find_config(b->config)->clock_mhz, b->flow,
           b->platform[0] ? ": " : "", b->platform);
  }
}

void docs_board_memory(void) {
  int i;
  check_boards();
  printf("| board | config | buffers | BRAM36 | URAM288 | fits |\n|---|---|---|---|---|---|\n");
  for (i = 0; i < COUNT(boards); i++) {
    const struct board *b = &boards[i];
    const struct part *p = find_part(b->part);
    struct memory_use m = board_memory(b);
    int fits = m.bram18 <= 2 * p->bram36 && m.uram <= p->uram;
    printf("| `%s` | `%s` | %ld KiB | %ld.%ld of %ld (%ld%%) | %ld of %ld | %s |\n", b->name, b->config,
           m.kib, m.bram18 / 2, 5 * (m.bram18 % 2), p->bram36, 50 * m.bram18 / p->bram36, m.uram,
           p->uram, fits ? "yes" : "**no**");
  }
}

void docs_board_parts(void) {
  int i, j;
  check_boards();
  printf("| part | family | LUT | FF | DSP | BRAM36 (BRAM18) | URAM | boards |\n");
  printf("|---|---|---|---|---|---|---|---|\n");
  for (i = 0; i < COUNT(parts); i++) {
    const struct part *p = &parts[i];
    printf("| %s | %s | %ld | %ld | %ld | %ld (%ld) | %ld |", p->name, p->family, p->lut, p->ff,
           p->dsp, p->bram36, 2 * p->bram36, p->uram);
    for (j = 0; j < COUNT(boards); j++)
      if (!strcmp(boards[j].part, p->name)) printf(" %s", boards[j].name);
    printf(" |\n");
  }
}

void docs_kernel_args(void) {
  struct karg a[2 + 2 * LOOM_NUM_SEGMENTS];
  int i, n = kernel_args(a);
  printf("| id | argument | type | offset | size | port |\n|---|---|---|---|---|---|\n");
  for (i = 0; i < n; i++)
    printf("| %d | `%s` | %s | 0x%02X | %u | %s |\n", i, a[i].name, karg_type(&a[i]), a[i].offset,
           a[i].size, a[i].pointer ? LOOM_KERNEL_MEM_PORT : LOOM_KERNEL_CTRL_PORT);
}

