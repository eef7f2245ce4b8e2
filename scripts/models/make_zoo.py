#!/usr/bin/python3
"""Export the model zoo (docs/zoo.md): ~20 modern networks with seeded, conditioned weights.

Nothing is downloaded: torchvision architectures with weights=None, and the
zoo's own architectures (zoo_nets.py). Each network is seeded from its name and
conditioned so that its output depends on its input as a trained network's
does (condition(): depthwise kernels with a DC part, small residual branches,
BN statistics re-estimated on image-like inputs, residual branches of
normalisation-free blocks balanced against their stream, a classifier reading
the principal directions of its features). Each model is then exported by
PyTorch 1.13 (torch.onnx.export) and, for a few, also the way other exporters
do: an old opset (7 or 9), or dynamic axes (`batch`, `DynamicDimension.0`,
`height`/`width`) that `loom compile --input-shape` must fix.

For every model NAME, <out>/zoo/NAME/ holds:
  model.onnx        the export (input `input`, or `ids` for token models; output `output`)
  calib/NNN.npy     8 calibration inputs
  check/NNN.npy     8 other check inputs (structured images, token sequences or signals)
  ref/NNN.npy       PyTorch fp32 outputs of the check inputs
  meta.json         input/output, opset, op histogram, conditioning figures, and
                    `int8_sim`: the metrics of a fake-quantized PyTorch run against
                    fp32 (int8 per-channel weights, int8 per-tensor activations at every
                    module output): the quantization noise the thresholds allow for
A model is skipped when its meta.json exists (--force remakes it).

Reduced input resolutions keep fsim runs and generation affordable; every
torchvision classifier ends in adaptive pooling, so its layers and op mix are
unchanged (see RES below and docs/zoo.md).
"""
import copy
import os
import shutil
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import zoo_nets  # noqa: E402

N_CALIB = 8
N_CHECK = 8
BN_BATCHES = 6
BN_BATCH = 8
CALIB_SEED0, CHECK_SEED0, BN_SEED0 = 1000, 2000, 3000   # disjoint input seeds
DW_NOISE = 1.0          # depthwise kernels: mean + noise of this std relative to the mean
RES_GAMMA = 0.25        # BN scale ending each inverted-residual branch
BRANCH_RATIO = 0.5      # residual branch std / stream std in LayerNorm blocks
QK_GAIN = 2.5           # BERT-like: query/key gain so that attention is not uniform
RNN_GAIN = 2.0          # LSTM / GRU weights: gates use their range instead of staying near 0.5
FEATURE_PCS = 32
LOGIT_STD = 2.0
CONV_CLS_SHIFT = 1.0    # SqueezeNet: conv classifier bias lowered by this many logit stds
COS_LIMIT = 0.95        # classifiers: max pairwise cosine of logits of different inputs
                        # (not for SqueezeNet's: ReLU then pooling, all positive)
MIN_SHARE = 0.05        # every model: min input-dependent share of the output norm
RES = 128               # torchvision CNN classifiers' input resolution (224 when trained)
VOCAB, SEQ, PAD, CLS, SEP = 1000, 32, 0, 1, 2
SIG_T, SIG_F = 24, 16   # LSTM / GRU input: [1, T, F]
TR_T, TR_F = 32, 32     # nn.TransformerEncoder input


def tv(name, **kw):
    def build(torchvision):
        return getattr(torchvision.models, name)(weights=None, **kw)
    return build


def own(fn):
    return lambda torchvision: fn()


def last_linear(torch, module):
    return [m for m in module.modules() if isinstance(m, torch.nn.Linear)][-1]


# name: build, input (kind, size), opset, classifier getter (None: not a classifier),
#       conditioning extras
SPECS = {
    "resnet18": dict(build=tv("resnet18"), fc=lambda m: m.fc),
    "resnet50": dict(build=tv("resnet50"), fc=lambda m: m.fc, res="bottleneck"),
    "mobilenetv2": dict(build=tv("mobilenet_v2"), fc=lambda m: m.classifier[-1], dw=True, res="mbv2"),
    "mobilenetv3s": dict(build=tv("mobilenet_v3_small"), fc=lambda m: m.classifier[-1], dw=True,
                         res="mbv3"),
    "mobilenetv3l": dict(build=tv("mobilenet_v3_large"), fc=lambda m: m.classifier[-1], dw=True,
                         res="mbv3"),
    "efficientnet_b0": dict(build=tv("efficientnet_b0"), fc=lambda m: m.classifier[-1], dw=True,
                            res="effnet", tails=True),
    "regnetx_400mf": dict(build=tv("regnet_x_400mf"), fc=lambda m: m.fc),
    "regnety_400mf": dict(build=tv("regnet_y_400mf"), fc=lambda m: m.fc),
    "densenet121": dict(build=tv("densenet121"), fc=lambda m: m.classifier),
    "convnext_tiny": dict(build=tv("convnext_tiny"), fc=lambda m: m.classifier[-1], dw=True,
                          branches="convnext"),
    "shufflenetv2": dict(build=tv("shufflenet_v2_x1_0"), fc=lambda m: m.fc, dw=True),
    "googlenet": dict(build=tv("googlenet", aux_logits=False, init_weights=True), fc=lambda m: m.fc),
    "mnasnet": dict(build=tv("mnasnet1_0"), fc=lambda m: m.classifier[-1], dw=True, res="mnas"),
    "squeezenet": dict(build=tv("squeezenet1_1"), fc=None, lsuv=True, cls_conv=True),
    "vit": dict(build=lambda t: t.models.VisionTransformer(image_size=64, patch_size=8, num_layers=4,
                                                           num_heads=4, hidden_dim=128, mlp_dim=256,
                                                           num_classes=10),
                input=("image", 64), opset=17, fc=lambda m: m.heads.head, branches="vit",
                export_grad=True),
    "swin_t": dict(build=tv("swin_t"), input=("image", 112), opset=14, fc=lambda m: m.head,
                   branches="swin"),
    "transformer": dict(build=own(lambda: zoo_nets.transformer_classifier(TR_F, seq=TR_T)),
                        input=("signal", TR_T, TR_F), fc=lambda m: m.fc, export_grad=True),
    "bert": dict(build=own(lambda: zoo_nets.bert_like(VOCAB, SEQ, pad=PAD)), input=("tokens",),
                 opset=14, fc=lambda m: m.fc, qk=True),
    "unet": dict(build=own(zoo_nets.unet), input=("image", 64), fc=None),
    "lstm": dict(build=own(lambda: zoo_nets.lstm_classifier(SIG_F)), input=("signal", SIG_T, SIG_F),
                 fc=lambda m: m.fc, rnn=True),
    "gru": dict(build=own(lambda: zoo_nets.gru_tagger(SIG_F)), input=("signal", SIG_T, SIG_F),
                fc=lambda m: m.fc, rnn=True),
    "detection": dict(build=own(zoo_nets.detection_head), input=("image", 96), fc=None),
}

# Other exporters' habits: the same conditioned network exported again.
VARIANTS = {
    "mobilenetv2_op9": dict(base="mobilenetv2", opset=9),
    "squeezenet_op7": dict(base="squeezenet", opset=7),
    "unet_op9": dict(base="unet", opset=9),
    "mobilenetv3s_dyn": dict(base="mobilenetv3s", dynamic={"input": {0: "batch"},
                                                           "output": {0: "batch"}}),
    "squeezenet_dyn": dict(base="squeezenet", dynamic={"input": {0: "batch", 2: "height", 3: "width"},
                                                       "output": {0: "batch"}}),
    "bert_dyn": dict(base="bert", dynamic={"ids": {0: "batch", 1: "DynamicDimension.0"},
                                           "output": {0: "batch"}}),
}
ALL = list(SPECS) + list(VARIANTS)


# ---------------------------------------------------------------- inputs

def tokens(np, seed):
    """[1,SEQ] int64 ids: CLS, a 'sentence' of 12..29 tokens, SEP, then PAD. Each sequence
    draws from a topic (a random subset of 40 words, Zipf-weighted) and repeats a few
    bigrams, as text does."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(12, SEQ - 2))
    topic = rng.choice(np.arange(3, VOCAB), size=40, replace=False)
    p = 1.0 / np.arange(1, 41) ** 1.1
    words = list(rng.choice(topic, size=n, p=p / p.sum()))
    for _ in range(2):
        i, j = rng.integers(0, n - 1, size=2)
        words[j:j + 2] = words[i:i + 2]
    ids = [CLS] + words[:n] + [SEP]
    return np.array([ids + [PAD] * (SEQ - len(ids))], dtype=np.int64)


def signal(np, seed, t, f):
    """[1,T,F] float32: each feature a mix of three shared sinusoids of random
    frequency and phase, a step at a random time and a little noise, standardised."""
    rng = np.random.default_rng(seed)
    ts = np.arange(t)[:, None]
    waves = np.concatenate([np.sin(2 * np.pi * rng.uniform(0.02, 0.3) * ts + rng.uniform(0, 6.3))
                            for _ in range(3)], 1)
    x = waves @ rng.standard_normal((3, f))
    x += (ts >= rng.integers(2, t - 2)) * rng.standard_normal(f) * 1.5
    x += 0.2 * rng.standard_normal((t, f))
    x = (x - x.mean()) / x.std()
    return x.astype(np.float32)[None]


def make_input(np, torch, spec, seed):
    kind = spec.get("input", ("image", RES))
    if kind[0] == "image":
        return common.smooth_image(np, torch, seed, kind[1])
    if kind[0] == "tokens":
        return tokens(np, seed)
    return signal(np, seed, kind[1], kind[2])


def bn_batches(np, torch, spec):
    for b in range(BN_BATCHES):
        yield np.concatenate([make_input(np, torch, spec, BN_SEED0 + b * BN_BATCH + i)
                              for i in range(BN_BATCH)])


# ---------------------------------------------------------------- conditioning

def scale_residual_bns(torch, torchvision, model, kind):
    """Set the gamma of the BN ending each inverted-residual branch to RES_GAMMA (as
    make_imagenet_nets.py does for MobileNetV2): blocks start near the identity."""
    tvm = torchvision.models
    n = 0
    with torch.no_grad():
        for m in model.modules():
            bn = None
            if kind == "mbv2" and isinstance(m, tvm.mobilenetv2.InvertedResidual) and m.use_res_connect:
                bn = m.conv[-1]
            elif kind == "mbv3" and isinstance(m, tvm.mobilenetv3.InvertedResidual) and m.use_res_connect:
                bn = m.block[-1][1]
            elif kind == "effnet" and isinstance(m, tvm.efficientnet.MBConv) and m.use_res_connect:
                bn = m.block[-1][1]
            elif kind == "mnas" and isinstance(m, tvm.mnasnet._InvertedResidual) and m.apply_residual:
                bn = m.layers[-1]
            elif kind == "bottleneck" and isinstance(m, tvm.resnet.Bottleneck):
                bn = m.bn3
            if bn is not None:
                bn.weight.fill_(RES_GAMMA)
                n += 1
    return n


def branch_pairs(torch, torchvision, model, kind):
    """(block, branch module, target) for each residual branch of a LayerNorm network;
    target(f) multiplies the branch's output by f."""
    tvm = torchvision.models
    pairs = []

    def scale_linear(lin):
        def f(s):
            lin.weight.mul_(s)
            if lin.bias is not None:
                lin.bias.mul_(s)
        return f
    for m in model.modules():
        if kind == "convnext" and isinstance(m, tvm.convnext.CNBlock):
            with torch.no_grad():
                m.layer_scale.fill_(1.0)    # torchvision's 1e-6 would switch every block off
            pairs.append((m, m.block, lambda s, p=m.layer_scale: p.mul_(s)))
        elif kind == "swin" and isinstance(m, tvm.swin_transformer.SwinTransformerBlock):
            pairs.append((m, m.attn, scale_linear(m.attn.proj)))
            pairs.append((m, m.mlp, scale_linear(last_linear(torch, m.mlp))))
        elif kind == "vit" and isinstance(m, tvm.vision_transformer.EncoderBlock):
            pairs.append((m, m.self_attention, scale_linear(m.self_attention.out_proj)))
            pairs.append((m, m.mlp, scale_linear(last_linear(torch, m.mlp))))
    return pairs


def balance_branches(torch, model, pairs, x):
    """Scale each residual branch so that its output std is BRANCH_RATIO x its block's
    input std, in one forward pass (each hook rescales the branch's output as it goes,
    so later blocks see the balanced stream). torchvision's inits leave ConvNeXt's
    branches at 1e-6 and Swin's at a few percent of the stream: the blocks would
    hardly affect the output, and errors in them would go unnoticed."""
    stream, factors, hooks = {}, {}, []
    for i, (blk, br, _) in enumerate(pairs):
        hooks.append(blk.register_forward_pre_hook(
            lambda m, inp, i=i: stream.__setitem__(i, inp[0].std().item())))

        def post(m, inp, out, i=i):
            y = out[0] if isinstance(out, tuple) else out
            f = BRANCH_RATIO * stream[i] / max(y.std().item(), 1e-12)
            factors[i] = f
            return (y * f,) + tuple(out[1:]) if isinstance(out, tuple) else y * f
        hooks.append(br.register_forward_hook(post))
    with torch.no_grad():
        model(torch.from_numpy(x))
    for h in hooks:
        h.remove()
    with torch.no_grad():
        for i, (_, _, target) in enumerate(pairs):
            target(factors[i])
    return len(pairs)


def lsuv(torch, model, x):
    """Scale each conv so its output has unit std over x, in forward order (one pass;
    the normalisation-free SqueezeNet's activations would otherwise grow or vanish)."""
    hooks, factors = [], {}
    convs = [m for m in model.modules() if isinstance(m, torch.nn.Conv2d)]

    def post(m, inp, out):
        factors[m] = 1.0 / max(out.std().item(), 1e-12)
        return out * factors[m]
    for c in convs:
        hooks.append(c.register_forward_hook(post))
    with torch.no_grad():
        model(torch.from_numpy(x))
        for h in hooks:
            h.remove()
        for c in convs:
            c.weight.mul_(factors[c])
            c.bias.mul_(factors[c])
    return len(convs)


def recenter_conv_classifier(torch, np, model, conv, batches):
    """SqueezeNet's classifier is a 1x1 conv (then ReLU and average pooling): re-centre it
    like a Linear one, with every pixel's features as a sample, then lower its bias by
    CONV_CLS_SHIFT logit stds, so that the ReLU keeps each class's strong responses only
    (zero-mean logits would leave half of all values, and averaged over the pixels every
    class would score about the same: near-ties that any noise flips)."""
    lin = torch.nn.Linear(conv.in_channels, conv.out_channels)
    with torch.no_grad():
        lin.weight.copy_(conv.weight[:, :, 0, 0])
        lin.bias.copy_(conv.bias)
    feats = []
    h = conv.register_forward_hook(lambda m, i, o: feats.append(i[0].permute(0, 2, 3, 1).clone()))
    with torch.no_grad():
        xs = [torch.from_numpy(x) for x in batches]
        for x in xs:
            model(x)
    h.remove()
    wrap = torch.nn.Sequential(lin)
    s = common.recenter_classifier(torch, wrap, lin, [f.numpy() for f in feats], FEATURE_PCS,
                                   LOGIT_STD, robust=True)
    with torch.no_grad():
        conv.weight.copy_(lin.weight[:, :, None, None])
        conv.bias.copy_(lin.bias - CONV_CLS_SHIFT * LOGIT_STD)
    return s


def condition(np, torch, torchvision, name, spec, model):
    """Everything that turns a seeded network into a conditioned one; returns a summary."""
    notes = []
    if spec.get("dw"):
        notes.append("%d depthwise kernels mean+noise" % common.init_depthwise(torch, model, DW_NOISE))
    if spec.get("res"):
        notes.append("%d residual BN gammas %.2f" % (scale_residual_bns(torch, torchvision, model,
                                                                         spec["res"]), RES_GAMMA))
    if spec.get("qk"):
        with torch.no_grad():
            for layer in model.layers:
                layer.q.weight.mul_(QK_GAIN), layer.k.weight.mul_(QK_GAIN)
        notes.append("query/key gain %.1f" % QK_GAIN)
    if spec.get("rnn"):
        with torch.no_grad():
            for pname, p in model.rnn.named_parameters():
                if pname.startswith("weight"):
                    p.mul_(RNN_GAIN)
        notes.append("recurrent weights x%.1f" % RNN_GAIN)
    x0 = next(bn_batches(np, torch, spec))
    if spec.get("lsuv"):
        model.eval()
        notes.append("%d convs scaled to unit output std" % lsuv(torch, model, x0))
    if any(isinstance(m, torch.nn.modules.batchnorm._BatchNorm) for m in model.modules()):
        notes.append("%d BN re-estimated" % common.reestimate_bn(torch, model,
                                                                 bn_batches(np, torch, spec)))
    model.eval()
    if spec.get("branches"):
        pairs = branch_pairs(torch, torchvision, model, spec["branches"])
        notes.append("%d residual branches at %.1f x stream" % (balance_branches(torch, model, pairs,
                                                                                 x0), BRANCH_RATIO))
    if spec.get("fc"):
        fc = spec["fc"](model)
        if fc.weight.abs().max() == 0:          # torchvision's ViT head starts at zero
            with torch.no_grad():
                fc.weight.normal_(0, 0.02)
        s = common.recenter_classifier(torch, model, fc, bn_batches(np, torch, spec), FEATURE_PCS,
                                       LOGIT_STD, robust="drop" if spec.get("tails") else True)
        notes.append("classifier re-centred (x%.3g)%s" % (s, " on its inliers" if spec.get("tails") else ""))
    if spec.get("cls_conv"):
        s = recenter_conv_classifier(torch, np, model, model.classifier[1], bn_batches(np, torch, spec))
        notes.append("conv classifier re-centred (x%.3g)" % s)
    return notes


# ---------------------------------------------------------------- metrics

def metrics(np, outs, refs, classifier):
    """The harness's metrics (tests/zoo/zoo_compare.c) in numpy: the min over inputs of
    the cosine of the input-dependent parts, and top-1 agreement over every row."""
    o = np.stack([a.reshape(-1).astype(np.float64) for a in outs])
    r = np.stack([a.reshape(-1).astype(np.float64) for a in refs])
    do, dr = o - o.mean(0), r - r.mean(0)
    cos = (do * dr).sum(1) / np.maximum(np.linalg.norm(do, axis=1) * np.linalg.norm(dr, axis=1), 1e-30)
    m = {"centered_cosine_min": float(cos.min()),
         "share": float(np.mean(np.linalg.norm(dr, axis=1) / np.linalg.norm(r, axis=1)))}
    if classifier:
        k = refs[0].shape[-1]
        m["top1"] = float(np.mean(o.reshape(-1, k).argmax(1) == r.reshape(-1, k).argmax(1)))
    return m


def int8_sim(np, torch, model, calib, check, refs, classifier):
    """Fake-quantized run: weights of Conv/Linear/RNN layers int8 per output channel
    (symmetric), every module's float output int8 per tensor (asymmetric, ranges from
    the calibration inputs). Functional ops between modules stay float, so this is an
    estimate of the int8 noise, not Loom's exact arithmetic."""
    q = copy.deepcopy(model).eval()
    with torch.no_grad():
        for m in q.modules():
            for pname, p in list(m.named_parameters(recurse=False)):
                if "weight" in pname and p.dim() >= 2 and not isinstance(m, torch.nn.Embedding):
                    ax = 1 if isinstance(m, torch.nn.ConvTranspose2d) else 0
                    a = p.transpose(0, ax)
                    s = a.reshape(a.shape[0], -1).abs().amax(1).clamp_min(1e-12) / 127
                    s = s.view(-1, *([1] * (a.dim() - 1)))
                    p.copy_((torch.round(a / s).clamp(-127, 127) * s).transpose(0, ax))
    leaves = [m for m in q.modules() if not list(m.children())]
    rng = {}

    def observe(m, i, o):
        if torch.is_tensor(o) and o.is_floating_point():
            lo, hi = rng.get(m, (0.0, 0.0))
            rng[m] = (min(lo, o.min().item()), max(hi, o.max().item()))

    def fake(m, i, o):
        if m in rng and torch.is_tensor(o) and o.is_floating_point():
            lo, hi = rng[m]
            s = max(hi - lo, 1e-12) / 255
            zp = round(-lo / s)
            return (torch.clamp(torch.round(o / s) + zp, 0, 255) - zp) * s
        return o
    for fn in (observe, fake):
        hooks = [m.register_forward_hook(fn) for m in leaves]
        with torch.no_grad():
            outs = [q(torch.from_numpy(x)).numpy() for x in (calib if fn is observe else check)]
        for h in hooks:
            h.remove()
    return metrics(np, outs, refs, classifier)


# ---------------------------------------------------------------- export

def export(np, torch, name, model, spec, var, x, path):
    opset = var.get("opset", spec.get("opset", 13))
    in_name = "ids" if spec.get("input", ("image",))[0] == "tokens" else "input"
    return common.export_onnx(model, torch.from_numpy(x), path, input_name=in_name, output_name="output",
                              opset=opset, dynamic_axes=var.get("dynamic"),
                              no_grad=not spec.get("export_grad"))


def make_model(np, torch, torchvision, out, name, t):
    spec = SPECS[name]
    seed = zlib.crc32(name.encode()) & 0x7fffffff       # each model its own seed
    np.random.seed(seed)
    torch.manual_seed(seed)
    d = common.makedirs(os.path.join(out, name))
    t0 = t()
    model = spec["build"](torchvision)
    notes = condition(np, torch, torchvision, name, spec, model)
    calib = [make_input(np, torch, spec, CALIB_SEED0 + i) for i in range(N_CALIB)]
    check = [make_input(np, torch, spec, CHECK_SEED0 + i) for i in range(N_CHECK)]
    with torch.no_grad():
        refs = [model(torch.from_numpy(x)).numpy().astype(np.float32) for x in check]
    classifier = bool(spec.get("fc")) or bool(spec.get("cls_conv"))
    st = common.logit_stats(np, refs)
    m = metrics(np, refs, refs, classifier)
    sim = int8_sim(np, torch, model, calib, check, refs, classifier)
    common.save_npy_dir(os.path.join(d, "calib"), calib)
    common.save_npy_dir(os.path.join(d, "check"), check)
    common.save_npy_dir(os.path.join(d, "ref"), refs)
    desc = export(np, torch, name, model, spec, {}, check[0], os.path.join(d, "model.onnx"))
    meta = {"name": name, "base": name, "classifier": classifier, "conditioning": notes,
            "input_kind": list(spec.get("input", ("image", RES))), "versions": common.versions(),
            "params": int(sum(p.numel() for p in model.parameters())), "output_stats": st,
            "share": m["share"], "int8_sim": sim, "reference": "torch", **desc}
    if classifier:
        meta["ref_top1"] = [int(r.reshape(-1, r.shape[-1]).argmax(1)[0]) for r in refs]
    common.log("%s: %s; output share %.2f, pairwise cosine max %.3f, int8 sim %s (%.1fs)"
               % (name, ", ".join(notes), m["share"], st["max_pairwise_cosine"],
                  {k: round(v, 4) for k, v in sim.items()}, t() - t0))
    problems = []
    if spec.get("fc") and st["max_pairwise_cosine"] >= COS_LIMIT:
        problems.append("logits of different inputs too similar (cosine >= %.2f)" % COS_LIMIT)
    if m["share"] < MIN_SHARE:
        problems.append("input-dependent share of the output %.3f < %.2f" % (m["share"], MIN_SHARE))
    for v, var in VARIANTS.items():
        if var["base"] == name:
            make_variant(np, torch, out, v, model, spec, check[0], meta)
    if problems:            # no meta.json: the harness reports the model as not made
        sys.stderr.write("error: %s: %s\n" % (name, "; ".join(problems)))
        return False
    common.write_manifest(os.path.join(d, "meta.json"), meta)
    return True


def make_variant(np, torch, out, name, model, spec, x, base_meta):
    var = VARIANTS[name]
    d = common.makedirs(os.path.join(out, name))
    for sub in ("calib", "check", "ref"):
        dst = os.path.join(d, sub)
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(os.path.join(out, var["base"], sub), dst)
    desc = export(np, torch, name, model, spec, var, x, os.path.join(d, "model.onnx"))
    meta = dict(base_meta, name=name, base=var["base"], reference="onnxruntime", **desc)
    if var.get("dynamic"):
        meta["dynamic_axes"] = {k: {str(a): n for a, n in v.items()} for k, v in var["dynamic"].items()}
    common.write_manifest(os.path.join(d, "meta.json"), meta)
    common.log("%s: exported (opset %d, inputs %s)" % (name, desc["opset"], desc["inputs"]))


def main():
    ap = common.arg_parser(__doc__.strip().splitlines()[0])
    ap.add_argument("--models", default="", help="comma-separated names (default: all): " + ",".join(ALL))
    args = ap.parse_args()
    names = [n for n in args.models.split(",") if n] or ALL
    bad = [n for n in names if n not in ALL]
    if bad:
        ap.error("unknown model(s): %s" % ", ".join(bad))
    out = os.path.join(os.path.abspath(args.out), "zoo")
    bases = []
    for n in names:
        b = VARIANTS[n]["base"] if n in VARIANTS else n
        files = [os.path.join(out, n, "meta.json"), os.path.join(out, b, "meta.json")]
        if (args.force or not common.outputs_exist(files)) and b not in bases:
            bases.append(b)
    if not bases:
        common.log("all of %s present in %s (use --force to regenerate)" % (",".join(names), out))
        return 0
    common.require("numpy", "torch", "torchvision", "onnx")
    import numpy as np
    import torch
    import torchvision
    t = common.Timer()
    common.seed_everything(0)
    bad = []
    for b in bases:
        try:
            ok = make_model(np, torch, torchvision, out, b, t)
        except Exception as e:  # an export PyTorch refuses: say which, make the others
            sys.stderr.write("error: %s: %s: %s\n" % (b, type(e).__name__, e))
            ok = False
        if not ok:
            bad.append(b)
    common.log("done in %.1fs%s" % (t(), "; degenerate: " + ", ".join(bad) if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
