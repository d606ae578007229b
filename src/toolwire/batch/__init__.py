"""Many agent runs at once: a task file in, one result line per run out, resumable.

``runner`` runs a batch on this machine (the task and results formats are in its docstring);
``files`` reads task lines and writes result lines; ``on_ray`` runs the same batch on a Ray
cluster; ``rounds`` sends it through the provider's batch API (``apis``), round by round. An
edge: only the command line imports it.
"""

from toolwire.batch.rounds import run_provider_batch
from toolwire.batch.runner import (
    BatchError,
    BatchProgress,
    BatchSummary,
    BatchTask,
    RateGate,
    ResultsFile,
    default_runs_dir,
    load_tasks,
    read_tasks,
    run_batch,
    run_task,
    task_tools,
)

__all__ = [
    "BatchError",
    "BatchProgress",
    "BatchSummary",
    "BatchTask",
    "RateGate",
    "ResultsFile",
    "default_runs_dir",
    "load_tasks",
    "read_tasks",
    "run_batch",
    "run_provider_batch",
    "run_task",
    "task_tools",
]
