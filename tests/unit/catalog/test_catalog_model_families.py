"""Model families: Neuron support levels and recognising a family in model ids, image names and tags."""

from __future__ import annotations

import pytest

from chipwise.catalog import get_model_families

REQUIRED = [
    "llama", "mistral", "mixtral", "qwen", "gemma", "falcon", "gpt-neox", "gpt2", "t5", "bert", "roberta",
    "distilbert", "vit", "resnet", "stable-diffusion", "whisper", "clip", "yolo", "deepseek", "phi", "custom",
]  # fmt: skip


def test_every_required_family_is_present_with_sources() -> None:
    families = get_model_families()
    for family_id in REQUIRED:
        family = families.get(family_id)
        assert family is not None, family_id
        assert family.sources and all(code in families.sources for code in family.sources)
    assert families.custom.aliases == () and families.custom.porting_effort == "months"


@pytest.mark.parametrize(
    ("text", "family_id"),
    [
        ("meta-llama/Llama-3.1-8B-Instruct", "llama"),
        ("meta-llama/Meta-Llama-3-8B", "llama"),
        ("bert-base-uncased", "bert"),
        ("google-bert/bert-large-cased", "bert"),
        ("distilbert-base-uncased-finetuned-sst-2-english", "distilbert"),
        ("FacebookAI/xlm-roberta-base", "roberta"),
        ("mistralai/Mistral-7B-Instruct-v0.3", "mistral"),
        ("mistralai/Mixtral-8x7B-Instruct-v0.1", "mixtral"),
        ("Qwen/Qwen2.5-7B-Instruct", "qwen"),
        ("deepseek-ai/DeepSeek-R1-Distill-Llama-8B", "llama"),
        ("deepseek-ai/DeepSeek-V3", "deepseek"),
        ("google/gemma-2-9b-it", "gemma"),
        ("tiiuae/falcon-7b", "falcon"),
        ("EleutherAI/gpt-neox-20b", "gpt-neox"),
        ("EleutherAI/pythia-1b", "gpt-neox"),
        ("openai-community/gpt2", "gpt2"),
        ("google/flan-t5-xl", "t5"),
        ("google/vit-base-patch16-224", "vit"),
        ("microsoft/resnet-50", "resnet"),
        ("stabilityai/stable-diffusion-xl-base-1.0", "stable-diffusion"),
        ("openai/whisper-large-v3", "whisper"),
        ("openai/clip-vit-base-patch32", "clip"),
        ("ultralytics/yolov8n", "yolo"),
        ("microsoft/Phi-3-mini-4k-instruct", "phi"),
        ("sentence-transformers/all-MiniLM-L6-v2", "bert"),
        ("123456789012.dkr.ecr.us-east-1.amazonaws.com/llama3-serving:v2", "llama"),
        ("LLAMA", "llama"),
        ("model=Llama-3-70B", "llama"),
    ],
)
def test_match(text: str, family_id: str) -> None:
    family = get_model_families().match(text)
    assert family is not None and family.id == family_id


@pytest.mark.parametrize("text", ["", "my-company/fraud-detector", "philschmid/custom-model", "gpt5-preview", "v2"])
def test_no_match(text: str) -> None:
    assert get_model_families().match(text) is None


def test_support_levels() -> None:
    families = get_model_families()
    llama = families.get("llama")
    assert llama is not None
    assert (llama.support("training"), llama.support("inference"), llama.porting_effort) == (
        "drop_in",
        "drop_in",
        "days",
    )
    assert llama.bedrock_available
    bert = families.get("BERT")
    assert bert is not None and not bert.bedrock_available
    assert set(families.levels) == {"drop_in", "supported", "needs_work", "unsupported"}
