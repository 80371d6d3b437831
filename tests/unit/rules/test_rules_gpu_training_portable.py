"""gpu_training_portable: GPU training spend x the representative Trainium gain (0.40, range 0.30-0.50), porting
effort from the model-family table, break-even; custom CUDA never."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

from rules_factories import ctx, flat, profile

from chipwise.rules.builtin.gpu_training_portable import GpuTrainingPortable, GpuTrainingPortableParams

RULE = GpuTrainingPortable(GpuTrainingPortableParams())
LLAMA_TAG = {"workload": "training", "model_family": "llama", "sources": {"model_family": "tag", "workload": "tag"}}


def test_an_h100_training_node_moves_to_trn2() -> None:
    # Given a p5.48xlarge ($55.04/h) tagged as Llama training
    node = profile("pretrain", instance_type="p5.48xlarge", rate="55.04", hints=LLAMA_TAG, gpu_util=flat(86.0))
    # When the rule runs
    draft = RULE.evaluate(node, ctx())
    # Then 55.04 x 730 = $40,179.20 a month x 0.40 = $16,071.68 (range 30-50 %: $12,053.76-$20,089.60) on trn2;
    # but trn2.48xlarge has no on-demand price, so the saving is a quote to ask for, not counted in the totals
    assert draft is not None
    assert draft.recommendation.target_platform == "trainium"
    assert (draft.recommendation.target_instance_type, draft.recommendation.target_count) == ("trn2.48xlarge", 1)
    assert draft.recommendation.excluded_from_totals == "quote_needed"
    assert "ask AWS for a quote" in draft.summary and "$12,053.76-$20,089.60" in draft.summary
    assert draft.monthly_cost_usd == Decimal("40179.20")
    assert draft.estimated_monthly_savings_usd == Decimal("16071.68")
    # Pretraining is not a days-long port: weeks (4 engineer-weeks x $4,000 = $16,000), break-even 0.9955 -> 1.0
    assert draft.effort == "weeks"
    assert draft.evidence.porting_cost_usd == 16000.0
    assert draft.break_even_months == 1.0
    assert draft.confidence == "medium"
    assert (draft.evidence.savings_low_usd, draft.evidence.savings_high_usd) == (12053.76, 20089.6)
    assert draft.recommendation.software_path is not None and "TorchNeuron" in draft.recommendation.software_path


def test_a_sagemaker_fine_tune_is_priced_at_its_window_run_rate() -> None:
    # Given a finished 2 x ml.p4d.24xlarge job ($25.251288/h) that ran 36 h of the 336 h window
    job = profile(
        "llama3-8b-finetune",
        kind="sagemaker_training_job",
        instance_type="ml.p4d.24xlarge",
        count=2,
        rate="25.251288",
        run_hours=36,
        hints={
            "workload": "training",
            "model_family": "llama",
            "hf_model_id": "meta-llama/Meta-Llama-3-8B",
            "sources": {"model_family": "hf_model_id"},
        },
    )
    # When the rule runs
    draft = RULE.evaluate(job, ctx())
    # Then spend 25.251288 x 2 x 36 = $1,818.09 in 14 days -> x 730/336 = $3,950.02 a month -> x 0.40 = $1,580.01,
    # on 2 x ml.trn1.32xlarge (A100-class work, an 8B model)
    assert draft is not None
    assert draft.monthly_cost_usd == Decimal("3950.02")
    assert draft.estimated_monthly_savings_usd == Decimal("1580.01")
    assert (draft.recommendation.target_instance_type, draft.recommendation.target_count) == ("ml.trn1.32xlarge", 2)
    assert draft.evidence.window_spend_usd == 1818.09


def test_custom_cuda_is_never_recommended_for_porting() -> None:
    # Given a Llama training node and a Mixtral training job, both with hand-written CUDA kernels
    node = profile("kernels", instance_type="g5.2xlarge", hints={**LLAMA_TAG, "custom_cuda": True}, gpu_util=flat(75))
    job = profile(
        "moe",
        kind="sagemaker_training_job",
        instance_type="ml.p5.48xlarge",
        count=2,
        rate="63.296",
        run_hours=20,
        hints={"model_family": "mixtral", "custom_cuda": True},
    )
    # Then neither is a porting finding
    assert RULE.evaluate(node, ctx()) is None
    assert RULE.evaluate(job, ctx()) is None


def test_unsupported_or_unknown_families_are_left_alone() -> None:
    # Given a Gemma training node (training support: needs work) and a job with no recognisable model
    gemma = profile(
        "gemma", instance_type="p4d.24xlarge", rate="21.957642", hints={"workload": "training", "model_family": "gemma"}
    )
    unknown = profile("job-42", kind="sagemaker_training_job", instance_type="ml.p4d.24xlarge", run_hours=10)
    # Then nothing is recommended
    assert RULE.evaluate(gemma, ctx()) is None
    assert RULE.evaluate(unknown, ctx()) is None


def test_a_family_named_only_in_the_job_name_is_a_low_confidence_guess() -> None:
    # Given a job called "bert-large-pretrain" whose environment and tags name no model
    job = profile(
        "bert-large-pretrain",
        kind="sagemaker_training_job",
        instance_type="ml.p4de.24xlarge",
        rate="31.564108",
        run_hours=48,
    )
    # When the rule runs
    draft = RULE.evaluate(job, ctx())
    # Then it fires, at low confidence: 31.564108 x 48 = 1,515.08 -> x 730/336 = $3,291.69 -> x 0.40 = $1,316.68
    assert draft is not None
    assert draft.confidence == "low"
    assert draft.estimated_monthly_savings_usd == Decimal("1316.68")
    assert draft.recommendation.target_instance_type == "ml.trn1.32xlarge"


def test_single_gpu_training_goes_to_trn1_2xlarge() -> None:
    # Given a g5.2xlarge ($1.212/h) training a BERT model
    node = profile(
        "bert-ft", instance_type="g5.2xlarge", rate="1.212", hints={"workload": "training", "model_family": "bert"}
    )
    # When the rule runs
    draft = RULE.evaluate(node, ctx())
    # Then 1.212 x 730 = 884.76 x 0.40 = $353.90 (353.904) on one trn1.2xlarge
    assert draft is not None
    assert draft.recommendation.target_instance_type == "trn1.2xlarge"
    assert draft.estimated_monthly_savings_usd == Decimal("353.90")


def test_a_batch_environment_tagged_for_training_is_priced_at_its_provisioned_capacity() -> None:
    # Given a Batch compute environment tagged Llama training: 2 x p4d.24xlarge desired now, 40 jobs in the window
    base = profile(
        "gpu-batch",
        kind="batch_compute_environment",
        instance_type="p4d.24xlarge",
        count=2,
        state="ENABLED",
        rate="21.957642",
        hints=LLAMA_TAG,
    )
    batch = replace(base, batch_jobs_in_window=40)
    idle_queue = replace(base, batch_jobs_in_window=0)
    # When the rule runs
    draft = RULE.evaluate(batch, ctx())
    # Then 2 x 21.957642 x 730 = $32,058.16 a month x 0.40 = $12,823.26, at low confidence (a snapshot of capacity)
    assert draft is not None
    assert draft.estimated_monthly_savings_usd == Decimal("12823.26")
    assert (draft.recommendation.target_instance_type, draft.recommendation.target_count) == ("trn1.32xlarge", 2)
    assert draft.confidence == "low"
    # ...and an environment whose queues ran nothing is left alone
    assert RULE.evaluate(idle_queue, ctx()) is None


def test_inference_instances_and_trainium_jobs_are_out_of_scope() -> None:
    # Given a GPU inference instance and a Llama job already on Trainium
    serving = profile("serve", instance_type="g6.xlarge", hints={"workload": "inference", "model_family": "llama"})
    trainium = profile(
        "trn-ft",
        kind="sagemaker_training_job",
        instance_type="ml.trn1.32xlarge",
        run_hours=24,
        hints={"model_family": "llama"},
    )
    # Then neither is a GPU training finding
    assert RULE.evaluate(serving, ctx()) is None
    assert RULE.evaluate(trainium, ctx()) is None


def test_porting_effort_follows_the_workload() -> None:
    # Given Llama training on A100s (trn1 targets, priced): a LoRA fine-tune, a single-node pretraining run and a
    # 4-node pretraining run (the data file: drop-in fine-tune days, pretraining weeks, 4+ nodes months)
    fine_tune = profile("llama3-8b-lora", instance_type="p4d.24xlarge", rate="21.957642", hints=LLAMA_TAG)
    single = profile("llama-pretrain", instance_type="p4d.24xlarge", rate="21.957642", hints=LLAMA_TAG)
    fleet = profile("llama-pretrain", instance_type="p4d.24xlarge", count=4, rate="21.957642", hints=LLAMA_TAG)
    efforts = {}
    for name, node in (("fine-tune", fine_tune), ("single", single), ("fleet", fleet)):
        draft = RULE.evaluate(node, ctx())
        assert draft is not None and draft.recommendation.excluded_from_totals is None  # trn1.32xlarge is priced
        efforts[name] = (draft.effort, draft.evidence.porting_cost_usd, draft.break_even_months)
    # Then: 21.957642 x 730 = $16,029.08 a month per node x 0.40 = $6,411.63 (x 4 = $25,646.53 for the fleet)
    assert efforts["fine-tune"] == ("days", 4000.0, 0.7)  # 1 week x $4,000; 4,000 / 6,411.63 = 0.62 -> 0.7
    assert efforts["single"] == ("weeks", 16000.0, 2.5)  # 4 weeks; 16,000 / 6,411.63 = 2.495 -> 2.5
    assert efforts["fleet"] == ("months", 48000.0, 1.9)  # 12 weeks; 48,000 / 25,646.53 = 1.87 -> 1.9
