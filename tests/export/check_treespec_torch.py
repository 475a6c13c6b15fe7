"""yobx's treespec_loads and treespec_dumps against torch's own (torch >= 2.6):
the specs torch writes for pytrees and for exported programs' in_spec and
out_spec are read by yobx and written back; torch's treespec_loads of what
yobx wrote must equal the original spec, and the text must be torch's, byte
for byte.

    /usr/bin/python3 tests/export/check_treespec_torch.py <treespec_roundtrip executable>
"""
import collections
import subprocess
import sys

import torch
import torch.utils._pytree as pytree

Point = collections.namedtuple("Point", ["x", "y"])
pytree._register_namedtuple(Point, serialized_type_name="check.Point")


class Model(torch.nn.Module):
    def forward(self, x, pair, mask=None, scale=1.0):
        a, b = pair
        return {"sum": x + a, "rest": [b * scale, x[:, :1]]}


def specs():
    t = torch.zeros(2)
    trees = [
        t,
        (t,),
        [t, (t, t)],
        {"input_ids": t, "attention_mask": t},
        ((t, [t, t]), {"mask": t}),
        collections.OrderedDict([("b", t), ("a", t)]),
        Point(t, [t, {"k": t}]),
        {"nested": {"deeper": [(), [], {}]}},
    ]
    out = [pytree.tree_flatten(tree)[1] for tree in trees]
    x = torch.randn(3, 4)
    program = torch.export.export(Model(), (x, (x, x)), {"mask": x})
    out += [program.call_spec.in_spec, program.call_spec.out_spec]
    return out


def main(tool):
    originals = specs()
    texts = [pytree.treespec_dumps(s) for s in originals]
    done = subprocess.run([tool], input="\n".join(texts) + "\n", capture_output=True, text=True, check=True)
    written = done.stdout.splitlines()
    assert len(written) == len(texts), f"{len(written)} specs written back for {len(texts)}"
    for original, text, back in zip(originals, texts, written):
        spec = pytree.treespec_loads(back)
        assert spec == original, f"torch reads yobx's\n{back}\nas\n{spec}\nnot\n{original}"
        assert back == text, f"yobx wrote\n{back}\ntorch wrote\n{text}"
    print(f"treespec check ok: {len(texts)} specs (pytrees, an exported program's in_spec and out_spec), torch {torch.__version__}")


if __name__ == "__main__":
    main(sys.argv[1])
