"""Links and commands every message carries: a finding's short id, the resource's page in the AWS console, and
how a reader (of the command line, or of mail and Slack) gets a finding suppressed."""

from __future__ import annotations

from urllib.parse import quote

from chipwise.models.common import SERVING_KINDS
from chipwise.models.resources import VARIANT_KEY_MARK

SHORT_ID = 8  # characters of a finding id the lists show (and every command accepts)


def short_id(finding_id: str) -> str:
    return finding_id[:SHORT_ID]


def console_url(resource_id: str, region: str, resource_kind: str, resource_name: str) -> str:
    """The AWS console page of a resource (``resource_id`` its ARN or Chipwise's key of a variant): its own page
    for the kinds Chipwise collects (an endpoint's variant or inference component: its endpoint's page, named
    first in ``resource_name``), otherwise the console's ARN redirect (``/go/view?arn=``)."""
    arn = resource_id.split(VARIANT_KEY_MARK, 1)[0]
    name = arn.rsplit("/", 1)[-1]
    if resource_kind in SERVING_KINDS:  # <endpoint>, <endpoint>/<variant> or <endpoint>/<component>
        name = resource_name.split("/", 1)[0]
    base = f"https://{region}.console.aws.amazon.com"
    if resource_kind == "ec2_instance":
        return f"{base}/ec2/home?region={region}#InstanceDetails:instanceId={quote(name, safe='')}"
    if resource_kind in SERVING_KINDS:  # a variant or an inference component is listed on its endpoint's page
        return f"{base}/sagemaker/home?region={region}#/endpoints/{quote(name, safe='')}"
    if resource_kind == "sagemaker_training_job":
        return f"{base}/sagemaker/home?region={region}#/jobs/{quote(name, safe='')}"
    if resource_kind == "batch_compute_environment":
        return f"{base}/batch/home?region={region}#compute-environments/detail/{quote(arn, safe='')}"
    return f"https://console.aws.amazon.com/go/view?arn={quote(arn, safe='')}"


def suppress_step(finding_id: str) -> str:
    """How someone who reads Chipwise's mail or Slack (not its command line) gets a finding hidden."""
    return f"ask the person who runs Chipwise to suppress finding {short_id(finding_id)} until a date, with a reason"


REPORT_STEP = "ask the person who runs Chipwise for the latest HTML report"


def suppress_command(finding_id: str) -> str:
    """The command that hides a finding (the user fills in the date and the reason)."""
    return f'chipwise findings suppress {short_id(finding_id)} --until YYYY-MM-DD --reason "…"'
