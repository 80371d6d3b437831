"""The inventory's lean DescribeInstances parse: only the members it reads, the same resource as a full parse.

The response below follows the EC2 API reference's DescribeInstances example (XML, ``instancesSet`` items with
network interfaces, block devices, tags): the full parse and the projected parse must record the same resource,
so a member the inventory starts reading without adding it to the projection fails here, not silently in a scan.
"""

from __future__ import annotations

import json
from typing import Any

import botocore.session
import pytest
from botocore.parsers import ResponseParserFactory

from chipwise.aws import ProjectingParserFactory, _as_sent, parse_aws_timestamp, projected_shapes
from chipwise.collect.inventory.sources.ec2_instances import EC2_LISTING, ec2_resource

RESPONSE = b"""<?xml version="1.0" encoding="UTF-8"?>
<DescribeInstancesResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/">
  <requestId>8f7724cf-496f-496e-8fe3-example</requestId>
  <reservationSet>
    <item>
      <reservationId>r-1234567890abcdef0</reservationId>
      <ownerId>123456789012</ownerId>
      <groupSet/>
      <instancesSet>
        <item>
          <instanceId>i-1234567890abcdef0</instanceId>
          <imageId>ami-bff32ccc</imageId>
          <instanceState><code>16</code><name>running</name></instanceState>
          <privateDnsName>ip-192-168-1-88.eu-west-1.compute.internal</privateDnsName>
          <dnsName>ec2-54-194-252-215.eu-west-1.compute.amazonaws.com</dnsName>
          <reason/>
          <keyName>my_keypair</keyName>
          <amiLaunchIndex>0</amiLaunchIndex>
          <productCodes/>
          <instanceType>inf2.xlarge</instanceType>
          <launchTime>2026-11-12T10:00:00.000Z</launchTime>
          <placement><availabilityZone>eu-west-1c</availabilityZone><groupName/><tenancy>default</tenancy></placement>
          <monitoring><state>disabled</state></monitoring>
          <subnetId>subnet-56f5f633</subnetId>
          <vpcId>vpc-11112222</vpcId>
          <privateIpAddress>192.168.1.88</privateIpAddress>
          <ipAddress>54.194.252.215</ipAddress>
          <sourceDestCheck>true</sourceDestCheck>
          <groupSet><item><groupId>sg-e4076980</groupId><groupName>SecurityGroup1</groupName></item></groupSet>
          <instanceLifecycle>spot</instanceLifecycle>
          <architecture>x86_64</architecture>
          <rootDeviceType>ebs</rootDeviceType>
          <rootDeviceName>/dev/xvda</rootDeviceName>
          <blockDeviceMapping>
            <item>
              <deviceName>/dev/xvda</deviceName>
              <ebs>
                <volumeId>vol-1234567890abcdef0</volumeId>
                <status>attached</status>
                <attachTime>2026-11-12T10:00:05.000Z</attachTime>
                <deleteOnTermination>true</deleteOnTermination>
              </ebs>
            </item>
          </blockDeviceMapping>
          <virtualizationType>hvm</virtualizationType>
          <clientToken>xMcwG14507example</clientToken>
          <tagSet>
            <item><key>Name</key><value>inference-1</value></item>
            <item><key>eks:cluster-name</key><value>serving</value></item>
          </tagSet>
          <hypervisor>xen</hypervisor>
          <networkInterfaceSet>
            <item>
              <networkInterfaceId>eni-0dc8d3b7a7EXAMPLE</networkInterfaceId>
              <subnetId>subnet-56f5f633</subnetId>
              <vpcId>vpc-11112222</vpcId>
              <ownerId>123456789012</ownerId>
              <status>in-use</status>
              <privateIpAddress>192.168.1.88</privateIpAddress>
              <attachment>
                <attachmentId>eni-attach-0a1b2c3dEXAMPLE</attachmentId>
                <deviceIndex>0</deviceIndex>
                <status>attached</status>
                <attachTime>2026-11-12T10:00:00.000Z</attachTime>
                <deleteOnTermination>true</deleteOnTermination>
              </attachment>
            </item>
          </networkInterfaceSet>
          <ebsOptimized>false</ebsOptimized>
          <cpuOptions><coreCount>2</coreCount><threadsPerCore>2</threadsPerCore></cpuOptions>
        </item>
      </instancesSet>
    </item>
  </reservationSet>
  <nextToken>page-2</nextToken>
</DescribeInstancesResponse>
"""


def _parse(factory: ResponseParserFactory) -> dict[str, Any]:
    model = botocore.session.get_session().get_service_model("ec2")
    shape = model.operation_model("DescribeInstances").output_shape
    response = {"body": RESPONSE, "headers": {}, "status_code": 200}
    parsed: dict[str, Any] = factory.create_parser("ec2").parse(response, shape)
    return parsed


def _only_instance(parsed: dict[str, Any]) -> tuple[dict[str, Any], str]:
    [reservation] = parsed["Reservations"]
    [instance] = reservation["Instances"]
    return instance, reservation["OwnerId"]


def test_the_projected_parse_records_the_same_resource_as_a_full_parse() -> None:
    full = _parse(ResponseParserFactory())
    lean = _parse(ProjectingParserFactory(projected_shapes(botocore.session.get_session(), "ec2", EC2_LISTING)))

    assert lean["NextToken"] == "page-2"  # the paginator still sees the next page
    full_instance, owner = _only_instance(full)
    lean_instance, lean_owner = _only_instance(lean)
    assert "NetworkInterfaces" in full_instance and "NetworkInterfaces" not in lean_instance
    assert "BlockDeviceMappings" not in lean_instance and "VpcId" not in lean_instance
    assert (lean_owner, owner) == ("123456789012", "123456789012")
    recorded = ec2_resource(lean_instance, lean_owner, "eu-west-1")
    assert recorded == ec2_resource(full_instance, owner, "eu-west-1")
    assert recorded.instance_type == "inf2.xlarge" and recorded.state == "running" and recorded.name == "inference-1"
    assert recorded.details.eks_cluster == "serving"  # type: ignore[union-attr]
    assert recorded.details.lifecycle == "spot"  # type: ignore[union-attr]


def test_a_projection_naming_a_member_the_shape_lacks_is_refused() -> None:
    with pytest.raises(ValueError, match="Instance has no member"):
        projected_shapes(botocore.session.get_session(), "ec2", (("Instance", ("InstanceId", "GpuCount")),))


METRIC_DATA = json.dumps(
    {
        "MetricDataResults": [
            {
                "Id": "q0",
                "Label": "CPUUtilization",
                "Timestamps": [1763640000, 1763636400.0, 1763632800],
                "Values": [12.5, 0, None, 3],
                "StatusCode": "Complete",
                "Messages": [{"Code": "ArithmeticError", "Value": "a message"}],
            },
            {"Id": "q1", "Label": "GPU", "Timestamps": [], "Values": [], "StatusCode": "PartialData"},
        ],
        "NextToken": "page-2",
        "Messages": [],
    }
).encode()


@pytest.mark.parametrize("as_sent", [True, False])
def test_the_lean_json_parse_of_metric_data_is_botocores(as_sent: bool) -> None:
    # Given a GetMetricData response (JSON protocol) with integer, float and null values and epoch timestamps
    model = botocore.session.get_session().get_service_model("cloudwatch")
    shape = model.operation_model("GetMetricData").output_shape
    response = {"body": METRIC_DATA, "headers": {"x-amzn-requestid": "r-1"}, "status_code": 200}
    parser = _as_sent if as_sent else parse_aws_timestamp
    full, lean = ResponseParserFactory(), ProjectingParserFactory({})
    for factory in (full, lean):
        factory.set_parser_defaults(timestamp_parser=parser)
    # When botocore's parser and the lean one (scalar lists taken whole) parse it, in the protocol clients use (json)
    assert model.resolved_protocol == "json"
    expected = full.create_parser(model.resolved_protocol).parse(dict(response), shape)
    parsed = lean.create_parser(model.resolved_protocol).parse(dict(response), shape)
    # Then they are the same, each value of the same type (a datetime unless the timestamps are kept as sent)
    assert parsed == expected
    values = parsed["MetricDataResults"][0]["Values"]
    assert [type(v) for v in values] == [float, int, type(None), int]
    first = parsed["MetricDataResults"][0]["Timestamps"][0]
    assert first == 1763640000 if as_sent else first.year == 2025
