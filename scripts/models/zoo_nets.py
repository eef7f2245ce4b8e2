#!/usr/bin/python3
"""The zoo's own architectures (make_zoo.py), small versions of common model families.

torchvision has no U-Net, recurrent, BERT-like or detection models, so these are
written here in the way such models are usually written in PyTorch, so that their
ONNX exports have the usual shapes: a U-Net with ConvTranspose and Resize
(bilinear and nearest) skip connections, an LSTM classifier, a bidirectional GRU
tagger, a BERT-like encoder (int64 token ids, token and position embeddings, an
attention mask computed from the ids, Erf GELU, LayerNorm, a tanh pooler), an
`nn.TransformerEncoder` classifier, and a YOLO-like detection head (Sigmoid,
Pow, Slice and Concat over two scales). The module imports torch lazily: only
the builders below use it.
"""
import math


def _nn():
    import torch
    return torch, torch.nn


def conv_bn_relu(cin, cout, k=3, stride=1):
    _, nn = _nn()
    return nn.Sequential(nn.Conv2d(cin, cout, k, stride, k // 2, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


def unet(width=16, classes=4):
    """3-level U-Net: ConvTranspose up from the bottleneck, bilinear Resize (with a 1x1
    reduction) and nearest Resize on the way up; skip connections by Concat."""
    torch, nn = _nn()
    w = width

    def block(cin, cout):
        return nn.Sequential(conv_bn_relu(cin, cout), conv_bn_relu(cout, cout))

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc1, self.enc2, self.enc3 = block(3, w), block(w, 2 * w), block(2 * w, 4 * w)
            self.pool = nn.MaxPool2d(2)
            self.bott = block(4 * w, 8 * w)
            self.up3 = nn.ConvTranspose2d(8 * w, 4 * w, 2, stride=2)
            self.dec3 = block(8 * w, 4 * w)
            self.up2 = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
            self.red2 = nn.Conv2d(4 * w, 2 * w, 1)
            self.dec2 = block(4 * w, 2 * w)
            self.up1 = nn.Upsample(scale_factor=2, mode="nearest")
            self.dec1 = block(3 * w, w)
            self.head = nn.Conv2d(w, classes, 1)

        def forward(self, x):
            e1 = self.enc1(x)
            e2 = self.enc2(self.pool(e1))
            e3 = self.enc3(self.pool(e2))
            b = self.bott(self.pool(e3))
            d3 = self.dec3(torch.cat([self.up3(b), e3], 1))
            d2 = self.dec2(torch.cat([self.red2(self.up2(d3)), e2], 1))
            d1 = self.dec1(torch.cat([self.up1(d2), e1], 1))
            return self.head(d1)

    return UNet()


def lstm_classifier(features=16, hidden=64, layers=2, classes=10):
    """Two-layer LSTM over a [1,T,F] sequence; a Linear classifier on the last step."""
    _, nn = _nn()

    class LSTMNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(features, hidden, num_layers=layers, batch_first=True)
            self.fc = nn.Linear(hidden, classes)

        def forward(self, x):
            y, _ = self.rnn(x)
            return self.fc(y[:, -1])

    return LSTMNet()


def gru_tagger(features=16, hidden=48, classes=6):
    """Bidirectional GRU over a [1,T,F] sequence; a Linear tag classifier at every step."""
    _, nn = _nn()

    class GRUNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.GRU(features, hidden, batch_first=True, bidirectional=True)
            self.fc = nn.Linear(2 * hidden, classes)

        def forward(self, x):
            y, _ = self.rnn(x)
            return self.fc(y)

    return GRUNet()


def transformer_classifier(features=32, d_model=128, heads=4, ff=256, layers=2, seq=32,
                           classes=10):
    """nn.TransformerEncoder (post-norm, GELU) over a projected [1,T,F] sequence with a
    learned position embedding; mean over time, then a Linear classifier."""
    torch, nn = _nn()

    class TransEnc(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(features, d_model)
            self.pos = nn.Parameter(torch.randn(1, seq, d_model) * 0.5)
            layer = nn.TransformerEncoderLayer(d_model, heads, ff, dropout=0.0,
                                               activation="gelu", batch_first=True)
            self.enc = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
            self.fc = nn.Linear(d_model, classes)

        def forward(self, x):
            h = self.enc(self.proj(x) + self.pos)
            return self.fc(h.mean(1))

    return TransEnc()


def bert_like(vocab=1000, seq=32, dim=128, heads=4, ff=512, layers=2, classes=8, pad=0):
    """A BERT-like encoder written as Hugging Face's BERT is: int64 token ids, token +
    position embeddings (positions from arange over the ids' length), embedding
    LayerNorm, an additive attention mask from `ids != pad`, self-attention with
    Div by sqrt(d), Erf GELU, post-norm residuals, a tanh pooler on token 0 and a
    Linear classifier."""
    torch, nn = _nn()
    dh = dim // heads

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.q, self.k, self.v = nn.Linear(dim, dim), nn.Linear(dim, dim), nn.Linear(dim, dim)
            self.o = nn.Linear(dim, dim)
            self.ln1 = nn.LayerNorm(dim, eps=1e-12)
            self.ff1, self.ff2 = nn.Linear(dim, ff), nn.Linear(ff, dim)
            self.ln2 = nn.LayerNorm(dim, eps=1e-12)

        def split(self, t):
            b, s, _ = t.shape
            return t.view(b, s, heads, dh).permute(0, 2, 1, 3)

        def forward(self, h, mask):
            q, k, v = self.split(self.q(h)), self.split(self.k(h)), self.split(self.v(h))
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(dh) + mask
            ctx = torch.matmul(scores.softmax(-1), v).permute(0, 2, 1, 3).contiguous()
            ctx = ctx.view(ctx.shape[0], ctx.shape[1], dim)
            h = self.ln1(h + self.o(ctx))
            return self.ln2(h + self.ff2(nn.functional.gelu(self.ff1(h))))

    class Bert(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(vocab, dim)
            self.pos = nn.Embedding(seq, dim)
            self.ln = nn.LayerNorm(dim, eps=1e-12)
            self.layers = nn.ModuleList(Layer() for _ in range(layers))
            self.pool = nn.Linear(dim, dim)
            self.fc = nn.Linear(dim, classes)

        def forward(self, ids):
            pos = torch.arange(ids.shape[1], dtype=torch.long).unsqueeze(0)
            mask = (ids != pad).to(torch.float32)[:, None, None, :]
            mask = (1.0 - mask) * -10000.0
            h = self.ln(self.tok(ids) + self.pos(pos))
            for layer in self.layers:
                h = layer(h, mask)
            return self.fc(torch.tanh(self.pool(h[:, 0])))

    return Bert()


def detection_head(classes=3, anchors=3):
    """A small YOLO-like detector: a strided conv backbone with two output scales (/8 and
    /16), a 1x1 prediction conv per scale, predictions reshaped to [1, A*H*W, 5+C],
    Sigmoid, box decoding (xy*2-0.5, (wh*2)^2 * anchor) and Concat of both scales."""
    torch, nn = _nn()
    no = 5 + classes

    class Det(nn.Module):
        def __init__(self):
            super().__init__()
            self.s1 = nn.Sequential(conv_bn_relu(3, 16, stride=2), conv_bn_relu(16, 32, stride=2),
                                    conv_bn_relu(32, 64, stride=2), conv_bn_relu(64, 64))
            self.s2 = nn.Sequential(conv_bn_relu(64, 128, stride=2), conv_bn_relu(128, 128))
            self.p3 = nn.Conv2d(64, anchors * no, 1)
            self.p4 = nn.Conv2d(128, anchors * no, 1)
            self.register_buffer("anchor", torch.tensor([1.0, 2.0, 4.0]).view(1, anchors, 1, 1))

        def decode(self, y):
            b, _, h, w = y.shape
            y = y.view(b, anchors, no, h * w).permute(0, 1, 3, 2).sigmoid()
            xy = y[..., 0:2] * 2.0 - 0.5
            wh = (y[..., 2:4] * 2.0) ** 2 * self.anchor
            y = torch.cat([xy, wh, y[..., 4:]], -1)
            return y.reshape(b, anchors * h * w, no)

        def forward(self, x):
            f3 = self.s1(x)
            f4 = self.s2(f3)
            return torch.cat([self.decode(self.p3(f3)), self.decode(self.p4(f4))], 1)

    return Det()
