"""The model zoo of the ga_mlir.torch tests (and of bench/torch_zoo.py):
public model code as people train it, from small configurations with
random weights (nothing is downloaded): Hugging Face transformers (GPT-2,
Llama, BERT, DistilBERT, T5, ViT), torchvision (ViT, ResNet-18,
MobileNetV3-small, ConvNeXt, SqueezeNet 1.1, Swin V1 and V2), torch.nn
recurrent layers.

MODELS[name] = Case(make_model, make_batch, loss_fn, options): the model,
a batch of B samples (make_batch(generator, B)), the loss of the whole batch
and compile_train_step's options. compare(case, optimizer, N) trains three
copies for a few steps: the compiled step in N micro-batches, PyTorch's
own full-batch step in float32 and in float64, and returns the largest
differences (parameters, buffers, loss). Dropout: the PyTorch steps apply
the masks of the compiled step, computed here independently (numpy's uint64
arithmetic, philox_np) from the seed that the compiled step draws.

Not a test by itself (lit.local.cfg excludes it).
"""
import copy
import math
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

from ga_mlir.torch import compile_train_step

VOCAB, T = 32, 8

# ------------------------------------------------------------ Philox, numpy
_M = (np.uint64(0xD2511F53), np.uint64(0xCD9E8D57))
_W = (np.uint64(0x9E3779B9), np.uint64(0xBB67AE85))
_LOW = np.uint64(0xFFFFFFFF)
_32 = np.uint64(32)


def philox_np(c0, c1, c2, c3, k0, k1):
    """Philox 4x32-10 (Random123's reference algorithm) in numpy uint64
    arithmetic: the first output word of each counter (c0, c1, c2, c3)."""
    c = [np.asarray(v, dtype=np.uint64) for v in (c0, c1, c2, c3)]
    k0, k1 = np.uint64(k0), np.uint64(k1)
    for r in range(10):
        if r:
            k0, k1 = (k0 + _W[0]) & _LOW, (k1 + _W[1]) & _LOW
        p0, p1 = _M[0] * c[0], _M[1] * c[2]
        c = [(p1 >> _32) ^ c[1] ^ k0, p1 & _LOW, (p0 >> _32) ^ c[3] ^ k1,
             p0 & _LOW]
    return c[0]


def dropout_keep(seed, draw, shape, p):
    """The keep mask (bool, numpy) of the compiled step's draw number `draw`
    for a batch-first tensor of `shape` with drop probability p: the 24-bit
    number of each word (draw_words) below ceil((1 - p) * 2**24)."""
    return bernoulli_keep(seed, draw, shape, 1 - p).astype(bool)


def bernoulli_keep(seed, draw, shape, p_one):
    """The values (0. or 1., numpy) of the compiled step's draw number
    `draw` for a Bernoulli draw (Tensor.bernoulli_(p_one), e.g.
    torchvision's stochastic depth) of a batch-first tensor of `shape`: the
    24-bit number of each word (draw_words) below ceil(p_one * 2**24)."""
    bits = draw_words(seed, draw, shape) >> np.uint64(8)
    return (bits < np.uint64(math.ceil(p_one * 2 ** 24))).astype(np.float64)


def draw_words(seed, draw, shape, words=1):
    """The compiled step's 32-bit words (numpy uint64) of its draw number
    `draw` for a batch-first tensor of `shape`, `words` per number (a last
    dimension when more than one): counter (element in the sample, sample,
    draw, 0), key = the seed's two words."""
    b, rest = shape[0], int(np.prod(shape[1:], dtype=np.int64)) * words
    element = np.arange(rest, dtype=np.uint64)[None, :]
    sample = np.arange(b, dtype=np.uint64)[:, None]
    bits = philox_np(element, sample, np.uint64(draw), np.uint64(0),
                     seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF)
    return bits.reshape(tuple(shape) + ((words,) if words > 1 else ()))


def normal_draw(seed, draw, shape):
    """The values (float64, numpy) of the compiled step's draw number
    `draw` for torch.randn_like of a batch-first tensor of `shape`:
    Box-Muller of the two 24-bit uniform numbers of each number's words."""
    u, v = np.moveaxis((draw_words(seed, draw, shape, 2) >> np.uint64(8))
                       .astype(np.float64) * 2.0 ** -24, -1, 0)
    return np.sqrt(-2.0 * np.log1p(-u)) * np.cos(2.0 * np.pi * v)


def integer_draw(seed, draw, shape, low, high):
    """The values (int64, numpy) of the compiled step's draw number `draw`
    for torch.randint(low, high, shape) (batch-first): low + the word
    modulo high - low."""
    words = draw_words(seed, draw, shape)
    return (np.uint64(low) + words % np.uint64(high - low)).astype(np.int64)


def uniform_draw(seed, draw, shape):
    """The values (float64, numpy) of the compiled step's draw number
    `draw` of uniform numbers (torch.rand_like) for a batch-first tensor of
    `shape`: each word's 24-bit number u = (word >> 8) / 2**24 in [0, 1)."""
    return (draw_words(seed, draw, shape) >> np.uint64(8)).astype(
        np.float64) * 2.0 ** -24


def exponential_draw(seed, draw, shape, lambd):
    """The values (float64, numpy) of the compiled step's draw number `draw`
    for Tensor.exponential_(lambd) of a batch-first tensor of `shape`:
    -log(1 - u) / lambd of uniform_draw's u."""
    return -np.log1p(-uniform_draw(seed, draw, shape)) / lambd


def next_seed():
    """The seed that the compiled step's next call draws from torch's
    default generator (without drawing it)."""
    state = torch.get_rng_state()
    seed = int(torch.randint(2 ** 63 - 1, (), dtype=torch.int64))
    torch.set_rng_state(state)
    return seed


class ReferenceDropout(TorchFunctionMode):
    """PyTorch's eager step with the compiled step's dropout masks: each
    F.dropout in training mode multiplies by dropout_keep(seed, k, ...) / (1
    - p), each Tensor.bernoulli_(p) fills bernoulli_keep(seed, k, ...) and
    each Tensor.exponential_(lambd) exponential_draw(seed, k, ...), each
    torch.randn_like normal_draw(seed, k, ...), each torch.rand
    uniform_draw(seed, k, ...) and each torch.randint(low,
    high, size) integer_draw(seed, k, ...), k counting the draws (for a
    tensor whose first dimension is the batch's)."""

    def __init__(self, seed):
        super().__init__()
        self.seed, self.draws = seed, 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is F.dropout:
            x = args[0]
            p = kwargs.get("p", args[1] if len(args) > 1 else 0.5)
            training = kwargs.get("training",
                                  args[2] if len(args) > 2 else True)
            if training and p > 0:
                keep = dropout_keep(self.seed, self.draws, tuple(x.shape), p)
                self.draws += 1
                return x * torch.from_numpy(keep).to(x.dtype) * (
                    1.0 / (1.0 - p))
            return x
        if func is torch.Tensor.bernoulli_ and isinstance(
                args[1] if len(args) > 1 else kwargs.get("p"), float):
            x, p = args[0], args[1] if len(args) > 1 else kwargs["p"]
            keep = bernoulli_keep(self.seed, self.draws, tuple(x.shape), p)
            self.draws += 1
            with torch.no_grad():
                return x.copy_(torch.from_numpy(keep))
        if func is torch.randn_like:
            x = args[0]
            values = normal_draw(self.seed, self.draws, tuple(x.shape))
            self.draws += 1
            return torch.from_numpy(values).to(x.dtype)
        if func is torch.rand:
            # torch.rand(*size) or torch.rand(size) (ViTMAE's noise).
            size = args[0] if len(args) == 1 and not isinstance(
                args[0], int) else args
            values = uniform_draw(self.seed, self.draws, tuple(size))
            self.draws += 1
            return torch.from_numpy(values).to(
                kwargs.get("dtype") or torch.get_default_dtype())
        if func is torch.randint and len(args) == 3:
            low, high, size = args
            values = integer_draw(self.seed, self.draws, tuple(size), low,
                                  high)
            self.draws += 1
            return torch.from_numpy(values)
        if func is torch.Tensor.exponential_:
            x = args[0]
            lambd = args[1] if len(args) > 1 else kwargs.get("lambd", 1.0)
            values = exponential_draw(self.seed, self.draws, tuple(x.shape),
                                      lambd)
            self.draws += 1
            with torch.no_grad():
                return x.copy_(torch.from_numpy(values))
        return func(*args, **kwargs)


# ------------------------------------------------------------------- cases
class Case:
    def __init__(self, make_model, make_batch, loss_fn, **options):
        self.make_model, self.make_batch = make_model, make_batch
        self.loss_fn, self.options = loss_fn, options


def padded_text(gen, b, pad_labels=True, t=T, vocab=VOCAB):
    """Token ids, an attention mask with right padding (every sequence keeps
    at least 3 tokens) and labels (-100 on the padding)."""
    ids = torch.randint(1, vocab, (b, t), generator=gen)
    lengths = torch.randint(3, t + 1, (b,), generator=gen)
    lengths[0] = t - 2  # padding in every batch
    mask = (torch.arange(t)[None, :] < lengths[:, None]).long()
    ids = ids.masked_fill(mask == 0, 0)
    labels = ids.masked_fill(mask == 0, -100) if pad_labels else ids
    return ids, mask, labels


def text_classes(gen, b, t=T, vocab=VOCAB):
    ids, mask, _ = padded_text(gen, b, t=t, vocab=vocab)
    return ids, mask, torch.randint(0, 3, (b,), generator=gen)


def images(gen, b, size=16):
    return (torch.randn(b, 3, size, size, generator=gen),
            torch.randint(0, 3, (b,), generator=gen))


def sequences(gen, b, t=5, features=4):
    return (torch.randn(b, t, features, generator=gen),
            torch.randint(0, 3, (b,), generator=gen))


def hf_loss(model, *batch):
    """The loss that a transformers model computes from its labels."""
    ids, mask, labels = batch
    return model(input_ids=ids, attention_mask=mask, labels=labels).loss


def classification(model, x, y):
    return F.cross_entropy(model(x), y)


def hf_image_classification(model, x, y):
    return F.cross_entropy(model(pixel_values=x).logits, y)


def _hf(config_class, model_class, **config):
    import transformers
    config = getattr(transformers, config_class)(**config)
    return getattr(transformers, model_class)(config)


def gpt2(attention="sdpa", d=16, heads=2, t=16, vocab=VOCAB):
    return _hf("GPT2Config", "GPT2LMHeadModel", vocab_size=vocab,
               n_positions=t, n_embd=d, n_layer=2, n_head=heads,
               resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
               bos_token_id=1, eos_token_id=1, attn_implementation=attention)


def llama(attention="sdpa", d=16, heads=2, t=16, vocab=VOCAB):
    return _hf("LlamaConfig", "LlamaForCausalLM", vocab_size=vocab,
               hidden_size=d, intermediate_size=2 * d, num_hidden_layers=2,
               num_attention_heads=heads, num_key_value_heads=heads // 2,
               max_position_embeddings=t, bos_token_id=1, eos_token_id=1,
               pad_token_id=0, attn_implementation=attention)


def bloom(d=16, heads=2, vocab=VOCAB):
    """BLOOM: ALiBi attention and its GeLU an autograd.Function written as
    forward(ctx, ...) with its own backward (_functions)."""
    return _hf("BloomConfig", "BloomForCausalLM", vocab_size=vocab,
               hidden_size=d, n_layer=2, n_head=heads, bos_token_id=1,
               eos_token_id=1, pad_token_id=0)


def bert(dropout=0.1, attention="eager", d=16, heads=2, t=16, vocab=VOCAB):
    return _hf("BertConfig", "BertForSequenceClassification",
               vocab_size=vocab, hidden_size=d, num_hidden_layers=2,
               num_attention_heads=heads, intermediate_size=2 * d,
               max_position_embeddings=t, num_labels=3, pad_token_id=0,
               hidden_dropout_prob=dropout,
               attention_probs_dropout_prob=dropout,
               attn_implementation=attention)


def distilbert(d=16, heads=2, t=16, vocab=VOCAB):
    return _hf("DistilBertConfig", "DistilBertForSequenceClassification",
               vocab_size=vocab, dim=d, n_layers=2, n_heads=heads,
               hidden_dim=2 * d, max_position_embeddings=t, num_labels=3,
               dropout=0.0, attention_dropout=0.0, seq_classif_dropout=0.0,
               pad_token_id=0)


def t5(d=16, heads=2, t=16, vocab=VOCAB):
    return _hf("T5Config", "T5ForConditionalGeneration", vocab_size=vocab,
               d_model=d, d_kv=d // heads, d_ff=2 * d, num_layers=1,
               num_decoder_layers=1, num_heads=heads,
               relative_attention_num_buckets=8,
               relative_attention_max_distance=t, dropout_rate=0.0,
               decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)


def vit_hf(d=16, heads=2, image=8):
    return _hf("ViTConfig", "ViTForImageClassification", image_size=image,
               patch_size=4, num_channels=3, hidden_size=d,
               num_hidden_layers=1, num_attention_heads=heads,
               intermediate_size=2 * d, num_labels=3,
               hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)


def vit_torchvision(d=16, heads=2, image=8):
    from torchvision.models import VisionTransformer
    return VisionTransformer(image_size=image, patch_size=4, num_layers=1,
                             num_heads=heads, hidden_dim=d, mlp_dim=2 * d,
                             num_classes=3)


def resnet18(width=16):
    """torchvision's ResNet-18 (its ResNet class and BasicBlock, layers [2,
    2, 2, 2]) with `width` channels in the stem instead of 64 (each stage
    doubles them as in the original): a small configuration, as for the
    other models (torchvision's resnet18() has no width option)."""
    from torchvision.models.resnet import BasicBlock, ResNet

    class NarrowResNet(ResNet):
        def _make_layer(self, block, planes, blocks, stride=1,
                        dilate=False):
            if planes == 64:  # the first stage: after the narrow stem
                self.inplanes = width
            return super()._make_layer(block, planes * width // 64, blocks,
                                       stride, dilate)

    model = NarrowResNet(BasicBlock, [2, 2, 2, 2], num_classes=3)
    model.conv1 = nn.Conv2d(3, width, 7, 2, 3, bias=False)
    model.bn1 = nn.BatchNorm2d(width)
    model.fc = nn.Linear(8 * width, 3)
    return model


def mobilenet_v3_small():
    from torchvision.models import mobilenet_v3_small as make
    return make(num_classes=3)


def convnext(width=8):
    from torchvision.models.convnext import CNBlockConfig, ConvNeXt
    return ConvNeXt([CNBlockConfig(width, 2 * width, 1),
                     CNBlockConfig(2 * width, None, 1)],
                    stochastic_depth_prob=0.0, num_classes=3)


def squeezenet():
    """torchvision's SqueezeNet 1.1 (Fire modules, max pooling with
    ceil_mode=True, the classifier's dropout 0.5 with the compiled step's
    masks)."""
    from torchvision.models import squeezenet1_1
    return squeezenet1_1(num_classes=3)


def swin(width=16):
    """torchvision's Swin Transformer, two stages of two blocks (shifted
    windows with torch.roll and their attention masks, relative position
    biases read by a buffer of indices, patch merging, stochastic depth
    0.2 with the compiled step's draws) on 32 x 32 images: 4 x 4 windows
    of 8 x 8, then of 4 x 4 patches."""
    from torchvision.models.swin_transformer import SwinTransformer
    return SwinTransformer(patch_size=[4, 4], embed_dim=width,
                           depths=[2, 2], num_heads=[2, 4],
                           window_size=[4, 4], stochastic_depth_prob=0.2,
                           num_classes=3)


def swin_v2(width=16):
    """swin() with torchvision's V2 blocks and patch merging (cosine
    attention with a learned scale, a position bias MLP on a buffer of
    log-spaced coordinates, the key bias zeroed in place on a clone)."""
    from torchvision.models.swin_transformer import (
        PatchMergingV2, SwinTransformer, SwinTransformerBlockV2)
    return SwinTransformer(patch_size=[4, 4], embed_dim=width,
                           depths=[2, 2], num_heads=[2, 4],
                           window_size=[4, 4], stochastic_depth_prob=0.2,
                           num_classes=3, block=SwinTransformerBlockV2,
                           downsample_layer=PatchMergingV2)


class LSTMLastState(nn.Module):
    """A 2-layer LSTM whose classifier reads the last layer's h_n."""

    def __init__(self, features=4, hidden=8):
        super().__init__()
        self.rnn = nn.LSTM(features, hidden, num_layers=2, batch_first=True)
        self.fc = nn.Linear(hidden, 3)

    def forward(self, x):
        _, (h_n, _) = self.rnn(x)
        return self.fc(h_n[-1])


class LSTMLM(nn.Module):
    """A 2-layer LSTM language model with dropout between the layers and on
    the embeddings and outputs (the held-out check of issue #42)."""

    def __init__(self, vocab=VOCAB, dim=16, p=0.2):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.drop = nn.Dropout(p)
        self.lstm = nn.LSTM(dim, dim, num_layers=2, dropout=p,
                            batch_first=True)
        self.head = nn.Linear(dim, vocab)

    def forward(self, ids):
        out, _ = self.lstm(self.drop(self.emb(ids)))  # FORWARD_LINE
        return self.head(self.drop(out))


class BidirectionalGRU(nn.Module):
    def __init__(self, features=4, hidden=8):
        super().__init__()
        self.rnn = nn.GRU(features, hidden, batch_first=True,
                          bidirectional=True)
        self.fc = nn.Linear(2 * hidden, 3)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.fc(out.mean(1))


# The mixture-of-experts models live in moe_models.py (this file's size).
from moe_models import (dbrx, deepseek_v3, gpt_oss, mixtral,  # noqa: E402
                        olmoe, qwen2_moe, qwen3_moe)


MODELS = {
    "gpt2": Case(gpt2, padded_text, hf_loss),
    "gpt2-eager": Case(lambda: gpt2("eager"), padded_text, hf_loss),
    "llama": Case(llama, padded_text, hf_loss),
    "llama-eager": Case(lambda: llama("eager"), padded_text, hf_loss),
    "bloom": Case(bloom, padded_text, hf_loss),
    "bert-dropout": Case(bert, text_classes, hf_loss),
    "distilbert": Case(distilbert, text_classes, hf_loss),
    "t5": Case(t5, padded_text, hf_loss),
    "vit-hf": Case(vit_hf, lambda g, b: images(g, b, 8),
                   hf_image_classification),
    "vit-torchvision": Case(vit_torchvision, lambda g, b: images(g, b, 8),
                            classification),
    # 64 x 64 images: BatchNorm's statistics in the last stage over 2 x 2
    # positions per sample (over one, with 6 samples, normalizing amplifies
    # rounding by orders of magnitude, in PyTorch's float32 step as here).
    "resnet18": Case(resnet18, lambda g, b: images(g, b, 64), classification,
                     recompute_statistics=True),
    "mobilenet-v3-small": Case(mobilenet_v3_small,
                               lambda g, b: images(g, b, 64), classification,
                               recompute_statistics=True),
    "convnext": Case(convnext, images, classification),
    "squeezenet1_1": Case(squeezenet, lambda g, b: images(g, b, 64),
                          classification),
    "swin": Case(swin, lambda g, b: images(g, b, 32), classification),
    "swin-v2": Case(swin_v2, lambda g, b: images(g, b, 32), classification),
    "lstm-h_n": Case(LSTMLastState, sequences, classification),
    "gru-bidirectional": Case(BidirectionalGRU, sequences, classification),
    "mixtral": Case(mixtral, padded_text, hf_loss),
    "qwen3-moe": Case(qwen3_moe, padded_text, hf_loss),
    "olmoe": Case(olmoe, padded_text, hf_loss),
    "qwen2-moe": Case(qwen2_moe, padded_text, hf_loss),
    "gpt-oss": Case(gpt_oss, padded_text, hf_loss),
    "deepseek-v3": Case(deepseek_v3, padded_text, hf_loss),
    # transformers' per-expert loops (_expert_loop.py).
    "mixtral-eager": Case(lambda: mixtral(experts_implementation="eager"),
                          padded_text, hf_loss),
    "dbrx": Case(dbrx, padded_text, hf_loss),
}


def _medium():
    """The zoo's models at the sizes people fine-tune on a CPU (hidden size
    128, 4 heads, 64 tokens of a 512-token vocabulary; 32 x 32 images for the
    vision transformers and ConvNeXt; 32 steps of 32 features into 128 units
    for the recurrent ones; ResNet-18 and MobileNetV3 as in MODELS): what
    bench/zoo_speed.py --size medium times. Same losses, batches and
    options as MODELS."""
    text = dict(d=128, heads=4, t=64, vocab=512)
    tokens = dict(t=64, vocab=512)
    return {
        "gpt2": Case(lambda: gpt2(**text),
                     lambda g, b: padded_text(g, b, **tokens), hf_loss),
        "llama": Case(lambda: llama(**text),
                      lambda g, b: padded_text(g, b, **tokens), hf_loss),
        "bert-dropout": Case(lambda: bert(**text),
                             lambda g, b: text_classes(g, b, **tokens),
                             hf_loss),
        "distilbert": Case(lambda: distilbert(**text),
                           lambda g, b: text_classes(g, b, **tokens),
                           hf_loss),
        "t5": Case(lambda: t5(**text),
                   lambda g, b: padded_text(g, b, **tokens), hf_loss),
        "vit-hf": Case(lambda: vit_hf(d=128, heads=4, image=32),
                       lambda g, b: images(g, b, 32),
                       hf_image_classification),
        "vit-torchvision": Case(lambda: vit_torchvision(128, 4, 32),
                                lambda g, b: images(g, b, 32),
                                classification),
        "resnet18": MODELS["resnet18"],
        "mobilenet-v3-small": MODELS["mobilenet-v3-small"],
        "convnext": Case(lambda: convnext(32), lambda g, b: images(g, b, 32),
                         classification),
        "lstm-h_n": Case(lambda: LSTMLastState(32, 128),
                         lambda g, b: sequences(g, b, 32, 32),
                         classification),
        "gru-bidirectional": Case(lambda: BidirectionalGRU(32, 128),
                                  lambda g, b: sequences(g, b, 32, 32),
                                  classification),
    }


MEDIUM = _medium()

OPTIMIZERS = {
    "sgd": lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=0.9,
                                      weight_decay=1e-3),
    "adamw": lambda ps: torch.optim.AdamW(ps, lr=3e-3, weight_decay=0.05),
}


# ------------------------------------------------------------------ oracle
def _double(t):
    return t.double() if t.is_floating_point() else t


def _pytorch_step(model, opt, loss_fn, batch, seed):
    with ReferenceDropout(seed):
        loss = loss_fn(model, *batch)
    loss.backward()
    opt.step()
    opt.zero_grad()
    return loss.detach()


def _distance(a, b):
    return max((x.double() - y.double()).abs().max().item()
               for x, y in zip(a, b))


def _rms_distance(a, b):
    """The root mean square of the differences over every element of every
    tensor (the whole step's rounding, not its worst element's)."""
    squares = sum((x.double() - y.double()).square().sum().item()
                  for x, y in zip(a, b))
    return math.sqrt(squares / sum(x.numel() for x in a))


def _tensors(model, loss):
    return [p.detach() for p in model.parameters()] + \
        [b for b in model.buffers() if b.is_floating_point()] + [loss]


def compare(case, optimizer, micro_batches, batch=6, steps=2, autocast=None,
            **options):
    """Trains the compiled step (N = micro_batches), PyTorch's float32 step
    and its float64 step from the same weights on the same batches for
    `steps` steps. Returns a dict: vs_pytorch (largest difference of the
    compiled step from PyTorch's float32 one), vs_float64 (of the compiled
    step from the float64 one), pytorch_vs_float64, the last two also as
    root mean squares over all elements (vs_float64_rms,
    pytorch_vs_float64_rms), compile_s (the first call: tracing, ga-mlir,
    the C compiler). Each is the largest over the steps.

    PyTorch's float32 distances are the largest over its step on the
    batch and on the batch with every floating-point input moved by one
    ulp up and down (_ULP_DRAWS): the rounding noise of float32 on this
    step, not one draw of it. One draw can be far below the noise: the
    2-layer LSTM's AdamW step at the zoo's seed has a recurrent weight
    whose gradient nearly cancels, and PyTorch's own float32 step moves it
    by 1.1e-7 on the batch but by 2.8e-7 to 1.5e-6 (RMS over the step 1.6e-8
    to 4.8e-8) on the batch moved by one ulp, so any other float32 order of
    the same sums looked 10x worse than PyTorch."""
    torch.manual_seed(0)
    model = case.make_model().train()
    pt, f64 = copy.deepcopy(model), copy.deepcopy(model).double()
    if hasattr(f64, "set_experts_implementation"):
        # transformers' grouped products take no float64 (torch._grouped_mm):
        # the float64 step runs its per-expert loop, an independent oracle.
        f64.set_experts_implementation("eager")
    moved = [copy.deepcopy(model) for _ in _ULP_DRAWS]
    opts = [OPTIMIZERS[optimizer](m.parameters())
            for m in [model, pt, f64] + moved]
    loss_fn = case.loss_fn
    if autocast is not None:
        def loss_fn(model, *batch, inner=case.loss_fn):
            with torch.autocast("cpu", dtype=autocast):
                return inner(model, *batch)
    gen = torch.Generator().manual_seed(1)
    data = case.make_batch(gen, batch)
    start = time.perf_counter()
    step = compile_train_step(model, loss_fn, opts[0], example_inputs=data,
                              micro_batches=micro_batches,
                              **dict(case.options, **options))
    compile_s = time.perf_counter() - start
    result = dict.fromkeys(("vs_pytorch", "vs_float64", "pytorch_vs_float64",
                            "vs_float64_rms", "pytorch_vs_float64_rms"), 0.0)
    result["compile_s"] = compile_s
    for it in range(steps):
        if it:
            data = case.make_batch(gen, batch)
        seed = next_seed()
        ours = step(*data)
        ref = _pytorch_step(pt, opts[1], loss_fn, data, seed)
        ref64 = _pytorch_step(f64, opts[2], case.loss_fn,
                              [_double(t) for t in data], seed)
        a, b, c = _tensors(model, ours), _tensors(pt, ref), \
            _tensors(f64, ref64)
        floats32 = [b] + [
            _tensors(m, _pytorch_step(m, o, loss_fn, _moved(data, ulps),
                                      seed))
            for m, o, ulps in zip(moved, opts[3:], _ULP_DRAWS)]
        result["vs_pytorch"] = max(result["vs_pytorch"], _distance(a, b))
        result["vs_float64"] = max(result["vs_float64"], _distance(a, c))
        result["pytorch_vs_float64"] = max(
            [result["pytorch_vs_float64"]] + [_distance(f, c)
                                              for f in floats32])
        result["vs_float64_rms"] = max(result["vs_float64_rms"],
                                       _rms_distance(a, c))
        result["pytorch_vs_float64_rms"] = max(
            [result["pytorch_vs_float64_rms"]] + [_rms_distance(f, c)
                                                  for f in floats32])
    return result


# The moves of the floating-point inputs, in ulp, of PyTorch's float32
# steps besides the one on the batch itself (see compare).
_ULP_DRAWS = (1, -1)


def _moved(batch, ulps):
    """`batch` with every floating-point tensor moved by `ulps` ulp
    (scaled by 1 + ulps * 2^-23; integer tensors, labels and token ids,
    unchanged)."""
    return [t * (1 + ulps * 2.0 ** -23) if t.is_floating_point() else t
            for t in batch]


def verdict(optimizer, r, sgd_tolerance=1e-4):
    """The zoo's criterion. SGD: within 1e-4 of PyTorch's float32 step.
    AdamW (and mixed precision): against the float64 step, the root mean
    square distance over all elements at most twice PyTorch's own float32
    one, and the largest distance at most ten times PyTorch's.

    Why two measures: AdamW divides by the root of the second moment, so a
    gradient that cancels to almost zero (sqrt(v) under eps) carries its
    relative rounding error, 1e-4 or more in any float32 order of the sum,
    into the parameter. The largest distance is then one such element, a
    draw of one rounding in each float32 step: the ratio of two such draws
    is not bounded by 2 (docs/Results.md records 1.8-3.9 over N = 1..6 at one
    seed, and one seed in 8 over 2 for every lowering, PyTorch's order of
    sums included). The RMS distance averages the draws: the float32
    quality of the whole step (0.92-1.03x PyTorch's over 8 seeds). A lost,
    doubled or mis-scaled gradient moves a parameter by the order of the
    learning rate (1e-3, against rounding's 1e-7): it fails both bounds by
    orders of magnitude."""
    if optimizer == "sgd":
        return r["vs_pytorch"] <= sgd_tolerance
    return (r["vs_float64_rms"] <= 2 * r["pytorch_vs_float64_rms"]
            and r["vs_float64"] <= 10 * r["pytorch_vs_float64"])


def run(cases, batch=6, **options):
    """Runs (model name, optimizer, N) of `cases`, printing one line each;
    returns the number of failures. CompileError is printed as `refused:
    <its first error line>`."""
    from ga_mlir.torch import CompileError
    failures = 0
    for name, optimizer, n in cases:
        label = f"{name} {optimizer} N={n}" + (
            " autocast" if options.get("autocast") else "")
        try:
            r = compare(MODELS[name], optimizer, n, batch=batch, **options)
        except CompileError as error:
            first = next((line for line in str(error).splitlines()
                          if "error" in line), str(error))
            print(f"{label}: refused: {first}", flush=True)
            failures += 1
            continue
        # Mixed precision: as close to float64 as PyTorch's autocast step.
        ok = verdict("adamw" if options.get("autocast") else optimizer, r)
        failures += not ok
        print(f"{label}: vs PyTorch {r['vs_pytorch']:.2g} vs float64 "
              f"{r['vs_float64']:.2g} (PyTorch {r['pytorch_vs_float64']:.2g}"
              f"), rms {r['vs_float64_rms']:.2g} (PyTorch "
              f"{r['pytorch_vs_float64_rms']:.2g}) compile "
              f"{r['compile_s']:.1f} s {'OK' if ok else 'FAIL'}", flush=True)
    return failures


def quiet():
    """transformers' warnings about the small configurations off."""
    try:
        import transformers
        transformers.logging.set_verbosity_error()
    except ImportError:
        pass
