#!/usr/bin/env python3
"""The held-out check of issue #42: recomputation and the byte budget on
models that the remat/budget tests never used, with dropout active.

For each model (tiny configurations, random weights, AdamW, B = 4), in a
process of its own with libGAHeapCount.so preloaded, against the oracle
that shares no code with recomputation, the same step with
recompute="none" (share_buffers=True everywhere):
  sets:    every recompute set of ga_mlir.driver.recompute_sets() at every
           N of --ns (3 is uneven at B = 4: micro-batches of 2, 1, 1): the
           losses, parameters, optimizer states and buffers after two
           steps bitwise equal (torch.equal) to recompute="none" at the
           same N, the dropout masks drawn from the same seeds;
  budget:  max_memory at 100, 50 and 25 % of the N = 1 "none" peak
           (step.memory_report()["total_peak"]): measured peak (held
           tensors + heap growth of one call + static storage) <= budget,
           predicted within 5 % of measured, measured never rising as the
           budget falls; a budget nothing fits (1 byte) is a CompileError
           that names the smallest budget and the user's file;
  fixed:   micro_batches=2 with max_memory (N fixed, the set chosen) and
           recompute="none" with max_memory (only N chosen).
Prints one JSON row per check and a summary; exits non-zero on a failure.

usage: .venv/bin/python bench/recompute_heldout.py [--models a,b]
           [--ns 1,2,4,3] [--skip-sets] [--skip-budget] [--json out.json]
"""

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "python", "torch"))

B = 4  # the sets' check: N = 1, 2, 4 and 3 (2, 1, 1)
B_BUDGET = 8  # the budget's: activations weigh more against the parameters


def _models():
    import torch
    from torch import nn
    from torch.nn import functional as F
    import model_zoo as mz
    import zoo

    def hf(config_class, model_class, **config):
        return mz._hf(config_class, model_class, **config)

    text = lambda g, b: mz.padded_text(g, b, t=8)  # noqa: E731
    d, h = 16, 2

    class ConvBNDropout(nn.Module):
        """Convolutions, BatchNorm, ReLU and Dropout2d (whole channels)."""

        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(
                nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                nn.Dropout2d(0.2), nn.Conv2d(8, 8, 3, padding=1),
                nn.BatchNorm2d(8), nn.ReLU(), nn.Dropout(0.1))
            self.head = nn.Linear(8 * 8 * 8, 3)

        def forward(self, x):
            return self.head(self.body(x).flatten(1))

    class MixerBlock(nn.Module):
        def __init__(self, tokens, dim, p):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
            self.token_mlp = nn.Sequential(
                nn.Linear(tokens, 2 * tokens), nn.GELU(), nn.Dropout(p),
                nn.Linear(2 * tokens, tokens))
            self.channel_mlp = nn.Sequential(
                nn.Linear(dim, 2 * dim), nn.GELU(), nn.Dropout(p),
                nn.Linear(2 * dim, dim))
            self.drop = nn.Dropout(p)

        def forward(self, x):
            x = x + self.drop(self.token_mlp(self.ln1(x).transpose(1, 2))
                              .transpose(1, 2))
            return x + self.drop(self.channel_mlp(self.ln2(x)))

    class Mixer(nn.Module):
        """MLP-Mixer: 4x4 patches of an 8x8 image, two blocks."""

        def __init__(self, dim=16, p=0.1):
            super().__init__()
            self.patch = nn.Conv2d(3, dim, 4, stride=4)
            self.blocks = nn.Sequential(MixerBlock(4, dim, p),
                                        MixerBlock(4, dim, p))
            self.ln = nn.LayerNorm(dim)
            self.head = nn.Linear(dim, 3)

        def forward(self, x):
            x = self.patch(x).flatten(2).transpose(1, 2)
            return self.head(self.ln(self.blocks(x)).mean(1))

    def lm_loss(model, ids, mask, labels):
        logits = model(ids)
        return F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]),
                               labels[:, 1:].reshape(-1))

    def images8(g, b):
        return mz.images(g, b, 8)

    p = 0.1
    return {
        "bert": (lambda: mz.bert(dropout=p, t=8), mz.text_classes,
                 mz.hf_loss, {}),
        "roberta-mlm": (lambda: hf(
            "RobertaConfig", "RobertaForMaskedLM", vocab_size=mz.VOCAB,
            hidden_size=d, num_hidden_layers=2, num_attention_heads=h,
            intermediate_size=2 * d, max_position_embeddings=16,
            pad_token_id=0, hidden_dropout_prob=p,
            attention_probs_dropout_prob=p), text, mz.hf_loss, {}),
        "vit": (lambda: hf(
            "ViTConfig", "ViTForImageClassification", image_size=8,
            patch_size=4, num_channels=3, hidden_size=d,
            num_hidden_layers=1, num_attention_heads=h,
            intermediate_size=2 * d, num_labels=3, hidden_dropout_prob=p,
            attention_probs_dropout_prob=p), images8,
            mz.hf_image_classification, {}),
        "bart": (lambda: hf(
            "BartConfig", "BartForConditionalGeneration",
            vocab_size=mz.VOCAB, d_model=d, encoder_layers=1,
            decoder_layers=1, encoder_attention_heads=h,
            decoder_attention_heads=h, encoder_ffn_dim=2 * d,
            decoder_ffn_dim=2 * d, max_position_embeddings=16, dropout=p,
            attention_dropout=p, activation_dropout=p, pad_token_id=0,
            bos_token_id=1, eos_token_id=1, decoder_start_token_id=1,
            forced_eos_token_id=None), text, mz.hf_loss, {}),
        "gpt-neo": (lambda: hf(
            "GPTNeoConfig", "GPTNeoForCausalLM", vocab_size=mz.VOCAB,
            hidden_size=d, num_layers=2, num_heads=h,
            attention_types=[[["global", "local"], 1]], window_size=4,
            max_position_embeddings=16, embed_dropout=p,
            attention_dropout=p, resid_dropout=p, bos_token_id=1,
            eos_token_id=1), text, mz.hf_loss, {}),
        "qwen2": (lambda: hf(
            "Qwen2Config", "Qwen2ForCausalLM", vocab_size=mz.VOCAB,
            hidden_size=d, intermediate_size=2 * d, num_hidden_layers=2,
            num_attention_heads=h, num_key_value_heads=1,
            max_position_embeddings=16, attention_dropout=p,
            bos_token_id=1, eos_token_id=1, pad_token_id=0,
            attn_implementation="eager"), text, mz.hf_loss, {}),
        "gpt2": (lambda: hf(
            "GPT2Config", "GPT2LMHeadModel", vocab_size=mz.VOCAB,
            n_positions=16, n_embd=d, n_layer=2, n_head=h, resid_pdrop=p,
            embd_pdrop=p, attn_pdrop=p, bos_token_id=1, eos_token_id=1,
            attn_implementation="eager"), text, mz.hf_loss, {}),
        "t5": (lambda: hf(
            "T5Config", "T5ForConditionalGeneration", vocab_size=mz.VOCAB,
            d_model=d, d_kv=d // h, d_ff=2 * d, num_layers=1,
            num_decoder_layers=1, num_heads=h,
            relative_attention_num_buckets=8,
            relative_attention_max_distance=8, dropout_rate=p,
            feed_forward_proj="gated-gelu", decoder_start_token_id=0,
            pad_token_id=0, eos_token_id=1), text, mz.hf_loss, {}),
        "bloom": (lambda: hf(
            "BloomConfig", "BloomForCausalLM", vocab_size=mz.VOCAB,
            hidden_size=d, n_layer=2, n_head=h, hidden_dropout=p,
            attention_dropout=p, bos_token_id=1, eos_token_id=1,
            pad_token_id=0), text, mz.hf_loss, {}),
        "mixtral": (lambda: hf(
            "MixtralConfig", "MixtralForCausalLM", vocab_size=mz.VOCAB,
            hidden_size=2 * d, intermediate_size=3 * d, num_hidden_layers=2,
            num_attention_heads=h, num_key_value_heads=1,
            num_local_experts=4, num_experts_per_tok=2,
            max_position_embeddings=16, attention_dropout=p,
            bos_token_id=1, eos_token_id=1, pad_token_id=0), text,
            mz.hf_loss, {}),
        "albert": (lambda: hf(
            "AlbertConfig", "AlbertForMaskedLM", vocab_size=mz.VOCAB,
            embedding_size=8, hidden_size=d, num_hidden_layers=2,
            num_attention_heads=h, intermediate_size=2 * d,
            max_position_embeddings=16, hidden_dropout_prob=p,
            attention_probs_dropout_prob=p, pad_token_id=0), text,
            mz.hf_loss, {}),
        "distilbert": (lambda: hf(
            "DistilBertConfig", "DistilBertForSequenceClassification",
            vocab_size=mz.VOCAB, dim=d, n_layers=2, n_heads=h,
            hidden_dim=2 * d, max_position_embeddings=16, dropout=p,
            attention_dropout=p, seq_classif_dropout=p, num_labels=3,
            pad_token_id=0), mz.text_classes, mz.hf_loss, {}),
        "electra": (lambda: hf(
            "ElectraConfig", "ElectraForMaskedLM", vocab_size=mz.VOCAB,
            embedding_size=8, hidden_size=d, num_hidden_layers=2,
            num_attention_heads=h, intermediate_size=2 * d,
            max_position_embeddings=16, hidden_dropout_prob=p,
            attention_probs_dropout_prob=p, pad_token_id=0), text,
            mz.hf_loss, {}),
        "deberta-v2": (lambda: hf(
            "DebertaV2Config", "DebertaV2ForMaskedLM", vocab_size=mz.VOCAB,
            hidden_size=d, num_hidden_layers=2, num_attention_heads=h,
            intermediate_size=2 * d, max_position_embeddings=16,
            relative_attention=True, position_buckets=4,
            pos_att_type=["p2c", "c2p"], hidden_dropout_prob=p,
            attention_probs_dropout_prob=p, pad_token_id=0), text,
            mz.hf_loss, {}),
        "gptj": (lambda: hf(
            "GPTJConfig", "GPTJForCausalLM", vocab_size=mz.VOCAB,
            n_positions=16, n_embd=d, n_layer=2, n_head=h, rotary_dim=4,
            resid_pdrop=p, embd_pdrop=p, attn_pdrop=p, bos_token_id=1,
            eos_token_id=1), text, mz.hf_loss, {}),
        "phi": (lambda: hf(
            "PhiConfig", "PhiForCausalLM", vocab_size=mz.VOCAB,
            hidden_size=d, intermediate_size=2 * d, num_hidden_layers=2,
            num_attention_heads=h, max_position_embeddings=16,
            resid_pdrop=p, embd_pdrop=p, attention_dropout=p,
            partial_rotary_factor=0.5, bos_token_id=1, eos_token_id=1,
            pad_token_id=0), text, mz.hf_loss, {}),
        "convnext": (lambda: hf(
            "ConvNextConfig", "ConvNextForImageClassification",
            num_channels=3, patch_size=2, num_stages=2, hidden_sizes=[8, 16],
            depths=[1, 1], drop_path_rate=0.2, num_labels=3,
            image_size=8), images8, mz.hf_image_classification, {}),
        "opt": (lambda: hf(
            "OPTConfig", "OPTForCausalLM", vocab_size=mz.VOCAB,
            hidden_size=d, num_hidden_layers=2, ffn_dim=2 * d,
            num_attention_heads=h, max_position_embeddings=16,
            word_embed_proj_dim=d, dropout=p, attention_dropout=p,
            pad_token_id=0, bos_token_id=1, eos_token_id=1), text,
            mz.hf_loss, {}),
        "gpt-neox": (lambda: hf(
            "GPTNeoXConfig", "GPTNeoXForCausalLM", vocab_size=mz.VOCAB,
            hidden_size=d, num_hidden_layers=2, num_attention_heads=h,
            intermediate_size=2 * d, max_position_embeddings=16,
            rotary_pct=0.5, hidden_dropout=p, attention_dropout=p,
            bos_token_id=1, eos_token_id=1), text, mz.hf_loss, {}),
        "gemma": (lambda: hf(
            "GemmaConfig", "GemmaForCausalLM", vocab_size=mz.VOCAB,
            hidden_size=d, intermediate_size=2 * d, num_hidden_layers=2,
            num_attention_heads=h, num_key_value_heads=1, head_dim=8,
            max_position_embeddings=16, attention_dropout=p,
            bos_token_id=1, eos_token_id=1, pad_token_id=0), text,
            mz.hf_loss, {}),
        "falcon": (lambda: hf(
            "FalconConfig", "FalconForCausalLM", vocab_size=mz.VOCAB,
            hidden_size=d, num_hidden_layers=2, num_attention_heads=h,
            hidden_dropout=p, attention_dropout=p, bos_token_id=1,
            eos_token_id=1), text, mz.hf_loss, {}),
        "conv-bn-dropout2d": (ConvBNDropout, images8, mz.classification,
                              {"recompute_statistics": True}),
        "mlp-mixer": (Mixer, images8, mz.classification, {}),
        "lstm-lm": (mz.LSTMLM, text, lm_loss, {}),
        "resnet18": (lambda: mz.resnet18(width=4),
                     lambda g, b: mz.images(g, b, 32), mz.classification,
                     {"recompute_statistics": True}),
    }, zoo


def _setup(name, b):
    import torch
    models, zoo = _models()
    make_model, make_batch, loss_fn, options = models[name]
    gen = torch.Generator().manual_seed(2)
    batches = [make_batch(gen, b) for _ in range(2)]
    return make_model, batches, loss_fn, options, zoo


def _compile(name, b=B, **kwargs):
    import torch
    from ga_mlir.torch import compile_train_step
    make_model, batches, loss_fn, options, zoo = _setup(name, b)
    torch.manual_seed(1)
    model = make_model()
    model.train()
    opt = zoo.OPTIMIZERS["adamw"](model)
    step = compile_train_step(model, loss_fn, opt, batches[0],
                              share_buffers=True, **options, **kwargs)
    return model, opt, step, batches


def _trained(name, n, recompute):
    import torch
    model, opt, step, batches = _compile(name, micro_batches=n,
                                         recompute=recompute)
    torch.manual_seed(3)  # the dropout masks' seeds
    losses = [step(*batch).detach().clone() for batch in batches]
    states = [t for p in model.parameters() for t in opt.state[p].values()
              if torch.is_tensor(t)]
    return losses + [p.detach() for p in model.parameters()] + states + \
        list(model.buffers())


def check_sets(name, ns, emit):
    import torch
    from ga_mlir import driver
    from ga_mlir.torch import CompileError
    ok = True
    for n in ns:
        try:
            base = _trained(name, n, "none")
        except CompileError as error:
            emit(dict(model=name, check="sets", n=n, recompute="none",
                      refused=error.code, error=str(error)[:300]))
            return False
        for recompute in driver.recompute_sets():
            if recompute == "none":
                continue
            try:
                other = _trained(name, n, recompute)
            except CompileError as error:
                emit(dict(model=name, check="sets", n=n, recompute=recompute,
                          ok=False, refused=error.code,
                          error=str(error)[:300]))
                ok = False
                continue
            same = len(base) == len(other) and all(
                torch.equal(a, b) for a, b in zip(base, other))
            worst = max(((a.double() - b.double()).abs().max().item()
                         for a, b in zip(base, other) if a.numel()),
                        default=0.0)
            ok &= same
            emit(dict(model=name, check="sets", n=n, recompute=recompute,
                      ok=same, max_diff=worst))
    return ok


def _measure(counter, model, opt, step, batch):
    import torch
    step(*batch)  # the optimizer state exists from now on
    held = sum(p.nbytes for p in model.parameters()) + sum(
        t.nbytes for s in opt.state.values() for t in s.values()
        if torch.is_tensor(t)) + sum(t.nbytes for t in batch) + sum(
        b.nbytes for b in model.buffers())
    return counter.step_peak(step, lambda: step(*batch), held)[1]


def _budgeted(name, counter, budget, emit, label, **kwargs):
    from ga_mlir.torch import CompileError
    try:
        model, opt, step, batches = _compile(name, B_BUDGET,
                                             max_memory=budget, **kwargs)
    except CompileError as error:
        text = str(error)
        # Named in the compiler's words, located at a Python file's line.
        named = "the smallest budget that fits is" in text and \
            any(".py:" in line for line in text.splitlines()[:2])
        emit(dict(model=name, check=label, budget=budget, ok=named,
                  refused=error.code, error=text[:400]))
        return None, named
    c = step.chosen_configuration()
    report = step.memory_report()["total_peak"]
    measured = _measure(counter, model, opt, step, batches[0])
    error = (c["predicted_peak"] - measured) / measured
    ok = measured <= budget and abs(error) <= 0.05 and \
        c["predicted_peak"] == report
    emit(dict(model=name, check=label, budget=budget,
              n=c["micro_batches"], recompute=c["recompute"],
              predicted=c["predicted_peak"], report=report,
              measured=measured, error_pct=round(100 * error, 3), ok=ok))
    return dict(c, measured=measured), ok


def check_budget(name, emit):
    from ga_mlir import steplib
    from ga_mlir.torch import CompileError
    counter = steplib.HeapCounter()
    assert counter.active, "libGAHeapCount.so is not preloaded"
    try:
        model, opt, step, batches = _compile(name, B_BUDGET, micro_batches=1,
                                             recompute="none")
        low = _compile(name, B_BUDGET, micro_batches=B_BUDGET,
                       recompute="layers")[2].memory_report()["total_peak"]
    except CompileError as error:
        emit(dict(model=name, check="budget", refused=error.code,
                  error=str(error)[:300]))
        return False
    top = step.memory_report()["total_peak"]
    measured = _measure(counter, model, opt, step, batches[0])
    emit(dict(model=name, check="base", n=1, recompute="none",
              report=top, measured=measured, low=low,
              error_pct=round(100 * (top - measured) / measured, 3)))
    ok, previous = True, None
    # The percentages of the issue, and half-way from the peak to that of
    # N = B with whole layers recomputed (a budget that something below
    # the peak fits, where 50 % is under every candidate's parameters).
    budgets = sorted([(top * pct // 100, f"budget {pct}%")
                      for pct in (100, 50, 25)] +
                     [((top + low) // 2, "budget half-way")], reverse=True)
    for budget, label in budgets:
        chosen, fine = _budgeted(name, counter, budget, emit, label)
        ok &= fine
        if chosen:
            monotone = previous is None or chosen["measured"] <= previous
            ok &= monotone
            if not monotone:
                emit(dict(model=name, check="monotone", ok=False,
                          budget=budget, measured=chosen["measured"],
                          previous=previous))
            previous = chosen["measured"]
    # A budget nothing fits: located at the user's code, naming the least.
    _, fine = _budgeted(name, counter, 1, emit, "nothing fits")
    ok &= fine
    # N fixed, the set chosen; the set fixed, N chosen.
    chosen, fine = _budgeted(name, counter, top, emit, "fixed N=2",
                             micro_batches=2)
    ok &= fine and (chosen is None or chosen["micro_batches"] == 2)
    chosen, fine = _budgeted(name, counter, (top + low) // 2, emit,
                             "set none", recompute="none")
    ok &= fine and (chosen is None or chosen["recompute"] == "none")
    return ok


def worker(a):
    from ga_mlir import steplib
    steplib.preload_heap_counter()
    import torch
    torch.set_num_threads(1)
    rows = []

    def emit(row):
        rows.append(row)
        print("row " + json.dumps(row), flush=True)

    ok = True
    if not a.skip_sets:
        ok &= check_sets(a.worker, [int(n) for n in a.ns.split(",")], emit)
    if not a.skip_budget:
        ok &= check_budget(a.worker, emit)
    print(f"model {a.worker}: {'OK' if ok else 'FAIL'}", flush=True)
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="")
    ap.add_argument("--ns", default="1,2,4,3")
    ap.add_argument("--skip-sets", action="store_true")
    ap.add_argument("--skip-budget", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        return worker(a)
    names = a.models.split(",") if a.models else list(_models()[0])
    rows, failed = [], []
    for name in names:
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", name,
               "--ns", a.ns] + (["--skip-sets"] if a.skip_sets else []) + \
            (["--skip-budget"] if a.skip_budget else [])
        proc = subprocess.run(cmd, capture_output=True, text=True)
        for line in proc.stdout.splitlines():
            if line.startswith("row "):
                rows.append(json.loads(line[4:]))
            print(line, flush=True)
        if proc.returncode:
            failed.append(name)
            print(proc.stderr[-3000:], flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    print(f"failed: {failed}" if failed else "all OK")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
