"""A FAKE `tensorrt` module for unit tests of qdqreport's builder-configuration logic only.

It records what our code asks of TensorRT (network creation flags, builder flags, profiles,
calibrator assignments) and answers with canned objects. It builds nothing and runs nothing;
it must never be used outside tests/test_trt_build.py, and nothing it returns may reach a bundle
that is shipped or rendered as evidence.

The names mirror the TensorRT 10/11 Python API surface that qdqreport/collect/trt_build.py uses.
"""

from __future__ import annotations

import enum
import types
from typing import Any

FAKE_LAYER_INFO = '{"Layers": ["FAKE layer info from tests/fake_tensorrt.py"], "Bindings": []}'


class FakeSeverity(enum.Enum):
    INTERNAL_ERROR = 0
    ERROR = 1
    WARNING = 2
    INFO = 3
    VERBOSE = 4


class FakeILogger:
    Severity = FakeSeverity

    def __init__(self) -> None:
        pass


class FakeTensor:
    def __init__(self, name: str, shape: tuple[int, ...], is_shape_tensor: bool = False):
        self.name, self.shape, self.is_shape_tensor = name, shape, is_shape_tensor
        self.is_network_output = False
        self.dtype = types.SimpleNamespace(name="FLOAT")


class FakeLayer:
    def __init__(self, layer_type: Any, outputs: list[FakeTensor]):
        self.type, self._outputs = layer_type, outputs

    @property
    def num_outputs(self) -> int:
        return len(self._outputs)

    def get_output(self, index: int) -> FakeTensor:
        return self._outputs[index]


class FakeNetwork:
    def __init__(self, flags: int, spec: "FakeSpec"):
        self.creation_flags = flags
        self.inputs = [FakeTensor(name, shape) for name, shape in spec.inputs.items()]
        self.layers = [FakeLayer(t, [FakeTensor(f"t{i}", (1,), t == "SHAPE")]) for i, t in enumerate(spec.layer_types)]
        self.marked: list[str] = []

    num_inputs = property(lambda self: len(self.inputs))
    num_layers = property(lambda self: len(self.layers))

    def get_input(self, index: int) -> FakeTensor:
        return self.inputs[index]

    def get_layer(self, index: int) -> FakeLayer:
        return self.layers[index]

    def mark_output(self, tensor: FakeTensor) -> None:
        tensor.is_network_output = True
        self.marked.append(tensor.name)


class FakeParserError:
    def __init__(self, code: str, desc: str, node: int, name: str, operator: str):
        self._code, self._desc, self._node, self._name, self._operator = code, desc, node, name, operator

    def code(self) -> Any:
        return types.SimpleNamespace(name=self._code)

    def desc(self) -> str:
        return self._desc

    def node(self) -> int:
        return self._node

    def node_name(self) -> str:
        return self._name

    def node_operator(self) -> str:
        return self._operator

    def __str__(self) -> str:
        return f"In node {self._node} with name: {self._name} and operator: {self._operator} ({self._desc})"


class FakeOnnxParser:
    def __init__(self, network: FakeNetwork, logger: FakeILogger):
        self.network, self.logger = network, logger
        self.errors = [FakeParserError(*e) for e in network_spec(network).parser_errors]

    num_errors = property(lambda self: len(self.errors))

    def parse_from_file(self, path: str) -> bool:
        self.logger.log(FakeSeverity.INFO, f"FAKE parsing {path}")
        return not self.errors

    def get_error(self, index: int) -> FakeParserError:
        return self.errors[index]


class FakeProfile:
    def __init__(self) -> None:
        self.shapes: dict[str, tuple] = {}

    def set_shape(self, name: str, low: Any, opt: Any, high: Any) -> None:
        self.shapes[name] = (list(low), list(opt), list(high))


class FakeBuilderConfig:
    """Records every flag and every attribute assignment (a calibrator assignment included)."""

    def __init__(self) -> None:
        object.__setattr__(self, "flags", [])
        object.__setattr__(self, "assigned", {})
        object.__setattr__(self, "profiles", [])

    def __setattr__(self, name: str, value: Any) -> None:
        self.assigned[name] = value

    def set_flag(self, flag: Any) -> None:
        self.flags.append(flag.name)

    def add_optimization_profile(self, profile: FakeProfile) -> int:
        self.profiles.append(profile)
        return len(self.profiles) - 1


class FakeInspector:
    def get_engine_information(self, fmt: Any) -> str:
        assert fmt.name == "JSON", "qdqreport must ask the inspector for JSON"
        return FAKE_LAYER_INFO


class FakeEngine:
    def create_engine_inspector(self) -> FakeInspector:
        return FakeInspector()


class FakeRuntime:
    def __init__(self, logger: FakeILogger):
        self.logger = logger

    def deserialize_cuda_engine(self, data: bytes) -> FakeEngine:
        assert data == b"FAKE-PLAN"
        return FakeEngine()


class FakeBuilder:
    def __init__(self, logger: FakeILogger):
        self.logger = logger
        FAKE_STATE.builders.append(self)
        self.networks: list[FakeNetwork] = []
        self.configs: list[FakeBuilderConfig] = []

    def create_network(self, flags: int = 0) -> FakeNetwork:
        network = FakeNetwork(flags, FAKE_STATE.spec)
        self.networks.append(network)
        return network

    def create_builder_config(self) -> FakeBuilderConfig:
        config = FakeBuilderConfig()
        self.configs.append(config)
        return config

    def create_optimization_profile(self) -> FakeProfile:
        return FakeProfile()

    def build_serialized_network(self, network: FakeNetwork, config: FakeBuilderConfig) -> bytes | None:
        self.logger.log(FakeSeverity.WARNING, "FAKE build warning")
        self.logger.log(FakeSeverity.VERBOSE, "FAKE tactic timing")
        return None if FAKE_STATE.spec.build_fails else b"FAKE-PLAN"


class FakeSpec:
    def __init__(self, inputs: dict[str, tuple[int, ...]] | None = None, parser_errors: list[tuple] = (),
                 layer_types: list[str] = ("CONVOLUTION", "QUANTIZE", "DEQUANTIZE", "SHAPE"), build_fails: bool = False):
        self.inputs = inputs or {"x": (1, 3, 48, 192)}
        self.parser_errors, self.layer_types, self.build_fails = list(parser_errors), list(layer_types), build_fails


FAKE_STATE = types.SimpleNamespace(spec=FakeSpec(), builders=[])


def network_spec(network: FakeNetwork) -> FakeSpec:
    return FAKE_STATE.spec


def _enum(name: str, members: list[str]) -> type[enum.IntEnum]:
    return enum.IntEnum(name, {m: i for i, m in enumerate(members)})  # pybind11 enums convert with int() too


def make_fake_tensorrt(version: str, spec: FakeSpec | None = None) -> types.ModuleType:
    """A fake `tensorrt` module of *version*: 10.x keeps the weak-typing flags, 11.x has none of them."""
    FAKE_STATE.spec, FAKE_STATE.builders = spec or FakeSpec(), []
    weak = ["FP16", "INT8", "OBEY_PRECISION_CONSTRAINTS", "PREFER_PRECISION_CONSTRAINTS", "DIRECT_IO"]
    flags = ["TF32", "REFIT", "SPARSE_WEIGHTS"] + (weak if version.startswith("10.") else [])
    module = types.ModuleType("tensorrt")
    module.__dict__.update(
        __version__=version, ILogger=FakeILogger, Builder=FakeBuilder, OnnxParser=FakeOnnxParser, Runtime=FakeRuntime,
        BuilderFlag=_enum("BuilderFlag", flags),
        NetworkDefinitionCreationFlag=_enum("NetworkDefinitionCreationFlag", ["EXPLICIT_BATCH", "STRONGLY_TYPED"]),
        ProfilingVerbosity=_enum("ProfilingVerbosity", ["LAYER_NAMES_ONLY", "NONE", "DETAILED"]),
        LayerInformationFormat=_enum("LayerInformationFormat", ["ONELINE", "JSON"]),
        LayerType=types.SimpleNamespace(**{t: t for t in ("CONVOLUTION", "QUANTIZE", "DEQUANTIZE", "SHAPE", "CONSTANT")}),
        FAKE=True)
    return module
