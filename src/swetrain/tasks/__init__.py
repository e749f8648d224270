"""Task records, loading/saving, the built-in suite and synthesis from real projects."""

from swetrain.tasks.record import Task, TaskLoadError, get_task, load_tasks, save_tasks

__all__ = ["Task", "TaskLoadError", "get_task", "load_tasks", "save_tasks"]
