"""The Python module yobx against the command yobx-onnx-shapes, on both Debian releases.

Usage: python3 test_onnx_module.py YOBX_ONNX_SHAPES WORKDIR   (PYTHONPATH: the build's python/)
The models are tests/onnx/make_cli_models.py's (the CLI's own test models). For each,
yobx.onnx.infer_shapes and infer_shapes_path must write what the command writes, and
report what it reports; each error the command prints as one line is the message of
the Python exception; the fuzzers' corpus of models gives a model or a ValueError.
"""
import errno
import json
import os
import signal
import subprocess
import sys
import unittest
import warnings

import onnx
from onnx import TensorProto, helper

import yobx
import yobx.onnx
from yobx import sym

TOOL, WORKDIR = None, None
HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))


def cli(*args):
    """The command's (exit status, stdout, stderr)."""
    r = subprocess.run([TOOL, *args], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def types(model):
    """Every written type, serialized, by value name, subgraphs included."""
    out = {}

    def graph(g):
        for v in list(g.value_info) + list(g.output):
            out[v.name] = v.type.SerializeToString()
        for n in g.node:
            for a in n.attribute:
                if a.HasField("g"):
                    graph(a.g)
                for s in a.graphs:
                    graph(s)
    graph(model.graph)
    return out


def without_seconds(report):
    report = dict(report)
    report.pop("seconds")
    return report


def read_json(path):
    with open(path) as f:
        return json.load(f)


def read_text(path):
    with open(path) as f:
        return f.read()


def model_path(name):
    return os.path.join(WORKDIR, name + ".onnx")


def conv_model():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, "height", "width"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    w = helper.make_tensor("w", TensorProto.FLOAT, [8, 3, 3, 3], [0.25] * 216)
    big = helper.make_tensor("big", TensorProto.FLOAT, [64, 64], [1.5] * 4096)  # left in C++, copied back in Python
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], strides=[2, 2], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("Relu", ["c"], ["y"], name="relu")]
    return helper.make_model(helper.make_graph(nodes, "g", [x], [y], [w, big]), opset_imports=[helper.make_opsetid("", 17)])


def conv_if_model():
    """conv_model with an If after it: its branches' types are written inside the node."""
    model = conv_model()
    g = model.graph
    g.input.append(helper.make_tensor_value_info("cond", TensorProto.BOOL, []))
    branch = {k: helper.make_graph([helper.make_node("Relu", ["y"], ["r"])], k, [], [helper.make_tensor_value_info("r", TensorProto.FLOAT, None)])
              for k in ("then", "else")}
    g.node.append(helper.make_node("If", ["cond"], ["z"], then_branch=branch["then"], else_branch=branch["else"], name="if"))
    g.output.append(helper.make_tensor_value_info("z", TensorProto.FLOAT, None))
    return model


class SameAsTheCommand(unittest.TestCase):
    """infer_shapes and infer_shapes_path write and report what yobx-onnx-shapes does."""

    NAMES = ["conv", "broadcast", "names", "latin1", "slice", "declared", "external"]

    def test_every_model_infers_as_the_command_does(self):
        for name in self.NAMES:
            with self.subTest(model=name):
                out = os.path.join(WORKDIR, name + ".cli.onnx")
                rc, _, err = cli(model_path(name), out, "--report", out + ".json")
                self.assertEqual(rc, 0, err)
                expected, expected_report = onnx.load(out, load_external_data=False), read_json(out + ".json")
                model = onnx.load(model_path(name), load_external_data=False)
                shaped, report = yobx.onnx.infer_shapes(model, with_report=True)
                if name != "external":  # a ModelProto's external data is not read (the command reads it beside the file)
                    self.assertEqual(types(shaped), types(expected))
                    self.assertEqual(without_seconds(report), without_seconds(expected_report))
                # the rest of the model is the model's: only the written types differ
                for m in (shaped, expected):
                    m.graph.ClearField("value_info")
                    for o in m.graph.output:
                        o.ClearField("type")
                self.assertEqual(shaped.SerializeToString(), expected.SerializeToString())
                path_out = os.path.join(WORKDIR, name + ".py.onnx")
                path_report = yobx.onnx.infer_shapes_path(model_path(name), path_out, with_report=True)
                self.assertEqual(without_seconds(path_report), without_seconds(expected_report))
                with open(path_out, "rb") as a, open(out, "rb") as b:
                    self.assertEqual(a.read(), b.read())

    def test_the_options_give_what_the_command_gives(self):
        cases = [("broadcast", {"strict": False, "hints": {"n": 4, "m": 1}}, ["--hint", "n=4", "--hint", "m=1"]),
                 ("slice", {"hints": {"n": 5, "m": 2}}, ["--hint", "n=5", "--hint", "m=2"]),
                 ("custom", {"op_profiles": read_json(os.path.join(WORKDIR, "profiles.json"))},
                  ["--op-profiles", os.path.join(WORKDIR, "profiles.json")]),
                 ("custom", {"op_profiles": read_text(os.path.join(WORKDIR, "profiles.json")), "onnx_fallback": False}, None)]
        for name, options, args in cases:
            with self.subTest(model=name, options=options):
                shaped, report = yobx.onnx.infer_shapes(onnx.load(model_path(name)), with_report=True, **options)
                if args is None:
                    self.assertEqual(report["not_covered"], [])
                    continue
                out = os.path.join(WORKDIR, name + ".opt.onnx")
                rc, _, err = cli(model_path(name), out, "--report", out + ".json", *args)
                self.assertEqual(rc, 0, err)
                self.assertEqual(types(shaped), types(onnx.load(out)))
                self.assertEqual(without_seconds(report), without_seconds(read_json(out + ".json")))

    def test_bytes_in_a_model_out(self):
        model = conv_model()
        from_bytes = yobx.onnx.infer_shapes(model.SerializeToString())
        self.assertIsInstance(from_bytes, onnx.ModelProto)
        self.assertEqual(from_bytes.SerializeToString(), yobx.onnx.infer_shapes(model).SerializeToString())

    def test_the_model_given_is_not_changed_and_the_weights_come_back(self):
        model = conv_model()
        before = model.SerializeToString()
        shaped = yobx.onnx.infer_shapes(model)
        self.assertEqual(model.SerializeToString(), before)
        self.assertEqual([t.SerializeToString() for t in shaped.graph.initializer],
                         [t.SerializeToString() for t in model.graph.initializer])
        self.assertEqual([d.dim_param or d.dim_value for d in shaped.graph.output[0].type.tensor_type.shape.dim],
                         ["batch", 8, "(height + 1)//2", "(width + 1)//2"])
        shaped.graph.initializer[1].float_data[0] = 7.0  # a copy: the caller's model does not change with it
        self.assertEqual(model.graph.initializer[1].float_data[0], 1.5)

    def test_only_the_types_cross_back_unless_a_node_has_a_subgraph(self):
        # a ModelProto comes back as its copy with the graph's value_info and outputs merged in;
        # with an If (types written inside the node) the model crosses back, its weights copied over
        plain = conv_model()
        with_if = conv_if_model()
        for model in (plain, with_if):
            before = model.SerializeToString()
            shaped = yobx.onnx.infer_shapes(model)
            self.assertEqual(model.SerializeToString(), before)
            self.assertEqual(shaped.SerializeToString(), yobx.onnx.infer_shapes(before).SerializeToString())
            self.assertEqual([t.SerializeToString() for t in shaped.graph.initializer], [t.SerializeToString() for t in model.graph.initializer])
        types_only, left, graph_types, report = yobx._yobx.infer_shapes(plain.SerializeToString(), payloads="none", left_from=1024, with_report=False,
                                                                        strict=False, hints={}, op_profiles="", onnx_fallback=True,
                                                                        guess_output_rank=False, auto_merge=False,
                                                                        on_worker=False)
        self.assertEqual((graph_types, left, report), (True, [], None))
        # on yobx's thread: a Call, whose result() is the same
        running = yobx._yobx.infer_shapes(plain.SerializeToString(), "none", 1024, False, False, {}, "", True, False, False, True)
        self.assertEqual(type(running).__name__, "Call")
        self.assertEqual(running.result(), (types_only, [], True, None))
        self.assertEqual([v.name for v in onnx.GraphProto.FromString(types_only).output], ["y"])
        whole, left, graph_types, _ = yobx._yobx.infer_shapes(with_if.SerializeToString(), payloads="none", left_from=1024, with_report=True,
                                                              strict=False, hints={}, op_profiles="", onnx_fallback=True,
                                                              guess_output_rank=False, auto_merge=False, on_worker=False)
        self.assertEqual((graph_types, left), (False, [1]))  # big (16 KiB) left out, w (864 bytes) kept: below 1 KiB
        with self.assertRaisesRegex(ValueError, "^payloads: 'left_out', 'put_back' or 'none', not 'all'$"):
            yobx._yobx.infer_shapes(b"", payloads="all", left_from=1024, with_report=False, strict=False, hints={}, op_profiles="",
                                    onnx_fallback=True, guess_output_rank=False, auto_merge=False, on_worker=False)
        then = yobx.onnx.infer_shapes(with_if).graph.node[2].attribute[0].g
        self.assertEqual([d.dim_param or d.dim_value for d in then.output[0].type.tensor_type.shape.dim],
                         ["batch", 8, "(height + 1)//2", "(width + 1)//2"])

    def test_in_place_the_model_itself_becomes_what_the_copy_is(self):
        # inplace=True writes into the ModelProto given and returns it: the model the copy would be,
        # on each path (types only; an If, the model back whole; a large model without its weights)
        with_if = conv_if_model()
        with_if.graph.value_info.append(helper.make_tensor_value_info("c", TensorProto.FLOAT, ["stale", 1]))  # replaced, as in the copy
        small_if = onnx.ModelProto()
        small_if.CopyFrom(with_if)
        del small_if.graph.initializer[1]  # no payload of 1 KiB or more: the model comes back with all of it
        heavy = conv_model()
        heavy.graph.initializer.append(helper.make_tensor("wide", TensorProto.FLOAT, [512, 512], bytes(4 << 18), raw=True))
        for model in (conv_model(), with_if, small_if, heavy, onnx.load(model_path("names"))):
            copy, report = yobx.onnx.infer_shapes(model, with_report=True)
            same, same_report = yobx.onnx.infer_shapes(model, inplace=True, with_report=True)
            self.assertIs(same, model)
            self.assertEqual(model.SerializeToString(), copy.SerializeToString())
            self.assertEqual(without_seconds(same_report), without_seconds(report))
            self.assertIs(yobx.onnx.infer_shapes(model, inplace=True), model)  # again, on what it wrote: the same
            self.assertEqual(model.SerializeToString(), copy.SerializeToString())
        self.assertEqual([d.dim_param or d.dim_value for d in with_if.graph.node[2].attribute[0].g.output[0].type.tensor_type.shape.dim],
                         ["batch", 8, "(height + 1)//2", "(width + 1)//2"])
        # an error leaves the model as it was; bytes cannot be written into
        cycle = onnx.load(model_path("cycle"))
        before = cycle.SerializeToString()
        with self.assertRaisesRegex(ValueError, "^the graph is not a DAG: node 'r1' \\(Relu\\) depends on itself through 'a'$"):
            yobx.onnx.infer_shapes(cycle, inplace=True)
        self.assertEqual(cycle.SerializeToString(), before)
        with self.assertRaisesRegex(TypeError, "^infer_shapes: inplace needs an onnx.ModelProto to write into, not bytes$"):
            yobx.onnx.infer_shapes(before, inplace=True)

    def test_a_large_graph_infers_on_yobx_s_thread_as_it_does_on_the_caller_s(self):
        # from _OVERLAP_FROM nodes, inference runs on yobx's thread while Python copies the model:
        # the same model, report and errors; a child process after fork starts its own thread
        cases = [conv_model(), onnx.load(model_path("names")), onnx.load(model_path("declared"))]
        expected = [yobx.onnx.infer_shapes(m, with_report=True) for m in cases]
        saved = yobx.onnx._OVERLAP_FROM
        try:
            yobx.onnx._OVERLAP_FROM = 0
            for model, (shaped, report) in zip(cases, expected):
                got, got_report = yobx.onnx.infer_shapes(model, with_report=True)
                self.assertEqual(got.SerializeToString(), shaped.SerializeToString())
                self.assertEqual(without_seconds(got_report), without_seconds(report))
            with self.assertRaises(ValueError) as e:
                yobx.onnx.infer_shapes(onnx.load(model_path("cycle")))
            self.assertEqual(str(e.exception), "the graph is not a DAG: node 'r1' (Relu) depends on itself through 'a'")
            with warnings.catch_warnings():  # Python 3.12 warns of fork in a process with threads: yobx's is one
                warnings.simplefilter("ignore", DeprecationWarning)
                pid = os.fork()
            if pid == 0:  # the child: a wrong or missing result is its exit status, a hang its alarm
                signal.alarm(20)
                ok = yobx.onnx.infer_shapes(cases[0]).SerializeToString() == expected[0][0].SerializeToString()
                os._exit(0 if ok else 3)
            _, status = os.waitpid(pid, 0)
            self.assertEqual(status, 0)
        finally:
            yobx.onnx._OVERLAP_FROM = saved

    def test_a_large_model_crosses_without_its_weights_and_comes_back_whole(self):
        # the path of models of 1 MB or more made mostly of weights, on a small one: its large payloads
        # (a 256x256 float raw_data, a 1-D float_data of 20,000) copied neither in nor out but once into the result
        model = conv_model()
        g = model.graph
        g.initializer.append(helper.make_tensor("wide", TensorProto.FLOAT, [256, 256], bytes(4 * 65536), raw=True))
        g.initializer.append(helper.make_tensor("long", TensorProto.FLOAT, [20000], [1.0] * 20000))
        g.initializer.append(helper.make_tensor("ids", TensorProto.INT64, [20000], list(range(20000))))  # integer 1-D: kept, it may be read
        whole = yobx.onnx.infer_shapes(model)
        before = model.SerializeToString()
        saved = yobx.onnx._LIGHT_FROM
        try:
            yobx.onnx._LIGHT_FROM = 0
            data, left = yobx.onnx._light(model)
            self.assertEqual(left, [2, 3])
            self.assertLess(len(data), 100_000)  # neither payload: 256 KB and 80 KB
            self.assertEqual(yobx.onnx.infer_shapes(model).SerializeToString(), whole.SerializeToString())
            self.assertEqual(yobx.onnx.evaluate_shapes(model, {"batch": 1, "height": 5, "width": 5})["wide"], (256, 256))
        finally:
            yobx.onnx._LIGHT_FROM = saved
        self.assertEqual(model.SerializeToString(), before)
        # the rule is C++'s (yobx/onnx/payload.hpp), given by the module
        unread = yobx._yobx.payload_unread
        self.assertEqual([unread(TensorProto.FLOAT, [256, 256]), unread(TensorProto.FLOAT, [20000]), unread(TensorProto.INT64, [20000]),
                          unread(TensorProto.FLOAT, [4096]), unread(TensorProto.FLOAT, [-1, 4]), unread(TensorProto.FLOAT, [1 << 40, 1 << 40])],
                         [True, True, False, False, False, False])

    def test_a_model_crosses_whole_when_serializing_it_costs_less_than_copying_it_by_field(self):
        # below 1 MB, or less than 8 KiB a node or initializer, the model is serialized whole; from
        # 32 MB it never is
        weights = conv_model()
        weights.graph.initializer.append(helper.make_tensor("wide", TensorProto.FLOAT, [512, 512], bytes(4 << 18), raw=True))
        many = conv_model()
        for i in range(300):  # 2 KiB each: 2 MB would be less than 8 KiB an item
            many.graph.initializer.append(helper.make_tensor(f"w{i}", TensorProto.FLOAT, [64, 8], bytes(2048), raw=True))
        self.assertEqual([weights.ByteSize() > 1 << 20, 1 << 20 > many.ByteSize() > 600_000], [True, True])
        self.assertEqual([yobx.onnx._whole(conv_model(), conv_model().ByteSize()), yobx.onnx._whole(weights, weights.ByteSize()),
                          yobx.onnx._whole(many, many.ByteSize()), yobx.onnx._whole(many, 2 << 20), yobx.onnx._whole(many, 32 << 20)],
                         [True, False, True, True, False])

    def test_a_model_proto_reads_no_external_data_a_path_reads_it_beside_the_model(self):
        model = onnx.load(model_path("external"), load_external_data=False)
        shaped = yobx.onnx.infer_shapes(model)
        dims = [d.dim_param or d.dim_value for d in shaped.graph.output[0].type.tensor_type.shape.dim]
        self.assertNotEqual(dims, ["batch", 24])  # the target shape is in the external file: not read
        out = os.path.join(WORKDIR, "external.path.onnx")
        yobx.onnx.infer_shapes_path(model_path("external"), out)
        dims = [d.dim_param or d.dim_value for d in onnx.load(out, load_external_data=False).graph.output[0].type.tensor_type.shape.dim]
        self.assertEqual(dims, ["batch", 24])


class Errors(unittest.TestCase):
    """Each error the command prints (one line) is the Python exception's message."""

    def assert_same_error(self, name, kind=ValueError, **options):
        rc, _, err = cli(model_path(name), os.path.join(WORKDIR, "error.onnx"),
                         *[a for k, v in options.get("hints", {}).items() for a in ("--hint", f"{k}={v}")],
                         *(["--strict"] if options.get("strict") else []))
        self.assertEqual(rc, 1)
        self.assertEqual(err.count("\n"), 1, err)  # one line, no usage after it
        with self.assertRaises(kind) as e:
            yobx.onnx.infer_shapes_path(model_path(name), os.path.join(WORKDIR, "error.onnx"), **options)
        self.assertEqual("yobx-onnx-shapes: " + str(e.exception) + "\n", err)
        self.assertFalse(os.path.exists(os.path.join(WORKDIR, "error.onnx")))
        return str(e.exception)

    def test_each_error_of_a_model(self):
        self.assertEqual(self.assert_same_error("cycle"), "the graph is not a DAG: node 'r1' (Relu) depends on itself through 'a'")
        self.assertEqual(self.assert_same_error("opset30"), "unknown opset 30 of the default domain (yobx knows 7 to 28)")
        self.assertEqual(self.assert_same_error("dangling"),
                         "node 'add' (Add): input 'nowhere' is produced by no node, initializer or graph input")
        self.assertEqual(self.assert_same_error("dangling_newline"),  # a name's control characters escaped: one line
                         "node 'a\\r\\nb\\x01' (Add): input 'no\\nwhere' is produced by no node, initializer or graph input")
        self.assertTrue(self.assert_same_error("slice", strict=True).startswith("node 'slice' (Slice): strict mode cannot decide m > n"))
        self.assertEqual(self.assert_same_error("conv", hints={"heigth": 3}),
                         "hint 'heigth': no input dim is named so (the model's: batch, height, width)")
        self.assertEqual(self.assert_same_error("escape"),
                         "initializer 'target': external data location '../outside/secret.bin' escapes the model's directory")
        for name in ("truncated", "garbage", "empty"):
            self.assertEqual(self.assert_same_error(name),
                             f"'{model_path(name)}' is not an ONNX model (the protobuf does not parse: malformed or truncated)")
        with self.assertRaises(FileNotFoundError) as e:
            yobx.onnx.infer_shapes_path(os.path.join(WORKDIR, "none.onnx"), os.path.join(WORKDIR, "error.onnx"))
        self.assertEqual(str(e.exception), f"cannot open '{os.path.join(WORKDIR, 'none.onnx')}'")
        self.assertEqual(e.exception.errno, errno.ENOENT)

    def test_a_file_error_is_the_oserror_of_its_errno(self):
        with self.assertRaises(IsADirectoryError) as e:
            yobx.onnx.infer_shapes_path(WORKDIR)
        self.assertEqual((str(e.exception), e.exception.errno), (f"cannot open '{WORKDIR}'", errno.EISDIR))
        out = os.path.join(WORKDIR, "no", "such", "shaped.onnx")
        with self.assertRaises(FileNotFoundError) as e:
            yobx.onnx.infer_shapes_path(model_path("conv"), out)
        self.assertEqual((str(e.exception), e.exception.errno), (f"cannot write '{out}'", errno.ENOENT))
        self.assertFalse(os.path.exists(os.path.dirname(out)))
        with self.assertRaises(ValueError) as e:  # a model that is wrong: ValueError as before
            yobx.onnx.infer_shapes_path(model_path("garbage"))
        self.assertNotIsInstance(e.exception, OSError)

    def test_submodules_by_attribute(self):
        # a fresh interpreter: yobx.onnx.ort reached by attribute after `import yobx.onnx`, imported then
        code = ("import sys, yobx.onnx; assert 'yobx.onnx.ort' not in sys.modules; m = yobx.onnx.ort; "
                "print(m.__name__, callable(m.patched), 'yobx.onnx.ort' in sys.modules)\n"
                "try:\n    yobx.onnx.nothing\nexcept AttributeError as e:\n    print(e)")
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ)
        self.assertEqual((run.returncode, run.stdout, run.stderr),
                         (0, "yobx.onnx.ort True True\nmodule 'yobx.onnx' has no attribute 'nothing'\n", ""))

    def test_the_same_errors_from_a_model_in_memory(self):
        for name, message in [("cycle", "the graph is not a DAG: node 'r1' (Relu) depends on itself through 'a'"),
                              ("opset6", "unknown opset 6 of the default domain (yobx knows 7 to 28)")]:
            with self.subTest(model=name), self.assertRaises(ValueError) as e:
                yobx.onnx.infer_shapes(onnx.load(model_path(name)))
            self.assertEqual(str(e.exception), message)
        with self.assertRaises(ValueError) as e:
            yobx.onnx.infer_shapes(b"not a model at all")
        self.assertEqual(str(e.exception), "'<bytes>' is not an ONNX model (the protobuf does not parse: malformed or truncated)")
        with self.assertRaises(ValueError) as e:
            yobx.onnx.infer_shapes(onnx.ModelProto(ir_version=8))
        self.assertEqual(str(e.exception), "'<bytes>' has no graph")
        with self.assertRaises(ValueError) as e:
            yobx.onnx.infer_shapes(onnx.ModelProto())  # nothing set: serialized, no bytes at all
        self.assertEqual(str(e.exception), "'<bytes>' is not an ONNX model (the protobuf does not parse: malformed or truncated)")
        with self.assertRaises(ValueError) as e:
            yobx.onnx.infer_shapes(onnx.load(model_path("broadcast")), strict=True)
        self.assertTrue(str(e.exception).startswith("node 'add' (Add): strict mode cannot decide Eq(m, n) from the model's dims"))

    def test_bad_arguments(self):
        model = onnx.load(model_path("conv"))
        cases = [(TypeError, "infer_shapes: model must be an onnx.ModelProto or its serialized bytes, not list", lambda: yobx.onnx.infer_shapes([1])),
                 (ValueError, "hint 'n': expected a size (an integer >= 0), got -2", lambda: yobx.onnx.infer_shapes(model, hints={"n": -2})),
                 (ValueError, "hint 'n': expected a size (an integer >= 0), got True", lambda: yobx.onnx.infer_shapes(model, hints={"n": True})),
                 (TypeError, "hints must be a dict of dim names to sizes, not list", lambda: yobx.onnx.infer_shapes(model, hints=[1])),
                 (ValueError, "op profiles: $['mydomain.MyOp'][0].inputs[0]: 'dtype' must name a dtype (float32, int64, ...)",
                  lambda: yobx.onnx.infer_shapes(model, op_profiles=read_text(os.path.join(WORKDIR, "bad_profiles.json")))),
                 (TypeError, "op_profiles must be a dict or its JSON text, not int", lambda: yobx.onnx.infer_shapes(model, op_profiles=3)),
                 (ValueError, "evaluate_shapes: size 'heigth' names no dim of the model (its symbols: batch, height, width)",
                  lambda: yobx.onnx.evaluate_shapes(model, {"heigth": 3})),
                 (ValueError, "size 'batch': expected a dim name and an integer, got 2.5",
                  lambda: yobx.onnx.evaluate_shapes(model, {"batch": 2.5}))]
        for kind, message, call in cases:
            with self.subTest(message=message), self.assertRaises(kind) as e:
                call()
            self.assertEqual(str(e.exception), message)

    def test_the_fuzzers_corpus_gives_a_model_or_a_value_error(self):
        corpus = os.path.join(SOURCE, "tests", "fuzz", "corpus", "onnx_model")
        outcomes = {"model": 0, "ValueError": 0}
        for name in sorted(os.listdir(corpus)):
            with open(os.path.join(corpus, name), "rb") as f:
                data = f.read()
            for strict, hints in [(False, None), (True, None), (False, {"batch": 2, "n": 5, "m": 1})]:
                try:
                    out = yobx.onnx.infer_shapes(data, strict=strict, hints=hints)
                    self.assertIsInstance(out, onnx.ModelProto)
                    outcomes["model"] += 1
                except ValueError as e:
                    self.assertIs(type(e), ValueError, repr(e))  # not a subclass (UnicodeDecodeError is one)
                    self.assertEqual(str(e).count("\n"), 0, str(e))
                    outcomes["ValueError"] += 1
        self.assertGreater(outcomes["model"], 0)
        self.assertGreater(outcomes["ValueError"], 0)


class EvaluateShapes(unittest.TestCase):
    def test_every_value_at_given_sizes(self):
        shapes = yobx.onnx.evaluate_shapes(conv_model(), {"batch": 2, "height": 224, "width": 99})
        self.assertEqual(shapes, {"x": (2, 3, 224, 99), "w": (8, 3, 3, 3), "big": (64, 64), "c": (2, 8, 112, 50), "y": (2, 8, 112, 50)})

    def test_a_dim_without_a_size_is_none(self):
        shapes = yobx.onnx.evaluate_shapes(conv_model(), {"height": 224})
        self.assertEqual(shapes["c"], (None, 8, 112, None))

    def test_the_dims_already_written(self):
        shaped = yobx.onnx.infer_shapes(onnx.load(model_path("names")))
        self.assertEqual(yobx.onnx.evaluate_shapes(shaped, {"batch_size": 3, "past_sequence_length": 9}, infer=False)["y"], (3, 10))
        # a dim_param that is not an expression is found by its text
        self.assertEqual(yobx.onnx.evaluate_shapes(onnx.load(model_path("names")), {"batch size": 3}, infer=False)["p"][0], 3)

    def test_a_size_by_the_dim_s_name_in_the_model_or_by_its_symbol(self):
        # "batch size" is not a symbol name: the dims inferred from it use batch_size (the report's name_mapping)
        model = onnx.load(model_path("names"))
        for sizes in ({"batch size": 2, "past_sequence_length": 3}, {"batch_size": 2, "past_sequence_length": 3}):
            self.assertEqual(yobx.onnx.evaluate_shapes(model, sizes), {"p": (2, 4), "y": (2, 4)})
            self.assertEqual(yobx.onnx.memory(model, sizes)["at"]["peak"], 64)
        self.assertEqual(yobx.onnx.memory(model, {"past_sequence_length": 3}, plot=("batch size", 1, 4))["svg"],
                         yobx.onnx.memory(model, {"past_sequence_length": 3}, plot=("batch_size", 1, 4))["svg"])
        for call in (yobx.onnx.evaluate_shapes, yobx.onnx.memory):
            with self.subTest(call=call.__name__), self.assertRaises(ValueError) as e:
                call(model, {"batch size": 2, "batch_size": 3, "past_sequence_length": 3})
            self.assertEqual(str(e.exception), "sizes 'batch size' (2) and 'batch_size' (3) name the same dim: the model's "
                                               "'batch size' is the symbol batch_size")

    def test_a_hyphenated_dim_name_is_one_name_as_onnxruntime_reads_it(self):
        # "seq-len" is the name seq_len (not seq - len); "n - 1", spaced, is the expression
        x = onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["seq-len", "n - 1"])
        graph = onnx.helper.make_graph([onnx.helper.make_node("Relu", ["x"], ["y"])], "g", [x],
                                       [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)])
        model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)])
        shaped, report = yobx.onnx.infer_shapes(model, with_report=True)
        self.assertEqual([d.dim_param for d in shaped.graph.output[0].type.tensor_type.shape.dim], ["seq_len", "n - 1"])
        self.assertEqual(report["name_mapping"], [{"dim_param": "seq-len", "symbol": "seq_len"}])
        for name in ("seq-len", "seq_len"):
            self.assertEqual(yobx.onnx.evaluate_shapes(model, {name: 5, "n": 4}), {"x": (5, 3), "y": (5, 3)})
        with self.assertRaises(ValueError) as e:
            yobx.onnx.evaluate_shapes(model, {"seq": 7, "len": 2, "n": 4})
        self.assertEqual(str(e.exception), "evaluate_shapes: size 'len' names no dim of the model (its symbols: n, seq_len)")

    def test_a_flip_as_torch_onnx_writes_it_is_the_whole_dim(self):
        # torch.flip: Slice(starts -1, ends -INT64_MAX, steps -1); once written with the constant
        # 9223372036854775806 in the dim, which no evaluation at any size survived
        int64_max = 2**63 - 1
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "w"])
        bounds = [helper.make_tensor(n, TensorProto.INT64, [1], [v]) for n, v in [("s", -1), ("e", -int64_max), ("a", 1), ("p", -1)]]
        graph = helper.make_graph([helper.make_node("Slice", ["x", "s", "e", "a", "p"], ["y"], name="flip")], "flip", [x],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=bounds)
        shaped = yobx.onnx.infer_shapes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
        y = shaped.graph.output[0].type.tensor_type
        self.assertEqual((y.elem_type, [d.dim_param for d in y.shape.dim]), (TensorProto.FLOAT, ["batch", "w"]))
        self.assertEqual(yobx.onnx.evaluate_shapes(shaped, {"batch": 2, "w": 7}, infer=False)["y"], (2, 7))


class Memory(unittest.TestCase):
    """yobx.onnx.memory gives the memory section the command's --memory report holds."""

    def test_the_same_as_the_command(self):
        for name in ["conv", "names", "latin1", "broadcast", "slice"]:
            with self.subTest(model=name):
                out = os.path.join(WORKDIR, name + ".mem.onnx")
                rc, _, err = cli(model_path(name), out, "--memory", "--report", out + ".json")
                self.assertEqual(rc, 0, err)
                self.assertEqual(yobx.onnx.memory(onnx.load(model_path(name))), read_json(out + ".json")["memory"])

    def test_bytes_peak_and_weights_at_sizes(self):
        m = yobx.onnx.memory(conv_model(), at={"batch": 2, "height": 224, "width": 224})
        values = {v["name"]: (v["bytes"], v["bytes_at"], v["first"], v["last"]) for v in m["values"]}
        self.assertEqual(values, {"x": ("12*batch*height*width", 1204224, 0, 0),
                                  "c": ("32*batch*((height + 1)//2)*((width + 1)//2)", 802816, 0, 1),
                                  "y": ("32*batch*((height + 1)//2)*((width + 1)//2)", 802816, 1, 1)})
        self.assertEqual(m["weights"], {"total": 864 + 16384, "count": 2, "external": 0, "by_dtype": {"float32": 17248}})
        self.assertEqual((m["at"]["peak"], m["at"]["step"], m["at"]["node"], m["at"]["total"]), (1204224 + 802816, 0, "conv", 2007040 + 17248))
        self.assertEqual(m["at"]["largest"], [{"name": "x", "bytes": 1204224}, {"name": "c", "bytes": 802816}])
        # what infer_shapes wrote, read as it is
        self.assertEqual(yobx.onnx.memory(yobx.onnx.infer_shapes(conv_model()), infer=False)["peak"], yobx.onnx.memory(conv_model())["peak"])

    def test_a_plot_whose_points_are_the_peak(self):
        import xml.etree.ElementTree as ET
        m = yobx.onnx.memory(conv_model(), at={"batch": 2, "width": 64}, plot=("height", 1, 300))
        svg = ET.fromstring(m["svg"].encode())
        series = {p.get("data-name"): p for p in svg.iter("{http://www.w3.org/2000/svg}polyline")}
        self.assertEqual(sorted(series), ["peak activations", "total", "weights"])
        xs = [int(v) for v in series["peak activations"].get("data-x").split()]
        ys = [int(v) for v in series["peak activations"].get("data-bytes").split()]
        self.assertEqual(xs[:3], [1, 2, 3])
        self.assertEqual(ys, [sym.parse(m["peak"]).evaluate({"batch": 2, "height": x, "width": 64}) for x in xs])
        self.assertNotIn("at", m)  # the plotted dim has no size: no point to report

    def test_the_domain_and_the_witnesses(self):
        m = yobx.onnx.memory(conv_model())
        self.assertEqual(m["smallest"], {"batch": 1, "height": 1, "width": 1})
        self.assertEqual(m["unresolved"], 0)
        for kept in m["peak_steps"]:  # alone the largest of the kept steps at its witness
            w = kept["witness"]
            values = {s["step"]: sym.parse(s["bytes"]).evaluate(w) for s in m["peak_steps"]}
            self.assertTrue(all(v < values[kept["step"]] for k, v in values.items() if k != kept["step"]), (kept, values))
        narrow = yobx.onnx.memory(conv_model(), minimum={"height": 224, "width": 224})
        self.assertEqual(narrow["smallest"], {"batch": 1, "height": 224, "width": 224})
        self.assertTrue(all(s["witness"]["height"] >= 224 for s in narrow["peak_steps"]))
        self.assertEqual(yobx.onnx.memory(conv_model(), at={"batch": 0, "height": 8, "width": 8})["smallest"]["batch"], 0)

    def test_errors(self):
        cases = [(lambda: yobx.onnx.memory(conv_model(), minimum={"hieght": 3}), ValueError,
                  "memory: minimum 'hieght' names no dim of the model (its symbols: batch, height, width)"),
                 (lambda: yobx.onnx.memory(conv_model(), at={"batch": 1, "height": 8, "width": 8}, minimum={"height": 16}), ValueError,
                  "memory: size height=8 is below its minimum 16"),
                 (lambda: yobx.onnx.memory(conv_model(), minimum={"height": 10**20}), ValueError,
                  "size 'height': 100000000000000000000 is past int64 (at most 9223372036854775807)"),
                 (lambda: yobx.onnx.memory(conv_model(), at={"hieght": 3}), ValueError,
                  "memory: size 'hieght' names no dim of the model (its symbols: batch, height, width)"),
                 (lambda: yobx.onnx.memory(conv_model(), at={"batch": 3}), ValueError,
                  "memory: no size for 'height', 'width' (the peak's symbols: batch, height, width)"),
                 (lambda: yobx.onnx.memory(conv_model(), at={"batch": 1, "width": 2}, plot=("height", 5, 2)), ValueError,
                  "memory plot: the range 5:2 of 'height' must be sizes LO:HI with 0 <= LO <= HI < 2**62"),
                 (lambda: yobx.onnx.memory(conv_model(), plot=("height", 1)), ValueError,
                  "plot must be (dim name, low size, high size), not ('height', 1)"),
                 (lambda: yobx.onnx.memory(conv_model(), at=[("batch", 1)]), TypeError,
                  "at must be a dict of dim names to sizes, not list"),
                 (lambda: yobx.onnx.memory(b"not a model"), ValueError,
                  "'<bytes>' is not an ONNX model (the protobuf does not parse: malformed or truncated)"),
                 # past int64: pybind11's TypeError of several lines before
                 (lambda: yobx.onnx.memory(conv_model(), at={"batch": 10**20}), ValueError,
                  "size 'batch': 100000000000000000000 is past int64 (at most 9223372036854775807)"),
                 (lambda: yobx.onnx.memory(conv_model(), at={"batch": 1, "width": 2}, plot=("height", 0, 2**64)), ValueError,
                  "plot: 18446744073709551616 is past int64 (at most 9223372036854775807)"),
                 (lambda: yobx.onnx.memory(conv_model(), hints={"batch": 2**63}), ValueError,
                  "hint 'batch': 9223372036854775808 is past int64 (at most 9223372036854775807)"),
                 (lambda: yobx.onnx.evaluate_shapes(conv_model(), {"batch": -2**63 - 1}), ValueError,
                  "size 'batch': -9223372036854775809 is below int64 (at least -9223372036854775808)")]
        for call, kind, message in cases:
            with self.subTest(message=message):
                with self.assertRaises(kind) as e:
                    call()
                self.assertEqual(str(e.exception), message)


class NamesThatAreNotUtf8(unittest.TestCase):
    """ONNX's names are proto2 strings, any bytes; protobuf's Python module gives one that is not
    UTF-8 as bytes. yobx's JSON (the report, the memory) holds each byte that starts no UTF-8
    sequence as Python's surrogateescape decoding does (reversible), an error message and the plot
    as U+FFFD (the command prints the bytes as they are); evaluate_shapes keys such a value by its
    bytes, as protobuf names it."""

    def test_the_report_and_the_memory_hold_them_as_surrogateescape_decodes_them(self):
        model = onnx.load(model_path("latin1"))  # the dim b"batch\xe9size", the node b"r\xe9lu"
        self.assertEqual(model.graph.node[0].name, b"r\xe9lu")
        shaped, report = yobx.onnx.infer_shapes(model, with_report=True)
        self.assertEqual(report["name_mapping"], [{"dim_param": "batch\udce9size", "symbol": "batch_size"}])
        self.assertEqual([d.dim_param for d in shaped.graph.output[0].type.tensor_type.shape.dim], ["batch_size", "past_sequence_length + 1"])
        self.assertEqual(yobx.onnx.evaluate_shapes(model, {"batch_size": 2, "past_sequence_length": 3}), {"p": (2, 4), "y": (2, 4)})
        memory = yobx.onnx.memory(model, {"past_sequence_length": 3}, plot=("batch_size", 1, 4))
        self.assertEqual(memory["peak_steps"][0]["node"], "r\udce9lu")
        # the report's JSON holds a byte that is not UTF-8 as Python's surrogateescape: the name's bytes again
        self.assertEqual(report["name_mapping"][0]["dim_param"].encode("utf-8", "surrogateescape"),
                         model.graph.input[0].type.tensor_type.shape.dim[0].dim_param)
        import xml.etree.ElementTree as ET
        self.assertEqual(ET.fromstring(memory["svg"].encode()).tag, "{http://www.w3.org/2000/svg}svg")
        from yobx.onnx import ort
        out = ort.SymbolicShapeInference.infer_shapes(model)
        self.assertEqual([d.dim_param for d in out.graph.output[0].type.tensor_type.shape.dim], ["batch_size", "past_sequence_length + 1"])

    def test_an_error_names_them_with_u_fffd(self):
        for model in (onnx.load(model_path("latin1_dangling")), model_path("latin1_dangling")):
            with self.subTest(given=type(model).__name__), self.assertRaises(ValueError) as e:
                if isinstance(model, str):
                    yobx.onnx.infer_shapes_path(model, os.path.join(WORKDIR, "error.onnx"))
                else:
                    yobx.onnx.infer_shapes(model)
            self.assertEqual(type(e.exception), ValueError)  # not a UnicodeDecodeError, which is one too
            self.assertEqual(str(e.exception), "node 'r\ufffdlu' (Relu): input '\ufffd' is produced by no node, initializer or graph input")

    def test_a_name_given_as_bytes_or_as_python_decodes_them_with_surrogateescape(self):
        model = onnx.load(model_path("latin1"))  # the dim b"batch\xe9size", whose symbol is batch_size
        expected = yobx.onnx.evaluate_shapes(model, {"batch_size": 2, "past_sequence_length": 3})
        for name in (b"batch\xe9size", b"batch\xe9size".decode("utf-8", "surrogateescape")):
            with self.subTest(name=name):
                self.assertEqual(yobx.onnx.evaluate_shapes(model, {name: 2, "past_sequence_length": 3}), expected)
                self.assertEqual(yobx.onnx.evaluate_shapes(model, {name: 2, "past_sequence_length": 3}, infer=False)["p"], (2, 4))
                self.assertEqual(yobx.onnx.memory(model, {"past_sequence_length": 3}, plot=(name, 1, 4))["svg"],
                                 yobx.onnx.memory(model, {"past_sequence_length": 3}, plot=("batch_size", 1, 4))["svg"])
                _, report = yobx.onnx.infer_shapes(model, hints={name: 2, "past_sequence_length": 3}, with_report=True)
                self.assertEqual(report["name_mapping"], [{"dim_param": "batch\udce9size", "symbol": "batch_size"}])
        with self.assertRaises(ValueError) as e:
            yobx.onnx.evaluate_shapes(model, {"batch\ud800size": 2})
        self.assertEqual(str(e.exception), "size 'batch\\ud800size': not a name a model can hold (a lone surrogate that stands for no byte)")

    def test_a_path_as_the_file_system_names_it(self):
        # a file name that is not UTF-8 (Latin-1's e acute): os.fsdecode gives it with a lone surrogate
        directory = os.fsdecode(os.path.join(os.fsencode(WORKDIR), b"caf\xe9"))
        os.makedirs(directory, exist_ok=True)
        source, shaped = os.path.join(directory, "m\udce9.onnx"), os.path.join(directory, "shaped.onnx")
        with open(model_path("names"), "rb") as f, open(source, "wb") as g:
            g.write(f.read())
        self.assertEqual(yobx.onnx.infer_shapes_path(source, shaped, with_report=True)["nodes"], 1)
        self.assertEqual(types(onnx.load(shaped)), types(yobx.onnx.infer_shapes(onnx.load(model_path("names")))))
        self.assertIsNone(yobx.onnx.infer_shapes_path(os.fsencode(shaped)))  # bytes too, and in place
        with self.assertRaises(FileNotFoundError) as e:
            yobx.onnx.infer_shapes_path(os.path.join(directory, "none\udce9.onnx"))
        self.assertEqual(str(e.exception), f"cannot open '{WORKDIR}/caf\ufffd/none\ufffd.onnx'")

    def test_evaluate_shapes_keys_such_a_value_by_its_bytes(self):
        # conv_model's value c (between the Conv and the Relu) renamed b"\xe9": the Conv's output, the Relu's input
        data = conv_model().SerializeToString()
        data = data.replace(b"\x12\x01c", b"\x12\x01\xe9").replace(b"\x0a\x01c", b"\x0a\x01\xe9")
        model = onnx.ModelProto.FromString(data)
        self.assertEqual((model.graph.node[0].output[0], model.graph.node[1].input[0]), (b"\xe9", b"\xe9"))
        shaped = yobx.onnx.infer_shapes(model)
        shapes = yobx.onnx.evaluate_shapes(model, {"batch": 1, "height": 8, "width": 8})
        self.assertEqual(shapes[shaped.graph.value_info[0].name], (1, 8, 4, 4))
        self.assertEqual(sorted(shapes, key=repr), ["big", "w", "x", "y", b"\xe9"])


class Sym(unittest.TestCase):
    def test_parse_print_evaluate(self):
        e = sym.parse("(h + 7)//8")
        self.assertEqual((str(e), repr(e), e.evaluate({"h": 224}), e.free_symbols), ("(h + 7)//8", "Expr('(h + 7)//8')", 28, ["h"]))
        self.assertEqual(e.subs({"h": "8*k"}), sym.parse("k"))
        self.assertEqual(sym.parse("2*(x + 1) - 2"), sym.parse("2*x"))
        self.assertEqual(hash(sym.parse("a + b")), hash(sym.parse("b + a")))
        self.assertEqual(str(sym.parse("s0") + 2 * sym.parse("s1")), "s0 + 2*s1")
        self.assertEqual(str(sym.parse("n").max("m") // 2), "Max(m, n)//2")
        self.assertEqual(int(sym.parse("3*4")), 12)

    def test_proofs_under_ranges(self):
        self.assertIs(sym.equal("2*(x//2) + x%2", "x"), True)
        self.assertIs(sym.equal("x + 1", "x"), False)
        self.assertIsNone(sym.equal("x", "y"))
        self.assertIs(sym.decide("Max(n, 1)", "==", "n", {"n": (1, None)}), True)
        self.assertIsNone(sym.decide("Max(n, 1)", "==", "n"))
        self.assertEqual(str(sym.simplify("Max(n, 1)", {"n": (1, None)})), "n")
        self.assertEqual(str(sym.simplify("Min(n, 64)", {"n": (1, 32)})), "n")

    def test_errors(self):
        cases = [(lambda: sym.parse("(a +"), ValueError,
                  "parse_sym: column 5: expected a number, a symbol, '(' or Max/Min/Mod/FloorDiv, found end of input in \"(a +\""),
                 (lambda: sym.parse("a//0"), ValueError, None),
                 (lambda: sym.parse("a").evaluate({}), ValueError, "evaluate_with: no value for symbol a in a"),
                 (lambda: sym.parse([]), TypeError, "an expression is read from a str or an int, not list"),
                 (lambda: sym.simplify("n", {"n": (3, 2)}), ValueError, "the range of 'n' is empty: [3, 2]"),
                 (lambda: sym.simplify("n", {"n": 3}), ValueError, "the range of 'n' must be a pair (low, high), None for no bound; got 3"),
                 (lambda: sym.decide("a", "=~", "b"), ValueError, "unknown relation '=~'"),
                 (lambda: int(sym.parse("a + 1")), ValueError, "a + 1 is not a constant (its symbols: a)"),
                 # text Python holds that UTF-8 cannot encode (a lone surrogate): one line, not pybind11's listing
                 (lambda: sym.parse("h\udcff + 1"), ValueError, "an expression 'h\\udcff + 1' is not UTF-8 text (a lone surrogate at 1)"),
                 (lambda: sym.parse("h").evaluate({"\ud800": 1}), ValueError, "evaluate: the symbol '\\ud800' is not UTF-8 text (a lone surrogate at 0)"),
                 (lambda: sym.parse("h").evaluate({1: 1}), TypeError, "evaluate: a symbol's name is a str, not int"),
                 (lambda: sym.parse("h").subs({b"h": 1}), TypeError, "subs: a symbol's name is a str, not bytes"),
                 (lambda: sym.simplify("h", {"\udcff": (1, 2)}), ValueError, "ranges: the symbol '\\udcff' is not UTF-8 text (a lone surrogate at 0)")]
        for call, kind, message in cases:
            with self.assertRaises(kind) as e:
                call()
            if message is not None:
                self.assertEqual(str(e.exception), message)


class Imports(unittest.TestCase):
    def test_yobx_alone_imports_neither_onnx_nor_onnxruntime(self):
        code = "import sys, yobx, yobx.sym; print('onnx' in sys.modules, 'onnxruntime' in sys.modules)"
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ)
        self.assertEqual(r.stdout.strip(), "False False", r.stderr)


def main():
    global TOOL, WORKDIR
    TOOL, WORKDIR = sys.argv[1], sys.argv[2]
    os.makedirs(WORKDIR, exist_ok=True)
    subprocess.run([sys.executable, os.path.join(SOURCE, "tests", "onnx", "make_cli_models.py"), WORKDIR], check=True, capture_output=True)
    with open(model_path("conv"), "rb") as f:
        data = f.read()
    for name, content in [("truncated", data[:300]), ("garbage", b"not a model at all"), ("empty", b"")]:
        with open(model_path(name), "wb") as f:
            f.write(content)
    unittest.main(argv=sys.argv[:1], verbosity=2)


if __name__ == "__main__":
    main()
