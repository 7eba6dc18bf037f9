"""Models exported from PyTorch at test time (no .onnx file is committed), with their inputs
and PyTorch's outputs as the reference. build(name, out_dir) writes NAME.onnx and returns
(inputs, outputs): dicts of the ONNX input and output names to NumPy arrays, in order.
Weights are random (seeded), the models in eval mode."""
import collections
import io
import os
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

warnings.filterwarnings("ignore")


class MmRelu(nn.Module):
    """The course's model: matmul with a 128 x 128 weight, then relu."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(128, 128))

    def forward(self, x):
        return torch.relu(torch.matmul(x, self.weight))


class Mlp(nn.Module):
    """x.view(x.size(0), -1) with a dynamic batch: PyTorch's shape arithmetic on a symbolic
    dimension; Linear layers, ReLU, LogSoftmax."""

    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(784, 128), nn.Linear(128, 10)

    def forward(self, x):
        x = x.view(x.size(0), -1)
        return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)


class ConvNet(nn.Module):
    """Conv + BatchNorm + ReLU6, a depthwise convolution, Hardswish, MaxPool with ceil_mode,
    AvgPool, LeakyReLU, Hardsigmoid, SiLU-like gating, AdaptiveAvgPool, Dropout, Linear."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.dw = nn.Conv2d(8, 8, 3, padding=2, dilation=2, groups=8)
        self.bn2 = nn.BatchNorm2d(8)
        self.pw = nn.Conv2d(8, 16, 1)
        self.fc = nn.Linear(16, 6)
        self.drop = nn.Dropout(0.2)
        for bn in (self.bn1, self.bn2):
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 2.0)
            bn.weight.data.uniform_(0.5, 1.5)
            bn.bias.data.uniform_(-0.5, 0.5)

    def forward(self, x):
        x = F.relu6(self.bn1(self.conv1(x)))
        x = F.hardswish(self.bn2(self.dw(x)))
        x = F.max_pool2d(x, 3, 2, ceil_mode=True)
        x = F.leaky_relu(self.pw(x), 0.1)
        x = x * F.hardsigmoid(x) + torch.sigmoid(x) * torch.tanh(x)
        x = F.avg_pool2d(x, 2, padding=1, count_include_pad=False)
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(self.drop(x))


class Encoder(nn.Module):
    """A small transformer encoder layer: embedding, multi-head self-attention (4 heads),
    residuals, LayerNorm, a GELU feed-forward network."""

    def __init__(self, vocab=50, d=32, heads=4, ff=64):
        super().__init__()
        self.heads, self.d = heads, d
        self.emb = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(1, 16, d) * 0.1)
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ff1, self.ff2 = nn.Linear(d, ff), nn.Linear(ff, d)

    def forward(self, ids):
        b, s = ids.shape
        x = self.emb(ids) + self.pos[:, :s]
        q, k, v = self.qkv(x).split(self.d, dim=-1)
        split = lambda t: t.reshape(b, s, self.heads, self.d // self.heads).transpose(1, 2)
        q, k, v = split(q), split(k), split(v)
        att = torch.softmax(q @ k.transpose(-2, -1) / (self.d // self.heads) ** 0.5, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, s, self.d)
        x = self.ln1(x + self.out(y))
        x = self.ln2(x + self.ff2(F.gelu(self.ff1(x))))
        return x.mean(dim=1)


class BertLayer(nn.Module):
    """A BERT-style encoder layer as deployed (bench/models' ONNX Runtime comparison): sequence
    128, width 256, 4 heads, feed-forward 1024 with GELU, post-LayerNorm; float activations in
    and out, no embedding."""

    def __init__(self, d=256, heads=4, ff=1024):
        super().__init__()
        self.heads, self.d = heads, d
        self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.out = nn.Linear(d, d)
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ff1, self.ff2 = nn.Linear(d, ff), nn.Linear(ff, d)

    def forward(self, x):
        b, s, _ = x.shape
        dh = self.d // self.heads
        split = lambda t: t.reshape(b, s, self.heads, dh).transpose(1, 2)
        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        att = torch.softmax(q @ k.transpose(-2, -1) / dh ** 0.5, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, s, self.d)
        x = self.ln1(x + self.out(y))
        return self.ln2(x + self.ff2(F.gelu(self.ff1(x))))


def _vision(name):
    import torchvision
    return getattr(torchvision.models, name)(weights=None)


MODELS = {
    # name: (constructor, input shapes (or an int tensor spec), dynamic axes, opset)
    "mm_relu": (MmRelu, {"x": (128, 128)}, None, 13),
    "mlp": (Mlp, {"x": (3, 1, 28, 28)}, {"x": {0: "batch"}}, 13),
    "convnet": (ConvNet, {"x": (2, 3, 23, 19)}, None, 13),
    "encoder": (Encoder, {"ids": ("int", (2, 16), 50)}, None, 17),
    "bert_layer": (BertLayer, {"x": (1, 128, 256)}, None, 17),
    "resnet18": (lambda: _vision("resnet18"), {"x": (1, 3, 224, 224)}, None, 13),
    "mobilenet_v2": (lambda: _vision("mobilenet_v2"), {"x": (1, 3, 224, 224)}, None, 13),
}


def build(name, out_dir):
    ctor, shapes, dynamic, opset = MODELS[name]
    torch.manual_seed(0)
    model = ctor().eval()
    gen = torch.Generator().manual_seed(1)
    inputs = collections.OrderedDict()
    for iname, spec in shapes.items():
        if spec[0] == "int":
            inputs[iname] = torch.randint(0, spec[2], spec[1], generator=gen)
        else:
            inputs[iname] = torch.rand(spec, generator=gen) * 2 - 1
    path = os.path.join(out_dir, name + ".onnx")
    with torch.no_grad():
        want = model(*inputs.values())
        torch.onnx.export(model, tuple(inputs.values()), path, input_names=list(inputs),
                          output_names=["out"], dynamic_axes=dynamic, opset_version=opset,
                          do_constant_folding=True)
    return ({k: v.numpy() for k, v in inputs.items()},
            collections.OrderedDict(out=want.numpy().astype(np.float64)))
