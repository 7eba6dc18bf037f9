"""ResNet-18 for examples/resnet: torchvision's model with random weights (seeded; the pretrained
weights cannot be downloaded offline), eval mode, exported to ONNX, with a test image and
PyTorch's logits for it; and the comparison of a result with them.

  /usr/bin/python3 model.py export DIR        # DIR/resnet18.onnx, DIR/image.npy, DIR/ref.npy
  /usr/bin/python3 model.py compare REF.npy GOT.npy
      # MATCH logits / MISMATCH (rtol 1e-3, atol 1e-4), and whether the top-5 classes agree

The image is 1×3×224×224 float32, uniform noise normalised like an ImageNet picture
(mean 0, unit variance per channel after torchvision's normalisation), fixed seed.
"""
import os
import sys

import numpy as np

RTOL, ATOL = 1e-3, 1e-4


def export(folder):
    import warnings

    import torch
    import torchvision
    warnings.filterwarnings("ignore")
    os.makedirs(folder, exist_ok=True)
    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None).eval()
    image = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        logits = model(image)
        torch.onnx.export(model, (image,), os.path.join(folder, "resnet18.onnx"),
                          input_names=["image"], output_names=["logits"], opset_version=13,
                          do_constant_folding=True)
    np.save(os.path.join(folder, "image.npy"), image.numpy())
    np.save(os.path.join(folder, "ref.npy"), logits.numpy())


def top5(logits):
    return [int(i) for i in np.argsort(-logits.reshape(-1), kind="stable")[:5]]


def compare(ref_path, got_path):
    want, got = np.load(ref_path), np.load(got_path)
    g, w = got.astype(np.float64), want.astype(np.float64)
    ok = got.shape == want.shape and bool(np.all(np.abs(g - w) <= ATOL + RTOL * np.abs(w)))
    print("%s logits: max abs diff %g" % ("MATCH" if ok else "MISMATCH", np.abs(g - w).max()))
    same = top5(got) == top5(want)
    print("%s top-5: %s (PyTorch %s)" % ("MATCH" if same else "MISMATCH",
                                         " ".join(map(str, top5(got))),
                                         " ".join(map(str, top5(want)))))
    return 0 if ok and same else 1


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "export":
        export(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    else:
        sys.exit(__doc__)
