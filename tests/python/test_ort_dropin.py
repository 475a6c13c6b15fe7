"""yobx.onnx.ort against onnxruntime's own SymbolicShapeInference (Debian 13: python3-onnxruntime 1.21).

Usage: python3 test_ort_dropin.py WORKDIR   (PYTHONPATH: the build's python/)
The contract of onnxruntime's classes, checked beside onnxruntime's own on the same
models, and patched(): every name onnxruntime's tools bind the classes to is yobx's
inside the block and onnxruntime's after it, and each entry point reaches yobx.
"""
import os
import sys
import unittest

import onnx
import onnx.reference  # noqa: F401 -- before onnxruntime: Debian 13's onnxruntime shares ONNX's schema registry
import onnxruntime  # noqa: F401
import onnxruntime.transformers  # noqa: F401 -- puts the transformers' own directory on sys.path (onnx_model...)
from onnx import TensorProto, helper
from onnxruntime.tools import symbolic_shape_infer as ort_tool

import yobx.onnx
import yobx.onnx.ort as ort

WORKDIR = None
F = TensorProto.FLOAT


def model(nodes, inputs, outputs, inits=(), opsets=(("", 17),)):
    m = helper.make_model(helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits)),
                          opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    m.ir_version = 8
    return m


def dims(value_info):
    return [d.dim_param or d.dim_value for d in value_info.type.tensor_type.shape.dim]


def conv():
    x = helper.make_tensor_value_info("x", F, ["batch", 3, "height", "width"])
    w = helper.make_tensor("w", F, [8, 3, 3, 3], [0.5] * 216)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], strides=[2, 2], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("Relu", ["c"], ["y"], name="relu")]
    return model(nodes, [x], [helper.make_tensor_value_info("y", F, None)], [w])


def broadcast():
    a = helper.make_tensor_value_info("a", F, ["n", 4])
    b = helper.make_tensor_value_info("b", F, ["m", 4])
    return model([helper.make_node("Add", ["a", "b"], ["s"], name="add"), helper.make_node("Relu", ["s"], ["y"], name="relu")],
                 [a, b], [helper.make_tensor_value_info("y", F, None)])


def custom():
    x = helper.make_tensor_value_info("x", F, ["batch", 3, 5])
    return model([helper.make_node("MyOp", ["x"], ["y"], name="custom", domain="mydomain")], [x],
                 [helper.make_tensor_value_info("y", F, None)], opsets=(("", 17), ("mydomain", 1)))


class Contract(unittest.TestCase):
    def test_a_static_method_returning_a_new_model(self):
        m = conv()
        before = m.SerializeToString()
        for call in (ort.SymbolicShapeInference.infer_shapes, ort.SymbolicShapeInference(2**31 - 1, False, False, 0).infer_shapes):
            out = call(m)
            self.assertEqual(m.SerializeToString(), before)
            self.assertEqual(dims(out.graph.output[0]), ["batch", 8, "(height + 1)//2", "(width + 1)//2"])
            self.assertEqual(out.graph.value_info[0].name, "c")
        expected = yobx.onnx.infer_shapes(m)
        self.assertEqual(ort.SymbolicShapeInference.infer_shapes(m, 2**31 - 1, False, False, 0).SerializeToString(),
                         expected.SerializeToString())
        # onnxruntime's own tool on the same model: the same dims, in its notation
        theirs = ort_tool.SymbolicShapeInference.infer_shapes(m)
        self.assertEqual(dims(theirs.graph.output[0])[:2], ["batch", 8])

    def test_none_below_opset_7_or_without_a_default_domain(self):
        x = helper.make_tensor_value_info("x", F, [2])
        y = helper.make_tensor_value_info("y", F, None)
        for opsets in ((("", 6),), (("mydomain", 1),)):
            m = model([helper.make_node("Relu", ["x"], ["y"])], [x], [y], opsets=opsets)
            with self.subTest(opsets=opsets):
                with self.assertLogs("yobx.onnx.ort", "WARNING") as logs:
                    self.assertIsNone(ort.SymbolicShapeInference.infer_shapes(m))
                self.assertEqual(logs.output, ["WARNING:yobx.onnx.ort:Only support models of onnx opset 7 and above."])
                self.assertIsNone(ort_tool.SymbolicShapeInference.infer_shapes(m))

    def test_a_graph_that_is_not_a_dag_raises_as_onnxruntime_raises(self):
        x = helper.make_tensor_value_info("x", F, [2])
        m = model([helper.make_node("Relu", ["b"], ["a"], name="r1"), helper.make_node("Relu", ["a"], ["b"], name="r2"),
                   helper.make_node("Add", ["x", "a"], ["y"], name="add")], [x], [helper.make_tensor_value_info("y", F, None)])
        with self.assertRaises(Exception):
            ort_tool.SymbolicShapeInference.infer_shapes(m)
        with self.assertRaises(ValueError) as e:
            ort.SymbolicShapeInference.infer_shapes(m)
        self.assertEqual(str(e.exception), "the graph is not a DAG: node 'r1' (Relu) depends on itself through 'a'")

    def test_guess_output_rank(self):
        m = custom()
        for tool in (ort_tool.SymbolicShapeInference, ort.SymbolicShapeInference):
            with self.subTest(tool=tool.__module__):
                with self.assertRaises(Exception) as e:
                    tool.infer_shapes(m)
                self.assertTrue(str(e.exception).startswith("Incomplete symbolic shape inference"), str(e.exception))
                out = tool.infer_shapes(m, guess_output_rank=True)
                y = out.graph.output[0]
                self.assertEqual((y.type.tensor_type.elem_type, len(dims(y))), (F, 3))
        self.assertEqual(str(e.exception),
                         "Incomplete symbolic shape inference: 1 values of unknown element type (operators not covered: mydomain.MyOp)")
        self.assertEqual([f["why"] for f in ort.last_report()["fresh_symbols"]],
                         ["guess_output_rank: an operator no rule covers, given the rank of its first input"] * 3)

    def test_a_node_of_a_function_the_model_defines_is_typed_through_its_body_as_onnxruntime_types_it(self):
        # local.ReluAdd(a) = Relu(a) + a: onnxruntime's tool asks ONNX's inference, which walks the
        # body; yobx's fallback does too (the drop-in raised "Incomplete symbolic shape inference")
        body = [helper.make_node("Relu", ["a"], ["r"]), helper.make_node("Add", ["r", "a"], ["b"])]
        function = helper.make_function("local", "ReluAdd", ["a"], ["b"], body, opset_imports=[helper.make_opsetid("", 17)])
        x = helper.make_tensor_value_info("x", F, ["batch", 3])
        m = model([helper.make_node("ReluAdd", ["x"], ["h"], name="f", domain="local"), helper.make_node("Neg", ["h"], ["y"], name="neg")],
                  [x], [helper.make_tensor_value_info("y", F, None)], opsets=(("", 17), ("local", 1)))
        m.functions.append(function)
        shapes = {}
        for tool in (ort_tool.SymbolicShapeInference, ort.SymbolicShapeInference):
            out = tool.infer_shapes(m)
            shapes[tool.__module__] = {v.name: (v.type.tensor_type.elem_type, dims(v)) for v in list(out.graph.value_info) + list(out.graph.output)}
        self.assertEqual(shapes["yobx.onnx.ort"], {"h": (F, ["batch", 3]), "y": (F, ["batch", 3])})
        self.assertEqual(shapes["yobx.onnx.ort"], shapes[ort_tool.__name__])
        self.assertEqual((ort.last_report()["unknown_type"], ort.last_report()["from_onnx_inference"]), (0, 1))
        helper_ = ort.SymbolicShapeInferenceHelper(m)
        self.assertTrue(helper_.infer({}))
        self.assertEqual(helper_.get_edge_shape("h"), ["batch", 3])

    def test_a_value_of_known_type_and_unknown_rank_is_written_without_a_shape_as_onnxruntime_does(self):
        # the element of a sequence whose tensors have no shape: FLOAT, rank unknown; onnxruntime's
        # tool returns the model (it stops only on a type it does not know), so does yobx's
        s = helper.make_tensor_sequence_value_info("s", F, None)
        i = helper.make_tensor("i", TensorProto.INT64, [], [0])
        m = model([helper.make_node("SequenceAt", ["s", "i"], ["e"], name="at"), helper.make_node("Relu", ["e"], ["y"], name="relu")],
                  [s], [helper.make_tensor_value_info("y", F, None)], [i])
        for tool in (ort_tool.SymbolicShapeInference, ort.SymbolicShapeInference):
            with self.subTest(tool=tool.__module__):
                out = tool.infer_shapes(m)
                y = out.graph.output[0]
                self.assertEqual((y.type.tensor_type.elem_type, y.type.tensor_type.HasField("shape")), (F, False))
        self.assertEqual((ort.last_report()["unknown_rank"], ort.last_report()["unknown_type"]), (2, 0))
        helper_ = ort.SymbolicShapeInferenceHelper(m)
        self.assertTrue(helper_.infer({}))
        # a Reduce whose axes are an input of unknown values: the rank, from keepdims
        x = helper.make_tensor_value_info("x", F, ["batch", 1, 4])
        axes = helper.make_tensor_value_info("axes", TensorProto.INT64, [2])
        m = model([helper.make_node("ReduceSum", ["x", "axes"], ["y"], name="sum")], [x, axes], [helper.make_tensor_value_info("y", F, None)])
        self.assertEqual(dims(ort.SymbolicShapeInference.infer_shapes(m).graph.output[0]), ["unk__0", 1, "unk__1"])
        self.assertEqual([f["why"] for f in ort.last_report()["fresh_symbols"]], ["ReduceSum with axes whose values are not known"] * 2)
        self.assertEqual(len(dims(ort_tool.SymbolicShapeInference.infer_shapes(m).graph.output[0])), 3)

    def test_auto_merge_keeps_a_dim_and_records_the_assumption(self):
        m = broadcast()
        plain = ort.SymbolicShapeInference.infer_shapes(m)
        self.assertEqual(dims(plain.graph.output[0]), ["s0", 4])  # a fresh symbol, ONNX's rule
        self.assertEqual(ort.last_report()["assumptions"], [])
        merged = ort.SymbolicShapeInference.infer_shapes(m, auto_merge=True)
        self.assertEqual(dims(merged.graph.output[0]), ["m", 4])
        self.assertEqual(ort.last_report()["assumptions"],
                         [{"node": "'add' (Add)", "question": "auto_merge: broadcasting n with m", "answer": "Eq(m, n)", "count": 1}])
        # onnxruntime keeps one of the two input dims as well (which one depends on Python's set order)
        theirs = ort_tool.SymbolicShapeInference.infer_shapes(m, auto_merge=True)
        self.assertIn(dims(theirs.graph.output[0])[0], ("n", "m"))

    def test_the_helper(self):
        m = conv()
        h = ort.SymbolicShapeInferenceHelper(m)
        self.assertTrue(h.infer({}))
        self.assertEqual(h.get_edge_shape("c"), ["batch", 8, "(height + 1)//2", "(width + 1)//2"])
        self.assertEqual(h.get_edge_shape("w"), [8, 3, 3, 3])
        self.assertTrue(h.compare_shape("c", "y"))
        self.assertFalse(h.compare_shape("c", "x"))
        self.assertEqual(sorted(h.known_vi_), ["c", "w", "x", "y"])
        mapped = ort.SymbolicShapeInferenceHelper(m)
        self.assertTrue(mapped.infer({"batch": 4, "height": 224}))
        self.assertEqual(mapped.get_edge_shape("c"), [4, 8, 112, "(width + 1)//2"])
        self.assertEqual(mapped.get_edge_shape("x"), [4, 3, 224, "width"])
        theirs = ort_tool.SymbolicShapeInference  # the helper's base is onnxruntime's class in onnxruntime: here, yobx's
        self.assertTrue(issubclass(ort.SymbolicShapeInferenceHelper, ort.SymbolicShapeInference))
        self.assertIsNot(theirs, ort.SymbolicShapeInference)
        with self.assertRaises(Exception) as e:
            mapped.compare_shape("c", "nothing")
        self.assertEqual(str(e.exception), "At least one shape is missed for edges to compare")
        self.assertFalse(ort.SymbolicShapeInferenceHelper(custom()).infer({}))

    def test_the_helper_names_a_dim_as_the_model_does_as_onnxruntime_s_helper(self):
        # dim_params that are not symbol names: yobx writes batch_size, seq_len and max_len for them (a
        # hyphenated name is a name, as onnxruntime reads it, not max - len); the helper gives the
        # model's names back, so an input and an output of the same shape compare equal
        from shape_infer_helper import SymbolicShapeInferenceHelper as Theirs  # onnxruntime.transformers' own
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch size", "seq.len", 4, "max-len"])
        m = model([helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Neg", ["r"], ["y"])], [x],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
        for mapping in ({}, {"batch size": 2}):
            with self.subTest(mapping=mapping):
                ours, theirs = ort.SymbolicShapeInferenceHelper(m), Theirs(m)
                self.assertEqual((ours.infer(mapping), theirs.infer(mapping)), (True, True))
                for edge in ("x", "r", "y"):
                    self.assertEqual(ours.get_edge_shape(edge), theirs.get_edge_shape(edge))
                self.assertEqual(ours.get_edge_shape("y"), [2 if mapping else "batch size", "seq.len", 4, "max-len"])
                self.assertEqual((ours.compare_shape("x", "y"), theirs.compare_shape("x", "y")), (True, True))


EXPECTED = {"onnxruntime.tools.symbolic_shape_infer.SymbolicShapeInference",
            "onnxruntime.quantization.shape_inference.SymbolicShapeInference",
            "symbolic_shape_infer.SymbolicShapeInference",
            "shape_infer_helper.SymbolicShapeInference",
            "shape_infer_helper.SymbolicShapeInferenceHelper",
            "onnx_model.SymbolicShapeInferenceHelper",
            "convert_to_packing_mode.SymbolicShapeInferenceHelper"}


class Patched(unittest.TestCase):
    def bindings(self):
        """Every module attribute named like the two classes, with its value."""
        out = {}
        for module in list(sys.modules.values()):
            if module is ort:
                continue
            for name in ("SymbolicShapeInference", "SymbolicShapeInferenceHelper"):
                v = getattr(module, "__dict__", {}).get(name)
                if isinstance(v, type):
                    out[f"{module.__name__}.{name}"] = v
        return out

    def test_every_binding_is_yobx_inside_and_onnxruntime_after(self):
        with ort.patched() as names:
            inside = self.bindings()
        after = self.bindings()
        self.assertTrue(EXPECTED <= set(names), EXPECTED - set(names))
        self.assertEqual(set(names), set(inside))  # none missed: every binding in the process was patched
        for name, v in inside.items():
            self.assertIs(v, getattr(ort, name.rsplit(".", 1)[1]), name)
        for name, v in after.items():
            self.assertTrue(v.__module__ in ("symbolic_shape_infer", "shape_infer_helper", "onnxruntime.tools.symbolic_shape_infer"),
                            f"{name} is {v.__module__}.{v.__name__} after the block")
        import onnx_model
        import shape_infer_helper
        self.assertIs(onnx_model.SymbolicShapeInferenceHelper, shape_infer_helper.SymbolicShapeInferenceHelper)

    def test_nested_blocks_and_an_exception_restore(self):
        before = self.bindings()
        with self.assertRaises(RuntimeError):
            with ort.patched():
                with ort.patched() as inner:
                    self.assertEqual(inner, [])  # already patched
                self.assertIs(self.bindings()["onnx_model.SymbolicShapeInferenceHelper"], ort.SymbolicShapeInferenceHelper)
                raise RuntimeError("out of the block")
        self.assertEqual(self.bindings(), before)

    def test_each_entry_point_reaches_yobx(self):
        calls = []
        real = ort.infer_shapes  # yobx.onnx.infer_shapes, as the drop-in calls it

        def counting(*args, **kwargs):
            calls.append(1)
            return real(*args, **kwargs)
        ort.infer_shapes = counting
        try:
            from onnx_model import OnnxModel
            from onnxruntime.quantization.shape_inference import quant_pre_process
            path = os.path.join(WORKDIR, "conv.onnx")
            onnx.save(conv(), path)
            entry_points = {
                "onnxruntime.tools.symbolic_shape_infer": lambda: ort_tool.SymbolicShapeInference.infer_shapes(conv()),
                "quant_pre_process": lambda: quant_pre_process(path, os.path.join(WORKDIR, "conv.pre.onnx"), skip_optimization=True,
                                                               skip_onnx_shape=True),
                "OnnxModel.infer_runtime_shape": lambda: OnnxModel(conv()).infer_runtime_shape(),
                "OnnxModel.convert_float_to_float16": lambda: OnnxModel(conv()).convert_float_to_float16(use_symbolic_shape_infer=True),
            }
            for name, call in entry_points.items():
                with self.subTest(entry_point=name):
                    calls.clear()
                    with ort.patched():
                        call()
                    self.assertGreaterEqual(len(calls), 1, name)
                    calls.clear()
                    call()  # after the block: onnxruntime's own
                    self.assertEqual(len(calls), 0, name)
        finally:
            ort.infer_shapes = real


class PackingMode(unittest.TestCase):
    """onnxruntime.transformers' convert_to_packing_mode with yobx patched in: the packed model's
    operators (RemovePadding, PackedAttention, RestorePadding) typed by yobx's rules, the shapes
    onnxruntime's tool gives but two names: its fixed token_count is a fresh symbol (the count of
    tokens that are not padding, known at run time), its "batch_size + 1" names the model's batch."""

    @staticmethod
    def bert_layer():
        x = helper.make_tensor_value_info("x", F, ["batch", "seq", 32])
        mask = helper.make_tensor_value_info("mask_index", TensorProto.INT32, ["batch"])
        inits = [helper.make_tensor("w", F, [32, 96], [0.01] * 3072), helper.make_tensor("b", F, [96], [0.0] * 96),
                 helper.make_tensor("gamma", F, [32], [1.0] * 32), helper.make_tensor("beta", F, [32], [0.0] * 32)]
        nodes = [helper.make_node("Attention", ["x", "w", "b", "mask_index"], ["a"], name="attention", domain="com.microsoft", num_heads=4),
                 helper.make_node("SkipLayerNormalization", ["a", "x", "gamma", "beta"], ["y"], name="norm", domain="com.microsoft")]
        return model(nodes, [x, mask], [helper.make_tensor_value_info("y", F, None)], inits, opsets=(("", 17), ("com.microsoft", 1)))

    def test_the_packed_model_is_typed_by_yobx_as_by_onnxruntime(self):
        from convert_to_packing_mode import PackingMode
        from onnx_model import OnnxModel
        calls = []
        real = ort.infer_shapes  # yobx.onnx.infer_shapes, as the drop-in calls it

        def counting(*args, **kwargs):
            calls.append(1)
            return real(*args, **kwargs)
        shapes = {}
        ort.infer_shapes = counting
        try:
            for name in ("onnxruntime", "yobx"):
                packed = OnnxModel(self.bert_layer())
                if name == "yobx":
                    with ort.patched():
                        PackingMode(packed).convert()
                else:
                    PackingMode(packed).convert()
                self.assertEqual(sorted(n.op_type for n in packed.model.graph.node), ["PackedAttention", "RemovePadding", "RestorePadding",
                                                                                       "SkipLayerNormalization"])
                shapes[name] = {v.name: (v.type.tensor_type.elem_type, dims(v)) for v in list(packed.model.graph.value_info) +
                                list(packed.model.graph.output)}
        finally:
            ort.infer_shapes = real
        self.assertEqual(len(calls), 1)  # the conversion's shape inference, patched in
        i32 = TensorProto.INT32
        self.assertEqual(shapes["yobx"], {"x_no_padding": (F, ["unk__0", 32]), "x_token_offset": (i32, ["batch", "seq"]),
                                          "x_cumulated_seq_len": (i32, ["batch + 1"]), "x_max_seq_len": (i32, [1]),
                                          "a": (F, ["unk__0", 32]), "y_restore_input": (F, ["unk__0", 32]), "y": (F, ["batch", "seq", 32])})
        renamed = {"unk__0": "token_count", "batch + 1": "batch_size + 1"}
        self.assertEqual({k: (t, [renamed.get(d, d) for d in ds]) for k, (t, ds) in shapes["yobx"].items()}, shapes["onnxruntime"])
        self.assertEqual(ort.last_report()["fresh_symbols"],
                         [{"symbol": "unk__0", "node": "'RemovePadding_0' (com.microsoft.RemovePadding)",
                           "why": "RemovePadding: the count of tokens that are not padding, known at run time"}])


class ContribShapesAsOnnxruntimeRunsThem(unittest.TestCase):
    def test_decoder_masked_multi_head_attention_with_a_shared_buffer(self):
        # one decoding step of a KV cache in one buffer (what onnxruntime's CPU kernel runs):
        # present key and value are the past's buffers, qk is past_sequence_length + 1 long
        import numpy as np
        vi = helper.make_tensor_value_info
        inputs = [vi("q", F, ["b", 1, 64]), vi("k", F, ["b", 1, 64]), vi("v", F, ["b", 1, 64]), vi("pk", F, ["b", 4, "max_len", 16]),
                  vi("pv", F, ["b", 4, "max_len", 16])]
        outputs = ["o", "present_k", "present_v", "qk"]
        node = helper.make_node("DecoderMaskedMultiHeadAttention", ["q", "k", "v", "", "", "pk", "pv", "past_length"], outputs,
                                domain="com.microsoft", num_heads=4, past_present_share_buffer=1, output_qk=1)
        m = model([node], inputs, [vi(o, F, None) for o in outputs], [helper.make_tensor("past_length", TensorProto.INT32, [], [3])],
                  opsets=(("", 17), ("com.microsoft", 1)))
        session = onnxruntime.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        rng = np.random.default_rng(0)
        feeds = {"q": rng.random((2, 1, 64), np.float32), "k": rng.random((2, 1, 64), np.float32), "v": rng.random((2, 1, 64), np.float32),
                 "pk": rng.random((2, 4, 6, 16), np.float32), "pv": rng.random((2, 4, 6, 16), np.float32)}
        ran = dict(zip(outputs, (r.shape for r in session.run(None, feeds))))
        self.assertEqual(ran, {"o": (2, 1, 64), "present_k": (2, 4, 6, 16), "present_v": (2, 4, 6, 16), "qk": (2, 4, 1, 4)})
        shapes = yobx.onnx.evaluate_shapes(m, {"b": 2, "max_len": 6})
        self.assertEqual({o: shapes[o] for o in outputs}, ran)
        self.assertEqual(dims(ort.SymbolicShapeInference.infer_shapes(m).graph.output[3]), ["b", 4, 1, 4])

    def test_matmul_integer16(self):
        import numpy as np
        vi = helper.make_tensor_value_info
        m = model([helper.make_node("MatMulInteger16", ["a", "b"], ["y"], domain="com.microsoft")],
                  [vi("a", TensorProto.INT16, ["n", 4]), vi("b", TensorProto.INT16, [4, 5])], [vi("y", TensorProto.INT32, None)],
                  opsets=(("", 17), ("com.microsoft", 1)))
        session = onnxruntime.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        (y,) = session.run(None, {"a": np.ones((3, 4), np.int16), "b": np.ones((4, 5), np.int16)})
        self.assertEqual((y.shape, y.dtype), ((3, 5), np.int32))
        out = ort.SymbolicShapeInference.infer_shapes(m).graph.output[0]
        self.assertEqual((out.type.tensor_type.elem_type, dims(out)), (TensorProto.INT32, ["n", 5]))


class ImportOrders(unittest.TestCase):
    """yobx with onnx and onnxruntime in one process: every order of imports works as it works
    without yobx (Debian 13's onnxruntime needs onnx.reference imported before it, yobx or not)."""

    STEPS = {
        "yobx": "import yobx.onnx; from onnx import helper, TensorProto as T\n"
                "m = helper.make_model(helper.make_graph([helper.make_node('Relu', ['x'], ['y'])], 'g', "
                "[helper.make_tensor_value_info('x', T.FLOAT, ['n', 4])], [helper.make_tensor_value_info('y', T.FLOAT, None)]), "
                "opset_imports=[helper.make_opsetid('', 17)])\n"
                "assert yobx.onnx.evaluate_shapes(m, {'n': 3})['y'] == (3, 4)\n",
        "onnx.reference": "import onnx.reference\n",
        "onnxruntime": "import onnxruntime\n",
    }
    CHECK = ("import numpy as np, onnx, onnx.shape_inference\nfrom onnx import helper, TensorProto as T\n"
             "m = helper.make_model(helper.make_graph([helper.make_node('Relu', ['x'], ['y'])], 'g', "
             "[helper.make_tensor_value_info('x', T.FLOAT, ['n', 4])], [helper.make_tensor_value_info('y', T.FLOAT, None)]), "
             "opset_imports=[helper.make_opsetid('', 17)])\n"
             "onnx.shape_inference.infer_shapes(m)\n"
             "x = np.array([[-1, 2, -3, 4]], dtype=np.float32)\n"
             "if 'onnxruntime' in sys.modules:\n"
             "    assert (sys.modules['onnxruntime'].InferenceSession(m.SerializeToString(), providers=['CPUExecutionProvider'])"
             ".run(None, {'x': x})[0] == np.maximum(x, 0)).all()\n"
             "if 'onnx.reference' in sys.modules:\n"
             "    assert (onnx.reference.ReferenceEvaluator(m).run(None, {'x': x})[0] == np.maximum(x, 0)).all()\n"
             "if 'yobx.onnx' in sys.modules:\n"
             "    assert sys.modules['yobx.onnx'].evaluate_shapes(m, {'n': 2})['y'] == (2, 4)\n"
             "print('ok')\n")

    def run_order(self, order):
        import subprocess
        code = "import sys\n" + "".join(self.STEPS[s] for s in order) + self.CHECK
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        return r.returncode, r.stdout.strip(), r.stderr.strip().splitlines()[-1:] if r.returncode else []

    def test_each_order_with_onnx_reference_first_works(self):
        for order in [("yobx", "onnx.reference", "onnxruntime"), ("onnx.reference", "yobx", "onnxruntime"),
                      ("onnx.reference", "onnxruntime", "yobx"), ("yobx", "onnxruntime"), ("onnxruntime", "yobx"),
                      ("yobx", "onnx.reference"), ("onnx.reference", "yobx")]:
            with self.subTest(order=order):
                self.assertEqual(self.run_order(order), (0, "ok", []))

    def test_onnx_reference_after_onnxruntime_fails_the_same_with_or_without_yobx(self):
        without = self.run_order(("onnxruntime", "onnx.reference"))
        self.assertEqual(without[0], 1)
        self.assertIn("NotImplementedError: This function assumes every operator has a unique name", without[2][0])
        for order in [("yobx", "onnxruntime", "onnx.reference"), ("onnxruntime", "yobx", "onnx.reference")]:
            with self.subTest(order=order):
                self.assertEqual(self.run_order(order), without)


def main():
    global WORKDIR
    WORKDIR = sys.argv[1]
    os.makedirs(WORKDIR, exist_ok=True)
    unittest.main(argv=sys.argv[:1], verbosity=2)


if __name__ == "__main__":
    main()
