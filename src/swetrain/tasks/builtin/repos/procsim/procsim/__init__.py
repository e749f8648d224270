"""procsim: small simulators of operating-system mechanisms."""
from .sched import Proc, fcfs, metrics, priority, round_robin, sjf
from .paging import fifo_faults, lru_faults, optimal_faults
from .alloc import AllocError, Allocator

__all__ = [
    "Proc", "fcfs", "metrics", "priority", "round_robin", "sjf",
    "fifo_faults", "lru_faults", "optimal_faults", "AllocError", "Allocator",
]
