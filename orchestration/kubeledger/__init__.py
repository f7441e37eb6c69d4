"""kubeledger: a Kubernetes cost ledger that sums to the cloud invoice to the cent."""

__version__ = "0.1.0"
