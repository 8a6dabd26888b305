"""How many cores the embedded model counts (``agentflow.providers._local_threads``):
hyper-threads of one core once, within the cgroup's CPU quota, read from
sysfs and cgroup files laid out as Linux lays them out."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentflow.providers._local_threads import usable_cores


def topology(root: Path, cpus: dict[int, tuple[int, int]]) -> Path:
    """A ``/sys/devices/system/cpu`` with CPU -> (package, core)."""
    for cpu, (package, core) in cpus.items():
        d = root / f"cpu{cpu}" / "topology"
        d.mkdir(parents=True)
        (d / "physical_package_id").write_text(f"{package}\n")
        (d / "core_id").write_text(f"{core}\n")
    return root


@pytest.fixture
def eight_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: set(range(8)))


def test_hyper_threads_of_one_core_count_once(tmp_path: Path, eight_cpus: None) -> None:
    # 4 cores x 2 hyper-threads (Linux numbers siblings cpuN and cpuN+4)
    sys_cpu = topology(tmp_path / "cpu", {c: (0, c % 4) for c in range(8)})
    assert usable_cores(sys_cpu, tmp_path / "no-cgroup") == 4
    two_packages = topology(tmp_path / "cpu2", {c: (c // 4, c % 4) for c in range(8)})
    assert usable_cores(two_packages, tmp_path / "no-cgroup") == 8


def test_without_topology_every_cpu_counts(tmp_path: Path, eight_cpus: None) -> None:
    assert usable_cores(tmp_path / "none", tmp_path / "no-cgroup") == 8


@pytest.mark.parametrize(("files", "cores"), [
    ({"cpu.max": "250000 100000\n"}, 3),                      # cgroup v2, --cpus 2.5
    ({"cpu.max": "max 100000\n"}, 8),                         # v2, no quota
    ({"cpu/cpu.cfs_quota_us": "100000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 1),  # v1
    ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, 8),      # v1, none
])
def test_the_cgroup_cpu_quota_limits_the_cores(
        tmp_path: Path, eight_cpus: None, files: dict[str, str], cores: int) -> None:
    cgroup = tmp_path / "cgroup"
    for name, text in files.items():
        (cgroup / name).parent.mkdir(parents=True, exist_ok=True)
        (cgroup / name).write_text(text)
    assert usable_cores(tmp_path / "none", cgroup) == cores
