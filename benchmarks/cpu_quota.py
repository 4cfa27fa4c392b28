"""Holding a benchmark's processes to a share of a core each, as a container's CPU limit does:
one control group per process, with a CPU quota (cgroup v2's `cpu.max`, or v1's
`cpu.cfs_quota_us`). Needs root and a CPU controller that can be written to; `available()`
says whether this machine has one."""

from __future__ import annotations

from pathlib import Path

PERIOD_US = 100_000
V2 = Path("/sys/fs/cgroup")
V1 = Path("/sys/fs/cgroup/cpu")


def _root() -> Path | None:
    """Where this machine's CPU control groups are made (None: nowhere writable)."""
    controllers = V2 / "cgroup.controllers"
    if controllers.exists() and "cpu" in controllers.read_text().split():
        subtree = (V2 / "cgroup.subtree_control").read_text().split()
        if "cpu" in subtree:
            return V2 if _writable(V2) else None
    if (V1 / "cpu.cfs_quota_us").exists():
        return V1 if _writable(V1) else None
    return None


def _writable(root: Path) -> bool:
    probe = root / "dedup-bench-probe"
    try:
        probe.mkdir(exist_ok=True)
        probe.rmdir()
    except OSError:
        return False
    return True


def available() -> bool:
    return _root() is not None


class CpuQuota:
    """`hold(pid, i)` puts a process in the i-th group, held to `cores` of a core."""

    def __init__(self, cores: float) -> None:
        if cores <= 0:
            raise ValueError(f"a CPU quota is a share of a core above 0, got {cores}")
        root = _root()
        if root is None:
            raise RuntimeError(
                "no writable CPU control group here: run as root on a machine whose "
                "cgroup v2 has the cpu controller enabled, or with cgroup v1's cpu mounted at "
                f"{V1}"
            )
        self.root, self.cores = root, cores
        self._groups: list[Path] = []

    def hold(self, pid: int, i: int) -> None:
        group = self.root / f"dedup-bench-{i}"
        if group not in self._groups:
            group.mkdir(exist_ok=True)
            quota = int(self.cores * PERIOD_US)
            if self.root == V2:
                (group / "cpu.max").write_text(f"{quota} {PERIOD_US}")
            else:
                (group / "cpu.cfs_period_us").write_text(str(PERIOD_US))
                (group / "cpu.cfs_quota_us").write_text(str(quota))
            self._groups.append(group)
        (group / "cgroup.procs").write_text(str(pid))

    def remove(self) -> None:
        """Remove the groups (their processes must have ended)."""
        for group in self._groups:
            group.rmdir()
        self._groups = []
