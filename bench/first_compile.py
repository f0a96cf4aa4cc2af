"""What a user's first compiles of a transformers model cost (docs/Results.md,
"Users' first compile"):

    PYTHONPATH=build/python_packages:test/python/torch OMP_NUM_THREADS=1 \\
        .venv/bin/python bench/first_compile.py cache [--size zoo|124m]
    ... bench/first_compile.py watch

cache: two compile_train_step calls (fresh GPT-2s of one configuration, SGD,
N = 2) in one process, the time of each and the traces kept
(_cache._TRACES; the second reuses the first's trace when the model has a
trace key). watch: a GPT-2 forward (12 layers, d 192, 2 x 16 tokens) with
400 k objects on the heap, plain and under _philox._held_draws_watched (the
heap scan included), and the scan alone, best of 5.
"""
import argparse
import time

import torch
import transformers

import model_zoo
from ga_mlir.torch import _cache, _philox, compile_train_step


def _best(run, repeats=5):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def cache(size):
    gen = torch.Generator().manual_seed(0)
    if size == "124m":
        ids = torch.randint(0, 50257, (4, 64), generator=gen)
        batch = (ids, torch.ones(4, 64, dtype=torch.long), ids.clone())
    else:
        batch = model_zoo.padded_text(gen, 6)
    for k in range(2):
        torch.manual_seed(k)
        model = transformers.GPT2LMHeadModel(transformers.GPT2Config(
            n_positions=64, attn_implementation="sdpa")) \
            if size == "124m" else model_zoo.gpt2()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        start = time.perf_counter()
        compile_train_step(model, model_zoo.hf_loss, opt, batch,
                           micro_batches=2)
        print(f"compile {k}: {time.perf_counter() - start:.2f} s, "
              f"traces kept: {len(_cache._TRACES)}")


def watch():
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(transformers.GPT2Config(
        n_positions=128, n_embd=192, n_head=4, attn_implementation="sdpa"))
    ids = torch.randint(0, 50257, (2, 16))
    heap = [object() for _ in range(300000)]  # noqa: F841 (a large heap)

    def forward():
        return model(input_ids=ids, labels=ids).loss

    def watched():
        found = []
        with _philox._held_draws_watched(found):
            forward()
        assert not found, found

    with torch.no_grad():
        forward()
        print(f"held generators: {len(_philox._held_generators())}; "
              f"plain {_best(forward):.3f} s, watched {_best(watched):.3f} "
              f"s, heap scan {_best(_philox._held_generators):.3f} s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("cache", "watch"))
    parser.add_argument("--size", choices=("zoo", "124m"), default="zoo")
    args = parser.parse_args()
    model_zoo.quiet()
    cache(args.size) if args.what == "cache" else watch()
