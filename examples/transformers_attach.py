#!/usr/bin/env python3
"""A transformers model loaded into tensorfs once, attached without a copy from another
process, generating.

    python3 examples/transformers_attach.py DEST [MODEL_DIR]

DEST is a path on a tensorfs mount (cuda backend); MODEL_DIR a Hugging Face model
directory (default: a tiny random Llama written here with save_pretrained). This process
loads MODEL_DIR into DEST (unless DEST exists) and generates; a second process attaches to
DEST (its weights are the tensors' GPU memory: nothing is read from disk or copied) and
generates the same tokens. Prints "skip - ..." and exits 0 without a GPU, torch or
transformers.
"""
import os
import subprocess
import sys
import tempfile
import time

SECOND = """
import sys, time, torch
t0 = time.perf_counter()
from tensorfs.transformers import from_pretrained
m = from_pretrained(sys.argv[1])
ids = torch.tensor([[1, 5, 9, 17, 33, 65]], device=m.device)
with torch.no_grad():
    out = m.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=8,
                     do_sample=False, pad_token_id=0)
print("attached in %.2f s (import included)" % (time.perf_counter() - t0), file=sys.stderr)
print(" ".join(map(str, out[0].tolist())))
"""


def skip(why):
    print("skip - transformers_attach.py: " + why)
    sys.exit(0)


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__.strip().splitlines()[3].strip(), file=sys.stderr)
        return 2
    dest = sys.argv[1]
    try:
        import torch
        import transformers
    except ImportError as e:
        skip("needs torch and transformers (%s)" % e)
    if not torch.cuda.is_available():
        skip("no CUDA device")
    from tensorfs.transformers import from_pretrained

    with tempfile.TemporaryDirectory() as tmp:
        src = sys.argv[2] if len(sys.argv) == 3 else None
        if src is None:
            cfg = transformers.LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128,
                                           num_hidden_layers=2, num_attention_heads=4,
                                           num_key_value_heads=2)
            torch.manual_seed(0)
            src = os.path.join(tmp, "tiny-llama")
            transformers.LlamaForCausalLM(cfg).save_pretrained(src)
        t0 = time.perf_counter()
        model = from_pretrained(dest, source=src)      # loads src into dest the first time
        print("loaded or attached %s in %.2f s" % (dest, time.perf_counter() - t0))
        ids = torch.tensor([[1, 5, 9, 17, 33, 65]], device=model.device)
        with torch.no_grad():
            mine = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=8,
                                  do_sample=False, pad_token_id=0)
        mine = " ".join(map(str, mine[0].tolist()))
        print("this process:   " + mine)
        r = subprocess.run([sys.executable, "-c", SECOND, dest], capture_output=True, text=True)
        sys.stderr.write(r.stderr)
        if r.returncode:
            print("the second process failed (exit %d)" % r.returncode)
            return 1
        theirs = r.stdout.strip().splitlines()[-1]
        print("second process: " + theirs)
        print("same tokens: %s" % (mine == theirs))
        return 0 if mine == theirs else 1


if __name__ == "__main__":
    sys.exit(main())
