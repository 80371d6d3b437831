"""Framework runners for the benchmark entrypoint: Optimum Neuron, vLLM on Neuron, native PyTorch on Neuron
(TorchNeuron: training), the legacy torch-neuronx (XLA) training runner, and CUDA for
the paired GPU baseline. Each implements ``harness.ModelRunner`` (versions, prepare a static shape, run one
request) and imports its framework only when it is built, so the module loads anywhere.

Inputs are random token ids of the shape's length: throughput and latency depend on shapes, not on the text.
Generation is forced to the full ``output_tokens`` (no early end-of-sequence), so every request does the same
work on every chip.
"""

from __future__ import annotations

from importlib import metadata
from typing import TYPE_CHECKING, Any

from harness import RequestTiming, Shape  # beside this file

from chipwise.models.benchmark import BenchmarkParameters

if TYPE_CHECKING:
    from harness import ModelRunner

_PACKAGES = ("torch", "torch-neuronx", "torch-xla", "neuronx-cc", "optimum-neuron", "vllm", "transformers")
_ENCODER_CLASSES = {
    "text-classification": "NeuronModelForSequenceClassification",
    "token-classification": "NeuronModelForTokenClassification",
    "feature-extraction": "NeuronModelForFeatureExtraction",
}
_CUDA_ENCODER_CLASSES = {
    "text-classification": "AutoModelForSequenceClassification",
    "token-classification": "AutoModelForTokenClassification",
    "feature-extraction": "AutoModel",
}


def installed_versions() -> dict[str, str]:
    versions = {}
    for package in _PACKAGES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            continue
    return versions


class _Base:
    def __init__(self, parameters: BenchmarkParameters) -> None:
        import torch  # type: ignore[import-not-found]  # the container has it

        self.parameters = parameters
        self.torch: Any = torch
        self.model: Any = None
        self.vocab_size = 32_000

    def versions(self) -> dict[str, str]:
        return installed_versions()

    def _input_ids(self, shape: Shape) -> Any:
        return self.torch.randint(100, self.vocab_size - 1, (shape.batch_size, shape.sequence_length))


class OptimumNeuronRunner(_Base):
    """Hugging Face Optimum Neuron: export (compile) for the shape, then ``generate`` or a forward pass."""

    def prepare(self, shape: Shape) -> None:
        import optimum.neuron as neuron  # type: ignore[import-not-found]  # the container has it

        p = self.parameters
        if p.task == "text-generation":
            self.model = neuron.NeuronModelForCausalLM.from_pretrained(
                p.model_id,
                export=True,
                batch_size=shape.batch_size,
                sequence_length=shape.sequence_length + shape.output_tokens,
                num_cores=max(1, p.neuron_cores),
                auto_cast_type="bf16",
            )
        else:
            model_class = getattr(neuron, _ENCODER_CLASSES[p.task])
            self.model = model_class.from_pretrained(
                p.model_id, export=True, batch_size=shape.batch_size, sequence_length=shape.sequence_length
            )
        self.vocab_size = int(getattr(self.model.config, "vocab_size", self.vocab_size))

    def run(self, shape: Shape) -> int:
        input_ids = self._input_ids(shape)
        mask = self.torch.ones_like(input_ids)
        if self.parameters.task != "text-generation":
            self.model(input_ids=input_ids, attention_mask=mask)
            return shape.batch_size * shape.sequence_length
        out = self.model.generate(
            input_ids,
            attention_mask=mask,
            max_new_tokens=shape.output_tokens,
            min_new_tokens=shape.output_tokens,
            do_sample=False,
        )
        return int(out.shape[0] * (out.shape[1] - shape.sequence_length))


class VllmNeuronRunner(_Base):
    """vLLM on Neuron: one engine per shape (max_num_seqs = batch size), continuous batching disabled by
    submitting exactly one batch per request."""

    def prepare(self, shape: Shape) -> None:
        from vllm import LLM, SamplingParams  # type: ignore[import-not-found]  # the container has it

        length = shape.sequence_length + shape.output_tokens
        self.model = LLM(
            model=self.parameters.model_id,
            device="neuron",
            tensor_parallel_size=max(1, self.parameters.neuron_cores),
            max_num_seqs=shape.batch_size,
            max_model_len=length,
            block_size=length,
        )
        self.sampling = SamplingParams(max_tokens=shape.output_tokens, ignore_eos=True, temperature=0.0)

    def run(self, shape: Shape) -> int:
        prompts = [{"prompt_token_ids": ids.tolist()} for ids in self._input_ids(shape)]
        outputs = self.model.generate(prompts, self.sampling, use_tqdm=False)
        return sum(len(o.outputs[0].token_ids) for o in outputs)

    def serve(self, shape: Shape, concurrency: int) -> list[RequestTiming]:
        """``concurrency`` single-sequence requests submitted together to one engine with continuous batching
        (``max_num_seqs`` = the sweep's highest level); per-request times from vLLM's request metrics. An engine
        that reports no per-request metrics fails the level (recorded as skipped, never guessed)."""
        from vllm import LLM, SamplingParams

        length = shape.sequence_length + shape.output_tokens
        if getattr(self, "server", None) is None or getattr(self, "server_length", None) != length:
            self.server = LLM(
                model=self.parameters.model_id,
                device="neuron",
                tensor_parallel_size=max(1, self.parameters.neuron_cores),
                max_num_seqs=max(self.parameters.concurrency_levels or (concurrency,)),
                max_model_len=length,
                block_size=length,
            )
            self.server_length = length
        sampling = SamplingParams(max_tokens=shape.output_tokens, ignore_eos=True, temperature=0.0)
        one = Shape(concurrency, shape.sequence_length, shape.output_tokens)
        prompts = [{"prompt_token_ids": ids.tolist()} for ids in self._input_ids(one)]
        outputs = self.server.generate(prompts, sampling, use_tqdm=False)
        timings = []
        for output in outputs:
            m = getattr(output, "metrics", None)
            first = getattr(m, "first_token_time", None)
            finished = getattr(m, "finished_time", None)
            arrived = getattr(m, "arrival_time", None)
            if first is None or finished is None or arrived is None:
                raise RuntimeError("this vLLM reports no per-request timings (RequestOutput.metrics)")
            tokens = len(output.outputs[0].token_ids)
            timings.append(RequestTiming(first - arrived, finished - arrived, tokens, ok=tokens > 0))
        return timings


class TorchNeuronxTrainingRunner(_Base):
    """torch-neuronx (XLA) training steps: forward, backward, AdamW step; the first step compiles the graph.
    Models larger than one Neuron device's memory need NeuronX Distributed sharding, which this runner does not
    do: such a shape fails to prepare and is reported as skipped."""

    def prepare(self, shape: Shape) -> None:
        import torch_xla.core.xla_model as xm  # type: ignore[import-not-found]  # the container has it
        from transformers import AutoModelForCausalLM  # type: ignore[import-not-found]  # the container has it

        self.xm: Any = xm
        device = xm.xla_device()
        self.model = AutoModelForCausalLM.from_pretrained(self.parameters.model_id, torch_dtype=self.torch.bfloat16)
        self.model = self.model.to(device).train()
        self.vocab_size = int(self.model.config.vocab_size)
        self.optimizer = self.torch.optim.AdamW(self.model.parameters(), lr=1e-5)
        self.device = device
        self.run(shape)  # the first step traces and compiles

    def run(self, shape: Shape) -> int:
        batch = self._input_ids(shape).to(self.device)
        loss = self.model(input_ids=batch, labels=batch).loss
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()
        self.xm.mark_step()
        self.xm.wait_device_ops()
        return shape.batch_size * shape.sequence_length


class TorchNeuronTrainingRunner(_Base):
    """Native PyTorch on Neuron (TorchNeuron, the go-forward training stack; PyTorch/XLA training is unsupported
    from Neuron 2.30): the model on the ``neuron`` device, compiled with ``torch.compile(backend="neuron")``;
    forward, backward, AdamW step. No ``import torch_neuronx``: PyTorch autoloads the backend. The first step
    compiles. A model larger than one device's memory needs sharding (FSDP), which this runner does not do: such a
    shape fails to prepare and is reported as skipped."""

    def prepare(self, shape: Shape) -> None:
        from transformers import AutoModelForCausalLM  # type: ignore[import-not-found]  # the container has it

        model = AutoModelForCausalLM.from_pretrained(self.parameters.model_id, torch_dtype=self.torch.bfloat16)
        self.model = model.to("neuron").train()
        self.step = self.torch.compile(self._step, backend="neuron")
        self.optimizer = self.torch.optim.AdamW(self.model.parameters(), lr=1e-5)
        self.run(shape)  # the first step compiles

    def _step(self, batch: Any) -> Any:
        loss = self.model(input_ids=batch, labels=batch).loss
        loss.backward()
        return loss

    def run(self, shape: Shape) -> int:
        batch = self._input_ids(shape).to("neuron")
        self.step(batch)
        self.optimizer.step()
        self.optimizer.zero_grad()
        self.torch.accelerator.synchronize()  # the device-generic API TorchNeuron implements
        return shape.batch_size * shape.sequence_length


class CudaRunner(_Base):
    """The paired GPU baseline: the same task and shapes with Hugging Face Transformers on CUDA."""

    def prepare(self, shape: Shape) -> None:
        import transformers  # type: ignore[import-not-found,unused-ignore]  # the container has it

        p = self.parameters
        if p.task in ("text-generation", "training"):
            model_class: Any = transformers.AutoModelForCausalLM
        else:
            model_class = getattr(transformers, _CUDA_ENCODER_CLASSES[p.task])
        self.model = model_class.from_pretrained(p.model_id, torch_dtype=self.torch.bfloat16, device_map="auto")
        self.vocab_size = int(getattr(self.model.config, "vocab_size", self.vocab_size))
        if p.task == "training":
            self.model.train()
            self.optimizer = self.torch.optim.AdamW(self.model.parameters(), lr=1e-5)

    def run(self, shape: Shape) -> int:
        input_ids = self._input_ids(shape).to(self.model.device)
        task = self.parameters.task
        if task == "training":
            loss = self.model(input_ids=input_ids, labels=input_ids).loss
            loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()
            produced = shape.batch_size * shape.sequence_length
        elif task == "text-generation":
            out = self.model.generate(
                input_ids, max_new_tokens=shape.output_tokens, min_new_tokens=shape.output_tokens, do_sample=False
            )
            produced = int(out.shape[0] * (out.shape[1] - shape.sequence_length))
        else:
            with self.torch.no_grad():
                self.model(input_ids=input_ids)
            produced = shape.batch_size * shape.sequence_length
        self.torch.cuda.synchronize()
        return produced


RUNNERS: dict[str, type[_Base]] = {
    "optimum-neuron": OptimumNeuronRunner,
    "vllm-neuron": VllmNeuronRunner,
    "torchneuron": TorchNeuronTrainingRunner,
    "torch-neuronx": TorchNeuronxTrainingRunner,
    "cuda": CudaRunner,
}


def create_runner(parameters: BenchmarkParameters) -> ModelRunner:
    runner: ModelRunner = RUNNERS[parameters.runner](parameters)  # type: ignore[assignment]
    return runner
