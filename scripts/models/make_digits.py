#!/usr/bin/python3
"""Train two tiny classifiers on sklearn's bundled 8x8 digits and export them to ONNX.

  digits_mlp.onnx : input [1,64]      -> Gemm 64->64 ReLU -> 64->32 ReLU -> 32->10
  digits_cnn.onnx : input [1,1,8,8]   -> Conv16+BN+ReLU -> Conv32+BN+ReLU -> MaxPool2
                                        -> Conv32+BN+ReLU -> GlobalAveragePool -> Linear 10
                    (BatchNormalization nodes are kept in the ONNX file so the Loom
                     compiler's BN folding is exercised)

Also writes the held-out test set, 64-image calibration sets, a few single test
inputs with PyTorch reference logits, and digits_manifest.json.
No network access: load_digits() ships inside scikit-learn.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

SEED = 0
N_CALIB = 64
N_SINGLE = 4


def build_models(torch):
    nn = torch.nn

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(64, 64)
            self.fc2 = nn.Linear(64, 32)
            self.fc3 = nn.Linear(32, 10)

        def forward(self, x):
            x = torch.relu(self.fc1(x))
            x = torch.relu(self.fc2(x))
            return self.fc3(x)

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 16, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(16)
            self.conv2 = nn.Conv2d(16, 32, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(32)
            self.pool = nn.MaxPool2d(2)
            self.conv3 = nn.Conv2d(32, 32, 3, padding=1, bias=True)
            self.bn3 = nn.BatchNorm2d(32)
            self.gap = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(32, 10)

        def forward(self, x):
            x = torch.relu(self.bn1(self.conv1(x)))
            x = torch.relu(self.bn2(self.conv2(x)))
            x = self.pool(x)
            x = torch.relu(self.bn3(self.conv3(x)))
            x = self.gap(x)
            x = torch.flatten(x, 1)
            return self.fc(x)

    return MLP, CNN


def train(torch, model, x, y, epochs, lr, seed, log_prefix):
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
    lossf = torch.nn.CrossEntropyLoss()
    n = x.shape[0]
    bs = 32
    for ep in range(epochs):
        model.train()
        perm = torch.randperm(n, generator=g)
        tot = 0.0
        for i in range(0, n, bs):
            idx = perm[i:i + bs]
            opt.zero_grad()
            loss = lossf(model(x[idx]), y[idx])
            loss.backward()
            opt.step()
            tot += loss.item() * idx.numel()
        sched.step()
        if ep == 0 or (ep + 1) % 10 == 0 or ep == epochs - 1:
            common.log("  %s epoch %3d/%d  loss %.4f" % (log_prefix, ep + 1, epochs, tot / n))
    model.eval()
    return model


def accuracy(torch, model, x, y):
    model.eval()
    with torch.no_grad():
        return float((model(x).argmax(1) == y).float().mean().item())


def main():
    ap = common.arg_parser(__doc__.strip().splitlines()[0])
    ap.add_argument("--epochs-mlp", type=int, default=60)
    ap.add_argument("--epochs-cnn", type=int, default=30)
    args = ap.parse_args()
    out = os.path.abspath(args.out)
    args.out = out

    calib_cnn = os.path.join(out, "calib_digits_cnn")
    calib_mlp = os.path.join(out, "calib_digits_mlp")
    files = [os.path.join(out, f) for f in (
        "digits_mlp.onnx", "digits_cnn.onnx", "digits_test_x.npy", "digits_test_x_flat.npy",
        "digits_test_y.npy", "digits_manifest.json")]
    files += [os.path.join(out, "digits_%s_%s%d.npy" % (m, k, i))
              for m in ("cnn", "mlp") for k in ("in", "out") for i in range(N_SINGLE)]
    files += [os.path.join(d, "%03d.npy" % i) for d in (calib_cnn, calib_mlp) for i in range(N_CALIB)]
    if common.skip_if_done(args, files):
        return 0

    common.require("numpy", "torch", "onnx", "sklearn")
    import numpy as np
    import torch
    import onnx  # noqa: F401  (used by common.export_onnx)
    import sklearn
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    t = common.Timer()
    common.seed_everything(SEED)
    common.makedirs(out)

    d = load_digits()
    X = (d.data.astype(np.float32) / np.float32(16.0))          # [1797,64] in [0,1]
    Y = d.target.astype(np.int64)
    xtr, xte, ytr, yte = train_test_split(X, Y, test_size=360, random_state=0, stratify=Y)
    common.log("digits: %d train / %d held-out, %d classes (sklearn %s)"
               % (len(xtr), len(xte), len(np.unique(Y)), sklearn.__version__))

    MLP, CNN = build_models(torch)
    xtr_t, ytr_t = torch.from_numpy(xtr), torch.from_numpy(ytr)
    xte_t, yte_t = torch.from_numpy(xte), torch.from_numpy(yte)

    torch.manual_seed(SEED)
    mlp = MLP()
    common.log("training MLP 64-64-32-10 ...")
    train(torch, mlp, xtr_t, ytr_t, args.epochs_mlp, 3e-3, SEED, "mlp")
    acc_mlp = accuracy(torch, mlp, xte_t, yte_t)
    common.log("MLP held-out accuracy %.4f  (%.1fs)" % (acc_mlp, t()))

    torch.manual_seed(SEED + 1)
    cnn = CNN()
    common.log("training CNN (3 conv + BN) ...")
    train(torch, cnn, xtr_t.view(-1, 1, 8, 8), ytr_t, args.epochs_cnn, 3e-3, SEED + 1, "cnn")
    acc_cnn = accuracy(torch, cnn, xte_t.view(-1, 1, 8, 8), yte_t)
    common.log("CNN held-out accuracy %.4f  (%.1fs)" % (acc_cnn, t()))

    for name, acc in (("MLP", acc_mlp), ("CNN", acc_cnn)):
        if acc < 0.95:
            common.log("WARNING: %s held-out accuracy %.4f is below the 0.95 target" % (name, acc))

    # ---- ONNX export (batch 1, static shapes) ----
    mlp_desc = common.export_onnx(mlp, torch.zeros(1, 64), os.path.join(out, "digits_mlp.onnx"))
    cnn_desc = common.export_onnx(cnn, torch.zeros(1, 1, 8, 8), os.path.join(out, "digits_cnn.onnx"),
                                  keep_batchnorm=True)
    common.log("exported digits_mlp.onnx ops=%s" % mlp_desc["ops"])
    common.log("exported digits_cnn.onnx ops=%s" % cnn_desc["ops"])
    if "BatchNormalization" not in cnn_desc["ops"]:
        common.log("WARNING: BatchNormalization was folded by the exporter")

    # ---- data ----
    common.save_npy(os.path.join(out, "digits_test_x.npy"), xte.reshape(-1, 1, 8, 8), np.float32)
    common.save_npy(os.path.join(out, "digits_test_x_flat.npy"), xte, np.float32)
    common.save_npy(os.path.join(out, "digits_test_y.npy"), yte, np.int32)
    calib = xtr[:N_CALIB]
    common.save_npy_dir(calib_cnn, [c.reshape(1, 1, 8, 8) for c in calib], np.float32)
    common.save_npy_dir(calib_mlp, [c.reshape(1, 64) for c in calib], np.float32)
    singles = {}
    with torch.no_grad():
        for i in range(N_SINGLE):
            xin = xte[i]
            for m, model, shape in (("cnn", cnn, (1, 1, 8, 8)), ("mlp", mlp, (1, 64))):
                xi = xin.reshape(shape).astype(np.float32)
                yo = model(torch.from_numpy(xi)).numpy().astype(np.float32)
                common.save_npy(os.path.join(out, "digits_%s_in%d.npy" % (m, i)), xi)
                common.save_npy(os.path.join(out, "digits_%s_out%d.npy" % (m, i)), yo)
            singles[str(i)] = {"label": int(yte[i])}

    def model_entry(fname, desc, acc, test_x, calib_dir, m):
        return {
            "onnx": fname,
            "float_accuracy": round(acc, 6),
            "inputs": desc["inputs"],
            "outputs": desc["outputs"],
            "ops": desc["ops"],
            "opset": desc["opset"],
            "test_x": test_x,
            "test_y": "digits_test_y.npy",
            "calib_dir": calib_dir,
            "single_inputs": ["digits_%s_in%d.npy" % (m, i) for i in range(N_SINGLE)],
            "single_ref_outputs": ["digits_%s_out%d.npy" % (m, i) for i in range(N_SINGLE)],
        }

    manifest = {
        "dataset": "sklearn load_digits, pixels/16 -> [0,1], train_test_split(test_size=360, "
                   "random_state=0, stratify=y)",
        "n_train": int(len(xtr)), "n_test": int(len(xte)), "n_calib": N_CALIB,
        "calib_source": "first %d training images" % N_CALIB,
        "single_input_labels": singles,
        "seed": SEED,
        "versions": common.versions(),
        "models": {
            "digits_mlp": model_entry("digits_mlp.onnx", mlp_desc, acc_mlp,
                                      "digits_test_x_flat.npy", "calib_digits_mlp", "mlp"),
            "digits_cnn": model_entry("digits_cnn.onnx", cnn_desc, acc_cnn,
                                      "digits_test_x.npy", "calib_digits_cnn", "cnn"),
        },
    }
    common.write_manifest(os.path.join(out, "digits_manifest.json"), manifest)
    common.report_files([f for f in files if "calib_" not in f and "_in" not in f
                         and "_out" not in f], out)
    common.log("done in %.1fs: MLP acc %.4f, CNN acc %.4f" % (t(), acc_mlp, acc_cnn))
    return 0


if __name__ == "__main__":
    sys.exit(main())
