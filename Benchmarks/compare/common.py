"""Helpers shared by the side-by-side benchmark scripts in this folder."""
import subprocess
import sys


def run(cmd):
    """Runs `cmd`, capturing its output; a failure ends the benchmark with the command and its stderr."""
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{p.stderr}")
    return p
