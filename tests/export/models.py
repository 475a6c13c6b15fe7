"""The models of the end-to-end export tests, in Python (torch >= 2.6, torchvision).

- tiny_llm: the twin of examples/tiny_llm.hpp (same structure and argument
  names; its own random weights). past_key_values is what yobx's save_value
  writes for a KVCache: [key_cache, value_cache], each a list of
  [batch, heads, sequence, head_dim] tensors, one per layer.
- resnet18: torchvision's, weights=None.
- encoder: nn.TransformerEncoder(batch_first=True, enable_nested_tensor=False),
  whose forward takes an optional src_key_padding_mask.
- bert: a small BERT-like encoder, forward(input_ids, attention_mask=None,
  token_type_ids=None), where an absent input means what it means in Hugging
  Face's BERT: attend everywhere, token type 0. A mask of zeros masks every
  position (-inf scores: NaN), so only a fill of ones reproduces a call
  without a mask.
- flat_decoder: a GPT-style decoder whose KV cache is a flat List[Tensor]
  [key_0, value_0, key_1, value_1, ...], attention by
  scaled_dot_product_attention: torch.export keeps each cache tensor's length
  its own symbol, the equality of a layer's key and value lengths appears only
  after the decompositions AOTInductor runs.
- patches: a patch embedding (a vision transformer's first layer) whose reshape
  into 8x8 patches makes torch.export assert the image sizes divisible by 8.
- convnet: a small convolutional classifier, observed on channels-last images:
  its program is exported, and its package compiled, for that layout.
Each is built from a fixed seed, so the script written for C++ and the eager
model the export starts from have the same weights.
"""
import math
from typing import List, Optional

import torch
from torch import nn


class Attention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.q, self.k, self.v, self.o = (nn.Linear(hidden, hidden) for _ in range(4))

    def forward(self, x, mask, past_k, past_v):
        batch, seq = x.shape[0], x.shape[1]

        def split(t):  # [batch, heads, seq, head_dim]
            return t.view(batch, seq, self.heads, self.head_dim).transpose(1, 2)

        keys, values = split(self.k(x)), split(self.v(x))
        if past_k is not None:
            keys, values = torch.cat([past_k, keys], 2), torch.cat([past_v, values], 2)
        scores = split(self.q(x)) @ keys.transpose(2, 3) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(mask.logical_not(), -1e9)
        out = (torch.softmax(scores, -1) @ values).transpose(1, 2).reshape(x.shape)
        return self.o(out), keys, values


class Block(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.attn = Attention(hidden, heads)
        self.up, self.down = nn.Linear(hidden, 4 * hidden), nn.Linear(4 * hidden, hidden)

    def forward(self, x, mask, past_k, past_v):
        a, keys, values = self.attn(self.ln1(x), mask, past_k, past_v)
        x = x + a
        return x + self.down(nn.functional.gelu(self.up(self.ln2(x)))), keys, values


class TinyLLM(nn.Module):
    def __init__(self, vocab_size=64, hidden_size=32, num_heads=4, num_layers=2, max_positions=128):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, hidden_size)
        self.positions = nn.Embedding(max_positions, hidden_size)
        self.blocks = nn.ModuleList(Block(hidden_size, num_heads) for _ in range(num_layers))
        self.norm = nn.LayerNorm(hidden_size)
        self.lm_head = nn.Linear(hidden_size, vocab_size)

    def forward(self, input_ids, attention_mask=None, position_ids=None, past_key_values=None):
        batch, seq = input_ids.shape[0], input_ids.shape[1]
        past = 0 if past_key_values is None else past_key_values[0][0].shape[2]
        if attention_mask is None:
            attention_mask = torch.ones(batch, past + seq, dtype=torch.long)
        if position_ids is None:
            position_ids = torch.arange(past, past + seq).expand(batch, seq)
        causal = torch.arange(past + seq).view(1, -1) <= torch.arange(past, past + seq).view(-1, 1)
        mask = causal.view(1, 1, seq, past + seq) & (attention_mask.view(batch, 1, 1, past + seq) != 0)
        x = self.embed(input_ids) + self.positions(position_ids)
        keys, values = [], []
        for i, block in enumerate(self.blocks):
            past_k = None if past_key_values is None else past_key_values[0][i]
            past_v = None if past_key_values is None else past_key_values[1][i]
            x, k, v = block(x, mask, past_k, past_v)
            keys.append(k)
            values.append(v)
        return self.lm_head(self.norm(x)), [keys, values]


class BertLayer(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.qkv, self.o = nn.Linear(hidden, 3 * hidden), nn.Linear(hidden, hidden)
        self.ln1, self.ln2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.up, self.down = nn.Linear(hidden, 4 * hidden), nn.Linear(4 * hidden, hidden)

    def forward(self, x, mask):
        batch, seq = x.shape[0], x.shape[1]
        qkv = self.qkv(x).view(batch, seq, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        scores = qkv[0] @ qkv[1].transpose(2, 3) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(mask[:, None, None, :] == 0, float("-inf"))
        a = (torch.softmax(scores, -1) @ qkv[2]).transpose(1, 2).reshape(x.shape)
        x = self.ln1(x + self.o(a))
        return self.ln2(x + self.down(nn.functional.gelu(self.up(x))))


class TinyBert(nn.Module):
    def __init__(self, vocab_size=64, hidden_size=32, num_heads=4, num_layers=2, max_positions=64, type_vocab=2):
        super().__init__()
        self.word = nn.Embedding(vocab_size, hidden_size)
        self.position = nn.Embedding(max_positions, hidden_size)
        self.token_type = nn.Embedding(type_vocab, hidden_size)
        self.norm = nn.LayerNorm(hidden_size)
        self.layers = nn.ModuleList(BertLayer(hidden_size, num_heads) for _ in range(num_layers))

    def forward(self, input_ids, attention_mask: Optional[torch.Tensor] = None,
                token_type_ids: Optional[torch.Tensor] = None):
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)
        x = self.norm(self.word(input_ids) + self.position(positions)[None] + self.token_type(token_type_ids))
        for layer in self.layers:
            x = layer(x, attention_mask)
        return x


class FlatDecoder(nn.Module):
    def __init__(self, vocab_size=64, hidden_size=32, num_heads=4, num_layers=3):
        super().__init__()
        self.heads, self.head_dim = num_heads, hidden_size // num_heads
        self.embed = nn.Embedding(vocab_size, hidden_size)
        self.qkv = nn.ModuleList(nn.Linear(hidden_size, 3 * hidden_size) for _ in range(num_layers))
        self.out = nn.ModuleList(nn.Linear(hidden_size, hidden_size) for _ in range(num_layers))
        self.lm_head = nn.Linear(hidden_size, vocab_size)

    def forward(self, input_ids, past_key_values: List[torch.Tensor]):
        batch, seq = input_ids.shape[0], input_ids.shape[1]
        x = self.embed(input_ids)
        present: List[torch.Tensor] = []
        for i, (qkv, out) in enumerate(zip(self.qkv, self.out)):
            qkv_ = qkv(x).view(batch, seq, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
            q = qkv_[0]
            k = torch.cat([past_key_values[2 * i], qkv_[1]], 2)
            v = torch.cat([past_key_values[2 * i + 1], qkv_[2]], 2)
            a = nn.functional.scaled_dot_product_attention(q, k, v)
            x = x + out(a.transpose(1, 2).reshape(batch, seq, self.heads * self.head_dim))
            present.append(k)
            present.append(v)
        return self.lm_head(x), present


class Patches(nn.Module):
    def __init__(self, channels=3, patch=8, hidden_size=16):
        super().__init__()
        self.patch = patch
        self.proj = nn.Linear(channels * patch * patch, hidden_size)

    def forward(self, images):
        b, c, h, w = images.shape[0], images.shape[1], images.shape[2], images.shape[3]
        p = self.patch
        x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(b, (h // p) * (w // p), c * p * p))


class ConvNet(nn.Module):
    def __init__(self, classes=4):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, stride=2), nn.ReLU(),
                                      nn.AdaptiveAvgPool2d(1))
        self.head = nn.Linear(8, classes)

    def forward(self, images):
        # pixels from [0, 1] to [-1, 1]: a pointwise kernel inductor compiles for the images' strides
        return self.head(self.features(images * 2 - 1).flatten(1))


def make(name):
    """The eager model `name`, in eval mode, its weights drawn from a fixed seed."""
    torch.manual_seed(0)
    if name == "tiny_llm":
        model = TinyLLM()
    elif name == "resnet18":
        import torchvision
        model = torchvision.models.resnet18(weights=None)
    elif name == "encoder":
        layer = nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, dropout=0.0, batch_first=True)
        model = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
    elif name == "bert":
        model = TinyBert()
    elif name == "fasterrcnn":
        import torchvision
        # Small: images resized to 128-192 pixels (800-1333 by default), 50 proposals kept (1000).
        model = torchvision.models.detection.fasterrcnn_mobilenet_v3_large_fpn(
            weights=None, weights_backbone=None, num_classes=3, min_size=128, max_size=192,
            rpn_pre_nms_top_n_test=100, rpn_post_nms_top_n_test=50, box_detections_per_img=10)
    elif name == "flat_decoder":
        model = FlatDecoder()
    elif name == "patches":
        model = Patches()
    elif name == "convnet":
        model = ConvNet()
    elif name == "lstm":
        model = nn.LSTM(input_size=4, hidden_size=8, batch_first=True)
    else:
        raise ValueError(f"unknown model {name!r}")
    return model.eval()


# Factories without arguments, as yobx-export's --model MODULE:FACTORY takes them.
def tiny_llm():
    return make("tiny_llm")


def resnet18():
    return make("resnet18")


def encoder():
    return make("encoder")


def bert():
    return make("bert")


def flat_decoder():
    return make("flat_decoder")


def patches():
    return make("patches")


def convnet():
    return make("convnet")
