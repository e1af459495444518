"""The torch-free parts: cost model, layout, HCCL variables, rank tables, signatures, files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from npu_runtime.devices import get_profile
from npu_runtime.hccl.cost import bus_bandwidth, collective_cost
from npu_runtime.hccl.env import check_env, parse_algo
from npu_runtime.hccl.layout import GroupLayout, Member, single_server
from npu_runtime.hccl.rank_table import Launch, check_against_launch, parse
from npu_runtime.hccl.signature import Signature, differences
from npu_runtime.profiler.communication import double_hash

B2 = get_profile("910B")


def _servers(n_servers: int, per: int, me: int) -> GroupLayout:
    members = tuple(Member(r, f"10.0.0.{r // per + 1}", r % per) for r in range(n_servers * per))
    return GroupLayout(members, me, 8)


def test_every_profile_names_the_source_of_its_link_figures() -> None:
    raw = json.loads(Path("npu_runtime/data/devices.json").read_text())
    for name, prof in raw["profiles"].items():
        for key in ("devices_per_server", "hccs_mesh_size", "hccs_link_Bps", "roce_Bps",
                    "hccs_latency_us", "roce_latency_us", "link_efficiency",
                    "hccl_op_overhead_us", "hccl_level1_default"):  # fmt: skip
            src = prof[key]["source"]
            assert src.split()[0].rstrip(":/") in ("INI", "DERIVED", "VENDOR", "PRESS", "DOC", "MODEL",
                                                   "VENDOR/PRESS"), (name, key, src)  # fmt: skip


def test_mesh_all_reduce_on_eight_910b_approaches_seven_hccs_links() -> None:
    n = 256 * 2**20
    c = collective_cost("allreduce", n, single_server(8, 0, 8), B2)
    assert c.algorithm == "mesh" and c.rounds == 2  # 256 MB through a 200 MB HCCL_BUFFSIZE
    busbw = bus_bandwidth("allreduce", n, c.duration_us, 8)
    # 7 links x 56 GB/s x 0.85 efficiency = 333 GB/s is the ceiling; latencies keep it below
    assert 300e9 < busbw < 7 * 56e9 * 0.85
    # each rank sends 2 (p-1)/p of the buffer, 1/7 of it to each peer
    assert c.transit["HCCS"][0] == pytest.approx(2 * n * 7 / 8)
    assert set(c.to_peer) == set(range(1, 8))


def test_small_messages_cost_the_latency_terms() -> None:
    c = collective_cost("allreduce", 1024, single_server(8, 0, 8), B2)
    assert c.duration_us == pytest.approx(B2.hccl_op_overhead_us + 2 * B2.hccs_latency_us, abs=0.1)


def test_between_servers_the_profile_picks_hd_for_powers_of_two_and_nhr_otherwise() -> None:
    assert collective_cost("allreduce", 2**20, _servers(2, 8, 3), B2).algorithm == "mesh+H-D_R"
    assert collective_cost("allreduce", 2**20, _servers(3, 8, 3), B2).algorithm == "mesh+NHR"
    a1 = get_profile("910A")
    three = GroupLayout(tuple(Member(r, f"s{r}", 0) for r in range(3)), 0, a1.hccs_mesh_size)
    assert collective_cost("allreduce", 2**20, three, a1).algorithm == "ring"


def test_hccl_algo_chooses_the_server_level_algorithm_and_pipeline_overlaps_levels() -> None:
    two = _servers(2, 8, 3)
    ring = collective_cost("allreduce", 2**26, two, B2, level1="ring")
    pipe = collective_cost("allreduce", 2**26, two, B2, level1="pipeline")
    assert ring.algorithm == "mesh+ring" and pipe.algorithm == "mesh+pipeline"
    assert pipe.duration_us < ring.duration_us
    # pipeline serves only AllReduce/ReduceScatter/AllGather: broadcast falls back
    assert collective_cost("broadcast", 2**20, two, B2, level1="pipeline").algorithm == "H-D_R+mesh"


def test_roce_carries_the_shard_between_servers() -> None:
    n = 2**26
    c = collective_cost("allreduce", n, _servers(2, 8, 0), B2)
    # the 1/8 shard crosses to the other server and back: 2 (s-1)/s of n/8
    assert c.transit["RDMA"][0] == pytest.approx(2 * (n / 8) / 2)
    assert c.to_peer[8][0] == "RDMA"


def test_910a_servers_are_two_hccs_meshes_joined_over_pcie() -> None:
    a1 = get_profile("910A")
    levels = single_server(8, 5, a1.hccs_mesh_size).levels()
    assert [(lv.transport, lv.size, lv.peers) for lv in levels] == [
        ("HCCS", 4, (4, 5, 6, 7)),
        ("PCIE", 2, (1, 5)),
    ]


def test_send_and_recv_take_the_link_between_the_pair() -> None:
    two = _servers(2, 8, 1)
    assert collective_cost("send", 2**20, two, B2, peer=2).transit == {
        "HCCS": (2**20, pytest.approx(2**20 / (56e9 * 0.85) * 1e6))
    }
    assert set(collective_cost("send", 2**20, two, B2, peer=9).transit) == {"RDMA"}


def test_hccl_buffsize_splits_large_messages_into_rounds() -> None:
    small_buf = collective_cost(
        "allreduce", 2**24, single_server(8, 0, 8), B2, buffsize_bytes=2**20
    )
    assert small_buf.rounds == 16
    assert (
        small_buf.duration_us
        > collective_cost("allreduce", 2**24, single_server(8, 0, 8), B2).duration_us
    )


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ("level0:ring;level1:H-D_R", "level0 (inside a server) accepts only NA, not 'ring'"),
        ("level0:NA;level1:fastest", "level1 algorithm 'fastest' is unknown (one of: ring, H-D_R, NHR, NHR_V1, NB, AHC, pipeline, pairwise)"),
        ("allreduce=level0:NA;level1:pairwise", "pairwise serves only alltoall, not allreduce"),
        ("gemm=level0:NA;level1:ring", "unknown op 'gemm' (one of: allgather, reducescatter, allreduce, broadcast, reduce, scatter, alltoall)"),
        ("level0:NA", "level1:<algo> is missing"),
    ],
)  # fmt: skip
def test_hccl_algo_values_hccl_rejects(value: str, error: str) -> None:
    with pytest.raises(ValueError) as exc:
        parse_algo(value)
    assert str(exc.value) == error


def test_hccl_algo_per_op_and_global() -> None:
    assert parse_algo("level0:NA;level1:NHR") == {"": "NHR"}
    assert parse_algo("allreduce=level0:NA;level1:ring/alltoall=level0:NA;level1:pairwise") == {
        "allreduce": "ring",
        "alltoall": "pairwise",
    }


def test_hccl_variable_ranges_follow_the_product() -> None:
    r = check_env({"HCCL_CONNECT_TIMEOUT": "60", "HCCL_RDMA_TC": "130", "HCCL_RDMA_SL": "9",
                   "HCCL_INTRA_ROCE_ENABLE": "yes", "HCCL_IF_IP": "10.0.0"})  # fmt: skip
    assert r.errors == [
        "HCCL_CONNECT_TIMEOUT='60' is out of range: [120, 7200] (s) is allowed",
        "HCCL_INTRA_ROCE_ENABLE='yes' is invalid: one of 0, 1",
        "HCCL_RDMA_TC='130' is invalid: it must be a multiple of 4",
        "HCCL_RDMA_SL='9' is out of range: [0, 7] is allowed",
        "HCCL_IF_IP='10.0.0' is not an IP address",
    ]
    # Atlas training (910A): (0, 17340], rounded down to a multiple of 68
    assert check_env({"HCCL_EXEC_TIMEOUT": "600"}, "910A").settings.exec_timeout_s == 544
    assert check_env({"HCCL_EXEC_TIMEOUT": "20000"}, "910A").errors == [
        "HCCL_EXEC_TIMEOUT='20000' is out of range: [1, 17340] (s) is allowed"
    ]
    assert check_env({"HCCL_EXEC_TIMEOUT": "0"}).settings.exec_timeout_s == 0  # A2: never
    assert check_env({"HCCL_BUFFSIZE": "8"}).settings.buffsize_bytes == 8 * 2**20
    assert check_env({"HCCL_WHITELIST_DISABLE": "1", "HCCL_DESYNC_DEBUG": "1"}).warnings == []


def _table(tmp_path: Path, doc: object) -> Path:
    p = tmp_path / "rank_table.json"
    p.write_text(json.dumps(doc))
    return p


def test_rank_table_problems_carry_the_language_server_codes(tmp_path: Path) -> None:
    doc = {"status": "initializing", "server_count": "2", "server_list": [
        {"server_id": "10.0.0.1", "device": [
            {"device_id": "0", "device_ip": "1.1.1.1", "rank_id": "0"},
            {"device_id": "0", "device_ip": "1.1.1.2", "rank_id": "2"}]}]}  # fmt: skip
    table, problems = parse(_table(tmp_path, doc))
    assert table is not None
    assert problems == [
        "server_list[0].device[1]: device_id 0 is already used by server_list[0].device[0] on the same server (HCCL304)",
        "server_count is 2 but server_list has 1 entries (HCCL305)",
        "rank ids must run 0..1 without repeats (missing: [1]) (HCCL303)",
        "status is 'initializing', expected \"completed\" (HCCL307)",
    ]
    _, bad = parse(tmp_path / "missing.json")
    assert bad[0].startswith(f"cannot read the rank table {tmp_path / 'missing.json'}")
    (tmp_path / "broken.json").write_text('{"server_list": [')
    assert parse(tmp_path / "broken.json")[1][0].endswith("(HCCL301)")


def test_rank_table_against_the_launch(tmp_path: Path) -> None:
    doc = {"server_count": "2", "status": "completed", "server_list": [
        {"server_id": f"10.0.0.{s + 1}", "device": [
            {"device_id": str(d), "device_ip": "x", "rank_id": str(s * 2 + d)} for d in range(2)]}
        for s in range(2)]}  # fmt: skip
    table, problems = parse(_table(tmp_path, doc))
    assert table is not None and problems == []
    fits = Launch(rank=3, world_size=4, local_rank=1, local_world_size=2, device=1, nnodes=2)
    assert check_against_launch(table, fits) == []
    wrong = Launch(rank=3, world_size=8, local_rank=1, local_world_size=4, device=0, nnodes=1)
    assert check_against_launch(table, wrong) == [
        "the rank table lists 4 ranks but the job has WORLD_SIZE=8",
        "the rank table gives rank 3 device_id 1 on server 10.0.0.2, but this process runs on device 0",
        "the rank table puts 2 ranks on server 10.0.0.2, but 4 were started there (LOCAL_WORLD_SIZE)",
        "the rank table lists 2 servers but the job runs on 1 nodes",
    ]


def test_all_to_all_splits_must_agree_between_sender_and_receiver() -> None:
    ok = [
        Signature("alltoall", r, [[4]], "float32", in_splits=[2, 2], out_splits=[2, 2])
        for r in range(2)
    ]
    assert differences(ok, [0, 1]) == []
    bad = [Signature("alltoall", 0, [[4]], "float32", in_splits=[1, 3], out_splits=[1, 1]),
           Signature("alltoall", 1, [[4]], "float32", in_splits=[2, 2], out_splits=[2, 2])]  # fmt: skip
    assert differences(bad, [0, 1]) == [
        "rank 0 sends 3 elements to rank 1, which expects 2",
        "rank 1 sends 2 elements to rank 0, which expects 1",
    ]


def test_group_keys_use_msprof_analyzes_double_hash() -> None:
    # the fixture's group id and the key msprof-analyze and torch_npu write for it
    assert double_hash("10.0.0.1%enp0_60000_0_1717055395633000") == "18185880932483710968"


def test_the_launcher_passes_every_option_but_its_own_to_the_ranks() -> None:
    from npu_runtime import launcher, multirun

    parser = launcher.build_parser(launcher._hooks())
    argv = [
        "--nproc",
        "4",
        "--profile",
        "p",
        "--master-port=1234",
        "--nnodes",
        "1",
        "s.py",
        "--nproc",
        "x",
    ]
    assert multirun.child_argv(parser, argv, "s.py") == ["--profile", "p", "s.py", "--nproc", "x"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--nproc", "0"], "--nproc must be 1 or more"),
        (["--nproc", "2", "--nnodes", "2"], "--master-port is required with --nnodes > 1 (every machine must use the same one)"),
        (["--nproc", "2", "--nnodes", "2", "--node-rank", "2", "--master-port", "29500"], "--node-rank must be in 0..1"),
        (["--node-rank", "1"], "--node-rank needs --nproc N"),
    ],
)  # fmt: skip
def test_launcher_refuses_inconsistent_distributed_options(
    tmp_path: Path, args: list[str], message: str
) -> None:
    import subprocess
    import sys

    script = tmp_path / "s.py"
    script.write_text("print('never')\n")
    res = subprocess.run(
        [sys.executable, "-m", "ascend_lens", "run", *args, str(script)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.splitlines()[-1] == f"ascend-lens run: error: {message}"


def test_hccl_intra_roce_enable_moves_the_servers_traffic_to_its_roce_ports() -> None:
    n = 2**26
    settings = check_env({"HCCL_INTRA_ROCE_ENABLE": "1", "HCCL_INTRA_PCIE_ENABLE": "0"}).settings
    assert settings.intra_roce
    hccs = collective_cost("allreduce", n, single_server(8, 0, 8), B2)
    roce = collective_cost(
        "allreduce", n, single_server(8, 0, 8), B2, intra_roce=settings.intra_roce
    )
    assert set(roce.transit) == {"RDMA"} and roce.transit["RDMA"][0] == hccs.transit["HCCS"][0]
    # one 25 GB/s port instead of seven 56 GB/s links
    assert roce.duration_us / hccs.duration_us == pytest.approx(7 * 56 / 25, rel=0.05)
    assert not check_env(
        {"HCCL_INTRA_ROCE_ENABLE": "1", "HCCL_INTRA_PCIE_ENABLE": "1"}
    ).settings.intra_roce
