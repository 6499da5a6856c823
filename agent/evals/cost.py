"""What an eval costs: a price table per model, and the estimate shown before any live call."""

from __future__ import annotations

import json
from dataclasses import dataclass

from agent.evals.scenario import Scenario
from agent.text_plural import counted

FLOOR_MODEL_PRICES: dict[str, tuple[float, float]] = {
    # Approximate on-demand USD per million input / output tokens of the two floor models; the
    # estimate says they are approximate. Regional prices differ: set [eval.prices."MODEL-ID"]
    # in config.toml (input = ..., output = ...) to use your own.
    "amazon.nova-2-lite-v1:0": (0.30, 2.50),
    "anthropic.claude-haiku-4-5-20251001-v1:0": (1.00, 5.00),
}
GEO_PREFIXES = frozenset({"us", "eu", "apac", "global", "jp", "au", "ca", "us-gov"})
FALLBACK_PRICE = (1.00, 5.00)
"""Used for a model with no price known (said so in the estimate)."""

STEPS_PER_TURN = 4
OUTPUT_TOKENS_PER_STEP = 200
GROWTH_TOKENS_PER_STEP = 600
"""Each step re-sends the history: tool results and answers add roughly this much."""


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float
    known: bool = True

    def cost(self, input_tokens: int, output_tokens: int, cached: int = 0) -> float:
        """Cost of a request (cached input billed at a tenth, as Bedrock bills cache reads)."""
        fresh = max(0, input_tokens - cached)
        return (fresh * self.input + cached * self.input * 0.1 + output_tokens * self.output) / 1e6


def price_of(model: str, overrides: dict[str, dict[str, float]] | None = None) -> Price:
    """The model's price: config overrides first, then the defaults."""
    if overrides and model in overrides:
        entry = overrides[model]
        return Price(float(entry.get("input", 0.0)), float(entry.get("output", 0.0)))
    base = model.split(".", 1)[1] if model.split(".", 1)[0] in GEO_PREFIXES else model
    if base in FLOOR_MODEL_PRICES:
        return Price(*FLOOR_MODEL_PRICES[base])
    return Price(*FALLBACK_PRICE, known=False)


def prompt_tokens(tool_specs: list[dict[str, object]], system: str) -> int:
    """Rough token count of the fixed prefix of every request (about 4 characters a token)."""
    return (len(json.dumps(tool_specs)) + len(system)) // 4


@dataclass(frozen=True)
class Estimate:
    """Requests, tokens and dollars a plan should take (an upper-ish guess, not a bill)."""

    runs: int
    requests: int
    input_tokens: int
    output_tokens: int
    dollars: float
    unpriced: tuple[str, ...] = ()

    def describe(self) -> str:
        text = (
            f"{counted(self.runs, 'run')}, about {counted(self.requests, 'model request')}, "
            f"~{self.input_tokens / 1e6:.2f}M input and ~{self.output_tokens / 1e3:.0f}k output "
            f"tokens: about ${self.dollars:.2f} (approximate prices)"
        )
        if self.unpriced:
            text += (
                f" (no price known for {', '.join(self.unpriced)}: counted at "
                f"${FALLBACK_PRICE[0]}/${FALLBACK_PRICE[1]} per M tokens; set "
                "[eval.prices] in config.toml)"
            )
        return text


def estimate(
    scenarios: list[Scenario],
    models: list[str],
    reps: int,
    prefix_tokens: int,
    overrides: dict[str, dict[str, float]] | None = None,
) -> Estimate:
    """Estimate a plan: each turn about STEPS_PER_TURN requests re-sending a growing history."""
    requests = input_tokens = output_tokens = 0
    dollars = 0.0
    unpriced: list[str] = []
    for model in models:
        price = price_of(model, overrides)
        if not price.known:
            unpriced.append(model)
        for scenario in scenarios:
            steps = min(scenario.step_limit, STEPS_PER_TURN) * len(scenario.turns)
            run_input = sum(prefix_tokens + GROWTH_TOKENS_PER_STEP * step for step in range(steps))
            run_output = OUTPUT_TOKENS_PER_STEP * steps
            requests += steps * reps
            input_tokens += run_input * reps
            output_tokens += run_output * reps
            dollars += price.cost(run_input, run_output) * reps
    runs = len(scenarios) * len(models) * reps
    return Estimate(runs, requests, input_tokens, output_tokens, dollars, tuple(unpriced))
