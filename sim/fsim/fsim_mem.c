/*
 * fsim_mem.c - LOAD and STORE: 2-D strided DMA between a DRAM segment and
 * SRAM, with padding on the way in and saturation (through OUT) on the way
 * out.
 *
 * A transfer moves y_size x x_size DRAM rows of R bytes; DRAM row (y, x)
 * sits at byte (dram_offset + y * x_stride + x) * R of its segment.  A LOAD
 * writes the padded H x W block densely from sram_base; a STORE reads OUT
 * rows sram_base + y * x_size + x.
 *
 * Memory protection is the point of (segment, offset) addressing, so every
 * bound is checked before a single byte moves, in 64-bit arithmetic that
 * cannot wrap (the fields are at most 28 + 16 + 16 bits wide): a failing
 * transfer leaves SRAM and DRAM untouched.  The segment is checked before
 * SRAM, and both before the rows are charged to the work budget.  An empty
 * transfer (x_size or y_size zero) is a no-op with no checks.
 *
 * ISA v2: LOAD PAR writes epilogue rows (BATCH x BLOCK_OUT int32 biases, then
 * as many multipliers), LOAD LUT the 256-byte activation table, and a LOAD
 * INP with src_out reads OUT rows instead of DRAM (the on-chip move of a
 * fused chain of layers): the "DRAM rows" are OUT rows, bounded by the OUT
 * buffer (SRAM, not SEGMENT), and no DRAM byte is counted.  A LOAD WGT with
 * wgt_transpose writes each B x B row transposed (the byte permutation of
 * loom_load.v); it moves and counts the same bytes.
 */
#include <stdio.h>
#include <string.h>

#include "sim/fsim/fsim_internal.h"

/* One past the last DRAM row the transfer touches: isa.md's `last`. */
static uint64_t last_row(const struct loom_insn_mem *m) {
  return (uint64_t)m->dram_offset + (uint64_t)(m->y_size - 1) * m->x_stride + m->x_size;
}

static uint32_t check_segment(struct fsim *sim, const struct fsim_slot *s, uint32_t r) {
  const struct loom_insn_mem *m = &s->insn.mem;
  LOOM_ASSERT(m->segment < LOOM_NUM_SEGMENTS);
  const struct fsim_segment *seg = &sim->st.job->seg[m->segment];
  if (seg->size == 0 || !seg->data)
    return fsim_fail(sim, LOOM_ERR_SEGMENT, s, "segment %u is unmapped", m->segment);
  uint64_t end = last_row(m) * r;
  if (end > seg->size)
    return fsim_fail(sim, LOOM_ERR_SEGMENT, s,
                     "segment %u: the transfer's last DRAM row %llu (%u bytes per row) ends at "
                     "byte %llu, past the segment size %llu",
                     m->segment, (unsigned long long)(last_row(m) - 1), r,
                     (unsigned long long)end, (unsigned long long)seg->size);
  return LOOM_ERR_NONE;
}

static uint32_t check_sram(struct fsim *sim, const struct fsim_slot *s, uint32_t buffer,
                           uint64_t rows) {
  uint64_t end = (uint64_t)s->insn.mem.sram_base + rows;
  uint32_t have = loom_hw_buffer_rows(sim->cfg, (int)buffer);
  if (end > have)
    return fsim_fail(sim, LOOM_ERR_SRAM, s, "SRAM rows %u..%llu are past the %s buffer's %u rows",
                     s->insn.mem.sram_base, (unsigned long long)(end - 1),
                     loom_buffer_name(buffer), have);
  return LOOM_ERR_NONE;
}

/* Address of DRAM row (y, x) of the transfer. */
static uint8_t *dram_row(struct fsim *sim, const struct loom_insn_mem *m, uint32_t y,
                               uint32_t x, uint32_t r) {
  uint64_t row = (uint64_t)m->dram_offset + (uint64_t)y * m->x_stride + x;
  return sim->st.job->seg[m->segment].data + row * r;
}

static int32_t le32(const uint8_t *p) {
  uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
  return (int32_t)u;
}

/* ACC row from DRAM (int32 little-endian, or int8 when src_int8), or filled
 * with the sign-extended pad value when src is NULL; OUT follows. */
static void write_acc_row(struct fsim *sim, const struct loom_insn_mem *m, uint32_t row,
                          const uint8_t *src) {
  int32_t *a = sim->acc + (size_t)row * sim->acc_elems;
  uint32_t n = sim->acc_elems;
  if (!src)
    for (uint32_t i = 0; i < n; i++) a[i] = m->pad_value;
  else if (m->src_int8)
    for (uint32_t i = 0; i < n; i++) a[i] = (int8_t)src[i];
  else
    for (uint32_t i = 0; i < n; i++) a[i] = le32(src + 4 * (size_t)i);
  fsim_mirror_row(sim, row);
}

/* PAR row from DRAM: the biases, then the multipliers, int32 little-endian. */
static void write_par_row(struct fsim *sim, uint32_t row, const uint8_t *src) {
  int32_t *p = sim->par + (size_t)row * 2 * sim->acc_elems;
  for (uint32_t i = 0; i < 2 * sim->acc_elems; i++) p[i] = le32(src + 4 * (size_t)i);
}

/* WGT row from DRAM: a copy, or with wgt_transpose the block transposed,
 * SRAM [o][k] = DRAM [k][o] (block_in == block_out, loomgen). */
static void write_wgt_row(struct fsim *sim, const struct loom_insn_mem *m, uint32_t row,
                          const uint8_t *src) {
  int8_t *w = sim->wgt + (size_t)row * sim->wgt_elems;
  uint32_t b = (uint32_t)sim->cfg->block_in;
  if (!m->wgt_transpose) {
    memcpy(w, src, sim->wgt_elems);
    return;
  }
  LOOM_ASSERT(b * b == sim->wgt_elems);
  for (uint32_t o = 0; o < b; o++)
    for (uint32_t k = 0; k < b; k++) w[o * b + k] = (int8_t)src[k * b + o];
}

/* Writes SRAM row `row` of the LOAD's buffer from `src`, or padding if NULL. */
static void write_row(struct fsim *sim, const struct loom_insn_mem *m, uint32_t row,
                      const uint8_t *src) {
  switch (m->buffer) {
  case LOOM_BUF_UOP: memcpy(sim->uop + (size_t)row * LOOM_UOP_BYTES, src, LOOM_UOP_BYTES); break;
  case LOOM_BUF_WGT: write_wgt_row(sim, m, row, src); break;
  case LOOM_BUF_INP:
    if (src) memcpy(sim->inp + (size_t)row * sim->inp_elems, src, sim->inp_elems);
    else memset(sim->inp + (size_t)row * sim->inp_elems, (int8_t)m->pad_value, sim->inp_elems);
    break;
  case LOOM_BUF_ACC: write_acc_row(sim, m, row, src); break;
  case LOOM_BUF_PAR: write_par_row(sim, row, src); break;
  case LOOM_BUF_LUT: memcpy(sim->lut, src, sizeof sim->lut); break;
  default: LOOM_ASSERT(0 && "loom_insn_decode rejects LOADs into other buffers");
  }
}

static int is_pad(const struct loom_insn_mem *m, uint32_t yy, uint32_t xx) {
  return yy < m->y_pad_top || yy >= m->y_pad_top + m->y_size || xx < m->x_pad_left ||
         xx >= m->x_pad_left + m->x_size;
}

/* The DRAM byte counter of each buffer's loads (PAR and LUT count as
 * accumulator-side parameters: BYTES_RD_ACC). */
static const int load_counter[LOOM_BUF_COUNT] = {
    [LOOM_BUF_UOP] = LOOM_CNT_BYTES_RD_UOP, [LOOM_BUF_WGT] = LOOM_CNT_BYTES_RD_WGT,
    [LOOM_BUF_INP] = LOOM_CNT_BYTES_RD_INP, [LOOM_BUF_ACC] = LOOM_CNT_BYTES_RD_ACC,
    [LOOM_BUF_OUT] = -1, [LOOM_BUF_PAR] = LOOM_CNT_BYTES_RD_ACC, [LOOM_BUF_LUT] = LOOM_CNT_BYTES_RD_ACC};

/* src_out: the source rows must lie in OUT (which has acc_rows rows). */
static uint32_t check_out_source(struct fsim *sim, const struct fsim_slot *s) {
  uint64_t end = last_row(&s->insn.mem);
  if (end > sim->acc_rows)
    return fsim_fail(sim, LOOM_ERR_SRAM, s, "source OUT rows end at row %llu, past the buffer's %u rows",
                     (unsigned long long)(end - 1), sim->acc_rows);
  return LOOM_ERR_NONE;
}

/* Source of row (y, x) of the transfer: DRAM, or OUT for src_out. */
static const uint8_t *source_row(struct fsim *sim, const struct loom_insn_mem *m, uint32_t y, uint32_t x,
                                 uint32_t r) {
  if (!m->src_out) return dram_row(sim, m, y, x, r);
  uint64_t row = (uint64_t)m->dram_offset + (uint64_t)y * m->x_stride + x;
  return (const uint8_t *)sim->out + row * sim->acc_elems;
}

uint32_t fsim_load(struct fsim *sim, const struct fsim_slot *s) {
  const struct loom_insn_mem *m = &s->insn.mem;
  if (m->x_size == 0 || m->y_size == 0) return LOOM_ERR_NONE;
  uint32_t r = loom_hw_row_bytes(sim->cfg, (int)m->buffer, (int)m->src_int8);
  uint32_t w = m->x_pad_left + m->x_size + m->x_pad_right;
  uint32_t h = m->y_pad_top + m->y_size + m->y_pad_bottom;
  uint32_t err = m->src_out ? check_out_source(sim, s) : check_segment(sim, s, r);
  if (!err) err = check_sram(sim, s, m->buffer, (uint64_t)h * w);
  if (err) return err;
  if (!fsim_charge(sim, s, (uint64_t)h * w)) return LOOM_ERR_TIMEOUT;
  LOOM_ASSERT(!m->src_out || r == sim->acc_elems); /* block_in == block_out (loomgen) */
  for (uint32_t yy = 0; yy < h; yy++)
    for (uint32_t xx = 0; xx < w; xx++) {
      const uint8_t *src = is_pad(m, yy, xx)
                               ? NULL
                               : source_row(sim, m, yy - m->y_pad_top, xx - m->x_pad_left, r);
      write_row(sim, m, m->sram_base + yy * w + xx, src);
    }
  if (!m->src_out) sim->st.res->counters[load_counter[m->buffer]] += (uint64_t)m->y_size * m->x_size * r;
  return LOOM_ERR_NONE;
}

uint32_t fsim_store(struct fsim *sim, const struct fsim_slot *s) {
  const struct loom_insn_mem *m = &s->insn.mem;
  if (m->x_size == 0 || m->y_size == 0) return LOOM_ERR_NONE;
  uint32_t r = loom_hw_row_bytes(sim->cfg, LOOM_BUF_OUT, 0);
  uint32_t err = check_segment(sim, s, r);
  if (!err) err = check_sram(sim, s, LOOM_BUF_OUT, (uint64_t)m->y_size * m->x_size);
  if (err) return err;
  if (!fsim_charge(sim, s, (uint64_t)m->y_size * m->x_size)) return LOOM_ERR_TIMEOUT;
  LOOM_ASSERT(r == sim->acc_elems);
  for (uint32_t y = 0; y < m->y_size; y++)
    for (uint32_t x = 0; x < m->x_size; x++) {
      const int8_t *src = sim->out + (size_t)(m->sram_base + y * m->x_size + x) * r;
      memcpy(dram_row(sim, m, y, x, r), src, r);
    }
  sim->st.res->counters[LOOM_CNT_BYTES_WR_OUT] += (uint64_t)m->y_size * m->x_size * r;
  return LOOM_ERR_NONE;
}
