"""`python -m kubeledger.spark load|build`: see kubeledger.spark.commands."""

from kubeledger.spark.commands import spark

if __name__ == "__main__":
    spark(prog_name="python -m kubeledger.spark")
