"""The in-memory StageStore the tests use (it lives with the tools, which play scenarios on it too)."""
from butai_tools.stage.memory_store import MemoryStageStore

__all__ = ["MemoryStageStore"]
