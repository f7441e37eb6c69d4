"""`python -m kubeledger.bench`: see kubeledger.bench.commands."""

from kubeledger.bench.commands import bench

if __name__ == "__main__":
    bench(prog_name="python -m kubeledger.bench")
