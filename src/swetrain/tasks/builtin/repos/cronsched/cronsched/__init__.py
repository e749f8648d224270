"""cronsched: cron expressions, durations, retry backoff and a priority job queue for ops tooling."""
from .cron import CronExpr, CronError, parse_field
from .durations import backoff_delays, format_duration, parse_duration
from .queue import Job, JobQueue

__all__ = ["CronExpr", "CronError", "parse_field", "backoff_delays", "format_duration", "parse_duration", "Job", "JobQueue"]
