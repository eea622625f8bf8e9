"""Pure logic of placement: join URLs, host order, which ranks a host runs, index hints, the env."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from meshdbg.debugger.mesh.placement import Target, host_ranks, order_hosts, plan_host
from meshdbg.debugger.mesh.remote import peer_ip
from meshdbg.debugger.mesh.shape import MeshShape
from meshdbg.host.identity import index_hint
from meshdbg.host.plan import HostPlan
from meshdbg.host.remote import placer_free
from meshdbg.wire.connection import join_url, parse_url
from meshdbg.wire.errors import UsageError


def test_join_urls_round_trip_and_bad_ones_are_usage_errors() -> None:
    digest = "ab12" * 16
    url = join_url("198.18.0.1:4000", f"sha256:{digest}")
    assert url == f"meshdbg://198.18.0.1:4000#sha256={digest}"
    assert parse_url(url) == ("198.18.0.1:4000", f"sha256:{digest}")
    assert parse_url(url.upper().replace("MESHDBG://", "meshdbg://").replace("SHA256", "sha256")) == (
        "198.18.0.1:4000", f"sha256:{digest}")  # hex digits in either case
    assert parse_url("meshdbg://[::1]:4000") == ("[::1]:4000", "")
    assert parse_url("127.0.0.1:5") == ("127.0.0.1:5", "")
    for bad, why in [("meshdbg://host", "expected"), ("meshdbg://h:1#md5=x", "expected"),
                     ("meshdbg://h:1#sha256=", "cut short"), ("meshdbg://h:port", "expected"),
                     (url[:-5], "cut short"), (url[:-1] + "g", "hex digits"),
                     ("meshdbg://h:99999", "port 99999 is not between 1 and 65535"), ("meshdbg://h:0", "port 0")]:
        with pytest.raises(UsageError, match=f"bad meshdbg URL .*{why}"):
            parse_url(bad)


@pytest.mark.parametrize("addr", ["127.0.0.1:99999", "[::1]:70000", "h:0", "h:000"])
def test_an_address_whose_port_is_out_of_range_is_a_usage_error(addr: str) -> None:
    """(gRPC took `127.0.0.1:99999` as port 34463, modulo 65,536: another server, or none.)"""
    with pytest.raises(UsageError, match=f"bad address '{re.escape(addr)}': port .* is not between 1 and 65535"):
        parse_url(addr)
    assert parse_url("h:65535") == ("h:65535", "") and parse_url("unix:/run/x.sock") == ("unix:/run/x.sock", "")


def test_hosts_order_by_hint_then_name_and_address() -> None:
    hosts = [SimpleNamespace(hostname=n, address=a, hint=h) for n, a, h in
             [("b", "10.0.0.2", None), ("a", "10.0.0.9", None), ("z", "10.0.0.1", 0), ("a", "10.0.0.3", None)]]
    assert [(h.hostname, h.address) for h in order_hosts(hosts)] == [
        ("z", "10.0.0.1"), ("a", "10.0.0.3"), ("a", "10.0.0.9"), ("b", "10.0.0.2")]


def test_the_first_dimension_is_the_host_dimension() -> None:
    shape = MeshShape.parse("hosts=2,pp=2,tp=2")
    assert [list(host_ranks(shape, 2, i)) for i in range(2)] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert list(host_ranks(shape, 1, 0)) == list(range(8))
    with pytest.raises(UsageError, match=r"first dimension \(hosts=2\) is its host dimension: it must be 3"):
        host_ranks(shape, 3, 0)


def test_a_plan_survives_the_wire_with_each_ranks_env() -> None:
    target = Target(["train.py", "--lr", "1"], "/job", "worker", "meshdbg://198.18.0.1:9#sha256=ab", "tok",
                    "sha256:ab", post_mortem=False)
    plan = plan_host(MeshShape.parse("hosts=2,gpus=2"), 2, 1, target, "198.18.0.2", 4567)
    assert HostPlan.from_pb(plan.to_pb()) == plan
    assert [(r.rank, r.label) for r in plan.ranks] == [(2, "r2 hosts=1,gpus=0"), (3, "r3 hosts=1,gpus=1")]
    env = plan.ranks[1].env
    assert (env["RANK"], env["LOCAL_RANK"], env["WORLD_SIZE"], env["MASTER_ADDR"], env["MASTER_PORT"]) == \
        ("3", "1", "4", "198.18.0.2", "4567")
    assert env["MESHDBG_ADDR"] == target.addr and env["MESHDBG_POST_MORTEM"] == "0"


def test_index_hints_come_from_the_placer() -> None:
    assert index_hint(3, {"SLURM_NODEID": "1"}) == 3
    assert index_hint(None, {"GROUP_RANK": "1", "JOB_COMPLETION_INDEX": "0"}) == 1
    assert index_hint(None, {"SLURM_NODEID": "x", "JOB_COMPLETION_INDEX": "2"}) == 2
    assert index_hint(None, {}) is None


def test_ranks_do_not_inherit_torchruns_agent_store() -> None:
    assert placer_free({"PATH": "/bin", "TORCHELASTIC_USE_AGENT_STORE": "True", "RANK": "0"}) == {
        "PATH": "/bin", "RANK": "0"}


def test_the_peer_address_as_the_server_sees_it() -> None:
    assert peer_ip("ipv4:198.18.0.2:40000") == "198.18.0.2"
    assert peer_ip("ipv6:[::1]:40000") == "::1"
