"""lm-evaluation-harness task templates (package data) for ``leviathan.eval.harness``.

The ``*.yaml`` files here are templates: ``harness.prepare_tasks`` renders them into a temporary
folder with the absolute paths of the local data files (``__DATA_FILES__``) and a datasets cache
(``__CACHE_DIR__``), copies ``utils.py`` beside them (``!function utils.x`` resolves next to the
YAML), and hands that folder to ``lm_eval.tasks.TaskManager(include_path=...)``. Nothing is
downloaded: every task reads JSON lines with ``dataset_path: json``.
"""
