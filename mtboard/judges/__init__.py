"""LLM judges (issue 5): GEMBA-MQM with context, the JA→EN rubric and the BookTrans checkpoint key.

All three sit behind one registry (:data:`REGISTRY`, keyed by the kind users type in ``--judge KIND=openai:MODEL``),
use the same OpenAI-compatible client as the runner (:class:`mtboard.llm.LLMClient`), keep their prompts as files in
``prompts/judges/`` and parse answers strictly (fail closed). :func:`run_judges` judges a finished card and returns
it re-sealed.
"""

from mtboard.judges import checkpoints, gemba_mqm, rubric  # noqa: F401  (register the judges)
from mtboard.judges.base import (FAMILIES, REGISTRY, JudgeParseError, JudgeSpec, check_family, model_families,
                                 parse_judge_spec)
from mtboard.judges.checkpoints import load_bench, parse_checkpoints
from mtboard.judges.gemba_mqm import parse_mqm
from mtboard.judges.rubric import parse_rubric
from mtboard.judges.run import (apply_judgements, check_families_before_translating, judge_endpoint,
                                judge_endpoint_from_env, preflight, run_judges, run_judges_async, summary_line)

__all__ = ["FAMILIES", "REGISTRY", "JudgeParseError", "JudgeSpec", "check_family", "model_families",
           "parse_judge_spec", "load_bench", "parse_checkpoints", "parse_mqm", "parse_rubric", "apply_judgements",
           "check_families_before_translating", "judge_endpoint", "judge_endpoint_from_env", "preflight", "run_judges", "run_judges_async",
           "summary_line"]
