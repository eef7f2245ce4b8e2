/*
 * shape_onnx.h - the infer functions of generic ONNX ops, by family:
 * shape_onnx.c (elementwise, broadcasting, reductions, types; the table),
 * shape_onnx_data.c (data movement and generators), shape_onnx_nn.c
 * (windows, recurrent nets, signal processing, losses, ...).  Each follows
 * shape_infer.h's contract.
 */
#ifndef LOOM_SHAPE_ONNX_H
#define LOOM_SHAPE_ONNX_H

#include "sw_compiler/shape_infer.h"

/* shape_onnx.c */
int so_unary(struct sctx *c);
/* Whether generic nodes of op type `op` have a shape inference rule. */
int so_has_rule(const char *op);

/* shape_onnx_data.c */
int so_slice(struct sctx *c);
int so_split(struct sctx *c);
int so_pad(struct sctx *c);
int so_tile(struct sctx *c);
int so_expand(struct sctx *c);
int so_gather_elements(struct sctx *c);
int so_gather_nd(struct sctx *c);
int so_depth_to_space(struct sctx *c);
int so_resize(struct sctx *c);
int so_compress(struct sctx *c);
int so_non_zero(struct sctx *c);
int so_unique(struct sctx *c);
int so_one_hot(struct sctx *c);
int so_eye_like(struct sctx *c);
int so_constant_of_shape(struct sctx *c);
int so_range(struct sctx *c);
int so_top_k(struct sctx *c);
int so_squeeze(struct sctx *c);
int so_unsqueeze(struct sctx *c);

/* shape_onnx_nn.c */
int so_pool(struct sctx *c);
int so_global_pool(struct sctx *c);
int so_conv_transpose(struct sctx *c);
int so_max_unpool(struct sctx *c);
int so_max_roi_pool(struct sctx *c);
int so_roi_align(struct sctx *c);
int so_grid_sample(struct sctx *c);
int so_einsum(struct sctx *c);
int so_det(struct sctx *c);
int so_rnn(struct sctx *c);
int so_nms(struct sctx *c);
int so_nll_loss(struct sctx *c);
int so_sce_loss(struct sctx *c);
int so_dft(struct sctx *c);
int so_stft(struct sctx *c);
int so_window_fn(struct sctx *c);
int so_mel_weight_matrix(struct sctx *c);
int so_tfidf(struct sctx *c);

#endif
