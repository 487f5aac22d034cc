"""What the benchmark tiers share (bench.py and the tiers it runs, e2e.py and apps.py): the
emulated cluster's configurations and the commit a record names. A module of its own, below
them all, so that no tier imports the harness that imports it."""
import os
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

NETNS_CONFIGS = {
    # name: netns_cluster.sh options
    "flat": [],
    "shallow": ["--queue", "65536", "--rto-min", "5ms"],
    "two_clusters": ["--two-clusters"],
}


def git_commit():
    """The checkout's commit, with "-dirty" when tracked files differ from it: a record must not
    name a commit whose code it did not run."""
    try:
        run = lambda *a: subprocess.run(["git", "-C", REPO, *a], capture_output=True, text=True,
                                        timeout=10).stdout.strip()
        commit = run("rev-parse", "--short", "HEAD")
        if commit and run("status", "--porcelain", "--untracked-files=no"):
            commit += "-dirty"
        return commit or None
    except (OSError, subprocess.SubprocessError):
        return None
